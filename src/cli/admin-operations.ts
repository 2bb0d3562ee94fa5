/**
 * What the admin commands run, loaded only once a command runs: `--help` and usage errors answer from the command
 * table alone, without loading the application (about a CPU-second of module loading a process).
 */
import { ArgsCheck } from "../platform/validate.js";
import { DELIVERY_LIST_ARGS } from "../modules/webhooks/schemas.js";

export { startServices } from "../app.js";
export {
  createAdminKey,
  createApplication,
  createGrant,
  createStore,
  listAdminKeys,
  listGrants,
  revokeAdminKey,
  revokeGrant,
  rotateClientSecret,
  setApplicationApiVersion,
  setApplicationStatus,
  storeOf,
} from "../modules/admin/operations.js";
export { createPortalLink } from "../modules/admin/portal-links.js";
export { deliveryAttempts, findDelivery, listDeliveries, requestReplays } from "../modules/webhooks/deliveries.js";

/** The flags of list-deliveries, checked as the GraphQL field checks its arguments. */
export const deliveryListCheck = new ArgsCheck({ args: DELIVERY_LIST_ARGS });
