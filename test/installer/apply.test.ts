/**
 * The applier's ordering and safety rules (SPEC §6) against an in-memory client, where the tests control
 * what the server answers: CRDs first and the wait for Established (on the manual clock), a failed phase
 * stopping its own provider only, no write for an up-to-date object, and every prune guard — labelled,
 * managed by our field manager, never CRDs / Namespaces / admission configurations, and never after an
 * incomplete apply or without permission.
 */
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { ApplyDeps, PrunePermission } from "../../src/installer/apply.js";
import { applyProviders, isSubsetOf } from "../../src/installer/apply.js";
import {
  FIELD_MANAGER,
  HASH_ANNOTATION,
  PROVIDER_LABEL,
  TRANSPORT_LABELS,
} from "../../src/installer/model.js";
import { type RenderedProvider, renderProviders } from "../../src/installer/render.js";
import type { KubeClient } from "../../src/kube/client.js";
import { createManualClock, flushMicrotasks } from "../../src/kube/clock.js";
import type { ResourceResolver } from "../../src/kube/discovery.js";
import { InvalidError, NotFoundError } from "../../src/kube/errors.js";
import type { ResourceType } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { nameOf, namespaceOf } from "../../src/kube/object.js";

const NS = "openshift-cluster-api";

const CLUSTER_SCOPED = new Set([
  "CustomResourceDefinition",
  "ClusterRole",
  "ClusterRoleBinding",
  "Namespace",
  "ValidatingWebhookConfiguration",
  "MutatingWebhookConfiguration",
]);
const typeOf = (apiVersion: string, kind: string): ResourceType => {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  return {
    group: group!,
    version: version!,
    kind,
    plural: `${kind.toLowerCase()}s`,
    namespaced: !CLUSTER_SCOPED.has(kind),
  };
};
const resolver: ResourceResolver = { resolve: async (apiVersion, kind) => typeOf(apiVersion, kind) };

/** An in-memory API: apply stores the body (as the only manager's fields), CRDs become Established after `establishAfterGets` reads. */
function fakeApi(
  options: { establishAfterGets?: number; refuse?: (o: KubeObject) => string | undefined } = {},
) {
  const objects = new Map<string, KubeObject>();
  const calls: string[] = [];
  const bodies: KubeObject[] = [];
  const crdGets = new Map<string, number>();
  let rv = 0;
  const key = (t: ResourceType, ns: string, name: string) => `${t.plural}/${t.namespaced ? ns : ""}/${name}`;
  const established = (o: KubeObject): KubeObject => ({
    ...o,
    status: { conditions: [{ type: "Established", status: "True" }] },
  });
  const client: KubeClient = {
    async get(t, ns, name) {
      calls.push(`get ${t.kind} ${name}`);
      const o = objects.get(key(t, ns, name));
      if (!o) throw new NotFoundError(404, "NotFound", `${t.plural} "${name}" not found`);
      if (t.kind === "CustomResourceDefinition" && !o.status) {
        const n = (crdGets.get(name) ?? 0) + 1;
        crdGets.set(name, n);
        if (n >= (options.establishAfterGets ?? 0)) objects.set(key(t, ns, name), established(o));
      }
      return structuredClone(objects.get(key(t, ns, name))!);
    },
    async list(t, opts) {
      calls.push(`list ${t.kind}`);
      const [labelKey, values] = /^(\S+) in \((.*)\)$/.exec(opts?.labelSelector ?? "")?.slice(1) ?? [];
      const items = [...objects.entries()]
        .filter(([k]) => k.startsWith(`${t.plural}/`))
        .map(([, o]) => o)
        .filter((o) => !opts?.namespace || namespaceOf(o) === opts.namespace)
        .filter(
          (o) => !labelKey || (values ?? "").split(",").includes(o.metadata?.labels?.[labelKey] ?? "\u0000"),
        );
      return { items: structuredClone(items), resourceVersion: String(rv) };
    },
    async create() {
      throw new Error("the installer only applies");
    },
    async update() {
      throw new Error("the installer only applies");
    },
    async updateStatus() {
      throw new Error("the installer only applies");
    },
    async patch(t, ns, name, patch) {
      if (patch.type !== "apply") throw new Error("the installer only applies");
      calls.push(`apply ${t.kind} ${name}`);
      bodies.push(structuredClone(patch.body));
      expect(patch).toMatchObject({ fieldManager: FIELD_MANAGER, force: true });
      const refusal = options.refuse?.(patch.body);
      if (refusal) throw new InvalidError(422, "Invalid", refusal);
      const stored: KubeObject = {
        ...structuredClone(patch.body),
        metadata: {
          ...structuredClone(patch.body.metadata),
          resourceVersion: String(++rv),
          uid: `uid-${name}`,
          managedFields: [{ manager: FIELD_MANAGER, operation: "Apply" }],
        },
      };
      const k = key(t, ns, name);
      if (t.kind === "CustomResourceDefinition" && options.establishAfterGets === 0)
        objects.set(k, established(stored));
      else objects.set(k, stored);
      return structuredClone(objects.get(k)!);
    },
    async delete(t, ns, name, opts) {
      calls.push(`delete ${t.kind} ${name}`);
      const o = objects.get(key(t, ns, name));
      if (!o) throw new NotFoundError(404, "NotFound", "gone");
      expect(opts?.preconditions?.uid).toBe(o.metadata?.uid);
      objects.delete(key(t, ns, name));
      return {};
    },
  };
  const put = (o: KubeObject) => {
    const t = typeOf(String(o.apiVersion), String(o.kind));
    objects.set(key(t, namespaceOf(o), nameOf(o)), {
      ...o,
      metadata: { ...o.metadata, uid: `uid-${nameOf(o)}` },
    });
  };
  const has = (kind: string, name: string) =>
    [...objects.values()].some((o) => o.kind === kind && nameOf(o) === name);
  return { client, calls, bodies, objects, put, has };
}

