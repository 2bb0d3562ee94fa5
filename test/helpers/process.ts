import { spawn, type ChildProcess } from "node:child_process";

export { freePort } from "../../src/platform/db/embedded.js";

export interface ServiceProcess {
  child: ChildProcess;
  output: () => string;
  waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<void>;
  exited: Promise<number | null>;
}

/** Runs one of our CLIs (`src/cli/<name>.ts`) as a real child process and captures its output. */
export function runCli(name: string, args: string[], env: Record<string, string>): ServiceProcess {
  return runScript(`src/cli/${name}.ts`, args, env);
}

/** Runs a TypeScript file of the repository (a path from its root) as a real child process and captures its output. */
export function runScript(script: string, args: string[], env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
  const onData = (d: Buffer) => {
    out += d.toString();
    for (const w of [...waiters])
      if (w.pattern.test(out)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  const exited = new Promise<number | null>((res) => child.on("exit", (code) => res(code)));
  return {
    child,
    output: () => out,
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
