/**
 * The product's V8 flags as the image runs it: the `NODE_OPTIONS` of the Dockerfile's runtime stage (decision
 * 96), read from the Dockerfile itself so the bench cannot measure another process than the one that ships.
 * `--product-semi-space MB` replaces the semi-space cap for A/B runs (0: V8's own sizing).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dockerInstructions, dockerStages } from "../test/manifests/helpers.js";
import type { BenchOptions } from "./options.js";

const DOCKERFILE = fileURLToPath(new URL("../Dockerfile", import.meta.url));
const SEMI_SPACE = /^--max-semi-space-size=/;

/** The flags of `NODE_OPTIONS` in the last stage's `ENV` lines (unquoted `KEY=value` pairs). */
export function imageNodeOptions(dockerfile: string): string[] {
  const stages = dockerStages(dockerInstructions(dockerfile));
  const runtime = stages[stages.length - 1];
  const flags: string[] = [];
  for (const env of runtime?.instructions.filter((i) => i.keyword === "ENV") ?? []) {
    for (const pair of env.args.split(/\s+/)) {
      if (pair.startsWith("NODE_OPTIONS=")) flags.splice(0, flags.length, ...pair.slice(13).split(/\s+/));
    }
  }
  return flags.filter((f) => f !== "");
}

/** The image's flags, read from the Dockerfile once per bench process. */
let image: readonly string[] | undefined;

/** The execArgv that runs the product's child process as the image would, with `o`'s override. */
export function productNodeFlags(o: Pick<BenchOptions, "productSemiSpaceMb">): string[] {
  image ??= imageNodeOptions(readFileSync(DOCKERFILE, "utf8"));
  if (o.productSemiSpaceMb === undefined) return [...image];
  const others = image.filter((f) => !SEMI_SPACE.test(f));
  return o.productSemiSpaceMb === 0 ? others : [...others, `--max-semi-space-size=${o.productSemiSpaceMb}`];
}
