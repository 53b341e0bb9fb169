/**
 * Installer mode (SPEC §6 "Done when") on both backends: the local API server (`npm test`) and the real
 * control plane (`npm run test:cluster`, SPEC §8.1), where the installer runs as its own ServiceAccount
 * under the RBAC manifests/installer ships — so a permission it lacks fails here. Core + AWS applied in
 * phase order on an AWS Infrastructure, nothing on an unsupported platform, images and variables
 * substituted, zero writes on an unchanged re-run, pruning of a removed object but never of a removed CRD
 * (named in the status), no pruning at all when a ConfigMap is missing or broken, Progressing then Degraded
 * after five minutes on the test clock for a broken manifest, and re-applying on a ConfigMap update.
 * Assertions are on the objects as the admin reads them, the request counters and the ClusterOperator —
 * never on elapsed time.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { RESYNC_AFTER_MS } from "../../src/installer/cli.js";
import {
  DEMO_AWS_COMPONENTS,
  DEMO_CORE_COMPONENTS,
  DEMO_IMAGES,
} from "../../src/installer/demo-providers.js";
import { FIELD_MANAGER, HASH_ANNOTATION, PROVIDER_LABEL } from "../../src/installer/model.js";
import { KINDS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { conditionOf, getPath } from "../../src/kube/object.js";
import { type Bed, NS, PLACEHOLDER, startBed, transport, TYPES as types } from "./harness.js";

const beds: Bed[] = [];
afterEach(async () => {
  for (const b of beds.splice(0)) await b.stop();
});

const CORE_CM = "capi-provider-cluster-api";
const AWS_CM = "capi-provider-infrastructure-aws";
const IMAGES_CM = "machine-api-migration-images";

/** Drops the documents of `components` whose text contains every one of `needles`. */
const withoutDocument = (components: string, ...needles: string[]): string =>
  components
    .split(/^---$/m)
    .filter((d) => !needles.every((n) => d.includes(n)))
    .join("---");

const imagesConfigMap = (extra: Record<string, string> = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: IMAGES_CM, namespace: NS },
  data: { ...DEMO_IMAGES, ...extra },
});

async function awsBed(options: { variables?: Record<string, string>; core?: string; aws?: string } = {}) {
  const bed = await startBed();
  beds.push(bed);
  await bed.setPlatform("AWS");
  await bed.admin.client.create(KINDS.configMap, imagesConfigMap(options.variables));
  await bed.admin.client.create(
    KINDS.configMap,
    transport("cluster-api", "core", "v1.10.0", options.core ?? DEMO_CORE_COMPONENTS),
  );
  await bed.admin.client.create(
    KINDS.configMap,
    transport("aws", "infrastructure", "v2.9.0", options.aws ?? DEMO_AWS_COMPONENTS),
  );
  await bed.start();
  return bed;
}

const replaceConfigMap = async (bed: Bed, next: KubeObject): Promise<void> => {
  const live = await bed.admin.client.get(KINDS.configMap, NS, String(next.metadata?.name));
  await bed.admin.client.update(KINDS.configMap, {
    ...next,
    metadata: { ...next.metadata, resourceVersion: live.metadata?.resourceVersion },
  });
};

const rv = (o: KubeObject | undefined): number => Number(o?.metadata?.resourceVersion);
const condition = async (bed: Bed, type: string) => conditionOf(await bed.clusterOperator(), type);

/** The installer's hash of what it applied, on every object it applied (16 hex digits). */
const HASH = expect.stringMatching(/^[0-9a-f]{16}$/);

/** An object as the admin reads it: kind, name, the provider that owns it and the installer's hash. */
const applied = (o: KubeObject | undefined) => [
  o?.kind,
  o?.metadata?.name,
  o?.metadata?.labels?.[PROVIDER_LABEL],
  o?.metadata?.annotations?.[HASH_ANNOTATION],
];

const imageOf = (d: KubeObject | undefined): string | undefined =>
  (getPath(d, ["spec", "template", "spec", "containers"]) as { image: string }[] | undefined)?.[0]?.image;

