import { ERROR_CATALOG } from "../platform/errors.js";
import type { Example, ProblemExample } from "../platform/examples.js";
import type { JsonSchema } from "../platform/json.js";
import { eventExample } from "../modules/events/examples.js";
import { OPERATION_EXAMPLES, STATUS_PROBLEMS } from "./openapi-examples.js";
import { CODE_SAMPLES } from "./openapi-samples.js";
import type { OpenApiDocument, OpenApiOperation } from "./openapi-document.js";

/**
 * Puts the examples (./openapi-examples.ts) and code samples (./openapi-samples.ts) into a built document:
 * request and success bodies as named `examples`, each operation's typical client error on its own copy of the
 * shared problem response, an example on every shared problem response and on every webhook body.
 */

const REQUEST_ID = "672f8864-d227-4d3b-9f11-ac4db44e7ee1";

/** The whole problem body, with the parts the error catalog decides; a token endpoint's also has OAuth 2.0's two. */
function problemBody(p: ProblemExample, baseUrl: string): Record<string, unknown> {
  const { status, title, retryable } = ERROR_CATALOG[p.code];
  return {
    type: `${baseUrl}/errors/${p.code}`,
    title,
    status,
    detail: p.detail,
    code: p.code,
    instance: p.instance,
    requestId: REQUEST_ID,
    traceId: REQUEST_ID.replace(/-/g, ""),
    retryable,
    ...(p.errors ? { errors: p.errors } : {}),
    ...(p.error ? { error: p.error, error_description: p.detail } : {}),
  };
}

const problemExamples = (p: ProblemExample, baseUrl: string): Record<string, Example> => ({
  [p.code]: { summary: p.summary, value: problemBody(p, baseUrl) },
});

/** The media type object of a request body or response, when it has that content. */
function media(holder: JsonSchema | undefined, type: string): JsonSchema | undefined {
  const content = holder?.content as Record<string, JsonSchema> | undefined;
  return content?.[type];
}

function attachToOperation(doc: OpenApiDocument, op: OpenApiOperation, baseUrl: string): void {
  const examples = OPERATION_EXAMPLES[op.operationId];
  const samples = CODE_SAMPLES[op.operationId];
  if (samples) op["x-codeSamples"] = samples;
  if (!examples) return;
  // The token endpoint's form body takes the same fields as its JSON one.
  const requests = Object.values((op.requestBody?.content ?? {}) as Record<string, JsonSchema>);
  if (examples.request) for (const request of requests) request.examples = examples.request;
  const success = Object.entries(op.responses).find(([status]) => status.startsWith("2"))?.[1];
  const body = media(success, "application/json");
  if (body && examples.response) body.examples = examples.response;
  for (const [status, named] of Object.entries(examples.otherResponses ?? {})) {
    const other = media(op.responses[status], "application/json");
    if (!other) throw new Error(`${op.operationId}: an example for status ${status}, which it does not answer with a body`);
    other.examples = named;
  }

  const status = String(ERROR_CATALOG[examples.problem.code].status);
  const shared = doc.components.responses[`Problem${status}`];
  const current = op.responses[status];
  if (!current || !shared) throw new Error(`${op.operationId}: its example problem ${examples.problem.code} has an undocumented status ${status}`);
  // A copy of the shared response, so this operation's own error shows on its page; a response of its own (the
  // token endpoint's) takes the example as it is.
  const own = "$ref" in current ? structuredClone(shared) : current;
  const problem = media(own, "application/problem+json") ?? media(own, "application/json");
  if (problem) problem.examples = problemExamples(examples.problem, baseUrl);
  op.responses[status] = own;
}

export function attachExamples(doc: OpenApiDocument, baseUrl: string): void {
  for (const item of Object.values(doc.paths)) for (const op of Object.values(item)) attachToOperation(doc, op, baseUrl);

  const referenced = JSON.stringify(doc.paths);
  for (const name of Object.keys(doc.components.responses)) {
    // A shared response every operation now carries a copy of would be an unused component.
    if (!referenced.includes(`"#/components/responses/${name}"`)) {
      delete doc.components.responses[name];
      continue;
    }
    const example = STATUS_PROBLEMS[Number(name.slice("Problem".length))];
    const problem = media(doc.components.responses[name], "application/problem+json");
    if (problem && example) problem.examples = problemExamples(example, baseUrl);
  }

  for (const [n, [type, item]] of Object.entries(doc.webhooks).entries()) {
    const value = eventExample(type, 101 + n);
    const body = media((item.post as JsonSchema | undefined)?.requestBody as JsonSchema | undefined, "application/json");
    if (body && value) body.examples = { default: { summary: `A ${type} body`, value } };
  }
}
