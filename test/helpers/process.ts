import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { inject } from "vitest";
import type { BundleName } from "./global-setup.js";

export { freePort } from "../../src/platform/db/embedded.js";

/** The repository's root, where `npm start` and the scripts run. */
export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

export interface ServiceProcess {
  child: ChildProcess;
  /** Standard output and standard error, interleaved as they arrived. */
  output: () => string;
  stdout: () => string;
  stderr: () => string;
  waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<void>;
  exited: Promise<number | null>;
}

/** The script the global setup bundled from one of our CLIs or the lone worker, for `node` to run. */
export function bundled(name: BundleName): string {
  return join(inject("bundleDir"), `${name}.mjs`);
}

/** Runs one of our CLIs (`src/cli/<name>.ts`, bundled) as a real child process and captures its output. */
export function runCli(name: Exclude<BundleName, "worker-process">, args: string[], env: Record<string, string>): ServiceProcess {
  return runProcess(process.execPath, [bundled(name), ...args], env);
}

/** Runs a TypeScript file of the repository (a path from its root) as a real child process and captures its output. */
export function runScript(script: string, args: string[], env: Record<string, string>): ServiceProcess {
  return runProcess(process.execPath, ["--import", "tsx", script, ...args], env);
}

/**
 * Runs any command as a real child process and captures its output: in the repository unless `cwd` says, with this
 * process's environment and `env` over it (or `env` alone with `inheritEnv: false`).
 */
export function runProcess(command: string, args: string[], env: Record<string, string>, opts: { cwd?: string; inheritEnv?: boolean } = {}): ServiceProcess {
  const child = spawn(command, args, {
    cwd: opts.cwd ?? ROOT,
    env: opts.inheritEnv === false ? env : { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let stdout = "";
  let stderr = "";
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
  const onData = (d: Buffer) => {
    out += d.toString();
    for (const w of [...waiters])
      if (w.pattern.test(out)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
  };
  child.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString();
    onData(d);
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
    onData(d);
  });
  const exited = new Promise<number | null>((res) => child.on("exit", (code) => res(code)));
  return {
    child,
    output: () => out,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    waitFor: (pattern, timeoutMs = 30_000) =>
      new Promise<void>((resolve, reject) => {
        if (pattern.test(out)) return resolve();
        const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}; output:\n${out}`)), timeoutMs);
        waiters.push({
          pattern,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
        void exited.then((code) => reject(new Error(`exited with ${code} before ${pattern}; output:\n${out}`)));
      }),
  };
}

/** A process's name, parent and start time from /proc (Linux), or null when it is gone or a zombie. */
function procStat(pid: number): { name: string; ppid: number; started: string } | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // The command name is in parentheses and may hold spaces: the fields after its last ")" are fixed.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  if (fields[0] === "Z") return null;
  return { name: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")), ppid: Number(fields[1]), started: fields[19] };
}

/** A process seen alive, by its pid and start time, so a reused pid is not mistaken for it. */
export interface SeenProcess {
  pid: number;
  /** The executable's name (`node`, `postgres`, …). */
  name: string;
  started: string;
}

/** Every live descendant of `pid` (children, their children, …) right now. */
export function descendants(pid: number): SeenProcess[] {
  const children = new Map<number, SeenProcess[]>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const stat = procStat(Number(name));
    if (!stat) continue;
    const list = children.get(stat.ppid) ?? [];
    list.push({ pid: Number(name), name: stat.name, started: stat.started });
    children.set(stat.ppid, list);
  }
  const found: SeenProcess[] = [];
  const visit = (parent: number) => {
    for (const c of children.get(parent) ?? []) {
      found.push(c);
      visit(c.pid);
    }
  };
  visit(pid);
  return found;
}

/** Those of `seen` still running (not exited, not a zombie). */
export function stillRunning(seen: SeenProcess[]): SeenProcess[] {
  return seen.filter((p) => procStat(p.pid)?.started === p.started);
}

/**
 * Worker processes a test starts (`test/webhooks/worker-process.ts`, a worker alone) to SIGKILL mid-work;
 * `killAll` ends those still running.
 */
export class WorkerProcesses {
  private readonly children: ChildProcess[] = [];

  /** Starts one on `databaseUrl` with `env` added, and resolves once it takes jobs. */
  async start(databaseUrl: string, env: Record<string, string> = {}): Promise<ChildProcess> {
    const child = spawn(process.execPath, [bundled("worker-process")], {
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: "silent", WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", ...env },
      stdio: ["ignore", "pipe", "inherit"],
    });
    this.children.push(child);
    await new Promise<void>((resolve, reject) => {
      let out = "";
      const timer = setTimeout(() => reject(new Error("the worker process did not start within 30 s")), 30_000);
      child.stdout?.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes("ready")) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`worker process exited with ${code}`));
      });
    });
    return child;
  }

  killAll(): void {
    for (const child of this.children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
}
