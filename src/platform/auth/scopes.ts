export const SCOPES = [
  "orders:read",
  "orders:write",
  "customers:read",
  "customers:write",
  "catalog:read",
  "catalog:write",
  "merchant:read",
  "webhooks:manage",
] as const;

export type Scope = (typeof SCOPES)[number];

export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  "orders:read": "list and read orders",
  "orders:write": "create orders, update order status, dispatch",
  "customers:read": "list and read customers",
  "customers:write": "create and update customers",
  "catalog:read": "read categories, products, additionals, prices, availability",
  "catalog:write": "pause and resume products; prices and descriptions cannot be changed through the API",
  "merchant:read": "read store profile and public settings",
  "webhooks:manage": "register, test, list, delete webhook endpoints and inspect or replay deliveries",
};

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
