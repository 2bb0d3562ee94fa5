// Draws one trace as a waterfall SVG (docs/images/trace.svg) from the spans test/platform/tracing.test.ts collected:
//   TRACE_SPANS_OUT=/tmp/trace.json npx vitest run test/platform/tracing.test.ts && node scripts/trace-svg.mjs /tmp/trace.json docs/images/trace.svg
import { readFileSync, writeFileSync } from "node:fs";

const [input, output] = process.argv.slice(2);
const spans = JSON.parse(readFileSync(input, "utf8")).map((s) => ({ ...s, start: BigInt(s.startNs), end: BigInt(s.endNs) }));
const ids = new Set(spans.map((s) => s.spanId));
const children = new Map();
for (const s of spans) {
  const parent = ids.has(s.parentSpanId) ? s.parentSpanId : "";
  children.set(parent, [...(children.get(parent) ?? []), s]);
}
const rows = [];
const walk = (parent, depth) => {
  for (const s of (children.get(parent) ?? []).sort((a, b) => (a.start < b.start ? -1 : 1))) {
    rows.push({ s, depth });
    walk(s.spanId, depth + 1);
  }
};
walk("", 0);
const t0 = spans.reduce((m, s) => (s.start < m ? s.start : m), spans[0].start);
const t1 = spans.reduce((m, s) => (s.end > m ? s.end : m), spans[0].end);
const ms = (ns) => Number(ns) / 1e6;
const total = ms(t1 - t0);
const [W, label, rowH] = [1100, 400, 22];
const scale = (W - label - 70) / total;
const kinds = { 1: "#8e7cc3", 2: "#3d85c6", 3: "#e69138", 5: "#6aa84f" };
const esc = (t) => t.replace(/&/g, "&amp;").replace(/</g, "&lt;");
/** A statement by its prepared name (rate_limit_take) or first words; a request by its path and status. */
function short(s) {
  const a = s.attributes;
  if (s.name.startsWith("pg.query"))
    return `SQL ${a["db.postgresql.plan"] && !String(a["db.postgresql.plan"]).startsWith("prisma_") ? a["db.postgresql.plan"] : String(a["db.query.text"]).trim().split(/\s+/).slice(0, 4).join(" ")}`;
  if (a["url.full"]) return `${s.name} ${new URL(String(a["url.full"])).pathname} → ${a["http.response.status_code"]}`;
  return s.name;
}
let body = "";
rows.forEach(({ s, depth }, i) => {
  const y = 40 + i * rowH;
  const x = label + ms(s.start - t0) * scale;
  const w = Math.max(2, ms(s.end - s.start) * scale);
  body += `<text x="${8 + depth * 14}" y="${y + 15}" font-size="12">${esc(short(s).slice(0, 52))} <tspan fill="#888">${s.serviceName}</tspan></text>`;
  body += `<rect x="${x.toFixed(1)}" y="${y + 4}" width="${w.toFixed(1)}" height="14" rx="2" fill="${kinds[s.kind] ?? "#999"}"/>`;
  body += `<text x="${(x + w + 4).toFixed(1)}" y="${y + 15}" font-size="11" fill="#555">${ms(s.end - s.start).toFixed(1)} ms</text>`;
});
const H = 60 + rows.length * rowH;
const legend = "SERVER blue · INTERNAL purple · CLIENT orange (SQL, delivery) · CONSUMER green (worker job)";
writeFileSync(
  output,
  `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif"><title>One trace: a partner's write, its SQL and commit, the worker's job and its deliveries</title><rect width="100%" height="100%" fill="#fff"/>` +
    `<text x="8" y="22" font-size="14" font-weight="bold">trace ${spans[0].traceId} · ${total.toFixed(1)} ms</text>` +
    `<text x="${label}" y="22" font-size="11" fill="#555">${legend}</text>${body}</svg>\n`,
);
