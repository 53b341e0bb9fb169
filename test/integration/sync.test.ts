/**
 * The sync controllers (SPEC §4) against the local API server set up as local mode sets it up: the
 * project's CRDs, CAPA's AWSMachine defaulter, and the product's real admission webhook over HTTPS
 * (policy engine and informer cache as src/main.ts builds them), with MachineSync and MachineSetSync
 * running as the product's identity on the real converter. The providers are played by the tests, each
 * write under the identity of the controller it stands for (MAO, CAPI, CAPA), so the API server's request
 * counters separate the product's writes. One cluster for the file; every test uses its own names.
 * Waiting is polling for a state, never asserting elapsed time.
 */
import type { Server } from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Cache } from "../../src/kube/cache.js";
import type { KubeClient } from "../../src/kube/client.js";
import type { Controller } from "../../src/kube/controller.js";
import { NotFoundError, UnauthorizedError } from "../../src/kube/errors.js";
import type { ResourceType } from "../../src/kube/kinds.js";
import { ANNOTATIONS, FINALIZERS, KINDS, LABELS, PAUSED_BY_VALUE } from "../../src/kube/kinds.js";
import type { RuntimeMetrics } from "../../src/kube/metrics.js";
import type { KubeObject } from "../../src/kube/object.js";
import { conditionOf, getPath, isDeleting, nameOf } from "../../src/kube/object.js";
import { awsProviderSpec, mapiMachine, mapiMachineSet } from "../../src/local/seed.js";
import { SERVICE_ACCOUNT, type TestCluster } from "../cluster/backend.js";
import { waitFor } from "../support/wait.js";
import { startValidatingWebhook, type ValidatingWebhook } from "../support/webhook.js";
import { CAPI_NS, type Harness, MAPI_NS, ns, PRODUCT, startHarness } from "./harness.js";
import { createUnpausedTwins } from "./support.js";

/** Names the deny webhook refuses CAPI Machine creates for (the §4.5 admission-refusal row). */
const REFUSED_PREFIX = "refused-";
const REFUSAL_TEXT = "CAPI Machines named refused-* are not admitted here";

let h: Harness;
let cluster: TestCluster;
let denier: Server;
let cache: Cache;
let controllers: Controller[] = [];
let metrics: RuntimeMetrics;
let admin: KubeClient;
let mao: KubeClient;
let capa: KubeClient;
let product: KubeClient;

/** A validating webhook that refuses CAPI Machine creates named `refused-*`, whoever sends them. */
const startDenier = (): Promise<ValidatingWebhook> =>
  startValidatingWebhook("sync test deny webhook CA", (request) =>
    String(request.name || request.object?.metadata?.name || "").startsWith(REFUSED_PREFIX)
      ? REFUSAL_TEXT
      : undefined,
  );

beforeAll(async () => {
  // The sync controllers alone on the product's shared cache, the real webhook; the tests play the providers.
  h = await startHarness({
    name: "sync-integration",
    migration: false,
    standIns: false,
    // Fast backoff keeps the retries of the 409 and refusal rows quick; the runtime's doubling still applies.
    syncBaseDelayMs: 5,
    syncMaxDelayMs: 500,
    informers: [
      [KINDS.mapiMachine, MAPI_NS],
      [KINDS.mapiMachineSet, MAPI_NS],
      [KINDS.capiMachine, CAPI_NS],
      [KINDS.capiMachineSet, CAPI_NS],
      [KINDS.awsMachine, CAPI_NS],
      [KINDS.awsMachineTemplate, CAPI_NS],
      [KINDS.awsCluster, CAPI_NS],
      [KINDS.infrastructure, ""],
    ],
  });
  cluster = h.cluster;
  admin = h.admin;
  mao = cluster.clientAs("mao");
  capa = cluster.clientAs("capa");
  product = cluster.clientAs("controller");
  cache = h.productCache();
  controllers = [...h.controllers()];
  metrics = h.metrics;

  const deny = await startDenier();
  denier = deny.server;
  await admin.create(
    {
      group: "admissionregistration.k8s.io",
      version: "v1",
      kind: "ValidatingWebhookConfiguration",
      plural: "validatingwebhookconfigurations",
      namespaced: false,
    },
    {
      metadata: { name: "sync-test-deny" },
      webhooks: [
        {
          name: "deny.sync-test.example.com",
          admissionReviewVersions: ["v1"],
          clientConfig: { url: deny.url, caBundle: deny.caBundle },
          failurePolicy: "Fail",
          sideEffects: "None",
          rules: [
            {
              apiGroups: ["cluster.x-k8s.io"],
              apiVersions: ["v1beta2"],
              operations: ["CREATE"],
              resources: ["machines"],
            },
          ],
        },
      ],
    },
  );
}, 60_000);

