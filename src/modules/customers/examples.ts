import { ADDRESS, CUSTOMER_ID, NEW_CUSTOMER_ID, notFound, one, page, T, UNKNOWN_ID, type OperationExamples } from "../../platform/examples.js";
import type { customerRoutes } from "./routes.js";

type CustomerOperationId = (typeof customerRoutes)[number]["operationId"];

const ADDRESS_ID = "91c3e7a5-2b8d-4f6a-9c1e-5a7b3d9f1e48";

const CUSTOMER = {
  id: CUSTOMER_ID,
  name: "Ana Souza",
  phone: "+55 11 91234-5678",
  email: "ana.souza@example.com",
  createdAt: T.customer,
  updatedAt: T.customer,
};
const NEW_CUSTOMER = {
  id: NEW_CUSTOMER_ID,
  name: "Marcos Pereira",
  phone: "+55 11 97777-1234",
  email: "marcos.pereira@example.com",
  createdAt: "2025-03-01T19:02:44.310Z",
  updatedAt: "2025-03-01T19:02:44.310Z",
};

export const customerExamples = {
  listCustomers: {
    response: one("One customer, with more to read", page([CUSTOMER], CUSTOMER_ID)),
    problem: {
      summary: "A limit out of range",
      code: "INVALID_REQUEST",
      detail: "The query parameters failed validation: `limit` must be at most 100.",
      instance: "/public/v1/customers",
      errors: [{ field: "limit", code: "OUT_OF_RANGE", message: "`limit` must be at most 100" }],
    },
  },
  createCustomer: {
    request: one("A new customer", { name: "Marcos Pereira", phone: "+55 11 97777-1234", email: "marcos.pereira@example.com" }),
    response: one("The customer created", NEW_CUSTOMER),
    problem: {
      summary: "A missing name",
      code: "INVALID_REQUEST",
      detail: "The request body failed validation: `name` is required.",
      instance: "/public/v1/customers",
      errors: [{ field: "name", code: "REQUIRED", message: "`name` is required" }],
    },
  },
  getCustomerById: {
    response: one("A regular customer", {
      ...CUSTOMER,
      deliveryAddresses: [{ id: ADDRESS_ID, ...ADDRESS }],
      contactSummary: { orderCount: 12, firstOrderAt: "2024-11-09T20:14:05.000Z", lastOrderAt: T.created },
    }),
    problem: notFound("customer", "/public/v1/customers/{id}", UNKNOWN_ID),
  },
  updateCustomer: {
    request: {
      email: { summary: "Change the email", value: { email: "ana@souza.com.br" } },
      clearPhone: { summary: "Clear the phone", value: { phone: null } },
    },
    response: one("The customer with the new email", { ...CUSTOMER, email: "ana@souza.com.br", updatedAt: "2025-03-02T10:05:31.000Z" }),
    problem: notFound("customer", "/public/v1/customers/{id}", UNKNOWN_ID),
  },
} satisfies Record<CustomerOperationId, OperationExamples>;
