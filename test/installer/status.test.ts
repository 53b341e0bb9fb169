/**
 * The ClusterOperator status (SPEC §6 "Status") and the reader's selection (SPEC §6 "Selection"), both pure:
 * Available / Progressing / Degraded for every kind of run, Degraded only after `degradedAfterMs` of
 * failures, messages naming the failing object, no change (so no write) when nothing changed, and which
 * transport ConfigMaps a platform selects — or why it selects none.
 */
import { describe, expect, it } from "vitest";
import { PLATFORM_PROVIDERS } from "../../src/installer/model.js";
import { imagesAndVariables, platformOf, selectProviders } from "../../src/installer/reader.js";
import {
  clusterOperatorStatus,
  failingSinceOf,
  previousKinds,
  type RunReport,
  type StatusInput,
} from "../../src/installer/status.js";
import type { KubeObject } from "../../src/kube/object.js";
import { conditionOf } from "../../src/kube/object.js";
import { PLATFORMS } from "../../src/platforms/registry.js";

const NS = "openshift-cluster-api";
const T0 = Date.parse("2026-11-30T10:00:00Z");
const MIN = 60_000;

const installed: RunReport = {
  kind: "installed",
  providers: [
    { label: "cluster-api", version: "v1.10.0", revision: "aaaa", configMap: `${NS}/core` },
    { label: "infrastructure-aws", version: "v2.9.0", revision: "bbbb", configMap: `${NS}/aws` },
  ],
  leftForManualRemoval: [],
  appliedKinds: [{ apiVersion: "apps/v1", kind: "Deployment" }],
};
const failed: RunReport = {
  kind: "failed",
  failures: ["Deployment openshift-cluster-api/capa-controller-manager (provider infrastructure-aws): boom"],
  appliedKinds: [{ apiVersion: "v1", kind: "Service" }],
};

const step = (previous: KubeObject | undefined, over: Partial<StatusInput>): KubeObject => ({
  metadata: { name: "machine-api-migration-installer" },
  status: clusterOperatorStatus({
    previous,
    report: installed,
    now: T0,
    failingSinceMs: undefined,
    degradedAfterMs: 5 * MIN,
    namespace: NS,
    ...over,
  }).status,
});
const conditions = (co: KubeObject) =>
  ["Available", "Progressing", "Degraded"].map((t) => [
    t,
    conditionOf(co, t)?.status,
    conditionOf(co, t)?.reason,
  ]);

