import { invalidRequest } from "../errors.js";
import { isUuid } from "../uuid.js";

/** Keyset pagination: the cursor is the last item's id; the page never uses OFFSET. */

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export interface SortKey<Field extends string = string> {
  field: Field;
  direction: "asc" | "desc";
}

export interface Pagination {
  hasMore: boolean;
  cursor: string | null;
  nextCursor: string | null;
}

export interface Page<T> {
  data: T[];
  pagination: Pagination;
}

/** One comparison of a keyset condition: a sort column against the cursor row's value of it. */
export interface KeysetTerm<Field extends string = string> {
  field: Field;
  op: "=" | ">" | "<" | ">=" | "<=";
}

/**
 * The one keyset rule, for Prisma (`afterCursor`) and SQL (orders' page) alike: rows strictly after the cursor row in
 * `sort` order are `a >= x AND ((a > x) OR (a = x AND b > y) OR ...)`, the expanded form of a row comparison. The
 * leading `a >= x` is implied by the OR, but only it can bound the index scan: without it PostgreSQL walks the sort
 * index from the first row of the tenant and filters, so a page 500,000 rows deep read 500,000 index entries.
 */
export function keyset<Field extends string>(sort: SortKey<Field>[]): { lead: KeysetTerm<Field>; or: KeysetTerm<Field>[][] } {
  const past = (k: SortKey<Field>): KeysetTerm<Field> => ({ field: k.field, op: k.direction === "asc" ? ">" : "<" });
  const [first] = sort;
  return {
    lead: { field: first.field, op: first.direction === "asc" ? ">=" : "<=" },
    or: sort.map((key, i) => [...sort.slice(0, i).map((k): KeysetTerm<Field> => ({ field: k.field, op: "=" })), past(key)]),
  };
}

const PRISMA_OPS = { "=": "equals", ">": "gt", "<": "lt", ">=": "gte", "<=": "lte" } as const;

/** The keyset condition after `cursorRow` as a Prisma `where`. */
export function afterCursor(sort: SortKey[], cursorRow: Record<string, unknown>): Record<string, unknown> {
  const term = (t: KeysetTerm) => ({ [t.field]: { [PRISMA_OPS[t.op]]: cursorRow[t.field] } });
  const { lead, or } = keyset(sort);
  // A branch's columns differ, so its terms merge into one object, as Prisma writes an AND of fields.
  return { AND: [term(lead), { OR: or.map((terms) => Object.assign({}, ...terms.map(term))) }] };
}

export function orderByOf(sort: SortKey[]): Record<string, "asc" | "desc">[] {
  return sort.map((k) => ({ [k.field]: k.direction }));
}

/** A cursor the list did not hand out (unknown, or another store's): 400 naming `cursor`. */
export function invalidCursor() {
  return invalidRequest("The cursor is not one this list returned. Pass pagination.nextCursor from the previous page unchanged.", [
    { field: "cursor", code: "INVALID_CURSOR", message: "`cursor` is not one this list returned" },
  ]);
}

/**
 * Fetches one page; the caller has checked `limit` with its list's input (1 to MAX_PAGE_SIZE). `findCursor` must look the cursor up within the caller's tenant (a cursor from another
 * store is simply unknown); `findMany` receives the keyset condition and `take` = limit + 1 to learn hasMore.
 */
export async function paginate<T extends { id: string }>(opts: {
  limit: number | null | undefined;
  cursor: string | null | undefined;
  sort: SortKey[];
  findCursor: (id: string) => Promise<Record<string, unknown> | null>;
  /** `after` is the keyset condition as a Prisma `where`, built from the cursor's row. */
  findMany: (args: { after: Record<string, unknown> | undefined; orderBy: Record<string, "asc" | "desc">[]; take: number }) => Promise<T[]>;
  /**
   * A page after a cursor whose row the page's own statement reads (within the caller's tenant), used instead of
   * `findCursor` + `findMany` whenever a cursor is given: a deep page is then one round trip, not two. An unknown
   * cursor matches no row, so only an empty page looks the cursor up, to tell it from the end of the list.
   */
  findManyAfterId?: (args: { cursorId: string; take: number }) => Promise<T[]>;
}): Promise<Page<T>> {
  const limit = opts.limit ?? DEFAULT_PAGE_SIZE;
  const take = limit + 1;
  if (!opts.cursor) return pageOf(await opts.findMany({ after: undefined, orderBy: orderByOf(opts.sort), take }), limit);
  const cursorId = opts.cursor;
  if (!isUuid(cursorId)) throw invalidCursor();
  if (opts.findManyAfterId) {
    const rows = await opts.findManyAfterId({ cursorId, take });
    if (rows.length === 0 && !(await opts.findCursor(cursorId))) throw invalidCursor();
    return pageOf(rows, limit);
  }
  const row = await opts.findCursor(cursorId);
  if (!row) throw invalidCursor();
  return pageOf(await opts.findMany({ after: afterCursor(opts.sort, row), orderBy: orderByOf(opts.sort), take }), limit);
}

/** The page of `limit` rows from a fetch of `limit + 1`: the extra row only says that more follow. */
function pageOf<T extends { id: string }>(rows: T[], limit: number): Page<T> {
  const hasMore = rows.length > limit;
  const data = hasMore ? rows.slice(0, limit) : rows;
  const last = hasMore ? data[data.length - 1].id : null;
  return { data, pagination: { hasMore, cursor: last, nextCursor: last } };
}
