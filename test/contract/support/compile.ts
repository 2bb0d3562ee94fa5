import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { ROOT } from "../../helpers/process.js";

/** Compiles one generated client on its own with `tsc --strict`; rejects with tsc's output when it does not. */
export async function compileStrict(file: string): Promise<void> {
  const args = [
    "--no-install",
    "tsc",
    "--ignoreConfig",
    "--noEmit",
    "--strict",
    "--skipLibCheck",
    "--target",
    "ES2023",
    "--module",
    "NodeNext",
    "--moduleResolution",
    "NodeNext",
    file,
  ];
  await promisify(execFile)("npx", args, { cwd: ROOT }).catch((e: { stdout: string }) => Promise.reject(new Error(e.stdout)));
}