const doc = (kind: string, name: string, apiVersion = "v1", extra = ""): string =>
  `apiVersion: ${apiVersion}\nkind: ${kind}\nmetadata:\n  name: ${name}\n${extra}`;
const IMAGE = "quay.io/example/manager:v1";
/** A Deployment as SPEC §6 admits it: under a ServiceAccount its provider ships, with an image of the map. */
const deployment = (name: string, serviceAccount: string): string =>
  doc(
    "Deployment",
    name,
    "apps/v1",
    `spec:\n  template:\n    spec:\n      serviceAccountName: ${serviceAccount}\n      containers: [{name: manager, image: ${IMAGE}}]\n`,
  );
/** A CRD in a group the provider type may define (the core provider's by default). */
const crd = (plural: string, group = "cluster.x-k8s.io") =>
  `apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: ${plural}.${group}\nspec:\n  group: ${group}\n  scope: Namespaced\n  names: {kind: K${plural}, plural: ${plural}}\n  versions: [{name: v1, served: true, storage: true}]\n`;

const render = (core: string[], infra: string[]): RenderedProvider[] =>
  renderProviders(
    [
      {
        name: "cluster-api",
        type: "core",
        version: "v1",
        configMap: `${NS}/core`,
        components: core.join("---\n"),
      },
      {
        name: "aws",
        type: "infrastructure",
        version: "v2",
        configMap: `${NS}/aws`,
        components: infra.join("---\n"),
      },
    ],
    { namespace: NS, images: { "cluster-api": IMAGE }, variables: {}, imagesConfigMap: "images" },
  ).map((r) => {
    if (!r.ok) throw new Error(r.errors.join("\n"));
    return r.provider;
  });

/** The images ConfigMap's name here: not a product name, so only the input guard keeps it. */
const IMAGES_CONFIGMAP = "provider-images";
const PRUNE_OK: PrunePermission = { allowed: true, labels: ["cluster-api", "infrastructure-aws"] };

const run = async (
  providers: RenderedProvider[],
  api: ReturnType<typeof fakeApi>,
  prune: PrunePermission = PRUNE_OK,
  extra: Partial<ApplyDeps> = {},
) => {
  const clock = createManualClock();
  const deps: ApplyDeps = {
    client: api.client,
    resolver,
    clock,
    logger: pino({ level: "silent" }),
    ...extra,
  };
  let done = false;
  const options = { namespace: NS, prune, imagesConfigMap: IMAGES_CONFIGMAP };
  const result = applyProviders(providers, options, { ...deps, clock }).finally(() => {
    done = true;
  });
  // Drive the Established polling on the manual clock until the run completes.
  for (let i = 0; i < 1000 && !done; i++) {
    await flushMicrotasks();
    if (!done) await clock.advance(500);
  }
  return result;
};

