import type { Principal, PartnerPrincipal } from "../auth/principal.js";
import type { Services } from "../services.js";
import type { AdminRole, Db, Tx } from "../db/prisma.js";
import type { Scope } from "../auth/scopes.js";
import { ApiError } from "../errors.js";
import { waitInline, type WaitOutside } from "../outside.js";
import { EventReceipt } from "../events/receipt.js";
import type { ApiVersion } from "../versions.js";

export interface Context {
  services: Services;
  /**
   * Where resolvers read and write: the request's transaction when the whole operation runs in one, a read replica's
   * client for a read routed to one (see ReadRouter), else the primary's pool.
   */
  db: Tx;
  /**
   * The client for reads outside a transaction: a read replica's for a read routed to one (see ReadRouter), else the
   * primary's. Pothos loads relations through it when there is no transaction.
   */
  reader: Db;
  /**
   * The transaction the whole operation runs in, opened by its caller (an idempotent REST write, whose record
   * commits with it); null when each command opens its own (see runCommand).
   */
  transaction: Tx | null;
  principal: Principal;
  requestId: string;
  /** Wraps what waits on something outside our database, so the request holds no admission slot meanwhile. */
  waitOutside: WaitOutside;
  /** The events the request's commands committed (filled by runCommand), which a REST write answers with. */
  receipt: EventReceipt;
  /** The API version a REST request is answered in (its Api-Version header, else its Application's pin); unset for GraphQL. */
  answerVersion?: ApiVersion;
}

/** Contexts of REST requests whose router checked the operation's input before running it (its field's `input`). */
const checkedByRouter = new WeakSet<object>();

/** Says the router checked the input of the operation this context runs, so its root field does not check again. */
export const markInputChecked = (ctx: Context): void => {
  checkedByRouter.add(ctx);
};

export const inputChecked = (ctx: object): boolean => checkedByRouter.has(ctx);

/** Builds a request context; tests call it directly, without HTTP. */
export function createContext(
  services: Services,
  principal: Principal,
  requestId: string,
  transaction: Tx | null = null,
  waitOutside: WaitOutside = waitInline,
  /** The client a read runs on (ReadRouter.readDb); default the primary's. */
  reader: Db = services.db,
): Context {
  return { services, db: transaction ?? reader, reader, transaction, principal, requestId, waitOutside, receipt: new EventReceipt() };
}

/**
 * The tenant of the request. Every partner query starts here (the one place a store id comes from), so a
 * resolver cannot read another store's rows by forgetting a filter: it has no other store id to use.
 */
export function tenantOf(ctx: Context): PartnerPrincipal {
  if (ctx.principal.kind !== "partner") {
    throw new ApiError("FORBIDDEN", "This field is answered for a partner token: it reads the token's own store.");
  }
  return ctx.principal;
}

/**
 * Who may read a field nested in Store (Store.orders, Store.customers, ...): a partner token with the scope of
 * the matching root field, or an administrator of any role.
 */
export const STORE_READ = (scope: Scope) => ({ scope, adminRole: "VIEWER" }) as const satisfies { scope: Scope; adminRole: AdminRole };

/**
 * The store a field nested in Store reads: its parent's. A partner token only ever gets its own Store (the `store`
 * field answers no other); this check keeps that true if another path to a Store object is ever added.
 */
export function storeIdOf(ctx: Context, store: { id: string }): string {
  if (ctx.principal.kind === "partner" && ctx.principal.storeId !== store.id) {
    throw new ApiError("NOT_FOUND", `No store with id ${store.id} is visible to this token. A partner token reads its own store only.`);
  }
  return store.id;
}