describe("ClusterOperator status", () => {
  it("installed: Available with versions and revisions, not Progressing, not Degraded", () => {
    const co = step(undefined, {});
    expect(conditions(co)).toEqual([
      ["Available", "True", "AsExpected"],
      ["Progressing", "False", "AsExpected"],
      ["Degraded", "False", "AsExpected"],
    ]);
    expect(conditionOf(co, "Available")?.message).toBe(
      "Installed cluster-api v1.10.0 (revision aaaa), infrastructure-aws v2.9.0 (revision bbbb).",
    );
    expect(co.status?.versions).toEqual([
      { name: "cluster-api", version: "v1.10.0" },
      { name: "infrastructure-aws", version: "v2.9.0" },
    ]);
    expect(previousKinds(co)).toEqual([{ apiVersion: "apps/v1", kind: "Deployment" }]);
  });

  it("the same report again changes nothing (no write), even later", () => {
    const co = step(undefined, {});
    const again = clusterOperatorStatus({
      previous: co,
      report: installed,
      now: T0 + 60 * MIN,
      failingSinceMs: undefined,
      degradedAfterMs: 5 * MIN,
      namespace: NS,
    });
    expect(again.changed).toBe(false);
  });

  it("objects left for manual removal are named in Available", () => {
    const co = step(undefined, {
      report: {
        ...installed,
        leftForManualRemoval: [
          {
            apiVersion: "apiextensions.k8s.io/v1",
            kind: "CustomResourceDefinition",
            name: "olds.cluster.x-k8s.io",
          },
        ],
      },
    });
    expect(conditionOf(co, "Available")?.message).toBe(
      "Installed cluster-api v1.10.0 (revision aaaa), infrastructure-aws v2.9.0 (revision bbbb). Left the provider manifests but never deleted automatically (remove by hand once nothing uses them): CustomResourceDefinition olds.cluster.x-k8s.io.",
    );
  });

  it("unsupported platform: Available, reported as such", () => {
    const co = step(undefined, { report: { kind: "unsupportedPlatform", platform: "None" } });
    expect(conditions(co)).toEqual([
      ["Available", "True", "UnsupportedPlatform"],
      ["Progressing", "False", "UnsupportedPlatform"],
      ["Degraded", "False", "AsExpected"],
    ]);
  });

  it.each([
    [0, "False"],
    [4 * MIN, "False"],
    [5 * MIN - 1, "False"],
    [5 * MIN, "True"],
    [30 * MIN, "True"],
  ])("failing for %i ms: Progressing at once, Degraded %s", (elapsed, degraded) => {
    const co = step(undefined, { report: failed, now: T0 + elapsed, failingSinceMs: T0 });
    expect(conditionOf(co, "Progressing")).toMatchObject({
      status: "True",
      reason: "InstallFailed",
      message:
        "Installing provider components failed, retrying: Deployment openshift-cluster-api/capa-controller-manager (provider infrastructure-aws): boom",
    });
    expect(conditionOf(co, "Degraded")?.status).toBe(degraded);
    if (degraded === "True")
      expect(conditionOf(co, "Degraded")?.message).toBe(
        "Provider components cannot be installed: Deployment openshift-cluster-api/capa-controller-manager (provider infrastructure-aws): boom",
      );
  });

  it("a failure after a good install keeps Available (the components still run); before any, Available is False", () => {
    const good = step(undefined, {});
    const afterGood = step(good, { report: failed, now: T0 + MIN, failingSinceMs: T0 + MIN });
    expect(conditionOf(afterGood, "Available")).toEqual(conditionOf(good, "Available"));
    expect(afterGood.status?.versions).toEqual(good.status?.versions);
    expect(previousKinds(afterGood)).toEqual([
      { apiVersion: "apps/v1", kind: "Deployment" },
      { apiVersion: "v1", kind: "Service" },
    ]);
    const never = step(undefined, { report: failed, failingSinceMs: T0 });
    expect(conditionOf(never, "Available")).toMatchObject({ status: "False", reason: "NotInstalled" });
  });

  it("more than five failures are counted, not listed", () => {
    const many = Array.from({ length: 7 }, (_, i) => `failure ${i + 1}`);
    const co = step(undefined, {
      report: { kind: "failed", failures: many, appliedKinds: [] },
      failingSinceMs: T0,
    });
    expect(conditionOf(co, "Progressing")?.message).toBe(
      "Installing provider components failed, retrying: failure 1; failure 2; failure 3; failure 4; failure 5; and 2 more",
    );
  });

  it("every condition message is bounded, the failures counted however long each is (a status must stay writable)", () => {
    const huge = (i: number) => `failure ${i}: ${"x".repeat(300_000)}`;
    const co = step(undefined, {
      report: {
        kind: "failed",
        failures: Array.from({ length: 7 }, (_, i) => huge(i + 1)),
        appliedKinds: [],
      },
      now: T0 + 10 * MIN,
      failingSinceMs: T0,
    });
    for (const type of ["Progressing", "Degraded"]) {
      const message = conditionOf(co, type)?.message ?? "";
      expect(message.length, type).toBeLessThanOrEqual(4096);
      expect(message, type).toMatch(
        /^[A-Za-z, ]+: failure 1: x+ … \(\d+ characters left out\) … x+; failure 2: x+ … .*; and 2 more$/,
      );
    }
    const leftovers = Array.from({ length: 20_000 }, (_, i) => ({
      apiVersion: "v1",
      kind: "Widget",
      name: `w${i}`,
    }));
    const installedWithLeftovers = step(undefined, {
      report: { ...installed, leftForManualRemoval: leftovers },
    });
    const available = conditionOf(installedWithLeftovers, "Available")?.message ?? "";
    expect(available.length).toBeLessThanOrEqual(4096);
    expect(available).toMatch(
      /^Installed cluster-api v1\.10\.0 .*Widget w0, .* … \(\d+ characters left out\) … .*Widget w19999\.$/,
    );
  });

  it("a restarted installer resumes the failure clock from Progressing", () => {
    const co = step(undefined, { report: failed, now: T0, failingSinceMs: T0 });
    expect(failingSinceOf(co)).toBe(T0);
    expect(failingSinceOf(step(undefined, {}))).toBeUndefined();
  });

  it("recovery clears Progressing and Degraded", () => {
    const bad = step(undefined, { report: failed, now: T0 + 10 * MIN, failingSinceMs: T0 });
    expect(conditionOf(bad, "Degraded")?.status).toBe("True");
    const good = step(bad, { now: T0 + 11 * MIN });
    expect(conditions(good)).toEqual([
      ["Available", "True", "AsExpected"],
      ["Progressing", "False", "AsExpected"],
      ["Degraded", "False", "AsExpected"],
    ]);
  });
});

