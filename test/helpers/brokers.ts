import { connect } from "node:net";

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
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.setTimeout(500);
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
    socket.once("timeout", () => done(false));
  });
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
