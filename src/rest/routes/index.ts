import type { AnyRoute } from "../route.js";
import { storeRoutes } from "./store.js";
import { orderRoutes } from "./orders.js";
import { customerRoutes } from "./customers.js";
import { catalogRoutes } from "./catalog.js";
import { sandboxRoutes } from "./sandbox.js";
import { webhookRoutes } from "./webhooks.js";

/** Every /public/v1 route. The router, the validators and the OpenAPI document are all built from this list. */
export const routes: AnyRoute[] = [
  ...storeRoutes,
  ...orderRoutes,
  ...customerRoutes,
  ...catalogRoutes,
  ...sandboxRoutes,
  ...webhookRoutes,
] as unknown as AnyRoute[];
