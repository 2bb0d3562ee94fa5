import type pg from "pg";

export interface StatementRecorder {
  /** Runs `work` and returns what it returned with the statements the pool's connections sent meanwhile. */
  during<T>(work: () => Promise<T>): Promise<{ result: T; statements: string[] }>;
}

/**
 * Records each statement a pool connection sends, from the moment it is first lent (every statement is one round
 * trip), as its prepared name when it has one, else its text; `as: "text"` records the text always (to tell
 * statements apart by what they say).
 */
export function recordStatements(pool: pg.Pool, opts: { as?: "name" | "text" } = {}): StatementRecorder {
  let statements: string[] | null = null;
  const wrapped = new WeakSet<pg.PoolClient>();
  pool.on("acquire", (client) => {
    if (wrapped.has(client)) return;
    wrapped.add(client);
    const query = client.query.bind(client) as (config: unknown, ...rest: unknown[]) => unknown;
    client.query = ((config: unknown, ...rest: unknown[]) => {
      statements?.push(statementOf(config, opts.as ?? "name"));
      return query(config, ...rest);
    }) as typeof client.query;
  });
  return {
    async during(work) {
      const seen: string[] = [];
      statements = seen;
      try {
        return { result: await work(), statements: seen };
      } finally {
        statements = null;
      }
    },
  };
}

function statementOf(config: unknown, as: "name" | "text"): string {
  if (typeof config === "string") return config;
  if (typeof config !== "object" || config === null) return String(config);
  const named = as === "name" && "name" in config && typeof config.name === "string" ? config.name : null;
  return named ?? ("text" in config ? String(config.text) : String(config));
}
