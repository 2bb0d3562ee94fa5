import type { JsonSchema } from "../../platform/json.js";
import { API_VERSIONS, LATEST_API_VERSION } from "../../platform/versions.js";

export const ApplicationPatchSchema: JsonSchema = {
  type: "object",
  required: ["apiVersion"],
  properties: {
    apiVersion: {
      type: "string",
      minLength: 1,
      description: `An API version: ${API_VERSIONS.join(", ")} (latest ${LATEST_API_VERSION}); another is 400 INVALID_API_VERSION listing them`,
    },
  },
};
