import { tracer } from "../../platform/tracing/tracer.js";
import type { SendWebhookResult } from "./send.js";

/**
 * One delivery request as a CLIENT span (OpenTelemetry's HTTP conventions), a child of the job's span. With
 * `sendTraceparent` (WEBHOOK_SEND_TRACEPARENT) the request carries the span's `traceparent`, so a receiver that
 * traces joins the trace; by default receivers see no id of ours. Answers the headers as sent, for the attempt
 * log. The URL's query is left out of the span: a receiver's URL may carry a token there.
 */
export async function traceDeliveryRequest(
  url: URL,
  headers: Record<string, string>,
  sendTraceparent: boolean,
  send: (headers: Record<string, string>) => Promise<SendWebhookResult>,
): Promise<{ result: SendWebhookResult; headers: Record<string, string> }> {
  if (!tracer.enabled) return { result: await send(headers), headers };
  const attributes = {
    "http.request.method": "POST",
    "url.full": `${url.origin}${url.pathname}`,
    "server.address": url.hostname,
    "server.port": Number(url.port || (url.protocol === "https:" ? 443 : 80)),
  };
  return tracer.trace("POST", { kind: "client", attributes }, async (span) => {
    const traceparent = sendTraceparent ? span.traceparent() : null;
    const sent = traceparent ? { ...headers, traceparent } : headers;
    const result = await send(sent);
    span.setAttributes({
      "http.response.status_code": result.status ?? undefined,
      "error.type": result.ok ? undefined : result.timedOut ? "timeout" : (result.status?.toString() ?? "unreachable"),
    });
    if (!result.ok) span.fail(result.error ?? `HTTP ${result.status}`);
    return { result, headers: sent };
  });
}
