import type { Environment, StoreStatus } from "../../platform/db/prisma.js";

/** Whether a store is taking orders right now. */
export const STORE_STATUSES = ["OPEN", "CLOSED", "PAUSED"] as const satisfies readonly StoreStatus[];

/** A store and the Applications granted on it belong to one environment: sandbox and production never mix. */
export const ENVIRONMENTS = ["SANDBOX", "PRODUCTION"] as const satisfies readonly Environment[];
