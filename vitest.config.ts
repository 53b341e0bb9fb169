import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The real-control-plane-only suites run in `npm run test:cluster` (vitest.cluster.config.ts).
    exclude: ["**/node_modules/**", "test/**/*.cluster.test.ts"],
    environment: "node",
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    reporters: ["default"],
  },
});
