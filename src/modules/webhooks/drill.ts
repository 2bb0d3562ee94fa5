/**
 * Fault drills: a SANDBOX endpoint can ask for what real delivery does on a bad day (the same event twice, events out
 * of order, late ones) so that its receiver proves it copes. The rules are here, free of I/O, so the delivery path
 * (./attempt.ts) and the `partner-listen` command (src/cli/listen.ts) drill alike.
 */

export interface Drill {
  /** Share of deliveries sent a second time (same eventId and webhook-id, signed again), 0 to 1. */
  duplicateRate: number;
  /** Each delivery is held a random time up to this many seconds, so later events overtake earlier ones. */
  reorderWindowSeconds: number;
  /** Each delivery is held a random time up to this many seconds more. */
  maxDelaySeconds: number;
}

/** What a drill did to an attempt, as the attempt log shows it. */
export const ATTEMPT_DRILLS = ["duplicate", "delayed", "reordered"] as const;
export type AttemptDrill = (typeof ATTEMPT_DRILLS)[number];

/** The longest reorder window and delay a drill may ask for. */
export const MAX_DRILL_SECONDS = 300;

export const DRILL_FIELDS = ["duplicateRate", "reorderWindowSeconds", "maxDelaySeconds"] as const;

/** A drill as given (each field optional, 0 when left out). */
export type DrillInput = { [K in keyof Drill]?: number | null };

export function drillFrom(input: DrillInput): Drill {
  return {
    duplicateRate: input.duplicateRate ?? 0,
    reorderWindowSeconds: input.reorderWindowSeconds ?? 0,
    maxDelaySeconds: input.maxDelaySeconds ?? 0,
  };
}

/** A drill that would change nothing: every field 0. */
export function isIdle(drill: Drill): boolean {
  return DRILL_FIELDS.every((field) => drill[field] === 0);
}

/** The stored drill (a jsonb column written from a checked input), or null when none runs or the value is not one. */
export function storedDrill(value: unknown): Drill | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const drill: Drill = { duplicateRate: 0, reorderWindowSeconds: 0, maxDelaySeconds: 0 };
  for (const field of DRILL_FIELDS) {
    const v: unknown = Object.getOwnPropertyDescriptor(value, field)?.value;
    if (typeof v !== "number" || !Number.isFinite(v)) return null;
    drill[field] = v;
  }
  return drill;
}

export interface Hold {
  ms: number;
  /** "reordered" when the drill has a reorder window (its hold is what lets later events overtake), else "delayed". */
  drill: Extract<AttemptDrill, "delayed" | "reordered">;
}

/**
 * How long a delivery's first attempt is held: a random part of the reorder window plus a random part of the maximum
 * delay; null when the drill holds nothing.
 */
export function holdOf(drill: Drill, random: () => number = Math.random): Hold | null {
  if (drill.reorderWindowSeconds === 0 && drill.maxDelaySeconds === 0) return null;
  const ms = Math.round(random() * drill.reorderWindowSeconds * 1000 + random() * drill.maxDelaySeconds * 1000);
  return { ms, drill: drill.reorderWindowSeconds > 0 ? "reordered" : "delayed" };
}

/** Whether this delivery is sent twice, and if so how long after the first its copy goes (within the reorder window). */
export function duplicateAfterMs(drill: Drill, random: () => number = Math.random): number | null {
  if (drill.duplicateRate === 0 || random() >= drill.duplicateRate) return null;
  return Math.round(random() * drill.reorderWindowSeconds * 1000);
}
