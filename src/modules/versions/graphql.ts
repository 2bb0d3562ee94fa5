import { builder } from "../../platform/schema/builder.js";
import { tenantOf } from "../../platform/schema/context.js";
import { apiVersionOf } from "../../platform/versions.js";
import { EnvironmentEnum } from "../store/graphql.js";
import { ApplicationPatchSchema } from "./schemas.js";

/** The calling partner's own Application, as GET and PATCH /public/v1/application show it. */
interface OwnApplication {
  clientId: string;
  name: string;
  environment: "SANDBOX" | "PRODUCTION";
  scopes: string[];
  apiVersion: string;
}

const OwnApplicationRef = builder.objectRef<OwnApplication>("OwnApplication").implement({
  description: "The Application the token belongs to.",
  fields: (t) => ({
    clientId: t.exposeString("clientId"),
    name: t.exposeString("name"),
    environment: t.expose("environment", { type: EnvironmentEnum }),
    scopes: t.exposeStringList("scopes", { description: "The scopes the Application holds (a token may carry fewer)" }),
    apiVersion: t.exposeString("apiVersion", {
      description: "The API version its requests are answered in unless they send Api-Version (see GET /public/v1/versions)",
    }),
  }),
});

const OWN_FIELDS = { clientId: true, name: true, environment: true, scopes: true, apiVersion: true } as const;

builder.queryField("partnerApplication", (t) =>
  t.field({
    type: OwnApplicationRef,
    authScopes: { partner: true },
    description: "The token's Application and its pinned API version.",
    resolve: (_root, _args, ctx) => ctx.db.application.findUniqueOrThrow({ where: { id: tenantOf(ctx).applicationId }, select: OWN_FIELDS }),
  }),
);

builder.mutationField("updatePartnerApplication", (t) =>
  t.field({
    type: OwnApplicationRef,
    authScopes: { partner: true },
    description:
      "Pins the token's Application to an API version: its next request, on any process, is answered in it, and webhook endpoints " +
      "created from then on deliver in it (existing endpoints keep theirs).",
    args: { apiVersion: t.arg.string({ required: true }) },
    input: { object: { schema: ApplicationPatchSchema } },
    resolve: async (_root, { apiVersion }, ctx) => {
      const version = apiVersionOf(apiVersion, "apiVersion");
      const application = await ctx.db.application.update({ where: { id: tenantOf(ctx).applicationId }, data: { apiVersion: version }, select: OWN_FIELDS });
      ctx.services.grants.changed();
      return application;
    },
  }),
);
