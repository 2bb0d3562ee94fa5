import type { TestApp } from "../../helpers/app.js";
import type { Exchange } from "./validator.js";

/** One raw HTTP exchange with the test server, in the shape the ContractValidator checks. */
export async function exchange(
  app: TestApp,
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Exchange & { json: Record<string, unknown> | null }> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers["content-type"] ??= "application/json";
  const res = await fetch(`${app.baseUrl}${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  const body = await res.text();
  let json: Record<string, unknown> | null = null;
  try {
    json = body ? (JSON.parse(body) as Record<string, unknown>) : null;
  } catch {
    json = null;
  }
  return { method, path: new URL(path, app.baseUrl).pathname, status: res.status, headers: Object.fromEntries(res.headers), body, json };
}
