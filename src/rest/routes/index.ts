import type { AnyRoute } from "../route.js";
import { storeRoutes } from "./store.js";
import { webhookRoutes } from "./webhooks.js";

/** Every /public/v1 route. The router, the validators and the OpenAPI document are all built from this list. */
export const routes: AnyRoute[] = [...storeRoutes, ...webhookRoutes] as unknown as AnyRoute[];
