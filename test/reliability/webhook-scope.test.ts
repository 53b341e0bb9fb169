/**
 * Issue 11 item 8 (SPEC §2.2): what the rendered webhook configurations can ever send the webhook, checked by
 * kube's own matching semantics (src/apiserver/admission/matching.ts) over a grid of resources × namespaces ×
 * operations: only the machine kinds (every platform's InfraMachine and template among them) in the two
 * machine namespaces, never Pods, Leases, Events, ConfigMaps, Secrets, nor anything in kube-system or
 * kube-node-lease. And admission itself never calls the API server:
 * the local API server's request counters do not move while thousands of reviews are decided.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  type LabelSelector,
  namespaceSelectorMatches,
  parseRules,
  ruleMatches,
} from "../../src/apiserver/admission/matching.js";
import type { AdmissionAttributes } from "../../src/apiserver/admission/types.js";
import { type Cache, createCache } from "../../src/kube/cache.js";
import { systemClock } from "../../src/kube/clock.js";
import { connect } from "../../src/kube/config.js";
import type { KubeObject } from "../../src/kube/object.js";
import { type LocalCluster, startLocalCluster } from "../../src/local/cluster.js";
import { loadWebhookManifests } from "../../src/local/webhooks.js";
import { admissionInformers } from "../../src/main.js";
import { PLATFORMS } from "../../src/platforms/registry.js";
import { decide } from "../../src/policies/engine.js";
import type { PolicyContext } from "../../src/policies/types.js";
import { clusterView } from "../../src/policies/view.js";
import { buildServer } from "../../src/server/app.js";
import { createCertificateAuthority } from "../../src/server/certs.js";
import { renderKustomization } from "../manifests/helpers.js";
import { FIXTURE_NAMES, fixture } from "../server/helpers.js";

const MAPI_NS = "openshift-machine-api";
const CAPI_NS = "openshift-cluster-api";

/** Each platform's infrastructure machine kinds, at the version its provider serves. */
const infraMachineKinds = PLATFORMS.flatMap((p) => [p.infraMachine, p.infraMachineTemplate]);

const MACHINE_RESOURCES = new Set([
  "machine.openshift.io/machines",
  "machine.openshift.io/machinesets",
  "cluster.x-k8s.io/machines",
  "cluster.x-k8s.io/machinesets",
  // Every platform's InfraMachine and InfraMachineTemplate (SPEC §0, §5.5): awsmachines, openstackmachines, …
  ...infraMachineKinds.map((t) => `${t.group}/${t.plural}`),
]);

/** group, version, resource: the machine kinds and the kinds the webhook must never see. */
const RESOURCES: Array<[string, string, string]> = [
  ["machine.openshift.io", "v1beta1", "machines"],
  ["machine.openshift.io", "v1beta1", "machinesets"],
  ["cluster.x-k8s.io", "v1beta2", "machines"],
  ["cluster.x-k8s.io", "v1beta2", "machinesets"],
  ...infraMachineKinds.map((t): [string, string, string] => [t.group, t.version, t.plural]),
  ["", "v1", "pods"],
  ["", "v1", "configmaps"],
  ["", "v1", "secrets"],
  ["", "v1", "events"],
  ["events.k8s.io", "v1", "events"],
  ["coordination.k8s.io", "v1", "leases"],
  ["", "v1", "namespaces"],
  ["", "v1", "nodes"],
  ["apps", "v1", "deployments"],
  ["admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations"],
  ["apiextensions.k8s.io", "v1", "customresourcedefinitions"],
];
const NAMESPACES = [MAPI_NS, CAPI_NS, "kube-system", "kube-node-lease", "default", "openshift-config", ""];
const SUBRESOURCES = ["", "status", "scale", "eviction", "log"];
const OPERATIONS = ["CREATE", "UPDATE", "DELETE", "CONNECT"] as const;

interface Webhook {
  name: string;
  rules: unknown;
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
}

const webhooksOf = (objects: readonly KubeObject[]): Webhook[] =>
  objects
    .filter((o) => o.kind === "ValidatingWebhookConfiguration" || o.kind === "MutatingWebhookConfiguration")
    .flatMap((o) => (Array.isArray(o.webhooks) ? (o.webhooks as Webhook[]) : []));

/** Every (request shape, webhook) pair the configurations would dispatch. */
function dispatched(webhooks: readonly Webhook[]): Array<{ webhook: string; a: AdmissionAttributes }> {
  const out: Array<{ webhook: string; a: AdmissionAttributes }> = [];
  for (const [group, version, resource] of RESOURCES)
    for (const namespace of NAMESPACES)
      for (const subResource of SUBRESOURCES)
        for (const operation of OPERATIONS) {
          const a: AdmissionAttributes = {
            operation,
            kind: { group, version, kind: resource },
            resource: { group, version, resource },
            subResource,
            name: "x",
            ...(namespace
              ? { namespace, namespaceLabels: { "kubernetes.io/metadata.name": namespace } }
              : {}),
            object: { metadata: { name: "x", labels: {} } },
            oldObject: null,
            userInfo: { username: "kube:admin", groups: ["system:cluster-admins"] },
            dryRun: false,
            options: null,
          };
          for (const w of webhooks) {
            const matched =
              parseRules(w.rules).some((rule) => ruleMatches(rule, a)) &&
              namespaceSelectorMatches(w.namespaceSelector, a);
            if (matched) out.push({ webhook: w.name, a });
          }
        }
  return out;
}