/** What the demo providers render on an AWS cluster, in the order the installer writes it (SPEC §6 phases). */
const DEMO_AWS_WRITES = [
  "CustomResourceDefinition machinehealthchecks.cluster.x-k8s.io",
  "CustomResourceDefinition clusterclasses.cluster.x-k8s.io",
  "CustomResourceDefinition awsclustertemplates.infrastructure.cluster.x-k8s.io",
  "CustomResourceDefinition awsclustercontrolleridentities.infrastructure.cluster.x-k8s.io",
  "ServiceAccount capi-manager",
  "Role capi-leader-election-role",
  "RoleBinding capi-leader-election-rolebinding",
  "ClusterRole capi-manager-role",
  "ClusterRoleBinding capi-manager-rolebinding",
  "Service capi-webhook-service",
  "ServiceAccount capa-controller-manager",
  "Role capa-leader-election-role",
  "RoleBinding capa-leader-election-rolebinding",
  "ClusterRole capa-manager-role",
  "ClusterRoleBinding capa-manager-rolebinding",
  "Service capa-webhook-service",
  "Deployment capi-controller-manager",
  "Deployment capa-controller-manager",
];
const writtenBy = (run: { outcome?: { written: { kind: string; name: string }[] } }) =>
  run.outcome?.written.map((r) => `${r.kind} ${r.name}`);

