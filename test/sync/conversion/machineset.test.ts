/**
 * SPEC §5.2 (MachineSet level) both ways and §4.3 template naming: `<msName>-<8 hex FNV-1a-32>` of the
 * canonical JSON of the AWSMachineTemplate's `spec.template.spec`.
 */
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../../src/kube/object.js";
import {
  capiMachineSetToMapi,
  fnv1a32,
  formatFieldError,
  formatFieldErrors,
  mapiMachineSetToCapi,
  templateHash,
  templateName,
} from "../../../src/sync/conversion/index.js";
import {
  awsMachineSpec,
  awsMachineTemplate,
  CAPI_NS,
  CLUSTER,
  capiMachineSet,
  infrastructure,
  MAPI_NS,
  mapiMachineSet,
  providerSpec,
} from "./builders.js";

/** The CAPI/MAPI MachineSet spec fields these tests read. */
interface MachineSetSpec {
  replicas?: number;
  clusterName?: string;
  selector?: unknown;
  deletion?: unknown;
  template: { metadata: { labels?: unknown; annotations?: unknown }; spec: Record<string, unknown> };
}

const toCapi = (ms: KubeObject) => mapiMachineSetToCapi(ms, infrastructure(), { capiNamespace: CAPI_NS });
const capiOf = (ms: KubeObject) => {
  const result = toCapi(ms);
  if (!result.ok) throw new Error(formatFieldErrors(result.errors));
  return result.value;
};
const toMapi = (ms: KubeObject, template: KubeObject | undefined) =>
  capiMachineSetToMapi(ms, template, infrastructure(), { mapiNamespace: MAPI_NS });
const mapiOf = (ms: KubeObject, template: KubeObject) => {
  const result = toMapi(ms, template);
  if (!result.ok) throw new Error(formatFieldErrors(result.errors));
  return result.value.machineSet;
};

describe("SPEC §4.3 template naming", () => {
  it("FNV-1a 32-bit matches the reference vectors", () => {
    expect(fnv1a32("")).toBe(0x811c9dc5);
    expect(fnv1a32("a")).toBe(0xe40c292c);
    expect(fnv1a32("foobar")).toBe(0xbf9cf968);
  });
  it("the hash is over canonical JSON: key order does not matter, 8 lowercase hex digits", () => {
    expect(templateHash({ b: 1, a: { d: 2, c: 3 } })).toBe(templateHash({ a: { c: 3, d: 2 }, b: 1 }));
    expect(templateHash({ a: 1 })).toMatch(/^[0-9a-f]{8}$/);
    expect(templateHash({})).toBe(fnv1a32("{}").toString(16).padStart(8, "0"));
  });
  it("name is <msName>-<hash of spec.template.spec>", () => {
    const { machineSet, infraTemplate } = capiOf(mapiMachineSet({ name: "workers" }));
    const spec = (infraTemplate.spec as { template: { spec: unknown } }).template.spec;
    expect(infraTemplate.metadata?.name).toBe(templateName("workers", spec));
    expect(infraTemplate.metadata?.name).toMatch(/^workers-[0-9a-f]{8}$/);
    expect(
      (machineSet.spec as { template: { spec: { infrastructureRef: unknown } } }).template.spec
        .infrastructureRef,
    ).toEqual({
      apiGroup: "infrastructure.cluster.x-k8s.io",
      kind: "AWSMachineTemplate",
      name: infraTemplate.metadata?.name,
    });
  });
  it("a providerSpec change makes a new name; an unchanged one keeps it", () => {
    const a = capiOf(mapiMachineSet()).infraTemplate.metadata?.name;
    const b = capiOf(mapiMachineSet()).infraTemplate.metadata?.name;
    const c = capiOf(mapiMachineSet({ value: providerSpec({ instanceType: "m5.large" }) })).infraTemplate
      .metadata?.name;
    expect(a).toBe(b);
    expect(c).not.toBe(a);
  });
  it("the template carries the template label and lives in the CAPI namespace", () => {
    const { infraTemplate } = capiOf(mapiMachineSet({ name: "workers" }));
    expect(infraTemplate.metadata).toMatchObject({
      namespace: CAPI_NS,
      labels: {
        "machine.openshift.io/cluster-api-machineset": "workers",
        "cluster.x-k8s.io/cluster-name": CLUSTER,
      },
    });
  });
});