const renderings: Array<[string, () => Promise<KubeObject[]>]> = [
  ["manifests/ (the kustomization a cluster applies)", () => renderKustomization("manifests")],
  ["manifests/overlays/cert-manager", () => renderKustomization("manifests/overlays/cert-manager")],
  ["manifests/webhooks.yaml (what local mode registers)", () => loadWebhookManifests()],
];

describe("webhook scope of the rendered manifests (item 8, SPEC §2.2)", () => {
  for (const [what, render] of renderings) {
    it(`${what}: only machine kinds in the two machine namespaces reach the webhook`, async () => {
      const webhooks = webhooksOf(await render());
      expect(webhooks.length).toBe(3);
      const hits = dispatched(webhooks);
      const outside = hits
        .filter(
          ({ a }) =>
            !MACHINE_RESOURCES.has(`${a.resource.group}/${a.resource.resource}`) ||
            (a.namespace !== MAPI_NS && a.namespace !== CAPI_NS) ||
            !["", "status", "scale"].includes(a.subResource ?? ""),
        )
        .map(
          ({ webhook, a }) =>
            `${webhook}: ${a.operation} ${a.resource.group}/${a.resource.resource}/${a.subResource} in ${a.namespace}`,
        );
      expect(outside).toEqual([]);
      // And the scope is not empty: every machine kind is seen in both namespaces.
      const seen = new Set(hits.map(({ a }) => `${a.resource.group}/${a.resource.resource}`));
      expect([...seen].sort()).toEqual([...MACHINE_RESOURCES].sort());
      expect(new Set(hits.map(({ a }) => a.namespace))).toEqual(new Set([MAPI_NS, CAPI_NS]));
    });
  }
});

describe("admission never calls the API server (item 8)", () => {
  let dir: string;
  let cluster: LocalCluster;
  let cache: Cache;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "reliability-scope-"));
    cluster = await startLocalCluster({
      host: "127.0.0.1",
      port: 0,
      stateDir: dir,
      mapiNamespace: MAPI_NS,
      capiNamespace: CAPI_NS,
      controllerUsers: [],
      webhookCaPem: createCertificateAuthority("scope test CA").certPem,
      logger: pino({ level: "silent" }),
      bookmarkIntervalMs: 600_000,
    });
    const connection = connect({ kubeconfigText: cluster.kubeconfigText, context: "controller" });
    cache = createCache({
      transport: connection.transport,
      logger: pino({ level: "silent" }),
      clock: systemClock,
      watchSilenceTimeoutMs: 600_000,
    });
    for (const [type, namespace] of admissionInformers({ mapiNamespace: MAPI_NS, capiNamespace: CAPI_NS }))
      cache.informerFor(type, namespace);
    await cache.waitForSync(30_000);
  }, 60_000);
  afterAll(async () => {
    await cache?.stop();
    await cluster?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("2,000 reviews decided from the informer cache: the API server's request counters do not move", async () => {
    const settings = {
      mapiNamespace: MAPI_NS,
      capiNamespace: CAPI_NS,
      controllerUsers: [],
      requireDeleteConfirmation: true,
      cacheStaleAfterMs: 600_000,
    };
    const policy: PolicyContext = {
      view: clusterView(cache, settings),
      settings,
      checkConvertible: () => [],
      enforcing: true,
    };
    const app = buildServer({
      decide: (webhook, request) => decide(webhook, request, policy),
      logger: pino({ level: "silent" }),
      registry: new Registry(),
      readiness: () => ({ ready: true }),
    });
    // Each informer opens its watch right after its list: wait until all of them are open.
    const informers = admissionInformers({ mapiNamespace: MAPI_NS, capiNamespace: CAPI_NS }).length;
    const watches = () => cluster.api.counters.snapshot().byVerb.watch ?? 0;
    await vi.waitFor(() => expect(watches()).toBeGreaterThanOrEqual(informers), { timeout: 10_000 });
    const before = cluster.api.counters.snapshot();
    const answers: number[] = [];
    for (let i = 0; i < 170; i++)
      for (const name of FIXTURE_NAMES) {
        const review = fixture(name);
        review.request.uid = `uid-${i}-${name}`;
        for (const path of ["/validate", "/validate-guard", "/mutate"]) {
          const res = await app.inject({ method: "POST", url: path, payload: review });
          answers.push(res.statusCode);
        }
      }
    await app.close();
    const after = cluster.api.counters.snapshot();
    expect(answers.length).toBe(170 * FIXTURE_NAMES.length * 3);
    expect(answers.every((s) => s === 200)).toBe(true);
    expect(after.byKey).toEqual(before.byKey);
    expect(after.total).toBe(before.total);
  }, 60_000);
});
