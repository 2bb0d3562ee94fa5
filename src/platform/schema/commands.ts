import type { DocumentNode, GraphQLSchema } from "graphql";
import type { Tx } from "../db/prisma.js";
import type { Context } from "./context.js";
import { collectEvents, EventReceipt } from "../events/receipt.js";
import { tracer } from "../tracing/tracer.js";

declare module "graphql" {
  interface GraphQLFieldExtensions<_TSource, _TContext, _TArgs> {
    /**
     * The mutation waits on a call over the network (it sends a webhook). It must not run inside a transaction
     * its caller holds open, so its idempotency record cannot commit with its writes.
     */
    callsOut?: boolean;
  }
}

/** The span of a write's transaction, up to the commit of its change and its events. */
export const COMMIT_SPAN = "commit";
export const COMMIT_SPAN_OPTIONS = { attributes: { "db.system": "postgresql" } } as const;

/** The longest a command may hold its transaction: generating a sandbox order may seed a whole catalog first. */
export const LONGEST_COMMAND_MS = 15_000;

/**
 * Runs a write: its change, its outbox events and the read of its result, with `fn`'s one transaction client,
 * so what the caller answers is what committed. Inside a transaction the caller opened (an idempotent request,
 * whose record must commit with the change) it joins that one; otherwise it opens its own. The events it emits
 * reach the request's receipt only once they committed: a transaction of its own reports them after its commit,
 * the caller's fails the whole request if it rolls back (so no answer carries them).
 */
export async function runCommand<T>(ctx: Context, fn: (tx: Tx) => Promise<T>, opts: { timeout?: number } = {}): Promise<T> {
  if (ctx.transaction) {
    collectEvents(ctx.transaction, ctx.receipt);
    return fn(ctx.transaction);
  }
  const committed = new EventReceipt();
  // Traced, the transaction is a span up to its commit: its events store that span's traceparent (the outbox).
  const result = await tracer.trace(COMMIT_SPAN, COMMIT_SPAN_OPTIONS, async (span) => {
    const done = await ctx.services.db.$transaction((tx) => {
      collectEvents(tx, committed);
      return fn(tx);
    }, opts);
    if (committed.events.length) span.setAttributes({ "events.count": committed.events.length, "events.ids": committed.events.map((e) => e.id).join(",") });
    return done;
  });
  ctx.receipt.add(committed.events);
  return result;
}

/** Whether any root field of the document's operation is a mutation that calls out over the network. */
export function operationCallsOut(schema: GraphQLSchema, document: DocumentNode): boolean {
  const mutation = schema.getMutationType();
  if (!mutation) return false;
  const fields = mutation.getFields();
  return document.definitions.some(
    (d) =>
      d.kind === "OperationDefinition" &&
      d.operation === "mutation" &&
      d.selectionSet.selections.some((s) => s.kind === "Field" && fields[s.name.value]?.extensions.callsOut === true),
  );
}
