import type { JsonSchema } from "../../platform/json.js";
import { updatedSinceParam } from "../../platform/schemas.js";
import { EXPORT_RESOURCES } from "../events/operational.js";

/** POST /exports' body: what to export, and optionally only what changed since an instant. */
export const CreateExportBody: JsonSchema = {
  type: "object",
  required: ["resource"],
  properties: {
    resource: { type: "string", enum: [...EXPORT_RESOURCES], description: "What to export; needs the resource's read scope" },
    updatedSince: { ...updatedSinceParam, description: `${updatedSinceParam.description} (only those are exported)` },
  },
};
