import { getOperationAST } from "graphql";
import type { Plugin } from "graphql-yoga";
import type { Context } from "../platform/schema/context.js";
import type { ReadRouter } from "../platform/db/replicas.js";

/**
 * A query runs where the caller's reads go (a replica that has its writes, else the primary); a mutation runs on the
 * primary and, once it has committed and before its answer leaves, marks the caller's write so that its next reads
 * on any process see it. Subscriptions stay on the primary: they wake on the primary's notifications and read at
 * once what was just committed, which a replica may not have replayed yet.
 */
export function useReadReplicas(reads: ReadRouter): Plugin<Context> {
  if (!reads.enabled) return {};
  return {
    onExecute: ({ args, executeFn, setExecuteFn }) => {
      const operation = getOperationAST(args.document, args.operationName)?.operation;
      if (operation === "query") {
        setExecuteFn(async (a) => {
          const ctx: Context = a.contextValue;
          ctx.reader = (await reads.readDb(ctx.principal)) ?? ctx.services.db;
          ctx.db = ctx.reader;
          return executeFn(a);
        });
      } else if (operation === "mutation") {
        setExecuteFn(async (a) => {
          const ctx: Context = a.contextValue;
          try {
            return await executeFn(a);
          } finally {
            await reads.wrote(ctx.principal);
          }
        });
      }
    },
  };
}
