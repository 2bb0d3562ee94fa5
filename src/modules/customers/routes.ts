import { defineRoute } from "../../platform/route.js";
import { locationHeader } from "../../platform/schemas.js";
import { graphql } from "../../platform/schema/typed.js";
import { PaginationFragment } from "../../platform/schema/fields.js";

const CustomerFragment = graphql(`fragment Customer on Customer { id name phone email createdAt updatedAt }`);

export const CustomerDetailFragment = graphql(
  `fragment CustomerDetail on Customer {
    ...Customer
    deliveryAddresses { id street number neighborhood city state postalCode complement }
    contactSummary { orderCount firstOrderAt lastOrderAt } }`,
  [CustomerFragment],
);

export const customerRoutes = [
  defineRoute({
    operationId: "listCustomers",
    method: "GET",
    path: "/public/v1/customers",
    tag: "Customers",
    summary: "List customers",
    description: "By name, then id. With updated_since: only customers changed at or after it, oldest change first (updatedAt, then id).",
    document: graphql(
      `query listCustomers($limit: Int, $cursor: String, $search: String, $updatedSince: DateTime) {
        customers(limit: $limit, cursor: $cursor, search: $search, updatedSince: $updatedSince) {
          data { ...Customer }
          pagination { ...Pagination }
        }
      }`,
      [CustomerFragment, PaginationFragment],
    ),
    bind: { rename: { updated_since: "updatedSince" } },
    respond: (data) => ({ body: data.customers }),
    status: 200,
    response: { description: "A page of customers", component: "CustomerPage" },
  }),
  defineRoute({
    operationId: "getCustomerById",
    method: "GET",
    path: "/public/v1/customers/{id}",
    tag: "Customers",
    summary: "Get a customer",
    description: "The list fields plus the delivery addresses and a summary of the customer's orders.",
    document: graphql(`query getCustomerById($id: ID!) { customer(id: $id) { ...CustomerDetail } }`, [CustomerDetailFragment]),
    respond: (data) => ({ body: data.customer }),
    status: 200,
    response: { description: "The customer" },
    errors: [404],
  }),
  defineRoute({
    operationId: "createCustomer",
    method: "POST",
    path: "/public/v1/customers",
    tag: "Customers",
    summary: "Create a customer",
    description: "Emits customer.created.",
    document: graphql(`mutation createCustomer($input: NewCustomerInput!) { createCustomer(input: $input) { ...Customer } }`, [CustomerFragment]),
    respond: (data) => ({ body: data.createCustomer, headers: { location: `/public/v1/customers/${data.createCustomer.id}` } }),
    status: 201,
    response: { description: "The customer", headers: locationHeader("/public/v1/customers/{id}") },
  }),
  defineRoute({
    operationId: "updateCustomer",
    method: "PATCH",
    path: "/public/v1/customers/{id}",
    tag: "Customers",
    summary: "Update a customer",
    description: "Changes only the fields sent (null clears phone or email) and emits customer.updated.",
    document: graphql(`mutation updateCustomer($id: ID!, $input: UpdateCustomerInput!) { updateCustomer(id: $id, input: $input) { ...Customer } }`, [
      CustomerFragment,
    ]),
    respond: (data) => ({ body: data.updateCustomer }),
    status: 200,
    response: { description: "The customer after the change" },
    errors: [404],
  }),
];
