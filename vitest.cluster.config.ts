import { defineConfig } from "vitest/config";

/**
 * `npm run test:cluster`: the suites that run against the real control plane (SPEC §8.1) — the same test
 * files as `npm test` picks them with MAM_TEST_BACKEND=local, plus the real-only ones
 * (`*.cluster.test.ts`). One control plane per file, one file at a time: each brings its own etcd,
 * kube-apiserver and kube-controller-manager, and two at once would crowd a 2-core machine.
 */
export default defineConfig({
  test: {
    include: [
      "test/**/*.cluster.test.ts",
      "test/integration/**/*.test.ts",
      "test/installer/installer.integration.test.ts",
      "test/e2e/journey.test.ts",
      "test/ops/commands.integration.test.ts",
      "test/model/model.test.ts",
      // Found on the real control plane (decision 160), and its Machine-level twin (decision 163): proven there.
      "test/model/stale-set-replicas.test.ts",
      "test/model/stale-machine-generation.test.ts",
    ],
    environment: "node",
    env: { MAM_TEST_BACKEND: "real" },
    globalSetup: ["test/cluster/global-setup.ts"],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: "forks",
    fileParallelism: false,
    reporters: ["default"],
  },
});
