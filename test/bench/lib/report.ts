import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { LoadResult } from "./load.js";

/** One line of the headline table: a figure, what it is measured against, and the issue's goal for it. */
export interface Verdict {
  benchmark: string;
  figure: string;
  against: string;
  /** The compared number (a ratio, milliseconds, deliveries per second or MiB), shown with its unit in `figure`. */
  value: number | null;
  goal: string;
  /** null: not measured (e.g. the route is not available in this build). */
  pass: boolean | null;
}

/** Throughput and latency of one server on one route, for the detail table. */
export interface Measurement extends LoadResult {
  benchmark: string;
  server: string;
}

export interface Report {
  startedAt: string;
  machine: { cpus: number; node: string; database: string };
  dataset: Record<string, number | string>;
  settings: Record<string, number | string>;
  verdicts: Verdict[];
  measurements: Measurement[];
  profiles: { route: string; top: { fn: string; where: string; selfPct: number }[]; byArea: { area: string; selfPct: number }[] }[];
  notes: string[];
  seconds: Record<string, number>;
}

export const fmt = {
  int: (n: number) => Math.round(n).toLocaleString("en-US"),
  ms: (n: number) => (Number.isFinite(n) ? `${n < 10 ? n.toFixed(2) : n.toFixed(1)} ms` : "n/a"),
  ratio: (n: number) => `${n.toFixed(2)}×`,
};

const verdictText = (v: Verdict) => (v.pass === null ? "not measured" : v.pass ? "pass" : "FAIL");

function markdownTable(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

export function verdictTable(verdicts: readonly Verdict[]): string {
  return markdownTable(
    ["benchmark", "figure", "measured against", "goal", "verdict"],
    verdicts.map((v) => [v.benchmark, v.figure, v.against, v.goal, verdictText(v)]),
  );
}

/** CPU per request (server + database when both are measured) first: the figure the verdicts use. */
function measurementTable(measurements: readonly Measurement[]): string {
  const ms = (n: number | undefined) => (n === undefined ? "—" : fmt.ms(n));
  return markdownTable(
    ["benchmark", "server", "CPU per request", "server CPU", "database CPU", "req/s", "p50", "p99", "requests", "failures"],
    measurements.map((m) => [
      m.benchmark,
      m.server,
      ms(m.cpuMsPerRequest === undefined ? undefined : m.cpuMsPerRequest + (m.databaseCpuMsPerRequest ?? 0)),
      ms(m.cpuMsPerRequest),
      ms(m.databaseCpuMsPerRequest),
      fmt.int(m.rps),
      fmt.ms(m.p50),
      fmt.ms(m.p99),
      fmt.int(m.requests),
      String(m.failures),
    ]),
  );
}

export function markdown(report: Report): string {
  const parts = [
    `# Benchmark results`,
    ``,
    `Run ${report.startedAt} on ${report.machine.cpus} CPUs, Node ${report.machine.node}, ${report.machine.database}.`,
    `Data set: ${Object.entries(report.dataset)
      .map(([k, v]) => `${k} ${typeof v === "number" ? fmt.int(v) : v}`)
      .join(", ")}.`,
    `Settings: ${Object.entries(report.settings)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}.`,
    ``,
    verdictTable(report.verdicts),
    ``,
    `## Measurements`,
    ``,
    measurementTable(report.measurements),
  ];
  for (const profile of report.profiles) {
    parts.push(
      ``,
      `## CPU profile of the API process under the load of ${profile.route} (self time)`,
      ``,
      markdownTable(
        ["area", "self time"],
        profile.byArea.map((a) => [a.area, `${a.selfPct.toFixed(1)} %`]),
      ),
      ``,
      markdownTable(
        ["function", "where", "self time"],
        profile.top.map((t) => [`\`${t.fn}\``, t.where, `${t.selfPct.toFixed(1)} %`]),
      ),
    );
  }
  if (report.notes.length) parts.push(``, `## Notes`, ``, ...report.notes.map((n) => `- ${n}`));
  parts.push(
    ``,
    `Phase durations (s): ${Object.entries(report.seconds)
      .map(([k, v]) => `${k} ${v.toFixed(0)}`)
      .join(", ")}.`,
    ``,
  );
  return parts.join("\n");
}

/** Writes latest.json and latest.md (each run replaces the previous one; commit them to keep a run). */
export async function writeReport(dir: string, report: Report): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const files = [join(dir, "latest.json"), join(dir, "latest.md")];
  await writeFile(files[0], `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(files[1], markdown(report));
  return files;
}
