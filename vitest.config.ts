import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The real-control-plane-only suites run in `npm run test:cluster` (vitest.cluster.config.ts).
    exclude: ["**/node_modules/**", "test/**/*.cluster.test.ts"],
    environment: "node",
    // Vitest's default leaves one core to its own process, which on a two-core machine runs every file in
    // turn; most files wait on child processes and sockets, so two at a time finish sooner (decision 93).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Bounds that catch a hang, not a speed check: with two files at a time the heaviest tests (a 9,990-level
    // object patched, a 40-object fleet migrated) take up to twice their time alone.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // The files share the two worker processes instead of each starting one and importing the product afresh
    // (182 s of imports before; 587 → 431 s in all): src/ keeps no module state and the few spies are
    // restored. A shuffled file order passes too; check a new suite that way (decision 150).
    isolate: false,
    reporters: ["default"],
  },
});
