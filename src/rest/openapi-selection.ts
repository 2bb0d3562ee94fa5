import {
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionNode,
  getNamedType,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  Kind,
} from "graphql";
import type { JsonSchema } from "../platform/json.js";
import type { SelectionAt } from "../platform/route.js";

/**
 * Response schemas generated from a route document's selection against the GraphQL schema, so a REST body's
 * shape is declared once (the Pothos type and the selection). Every selected field is required, since GraphQL
 * always sends it; a nullable field is `anyOf [x, null]`; descriptions are the GraphQL field's (or the object
 * type's). A selection that is exactly one named fragment becomes `$ref` to a component of the fragment's
 * name; a spread next to other fields is merged in. What GraphQL types cannot say (money's decimal places, a
 * minimum, a JSON scalar's known keys) comes from the field's or scalar's `extensions.jsonSchema`.
 */

/** Every id this API publishes is a uuid. */
const BUILT_IN_SCALARS: Record<string, JsonSchema> = {
  ID: { type: "string", format: "uuid" },
  String: { type: "string" },
  Int: { type: "integer" },
  Float: { type: "number" },
  Boolean: { type: "boolean" },
};

const isRecord = (value: unknown): value is JsonSchema => typeof value === "object" && value !== null && !Array.isArray(value);

/** The `extensions.jsonSchema` a Pothos field or scalar declares, if any. */
function annotation(extensions: Readonly<Record<string, unknown>> | null | undefined): JsonSchema {
  const value = extensions?.jsonSchema;
  return isRecord(value) ? value : {};
}

const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: "null" }] });

