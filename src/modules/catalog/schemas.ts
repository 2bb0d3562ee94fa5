import type { JsonSchema } from "../../platform/route.js";
import { cursorParam, integer, limitParam, money, nullable, text, uuid } from "../../platform/schemas.js";
import { defineBody, defineQuery } from "../../platform/validate.js";

export const CategorySchema: JsonSchema = {
  type: "object",
  required: ["id", "name", "position"],
  properties: { id: uuid, name: text, position: { type: "integer", description: "Display order, ascending" } },
};

export const ProductSchema: JsonSchema = {
  type: "object",
  required: ["id", "name", "description", "price", "image", "categoryId", "isActive"],
  properties: {
    id: uuid,
    name: text,
    description: nullable(text),
    price: money,
    image: nullable(text),
    categoryId: uuid,
    isActive: { type: "boolean", description: "False while the store has paused the product" },
  },
};

const choiceFields = { id: uuid, name: text, price: money, isAvailable: { type: "boolean" }, position: integer };

export const ProductDetailSchema: JsonSchema = {
  type: "object",
  required: [...(ProductSchema.required as string[]), "variations", "additionals"],
  properties: {
    ...(ProductSchema.properties as Record<string, JsonSchema>),
    variations: {
      type: "array",
      description: "Sizes or versions; a variation's price replaces the product's price",
      items: { type: "object", required: Object.keys(choiceFields), properties: choiceFields },
    },
    additionals: {
      type: "array",
      description: "Extras; an item takes between minChoices and maxChoices of each",
      items: {
        type: "object",
        required: [...Object.keys(choiceFields), "minChoices", "maxChoices"],
        properties: { ...choiceFields, minChoices: integer, maxChoices: integer },
      },
    },
  },
};

export const ProductStatusSchema: JsonSchema = {
  type: "object",
  required: ["isActive"],
  properties: { isActive: { type: "boolean", description: "false pauses the product" } },
};

/* The operations' inputs: REST's route rows and the GraphQL resolvers check with these same validators. */

export const listProductsInput = defineQuery({ limit: limitParam, cursor: cursorParam });

export const productStatusInput = defineBody(ProductStatusSchema);
