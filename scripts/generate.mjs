// Generates the Prisma client and Pothos types offline. `prisma generate` only needs DATABASE_URL to be set
// (the datasource names it), not reachable.
import { execFileSync } from "node:child_process";
execFileSync("npx", ["prisma", "generate"], {
  stdio: ["ignore", "ignore", "inherit"],
  env: { ...process.env, DATABASE_URL: process.env.DATABASE_URL || "postgresql://localhost/unused", PRISMA_HIDE_UPDATE_MESSAGE: "1" },
});