afterAll(async () => {
  await h?.stop();
  await new Promise<void>((r) => (denier ? denier.close(() => r()) : r()));
});

// ------------------------------------------------------------------------------------------------ helpers

const getOrUndefined = (client: KubeClient, type: ResourceType, namespace: string, name: string) =>
  client.get(type, namespace, name).catch((e: unknown) => {
    if (e instanceof NotFoundError) return undefined;
    throw e;
  });

const synchronizedOf = (o: KubeObject | undefined) => conditionOf(o, "Synchronized");

/** MAO's part: the Machine exists with status.authoritativeAPI set (as MAO and the migration controller do). */
const createMapiMachine = async (
  name: string,
  authority: "MachineAPI" | "ClusterAPI",
  change: (m: KubeObject) => KubeObject = (m) => m,
): Promise<KubeObject> => {
  const base = mapiMachine(ns, name, "a");
  const created = await mao.create(
    KINDS.mapiMachine,
    change({
      ...base,
      metadata: {
        ...base.metadata,
        ...(authority === "MachineAPI" ? { finalizers: [FINALIZERS.mapiMachine] } : {}),
      },
      spec: { ...base.spec, authoritativeAPI: authority },
    }),
  );
  return mao.updateStatus(KINDS.mapiMachine, {
    ...created,
    status: { authoritativeAPI: authority, synchronizedAPI: authority },
  });
};

/** A MAPI MachineSet (0 replicas) with status.authoritativeAPI set, as MAO and the migration controller leave it. */
const createMapiMachineSet = async (
  name: string,
  authority: "MachineAPI" | "ClusterAPI",
): Promise<KubeObject> => {
  const set = renamed(mapiMachineSet(ns, "a", 0), name);
  const spec = structuredClone(set.spec) as Record<string, unknown>;
  spec.authoritativeAPI = authority;
  const created = await mao.create(KINDS.mapiMachineSet, { ...set, spec });
  return mao.updateStatus(KINDS.mapiMachineSet, {
    ...created,
    status: { authoritativeAPI: authority, synchronizedAPI: authority, replicas: 0 },
  });
};

const synchronizedMapi = (type: ResourceType, name: string, reason = "ResourceSynchronized") =>
  waitFor(`${type.kind} ${name} Synchronized=True`, async () => {
    const o = await product.get(type, MAPI_NS, name);
    const c = synchronizedOf(o);
    // §4.5: the generation of the source object — the MAPI copy, or the CAPI twin under ClusterAPI.
    const source =
      getPath(o, ["status", "authoritativeAPI"]) === "ClusterAPI"
        ? await product.get(
            type === KINDS.mapiMachine ? KINDS.capiMachine : KINDS.capiMachineSet,
            CAPI_NS,
            name,
          )
        : o;
    if (
      c?.status === "True" &&
      c.reason === reason &&
      getPath(o, ["status", "synchronizedGeneration"]) === source.metadata?.generation
    )
      return o;
    // Thrown, not returned: a timeout then names what was last seen.
    throw new Error(`last seen: status ${JSON.stringify(o.status)}, generation ${o.metadata?.generation}`);
  });

/** Writes by the product's identity to the machine kinds, from the API server's own counters. */
const productMachineWrites = (): number => {
  const byKey = cluster.counters().byKey;
  const machineResources = [
    "machine.openshift.io/machines",
    "machine.openshift.io/machinesets",
    "cluster.x-k8s.io/machines",
    "cluster.x-k8s.io/machinesets",
    "infrastructure.cluster.x-k8s.io/awsmachines",
    "infrastructure.cluster.x-k8s.io/awsmachinetemplates",
  ];
  let n = 0;
  for (const [key, count] of Object.entries(byKey)) {
    const [verb, resource, user] = key.split(" ");
    if (user !== PRODUCT || !["create", "update", "patch", "delete"].includes(verb ?? "")) continue;
    if (machineResources.some((r) => resource === r || resource?.startsWith(`${r}/`))) n += count;
  }
  return n;
};

const reconciles = async (): Promise<number> =>
  (await metrics.reconcileTotal.get()).values.reduce((sum, v) => sum + v.value, 0);

const idle = () =>
  controllers.every((c) => (c.queue()?.len() ?? 0) === 0 && (c.queue()?.processing().length ?? 0) === 0);

// ---------------------------------------------------------------------------------------------- the tests