export class SelectionSchemas {
  readonly components: Record<string, JsonSchema> = {};
  /** The printed schema of each component, to refuse two different fragments under one name. */
  private readonly printed = new Map<string, string>();

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly reserved: Set<string>,
  ) {}

  /** The result schema of the document's operation, as a lookup by path (`at("orders")`, `at("webhookDeliveries", "data")`). */
  of(document: DocumentNode, name: string): { at: SelectionAt; rootFields: string[] } {
    const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
    if (!operation) throw new Error(`${name}: the document has no operation`);
    const root = operation.operation === "mutation" ? this.schema.getMutationType() : this.schema.getQueryType();
    if (!root) throw new Error(`${name}: the schema has no ${operation.operation} type`);
    const fragments = new Map(
      document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f]),
    );
    const result = this.object(root, operation.selectionSet.selections, fragments);
    const at: SelectionAt = (...path) => {
      let schema = result;
      for (const key of path) {
        const properties = this.resolve(schema).properties;
        const next = isRecord(properties) ? properties[key] : undefined;
        if (!isRecord(next)) throw new Error(`${name}: the selection has no ${path.join(".")}`);
        schema = next;
      }
      // The field's GraphQL description is about the operation; the route's response has its own.
      const { description: _ignored, ...body } = schema;
      return body;
    };
    return { at, rootFields: Object.keys(this.resolve(result).properties as JsonSchema) };
  }

  /** A component's schema in place of its $ref. */
  private resolve(schema: JsonSchema): JsonSchema {
    const ref = schema.$ref;
    return typeof ref === "string" ? this.components[ref.slice("#/components/schemas/".length)] : schema;
  }

  private selection(type: GraphQLObjectType, selections: readonly SelectionNode[], fragments: Map<string, FragmentDefinitionNode>): JsonSchema {
    const [only] = selections;
    if (selections.length !== 1 || only.kind !== Kind.FRAGMENT_SPREAD) return this.object(type, selections, fragments);
    const name = only.name.value;
    const fragment = fragments.get(name);
    if (!fragment) throw new Error(`fragment ${name} is not in the document`);
    if (this.reserved.has(name)) throw new Error(`fragment ${name} collides with the OpenAPI component ${name}`);
    const schema = this.object(type, fragment.selectionSet.selections, fragments);
    const printed = JSON.stringify(schema);
    const known = this.printed.get(name);
    if (known !== undefined && known !== printed) throw new Error(`two different fragments are named ${name}`);
    this.printed.set(name, printed);
    this.components[name] = schema;
    return { $ref: `#/components/schemas/${name}` };
  }

  /**
   * An object field whose REST schema is declared elsewhere (a `$ref` in its `extensions.jsonSchema`, e.g. the
   * webhook envelope) is published as that schema, so its selection must take every field of the type.
   */
  private published(
    type: GraphQLObjectType,
    selections: readonly SelectionNode[],
    fragments: Map<string, FragmentDefinitionNode>,
    declared: JsonSchema,
  ): JsonSchema {
    const selected = Object.keys(this.object(type, selections, fragments).properties as JsonSchema);
    const missing = Object.keys(type.getFields()).filter((f) => !selected.includes(f));
    if (missing.length > 0) throw new Error(`${type.name} is published as one schema: select all of it (missing ${missing.join(", ")})`);
    return declared;
  }

  private object(type: GraphQLObjectType, selections: readonly SelectionNode[], fragments: Map<string, FragmentDefinitionNode>): JsonSchema {
    const properties: Record<string, JsonSchema> = {};
    const visit = (nodes: readonly SelectionNode[]) => {
      for (const node of nodes) {
        if (node.kind === Kind.FRAGMENT_SPREAD) {
          const fragment = fragments.get(node.name.value);
          if (!fragment) throw new Error(`fragment ${node.name.value} is not in the document`);
          visit(fragment.selectionSet.selections);
        } else if (node.kind === Kind.INLINE_FRAGMENT) {
          visit(node.selectionSet.selections);
        } else {
          const field = type.getFields()[node.name.value];
          if (!field) throw new Error(`${type.name} has no field ${node.name.value}`);
          properties[node.alias?.value ?? node.name.value] = this.field(field, node.selectionSet?.selections ?? [], fragments);
        }
      }
    };
    visit(selections);
    return {
      type: "object",
      ...(type.description ? { description: type.description } : {}),
      required: Object.keys(properties),
      properties,
    };
  }

  private field(field: GraphQLField<unknown, unknown>, selections: readonly SelectionNode[], fragments: Map<string, FragmentDefinitionNode>): JsonSchema {
    const { description: annotated, ...constraints } = annotation(field.extensions);
    // The field's own description first, then what its annotation adds (money: "at most two decimals").
    const parts = [field.description, typeof annotated === "string" ? annotated : undefined].filter((d): d is string => Boolean(d));
    const description = parts.length > 1 ? parts.map((d) => d.replace(/\.?$/, ".")).join(" ") : parts[0];
    const schema = this.type(field.type, selections, fragments, constraints);
    return description ? { ...schema, description } : schema;
  }

  private type(
    type: GraphQLOutputType,
    selections: readonly SelectionNode[],
    fragments: Map<string, FragmentDefinitionNode>,
    constraints: JsonSchema,
  ): JsonSchema {
    if (isNonNullType(type)) return this.nonNull(type.ofType, selections, fragments, constraints);
    return nullable(this.nonNull(type, selections, fragments, constraints));
  }

  private nonNull(
    type: GraphQLOutputType,
    selections: readonly SelectionNode[],
    fragments: Map<string, FragmentDefinitionNode>,
    constraints: JsonSchema,
  ): JsonSchema {
    if (isListType(type)) return { type: "array", items: this.type(type.ofType, selections, fragments, constraints) };
    const named = getNamedType(type);
    if (isObjectType(named)) {
      return typeof constraints.$ref === "string" ? this.published(named, selections, fragments, constraints) : this.selection(named, selections, fragments);
    }
    if (isEnumType(named)) return { type: "string", enum: named.getValues().map((v) => v.name), ...constraints };
    if (isScalarType(named)) {
      const base = BUILT_IN_SCALARS[named.name] ?? annotation(named.extensions);
      return { ...base, ...constraints };
    }
    throw new Error(`${named.name}: only objects, enums and scalars are published over REST`);
  }
}
