import { Counter, Histogram } from "prom-client";
import { copiedCounter, scrapedGauge, type MetricsRegistry } from "../../platform/metrics.js";
import type { Services } from "../../platform/services.js";
import { ATTEMPT_RESULTS, watchAttempts } from "./attempt.js";
import { WEBHOOK_DELIVERY_STATUSES } from "./statuses.js";
import { HELD_BEHIND_EARLIER } from "./sql/ordering.js";

/** Webhook deliveries by status (whole database). Plain SQL, as the metrics hold only the pool. */
const DELIVERIES_BY_STATUS = `SELECT status::text AS status, count(*)::int AS n FROM "WebhookDelivery" GROUP BY status`;

/**
 * The webhook series: the attempts these services run (the worker's, and the API's endpoint tests), the deliveries by
 * status, and the endpoints' pace.
 */
export function registerWebhookMetrics(registry: MetricsRegistry, services: Services): void {
  const registers = [registry];
  const attempts = new Counter({
    name: "webhook_attempts_total",
    help: "Webhook delivery attempts this process sent, by outcome: succeeded, failed (answered, not 2xx), timeout, unreachable, refused (URL check).",
    labelNames: ["outcome"],
    registers,
  });
  for (const outcome of ATTEMPT_RESULTS) attempts.inc({ outcome }, 0);
  const duration = new Histogram({
    name: "webhook_attempt_duration_seconds",
    help: "How long webhook attempts took, from connecting to the end of the response excerpt, by outcome.",
    labelNames: ["outcome"],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  watchAttempts(services, (report) => {
    attempts.inc({ outcome: report.result });
    duration.observe({ outcome: report.result }, report.seconds);
  });

  scrapedGauge<"status", { status: string; n: number }>(
    registry,
    services,
    { name: "webhook_deliveries", help: "Webhook deliveries by status (whole database, read at scrape time).", labelNames: ["status"] },
    DELIVERIES_BY_STATUS,
    (set, rows) => {
      for (const s of WEBHOOK_DELIVERY_STATUSES) set(rows.find((r) => r.status === s)?.n ?? 0, { status: s });
    },
  );

  scrapedGauge<never, { n: number }>(
    registry,
    services,
    {
      name: "webhook_deliveries_held",
      help: "Deliveries to ordered endpoints waiting behind an earlier delivery of the same endpoint (whole database, read at scrape time).",
      labelNames: [],
    },
    HELD_BEHIND_EARLIER,
    (set, rows) => set(rows[0]?.n ?? 0),
  );

  const { pacer } = services;
  copiedCounter(
    registry,
    {
      name: "webhook_paced_total",
      help: "Webhook attempts put off to a later slot of their endpoint's pace (rateLimit per second); they wait, they never fail for it.",
    },
    (set) => set(pacer.stats.deferred),
  );
  copiedCounter(
    registry,
    { name: "webhook_pace_refusals_total", help: "Webhook tests refused with 429 because their endpoint had no slot of its pace left in the current second." },
    (set) => set(pacer.stats.refused),
  );
  copiedCounter(
    registry,
    {
      name: "webhook_pace_reservations_total",
      help: "Round trips to the pace store (WEBHOOK_PACE_BACKEND) for slots; about one a second per endpoint sent to steadily.",
    },
    (set) => set(pacer.stats.reservations),
  );
}
