#!/usr/bin/env node
// The `partner-listen` command in a clone (`npx partner-listen …`): runs src/cli/listen.ts through tsx. Outside a
// clone, run the dependency-free build of it instead: `npm run build` writes dist/partner-listen/.
import { register } from "tsx/esm/api";

register();
await import("../src/cli/listen.ts");
