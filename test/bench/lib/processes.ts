import { spawn, type ChildProcess } from "node:child_process";
import { openSync, closeSync, readFileSync, readdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * Child processes of a run: the API, the worker and the baselines, each a real `node` process whose output goes
 * to a log file in the run's temporary directory. Every process started here is registered, so `stopAll` (run on
 * exit and on signals) leaves nothing behind.
 */

export interface Service {
  name: string;
  child: ChildProcess;
  pid: number;
  /** Port announced in the `listening` log line (0 for processes that do not listen). */
  port: number;
  baseUrl: string;
  logFile: string;
  /** performance.now() just before the process was spawned. */
  spawnedAt: number;
  /** Resolves with the exit code when the process ends. */
  exited: Promise<number | null>;
  /** The highest resident set size the process has had in its lifetime (VmHWM), in MiB, from /proc. */
  peakRssMiB(): number;
  /** The resident set size now (VmRSS), in MiB, from /proc; 0 once the process is gone. */
  rssMiB(): number;
  /** CPU time (user + system) the process has used so far, in seconds, from /proc. */
  cpuSeconds(): number;
  stop(): Promise<number | null>;
}

const running = new Set<Service>();
/** The highest VmHWM seen of each process name, read as its process stops (a process that dies on its own is missed). */
const peaks = new Map<string, number>();

/** Each process name's lifetime peak resident memory in MiB: the stopped ones' as they stopped, the running ones' now. */
export function peakRssByName(): Map<string, number> {
  const out = new Map(peaks);
  for (const s of running) out.set(s.name, Math.max(out.get(s.name) ?? 0, s.peakRssMiB()));
  return out;
}

export interface StartOptions {
  name: string;
  /** Arguments after `node`, e.g. ["--import", "tsx", "src/cli/start.ts", "--role", "api"]. */
  args: string[];
  env: Record<string, string>;
  logDir: string;
  /** A log line that says the process is ready; its `port` field is read when present. */
  ready: RegExp;
  /** Working directory; this one's when absent. */
  cwd?: string;
  timeoutMs?: number;
}

export async function startService(opts: StartOptions): Promise<Service> {
  const logFile = join(opts.logDir, `${opts.name}.log`);
  const fd = openSync(logFile, "a");
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, opts.args, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ["ignore", fd, fd] });
  closeSync(fd);
  const exited = new Promise<number | null>((res) => child.once("exit", (code) => res(code)));
  let alive = true;
  void exited.then(() => (alive = false));
  const service: Service = {
    name: opts.name,
    child,
    pid: child.pid ?? 0,
    port: 0,
    baseUrl: "",
    logFile,
    spawnedAt,
    exited,
    peakRssMiB: () => statusMiB(child.pid ?? 0, "VmHWM"),
    rssMiB: () => statusMiB(child.pid ?? 0, "VmRSS"),
    cpuSeconds: () => cpuSeconds(child.pid ?? 0),
    async stop() {
      running.delete(service);
      if (!alive) return child.exitCode;
      peaks.set(service.name, Math.max(peaks.get(service.name) ?? 0, service.peakRssMiB()));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
  running.add(service);
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  for (;;) {
    const text = await readFile(logFile, "utf8");
    const line = text.split("\n").find((l) => opts.ready.test(l));
    if (line) {
      const port = /"port":(\d+)/.exec(line);
      service.port = port ? Number(port[1]) : 0;
      service.baseUrl = `http://127.0.0.1:${service.port}`;
      return service;
    }
    if (!alive || Date.now() > deadline) {
      await service.stop();
      throw new Error(`${opts.name} did not start (${alive ? "timed out" : `exited ${child.exitCode}`}); its log:\n${text.slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A memory field of /proc/<pid>/status (VmHWM: the lifetime peak; VmRSS: now), in MiB; 0 when the process is gone. */
function statusMiB(pid: number, field: "VmHWM" | "VmRSS"): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status);
    return kb ? Number(kb[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Linux reports process times in clock ticks of USER_HZ, which is 100 on every mainstream configuration. */
const TICKS_PER_SECOND = 100;

/** The fields of /proc/<pid>/stat after the parenthesised command name (state first), or null when it is gone. */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

// In statFields: ppid is [1], utime [11], stime [12], and the reaped children's cutime [13], cstime [14].
function cpuSeconds(pid: number): number {
  const fields = statFields(pid);
  return fields ? (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND : 0;
}

/**
 * CPU seconds used so far by a process and its children, those still running and those it has reaped: for
 * PostgreSQL's postmaster, the whole server (one backend process per connection).
 */
export function treeCpuSeconds(pid: number): number {
  const root = statFields(pid);
  if (!root) return 0;
  let ticks = Number(root[11]) + Number(root[12]) + Number(root[13]) + Number(root[14]);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    if (fields && Number(fields[1]) === pid) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / TICKS_PER_SECOND;
}

export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((s) => s.stop()));
}

/**
 * What package.json's start script gives the process it starts: its environment assignments (merged over `env`)
 * and its Node flags, and the entry point after them (the bundle `npm run build` writes; `npm run bench` builds it
 * first).
 */
function startScript(env: Record<string, string>): { env: Record<string, string>; nodeFlags: string[]; entry: string[] } {
  const { scripts } = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { scripts: { start: string } };
  const words = scripts.start.split(/\s+/);
  const assignments: Record<string, string> = {};
  while (/^[A-Z_][A-Z0-9_]*=/.test(words[0] ?? "")) {
    const [name, ...value] = (words.shift() ?? "").split("=");
    assignments[name] = value.join("=");
  }
  // The script execs node, so that the signals npm forwards reach the service rather than a shell.
  if (words[0] === "exec") words.shift();
  const [command, ...args] = words;
  if (command !== "node") throw new Error(`package.json's start script must run node directly, not ${command}`);
  const firstArgument = args.findIndex((a) => !a.startsWith("-"));
  return { env: { ...assignments, ...env }, nodeFlags: args.slice(0, firstArgument), entry: args.slice(firstArgument) };
}

/**
 * The command line of our own service CLI, as `npm start` runs it, so the measured process is the one that ships.
 * `env` is merged into the process's environment.
 */
export function serviceCommand(role: "api" | "worker", env: Record<string, string>, nodeFlags: string[] = []): { args: string[]; env: Record<string, string> } {
  const start = startScript(env);
  return { args: [...nodeFlags, ...start.nodeFlags, ...start.entry, "--role", role], env: start.env };
}

/**
 * The same command for another build's checkout (built there): run in that directory, the start script's relative
 * entry names its bundle, while the environment and Node flags stay this build's, so the code is the only difference.
 */
export function checkoutCommand(
  checkout: string,
  role: "api" | "worker",
  env: Record<string, string>,
  nodeFlags: string[] = [],
): { args: string[]; env: Record<string, string>; cwd: string } {
  return { ...serviceCommand(role, env, nodeFlags), cwd: checkout };
}

/** Another script run under `npm start`'s environment and Node flags (a baseline that must differ from the API in its code only). */
export function scriptCommand(script: string, env: Record<string, string>): { args: string[]; env: Record<string, string> } {
  const start = startScript(env);
  return { args: [...start.nodeFlags, "--import", "tsx", script], env: start.env };
}
