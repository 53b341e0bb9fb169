/**
 * The stand-ins as local mode runs them, for the tests that need a real API server: a local cluster of
 * src/local in a fresh state directory (kubeconfig contexts per identity, CRDs, CAPA's defaulting webhook),
 * seeded by the test, then `startLocalSimulatedProviders` under the `mao`, `capi` and the platform's
 * infrastructure provider's (`capa`, or `capo` on OpenStack) contexts.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LocalCluster } from "../../src/local/cluster.js";
import { startLocalCluster } from "../../src/local/cluster.js";
import { createCertificateAuthority } from "../../src/server/certs.js";
import type { SimulatedProviders } from "../../src/simulate/index.js";
import { createInstanceLedger, startLocalSimulatedProviders } from "../../src/simulate/index.js";
import type { PlatformConverter } from "../../src/sync/conversion/platform.js";
import { silentLogger } from "../kube/fakes.js";
import { NS } from "./builders.js";

export interface LocalStandIns {
  local: LocalCluster;
  providers: SimulatedProviders;
  /** Stops the stand-ins and the cluster, and removes the state directory (each only if it was started). */
  stop(): Promise<void>;
}

/**
 * Starts a local cluster in a new directory named after `prefix`, lets `seed` write to it before any stand-in
 * runs, then starts the stand-ins of `platform` (default AWS) with a fresh ledger, provisioning without delay.
 */
export const startLocalStandIns = async (
  prefix: string,
  seed: (local: LocalCluster) => Promise<void>,
  platform?: PlatformConverter,
): Promise<LocalStandIns> => {
  const stateDir = await mkdtemp(join(tmpdir(), prefix));
  let local: LocalCluster | undefined;
  let providers: SimulatedProviders | undefined;
  const stop = async () => {
    await providers?.stop();
    await local?.stop();
    await rm(stateDir, { recursive: true, force: true });
  };
  try {
    local = await startLocalCluster({
      host: "127.0.0.1",
      port: 0,
      stateDir,
      ...NS,
      controllerUsers: [],
      webhookCaPem: createCertificateAuthority("unused webhook CA").certPem,
      logger: silentLogger(),
    });
    await seed(local);
    providers = await startLocalSimulatedProviders({
      kubeconfigText: local.kubeconfigText,
      ...NS,
      logger: silentLogger(),
      ledger: createInstanceLedger(),
      provisioningDelayMs: 0,
      ...(platform ? { platform } : {}),
    });
    return { local, providers, stop };
  } catch (e) {
    await stop();
    throw e;
  }
};