describe("reader: selection", () => {
  const infra = (type?: string): KubeObject => ({
    metadata: { name: "cluster" },
    status: type ? { platformStatus: { type } } : {},
  });
  const cm = (name: string, labels: Record<string, string>, components = "kind: x\n"): KubeObject => ({
    metadata: { name, namespace: NS, labels },
    data: { components },
  });
  const core = cm("core", {
    "provider.cluster.x-k8s.io/name": "cluster-api",
    "provider.cluster.x-k8s.io/type": "core",
    "provider.cluster.x-k8s.io/version": "v1.10.0",
  });
  const aws = cm("aws", {
    "provider.cluster.x-k8s.io/name": "aws",
    "provider.cluster.x-k8s.io/type": "infrastructure",
    "provider.cluster.x-k8s.io/version": "v2.9.0",
  });
  const gcp = cm("gcp", {
    "provider.cluster.x-k8s.io/name": "gcp",
    "provider.cluster.x-k8s.io/type": "infrastructure",
    "provider.cluster.x-k8s.io/version": "v1.8.0",
  });

  it("AWS selects the core provider and aws, core first, other platforms' ConfigMaps ignored", () => {
    const s = selectProviders(infra("AWS"), [gcp, aws, core], NS);
    expect(s.kind).toBe("selected");
    if (s.kind !== "selected") return;
    expect(s.sources.map((x) => [x.name, x.type, x.version, x.configMap])).toEqual([
      ["cluster-api", "core", "v1.10.0", `${NS}/core`],
      ["aws", "infrastructure", "v2.9.0", `${NS}/aws`],
    ]);
    expect(s.problems).toEqual([]);
  });

  it.each([
    [infra("BareMetal"), { kind: "unsupportedPlatform", platform: "BareMetal" }],
    [infra("None"), { kind: "unsupportedPlatform", platform: "None" }],
    [
      undefined,
      {
        kind: "infrastructureUnreadable",
        reason: "Infrastructure cluster not found: cannot tell which platform this is",
      },
    ],
    [
      infra(),
      {
        kind: "infrastructureUnreadable",
        reason: "Infrastructure cluster has no status.platformStatus.type yet",
      },
    ],
  ])("%j → %j", (infrastructure, expected) => {
    expect(selectProviders(infrastructure, [core, aws], NS)).toEqual(expected);
  });

  it("every platform the product converts has its infrastructure provider (issue 23: the installer's platform map)", () => {
    const names = Object.fromEntries(PLATFORMS.map((p) => [p.platform, PLATFORM_PROVIDERS[p.platform]]));
    expect(names).toEqual({ AWS: "aws", OpenStack: "openstack", PowerVS: "ibmcloud" });
  });

  it("the older status.platform is read when platformStatus is absent", () => {
    expect(platformOf({ status: { platform: "AWS" } })).toEqual({ ok: true, platform: "AWS" });
  });

  it.each([
    [
      "missing",
      [core],
      [
        "no transport ConfigMap for the infrastructure provider aws (ConfigMap in openshift-cluster-api labelled provider.cluster.x-k8s.io/name=aws, provider.cluster.x-k8s.io/type=infrastructure)",
      ],
    ],
    [
      "ambiguous",
      [core, aws, { ...aws, metadata: { ...aws.metadata, name: "aws-2" } }],
      ["2 transport ConfigMaps for the infrastructure provider aws (aws, aws-2): keep exactly one"],
    ],
    [
      "empty components",
      [core, { ...aws, data: { components: "  " } }],
      [`ConfigMap ${NS}/aws: data key "components" is missing or empty`],
    ],
    [
      "no version label",
      [
        core,
        cm("aws", {
          "provider.cluster.x-k8s.io/name": "aws",
          "provider.cluster.x-k8s.io/type": "infrastructure",
        }),
      ],
      [`ConfigMap ${NS}/aws: label provider.cluster.x-k8s.io/version is missing`],
    ],
    [
      "another namespace",
      [core, { ...aws, metadata: { ...aws.metadata, namespace: "default" } }],
      [
        "no transport ConfigMap for the infrastructure provider aws (ConfigMap in openshift-cluster-api labelled provider.cluster.x-k8s.io/name=aws, provider.cluster.x-k8s.io/type=infrastructure)",
      ],
    ],
  ])("%s ConfigMap is a problem (which forbids pruning)", (_, configMaps, problems) => {
    const s = selectProviders(infra("AWS"), configMaps as KubeObject[], NS);
    expect(s.kind === "selected" && s.problems).toEqual(problems);
  });

  it("images ConfigMap: UPPER_SNAKE keys are variables, the others images by provider label", () => {
    expect(
      imagesAndVariables({
        data: {
          "cluster-api": " quay.io/capi:1 ",
          "infrastructure-aws": "quay.io/capa:2",
          CAPA_LOGLEVEL: "4",
        },
      }),
    ).toEqual({
      images: { "cluster-api": "quay.io/capi:1", "infrastructure-aws": "quay.io/capa:2" },
      variables: { CAPA_LOGLEVEL: "4" },
    });
    expect(imagesAndVariables(undefined)).toEqual({ images: {}, variables: {} });
  });
});