const standard = () =>
  render(
    [
      crd("widgets"),
      doc("ServiceAccount", "capi-manager"),
      deployment("capi-controller-manager", "capi-manager"),
    ],
    [
      crd("gadgets", "infrastructure.cluster.x-k8s.io"),
      doc("Role", "capa-role", "rbac.authorization.k8s.io/v1"),
      doc("ServiceAccount", "capa-manager"),
      deployment("capa-controller-manager", "capa-manager"),
    ],
  );

describe("apply: SPEC §6 order", () => {
  it("CRDs first, waits until each is Established, then all but Deployments, then Deployments; core before infrastructure", async () => {
    const api = fakeApi({ establishAfterGets: 3 });
    const outcome = await run(standard(), api);
    expect(outcome.failures).toEqual([]);
    const writesAndPolls = api.calls.filter(
      (c) => c.startsWith("apply") || c.startsWith("get CustomResourceDefinition"),
    );
    const firstNonCrd = writesAndPolls.indexOf("apply ServiceAccount capi-manager");
    const polls = writesAndPolls.slice(0, firstNonCrd).filter((c) => c.startsWith("get"));
    // Two reads before each apply (absent), then polls until the third read of each finds it Established.
    expect(polls.length).toBeGreaterThanOrEqual(4);
    expect(outcome.written.map((r) => `${r.kind} ${r.name}`)).toEqual([
      "CustomResourceDefinition widgets.cluster.x-k8s.io",
      "CustomResourceDefinition gadgets.infrastructure.cluster.x-k8s.io",
      "ServiceAccount capi-manager",
      "Role capa-role",
      "ServiceAccount capa-manager",
      "Deployment capi-controller-manager",
      "Deployment capa-controller-manager",
    ]);
  });

  it("a CRD never Established blocks its own provider, names the CRD, and the other provider completes", async () => {
    const api = fakeApi({ establishAfterGets: Number.POSITIVE_INFINITY });
    const providers = standard();
    const outcome = await run(providers, api, PRUNE_OK, { establishedTimeoutMs: 5_000 });
    expect(outcome.failures.map((f) => f.message)).toEqual([
      "CustomResourceDefinition widgets.cluster.x-k8s.io (provider cluster-api) is not Established after 5 s",
      "CustomResourceDefinition gadgets.infrastructure.cluster.x-k8s.io (provider infrastructure-aws) is not Established after 5 s",
    ]);
    expect(outcome.written.map((r) => r.kind)).toEqual([
      "CustomResourceDefinition",
      "CustomResourceDefinition",
    ]);
    expect(outcome.pruneHeld).toBe("not every object applied; nothing is pruned until a complete apply");
  });

  it("a refused object stops its provider's later phases; the other provider completes", async () => {
    const api = fakeApi({
      establishAfterGets: 0,
      refuse: (o) =>
        o.kind === "Role"
          ? 'Role.rbac.authorization.k8s.io "capa-role" is invalid: rules: Required value'
          : undefined,
    });
    const outcome = await run(standard(), api);
    expect(outcome.failures).toEqual([
      {
        message: `Role ${NS}/capa-role (provider infrastructure-aws): Role.rbac.authorization.k8s.io "capa-role" is invalid: rules: Required value`,
        ref: { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", namespace: NS, name: "capa-role" },
        provider: "infrastructure-aws",
      },
    ]);
    expect(api.has("Deployment", "capi-controller-manager")).toBe(true);
    expect(api.has("Deployment", "capa-controller-manager")).toBe(false);
  });

  it("an up-to-date object is not written; a drifted field is", async () => {
    const api = fakeApi({ establishAfterGets: 0 });
    await run(standard(), api);
    const second = await run(standard(), api);
    expect(second.written).toEqual([]);
    expect(second.unchanged).toBe(7);
    const sa = [...api.objects.values()].find((o) => nameOf(o) === "capi-manager")!;
    sa.metadata!.annotations = { ...sa.metadata!.annotations, [HASH_ANNOTATION]: "edited" };
    const third = await run(standard(), api);
    expect(third.written.map((r) => r.name)).toEqual(["capi-manager"]);
  });

  it("an update carries the resourceVersion it was decided on, so a concurrent change fails it instead of being overwritten", async () => {
    const api = fakeApi({ establishAfterGets: 0 });
    await run(standard(), api);
    const sa = [...api.objects.values()].find((o) => nameOf(o) === "capi-manager")!;
    sa.metadata!.annotations = { ...sa.metadata!.annotations, [HASH_ANNOTATION]: "edited" };
    const liveVersion = sa.metadata!.resourceVersion;
    api.bodies.length = 0;
    await run(standard(), api);
    expect(api.bodies.map((b) => [nameOf(b), b.metadata?.resourceVersion])).toEqual([
      ["capi-manager", liveVersion],
    ]);
  });
});

describe("apply: SPEC §6 never takes over an existing object that lacks the provider's label", () => {
  const takeover = (labels: Record<string, string> | undefined) =>
    `ConfigMap ${NS}/aws, document 3 (ServiceAccount capa-manager): outside bound no-takeover: ServiceAccount ${NS}/capa-manager exists and its label ${PROVIDER_LABEL} is ${labels ? `"${labels[PROVIDER_LABEL]}"` : "absent"}, not "infrastructure-aws": the installer never takes over an object it did not install (delete the object, or label it if this provider should own it)`;

  it.each([
    ["someone else's object, unlabelled", undefined],
    ["another provider's object", { [PROVIDER_LABEL]: "cluster-api" }],
  ])("%s: the provider writes nothing, the other provider installs, nothing is pruned", async (_, labels) => {
    const api = fakeApi({ establishAfterGets: 0 });
    api.put({
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "capa-manager", namespace: NS, ...(labels ? { labels } : {}) },
      secrets: [{ name: "theirs" }],
    });
    const outcome = await run(standard(), api);
    expect(outcome.failures.map((f) => f.message)).toEqual([takeover(labels)]);
    expect(outcome.written.map((r) => r.name)).toEqual([
      "widgets.cluster.x-k8s.io",
      "capi-manager",
      "capi-controller-manager",
    ]);
    expect(api.calls.filter((c) => c.startsWith("apply") && /capa|gadgets/.test(c))).toEqual([]);
    expect(api.objects.get("serviceaccounts/openshift-cluster-api/capa-manager")?.metadata?.labels).toEqual(
      labels,
    );
    expect(outcome.pruneHeld).toBe("not every object applied; nothing is pruned until a complete apply");
  });

  it("an object we installed whose provider label someone changed is left alone", async () => {
    const api = fakeApi({ establishAfterGets: 0 });
    await run(standard(), api);
    const sa = [...api.objects.values()].find((o) => nameOf(o) === "capa-manager")!;
    sa.metadata!.labels = { [PROVIDER_LABEL]: "edited" };
    const outcome = await run(standard(), api);
    expect(outcome.failures.map((f) => f.message)).toEqual([takeover({ [PROVIDER_LABEL]: "edited" })]);
    expect(outcome.written).toEqual([]);
  });
});

