// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the samples are source text in other languages, whose ${…} is theirs.
import { WEBHOOK_URL } from "../platform/examples.js";

/**
 * Code samples for the main flows, as Redoc's `x-codeSamples` on their operations: curl, JavaScript (fetch, Node
 * 18+ as an ES module) and Python (requests). Each reads BASE (the API address), TOKEN and the ids it needs from
 * the environment. test/contract/samples.test.ts runs every one against a real server and checks the exchange.
 */

/** Redoc's x-codeSamples entry. */
export interface CodeSample {
  lang: "curl" | "JavaScript" | "Python";
  label: string;
  source: string;
}

const code = (...lines: string[]) => `${lines.join("\n")}\n`;

const samples = (curl: string, javascript: string, python: string): CodeSample[] => [
  { lang: "curl", label: "curl", source: curl },
  { lang: "JavaScript", label: "JavaScript (fetch)", source: javascript },
  { lang: "Python", label: "Python (requests)", source: python },
];

const JS_AUTH = "const headers = { Authorization: `Bearer ${process.env.TOKEN}` };";
const JS_CHECK = "if (!res.ok) throw new Error(`HTTP ${res.status}: ${await res.text()}`);";
/** The imports a Python sample starts with (the one that also needs uuid lists its own). */
const PY_IMPORTS = ["import os", "", "import requests", ""];
const PY_AUTH = 'headers = {"Authorization": f"Bearer {os.environ[\'TOKEN\']}"}';

