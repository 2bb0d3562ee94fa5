import { createClient, NetworkError } from "graphql-sse";

/**
 * The portal's one client of the public API. Every call the portal makes goes through here, to a documented route:
 * the token endpoint and its revocation, the portal link's exchange, the OpenAPI document, the /public/v1 routes under
 * the token's scopes and rate limits, and the live stream of the store's events (`storeEvents` over Server-Sent Events
 * at /graphql). Writes to /public/v1 carry an Idempotency-Key. How a list pages (a JSON array with X-Next-Cursor today,
 * `{ data, pagination }` elsewhere and in later API versions) is read in one place, `pageOf`.
 */

export interface Violation {
  field: string;
  message: string;
}

/** An error as the API states it (RFC 9457), or as the portal states a failure to reach it. */
export interface Problem {
  title: string;
  detail: string;
  status: number;
  code?: string;
  traceId?: string;
  errors?: Violation[];
}

export class ApiProblem extends Error {
  constructor(readonly problem: Problem) {
    super(`${problem.title}: ${problem.detail}`);
  }
}

export type Environment = "SANDBOX" | "PRODUCTION";

export interface Session {
  token: string;
  tenantId: string;
  environment: Environment;
  scopes: string[];
  /** Epoch milliseconds. */
  expiresAt: number;
}

interface TokenResponse {
  access_token: string;
  expires_in: number;
  scope: string;
  tenant_id: string;
  environment: Environment;
}

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

export interface Store {
  id: string;
  name: string;
  slug: string;
  phone: string | null;
}

export interface EndpointStats {
  delivered: number;
  failed: number;
  pending: number;
  successRate: number | null;
}

export interface Endpoint {
  id: string;
  url: string;
  events: string[];
  status: "ACTIVE" | "INACTIVE" | "FAILED";
  secretPrefix: string;
  lastSuccessAt: string | null;
  failureCount: number;
  disabledReason: string | null;
  /** http, or the message broker the endpoint publishes to. */
  type: string;
  ordering: string | null;
  /** A broker endpoint's settings, credentials masked; null for http. */
  destination: Record<string, unknown> | null;
  deliveriesLast24h?: EndpointStats;
}

export interface CreatedEndpoint {
  id: string;
  url: string;
  events: string[];
  secret: string;
  secretPrefix: string;
}

export interface RotatedSecret {
  id: string;
  secret: string;
  secretPrefix: string;
  previousSecretExpiresAt: string;
}

export const DELIVERY_STATUSES = ["PENDING", "DELIVERED", "FAILED", "DEAD_LETTER"] as const;

export interface Delivery {
  id: string;
  eventId: string;
  eventType: string;
  status: (typeof DELIVERY_STATUSES)[number];
  httpStatus: number | null;
  attempts: number;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  lastError: string | null;
  requestDurationMs: number | null;
  endpointId: string;
  payload?: unknown;
}

export interface Attempt {
  attempt: number;
  trigger: string;
  startedAt: string;
  durationMs: number;
  httpStatus: number | null;
  error: string | null;
  requestHeaders: Record<string, string>;
  responseBody: string | null;
}

export interface StoreEvent {
  eventId: string;
  eventType: string;
  timestamp: string;
  sequence: number;
  data: unknown;
}

/** A bulk export of the store (extension to the contract); `url` downloads its file without a token until `expiresAt`. */
export interface Export {
  id: string;
  resource: string;
  status: string;
  objectCount: number | null;
  bytes: number | null;
  sequence: number | null;
  apiVersion: string;
  createdAt: string;
  completedAt: string | null;
  expiresAt: string | null;
  url: string | null;
  error: string | null;
}

export interface Order {
  id: string;
  orderNumber: number;
  status: string;
  total: number;
  notes?: string | null;
  customer: { name: string } | null;
}

