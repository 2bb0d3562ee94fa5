/**
 * The one uuid rule: 8-4-4-4-12 hex digits, either case. PostgreSQL's uuid type would take more spellings
 * (braces, no hyphens), but an id a client sends must look like the ids the API returns, and a malformed one
 * must be refused (or match nothing) before a query casts it to uuid and fails.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: string): boolean => UUID.test(value);
