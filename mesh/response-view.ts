import { MapperKind, mapSchema } from "@graphql-tools/utils";
import {
  type ConstArgumentNode,
  type ConstDirectiveNode,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  GraphQLUnionType,
  type GraphQLOutputType,
  getNamedType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  isUnionType,
  Kind,
} from "graphql";

/**
 * A Mesh transform that makes the GraphQL view of the REST contract consistent across operations.
 *
 * 1. An error answer is a `ProblemResponse { problem: ProblemDetails!, _response }`, not a bare ProblemDetails.
 *    GraphQL lets one selection over a union use a field name only with one type, so next to `status: OrderStatus`
 *    or `type: OrderType` a bare ProblemDetails' `status: Int` and `type: URL` had to be aliased, and the SDK
 *    generator did so per operation (`statusIntNonNull`, `typeURLNonNull`). Under `problem` the RFC 9457 names never
 *    meet a resource's fields.
 * 2. Each operation's result object (every union member, and the problem's wrapper) gets `_response`, the HTTP
 *    status, headers, URL and method of the REST answer, so Location, Idempotent-Replayed, X-RateLimit-*,
 *    X-Next-Cursor and Retry-After are readable. The REST handler keeps them on the decoded body as hidden `$`
 *    properties; nested objects have none, so their `_response` is null.
 * 3. An event is a `StoreEvent` (`eventType: String!`, `data: JSON!`) wherever it appears: the feed's items and a
 *    delivery's payload too, which the document types as the `WebhookEvent` union. Each member of that union has its
 *    own one-value enum for `eventType` and its own `data` type, so a selection over the union had to alias them
 *    per member (`eventTypeorder_confirmed_constNonNull`); the document still types `data` per event type.
 */

const PROBLEM = "ProblemDetails";
const WRAPPER = "ProblemResponse";
const EVENT_UNION = "WebhookEvent";
const EVENT = "StoreEvent";

interface ResponseMetadata {
  status: number;
  url: string;
  method: string;
  headers: Record<string, string>;
}

/** The answer's metadata the REST handler left on the decoded body, or null on objects nested in it. */
function responseOf(root: unknown): ResponseMetadata | null {
  if (typeof root !== "object" || root === null) return null;
  if (!("$statusCode" in root && "$url" in root && "$method" in root && "$response" in root)) return null;
  const response = root.$response;
  // `$response` is a Proxy that only answers reads: `"header" in` it is false.
  const header: unknown = typeof response === "object" && response !== null ? Reflect.get(response, "header") : null;
  // The handler's header object is a Proxy over the fetch Headers; a copy serialises as plain JSON.
  const headers: Record<string, string> = {};
  if (typeof header === "object" && header !== null) for (const [name, value] of Object.entries(header)) headers[name] = String(value);
  return { status: Number(root.$statusCode), url: String(root.$url), method: String(root.$method), headers };
}

/** `@statusCodeTypeName(typeName: "ProblemDetails")` on a union now names the wrapper. */
function renameInDirective(directive: ConstDirectiveNode): ConstDirectiveNode {
  if (directive.name.value !== "statusCodeTypeName") return directive;
  const args = directive.arguments?.map(
    (arg): ConstArgumentNode =>
      arg.name.value === "typeName" && arg.value.kind === Kind.STRING && arg.value.value === PROBLEM
        ? { ...arg, value: { ...arg.value, value: WRAPPER } }
        : arg,
  );
  return { ...directive, arguments: args };
}

/** The same list and non-null wrapping around the event type instead of the union. */
function asEvent(type: GraphQLOutputType, event: GraphQLObjectType): GraphQLOutputType {
  if (isNonNullType(type)) return new GraphQLNonNull(asEvent(type.ofType, event));
  if (isListType(type)) return new GraphQLList(asEvent(type.ofType, event));
  return event;
}

export default class ResponseViewTransform {
  /** Applied to the source schema itself, so the REST handler's resolvers and their hidden metadata stay. */
  readonly noWrap = true;

  transformSchema(schema: GraphQLSchema): GraphQLSchema {
    const problem = schema.getType(PROBLEM);
    const json = schema.getType("JSON");
    const event = schema.getType(EVENT);
    if (!isObjectType(problem) || !isScalarType(json) || !isObjectType(event))
      throw new Error(`response-view: the source schema has no ${PROBLEM} or ${EVENT} object type or no JSON scalar`);

    const metadataType = new GraphQLObjectType({
      name: "ResponseMetadata",
      description: "The REST answer behind this result.",
      fields: {
        status: { type: new GraphQLNonNull(GraphQLInt), description: "The HTTP status" },
        headers: { type: new GraphQLNonNull(json), description: 'Response headers by lower-case name, e.g. `headers["x-next-cursor"]`' },
        url: { type: new GraphQLNonNull(GraphQLString), description: "The URL called, without its query string" },
        method: { type: new GraphQLNonNull(GraphQLString) },
      },
    });
    const responseField = {
      type: metadataType,
      description: "Status and headers of the REST answer; null on objects nested in a result",
      resolve: responseOf,
    };
    const wrapper = new GraphQLObjectType({
      name: WRAPPER,
      description: "An error answer: the problem+json body under `problem`, with the same field names in every operation.",
      fields: { problem: { type: new GraphQLNonNull(problem), resolve: (root: unknown) => root }, _response: responseField },
    });

    // Every object an operation answers with, except the problem it now wraps.
    const results = new Set<string>();
    for (const root of [schema.getQueryType(), schema.getMutationType()]) {
      for (const field of Object.values(root?.getFields() ?? {})) {
        const named = getNamedType(field.type);
        for (const member of isUnionType(named) ? named.getTypes() : [named]) if (isObjectType(member) && member !== problem) results.add(member.name);
      }
    }

    const extended = new GraphQLSchema({ ...schema.toConfig(), types: [...schema.toConfig().types, metadataType, wrapper] });
    return mapSchema(extended, {
      [MapperKind.OBJECT_FIELD]: (field) => {
        if (getNamedType(field.type).name !== EVENT_UNION) return field;
        return { ...field, type: asEvent(field.type, event) };
      },
      [MapperKind.OBJECT_TYPE]: (type) => {
        if (!results.has(type.name)) return type;
        const config = type.toConfig();
        return new GraphQLObjectType({ ...config, fields: { ...config.fields, _response: responseField } });
      },
      [MapperKind.UNION_TYPE]: (type) => {
        if (!type.getTypes().includes(problem)) return type;
        const config = type.toConfig();
        const resolveType = config.resolveType;
        const rename = (name: string | undefined) => (name === PROBLEM ? WRAPPER : name);
        return new GraphQLUnionType({
          ...config,
          types: config.types.map((member) => (member === problem ? wrapper : member)),
          resolveType: resolveType
            ? (value, context, info, abstractType) => {
                const name = resolveType(value, context, info, abstractType);
                return name instanceof Promise ? name.then(rename) : rename(name);
              }
            : undefined,
          astNode: config.astNode ? { ...config.astNode, directives: config.astNode.directives?.map(renameInDirective) } : config.astNode,
        });
      },
    });
  }
}
