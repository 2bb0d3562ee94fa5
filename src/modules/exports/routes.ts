import { defineRoute } from "../../platform/route.js";
import { locationHeader } from "../../platform/schemas.js";
import { graphql } from "../../platform/schema/typed.js";
import { PaginationFragment } from "../../platform/schema/fields.js";

/** Bulk exports (extension to the contract). The file itself is downloaded from GET /public/v1/exports/{id}/file. */

const ExportFragment = graphql(`fragment Export on Export {
  id resource updatedSince status objectCount bytes sequence apiVersion createdAt completedAt expiresAt url error }`);

const exportResponse = { description: "The export" };

export const exportRoutes = [
  defineRoute({
    operationId: "createExport",
    method: "POST",
    path: "/public/v1/exports",
    tag: "Exports",
    summary: "Export a resource in bulk (extension to the contract)",
    description:
      "Queues an export of the store's orders, customers or products (optionally only those changed at or after updatedSince) as one " +
      "gzip-compressed JSON Lines file: each line the object as its GET-by-id route answers it in this request's API version, all read " +
      "from one consistent snapshot whose event sequence is `sequence`. Load the file, then read the event feed with after=sequence: " +
      "nothing is missed, nothing repeated. Needs the resource's read scope (orders:read, customers:read, catalog:read). One export of a " +
      "store runs at a time; others wait queued. export.completed (or export.failed) follows.",
    document: graphql(
      `mutation createExport($resource: ExportResource!, $updatedSince: DateTime) { createExport(resource: $resource, updatedSince: $updatedSince) { ...Export } }`,
      [ExportFragment],
    ),
    respond: (data) => ({ status: 202, body: data.createExport, headers: { location: `/public/v1/exports/${data.createExport.id}` } }),
    status: 202,
    response: { ...exportResponse, headers: locationHeader("/public/v1/exports/{id}") },
  }),
  defineRoute({
    operationId: "listExports",
    method: "GET",
    path: "/public/v1/exports",
    tag: "Exports",
    summary: "List exports (extension to the contract)",
    description: "The Application's exports on the store, newest first. Exports are removed EXPORT_RETENTION_HOURS after they end.",
    document: graphql(
      `query listExports($limit: Int, $cursor: String) { exports(limit: $limit, cursor: $cursor) { data { ...Export } pagination { ...Pagination } } }`,
      [ExportFragment, PaginationFragment],
    ),
    respond: (data) => ({ body: data.exports }),
    status: 200,
    response: { description: "A page of exports", component: "ExportPage" },
  }),
  defineRoute({
    operationId: "getExportById",
    method: "GET",
    path: "/public/v1/exports/{id}",
    tag: "Exports",
    summary: "Get an export (extension to the contract)",
    description:
      "Once completed, `url` is a signed link to the file that works without a token until `expiresAt` (EXPORT_URL_TTL_SECONDS); " +
      "each read answers a fresh one.",
    document: graphql(`query getExportById($id: ID!) { export(id: $id) { ...Export } }`, [ExportFragment]),
    respond: (data) => ({ body: data.export }),
    status: 200,
    response: exportResponse,
    errors: [404],
  }),
];