describe("apply: SPEC §6 prune guards", () => {
  const installedThenShrunk = async (prune: PrunePermission = PRUNE_OK) => {
    const api = fakeApi({ establishAfterGets: 0 });
    const extra = [
      doc("ServiceAccount", "old-sa"),
      crd("olds"),
      doc("ValidatingWebhookConfiguration", "old-webhooks", "admissionregistration.k8s.io/v1"),
    ];
    await run(
      render(
        [crd("widgets"), doc("ServiceAccount", "capi-manager"), ...extra],
        [doc("Role", "capa-role", "rbac.authorization.k8s.io/v1")],
      ),
      api,
    );
    // Labelled like ours but written by someone else: no managedFields of our manager.
    api.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "theirs", namespace: NS, labels: { [PROVIDER_LABEL]: "cluster-api" } },
    });
    // Ours, but of a provider not selected now.
    api.put({
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: {
        name: "gcp-sa",
        namespace: NS,
        labels: { [PROVIDER_LABEL]: "infrastructure-gcp" },
        managedFields: [{ manager: FIELD_MANAGER }],
      },
    });
    const outcome = await run(
      render(
        [crd("widgets"), doc("ServiceAccount", "capi-manager")],
        [doc("Role", "capa-role", "rbac.authorization.k8s.io/v1")],
      ),
      api,
      prune,
    );
    return { api, outcome };
  };

  it("deletes what left the manifests; reports CRDs and admission configurations instead; leaves others' objects", async () => {
    const { api, outcome } = await installedThenShrunk();
    expect(outcome.pruned.map((r) => `${r.kind} ${r.name}`)).toEqual(["ServiceAccount old-sa"]);
    expect(outcome.leftForManualRemoval.map((r) => `${r.kind} ${r.name}`).sort()).toEqual([
      "CustomResourceDefinition olds.cluster.x-k8s.io",
      "ValidatingWebhookConfiguration old-webhooks",
    ]);
    expect(api.has("ServiceAccount", "old-sa")).toBe(false);
    expect(api.has("CustomResourceDefinition", "olds.cluster.x-k8s.io")).toBe(true);
    expect(api.has("ConfigMap", "theirs")).toBe(true);
    expect(api.has("ServiceAccount", "gcp-sa")).toBe(true);
  });

  it("never deletes the product's own objects or the installer's input ConfigMaps, whatever labels they carry", async () => {
    // Defence in depth (SPEC §6: the product's Deployment, ServiceAccount and Secrets are never touched): each
    // carries a selected provider's label and our field manager, as the objects pruning looks for do.
    const api = fakeApi({ establishAfterGets: 0 });
    await run(standard(), api);
    const ours = (apiVersion: string, kind: string, name: string, labels: Record<string, string> = {}) =>
      api.put({
        apiVersion,
        kind,
        metadata: {
          name,
          namespace: NS,
          labels: { [PROVIDER_LABEL]: "cluster-api", ...labels },
          managedFields: [{ manager: FIELD_MANAGER }],
        },
      });
    ours("apps/v1", "Deployment", "machine-api-migration");
    ours("v1", "ServiceAccount", "machine-api-migration");
    ours("v1", "Secret", "machine-api-migration-tls");
    ours("v1", "ConfigMap", "capi-provider-core", { [TRANSPORT_LABELS.name]: "cluster-api" });
    ours("v1", "ConfigMap", IMAGES_CONFIGMAP);
    ours("v1", "ServiceAccount", "left-the-manifests");
    const outcome = await run(standard(), api);
    expect(outcome.failures).toEqual([]);
    expect(outcome.pruned.map((r) => `${r.kind} ${r.name}`)).toEqual(["ServiceAccount left-the-manifests"]);
    expect(outcome.leftForManualRemoval).toEqual([]);
    for (const [kind, name] of [
      ["Deployment", "machine-api-migration"],
      ["ServiceAccount", "machine-api-migration"],
      ["Secret", "machine-api-migration-tls"],
      ["ConfigMap", "capi-provider-core"],
      ["ConfigMap", IMAGES_CONFIGMAP],
    ])
      expect(api.has(kind!, name!), `${kind} ${name}`).toBe(true);
  });

  it("prunes nothing without permission (a ConfigMap missing or broken)", async () => {
    const { api, outcome } = await installedThenShrunk({
      allowed: false,
      reason: "a transport ConfigMap is missing or does not render",
    });
    expect(outcome.pruned).toEqual([]);
    expect(outcome.pruneHeld).toBe("a transport ConfigMap is missing or does not render");
    expect(api.has("ServiceAccount", "old-sa")).toBe(true);
    expect(api.calls.filter((c) => c.startsWith("delete"))).toEqual([]);
  });

  it("prunes nothing for an empty desired set", async () => {
    const api = fakeApi({ establishAfterGets: 0 });
    await run(standard(), api);
    const outcome = await run([], api);
    expect(outcome.pruneHeld).toBe("the desired set is empty");
    expect(api.calls.filter((c) => c.startsWith("delete"))).toEqual([]);
  });
});

describe("isSubsetOf", () => {
  it.each([
    [{ a: 1 }, { a: 1, b: 2 }, true],
    [{ a: { b: [1, { c: 2 }] } }, { a: { b: [1, { c: 2, d: 3 }] } }, true],
    [{ a: [1] }, { a: [1, 2] }, false],
    [{ a: 1 }, { a: "1" }, false],
    [{ a: { b: 1 } }, { a: null }, false],
    [[], [], true],
  ])("%j ⊆ %j: %s", (desired, live, expected) => {
    expect(isSubsetOf(desired, live)).toBe(expected);
  });
});
