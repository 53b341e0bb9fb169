/**
 * Admission on a cluster that runs one platform (SPEC §0, §5.5): the process watches only that platform's
 * infrastructure kinds, and the informer cache answers a kind no informer watches as never synced
 * (src/kube/cache.ts) — a rule that read one would answer "cluster view is stale, retry" for ever. Reviews of
 * every platform's InfraMachine, InfraMachineTemplate and InfraCluster, the served platform's and the others',
 * are decided from MAPI and CAPI Machines and MachineSets and the Infrastructure alone, over the real cache's
 * answers for the kinds it does not watch: none is refused as stale, none reads another platform's kind, and a
 * paused mirror is still frozen whatever platform's kind it is.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createCache } from "../../src/kube/cache.js";
import { systemClock } from "../../src/kube/clock.js";
import { KINDS, type ResourceType } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import type { Transport } from "../../src/kube/transport.js";
import { PLATFORMS } from "../../src/platforms/registry.js";
import { decide } from "../../src/policies/engine.js";
import { memoryStore } from "../../src/policies/memory-store.js";
import type { AdmissionRequest, ObjectStore, WebhookName } from "../../src/policies/types.js";
import { clusterView } from "../../src/policies/view.js";
import type { PlatformConverter } from "../../src/sync/conversion/platform.js";
import { silentLogger } from "../kube/fakes.js";
import {
  awsClusterObject,
  awsMachine,
  awsMachineTemplate,
  createRequest,
  deleteRequest,
  edit,
  infrastructureObject,
  SETTINGS,
  twinWorld,
  updateRequest,
} from "./builders.js";

/** No informer is ever created, so nothing is ever sent. */
const unusedTransport: Transport = {
  request: () => Promise.reject(new Error("admission never calls the API server")),
  stream: () => Promise.reject(new Error("admission never calls the API server")),
};
const cache = createCache({ transport: unusedTransport, logger: silentLogger(), clock: systemClock });
afterAll(() => cache.stop());

const typeKey = (t: ResourceType): string => `${t.group}/${t.kind}`;
const infraKinds = (p: PlatformConverter): ResourceType[] => [
  p.infraMachine,
  p.infraMachineTemplate,
  p.infraCluster,
];

/**
 * The view of a process serving `served`: the kinds it watches (MAPI and CAPI Machines and MachineSets, the
 * Infrastructure, the served platform's infrastructure kinds) from memory, every other kind as the informer
 * cache answers a kind it has no informer for; every kind read is recorded.
 */
function servedStore(served: PlatformConverter, objects: KubeObject[]) {
  const memory = memoryStore(objects);
  const watched = new Set(
    [
      KINDS.mapiMachine,
      KINDS.mapiMachineSet,
      KINDS.capiMachine,
      KINDS.capiMachineSet,
      KINDS.infrastructure,
      ...infraKinds(served),
    ].map(typeKey),
  );
  const reads = new Set<string>();
  const from = (t: ResourceType): ObjectStore => {
    reads.add(typeKey(t));
    return watched.has(typeKey(t)) ? memory : cache;
  };
  const store: ObjectStore = {
    get: (t, namespace, name) => from(t).get(t, namespace, name),
    list: (t, namespace) => from(t).list(t, namespace),
    freshness: (t) => from(t).freshness(t),
  };
  return { store, reads };
}

/** `o` as the given kind (the registry's group, version and kind). */
const asKind = (o: KubeObject, type: ResourceType): KubeObject =>
  edit(o, (draft) => {
    draft.apiVersion = `${type.group}/${type.version}`;
    draft.kind = type.kind;
  });

