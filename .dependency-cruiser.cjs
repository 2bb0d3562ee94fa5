/**
 * The import rules, checked by `npm run lint` (see docs/architecture.md, "Import rules"). Layers, lowest first:
 * src/platform (the machinery every domain uses), src/modules/<domain> (one folder per domain), the adapters over
 * them (src/http, src/rest, src/graphql) and the worker (workers/), and the CLIs (src/cli) that start them. A layer
 * imports only layers below it, and nothing imports in a circle: no two files, no two domains, no two adapters.
 */
const ADAPTERS = "^src/(http|rest|graphql|cli)/";

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "No file imports itself through others: move what both need into a third file.",
      from: {},
      to: { circular: true },
    },
    {
      name: "no-circular-domains-or-adapters",
      severity: "error",
      comment:
        "No domain (src/modules/<domain>) and no adapter (src/http, src/rest, src/graphql, src/cli) imports another that imports it back, directly or through others: move the shared piece down, to src/platform or to the lower domain.",
      scope: "folder",
      from: { path: "^src/(modules/[^/]+|http|rest|graphql|cli)$" },
      to: { circular: true },
    },
    {
      name: "domains-not-adapters",
      severity: "error",
      comment: "Domains never import HTTP, REST, GraphQL or the CLIs: those are thin adapters over the domains.",
      from: { path: "^src/modules/" },
      to: { path: ADAPTERS },
    },
    {
      name: "platform-not-domains-or-adapters",
      severity: "error",
      comment: "The platform depends on no domain and no adapter (a domain adds to it by declaration merging, as EventCatalog).",
      from: { path: "^src/platform/" },
      to: { path: ["^src/modules/", ADAPTERS, "^src/app\\.ts$", "^workers/"] },
    },
    {
      name: "workers-not-adapters",
      severity: "error",
      comment: "The worker runs domain jobs on the platform; it needs nothing from the HTTP, REST or GraphQL adapters.",
      from: { path: "^workers/" },
      to: { path: ADAPTERS },
    },
    {
      name: "rest-and-graphql-apart",
      severity: "error",
      comment:
        "REST runs its GraphQL documents through the schema the domains build, never through the GraphQL adapter, and the GraphQL adapter knows nothing of REST.",
      from: { path: "^src/(rest|graphql)/" },
      to: { path: "^src/(rest|graphql)/", pathNot: "^src/$1/" },
    },
    {
      name: "http-mounts-rest-only",
      severity: "error",
      comment: "HTTP imports REST only where it mounts the REST API (server.ts) and publishes its route table (docs.ts).",
      from: { path: "^src/http/", pathNot: "^src/http/(server|docs)\\.ts$" },
      to: { path: "^src/rest/" },
    },
    {
      name: "resolves-every-import",
      severity: "error",
      comment: "An import of our own files the cruiser cannot resolve is an edge the rules above never see.",
      from: {},
      to: { couldNotResolve: true, path: "^\\." },
    },
  ],
  required: [
    {
      name: "sees-the-adapters",
      severity: "error",
      comment: "Guards the rules against passing because the graph came out empty: the server is known to mount the REST router.",
      module: { path: "^src/http/server\\.ts$" },
      to: { path: "^src/rest/router\\.ts$" },
    },
  ],
  options: {
    // Generated Prisma code imports itself in circles; it is a leaf to us.
    doNotFollow: { path: ["node_modules", "^src/generated/"] },
    // The portal is a browser app with its own tsconfig that imports nothing of the server (it calls the public API).
    exclude: { path: ["^src/portal/"] },
    // Type-only imports count: a cycle of types is still two files that cannot be understood apart.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".d.ts", ".js", ".mjs", ".cjs", ".json"], conditionNames: ["import", "require", "node", "default", "types"] },
  },
};
