/**
 * SPEC §2.1: "a quiet but connected watch is fresh". A watch on a kind nobody writes (the Infrastructure)
 * counts as open from the moment the server answers it, before any event — on both backends. Found by the
 * bench on the real control plane (issue 25): the test backend's counting proxy held a watch's response
 * headers until the first event, so the product's Infrastructure informer looked disconnected, and after
 * `cacheStaleAfter` every admission that reads the Infrastructure was denied as "cluster view is stale".
 */
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCache } from "../../src/kube/cache.js";
import { systemClock } from "../../src/kube/clock.js";
import { connect } from "../../src/kube/config.js";
import { KINDS } from "../../src/kube/kinds.js";
import { infrastructure } from "../../src/local/seed.js";
import { startPlainTestCluster, type TestCluster } from "../cluster/backend.js";
import { waitFor } from "../support/wait.js";

const ns = { mapiNamespace: "openshift-machine-api", capiNamespace: "openshift-cluster-api" };
let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startPlainTestCluster("quiet-watch-", ns);
  await cluster.clientAs("admin").create(KINDS.infrastructure, infrastructure());
});

afterAll(async () => {
  await cluster?.stop();
});

describe("a quiet watch (SPEC §2.1)", () => {
  it("is open, and the view fresh, from the server's answer on, with no event on the kind", async () => {
    const { transport } = connect({ kubeconfigText: cluster.kubeconfigText, context: "controller" });
    const cache = createCache({ transport, logger: pino({ level: "silent" }), clock: systemClock });
    const informer = cache.informerFor(KINDS.infrastructure);
    try {
      await cache.waitForSync(60_000);
      expect(informer.list()).toHaveLength(1);
      // Nothing writes an Infrastructure from here on: only the watch's own answer can make it connected.
      await waitFor("the Infrastructure watch open", () => informer.freshness().disconnectedForMs === 0);
    } finally {
      await cache.stop();
    }
  });
});