describe("SPEC §5.2 MachineSet level, MAPI → CAPI", () => {
  it("replicas; selector and template labels converted, both with cluster-name", () => {
    const { machineSet } = capiOf(mapiMachineSet({ name: "workers" }));
    const spec = machineSet.spec as unknown as MachineSetSpec;
    expect(spec.replicas).toBe(2);
    expect(spec.clusterName).toBe(CLUSTER);
    expect(spec.selector).toEqual({
      matchLabels: {
        "machine.openshift.io/cluster-api-machineset": "workers",
        "cluster.x-k8s.io/cluster-name": CLUSTER,
      },
    });
    expect(spec.template.metadata.labels).toEqual({
      "machine.openshift.io/cluster-api-machineset": "workers",
      "node-role.kubernetes.io/worker": "",
      "cluster.x-k8s.io/cluster-name": CLUSTER,
    });
  });
  it("deletion.order = deletePolicy || Random", () => {
    expect((capiOf(mapiMachineSet()).machineSet.spec as unknown as MachineSetSpec).deletion).toEqual({
      order: "Random",
    });
    expect(
      (
        capiOf(mapiMachineSet({ spec: { deletePolicy: "Oldest" } })).machineSet
          .spec as unknown as MachineSetSpec
      ).deletion,
    ).toEqual({
      order: "Oldest",
    });
  });
  it("deletePolicy other → error", () => {
    const result = toCapi(mapiMachineSet({ spec: { deletePolicy: "Biggest" } }));
    expect(result.ok ? [] : result.errors.map(formatFieldError)).toEqual([
      'spec.deletePolicy: Invalid value: "Biggest": deletePolicy must be Random, Newest or Oldest',
    ]);
  });
  it("minReadySeconds → spec.template.spec.minReadySeconds (v1beta2)", () => {
    const spec = capiOf(mapiMachineSet({ spec: { minReadySeconds: 30 } })).machineSet
      .spec as unknown as MachineSetSpec;
    expect(spec.template.spec.minReadySeconds).toBe(30);
    expect(spec).not.toHaveProperty("minReadySeconds");
  });
  it("template spec converted like a Machine (bootstrap, failureDomain, deletion timeout)", () => {
    const spec = capiOf(mapiMachineSet()).machineSet.spec as unknown as MachineSetSpec;
    expect(spec.template.spec).toMatchObject({
      clusterName: CLUSTER,
      bootstrap: { dataSecretName: "worker-user-data" },
      failureDomain: "us-east-1a",
      deletion: { nodeDeletionTimeoutSeconds: 10 },
    });
  });
  it("template lifecycle hooks → template annotations", () => {
    const spec = capiOf(
      mapiMachineSet({ templateSpec: { lifecycleHooks: { preDrain: [{ name: "h", owner: "o" }] } } }),
    ).machineSet.spec as unknown as MachineSetSpec;
    expect(spec.template.metadata.annotations).toEqual({
      "pre-drain.delete.hook.machine.cluster.x-k8s.io/h": "o",
    });
  });
  it("errors carry full template paths and are all collected", () => {
    const result = toCapi(
      mapiMachineSet({
        value: providerSpec({ deviceIndex: 1, loadBalancers: [{ name: "x", type: "classic" }] }),
        templateSpec: { taints: [{ key: "k" }] },
      }),
    );
    expect(result.ok ? [] : result.errors.map(formatFieldError)).toEqual([
      'spec.template.spec.taints: Invalid value: [{"key":"k"}]: taints are not currently supported',
      "spec.template.spec.providerSpec.value.deviceIndex: Invalid value: 1: deviceIndex must be 0 or unset",
      'spec.template.spec.providerSpec.value.loadBalancers: Invalid value: [{"name":"x","type":"classic"}]: loadBalancers are not supported for MachineSets (only control plane Machines may have them)',
    ]);
  });
  it("never sets finalizers or ownerReferences; product annotations dropped", () => {
    const ms = mapiMachineSet();
    ms.metadata = {
      ...ms.metadata,
      finalizers: ["sync.machine.openshift.io/finalizer"],
      annotations: { "machine-api-migration.openshift.io/needs-attention": "x", keep: "y" },
    };
    const { machineSet, infraTemplate } = capiOf(ms);
    expect(machineSet.metadata).not.toHaveProperty("finalizers");
    expect(machineSet.metadata?.annotations).toEqual({ keep: "y" });
    expect(infraTemplate.metadata).not.toHaveProperty("ownerReferences");
  });
});

