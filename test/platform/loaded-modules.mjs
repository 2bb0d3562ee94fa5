// Preloaded with `node --import` by test/platform/tracing.test.ts: records every module the process resolves (ES
// imports, through a resolve hook) or requires (CommonJS), and at exit writes those under @opentelemetry/ to
// standard error as one line, `OPENTELEMETRY_MODULES [...]`.
import { writeSync } from "node:fs";
import { createRequire, register } from "node:module";
import { MessageChannel } from "node:worker_threads";

const resolved = new Set();
const { port1, port2 } = new MessageChannel();
port1.on("message", (url) => resolved.add(url));
port1.unref();
const hooks = `
let port;
export async function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  port.postMessage(result.url);
  return result;
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`, import.meta.url, { data: { port: port2 }, transferList: [port2] });
process.on("exit", () => {
  const required = Object.keys(createRequire(import.meta.url).cache);
  const loaded = [...resolved, ...required].filter((m) => m.includes("@opentelemetry"));
  writeSync(2, `OPENTELEMETRY_MODULES ${JSON.stringify(loaded)}\n`);
});