describe("SPEC §4.2/§4.3 MAPI → CAPI", () => {
  it("a MachineAPI Machine gets a paused, marked, finalized CAPI Machine and AWSMachine; Synchronized=True", async () => {
    await createMapiMachine("sync-m1", "MachineAPI");
    const mapi = await synchronizedMapi(KINDS.mapiMachine, "sync-m1");
    expect(mapi.metadata?.finalizers).toContain(FINALIZERS.sync);
    for (const type of [KINDS.capiMachine, KINDS.awsMachine]) {
      const o = await product.get(type, CAPI_NS, "sync-m1");
      expect(o.metadata?.annotations?.[ANNOTATIONS.paused]).toBe("");
      expect(o.metadata?.annotations?.[ANNOTATIONS.pausedBy]).toBe(PAUSED_BY_VALUE);
      expect(o.metadata?.finalizers).toContain(FINALIZERS.sync);
    }
    const capi = await product.get(KINDS.capiMachine, CAPI_NS, "sync-m1");
    expect(getPath(capi, ["spec", "infrastructureRef"])).toMatchObject({
      kind: "AWSMachine",
      name: "sync-m1",
    });
    expect(synchronizedOf(mapi)?.message).toBe("Successfully synchronized MAPI Machine to CAPI");
  });

  it("a MachineAPI MachineSet gets a paused CAPI MachineSet and a labelled AWSMachineTemplate", async () => {
    const name = "sync-ms1";
    await createMapiMachineSet(name, "MachineAPI");
    await synchronizedMapi(KINDS.mapiMachineSet, name);
    const capi = await product.get(KINDS.capiMachineSet, CAPI_NS, name);
    const templateName = String(getPath(capi, ["spec", "template", "spec", "infrastructureRef", "name"]));
    expect(templateName).toMatch(new RegExp(`^${name}-[0-9a-f]{8}$`));
    const template = await product.get(KINDS.awsMachineTemplate, CAPI_NS, templateName);
    expect(template.metadata?.labels?.[LABELS.templateMachineSet]).toBe(name);
    expect(capi.metadata?.annotations?.[ANNOTATIONS.pausedBy]).toBe(PAUSED_BY_VALUE);
  });

  it("after convergence a reconcile of every key writes nothing to any machine kind (quiet interval)", async () => {
    await waitFor("controllers idle", async () => idle());
    const writesBefore = productMachineWrites();
    const reconcilesBefore = await reconciles();
    const keys =
      new Set([
        ...cache.list(KINDS.mapiMachine, MAPI_NS).map(nameOf),
        ...cache.list(KINDS.capiMachine, CAPI_NS).map(nameOf),
      ]).size +
      new Set([
        ...cache.list(KINDS.mapiMachineSet, MAPI_NS).map(nameOf),
        ...cache.list(KINDS.capiMachineSet, CAPI_NS).map(nameOf),
      ]).size;
    // The event that drives the interval: a change to the Infrastructure concerns every key of both controllers.
    const infra = await admin.get(KINDS.infrastructure, "", "cluster");
    await admin.patch(KINDS.infrastructure, "", "cluster", {
      type: "merge",
      body: {
        metadata: {
          annotations: { "sync-test/touched": String(Date.now()) },
          resourceVersion: infra.metadata?.resourceVersion,
        },
      },
    });
    await waitFor(
      "every key reconciled",
      async () => (await reconciles()) >= reconcilesBefore + keys && idle(),
    );
    expect(productMachineWrites()).toBe(writesBefore);
  });

  it("a providerSpec change on a MachineSet rotates the template: old labelled one deleted, hand-made kept", async () => {
    const name = "sync-ms1";
    const handMade = await admin.create(KINDS.awsMachineTemplate, {
      apiVersion: "infrastructure.cluster.x-k8s.io/v1beta2",
      kind: "AWSMachineTemplate",
      metadata: { name: `${name}-handmade`, namespace: CAPI_NS },
      spec: { template: { spec: { instanceType: "m6i.large", ami: { id: "ami-0c5d61202c3b9c33e" } } } },
    });
    const before = await product.get(KINDS.capiMachineSet, CAPI_NS, name);
    const oldTemplate = String(getPath(before, ["spec", "template", "spec", "infrastructureRef", "name"]));
    const live = await admin.get(KINDS.mapiMachineSet, MAPI_NS, name);
    await admin.patch(KINDS.mapiMachineSet, MAPI_NS, name, {
      type: "merge",
      body: {
        metadata: { resourceVersion: live.metadata?.resourceVersion },
        spec: {
          template: { spec: { providerSpec: { value: awsProviderSpec("us-east-1a", "m6i.2xlarge") } } },
        },
      },
    });
    const synced = await waitFor("rotation complete", async () => {
      const mapi = await product.get(KINDS.mapiMachineSet, MAPI_NS, name);
      const c = synchronizedOf(mapi);
      return c?.status === "True" &&
        getPath(mapi, ["status", "synchronizedGeneration"]) === mapi.metadata?.generation
        ? mapi
        : undefined;
    });
    expect(synced.metadata?.generation).toBe(2);
    const after = await product.get(KINDS.capiMachineSet, CAPI_NS, name);
    const newTemplate = String(getPath(after, ["spec", "template", "spec", "infrastructureRef", "name"]));
    expect(newTemplate).not.toBe(oldTemplate);
    const rotated = await product.get(KINDS.awsMachineTemplate, CAPI_NS, newTemplate);
    expect(getPath(rotated, ["spec", "template", "spec", "instanceType"])).toBe("m6i.2xlarge");
    await waitFor("old template gone", async () =>
      (await getOrUndefined(product, KINDS.awsMachineTemplate, CAPI_NS, oldTemplate)) === undefined
        ? true
        : undefined,
    );
    expect((await product.get(KINDS.awsMachineTemplate, CAPI_NS, nameOf(handMade))).metadata?.uid).toBe(
      handMade.metadata?.uid,
    );
  });

  it("an InfraMachine deleted out of band is released and recreated (new uid), the Machine stays synchronized", async () => {
    const name = "sync-m1";
    const before = await product.get(KINDS.awsMachine, CAPI_NS, name);
    await capa.delete(KINDS.awsMachine, CAPI_NS, name);
    const recreated = await waitFor("AWSMachine recreated", async () => {
      const o = await getOrUndefined(product, KINDS.awsMachine, CAPI_NS, name);
      return o && o.metadata?.uid !== before.metadata?.uid && !o.metadata?.deletionTimestamp ? o : undefined;
    });
    expect(recreated.metadata?.annotations?.[ANNOTATIONS.pausedBy]).toBe(PAUSED_BY_VALUE);
    await waitFor("sync finalizer back", async () =>
      (await product.get(KINDS.awsMachine, CAPI_NS, name)).metadata?.finalizers?.includes(FINALIZERS.sync)
        ? true
        : undefined,
    );
    expect(synchronizedOf(await product.get(KINDS.mapiMachine, MAPI_NS, name))?.status).toBe("True");
  });
});

