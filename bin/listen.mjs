#!/usr/bin/env node
// The `listen` command (`npx listen …` in this repository): runs src/cli/listen.ts through tsx.
import { register } from "tsx/esm/api";

register();
await import("../src/cli/listen.ts");
