import { defineRoute } from "../../platform/route.js";
import { createCustomerInput, CustomerDetailSchema, CustomerSchema, listCustomersInput, updateCustomerInput } from "./schemas.js";
import { idPath, locationHeader, pageOf } from "../../platform/schemas.js";
import type { Page } from "../../platform/schema/pagination.js";

type CustomerBody = Record<string, unknown> & { id: string };

const CUSTOMER_FIELDS = "id name phone email createdAt updatedAt";

export const customerRoutes = [
  defineRoute<{ customers: Page<CustomerBody> }>({
    operationId: "listCustomers",
    method: "GET",
    path: "/public/v1/customers",
    tag: "Customers",
    summary: "List customers",
    description: "By name, then id. With updated_since: only customers changed at or after it, oldest change first (updatedAt, then id).",
    scope: "customers:read",
    query: listCustomersInput,
    document: `query listCustomers($limit: Int, $cursor: String, $search: String, $updatedSince: DateTime) {
      customers(limit: $limit, cursor: $cursor, search: $search, updatedSince: $updatedSince) {
        data { ${CUSTOMER_FIELDS} }
        pagination { hasMore cursor nextCursor }
      }
    }`,
    variables: ({ query }) => ({
      limit: query.limit,
      cursor: query.cursor ?? null,
      search: query.search ?? null,
      updatedSince: query.updated_since ?? null,
    }),
    respond: (data) => ({ body: data.customers }),
    status: 200,
    response: { description: "A page of customers", schema: pageOf(CustomerSchema) },
  }),
  defineRoute<{ customer: CustomerBody }>({
    operationId: "getCustomerById",
    method: "GET",
    path: "/public/v1/customers/{id}",
    tag: "Customers",
    summary: "Get a customer",
    description: "The list fields plus the delivery addresses and a summary of the customer's orders.",
    scope: "customers:read",
    pathParams: idPath,
    document: `query getCustomerById($id: ID!) {
      customer(id: $id) {
        ${CUSTOMER_FIELDS}
        deliveryAddresses { id street number neighborhood city state postalCode complement }
        contactSummary { orderCount firstOrderAt lastOrderAt }
      }
    }`,
    variables: ({ path }) => ({ id: path.id }),
    respond: (data) => ({ body: data.customer }),
    status: 200,
    response: { description: "The customer", schema: CustomerDetailSchema },
    errors: [404],
  }),
  defineRoute<{ createCustomer: CustomerBody }>({
    operationId: "createCustomer",
    method: "POST",
    path: "/public/v1/customers",
    tag: "Customers",
    summary: "Create a customer",
    description: "Emits customer.created.",
    scope: "customers:write",
    body: createCustomerInput,
    document: `mutation createCustomer($input: NewCustomerInput!) { createCustomer(input: $input) { ${CUSTOMER_FIELDS} } }`,
    variables: ({ body }) => ({ input: body }),
    respond: (data) => ({ body: data.createCustomer, headers: { location: `/public/v1/customers/${data.createCustomer.id}` } }),
    status: 201,
    response: { description: "The customer", schema: CustomerSchema, headers: locationHeader("/public/v1/customers/{id}") },
  }),
  defineRoute<{ updateCustomer: CustomerBody }>({
    operationId: "updateCustomer",
    method: "PATCH",
    path: "/public/v1/customers/{id}",
    tag: "Customers",
    summary: "Update a customer",
    description: "Changes only the fields sent (null clears phone or email) and emits customer.updated.",
    scope: "customers:write",
    pathParams: idPath,
    body: updateCustomerInput,
    document: `mutation updateCustomer($id: ID!, $input: UpdateCustomerInput!) { updateCustomer(id: $id, input: $input) { ${CUSTOMER_FIELDS} } }`,
    variables: ({ path, body }) => ({ id: path.id, input: body }),
    respond: (data) => ({ body: data.updateCustomer }),
    status: 200,
    response: { description: "The customer after the change", schema: CustomerSchema },
    errors: [404],
  }),
];
