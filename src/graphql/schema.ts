import { builder } from "./builder.js";
import "./store.js";
import "./admin.js";
import "./webhooks.js";

export const schema = builder.toSchema({ sortSchema: true });