describe("SPEC §5.2 MachineSet level, CAPI → MAPI", () => {
  const name = templateName("workers", awsMachineSpec());
  it("replicas, selector, deletePolicy, template converted back", () => {
    const ms = mapiOf(
      capiMachineSet(name, { templateSpec: { minReadySeconds: 5 } }),
      awsMachineTemplate(name),
    );
    expect(ms).toMatchObject({
      apiVersion: "machine.openshift.io/v1beta1",
      kind: "MachineSet",
      metadata: { name: "workers", namespace: MAPI_NS },
      spec: {
        replicas: 2,
        deletePolicy: "Random",
        minReadySeconds: 5,
        selector: { matchLabels: { "machine.openshift.io/cluster-api-machineset": "workers" } },
        template: {
          metadata: {
            labels: {
              "machine.openshift.io/cluster-api-machineset": "workers",
              "machine.openshift.io/cluster-api-machine-role": "worker",
              "machine.openshift.io/cluster-api-machine-type": "worker",
            },
          },
          spec: {
            providerSpec: {
              value: {
                kind: "AWSMachineProviderConfig",
                placement: { region: "us-east-1", availabilityZone: "us-east-1a" },
              },
            },
          },
        },
      },
    });
    expect(ms.metadata?.labels ?? {}).toEqual({});
  });
  it("template errors are reported under AWSMachineTemplate.spec.template.spec", () => {
    const result = toMapi(
      capiMachineSet(name),
      awsMachineTemplate(name, awsMachineSpec({ hostAffinity: "host", hostID: "bad" })),
    );
    expect(result.ok ? [] : result.errors.map(formatFieldError)).toEqual([
      'AWSMachineTemplate.spec.template.spec.hostID: Invalid value: "bad": hostID must match ^h-([0-9a-f]{8}|[0-9a-f]{17})$',
    ]);
  });
  it("infrastructureRef must name the template given", () => {
    const result = toMapi(capiMachineSet("other-template"), awsMachineTemplate(name));
    expect(result.ok ? [] : result.errors.map((e) => e.path)).toEqual([
      "spec.template.spec.infrastructureRef.name",
    ]);
  });
  it("missing template → error", () => {
    const result = toMapi(capiMachineSet(name), undefined);
    expect(result.ok ? [] : result.errors.map((e) => e.message)).toEqual([
      "the AWSMachineTemplate is required to convert",
    ]);
  });
  it("errors on spec.template.spec.version/readinessGates and unknown deletion fields", () => {
    const result = toMapi(
      capiMachineSet(name, {
        templateSpec: { version: "v1.30.0", readinessGates: [{ conditionType: "x" }] },
      }),
      awsMachineTemplate(name),
    );
    expect(result.ok ? [] : result.errors.map((e) => e.path)).toEqual([
      "spec.template.spec.version",
      "spec.template.spec.readinessGates",
    ]);
  });
  it("lifecycle hook annotations on the MachineSet itself → warning (MAPI has hooks only on Machines)", () => {
    const capi = capiMachineSet(name);
    capi.metadata = {
      ...capi.metadata,
      annotations: { "pre-drain.delete.hook.machine.cluster.x-k8s.io/h": "o" },
    };
    const result = toMapi(capi, awsMachineTemplate(name));
    expect(result.ok && result.warnings).toEqual([
      "metadata.annotations: lifecycle hook annotations on a MachineSet itself have no Machine API equivalent",
    ]);
    expect(result.ok && result.value.machineSet.metadata).not.toHaveProperty("annotations");
  });
  it("never writes the template's authoritativeAPI", () => {
    const ms = mapiOf(capiMachineSet(name), awsMachineTemplate(name));
    expect((ms.spec as unknown as MachineSetSpec).template.spec).not.toHaveProperty("authoritativeAPI");
    expect(ms.spec).not.toHaveProperty("authoritativeAPI");
  });
});