describe("installer: apply (SPEC §6)", () => {
  it("core + AWS applied on an AWS Infrastructure: CRDs first, then the rest, then Deployments", async () => {
    const bed = await awsBed();
    const run = bed.runs.at(-1)!;
    expect(run.report.kind).toBe("installed");

    const crdNames = [
      "machinehealthchecks.cluster.x-k8s.io",
      "clusterclasses.cluster.x-k8s.io",
      "awsclustertemplates.infrastructure.cluster.x-k8s.io",
      "awsclustercontrolleridentities.infrastructure.cluster.x-k8s.io",
    ];
    const crds = await Promise.all(crdNames.map((n) => bed.get(types.crds, "", n)));
    for (const c of crds) expect(conditionOf(c, "Established")?.status).toBe("True");
    const deployments = await Promise.all(
      ["capi-controller-manager", "capa-controller-manager"].map((n) => bed.get(types.deployments, NS, n)),
    );
    const middle = await Promise.all([
      bed.get(types.serviceaccounts, NS, "capi-manager"),
      bed.get(types.roles, NS, "capa-leader-election-role"),
      bed.get(types.clusterrolebindings, "", "capi-manager-rolebinding"),
      bed.get(types.services, NS, "capa-webhook-service"),
    ]);
    expect([...crds, ...middle, ...deployments].map(applied)).toEqual([
      ["CustomResourceDefinition", "machinehealthchecks.cluster.x-k8s.io", "cluster-api", HASH],
      ["CustomResourceDefinition", "clusterclasses.cluster.x-k8s.io", "cluster-api", HASH],
      [
        "CustomResourceDefinition",
        "awsclustertemplates.infrastructure.cluster.x-k8s.io",
        "infrastructure-aws",
        HASH,
      ],
      [
        "CustomResourceDefinition",
        "awsclustercontrolleridentities.infrastructure.cluster.x-k8s.io",
        "infrastructure-aws",
        HASH,
      ],
      ["ServiceAccount", "capi-manager", "cluster-api", HASH],
      ["Role", "capa-leader-election-role", "infrastructure-aws", HASH],
      ["ClusterRoleBinding", "capi-manager-rolebinding", "cluster-api", HASH],
      ["Service", "capa-webhook-service", "infrastructure-aws", HASH],
      ["Deployment", "capi-controller-manager", "cluster-api", HASH],
      ["Deployment", "capa-controller-manager", "infrastructure-aws", HASH],
    ]);
    // One global resourceVersion counter (etcd's revision on the real server): write order is its order.
    expect(Math.max(...crds.map(rv))).toBeLessThan(Math.min(...middle.map(rv)));
    expect(Math.max(...middle.map(rv))).toBeLessThan(Math.min(...deployments.map(rv)));
    // Core before infrastructure within a phase.
    expect(rv(deployments[0])).toBeLessThan(rv(deployments[1]));
    // Every rendered object written once, in phase order: CRDs, then the rest, then the Deployments.
    expect(writtenBy(run)).toEqual(DEMO_AWS_WRITES);

    // Rendering: namespace forced, labels, subjects, no Namespace object, service-ca annotations.
    expect(await bed.get(types.namespaces, "", "capi-system")).toBeUndefined();
    const binding = await bed.get(types.clusterrolebindings, "", "capi-manager-rolebinding");
    expect(binding?.subjects).toEqual([{ kind: "ServiceAccount", name: "capi-manager", namespace: NS }]);
    expect(binding?.metadata?.labels?.[PROVIDER_LABEL]).toBe("cluster-api");
    expect(deployments[1]?.metadata?.labels?.[PROVIDER_LABEL]).toBe("infrastructure-aws");
    expect((await bed.get(types.services, NS, "capi-webhook-service"))?.metadata?.annotations).toMatchObject({
      "service.beta.openshift.io/serving-cert-secret-name": "capi-webhook-service-cert",
    });

    const co = await bed.clusterOperator();
    expect(conditionOf(co, "Available")).toMatchObject({ status: "True", reason: "AsExpected" });
    expect(conditionOf(co, "Available")?.message).toMatch(
      /^Installed cluster-api v1\.10\.0 \(revision [0-9a-f]{16}\), infrastructure-aws v2\.9\.0 \(revision [0-9a-f]{16}\)\.$/,
    );
    expect(conditionOf(co, "Progressing")?.status).toBe("False");
    expect(conditionOf(co, "Degraded")?.status).toBe("False");
    expect(co?.status?.versions).toEqual([
      { name: "cluster-api", version: "v1.10.0" },
      { name: "infrastructure-aws", version: "v2.9.0" },
    ]);
  });

  it("images and variables substituted (defaults and values from the images ConfigMap)", async () => {
    const bed = await awsBed({ variables: { CAPA_LOGLEVEL: "4", MANAGER_REPLICAS: "2" } });
    const capa = await bed.get(types.deployments, NS, "capa-controller-manager");
    const capi = await bed.get(types.deployments, NS, "capi-controller-manager");
    const container = (d: KubeObject | undefined) =>
      (getPath(d, ["spec", "template", "spec", "containers"]) as { image: string; args: string[] }[])[0]!;
    expect(container(capi).image).toBe(DEMO_IMAGES["cluster-api"]);
    expect(container(capa).image).toBe(DEMO_IMAGES["infrastructure-aws"]);
    expect(container(capa).args).toEqual([
      "--leader-elect",
      "--v=4",
      "--diagnostics-address=:8443",
      "--feature-gates=EKS=false,MachinePool=false",
    ]);
    expect(capa?.spec?.replicas).toBe(2);
    expect(capi?.spec?.replicas).toBe(2);
  });

  it("a second run with no change makes zero writes", async () => {
    const bed = await awsBed();
    expect(writtenBy(bed.runs.at(-1)!)).toEqual(DEMO_AWS_WRITES);
    const writes = bed.installerWrites();
    // One write per object, then the ClusterOperator's creation and its status.
    expect(writes).toBe(DEMO_AWS_WRITES.length + 2);
    const runs = bed.runs.length;
    await bed.clock.advance(RESYNC_AFTER_MS);
    const again = await bed.nextRun(runs);
    expect(again.report.kind).toBe("installed");
    expect(again.outcome?.written).toEqual([]);
    expect(again.outcome?.unchanged).toBe(DEMO_AWS_WRITES.length);
    expect(again.statusWritten).toBe(false);
    expect(bed.installerWrites()).toBe(writes);
  });

  it("drift on an applied field is repaired on the next run", async () => {
    const bed = await awsBed();
    const role = await bed.admin.client.get(types.roles, NS, "capi-leader-election-role");
    expect(role.metadata?.annotations?.[HASH_ANNOTATION]).toMatch(/^[0-9a-f]{16}$/);
    await bed.admin.client.patch(types.roles, NS, "capi-leader-election-role", {
      type: "merge",
      body: { rules: [] },
    });
    const runs = bed.runs.length;
    await bed.clock.advance(RESYNC_AFTER_MS);
    const again = await bed.nextRun(runs, (r) => (r.outcome?.written.length ?? 0) > 0);
    expect(again.outcome?.written.map((r) => r.name)).toEqual(["capi-leader-election-role"]);
    expect((await bed.get(types.roles, NS, "capi-leader-election-role"))?.rules).toEqual(role.rules);
  });

  it("nothing applied on an unsupported platform, reported as such", async () => {
    const bed = await startBed();
    beds.push(bed);
    await bed.setPlatform("BareMetal");
    await bed.admin.client.create(KINDS.configMap, imagesConfigMap());
    await bed.admin.client.create(
      KINDS.configMap,
      transport("cluster-api", "core", "v1.10.0", DEMO_CORE_COMPONENTS),
    );
    await bed.start();
    expect(bed.runs.at(-1)?.report).toEqual({ kind: "unsupportedPlatform", platform: "BareMetal" });
    expect(await bed.list(types.deployments, NS)).toEqual([]);
    expect(await bed.get(types.crds, "", "clusterclasses.cluster.x-k8s.io")).toBeUndefined();
    expect(await condition(bed, "Available")).toMatchObject({
      status: "True",
      reason: "UnsupportedPlatform",
      message:
        "Platform BareMetal has no Cluster API infrastructure provider in this installer; nothing is installed.",
    });
    // The only writes: creating the ClusterOperator and its status.
    expect(bed.installerWrites()).toBe(2);
  });
});

