import { notFound, one, page, PRODUCT, UNKNOWN_ID, type OperationExamples } from "../../platform/examples.js";
import type { catalogRoutes } from "./routes.js";

type CatalogOperationId = (typeof catalogRoutes)[number]["operationId"];

const CATEGORY = {
  pizzas: "05e39d57-5d76-42d9-a276-903185af8566",
  burgers: "1e22d75f-d3b7-44a0-bfb7-dd5210c547f0",
  drinks: "0a3510c5-0cbc-4294-9b87-e9cfb834da3a",
};

const MARGHERITA = {
  id: PRODUCT.margherita,
  name: "Margherita",
  description: "Tomato, mozzarella and basil",
  price: 42.9,
  image: "https://images.example.com/products/margherita.jpg",
  categoryId: CATEGORY.pizzas,
  isActive: true,
};
const PEPPERONI = {
  id: PRODUCT.pepperoni,
  name: "Pepperoni",
  description: "Pepperoni and mozzarella",
  price: 49.9,
  image: "https://images.example.com/products/pepperoni.jpg",
  categoryId: CATEGORY.pizzas,
  isActive: true,
};

export const catalogExamples = {
  listCategories: {
    response: one("The menu's sections in display order", {
      data: [
        { id: CATEGORY.pizzas, name: "Pizzas", position: 1 },
        { id: CATEGORY.burgers, name: "Burgers", position: 2 },
        { id: CATEGORY.drinks, name: "Drinks", position: 3 },
      ],
    }),
    problem: {
      summary: "A token without catalog:read",
      code: "INSUFFICIENT_SCOPE",
      detail:
        'This operation needs the scope "catalog:read", which the token does not carry. Ask the store to grant it to your Application, then request a new token.',
      instance: "/public/v1/catalog/categories",
    },
  },
  listProducts: {
    response: one("Two products, with more to read", page([MARGHERITA, PEPPERONI], PRODUCT.pepperoni)),
    problem: {
      summary: "A page size of zero",
      code: "INVALID_REQUEST",
      detail: "The query parameters failed validation: `limit` must be at least 1.",
      instance: "/public/v1/catalog/products",
      errors: [{ field: "limit", code: "OUT_OF_RANGE", message: "`limit` must be at least 1" }],
    },
  },
  getProductById: {
    response: one("A pizza in two sizes, with extras", {
      ...MARGHERITA,
      variations: [
        { id: "3008470a-3711-42e6-999e-cf4bb6e78944", name: "Medium", price: 42.9, isAvailable: true, position: 0 },
        { id: "41f0ccac-ba34-41a1-8303-2dcc66f8c3af", name: "Large", price: 54.9, isAvailable: true, position: 1 },
      ],
      additionals: [
        { id: "b250dae2-9dd4-4be6-8c07-401b39886371", name: "Extra cheese", price: 6.5, minChoices: 0, maxChoices: 2, isAvailable: true, position: 0 },
        { id: "6f8f6684-323b-412d-8b64-1e61dea2501c", name: "Stuffed crust", price: 9, minChoices: 0, maxChoices: 1, isAvailable: true, position: 1 },
      ],
    }),
    problem: notFound("product", "/public/v1/catalog/products/{id}", UNKNOWN_ID),
  },
  setProductStatus: {
    request: {
      pause: { summary: "Pause (sold out tonight)", value: { isActive: false } },
      resume: { summary: "Resume", value: { isActive: true } },
    },
    response: one("The product, paused", { ...PEPPERONI, isActive: false }),
    problem: notFound("product", "/public/v1/catalog/products/{id}", UNKNOWN_ID),
  },
} satisfies Record<CatalogOperationId, OperationExamples>;
