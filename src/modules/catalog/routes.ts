import { defineRoute } from "../../platform/route.js";
import { CategorySchema, listProductsInput, ProductDetailSchema, ProductSchema, productStatusInput } from "./schemas.js";
import { idPath, pageOf } from "../../platform/schemas.js";
import type { Page } from "../../platform/schema/pagination.js";

type Row = Record<string, unknown> & { id: string };

const PRODUCT_FIELDS = "id name description price image categoryId isActive";

export const catalogRoutes = [
  defineRoute<{ categories: Row[] }>({
    operationId: "listCategories",
    method: "GET",
    path: "/public/v1/catalog/categories",
    tag: "Catalog",
    summary: "List categories",
    description: "Active categories in display order (position, then id). Not paginated: the body is `{ data }` only.",
    scope: "catalog:read",
    document: "query listCategories { categories { id name position } }",
    variables: () => ({}),
    respond: (data) => ({ body: { data: data.categories } }),
    status: 200,
    response: {
      description: "The active categories",
      schema: { type: "object", required: ["data"], properties: { data: { type: "array", items: CategorySchema } } },
    },
  }),
  defineRoute<{ products: Page<Row> }>({
    operationId: "listProducts",
    method: "GET",
    path: "/public/v1/catalog/products",
    tag: "Catalog",
    summary: "List products",
    description: "Every product, paused ones included (isActive false), in menu order: category position, then name, then id.",
    scope: "catalog:read",
    query: listProductsInput,
    document: `query listProducts($limit: Int, $cursor: String) {
      products(limit: $limit, cursor: $cursor) {
        data { ${PRODUCT_FIELDS} }
        pagination { hasMore cursor nextCursor }
      }
    }`,
    variables: ({ query }) => ({ limit: query.limit, cursor: query.cursor ?? null }),
    respond: (data) => ({ body: data.products }),
    status: 200,
    response: { description: "A page of products", schema: pageOf(ProductSchema) },
  }),
  defineRoute<{ product: Row }>({
    operationId: "getProductById",
    method: "GET",
    path: "/public/v1/catalog/products/{id}",
    tag: "Catalog",
    summary: "Get a product",
    description: "The product with its variations and additionals (price, min/max choices, availability).",
    scope: "catalog:read",
    pathParams: idPath,
    document: `query getProductById($id: ID!) {
      product(id: $id) {
        ${PRODUCT_FIELDS}
        variations { id name price isAvailable position }
        additionals { id name price minChoices maxChoices isAvailable position }
      }
    }`,
    variables: ({ path }) => ({ id: path.id }),
    respond: (data) => ({ body: data.product }),
    status: 200,
    response: { description: "The product", schema: ProductDetailSchema },
    errors: [404],
  }),
  defineRoute<{ setProductStatus: Row }>({
    operationId: "setProductStatus",
    method: "PATCH",
    path: "/public/v1/catalog/products/{id}/status",
    tag: "Catalog",
    summary: "Pause or resume a product",
    description: "A paused product cannot be ordered. Changes within the aggregation window are reported as one catalog.updated per product and action.",
    scope: "catalog:write",
    pathParams: idPath,
    body: productStatusInput,
    document: `mutation setProductStatus($id: ID!, $isActive: Boolean!) { setProductStatus(id: $id, isActive: $isActive) { ${PRODUCT_FIELDS} } }`,
    variables: ({ path, body }) => ({ id: path.id, isActive: (body as { isActive: boolean }).isActive }),
    respond: (data) => ({ body: data.setProductStatus }),
    status: 200,
    response: { description: "The product", schema: ProductSchema },
    errors: [404],
  }),
];
