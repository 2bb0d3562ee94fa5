import { defineRoute } from "../../platform/route.js";
import { graphql } from "../../platform/schema/typed.js";
import { PaginationFragment } from "../../platform/schema/fields.js";

const CategoryFragment = graphql(`fragment Category on Category { id name position }`);

const ProductFragment = graphql(`fragment Product on Product { id name description price image categoryId isActive }`);

export const ProductDetailFragment = graphql(
  `fragment ProductDetail on Product {
    ...Product
    variations { id name price isAvailable position }
    additionals { id name price minChoices maxChoices isAvailable position } }`,
  [ProductFragment],
);

export const catalogRoutes = [
  defineRoute({
    operationId: "listCategories",
    method: "GET",
    path: "/public/v1/catalog/categories",
    tag: "Catalog",
    summary: "List categories",
    description: "Active categories in display order (position, then id). Not paginated: the body is `{ data }` only.",
    document: graphql("query listCategories { categories { ...Category } }", [CategoryFragment]),
    respond: (data) => ({ body: { data: data.categories } }),
    status: 200,
    response: {
      description: "The active categories",
      component: "CategoryList",
      body: (at) => ({ type: "object", required: ["data"], properties: { data: at("categories") } }),
    },
  }),
  defineRoute({
    operationId: "listProducts",
    method: "GET",
    path: "/public/v1/catalog/products",
    tag: "Catalog",
    summary: "List products",
    description: "Every product, paused ones included (isActive false), in menu order: category position, then name, then id.",
    document: graphql(
      `query listProducts($limit: Int, $cursor: String) {
        products(limit: $limit, cursor: $cursor) {
          data { ...Product }
          pagination { ...Pagination }
        }
      }`,
      [ProductFragment, PaginationFragment],
    ),
    respond: (data) => ({ body: data.products }),
    status: 200,
    response: { description: "A page of products", component: "ProductPage" },
  }),
  defineRoute({
    operationId: "getProductById",
    method: "GET",
    path: "/public/v1/catalog/products/{id}",
    tag: "Catalog",
    summary: "Get a product",
    description: "The product with its variations and additionals (price, min/max choices, availability).",
    document: graphql(`query getProductById($id: ID!) { product(id: $id) { ...ProductDetail } }`, [ProductDetailFragment]),
    respond: (data) => ({ body: data.product }),
    status: 200,
    response: { description: "The product" },
    errors: [404],
  }),
  defineRoute({
    operationId: "setProductStatus",
    method: "PATCH",
    path: "/public/v1/catalog/products/{id}/status",
    tag: "Catalog",
    summary: "Pause or resume a product",
    description: "A paused product cannot be ordered. Changes within the aggregation window are reported as one catalog.updated per product and action.",
    document: graphql(`mutation setProductStatus($id: ID!, $isActive: Boolean!) { setProductStatus(id: $id, isActive: $isActive) { ...Product } }`, [
      ProductFragment,
    ]),
    respond: (data) => ({ body: data.setProductStatus }),
    status: 200,
    response: { description: "The product" },
    errors: [404],
  }),
];