describe("installer: prune (SPEC §6 safety rules)", () => {
  it("a removed object is pruned, a removed CRD is not and is named in the status", async () => {
    const bed = await awsBed();
    // Someone else's object with the provider label: never ours to delete.
    const notes = await bed.admin.client.create(KINDS.configMap, {
      metadata: { name: "admin-notes", namespace: NS, labels: { [PROVIDER_LABEL]: "cluster-api" } },
      data: { note: "kept" },
    });
    const core = withoutDocument(
      withoutDocument(
        withoutDocument(DEMO_CORE_COMPONENTS, "kind: RoleBinding", "capi-leader-election-rolebinding"),
        "kind: Role\n",
        "capi-leader-election-role",
      ),
      "kind: CustomResourceDefinition",
      "clusterclasses",
    );
    expect(core).not.toContain("capi-leader-election-role");
    const crdBefore = await bed.get(types.crds, "", "clusterclasses.cluster.x-k8s.io");
    const capaRoleBefore = await bed.get(types.roles, NS, "capa-leader-election-role");
    const runs = bed.runs.length;
    await replaceConfigMap(bed, transport("cluster-api", "core", "v1.10.0", core));
    const run = await bed.nextRun(runs, (r) => (r.outcome?.pruned.length ?? 0) > 0);

    expect(run.report.kind).toBe("installed");
    expect(run.outcome?.pruned.map((r) => `${r.kind} ${r.name}`).sort()).toEqual([
      "Role capi-leader-election-role",
      "RoleBinding capi-leader-election-rolebinding",
    ]);
    expect(await bed.get(types.roles, NS, "capi-leader-election-role")).toBeUndefined();
    expect(await bed.get(types.rolebindings, NS, "capi-leader-election-rolebinding")).toBeUndefined();
    expect(run.outcome?.leftForManualRemoval.map((r) => `${r.kind} ${r.name}`)).toEqual([
      "CustomResourceDefinition clusterclasses.cluster.x-k8s.io",
    ]);
    // The CRD is the same object, not deleted (nor being deleted), still serving its kind.
    const crd = await bed.get(types.crds, "", "clusterclasses.cluster.x-k8s.io");
    expect(crd?.metadata?.uid).toBe(crdBefore?.metadata?.uid);
    expect(crd?.metadata?.deletionTimestamp).toBeUndefined();
    expect(conditionOf(crd, "Established")?.status).toBe("True");
    // The admin's object and the other provider's objects are untouched.
    const notesAfter = await bed.get(types.configmaps, NS, "admin-notes");
    expect(notesAfter?.metadata?.resourceVersion).toBe(notes.metadata?.resourceVersion);
    expect(notesAfter?.data).toEqual({ note: "kept" });
    const capaRole = await bed.get(types.roles, NS, "capa-leader-election-role");
    expect(capaRole?.metadata?.resourceVersion).toBe(capaRoleBefore?.metadata?.resourceVersion);
    expect(applied(capaRole)).toEqual(["Role", "capa-leader-election-role", "infrastructure-aws", HASH]);
    expect((await condition(bed, "Available"))?.message).toContain(
      "Left the provider manifests but never deleted automatically (remove by hand once nothing uses them): CustomResourceDefinition clusterclasses.cluster.x-k8s.io.",
    );
  });

  const countAll = async (bed: Bed): Promise<number> => {
    let n = 0;
    for (const t of Object.values(types))
      n += (await bed.list(t)).filter((o) => o.metadata?.labels?.[PROVIDER_LABEL]).length;
    return n;
  };

  it("a missing ConfigMap prunes nothing", async () => {
    const bed = await awsBed();
    const before = await countAll(bed);
    const capa = await bed.get(types.deployments, NS, "capa-controller-manager");
    const runs = bed.runs.length;
    await bed.admin.client.delete(KINDS.configMap, NS, AWS_CM);
    const run = await bed.nextRun(runs, (r) => r.report.kind === "failed");
    expect(run.report.kind).toBe("failed");
    expect(run.outcome?.pruned).toEqual([]);
    expect(run.outcome?.pruneHeld).toBe("a transport ConfigMap is missing or does not render");
    expect(await countAll(bed)).toBe(before);
    // Not even written: the same object at the same resourceVersion.
    const capaAfter = await bed.get(types.deployments, NS, "capa-controller-manager");
    expect(capaAfter?.metadata?.uid).toBe(capa?.metadata?.uid);
    expect(capaAfter?.metadata?.resourceVersion).toBe(capa?.metadata?.resourceVersion);
    expect((await condition(bed, "Progressing"))?.message).toContain(
      `no transport ConfigMap for the infrastructure provider aws (ConfigMap in ${NS} labelled provider.cluster.x-k8s.io/name=aws, provider.cluster.x-k8s.io/type=infrastructure)`,
    );
  });

  it("a broken (unparseable) ConfigMap prunes nothing", async () => {
    const bed = await awsBed();
    const before = await countAll(bed);
    const capi = await bed.get(types.deployments, NS, "capi-controller-manager");
    const runs = bed.runs.length;
    const broken = transport("cluster-api", "core", "v1.10.0", PLACEHOLDER);
    broken.data = { components: "apiVersion: v1\nkind: [ServiceAccount\n" };
    await replaceConfigMap(bed, broken);
    const run = await bed.nextRun(runs, (r) => r.report.kind === "failed");
    expect(run.report.kind).toBe("failed");
    expect(run.outcome?.pruned).toEqual([]);
    expect(await countAll(bed)).toBe(before);
    const capiAfter = await bed.get(types.deployments, NS, "capi-controller-manager");
    expect(capiAfter?.metadata?.uid).toBe(capi?.metadata?.uid);
    expect(capiAfter?.metadata?.resourceVersion).toBe(capi?.metadata?.resourceVersion);
    expect((await condition(bed, "Progressing"))?.message).toContain(
      `ConfigMap ${NS}/${CORE_CM}: YAML document 1 line`,
    );
  });
});

