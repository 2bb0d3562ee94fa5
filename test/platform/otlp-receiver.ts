import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local OTLP/HTTP traces receiver, as an OpenTelemetry Collector's `otlphttp` receiver is: it takes
 * `POST /v1/traces` in protobuf (`application/x-protobuf`) or JSON (`application/json`) and keeps every span, both
 * decoded to one shape. The protobuf decoder is written here from the OTLP `trace.proto` field numbers: the
 * exporter's own package only encodes.
 */

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  links: { traceId: string; spanId: string }[];
  /** 2 is an error. */
  statusCode: number;
  startNs: bigint;
  endNs: bigint;
  serviceName: string;
  /** How the span arrived. */
  encoding: "protobuf" | "json";
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const json = (req.headers["content-type"] ?? "").startsWith("application/json");
      spans.push(...(json ? fromJson(JSON.parse(body.toString("utf8")) as JsonRequest) : fromProtobuf(body)));
      // An empty ExportTraceServiceResponse: a full success.
      res.writeHead(200, { "content-type": json ? "application/json" : "application/x-protobuf" });
      res.end(json ? "{}" : "");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// --- JSON (OTLP/JSON: ids in hex, 64-bit integers as strings) ---

interface JsonValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
}
interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: { key: string; value: JsonValue }[];
  links?: { traceId: string; spanId: string }[];
  status?: { code?: number };
}
interface JsonRequest {
  resourceSpans: { resource?: { attributes?: { key: string; value: JsonValue }[] }; scopeSpans: { spans?: JsonSpan[] }[] }[];
}

const jsonValue = (v: JsonValue): string | number | boolean =>
  v.stringValue ?? v.boolValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.doubleValue ?? ""));

function fromJson(request: JsonRequest): ReceivedSpan[] {
  return request.resourceSpans.flatMap((rs) => {
    const serviceName = String(jsonValue(rs.resource?.attributes?.find((a) => a.key === "service.name")?.value ?? {}));
    return rs.scopeSpans.flatMap((ss) =>
      (ss.spans ?? []).map(
        (s): ReceivedSpan => ({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? "",
          name: s.name,
          kind: s.kind,
          attributes: Object.fromEntries((s.attributes ?? []).map((a) => [a.key, jsonValue(a.value)])),
          links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
          statusCode: s.status?.code ?? 0,
          startNs: BigInt(s.startTimeUnixNano),
          endNs: BigInt(s.endTimeUnixNano),
          serviceName,
          encoding: "json",
        }),
      ),
    );
  });
}

// --- protobuf: the wire format, then the few messages of trace.proto this needs ---

type Field = { no: number; varint?: bigint; bytes?: Buffer; fixed?: bigint };

function readVarint(buf: Buffer, at: { pos: number }): bigint {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    const b = buf[at.pos++];
    result |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return result;
    shift += 7n;
  }
}

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  const at = { pos: 0 };
  while (at.pos < buf.length) {
    const key = Number(readVarint(buf, at));
    const no = key >> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ no, varint: readVarint(buf, at) });
    else if (wire === 1) {
      out.push({ no, fixed: buf.readBigUInt64LE(at.pos) });
      at.pos += 8;
    } else if (wire === 2) {
      const len = Number(readVarint(buf, at));
      out.push({ no, bytes: buf.subarray(at.pos, at.pos + len) });
      at.pos += len;
    } else if (wire === 5) at.pos += 4;
    else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

const all = (fs: Field[], no: number): Buffer[] => fs.filter((f) => f.no === no && f.bytes).map((f) => f.bytes as Buffer);
const one = (fs: Field[], no: number): Field | undefined => fs.find((f) => f.no === no);
const hex = (fs: Field[], no: number): string => one(fs, no)?.bytes?.toString("hex") ?? "";
const text = (fs: Field[], no: number): string => one(fs, no)?.bytes?.toString("utf8") ?? "";

/** AnyValue: 1 string, 2 bool, 3 int, 4 double. */
function anyValue(buf: Buffer): string | number | boolean {
  const fs = fields(buf);
  const f = fs[0];
  if (!f) return "";
  if (f.no === 1) return f.bytes?.toString("utf8") ?? "";
  if (f.no === 2) return f.varint === 1n;
  if (f.no === 3) return Number(BigInt.asIntN(64, f.varint ?? 0n));
  if (f.no === 4) {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(f.fixed ?? 0n);
    return b.readDoubleLE(0);
  }
  return "";
}

/** KeyValue: 1 key, 2 value. */
function keyValues(bufs: Buffer[]): Record<string, string | number | boolean> {
  return Object.fromEntries(
    bufs.map((b) => {
      const fs = fields(b);
      const value = all(fs, 2)[0];
      return [text(fs, 1), value ? anyValue(value) : ""];
    }),
  );
}

/** ExportTraceServiceRequest 1 resource_spans; ResourceSpans 1 resource, 2 scope_spans; ScopeSpans 2 spans. */
function fromProtobuf(body: Buffer): ReceivedSpan[] {
  return all(fields(body), 1).flatMap((rsBuf) => {
    const rs = fields(rsBuf);
    const resource = all(rs, 1)[0];
    const serviceName = String(resource ? (keyValues(all(fields(resource), 1))["service.name"] ?? "") : "");
    return all(rs, 2).flatMap((ssBuf) =>
      all(fields(ssBuf), 2).map((spanBuf): ReceivedSpan => {
        // Span: 1 trace_id, 2 span_id, 4 parent_span_id, 5 name, 6 kind, 7 start, 8 end, 9 attributes, 13 links, 15 status.
        const s = fields(spanBuf);
        const status = all(s, 15)[0];
        return {
          traceId: hex(s, 1),
          spanId: hex(s, 2),
          parentSpanId: hex(s, 4),
          name: text(s, 5),
          kind: Number(one(s, 6)?.varint ?? 0n),
          attributes: keyValues(all(s, 9)),
          links: all(s, 13).map((l) => {
            const lf = fields(l);
            return { traceId: hex(lf, 1), spanId: hex(lf, 2) };
          }),
          statusCode: status ? Number(one(fields(status), 3)?.varint ?? 0n) : 0,
          startNs: one(s, 7)?.fixed ?? 0n,
          endNs: one(s, 8)?.fixed ?? 0n,
          serviceName,
          encoding: "protobuf",
        };
      }),
    );
  });
}
