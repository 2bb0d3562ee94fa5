import { ConfigError } from "../config.js";

/** Errors that mean "no database answers at this address, or it refuses us", not a fault of ours. */
const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  // PostgreSQL's: wrong password, no such role or pg_hba entry, no such database, still starting up.
  "28P01",
  "28000",
  "3D000",
  "57P03",
]);

/** DATABASE_URL without its password, to name the server in a message. */
function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = "";
    return parsed.toString();
  } catch {
    return "(unparseable)";
  }
}

/** The start-up error for a DATABASE_URL nothing answers at (or that refuses us), or null for any other error. */
export function unreachableDatabase(err: unknown, url: string, setting = "DATABASE_URL"): ConfigError | null {
  if (!(err instanceof Error) || !("code" in err) || !UNREACHABLE.has(String(err.code))) return null;
  // Node reports a refused "localhost" (tried over IPv6 and IPv4) as an AggregateError with a code but no message.
  return new ConfigError(
    `${setting}: cannot connect to ${withoutPassword(url)} (${err.message || String(err.code)}): check the address and credentials, and that PostgreSQL is running there.`,
  );
}
