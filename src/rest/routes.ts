import type { Route } from "../platform/route.js";
import { storeRoutes } from "../modules/store/routes.js";
import { orderRoutes } from "../modules/orders/routes.js";
import { customerRoutes } from "../modules/customers/routes.js";
import { catalogRoutes } from "../modules/catalog/routes.js";
import { sandboxRoutes } from "../modules/sandbox/routes.js";
import { webhookRoutes } from "../modules/webhooks/routes.js";
import { eventRoutes } from "../modules/events/routes.js";
import { applicationRoutes } from "../modules/versions/routes.js";
import { exportRoutes } from "../modules/exports/routes.js";

/** Every /public/v1 route. The router, the validators and the OpenAPI document are all built from this list. */
export const routes: Route[] = [
  ...storeRoutes,
  ...orderRoutes,
  ...customerRoutes,
  ...catalogRoutes,
  ...sandboxRoutes,
  ...webhookRoutes,
  ...eventRoutes,
  ...applicationRoutes,
  ...exportRoutes,
];