describe("SPEC §4.5 failure modes", () => {
  it("conversion error: Synchronized=False with every field error, no CAPI twin, synchronizedGeneration unchanged", async () => {
    const name = "sync-bad1";
    await createMapiMachine(name, "MachineAPI", (m) => ({
      ...m,
      spec: {
        ...(m.spec as Record<string, unknown>),
        providerSpec: { value: { ...awsProviderSpec("us-east-1a"), deviceIndex: 1 } },
      },
    }));
    const mapi = await waitFor("Synchronized=False", async () => {
      const o = await product.get(KINDS.mapiMachine, MAPI_NS, name);
      return synchronizedOf(o)?.status === "False" ? o : undefined;
    });
    const c = synchronizedOf(mapi);
    expect(c?.reason).toBe("FailedToConvertMAPIMachineToCAPI");
    expect(c?.message).toContain(
      "spec.providerSpec.value.deviceIndex: Invalid value: 1: deviceIndex must be 0 or unset",
    );
    expect(getPath(mapi, ["status", "synchronizedGeneration"])).toBeUndefined();
    expect(await getOrUndefined(product, KINDS.capiMachine, CAPI_NS, name)).toBeUndefined();
  });

  it("409 on the sync's own write: retried with backoff, never reported as a condition", async () => {
    const name = "sync-conflict1";
    const match = { users: [PRODUCT], verbs: ["create"], resources: ["cluster.x-k8s.io/machines"] };
    const counted = () => cluster.counters().byKey[`create cluster.x-k8s.io/machines ${PRODUCT}`] ?? 0;
    const attemptsBefore = counted();
    h.cluster.faults.set({ rate409: 1, match });
    try {
      await createMapiMachine(name, "MachineAPI");
      await waitFor("three refused creates", async () => counted() >= attemptsBefore + 3);
      const mapi = await product.get(KINDS.mapiMachine, MAPI_NS, name);
      expect(synchronizedOf(mapi)).toBeUndefined();
    } finally {
      h.cluster.faults.clear();
    }
    await synchronizedMapi(KINDS.mapiMachine, name);
  });

  it("admission refusal: Synchronized=False, reason FailedToUpdateCAPIMachine, with the server's message", async () => {
    const name = `${REFUSED_PREFIX}m1`;
    await createMapiMachine(name, "MachineAPI");
    const mapi = await waitFor("Synchronized=False", async () => {
      const o = await product.get(KINDS.mapiMachine, MAPI_NS, name);
      return synchronizedOf(o)?.status === "False" ? o : undefined;
    });
    const c = synchronizedOf(mapi);
    expect(c?.reason).toBe("FailedToUpdateCAPIMachine");
    expect(c?.message).toContain('admission webhook "deny.sync-test.example.com" denied the request');
    expect(c?.message).toContain(REFUSAL_TEXT);
    expect(c?.message).toContain(`Machine ${CAPI_NS}/${name}`);
  });
});

