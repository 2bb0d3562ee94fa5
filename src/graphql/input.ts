import { valueFromASTUntyped, visit, type DocumentNode } from "graphql";
import type { Violation } from "../platform/errors.js";
import { unstorableText } from "../platform/input.js";

/** Literal arguments of a document never change: parsed documents are cached, so each is walked once. */
const literalViolations = new WeakMap<DocumentNode, Violation[]>();

function literalsOf(document: DocumentNode): Violation[] {
  let found = literalViolations.get(document);
  if (!found) {
    const violations: Violation[] = [];
    // A variable inside a literal reads as undefined here: its value is checked with the variables.
    visit(document, {
      Argument: (node) => {
        violations.push(...unstorableText(valueFromASTUntyped(node.value), node.name.value));
        return false;
      },
      VariableDefinition: (node) => {
        if (node.defaultValue) violations.push(...unstorableText(valueFromASTUntyped(node.defaultValue), node.variable.name.value));
        return false;
      },
    });
    found = violations;
    literalViolations.set(document, found);
  }
  return found;
}

/**
 * The text rule at the GraphQL door: strings of an operation the database could not store, in its variables
 * (named `input.customer.name` after the variable) and in literal arguments (named after the argument).
 */
export function unstorableOperationText(document: DocumentNode, variables: Readonly<Record<string, unknown>> | null | undefined): Violation[] {
  return [...literalsOf(document), ...unstorableText(variables ?? {})];
}