/** The parts of the OpenAPI document the portal reads. */
export interface OpenApiDocument {
  info: { version: string };
  paths: Record<string, Record<string, OpenApiOperation>>;
  webhooks: Record<string, { post: OpenApiOperation }>;
  components: { schemas: Record<string, JsonSchema> };
}

export interface OpenApiOperation {
  description?: string;
  "x-required-scope"?: string;
  requestBody?: { content: Record<string, { schema?: JsonSchema; examples?: Record<string, { value: unknown }> }> };
}

export interface JsonSchema {
  $ref?: string;
  enum?: string[];
  properties?: Record<string, JsonSchema>;
  [keyword: string]: unknown;
}

const SESSION_KEY = "partner-portal-session";

let session: Session | null = storedSession();
/** Why the last session ended (an expired or revoked token), for the sign-in page. */
let endedBecause: Problem | null = null;
let apiVersion: string | null = null;
const listeners = new Set<() => void>();

/** The token lives in this tab's sessionStorage (never localStorage): a reload keeps it, closing the tab forgets it. */
function storedSession(): Session | null {
  const text = sessionStorage.getItem(SESSION_KEY);
  if (!text) return null;
  try {
    const stored: Session = JSON.parse(text);
    return stored.expiresAt > Date.now() ? stored : null;
  } catch {
    return null;
  }
}

function changed(): void {
  for (const listener of listeners) listener();
}

export function onSessionChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export const currentSession = (): Session | null => session;
export const sessionEndReason = (): Problem | null => endedBecause;
/** The Api-Version the API last answered with, when it sends one. */
export const lastApiVersion = (): string | null => apiVersion;

function start(token: TokenResponse): Session {
  session = {
    token: token.access_token,
    tenantId: token.tenant_id,
    environment: token.environment,
    scopes: token.scope.split(" ").filter(Boolean),
    expiresAt: Date.now() + token.expires_in * 1000,
  };
  endedBecause = null;
  sessionStorage.setItem(SESSION_KEY, JSON.stringify(session));
  changed();
  return session;
}

/** The session ends and the token is forgotten; `reason`, when the API refused the token, is for the sign-in page. */
function end(reason: Problem | null): void {
  session = null;
  endedBecause = reason;
  sessionStorage.removeItem(SESSION_KEY);
  changed();
}

/**
 * A random UUID v4 for Idempotency-Key. crypto.randomUUID exists only in secure contexts (https, localhost), and the
 * portal may be served over plain http on a private network; getRandomValues works everywhere.
 */
