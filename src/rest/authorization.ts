import { Kind, type DocumentNode, type FieldNode, type GraphQLSchema, type OperationDefinitionNode } from "graphql";
import { isScope, type Scope } from "../platform/auth/scopes.js";
import { isRecord } from "../platform/json.js";
import type { Route, RouteInput } from "../platform/route.js";
import { declaredArgs, type OperationInput } from "../platform/validate.js";
import { bindInput } from "./validate.js";

/*
 * What a route row does not say, read off the GraphQL field its document selects: who may call it and what its input
 * is. The router decides and checks with these, and the OpenAPI document prints them.
 */

/** Who among partner tokens may call a route: read off its GraphQL field, never written on the row. */
export interface PartnerRule {
  /** The scope the token must carry; null: any valid partner token. */
  scope: Scope | null;
  /** Only SANDBOX tokens may call it; PRODUCTION tokens get 403 FORBIDDEN. */
  sandboxOnly: boolean;
}

/**
 * The validators of a route's path, query and body, derived from its field's `input` option and the row's binding,
 * and the request's variables for its operation.
 */
export interface RouteInputs {
  pathParams?: OperationInput;
  query?: OperationInput;
  body?: OperationInput;
  /** The operation's variables from a request, renamed and nothing else: checking is the validators'. */
  variables: (input: RouteInput) => Record<string, unknown>;
}

export type AuthorizedRoute = Route & PartnerRule & RouteInputs;

/**
 * The partner's part of a field's `authScopes` (Pothos keeps the field's options in its extensions): a field
 * passes when any one of its scopes does, and administrators' roles do not reach REST. Only the plain forms the
 * fields use are read; anything else stops the process at start rather than guess.
 */
function fieldRule(authScopes: unknown, where: string): PartnerRule {
  if (!isRecord(authScopes)) throw new Error(`${where}: its authScopes must be a plain object for a REST route to read them`);
  const { scope, partner, sandbox, anyScope } = authScopes;
  if (anyScope !== undefined) throw new Error(`${where}: anyScope cannot be said as one OAuth scope`);
  if (partner === true) return { scope: null, sandboxOnly: false };
  if (typeof scope === "string" && isScope(scope) && sandbox === undefined) return { scope, sandboxOnly: false };
  if (sandbox === true && scope === undefined) return { scope: null, sandboxOnly: true };
  throw new Error(`${where}: no partner token may use it, or its rule mixes a scope with sandbox`);
}

interface RootField {
  name: string;
  options: Record<string, unknown>;
  node: FieldNode;
  operation: OperationDefinitionNode;
}

/** Each root field a document selects, with its Pothos options (Pothos keeps them in the field's extensions). */
export function rootFieldOptions(schema: GraphQLSchema, document: DocumentNode): RootField[] {
  const fields: RootField[] = [];
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
    const root = schema.getRootType(definition.operation);
    for (const selection of definition.selectionSet.selections) {
      if (selection.kind !== Kind.FIELD || selection.name.value.startsWith("__")) continue;
      const options = root?.getFields()[selection.name.value]?.extensions.pothosOptions;
      fields.push({ name: selection.name.value, options: isRecord(options) ? options : {}, node: selection, operation: definition });
    }
  }
  return fields;
}

/** The rule of the operation's root fields, which must all agree: a route answers with one 403 or none. */
export function partnerRule(schema: GraphQLSchema, document: DocumentNode, operationId: string): PartnerRule {
  const rules = rootFieldOptions(schema, document).map(({ name, options }) => fieldRule(options.authScopes, `${operationId} (${name})`));
  const [first, ...rest] = rules;
  if (!first) throw new Error(`${operationId}: its document selects no field`);
  if (rest.some((r) => r.scope !== first.scope || r.sandboxOnly !== first.sandboxOnly))
    throw new Error(`${operationId}: its root fields need different scopes`);
  return first;
}

/** The input of the one root field of the document that declares one (none: the operation takes no input), bound to the row. */
export function routeInputs(schema: GraphQLSchema, route: Route): RouteInputs {
  const fields = rootFieldOptions(schema, route.document);
  const declared = fields.filter(({ options }) => options.input !== undefined);
  if (declared.length > 1) throw new Error(`${route.operationId}: more than one of its root fields declares an input`);
  const [field] = declared;
  const operation = field?.operation ?? fields[0]?.operation;
  if (!operation) throw new Error(`${route.operationId}: its document selects no field`);
  return bindInput(schema, route, declaredArgs(field?.options.input), operation, field?.node);
}

/** The route table with each row's rule and inputs attached, as the router and the OpenAPI document use it. */
export const authorizedRoutes = (schema: GraphQLSchema, routes: Route[]): AuthorizedRoute[] =>
  routes.map((route) => ({ ...route, ...partnerRule(schema, route.document, route.operationId), ...routeInputs(schema, route) }));