export const CODE_SAMPLES: Record<string, CodeSample[]> = {
  createToken: samples(
    code(
      "# HTTP Basic client authentication and a form body, as OAuth 2.0 clients send them;",
      "# a JSON body with client_id and client_secret works too.",
      'curl -s -X POST "$BASE/partner/auth/token" \\',
      '  -u "$CLIENT_ID:$CLIENT_SECRET" \\',
      "  -d grant_type=client_credentials",
    ),
    code(
      "const res = await fetch(`${process.env.BASE}/partner/auth/token`, {",
      '  method: "POST",',
      '  headers: { "Content-Type": "application/json" },',
      "  body: JSON.stringify({",
      '    grant_type: "client_credentials",',
      "    client_id: process.env.CLIENT_ID,",
      "    client_secret: process.env.CLIENT_SECRET,",
      "  }),",
      "});",
      JS_CHECK,
      "const { access_token, expires_in, tenant_id } = await res.json();",
      "// Reuse the token; request a new one about 5 minutes before expires_in (seconds) runs out.",
      "console.log(tenant_id, expires_in, access_token);",
    ),
    code(
      ...PY_IMPORTS,
      "res = requests.post(",
      "    f\"{os.environ['BASE']}/partner/auth/token\",",
      "    json={",
      '        "grant_type": "client_credentials",',
      '        "client_id": os.environ["CLIENT_ID"],',
      '        "client_secret": os.environ["CLIENT_SECRET"],',
      "    },",
      "    timeout=10,",
      ")",
      "res.raise_for_status()",
      "token = res.json()",
      "# Reuse the token; request a new one about 5 minutes before expires_in (seconds) runs out.",
      'print(token["tenant_id"], token["expires_in"], token["access_token"])',
    ),
  ),

  listOrders: samples(
    code(
      "# Orders changed since a point in time, 50 a page; pass pagination.nextCursor back as cursor.",
      'curl -s "$BASE/public/v1/orders?updated_since=2025-03-01T00:00:00.000Z&limit=50" \\',
      '  -H "Authorization: Bearer $TOKEN"',
    ),
    code(
      "// Every order changed since a point in time (reconciliation), page by page.",
      JS_AUTH,
      "let cursor = null;",
      "do {",
      '  const query = new URLSearchParams({ updated_since: "2025-03-01T00:00:00.000Z", limit: "50" });',
      '  if (cursor) query.set("cursor", cursor);',
      "  const res = await fetch(`${process.env.BASE}/public/v1/orders?${query}`, { headers });",
      `  ${JS_CHECK}`,
      "  const page = await res.json();",
      "  for (const order of page.data) console.log(order.orderNumber, order.status, order.total);",
      "  cursor = page.pagination.nextCursor;",
      "} while (cursor);",
    ),
    code(
      ...PY_IMPORTS,
      "# Every order changed since a point in time (reconciliation), page by page.",
      PY_AUTH,
      'params = {"updated_since": "2025-03-01T00:00:00.000Z", "limit": 50}',
      "while True:",
      "    res = requests.get(f\"{os.environ['BASE']}/public/v1/orders\", params=params, headers=headers, timeout=10)",
      "    res.raise_for_status()",
      "    page = res.json()",
      '    for order in page["data"]:',
      '        print(order["orderNumber"], order["status"], order["total"])',
      '    if not page["pagination"]["hasMore"]:',
      "        break",
      '    params["cursor"] = page["pagination"]["nextCursor"]',
    ),
  ),

  getOrderById: samples(
    code('curl -s "$BASE/public/v1/orders/$ORDER_ID" \\', '  -H "Authorization: Bearer $TOKEN"'),
    code(
      JS_AUTH,
      "const res = await fetch(`${process.env.BASE}/public/v1/orders/${process.env.ORDER_ID}`, { headers });",
      "// 404 NOT_FOUND: no such order in the token's store.",
      JS_CHECK,
      "const order = await res.json();",
      "console.log(order.orderNumber, order.status, order.total, order.statusHistory);",
    ),
    code(
      ...PY_IMPORTS,
      PY_AUTH,
      "res = requests.get(f\"{os.environ['BASE']}/public/v1/orders/{os.environ['ORDER_ID']}\", headers=headers, timeout=10)",
      "res.raise_for_status()  # 404 NOT_FOUND: no such order in the token's store",
      "order = res.json()",
      'print(order["orderNumber"], order["status"], order["total"], order["statusHistory"])',
    ),
  ),

  updateOrderStatus: samples(
    code(
      "# One key per change: send the same key again when retrying this change.",
      "IDEMPOTENCY_KEY=$(node -p 'crypto.randomUUID()')",
      'curl -s -X PATCH "$BASE/public/v1/orders/$ORDER_ID/status" \\',
      '  -H "Authorization: Bearer $TOKEN" \\',
      '  -H "Idempotency-Key: $IDEMPOTENCY_KEY" \\',
      "  -H 'Content-Type: application/json' \\",
      `  -d '{"status": "CONFIRMED"}'`,
    ),
    code(
      "// One key per change: send the same key again when retrying this change.",
      "const idempotencyKey = crypto.randomUUID();",
      "const res = await fetch(`${process.env.BASE}/public/v1/orders/${process.env.ORDER_ID}/status`, {",
      '  method: "PATCH",',
      "  headers: {",
      "    Authorization: `Bearer ${process.env.TOKEN}`,",
      '    "Idempotency-Key": idempotencyKey,',
      '    "Content-Type": "application/json",',
      "  },",
      '  body: JSON.stringify({ status: "CONFIRMED" }),',
      "});",
      "// 422 UNPROCESSABLE_ENTITY: the lifecycle does not allow the move (errors[0].from / .to).",
      JS_CHECK,
      "const order = await res.json();",
      "console.log(order.status, order.version);",
    ),
    code(
      "import os",
      "import uuid",
      "",
      "import requests",
      "",
      "# One key per change: send the same key again when retrying this change.",
      "idempotency_key = str(uuid.uuid4())",
      "res = requests.patch(",
      "    f\"{os.environ['BASE']}/public/v1/orders/{os.environ['ORDER_ID']}/status\",",
      "    headers={",
      '        "Authorization": f"Bearer {os.environ[\'TOKEN\']}",',
      '        "Idempotency-Key": idempotency_key,',
      "    },",
      '    json={"status": "CONFIRMED"},',
      "    timeout=10,",
      ")",
      "res.raise_for_status()  # 422 UNPROCESSABLE_ENTITY: the lifecycle does not allow the move",
      "order = res.json()",
      'print(order["status"], order["version"])',
    ),
  ),

  createWebhookEndpoint: samples(
    code(
      'curl -s -X POST "$BASE/public/v1/webhooks" \\',
      '  -H "Authorization: Bearer $TOKEN" \\',
      "  -H 'Content-Type: application/json' \\",
      `  -d '{"url": "${WEBHOOK_URL}", "events": ["order.created", "order.cancelled"]}'`,
      "# Store the secret from the answer now: it is shown only once.",
    ),
    code(
      "const res = await fetch(`${process.env.BASE}/public/v1/webhooks`, {",
      '  method: "POST",',
      '  headers: { Authorization: `Bearer ${process.env.TOKEN}`, "Content-Type": "application/json" },',
      `  body: JSON.stringify({ url: "${WEBHOOK_URL}", events: ["order.created", "order.cancelled"] }),`,
      "});",
      JS_CHECK,
      "const endpoint = await res.json();",
      "// Store endpoint.secret now: it is shown only once, and verifies every delivery's X-Service-Signature.",
      "console.log(endpoint.id, endpoint.secretPrefix);",
    ),
    code(
      ...PY_IMPORTS,
      PY_AUTH,
      "res = requests.post(",
      "    f\"{os.environ['BASE']}/public/v1/webhooks\",",
      "    headers=headers,",
      `    json={"url": "${WEBHOOK_URL}", "events": ["order.created", "order.cancelled"]},`,
      "    timeout=10,",
      ")",
      "res.raise_for_status()",
      "endpoint = res.json()",
      "# Store endpoint['secret'] now: it is shown only once, and verifies every delivery's X-Service-Signature.",
      'print(endpoint["id"], endpoint["secretPrefix"])',
    ),
  ),

  createSandboxOrder: samples(
    code(
      "# SANDBOX credentials only; fires the order's webhook events like a real order.",
      'curl -s -X POST "$BASE/public/v1/sandbox/orders" \\',
      '  -H "Authorization: Bearer $TOKEN" \\',
      "  -H 'Content-Type: application/json' \\",
      `  -d '{"scenario": "delivery"}'`,
    ),
    code(
      "// SANDBOX credentials only; fires the order's webhook events like a real order.",
      "const res = await fetch(`${process.env.BASE}/public/v1/sandbox/orders`, {",
      '  method: "POST",',
      '  headers: { Authorization: `Bearer ${process.env.TOKEN}`, "Content-Type": "application/json" },',
      '  body: JSON.stringify({ scenario: "delivery" }),',
      "});",
      JS_CHECK,
      "const order = await res.json();",
      "console.log(order.id, order.orderNumber, order.total);",
    ),
    code(
      ...PY_IMPORTS,
      "# SANDBOX credentials only; fires the order's webhook events like a real order.",
      PY_AUTH,
      "res = requests.post(",
      "    f\"{os.environ['BASE']}/public/v1/sandbox/orders\",",
      "    headers=headers,",
      '    json={"scenario": "delivery"},',
      "    timeout=10,",
      ")",
      "res.raise_for_status()",
      "order = res.json()",
      'print(order["id"], order["orderNumber"], order["total"])',
    ),
  ),

  listEvents: samples(
    code(
      "# The store's events after the last sequence you processed (0 the first time).",
      'curl -s "$BASE/public/v1/events?after=${AFTER:-0}&limit=100" \\',
      '  -H "Authorization: Bearer $TOKEN"',
    ),
    code(
      "// Reads the store's events in commit order from the last sequence processed; keep `after` between runs.",
      JS_AUTH,
      'let after = process.env.AFTER ?? "0";',
      "for (;;) {",
      "  const res = await fetch(`${process.env.BASE}/public/v1/events?after=${after}&limit=100`, { headers });",
      `  ${JS_CHECK}`,
      "  const page = await res.json();",
      "  for (const event of page.data) console.log(event.sequence, event.eventType, event.data);",
      "  after = page.pagination.nextCursor;",
      "  if (!page.pagination.hasMore) break;",
      "}",
    ),
    code(
      ...PY_IMPORTS,
      "# Reads the store's events in commit order from the last sequence processed; keep `after` between runs.",
      PY_AUTH,
      'after = os.environ.get("AFTER", "0")',
      "while True:",
      "    res = requests.get(",
      "        f\"{os.environ['BASE']}/public/v1/events\",",
      '        params={"after": after, "limit": 100},',
      "        headers=headers,",
      "        timeout=10,",
      "    )",
      "    res.raise_for_status()",
      "    page = res.json()",
      '    for event in page["data"]:',
      '        print(event["sequence"], event["eventType"], event["data"])',
      '    after = page["pagination"]["nextCursor"]',
      '    if not page["pagination"]["hasMore"]:',
      "        break",
    ),
  ),
};
