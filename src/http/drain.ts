import { Server as NetServer } from "node:net";
import type { Server } from "node:http";

/** How long a just-accepted connection gets to deliver its request before it counts as idle. */
const ARRIVAL_GRACE_MS = 250;
const SWEEP_MS = 100;

/**
 * Graceful stop for SIGTERM: stop accepting connections, let every accepted request finish, then close.
 * `http.Server.close()` is not used as is because it destroys "idle" connections at once, and a connection
 * accepted a moment ago whose request bytes are still on the way is idle to Node: its client would see a reset.
 * Instead the listener closes, responses from now on carry `Connection: close`, and idle connections are swept
 * after a short grace. After `timeoutMs` whatever is left is cut.
 */
export function drainServer(server: Server, timeoutMs: number): Promise<void> {
  server.prependListener("request", (_req, res) => res.setHeader("connection", "close"));
  return new Promise<void>((resolve) => {
    const sweep = () => server.closeIdleConnections();
    const grace = setTimeout(() => {
      sweep();
      sweeper = setInterval(sweep, SWEEP_MS);
    }, ARRIVAL_GRACE_MS);
    let sweeper: NodeJS.Timeout | undefined;
    const deadline = setTimeout(() => server.closeAllConnections(), timeoutMs);
    NetServer.prototype.close.call(server, () => {
      for (const t of [grace, deadline]) clearTimeout(t);
      clearInterval(sweeper);
      resolve();
    });
  });
}
