/**
 * Runs the `convert` CLI straight from source (`tsx src/sync/conversion/cli-main.ts convert ...`), without
 * the product's main CLI; the e2e tests spawn it. The only process-touching file of the converters.
 */
import { readFile } from "node:fs/promises";
import process, { argv, stderr, stdin, stdout } from "node:process";
import { runConvert } from "./cli.js";

const args = argv.slice(2);
const code = await runConvert(args[0] === "convert" ? args.slice(1) : args, {
  stdin,
  stdout,
  stderr,
  readFile: (path) => readFile(path, "utf8"),
});
// exitCode, not exit(): let stdout drain when it is a pipe.
process.exitCode = code;
