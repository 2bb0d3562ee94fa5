import { builder } from "./builder.js";
import "./store.js";
import "./admin.js";
import "./orders.js";
import "./customers.js";
import "./catalog.js";
import "./sandbox.js";
import "./webhooks.js";

export const schema = builder.toSchema({ sortSchema: true });
