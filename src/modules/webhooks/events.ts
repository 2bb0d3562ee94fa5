import { type Static, Type } from "@sinclair/typebox";
import type { EventDeclaration } from "../events/schema.js";

/** The synthetic event of a webhook test; delivered like the others but not subscribable (no fan-out). */
export const TEST_EVENT = {
  type: "webhook.test",
  scope: "webhooks:manage",
  emitted: "On demand, by `POST /public/v1/webhooks/{id}/test`. Not subscribable.",
  data: Type.Object({ message: Type.String() }),
} as const satisfies EventDeclaration & { type: string };

export type TestEventData = Static<typeof TEST_EVENT.data>;
