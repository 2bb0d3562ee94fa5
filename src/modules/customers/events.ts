import { Type } from "@sinclair/typebox";
import { ChangedFields, type EventDeclaration, Uuid } from "../../platform/events/declaration.js";

/** The phone is null when the customer gave none (the first API version renders it as an empty string). */
const customer = {
  customerId: Uuid(),
  name: Type.String(),
  phone: Type.Union([Type.String(), Type.Null()], { description: "null when the customer gave no phone" }),
};

export const CUSTOMER_EVENTS = {
  "customer.created": {
    scope: "customers:read",
    emitted: "A new customer is created (e.g. with a first order).",
    data: Type.Object(customer),
  },
  "customer.updated": {
    scope: "customers:read",
    emitted: "A customer's name, phone or email changes.",
    data: Type.Object({ ...customer, email: Type.Union([Type.String(), Type.Null()]), changed: ChangedFields }),
  },
} satisfies Record<`customer.${string}`, EventDeclaration>;

type CustomerEventCatalog = typeof CUSTOMER_EVENTS;

/** Lets the outbox accept these events with their declared `data` (see EventCatalog). */
declare module "../../platform/events/declaration.js" {
  interface EventCatalog extends CustomerEventCatalog {}
}
