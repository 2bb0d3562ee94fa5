import { Kind, valueFromASTUntyped, visit, type DocumentNode, type ValueNode } from "graphql";
import type { Violation } from "../platform/errors.js";
import { unstorableText } from "../platform/input.js";

/** Whether a literal nests lists and objects deeper than `max` levels, walked with a stack of its own. */
function nestsDeeperThan(node: ValueNode, max: number): boolean {
  const stack: { value: ValueNode; depth: number }[] = [{ value: node, depth: 0 }];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const { value, depth } = next;
    if (value.kind !== Kind.LIST && value.kind !== Kind.OBJECT) continue;
    if (depth + 1 > max) return true;
    const children = value.kind === Kind.LIST ? value.values : value.fields.map((f) => f.value);
    for (const child of children) stack.push({ value: child, depth: depth + 1 });
  }
  return false;
}

/** A literal argument's violations: too deep to convert (named after the argument), else its unstorable text. */
function literalViolations(name: string, value: ValueNode, maxDepth: number): Violation[] {
  if (nestsDeeperThan(value, maxDepth)) {
    return [{ field: name, code: "TOO_DEEP", message: `\`${name}\` nests lists and objects deeper than ${maxDepth} levels` }];
  }
  return unstorableText(valueFromASTUntyped(value), name);
}

/** Literal arguments of a document never change: parsed documents are cached, so each is walked once. */
const literalCache = new WeakMap<DocumentNode, Violation[]>();

function literalsOf(document: DocumentNode, maxDepth: number): Violation[] {
  let found = literalCache.get(document);
  if (!found) {
    const violations: Violation[] = [];
    // A variable inside a literal reads as undefined here: its value is checked with the variables.
    visit(document, {
      Argument: (node) => {
        violations.push(...literalViolations(node.name.value, node.value, maxDepth));
        return false;
      },
      VariableDefinition: (node) => {
        if (node.defaultValue) violations.push(...literalViolations(node.variable.name.value, node.defaultValue, maxDepth));
        return false;
      },
    });
    found = violations;
    literalCache.set(document, found);
  }
  return found;
}

/**
 * The input rules at the GraphQL door, on what a document carries past its parser: literal arguments nested
 * deeper than `maxDepth` (variables were held to it as JSON text), and strings the database could not store, in
 * its variables (named `input.customer.name` after the variable) and in literal arguments (named after the argument).
 */
export function operationInputViolations(
  document: DocumentNode,
  variables: Readonly<Record<string, unknown>> | null | undefined,
  maxDepth: number,
): Violation[] {
  return [...literalsOf(document, maxDepth), ...unstorableText(variables ?? {})];
}