describe("SPEC §4.2 ClusterAPI and §4.4 CAPI → MAPI", () => {
  it("a Machine born ClusterAPI gets an unpaused twin; a CAPI label change is synchronized back", async () => {
    const name = "sync-born1";
    await createMapiMachine(name, "ClusterAPI");
    const capi = await waitFor("CAPI twin", () => getOrUndefined(product, KINDS.capiMachine, CAPI_NS, name));
    expect(capi.metadata?.annotations?.[ANNOTATIONS.paused]).toBeUndefined();
    await waitFor("AWSMachine", () => getOrUndefined(product, KINDS.awsMachine, CAPI_NS, name));
    const live = await admin.get(KINDS.capiMachine, CAPI_NS, name);
    await admin.patch(KINDS.capiMachine, CAPI_NS, name, {
      type: "merge",
      body: {
        metadata: { resourceVersion: live.metadata?.resourceVersion, labels: { "example.com/team": "blue" } },
      },
    });
    // The label and the condition are two writes (the object, then its status): wait for both.
    const mapi = await waitFor("label and CAPI → MAPI condition on the MAPI copy", async () => {
      const o = await product.get(KINDS.mapiMachine, MAPI_NS, name);
      return o.metadata?.labels?.["example.com/team"] === "blue" &&
        synchronizedOf(o)?.message === "Successfully synchronized CAPI Machine to MAPI"
        ? o
        : undefined;
    });
    expect(synchronizedOf(mapi)).toMatchObject({
      status: "True",
      message: "Successfully synchronized CAPI Machine to MAPI",
    });
  });
});

