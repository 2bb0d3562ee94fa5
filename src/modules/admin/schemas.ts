import { cursorParam, limitParam } from "../../platform/schemas.js";
import { defineQuery } from "../../platform/validate.js";

/* The administrators' lists (GraphQL only): a page size and the previous page's cursor. */

export const listStoresInput = defineQuery({ limit: limitParam, cursor: cursorParam });

export const listApplicationsInput = defineQuery({ limit: limitParam, cursor: cursorParam });
