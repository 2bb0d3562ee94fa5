import { defineRoute } from "../../platform/route.js";
import { graphql } from "../../platform/schema/typed.js";

const OwnApplicationFragment = graphql(`fragment OwnApplication on OwnApplication { clientId name environment scopes apiVersion }`);

/** The token's own Application: no scope of its own, since every partner may read and re-pin its version. */
export const applicationRoutes = [
  defineRoute({
    operationId: "getApplication",
    method: "GET",
    path: "/public/v1/application",
    tag: "Application",
    summary: "The token's Application and its API version (extension to the contract)",
    description: "`apiVersion` is the version requests are answered in unless they send `Api-Version`.",
    document: graphql(`query getApplication { partnerApplication { ...OwnApplication } }`, [OwnApplicationFragment]),
    respond: (data) => ({ body: data.partnerApplication }),
    status: 200,
    response: { description: "The Application" },
  }),
  defineRoute({
    operationId: "updateApplication",
    method: "PATCH",
    path: "/public/v1/application",
    tag: "Application",
    summary: "Pin the Application to an API version (extension to the contract)",
    description:
      "The next request, on any process, is answered in `apiVersion`; webhook endpoints created from then on deliver in it (existing " +
      "ones keep theirs: PATCH them). Try a version first by sending `Api-Version` on single requests. An unknown version is 400 " +
      "INVALID_API_VERSION listing the known ones.",
    document: graphql(`mutation updateApplication($apiVersion: String!) { updatePartnerApplication(apiVersion: $apiVersion) { ...OwnApplication } }`, [
      OwnApplicationFragment,
    ]),
    respond: (data) => ({ body: data.updatePartnerApplication }),
    status: 200,
    response: { description: "The Application after the change" },
  }),
];