describe("SPEC §4.2/§4.5 Events and §4.1 dynamic watches", () => {
  const eventsFor = async (name: string, reason: string) =>
    (await admin.list(KINDS.event, { namespace: MAPI_NS })).items.filter(
      (e) => getPath(e, ["involvedObject", "name"]) === name && e.reason === reason,
    );

  it("converter warnings become Warning Events ConversionWarning; the condition is still True", async () => {
    const name = "sync-warn1";
    const tags = [
      { name: "team", value: "blue" },
      { name: "team", value: "green" },
    ];
    await createMapiMachine(name, "MachineAPI", (m) => ({
      ...m,
      spec: {
        ...(m.spec as Record<string, unknown>),
        providerSpec: { value: { ...awsProviderSpec("us-east-1a"), tags } },
      },
    }));
    await synchronizedMapi(KINDS.mapiMachine, name);
    const events = await waitFor("ConversionWarning event", async () => {
      const found = await eventsFor(name, "ConversionWarning");
      return found.length > 0 ? found : undefined;
    });
    expect(events[0]?.type).toBe("Warning");
    expect(String(events[0]?.message)).toContain('duplicate tag name "team"');
  });

  it("an unpaused CAPI twin of a MachineAPI Machine is paused, marked needs-attention, reported with its instance", async () => {
    const name = "sync-race1";
    // A user's CAPI Machine and AWSMachine (with an instance) exist before the MAPI Machine: the race of §4.2.
    await createUnpausedTwins(admin, name, { instanceID: "i-0abc1234def567890" });
    await createMapiMachine(name, "MachineAPI");
    const mapi = await waitFor("Synchronized=False UnpausedTwinDetected", async () => {
      const o = await product.get(KINDS.mapiMachine, MAPI_NS, name);
      return synchronizedOf(o)?.reason === "UnpausedTwinDetected" ? o : undefined;
    });
    expect(synchronizedOf(mapi)?.message).toContain("i-0abc1234def567890");
    for (const type of [KINDS.capiMachine, KINDS.awsMachine]) {
      const o = await waitFor(`${type.kind} paused and marked`, async () => {
        const live = await product.get(type, CAPI_NS, name);
        return live.metadata?.annotations?.[ANNOTATIONS.needsAttention] !== undefined ? live : undefined;
      });
      expect(o.metadata?.annotations?.[ANNOTATIONS.paused]).toBe("");
      expect(o.metadata?.deletionTimestamp).toBeUndefined();
    }
    const events = await waitFor("UnpausedTwinDetected event", async () => {
      const found = await eventsFor(name, "UnpausedTwinDetected");
      return found.length > 0 ? found : undefined;
    });
    expect(events[0]?.type).toBe("Warning");
    expect(String(events[0]?.message)).toContain("i-0abc1234def567890");
  });

  it("a CAPI Machine referencing a new infrastructure kind starts its informer at run time and maps it back", async () => {
    const crdName = "demomachines.infrastructure.cluster.x-k8s.io";
    await admin.create(KINDS.customResourceDefinition, {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: crdName },
      spec: {
        group: "infrastructure.cluster.x-k8s.io",
        scope: "Namespaced",
        names: {
          plural: "demomachines",
          singular: "demomachine",
          kind: "DemoMachine",
          listKind: "DemoMachineList",
        },
        versions: [
          {
            name: "v1beta2",
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
          },
        ],
      },
    });
    await waitFor("CRD served", async () => {
      const crd = await admin.get(KINDS.customResourceDefinition, "", crdName);
      return conditionOf(crd, "Established")?.status === "True" ? true : undefined;
    });
    // Whoever adds a platform adds its RBAC too: the product may read the new kind (on the real control
    // plane a watch without it is refused; the shipped RBAC names only the kinds the product knows).
    const roles = { ...KINDS.lease, group: "rbac.authorization.k8s.io", kind: "Role", plural: "roles" };
    const bindings = { ...roles, kind: "RoleBinding", plural: "rolebindings" };
    await admin.create(roles, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: "demo-platform-reader", namespace: CAPI_NS },
      rules: [
        {
          apiGroups: ["infrastructure.cluster.x-k8s.io"],
          resources: ["demomachines"],
          verbs: ["get", "list", "watch"],
        },
      ],
    });
    await admin.create(bindings, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "demo-platform-reader", namespace: CAPI_NS },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "demo-platform-reader" },
      subjects: [{ kind: "ServiceAccount", name: "machine-api-migration", namespace: CAPI_NS }],
    });
    const demoType = { ...KINDS.awsMachine, kind: "DemoMachine", plural: "demomachines" };
    const name = "sync-dyn1";
    const watched = () => cache.informers().some((i) => i.type.kind === "DemoMachine");
    expect(watched()).toBe(false);
    // A CAPI-only Machine (no MAPI twin, no set): the sync ignores it, but still watches what it references.
    await admin.create(KINDS.capiMachine, {
      apiVersion: "cluster.x-k8s.io/v1beta2",
      kind: "Machine",
      metadata: { name, namespace: CAPI_NS },
      spec: {
        clusterName: "demo-7xk2p",
        bootstrap: { dataSecretName: "worker-user-data" },
        infrastructureRef: { apiGroup: "infrastructure.cluster.x-k8s.io", kind: "DemoMachine", name },
      },
    });
    await waitFor("DemoMachine informer started", async () => watched() || undefined);
    const before = await reconciles();
    await admin.create(demoType, {
      apiVersion: "infrastructure.cluster.x-k8s.io/v1beta2",
      kind: "DemoMachine",
      metadata: { name, namespace: CAPI_NS },
      spec: {},
    });
    // The new kind's events reach the controller: the DemoMachine is in the cache and its key reconciled.
    await waitFor("DemoMachine event reconciled", async () =>
      cache.get(demoType, CAPI_NS, name) && (await reconciles()) > before ? true : undefined,
    );
  });
});

