import { EXPORT_ID, notFound, one, page, UNKNOWN_ID, type OperationExamples } from "../../platform/examples.js";
import type { exportRoutes } from "./routes.js";

type ExportOperationId = (typeof exportRoutes)[number]["operationId"];

const QUEUED = {
  id: EXPORT_ID,
  resource: "orders",
  updatedSince: null,
  status: "queued",
  objectCount: null,
  bytes: null,
  sequence: null,
  apiVersion: "2026-12-01",
  createdAt: "2025-03-02T03:00:00.000Z",
  completedAt: null,
  expiresAt: null,
  url: null,
  error: null,
};

const COMPLETED = {
  ...QUEUED,
  status: "completed",
  objectCount: 1042,
  bytes: 186_311,
  sequence: 5310,
  completedAt: "2025-03-02T03:00:04.210Z",
  expiresAt: "2025-03-02T04:00:12.000Z",
  url: `https://api.example.com/public/v1/exports/${EXPORT_ID}/file?expires=1740888012&signature=3q2-7wQk0bQ0mJ3c2Xo3sW9Zq1yE8pVtRk4nL6fH2aU`,
};

export const exportExamples = {
  createExport: {
    request: {
      all: { summary: "Every order", value: { resource: "orders" } },
      since: { summary: "Customers changed since the last load", value: { resource: "customers", updatedSince: "2025-03-01T00:00:00.000Z" } },
    },
    response: one("The export, queued", QUEUED),
    problem: {
      summary: "An unknown resource",
      code: "INVALID_REQUEST",
      detail: "The request body is invalid.",
      instance: "/public/v1/exports",
      errors: [{ field: "resource", code: "INVALID_VALUE", message: "`resource` must be one of orders, customers, products" }],
    },
  },
  listExports: {
    response: one("One completed export", page([COMPLETED], null)),
    problem: {
      summary: "A cursor this list did not return",
      code: "INVALID_REQUEST",
      detail: "The cursor is not one this list returned. Pass pagination.nextCursor from the previous page unchanged.",
      instance: "/public/v1/exports",
      errors: [{ field: "cursor", code: "INVALID_CURSOR", message: "`cursor` is not one this list returned" }],
    },
  },
  getExportById: {
    response: one("A completed export with its link", COMPLETED),
    problem: notFound("export", "/public/v1/exports/{id}", UNKNOWN_ID),
  },
} satisfies Record<ExportOperationId, OperationExamples>;
