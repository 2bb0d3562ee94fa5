import { getNamedType, isEnumType, Kind, typeFromAST, type FieldNode, type GraphQLEnumType, type GraphQLSchema, type OperationDefinitionNode } from "graphql";
import { invalidRequest } from "../platform/errors.js";
import { isRecord, type JsonSchema } from "../platform/json.js";
import type { Route, RouteInput } from "../platform/route.js";
import { matching } from "../platform/schemas.js";
import { definePath, defineQuery, objectArgs, OperationInput, type ArgsInput } from "../platform/validate.js";

/* A request's input: bound to its operation's arguments, read from the query string, trimmed to the declared body. */

/**
 * A route's input bound to its operation's: the validators of its path, query and body, in HTTP names, derived from
 * the schemas its field declares by argument, and the one function that renames a checked request into the variables.
 */
export interface BoundInput {
  pathParams?: OperationInput;
  query?: OperationInput;
  body?: OperationInput;
  variables: (input: RouteInput) => Record<string, unknown>;
}

const WRITES = new Set(["POST", "PUT", "PATCH"]);

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * A list argument as the comma-separated text a query parameter carries: its items' values joined by commas, worded
 * by the list's `title` (`event types`). Only a list of named values has a text form.
 */
function commaSeparated(list: JsonSchema, where: string): JsonSchema {
  const items = list.items;
  const values = isRecord(items) && Array.isArray(items.enum) ? items.enum.filter((v): v is string => typeof v === "string") : [];
  if (list.type !== "array" || values.length === 0 || typeof list.title !== "string")
    throw new Error(`${where}: a list parameter must be a titled array of named values`);
  const one = values.map(escapeRegExp).join("|");
  return {
    type: "string",
    ...matching(`^(${one})(,(${one}))*$`, `must be ${list.title} separated by commas, among: ${values.join(", ")}`),
    description: `Comma-separated ${list.title}, among ${values.join(", ")}`,
  };
}

/** A REST value as its GraphQL variable: an enum's value is REST's spelling, its GraphQL name what the variable takes. */
function enumName(type: GraphQLEnumType | undefined, value: unknown): unknown {
  return type?.getValues().find((v) => v.value === value)?.name ?? value;
}

/**
 * Binds a row to the input its field declares (null: none): path parameters `{name}` and, for a GET or DELETE, every
 * other plain argument as a query parameter, each under its argument's name unless the row renames it; a write's body
 * is the field's object. Anything unbound or bound twice stops the process at start.
 */