describe("SPEC §4.6 deletion", () => {
  it("MachineAPI: deleting the MAPI Machine deletes the twins, waits for MAO, then releases all; nothing leaks", async () => {
    const name = "sync-del1";
    await createMapiMachine(name, "MachineAPI");
    await synchronizedMapi(KINDS.mapiMachine, name);
    await admin.delete(KINDS.mapiMachine, MAPI_NS, name);
    // The twins are deleted, but held: MAO has not terminated the instance yet.
    await waitFor("CAPI Machine deleting", async () =>
      (await product.get(KINDS.capiMachine, CAPI_NS, name)).metadata?.deletionTimestamp ? true : undefined,
    );
    await waitFor("AWSMachine deleting", async () =>
      (await product.get(KINDS.awsMachine, CAPI_NS, name)).metadata?.deletionTimestamp ? true : undefined,
    );
    expect((await product.get(KINDS.awsMachine, CAPI_NS, name)).metadata?.finalizers).toContain(
      FINALIZERS.sync,
    );
    // MAO terminates the instance and removes its finalizer.
    const mapi = await mao.get(KINDS.mapiMachine, MAPI_NS, name);
    await mao.patch(KINDS.mapiMachine, MAPI_NS, name, {
      type: "json",
      body: [
        { op: "test", path: "/metadata/finalizers", value: mapi.metadata?.finalizers },
        {
          op: "replace",
          path: "/metadata/finalizers",
          value: (mapi.metadata?.finalizers ?? []).filter((f) => f !== FINALIZERS.mapiMachine),
        },
      ],
    });
    for (const [type, namespace] of [
      [KINDS.awsMachine, CAPI_NS],
      [KINDS.capiMachine, CAPI_NS],
      [KINDS.mapiMachine, MAPI_NS],
    ] as const)
      await waitFor(`${type.kind} ${name} gone`, async () =>
        (await getOrUndefined(product, type, namespace, name)) === undefined ? true : undefined,
      );
  });

  it("ClusterAPI: deleting the CAPI Machine deletes the MAPI copy and releases it; nothing leaks", async () => {
    const name = "sync-del2";
    await createMapiMachine(name, "ClusterAPI");
    await synchronizedMapi(KINDS.mapiMachine, name);
    await waitFor("AWSMachine", () => getOrUndefined(product, KINDS.awsMachine, CAPI_NS, name));
    await admin.delete(KINDS.capiMachine, CAPI_NS, name);
    // Deleting, or already gone: once the sync has released its finalizer the copy can vanish between polls.
    await waitFor("MAPI copy deleting", async () => {
      const copy = await getOrUndefined(product, KINDS.mapiMachine, MAPI_NS, name);
      return copy === undefined || copy.metadata?.deletionTimestamp ? true : undefined;
    });
    // No Cluster API controller runs here, so the CAPI Machine never carried its finalizer and Cluster API would
    // never delete the InfraMachine: the sync deletes it itself (decision 199).
    for (const [type, namespace] of [
      [KINDS.mapiMachine, MAPI_NS],
      [KINDS.capiMachine, CAPI_NS],
      [KINDS.awsMachine, CAPI_NS],
    ] as const)
      await waitFor(`${type.kind} ${name} gone`, async () =>
        (await getOrUndefined(product, type, namespace, name)) === undefined ? true : undefined,
      );
  });

  it("MachineSet, MachineAPI: deleting the MAPI copy deletes the CAPI MachineSet and its labelled templates", async () => {
    const name = "sync-ms1";
    const capi = await product.get(KINDS.capiMachineSet, CAPI_NS, name);
    const template = String(getPath(capi, ["spec", "template", "spec", "infrastructureRef", "name"]));
    await admin.delete(KINDS.mapiMachineSet, MAPI_NS, name);
    for (const [type, namespace, n] of [
      [KINDS.mapiMachineSet, MAPI_NS, name],
      [KINDS.capiMachineSet, CAPI_NS, name],
      [KINDS.awsMachineTemplate, CAPI_NS, template],
    ] as const)
      await waitFor(`${type.kind} ${n} gone`, async () =>
        (await getOrUndefined(product, type, namespace, n)) === undefined ? true : undefined,
      );
    // The hand-made template of the rotation test is not the product's to delete.
    expect(await product.get(KINDS.awsMachineTemplate, CAPI_NS, `${name}-handmade`)).toBeDefined();
  });
});

