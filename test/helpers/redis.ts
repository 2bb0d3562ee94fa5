import { connect } from "node:net";

/** The Redis the tests use when one runs there (CI may have none: those tests skip). */
export const TEST_REDIS_URL = "redis://127.0.0.1:6379";

/** Whether something accepts connections at host:port within half a second. */
export function portOpen(host: string, port: number): Promise<boolean> {
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

/** Whether something accepts connections at TEST_REDIS_URL. */
export function redisReachable(): Promise<boolean> {
  const url = new URL(TEST_REDIS_URL);
  return portOpen(url.hostname, Number(url.port));
}
