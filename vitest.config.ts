import { defineConfig } from "vitest/config";

export default defineConfig({
  // graphql 16 ships CJS (main) and ESM (module): Node loads the CJS one for our dependencies, so Vite must
  // resolve the same file or two copies of graphql meet in one schema.
  resolve: { alias: { graphql: "graphql/index.js" } },
  test: {
    globalSetup: ["./test/helpers/global-setup.ts"],
    include: ["test/**/*.test.ts"],
    // test/.brokers holds the SQS emulator's own packages (installed by .ci/run), whose tests are not ours.
    exclude: ["test/bench/**", "test/.brokers/**", "**/node_modules/**"],
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
  },
});