/** CREATE, UPDATE (a spec change) and DELETE of each of a platform's infrastructure kinds. */
function reviewsOf(platform: PlatformConverter): [string, AdmissionRequest][] {
  const machine = asKind(awsMachine(), platform.infraMachine);
  const template = asKind(awsMachineTemplate(), platform.infraMachineTemplate);
  const cluster = asKind(awsClusterObject(), platform.infraCluster);
  const changed = (o: KubeObject) =>
    edit(o, (draft) => {
      const spec = draft.spec.template?.spec ?? draft.spec;
      spec.changedByAdmin = "yes";
    });
  return [machine, template, cluster].flatMap((o): [string, AdmissionRequest][] => [
    [`CREATE ${o.kind}`, createRequest(o)],
    [`UPDATE ${o.kind}`, updateRequest(o, changed(o))],
    [`DELETE ${o.kind}`, deleteRequest(o)],
  ]);
}

const WEBHOOKS: WebhookName[] = ["validate", "validate-guard", "mutate"];

const infrastructureOf = (p: PlatformConverter): KubeObject =>
  edit(infrastructureObject(), (i) => {
    i.spec.platformSpec = { type: p.platform };
    i.status.platform = p.platform;
    i.status.platformStatus = { type: p.platform };
  });

describe("the premise: the informer cache and a kind it has no informer for", () => {
  it.each(PLATFORMS.flatMap(infraKinds).map((t) => [t.kind, t] as const))(
    "%s: absent, listed as empty, and never synced",
    (_kind, type) => {
      expect(cache.get(type, SETTINGS.capiNamespace, "worker-a")).toBeUndefined();
      expect(cache.list(type, SETTINGS.capiNamespace)).toEqual([]);
      expect(cache.freshness(type)).toEqual({ synced: false, disconnectedForMs: Number.POSITIVE_INFINITY });
    },
  );
});

describe.each(PLATFORMS.map((p) => [p.platform, p] as const))(
  "a cluster serving %s (its cache watches only that platform's infrastructure kinds)",
  (_name, served) => {
    const objects = () => [infrastructureOf(served), ...twinWorld(served.platform)];

    describe.each(PLATFORMS.map((p) => [p.platform, p] as const))(
      "reviews of %s kinds",
      (_other, platform) => {
        it.each(reviewsOf(platform))(
          "%s: decided on every webhook without a stale view, reading no kind of another platform",
          (_what, request) => {
            const { store, reads } = servedStore(served, objects());
            const context = {
              view: clusterView(store, SETTINGS),
              settings: SETTINGS,
              checkConvertible: () => [],
              enforcing: true,
            };
            for (const webhook of WEBHOOKS) {
              const decision = decide(webhook, request, context);
              expect(decision.rule, webhook).not.toBe("engine");
              expect(decision.status?.message ?? "", webhook).not.toMatch(/cluster view is stale/);
            }
            const unserved = PLATFORMS.filter((p) => p !== served)
              .flatMap(infraKinds)
              .map(typeKey);
            expect([...reads].filter((k) => unserved.includes(k))).toEqual([]);
          },
        );

        it(`capi-frozen: the paused mirror ${platform.infraMachine.kind} of a MachineAPI Machine is frozen (decided as on its own platform)`, () => {
          const mirror = asKind(awsMachine(), platform.infraMachine);
          const { store } = servedStore(served, objects());
          const decision = decide(
            "validate",
            updateRequest(
              mirror,
              edit(mirror, (a) => {
                a.spec.instanceType = "m6i.2xlarge";
              }),
            ),
            {
              view: clusterView(store, SETTINGS),
              settings: SETTINGS,
              checkConvertible: () => [],
              enforcing: true,
            },
          );
          expect({ allowed: decision.allowed, rule: decision.rule }).toEqual({
            allowed: false,
            rule: "capi-frozen",
          });
          expect(decision.status?.message).toMatch(
            new RegExp(
              `^${platform.infraMachine.kind} openshift-cluster-api/worker-a is not authoritative \\(MAPI Machine openshift-machine-api/worker-a has status\\.authoritativeAPI=MachineAPI\\): spec\\.instanceType changed\\.`,
            ),
          );
        });
      },
    );
  },
);