function uuid(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function parse(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return text;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The API's problem document. The token endpoints' OAuth errors carry `error` and `error_description` beside it, read
 * where a problem's `title` or `detail` is missing.
 */
function problemOf(status: number, body: unknown): Problem {
  if (isRecord(body) && (typeof body.title === "string" || typeof body.error === "string")) {
    const detail = typeof body.detail === "string" ? body.detail : body.error_description;
    return {
      title: typeof body.title === "string" ? body.title : String(body.error),
      detail: typeof detail === "string" ? detail : "",
      status,
      code: typeof body.code === "string" ? body.code : undefined,
      traceId: typeof body.traceId === "string" ? body.traceId : undefined,
      errors: Array.isArray(body.errors) ? body.errors.filter(isRecord).map((e) => ({ field: String(e.field), message: String(e.message) })) : undefined,
    };
  }
  return { title: `HTTP ${status}`, detail: typeof body === "string" ? body.slice(0, 500) : "The API answered without a problem document.", status };
}

interface Answer<T> {
  body: T;
  headers: Headers;
}

type Query = Record<string, string | number | undefined>;

function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== "") params.set(name, String(value));
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

const authorizationOf = (s: Session) => `Bearer ${s.token}`;

/** The Authorization header of a call made with the session's token. */
function bearer(): string {
  if (!session) throw new ApiProblem({ title: "Signed out", detail: "Sign in to continue.", status: 401 });
  return authorizationOf(session);
}

/**
 * Every call omits the browser's credentials (cookies, HTTP authentication it remembers): the portal proves who it is
 * with its token alone, and a browser never opens its sign-in dialog for a request made without them.
 */
async function request<T>(method: string, url: string, headers: Record<string, string>, body?: string): Promise<Answer<T>> {
  let res: Response;
  try {
    res = await fetch(url, { method, headers, body, credentials: "omit" });
  } catch {
    throw new ApiProblem({ title: "The API is unreachable", detail: "The request did not reach the service; check the connection and retry.", status: 0 });
  }
  apiVersion = res.headers.get("api-version") ?? apiVersion;
  const text = await res.text();
  if (!res.ok) throw new ApiProblem(problemOf(res.status, parse(text)));
  // The documented answer of the route called (the OpenAPI document is the contract); the portal reads what it shows.
  const answer: T = text ? JSON.parse(text) : undefined;
  return { body: answer, headers: res.headers };
}

/**
 * Why the API refuses the token itself, or null when it still takes it. Read from the feed, which any partner token
 * may read whatever its scopes, and which refuses only a token it no longer takes.
 */
async function tokenRefusal(authorization: string): Promise<Problem | null> {
  try {
    await request("GET", withQuery("/public/v1/events", { limit: 1 }), { accept: "application/json", authorization });
    return null;
  } catch (e) {
    return e instanceof ApiProblem && (e.problem.status === 401 || e.problem.code === "FORBIDDEN") ? e.problem : null;
  }
}

/**
 * The API refused a call made with the token. 401 says it no longer takes the token (expired, revoked); 403 FORBIDDEN
 * says so too for a revoked grant or a disabled Application, but also refuses single operations (resuming an endpoint
 * an administrator holds INACTIVE), so the feed is asked which. A refused token ends the session and the sign-in page
 * says why, unless another session has started meanwhile. INSUFFICIENT_SCOPE concerns one operation: the page shows it.
 */
async function refusedToken(problem: Problem, authorization: string): Promise<ApiProblem> {
  const refusal = problem.status === 401 ? problem : problem.code === "FORBIDDEN" ? await tokenRefusal(authorization) : null;
  if (refusal && session && authorization === authorizationOf(session)) end(refusal);
  return new ApiProblem(problem);
}

interface Call {
  /** A JSON body. */
  body?: unknown;
  /** A form body (application/x-www-form-urlencoded), as the OAuth endpoints take their parameters. */
  form?: Record<string, string>;
  query?: Query;
  /** Whether the call carries the session's token (default true). */
  signedIn?: boolean;
}

async function send<T>(method: string, path: string, opts: Call = {}): Promise<Answer<T>> {
  const headers: Record<string, string> = { accept: "application/json" };
  const signedIn = opts.signedIn ?? true;
  if (signedIn) headers.authorization = bearer();
  if (method !== "GET" && path.startsWith("/public/v1/")) headers["idempotency-key"] = uuid();
  let body: string | undefined;
  if (opts.form) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(opts.form).toString();
  } else if (opts.body !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(opts.body);
  }
  try {
    return await request<T>(method, withQuery(path, opts.query), headers, body);
  } catch (e) {
    throw signedIn && e instanceof ApiProblem ? await refusedToken(e.problem, headers.authorization) : e;
  }
}

/** One page of a list, whichever way the route pages: an array with X-Next-Cursor, or `{ data, pagination }`. */
function pageOf<T>(answer: Answer<T[] | { data: T[]; pagination: { hasMore: boolean; nextCursor: string | null } }>): Page<T> {
  const { body, headers } = answer;
  if (Array.isArray(body)) return { data: body, nextCursor: headers.get("x-next-cursor") };
  return { data: body.data, nextCursor: body.pagination.hasMore ? body.pagination.nextCursor : null };
}

/**
 * The credentials go in the form body (client_secret_post), never as HTTP Basic: a wrong secret then answers 401
 * without a Basic challenge, and the page shows the API's reason instead of the browser asking for a password.
 */