describe("installer: status and re-runs (SPEC §6)", () => {
  it("a broken manifest: Progressing at once, Degraded only after failures persist 5 minutes, the object named", async () => {
    const brokenCrd = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: awsmanagedthings.infrastructure.cluster.x-k8s.io
spec:
  group: infrastructure.cluster.x-k8s.io
  names: {kind: AWSManagedWidget, plural: awsmanagedwidgets}
  scope: Namespaced
  versions:
  - name: v1beta2
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object}}
`;
    const bed = await awsBed({ aws: `${DEMO_AWS_COMPONENTS}---${brokenCrd}` });
    const first = bed.runs.at(-1)!;
    expect(first.report.kind).toBe("failed");
    const progressing = await condition(bed, "Progressing");
    expect(progressing).toMatchObject({ status: "True", reason: "InstallFailed" });
    expect(progressing?.message).toContain(
      "CustomResourceDefinition awsmanagedthings.infrastructure.cluster.x-k8s.io (provider infrastructure-aws):",
    );
    expect(progressing?.message).toContain('must be spec.names.plural+"."+spec.group');
    expect(await condition(bed, "Degraded")).toMatchObject({ status: "False" });
    expect(await condition(bed, "Available")).toMatchObject({ status: "False", reason: "NotInstalled" });
    // The broken provider goes no further than its failed phase; core installs completely.
    expect(await bed.get(types.deployments, NS, "capa-controller-manager")).toBeUndefined();
    const capi = await bed.get(types.deployments, NS, "capi-controller-manager");
    expect(applied(capi)).toEqual(["Deployment", "capi-controller-manager", "cluster-api", HASH]);
    expect(imageOf(capi)).toBe(DEMO_IMAGES["cluster-api"]);

    const before = bed.runs.length;
    await bed.clock.advance(4 * 60_000);
    expect((await bed.nextRun(before)).report.kind).toBe("failed");
    expect(await condition(bed, "Degraded")).toMatchObject({ status: "False" });

    await vi.waitFor(
      async () => {
        await bed.clock.advance(30_000);
        expect((await condition(bed, "Degraded"))?.status).toBe("True");
      },
      { timeout: 15_000, interval: 50 },
    );
    const degraded = await condition(bed, "Degraded");
    expect(degraded?.reason).toBe("InstallFailed");
    expect(degraded?.message).toContain(
      "CustomResourceDefinition awsmanagedthings.infrastructure.cluster.x-k8s.io",
    );
  });

  it("a ConfigMap update re-applies: new version and changed Deployment", async () => {
    const bed = await awsBed();
    const before = await bed.get(types.deployments, NS, "capa-controller-manager");
    const runs = bed.runs.length;
    const next = DEMO_AWS_COMPONENTS.replace("--leader-elect", "--leader-elect=true");
    await replaceConfigMap(bed, transport("aws", "infrastructure", "v2.9.1", next));
    const run = await bed.nextRun(runs, (r) => (r.outcome?.written.length ?? 0) > 0);
    expect(run.outcome?.written.map((r) => `${r.kind} ${r.name}`)).toEqual([
      "Deployment capa-controller-manager",
    ]);
    const capa = await bed.get(types.deployments, NS, "capa-controller-manager");
    expect(
      (getPath(capa, ["spec", "template", "spec", "containers"]) as { args: string[] }[])[0]?.args,
    ).toEqual([
      "--leader-elect=true",
      "--v=0",
      "--diagnostics-address=:8443",
      "--feature-gates=EKS=false,MachinePool=false",
    ]);
    // Re-applied by the installer's field manager, with the hash of what it applied now.
    expect(
      (capa?.metadata?.managedFields as { manager?: string; operation?: string }[] | undefined)
        ?.filter((f) => f.manager === FIELD_MANAGER)
        .map((f) => f.operation),
    ).toEqual(["Apply"]);
    expect(capa?.metadata?.uid).toBe(before?.metadata?.uid);
    expect(applied(capa)).toEqual(["Deployment", "capa-controller-manager", "infrastructure-aws", HASH]);
    expect(capa?.metadata?.annotations?.[HASH_ANNOTATION]).not.toBe(
      before?.metadata?.annotations?.[HASH_ANNOTATION],
    );
    expect((await bed.clusterOperator())?.status?.versions).toEqual([
      { name: "cluster-api", version: "v1.10.0" },
      { name: "infrastructure-aws", version: "v2.9.1" },
    ]);
  });

  it("an Infrastructure change re-runs: unsupported, then AWS installs", async () => {
    const bed = await startBed();
    beds.push(bed);
    await bed.setPlatform("None");
    await bed.admin.client.create(KINDS.configMap, imagesConfigMap());
    await bed.admin.client.create(
      KINDS.configMap,
      transport("cluster-api", "core", "v1.10.0", DEMO_CORE_COMPONENTS),
    );
    await bed.admin.client.create(
      KINDS.configMap,
      transport("aws", "infrastructure", "v2.9.0", DEMO_AWS_COMPONENTS),
    );
    await bed.start();
    expect(bed.runs.at(-1)?.report.kind).toBe("unsupportedPlatform");
    const runs = bed.runs.length;
    await bed.setPlatform("AWS");
    const run = await bed.nextRun(runs, (r) => r.report.kind === "installed");
    expect(writtenBy(run)).toEqual(DEMO_AWS_WRITES);
    const capa = await bed.get(types.deployments, NS, "capa-controller-manager");
    expect(applied(capa)).toEqual(["Deployment", "capa-controller-manager", "infrastructure-aws", HASH]);
    expect(imageOf(capa)).toBe(DEMO_IMAGES["infrastructure-aws"]);
    expect(await condition(bed, "Available")).toMatchObject({ status: "True", reason: "AsExpected" });
  });

  it("an images ConfigMap change re-applies the Deployments with the new image", async () => {
    const bed = await awsBed();
    const runs = bed.runs.length;
    await replaceConfigMap(bed, imagesConfigMap({ "infrastructure-aws": "quay.io/openshift/capa:4.21" }));
    const run = await bed.nextRun(runs, (r) => (r.outcome?.written.length ?? 0) > 0);
    expect(run.outcome?.written.map((r) => `${r.kind} ${r.name}`)).toEqual([
      "Deployment capa-controller-manager",
    ]);
    const capa = await bed.get(types.deployments, NS, "capa-controller-manager");
    expect(imageOf(capa)).toBe("quay.io/openshift/capa:4.21");
    expect(imageOf(await bed.get(types.deployments, NS, "capi-controller-manager"))).toBe(
      DEMO_IMAGES["cluster-api"],
    );
  });
});
