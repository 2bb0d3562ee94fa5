import { MapperKind, mapSchema } from "@graphql-tools/utils";
import { isObjectType, type GraphQLSchema } from "graphql";
import { removedGraphqlFields } from "../modules/versions/render.js";

/**
 * GraphQL has no dated versions, so it keeps every field a REST version removed (its clients' queries go on working)
 * and marks it deprecated, with the reason its version change declares.
 */
export function deprecateRemovedFields(schema: GraphQLSchema): GraphQLSchema {
  const reasons = new Map<string, string>();
  for (const { type, field, reason } of removedGraphqlFields()) {
    const holder = schema.getType(type);
    if (!isObjectType(holder) || !(field in holder.getFields())) throw new Error(`a version change deprecates ${type}.${field}, which GraphQL does not have`);
    reasons.set(`${type}.${field}`, reason);
  }
  return mapSchema(schema, {
    [MapperKind.OBJECT_FIELD]: (config, field, type) => {
      const deprecationReason = reasons.get(`${type}.${field}`);
      return deprecationReason ? { ...config, deprecationReason } : config;
    },
  });
}