export function bindInput(
  schema: GraphQLSchema,
  route: Route,
  input: ArgsInput | null,
  operation: OperationDefinitionNode,
  field: FieldNode | undefined,
): BoundInput {
  const where = route.operationId;
  const { rename, lists } = route.bind;
  const args: Record<string, JsonSchema | undefined> = { ...input?.args };
  for (const arg of lists) {
    const list = args[arg];
    if (!list) throw new Error(`${where}: it lists ${arg}, which is not an argument with a schema`);
    args[arg] = commaSeparated(list, where);
  }
  const enums = new Map<string, GraphQLEnumType>();
  for (const definition of operation.variableDefinitions ?? []) {
    const type = typeFromAST(schema, definition.type);
    const named = type && getNamedType(type);
    if (isEnumType(named)) enums.set(definition.variable.name.value, named);
  }
  // The field's arguments pass the variables of their names, so a variable's schema is its argument's.
  for (const argument of field?.arguments ?? []) {
    if (argument.value.kind !== Kind.VARIABLE || argument.value.name.value !== argument.name.value)
      throw new Error(`${where}: argument ${argument.name.value} must be passed as $${argument.name.value}`);
  }
  const required = new Map((operation.variableDefinitions ?? []).map((d) => [d.variable.name.value, d.type.kind === Kind.NON_NULL_TYPE]));
  const schemaOf = (name: string, arg: string): JsonSchema => {
    const schema = args[arg];
    if (!schema || !required.has(arg)) throw new Error(`${where}: parameter ${name} binds ${arg}, which is not an argument with a schema and a variable`);
    return schema;
  };

  const path = [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]): [string, string] => [name, rename[name] ?? name]);
  const inPath = new Set(path.map(([, arg]) => arg));
  const httpName = (arg: string) => Object.keys(rename).find((name) => rename[name] === arg) ?? arg;
  const query = Object.keys(args)
    .filter((arg) => !inPath.has(arg))
    .map((arg): [string, string] => [httpName(arg), arg]);
  const write = WRITES.has(route.method);
  if (write && query.length > 0) throw new Error(`${where}: a write takes no query parameters (${query.map(([name]) => name).join(", ")})`);
  if (!write && input?.object) throw new Error(`${where}: a ${route.method} has no body for its field's object`);
  for (const name of Object.keys(rename)) {
    if (!path.some(([n]) => n === name) && !query.some(([n]) => n === name)) throw new Error(`${where}: it renames ${name}, which is no parameter`);
  }

  const fromBody = input ? objectArgs(input, [...required.keys()]) : [];
  const bound = [...path, ...query].map(([, arg]) => arg).concat(fromBody);
  for (const variable of required.keys()) if (!bound.includes(variable)) throw new Error(`${where}: nothing binds $${variable}`);

  const parts: Omit<BoundInput, "variables"> = {};
  if (path.length > 0) parts.pathParams = definePath(Object.fromEntries(path.map(([name, arg]) => [name, schemaOf(name, arg)])));
  if (query.length > 0) {
    const properties = Object.fromEntries(query.map(([name, arg]) => [name, schemaOf(name, arg)]));
    parts.query = defineQuery(
      properties,
      query.filter(([, arg]) => required.get(arg)).map(([name]) => name),
    );
  }
  const objectArg = input?.object?.arg;
  const split = new Set(lists);
  // Values the validators passed, or in the fuzz tests raw ones, which GraphQL then refuses.
  const variable = (arg: string, value: unknown): unknown => {
    if (split.has(arg) && typeof value === "string") return value.split(",");
    return enumName(enums.get(arg), value);
  };
  if (input?.object) parts.body = new OperationInput("body", input.object.schema);

  return {
    ...parts,
    variables: (request) => {
      const variables: Record<string, unknown> = {};
      for (const [name, arg] of path) variables[arg] = variable(arg, request.path[name]);
      for (const [name, arg] of query) variables[arg] = variable(arg, request.query[name] ?? null);
      if (objectArg !== undefined) variables[objectArg] = request.body;
      else for (const arg of fromBody) variables[arg] = variable(arg, (isRecord(request.body) ? request.body[arg] : undefined) ?? null);
      return variables;
    },
  };
}

/**
 * The query string as an object. Every parameter is single-valued (a list is one comma-separated value), so
 * one given twice is a 400 naming it rather than silently taking either value.
 */
export function queryOf(params: URLSearchParams): Record<string, string> {
  const query = new Map<string, string>();
  const repeated = new Set<string>();
  for (const [name, value] of params) {
    if (query.has(name)) repeated.add(name);
    else query.set(name, value);
  }
  if (repeated.size > 0) {
    const names = [...repeated];
    throw invalidRequest(
      `Each query parameter may be given once (send a list as one comma-separated value); repeated: ${names.join(", ")}.`,
      names.map((field) => ({ field, code: "REPEATED_PARAMETER", message: `\`${field}\` is given more than once` })),
    );
  }
  // fromEntries defines own properties, so a parameter named __proto__ stays a plain key.
  return Object.fromEntries(query);
}

/**
 * Keeps only the fields a body schema declares (recursively through objects, arrays and nullable
 * unions, as deep as the schema goes, no deeper). Unknown fields are ignored rather than refused (a client may send an item's unitPrice, which the
 * catalog's price replaces), and they never reach GraphQL, whose input types would reject them.
 */
export function pickDeclared(value: unknown, schema: JsonSchema): unknown {
  if (value === null || typeof value !== "object") return value;
  const variants = (schema.anyOf as JsonSchema[] | undefined)?.filter((s) => s.type !== "null");
  if (variants?.length === 1) return pickDeclared(value, variants[0]);
  if (Array.isArray(value)) {
    const items = schema.items as JsonSchema | undefined;
    return items ? value.map((v) => pickDeclared(v, items)) : value;
  }
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (!properties || schema.additionalProperties === true) return value;
  const out: Record<string, unknown> = {};
  for (const [key, sub] of Object.entries(properties)) {
    if (Object.hasOwn(value, key)) out[key] = pickDeclared((value as Record<string, unknown>)[key], sub);
  }
  return out;
}