describe("SPEC §4.6 MachineSets under ClusterAPI", () => {
  it("deleting the non-authoritative MAPI copy orphans its Machines first; the CAPI MachineSet keeps running", async () => {
    const name = "sync-ms2";
    const set = await createMapiMachineSet(name, "ClusterAPI");
    await synchronizedMapi(KINDS.mapiMachineSet, name);
    const capiSet = await product.get(KINDS.capiMachineSet, CAPI_NS, name);
    expect(capiSet.metadata?.annotations?.[ANNOTATIONS.paused]).toBeUndefined();
    // A Machine the MAPI MachineSet created earlier (MAO's part), owned by it.
    await createMapiMachine(`${name}-x1`, "ClusterAPI", (m) => ({
      ...m,
      metadata: {
        ...m.metadata,
        ownerReferences: [
          {
            apiVersion: "machine.openshift.io/v1beta1",
            kind: "MachineSet",
            name,
            uid: set.metadata?.uid ?? "",
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
    }));
    await waitFor(
      "the set's Machine synchronized",
      async () =>
        synchronizedOf(await product.get(KINDS.mapiMachine, MAPI_NS, `${name}-x1`))?.status === "True" ||
        undefined,
    );
    await admin.delete(KINDS.mapiMachineSet, MAPI_NS, name);
    await waitFor(
      "MAPI MachineSet gone",
      async () =>
        (await getOrUndefined(product, KINDS.mapiMachineSet, MAPI_NS, name)) === undefined || undefined,
    );
    const machine = await product.get(KINDS.mapiMachine, MAPI_NS, `${name}-x1`);
    expect(machine.metadata?.deletionTimestamp).toBeUndefined();
    expect(machine.metadata?.ownerReferences ?? []).toEqual([]);
    const still = await product.get(KINDS.capiMachineSet, CAPI_NS, name);
    expect(still.metadata?.uid).toBe(capiSet.metadata?.uid);
    expect(still.metadata?.deletionTimestamp).toBeUndefined();
  });

  it("deleting the authoritative CAPI copy deletes the MAPI copy", async () => {
    const name = "sync-ms3";
    await createMapiMachineSet(name, "ClusterAPI");
    await synchronizedMapi(KINDS.mapiMachineSet, name);
    await admin.delete(KINDS.capiMachineSet, CAPI_NS, name);
    for (const [type, namespace] of [
      [KINDS.mapiMachineSet, MAPI_NS],
      [KINDS.capiMachineSet, CAPI_NS],
    ] as const)
      await waitFor(
        `${type.kind} ${name} gone`,
        async () => (await getOrUndefined(product, type, namespace, name)) === undefined || undefined,
      );
  });
});

describe("SPEC §4.6 storage being removed (last: it deletes the CAPI namespace)", () => {
  it("a deleting CAPI namespace: nothing is propagated, no finalizer removed, Synchronized=False StorageBeingRemoved while the product has its identity", async () => {
    const name = "sync-storage1";
    await createMapiMachine(name, "MachineAPI");
    await synchronizedMapi(KINDS.mapiMachine, name);
    // Synchronized=True can be written before the twins' sync finalizers land (their guarded patches retry on
    // a conflict): the claim is that none is removed, so start from all of them in place.
    await waitFor("the twins' sync finalizers", async () => {
      const withFinalizer = async (type: typeof KINDS.capiMachine) =>
        (await admin.get(type, CAPI_NS, name)).metadata?.finalizers?.includes(FINALIZERS.sync);
      return (await withFinalizer(KINDS.capiMachine)) && (await withFinalizer(KINDS.awsMachine))
        ? true
        : undefined;
    });
    await admin.delete(KINDS.namespace, "", CAPI_NS);
    // Read as the admin: on a real cluster the namespace controller has already deleted the product's Role
    // and RoleBinding in the deleting namespace, so the product can no longer read there at all.
    await waitFor("the namespace controller deleting the CAPI Machine", async () =>
      isDeleting(await admin.get(KINDS.capiMachine, CAPI_NS, name)) ? true : undefined,
    );
    // The product's ServiceAccount lives in the namespace being deleted. On a real cluster the namespace
    // controller deletes it, in an order of its own, beside the twins; once kube-apiserver's token cache
    // (10 s) lets go, the product can neither read nor write, so it can no longer report. Either way it
    // released nothing: the report is owed only while the product still has its identity. (Reported
    // deterministically in test/integration/storage-removed.test.ts, where the product keeps its identity.)
    const outcome = await waitFor("StorageBeingRemoved, or the product's identity gone", async () => {
      const o = await admin.get(KINDS.mapiMachine, MAPI_NS, name);
      if (synchronizedOf(o)?.reason === "StorageBeingRemoved") return { reported: o };
      const refused = await product.get(KINDS.mapiMachine, MAPI_NS, name).then(
        () => false,
        (e: unknown) => e instanceof UnauthorizedError,
      );
      return refused ? { lockedOut: o } : undefined;
    });
    if ("reported" in outcome) {
      expect(synchronizedOf(outcome.reported)?.status).toBe("False");
    } else {
      expect(cluster.backend).toBe("real");
      // The product's identity (PRODUCT) is the ServiceAccount manifests/base names, in the CAPI namespace.
      expect(PRODUCT).toBe(`system:serviceaccount:${CAPI_NS}:machine-api-migration`);
      expect(await getOrUndefined(admin, SERVICE_ACCOUNT, CAPI_NS, "machine-api-migration")).toBeUndefined();
    }
    const mapi = await admin.get(KINDS.mapiMachine, MAPI_NS, name);
    expect(mapi.metadata?.deletionTimestamp).toBeUndefined();
    const capi = await admin.get(KINDS.capiMachine, CAPI_NS, name);
    expect(capi.metadata?.finalizers).toContain(FINALIZERS.sync);
    expect((await admin.get(KINDS.awsMachine, CAPI_NS, name)).metadata?.finalizers).toContain(
      FINALIZERS.sync,
    );
  });
});

/** The seed MachineSet under another name (its selector and template labels follow the name). */
function renamed(set: KubeObject, name: string): KubeObject {
  return JSON.parse(JSON.stringify(set).replaceAll(nameOf(set), name)) as KubeObject;
}
