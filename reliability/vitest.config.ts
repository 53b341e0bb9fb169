/**
 * The heavy reliability campaign (issue 11): `npm run test:reliability`. Separate from `npm test` because it
 * runs for minutes (100,000 hostile reviews, autocannon load, child product processes); files run one after
 * the other so load figures are not skewed by a neighbour. Sizes are set by RELIABILITY_* variables, read in
 * reliability/params.ts.
 */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["reliability/**/*.test.ts"],
    environment: "node",
    testTimeout: 600_000,
    hookTimeout: 120_000,
    pool: "forks",
    fileParallelism: false,
    // RSS is judged after a forced collection, so garbage not yet collected does not read as a leak.
    execArgv: ["--expose-gc"],
    reporters: ["default"],
  },
});