export async function signInWithCredentials(clientId: string, clientSecret: string, tenantId: string): Promise<Session> {
  const form = { grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret, ...(tenantId ? { tenant_id: tenantId } : {}) };
  return start((await send<TokenResponse>("POST", "/partner/auth/token", { form, signedIn: false })).body);
}

export async function signInWithLink(linkSecret: string): Promise<Session> {
  return start((await send<TokenResponse>("POST", "/partner/auth/portal-link", { form: { link_secret: linkSecret }, signedIn: false })).body);
}

/**
 * "Sign out": the API revokes the token (authenticated by the token itself), then the page forgets it. A revocation
 * that fails (no answer) does not keep the user signed in: the token is forgotten anyway and lapses at its expiry.
 */
export async function signOut(): Promise<void> {
  if (!session) return;
  try {
    await send<unknown>("POST", "/partner/auth/revoke", { form: { token: session.token } });
  } catch {
    // Forgotten below all the same.
  }
  end(null);
}

let openApi: Promise<OpenApiDocument> | null = null;

/** The published document, read once per page load (event catalog, sandbox choices, API version). */
export function openApiDocument(): Promise<OpenApiDocument> {
  openApi ??= send<OpenApiDocument>("GET", "/public/v1/openapi.json", { signedIn: false }).then((a) => a.body);
  openApi.catch(() => {
    openApi = null;
  });
  return openApi;
}

const STORE_EVENTS = `subscription PortalLiveTail($types: [String!], $after: String) {
  storeEvents(types: $types, after: $after) { eventId eventType timestamp sequence data }
}`;

export interface Follower {
  /** The stream is open: events from now on arrive as they commit. */
  connected: () => void;
  event: (event: StoreEvent) => void;
}

/** The error a stream ended with, as a problem with the status REST would answer (its extensions carry both). */
function endedWith(error: { message: string; extensions?: Readonly<Record<string, unknown>> }): Problem {
  const extensions = error.extensions ?? {};
  return problemOf(typeof extensions.status === "number" ? extensions.status : 500, { ...extensions, title: "The live stream ended", detail: error.message });
}

/** Why a stream could not open (the API's answer, when it gave one) or dropped (status 0). */
async function streamFailure(error: unknown, authorization: string): Promise<ApiProblem> {
  if (error instanceof ApiProblem) return error;
  if (error instanceof NetworkError && error.response instanceof Response) {
    return refusedToken(problemOf(error.response.status, parse(await error.response.text())), authorization);
  }
  const detail = error instanceof Error ? error.message : String(error);
  return new ApiProblem({ title: "The live stream dropped", detail, status: 0 });
}

/**
 * Follows the store's events after the sequence `after`: one connection to the subscription storeEvents over
 * Server-Sent Events. Resolves when the stream ends by itself or `signal` aborts it; rejects with the problem that
 * refused or ended it, whose status says whether trying again may help.
 */
function followEvents(types: string[], after: string | undefined, follower: Follower, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const authorization = bearer();
    /**
     * graphql-sse's client reads the live stream with fetch and a streaming body: EventSource can neither POST nor
     * send Authorization. It never retries on its own, since each connection must start from a new `after`: the
     * caller catches up from the feed first.
     */
    const live = createClient({ url: "/graphql", headers: { authorization }, credentials: "omit", retryAttempts: 0 });
    let ended: Problem | null = null;
    // The documented result of the subscription (schema/schema.graphql); the portal reads what it shows.
    const stop = live.subscribe<{ storeEvents: StoreEvent }>(
      { query: STORE_EVENTS, variables: { types: types.length > 0 ? types : null, after: after ?? null } },
      {
        next: (result) => {
          // Results already read when the caller stopped following belong to nobody.
          if (signal.aborted) return;
          const [error] = result.errors ?? [];
          if (error) ended = endedWith(error);
          else if (result.data) follower.event(result.data.storeEvents);
        },
        error: (error) => void streamFailure(error, authorization).then(reject, reject),
        complete: () => (ended ? void refusedToken(ended, authorization).then(reject) : resolve()),
      },
      {
        connected: () => {
          if (!signal.aborted) follower.connected();
        },
      },
    );
    signal.addEventListener("abort", stop, { once: true });
  });
}

