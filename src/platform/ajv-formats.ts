import type { Ajv } from "ajv";
import * as addFormatsModule from "ajv-formats";

// ajv-formats is CommonJS: under ESM its function arrives as the module's `default`.
export const addFormats = addFormatsModule.default as unknown as (ajv: Ajv) => Ajv;
