import { one, type OperationExamples } from "../../platform/examples.js";
import { API_VERSIONS, LATEST_API_VERSION } from "../../platform/versions.js";
import type { applicationRoutes } from "./routes.js";

type ApplicationOperationId = (typeof applicationRoutes)[number]["operationId"];

const APPLICATION = {
  clientId: "sbx_Jx2mQ8vN4kLp7Rt",
  name: "Acme ERP",
  environment: "SANDBOX",
  scopes: ["orders:read", "orders:write", "webhooks:manage"],
  apiVersion: LATEST_API_VERSION,
};

export const applicationExamples = {
  getApplication: {
    response: one("An ERP's sandbox Application", APPLICATION),
    problem: {
      summary: "No bearer token",
      code: "UNAUTHORIZED",
      detail: "This route needs an access token: send Authorization: Bearer <access_token> (get one at POST /partner/auth/token).",
      instance: "/public/v1/application",
    },
  },
  updateApplication: {
    request: one("Move to the latest version", { apiVersion: LATEST_API_VERSION }),
    response: one("The Application, now on the latest version", APPLICATION),
    problem: {
      summary: "A version that does not exist",
      code: "INVALID_API_VERSION",
      detail: `"2026-13-01" is not an API version. Known versions: ${API_VERSIONS.join(", ")} (latest ${LATEST_API_VERSION}).`,
      instance: "/public/v1/application",
      errors: [
        { field: "apiVersion", code: "INVALID_API_VERSION", message: `\`apiVersion\` must be one of ${API_VERSIONS.join(", ")}`, known: [...API_VERSIONS] },
      ],
    },
  },
} satisfies Record<ApplicationOperationId, OperationExamples>;