export const api = {
  store: async () => (await send<Store>("GET", "/public/v1/store")).body,

  endpoints: async (cursor?: string) => pageOf(await send<Endpoint[]>("GET", "/public/v1/webhooks", { query: { cursor } })),
  endpoint: async (id: string) => (await send<Endpoint>("GET", `/public/v1/webhooks/${encodeURIComponent(id)}`)).body,
  createEndpoint: async (url: string, events: string[]) => (await send<CreatedEndpoint>("POST", "/public/v1/webhooks", { body: { url, events } })).body,
  updateEndpoint: async (id: string, change: { url?: string; events?: string[]; status?: "ACTIVE" | "INACTIVE" }) =>
    (await send<Endpoint>("PATCH", `/public/v1/webhooks/${encodeURIComponent(id)}`, { body: change })).body,
  rotateSecret: async (id: string) => (await send<RotatedSecret>("POST", `/public/v1/webhooks/${encodeURIComponent(id)}/rotate-secret`)).body,
  testEndpoint: async (id: string) => (await send<Delivery>("POST", `/public/v1/webhooks/${encodeURIComponent(id)}/test`)).body,
  recover: async (id: string, since: string, until?: string) =>
    (await send<{ count: number; hasMore?: boolean }>("POST", `/public/v1/webhooks/${encodeURIComponent(id)}/recover`, { body: { since, until } })).body,

  deliveries: async (filter: { status?: string; eventType?: string; endpointId?: string }, cursor?: string) =>
    pageOf(await send<Delivery[]>("GET", "/public/v1/webhooks/deliveries", { query: { ...filter, cursor, limit: 20 } })),
  delivery: async (id: string) => (await send<Delivery>("GET", `/public/v1/webhooks/deliveries/${encodeURIComponent(id)}`)).body,
  attempts: async (id: string) => (await send<{ data: Attempt[] }>("GET", `/public/v1/webhooks/deliveries/${encodeURIComponent(id)}/attempts`)).body.data,
  replay: async (id: string) => (await send<Delivery>("POST", `/public/v1/webhooks/deliveries/${encodeURIComponent(id)}/replay`)).body,

  /** The feed, oldest first after `after`; its nextCursor is never null, so a reader tails by passing it back. */
  events: async (types: string[], after?: string, limit = 20) => {
    const { body } = await send<{ data: StoreEvent[]; pagination: { hasMore: boolean; nextCursor: string } }>("GET", "/public/v1/events", {
      query: { types: types.join(","), after, limit },
    });
    return { data: body.data, hasMore: body.pagination.hasMore, cursor: body.pagination.nextCursor };
  },
  followEvents,

  exports: async (cursor?: string) =>
    pageOf(await send<{ data: Export[]; pagination: { hasMore: boolean; nextCursor: string | null } }>("GET", "/public/v1/exports", { query: { cursor } })),
  createExport: async (resource: string) => (await send<Export>("POST", "/public/v1/exports", { body: { resource } })).body,

  seed: async () => (await send<{ categories: number; products: number; customers: number }>("POST", "/public/v1/sandbox/seed")).body,
  createSandboxOrder: async (scenario: string, notes: string) =>
    (await send<Order>("POST", "/public/v1/sandbox/orders", { body: { scenario, ...(notes ? { overrides: { notes } } : {}) } })).body,
  fireEvent: async (type: string) => (await send<StoreEvent | Record<string, unknown>>("POST", "/public/v1/sandbox/events", { body: { type } })).body,
};
