import { builder } from "../platform/schema/builder.js";
import { deprecateRemovedFields } from "./deprecations.js";
import "../modules/store/graphql.js";
import "../modules/admin/graphql.js";
import "../modules/orders/graphql.js";
import "../modules/customers/graphql.js";
import "../modules/catalog/graphql.js";
import "../modules/sandbox/graphql.js";
import "../modules/webhooks/graphql.js";
import "../modules/events/graphql.js";
import "../modules/versions/graphql.js";
import "../modules/exports/graphql.js";

export const schema = deprecateRemovedFields(builder.toSchema({ sortSchema: true }));
