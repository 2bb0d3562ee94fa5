import type { BenchContext } from "../context.js";
import type { BenchTenant } from "./tenants.js";
import { serviceArgs, startService, type Service } from "./processes.js";
import { startReceiver, type Receiver } from "./receiver.js";

/**
 * What both delivery benchmarks need: a receiver, one endpoint per sandbox tenant registered through the public
 * API (POST /public/v1/webhooks, subscribed to order.created), and one worker process
 * (`src/cli/start.ts --role worker`). When this build has no webhook routes (404), that is reported instead.
 */

export interface Endpoint {
  tenant: BenchTenant;
  path: string;
}

export type DeliverySetup =
  | { available: true; receiver: Receiver; endpoints: Endpoint[]; worker: Service; close(): Promise<void> }
  | { available: false; reason: string };

export async function prepareDeliveries(ctx: BenchContext): Promise<DeliverySetup> {
  const receiver = await startReceiver();
  try {
    const endpoints: Endpoint[] = [];
    for (const tenant of ctx.sandboxTenants) {
      const path = `/hooks/${tenant.storeCode}`;
      const res = await fetch(`${ctx.api.baseUrl}/public/v1/webhooks`, {
        method: "POST",
        headers: { authorization: `Bearer ${tenant.token}`, "content-type": "application/json" },
        body: JSON.stringify({ url: receiver.url(path), events: ["order.created"] }),
      });
      if (res.status === 404) {
        await receiver.close();
        return { available: false, reason: "POST /public/v1/webhooks answers 404: the webhook routes and worker tasks are not in this build" };
      }
      const body = (await res.json()) as { secret?: string };
      if (res.status !== 201 || !body.secret) throw new Error(`registering a webhook endpoint: ${res.status} ${JSON.stringify(body)}`);
      receiver.setSecret(path, body.secret);
      endpoints.push({ tenant, path });
    }
    const worker = await startService({
      name: "worker",
      args: serviceArgs("worker"),
      env: ctx.apiEnv,
      logDir: ctx.logDir,
      ready: /"msg":"worker started"/,
    });
    return {
      available: true,
      receiver,
      endpoints,
      worker,
      async close() {
        await worker.stop();
        await receiver.close();
      },
    };
  } catch (e) {
    await receiver.close();
    throw e;
  }
}
