/**
 * SPEC §5.1 (Machine level) both ways, §5 general rules (no finalizers/ownerReferences/pause, product
 * annotations dropped), and the Kubernetes-style error format.
 */
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../../src/kube/object.js";
import {
  capiMachineToMapi,
  formatFieldError,
  formatFieldErrors,
  mapiMachineToCapi,
} from "../../../src/sync/conversion/index.js";
import {
  awsMachine,
  awsMachineSpec,
  CAPI_NS,
  CLUSTER,
  capiMachine,
  infrastructure,
  MAPI_NS,
  mapiMachine,
} from "./builders.js";

const toCapi = (machine: KubeObject, infra = infrastructure()) =>
  mapiMachineToCapi(machine, infra, { capiNamespace: CAPI_NS });
const capiOf = (machine: KubeObject) => {
  const result = toCapi(machine);
  if (!result.ok) throw new Error(formatFieldErrors(result.errors));
  return result.value.machine;
};
const errorsOf = (machine: KubeObject) => {
  const result = toCapi(machine);
  return result.ok ? [] : result.errors.map(formatFieldError);
};
const toMapi = (
  machine: KubeObject,
  infraMachine: KubeObject | undefined = awsMachine({ name: machine.metadata?.name ?? "" }),
) => capiMachineToMapi(machine, infraMachine, infrastructure(), { mapiNamespace: MAPI_NS });
const mapiOf = (machine: KubeObject) => {
  const result = toMapi(machine);
  if (!result.ok) throw new Error(formatFieldErrors(result.errors));
  return result.value.machine;
};
const reverseErrors = (machine: KubeObject) => {
  const result = toMapi(machine);
  return result.ok ? [] : result.errors.map(formatFieldError);
};

describe("SPEC §5 field errors print Kubernetes-style", () => {
  it("formatFieldError: <path>: Invalid value: <json value>: <message>", () => {
    expect(
      formatFieldError({
        path: "spec.providerSpec.value.deviceIndex",
        value: 1,
        message: "deviceIndex must be 0 or unset",
      }),
    ).toBe("spec.providerSpec.value.deviceIndex: Invalid value: 1: deviceIndex must be 0 or unset");
    expect(formatFieldError({ path: "a", value: "x", message: "m" })).toBe('a: Invalid value: "x": m');
    expect(formatFieldError({ path: "a", value: undefined, message: "m" })).toBe("a: Invalid value: null: m");
  });
  it("formatFieldErrors joins every error for the Synchronized message", () => {
    expect(
      formatFieldErrors([
        { path: "a", value: 1, message: "m" },
        { path: "b", value: true, message: "n" },
      ]),
    ).toBe("a: Invalid value: 1: m; b: Invalid value: true: n");
  });
});

describe("SPEC §5.1 Machine level, MAPI → CAPI", () => {
  it("namespace: the CAPI namespace; same name; CAPI and infra apiVersions", () => {
    const result = toCapi(mapiMachine({ name: "m1" }));
    expect(result.ok && result.value.machine.metadata).toMatchObject({ name: "m1", namespace: CAPI_NS });
    expect(result.ok && result.value.machine.apiVersion).toBe("cluster.x-k8s.io/v1beta2");
    expect(result.ok && result.value.infraMachine).toMatchObject({
      apiVersion: "infrastructure.cluster.x-k8s.io/v1beta2",
      kind: "AWSMachine",
      metadata: { name: "m1", namespace: CAPI_NS },
    });
  });
  it("labels: machine-role/-type R → node-role.kubernetes.io/R; instance-type/region/zone dropped; rest copied; spec.metadata.labels on top; cluster-name added", () => {
    const machine = mapiMachine({
      labels: {
        "machine.openshift.io/cluster-api-machine-role": "infra",
        "machine.openshift.io/cluster-api-machine-type": "infra",
        "machine.openshift.io/instance-type": "m5.large",
        "machine.openshift.io/region": "us-east-1",
        "machine.openshift.io/zone": "us-east-1a",
        "machine.openshift.io/cluster-api-machineset": "infra-a",
        team: "a",
      },
      spec: { metadata: { labels: { team: "b", "node-role.kubernetes.io/infra": "" } } },
    });
    expect(capiOf(machine).metadata?.labels).toEqual({
      "node-role.kubernetes.io/infra": "",
      "machine.openshift.io/cluster-api-machineset": "infra-a",
      team: "b",
      "cluster.x-k8s.io/cluster-name": CLUSTER,
    });
  });
  it("labels: a different role and type → two node-role labels and a warning", () => {
    const result = toCapi(
      mapiMachine({
        labels: {
          "machine.openshift.io/cluster-api-machine-role": "worker",
          "machine.openshift.io/cluster-api-machine-type": "infra",
        },
      }),
    );
    expect(result.ok && result.value.machine.metadata?.labels).toMatchObject({
      "node-role.kubernetes.io/worker": "",
      "node-role.kubernetes.io/infra": "",
    });
    expect(result.ok && result.warnings).toEqual([
      'metadata.labels: machine role "worker" and machine type "infra" differ; CAPI keeps both as node-role labels and converting back sets both to "infra"',
    ]);
  });
  it("labels: role master also gets CAPI's control-plane label", () => {
    const machine = mapiMachine({
      labels: {
        "machine.openshift.io/cluster-api-machine-role": "master",
        "machine.openshift.io/cluster-api-machine-type": "master",
      },
    });
    expect(capiOf(machine).metadata?.labels).toMatchObject({
      "node-role.kubernetes.io/master": "",
      "cluster.x-k8s.io/control-plane": "",
    });
  });
  it("annotations: delete-machine renamed; instance-state and product annotations dropped; spec.metadata.annotations merged", () => {
    const machine = mapiMachine({
      annotations: {
        "machine.openshift.io/delete-machine": "true",
        "machine.openshift.io/instance-state": "running",
        "machine-api-migration.openshift.io/paused-by": "machine-api-migration",
        "machine-api-migration.openshift.io/confirm-delete": "true",
        "cluster.x-k8s.io/paused": "",
        note: "a",
      },
      spec: { metadata: { annotations: { note: "b", extra: "c" } } },
    });
    expect(capiOf(machine).metadata?.annotations).toEqual({
      "cluster.x-k8s.io/delete-machine": "true",
      note: "b",
      extra: "c",
    });
  });
  it("annotations: lifecycle hooks preDrain/preTerminate {name, owner} → hook annotations", () => {
    const machine = mapiMachine({
      spec: {
        lifecycleHooks: {
          preDrain: [{ name: "quorum", owner: "etcd" }],
          preTerminate: [{ name: "backup", owner: "velero" }],
        },
      },
    });
    expect(capiOf(machine).metadata?.annotations).toEqual({
      "pre-drain.delete.hook.machine.cluster.x-k8s.io/quorum": "etcd",
      "pre-terminate.delete.hook.machine.cluster.x-k8s.io/backup": "velero",
    });
  });
  it("spec: clusterName, infrastructureRef, providerID, failureDomain, bootstrap.dataSecretName, deletion timeout 10", () => {
    expect(capiOf(mapiMachine({ name: "m1", spec: { providerID: "aws:///us-east-1a/i-1" } })).spec).toEqual({
      clusterName: CLUSTER,
      bootstrap: { dataSecretName: "worker-user-data" },
      infrastructureRef: { apiGroup: "infrastructure.cluster.x-k8s.io", kind: "AWSMachine", name: "m1" },
      providerID: "aws:///us-east-1a/i-1",
      failureDomain: "us-east-1a",
      deletion: { nodeDeletionTimeoutSeconds: 10 },
    });
  });
  it("spec.clusterName: empty infrastructureName → error", () => {
    const result = toCapi(mapiMachine(), infrastructure({ name: "" }));
    expect(result.ok ? [] : result.errors.map(formatFieldError)).toEqual([
      'Infrastructure.status.infrastructureName: Invalid value: "": infrastructureName (the CAPI cluster name) must be set',
    ]);
  });
  it("errors: non-empty spec.taints → 'taints are not currently supported'", () => {
    expect(errorsOf(mapiMachine({ spec: { taints: [{ key: "k", effect: "NoSchedule" }] } }))).toEqual([
      'spec.taints: Invalid value: [{"key":"k","effect":"NoSchedule"}]: taints are not currently supported',
    ]);
    expect(errorsOf(mapiMachine({ spec: { taints: [] } }))).toEqual([]);
  });
  it("errors: spec.metadata.name|generateName|namespace set", () => {
    expect(
      errorsOf(mapiMachine({ spec: { metadata: { name: "n", generateName: "g-", namespace: "ns" } } })),
    ).toEqual([
      'spec.metadata.name: Invalid value: "n": metadata.name is not supported in CAPI',
      'spec.metadata.generateName: Invalid value: "g-": metadata.generateName is not supported in CAPI',
      'spec.metadata.namespace: Invalid value: "ns": metadata.namespace is not supported in CAPI',
    ]);
  });
  it("errors: a spec field outside SPEC §5.1 (and spec.metadata.ownerReferences) is refused, not dropped", () => {
    expect(
      errorsOf(
        mapiMachine({
          spec: {
            unknownThing: 1,
            metadata: { ownerReferences: [{ apiVersion: "v1", kind: "X", name: "x", uid: "u" }] },
          },
        }),
      ).map((e) => e.split(":")[0]),
    ).toEqual(["spec.unknownThing", "spec.metadata.ownerReferences"]);
  });
  it("errors are collected across the Machine level and the providerSpec", () => {
    const machine = mapiMachine({ spec: { taints: [{ key: "k" }] } });
    (machine.spec as { providerSpec: { value: Record<string, unknown> } }).providerSpec.value.deviceIndex = 1;
    expect(errorsOf(machine).map((e) => e.split(":")[0])).toEqual([
      "spec.taints",
      "spec.providerSpec.value.deviceIndex",
    ]);
  });
  it("never sets finalizers, ownerReferences, the pause annotation or the pause marker", () => {
    const machine = mapiMachine();
    machine.metadata = {
      ...machine.metadata,
      finalizers: ["machine.machine.openshift.io", "sync.machine.openshift.io/finalizer"],
      ownerReferences: [
        { apiVersion: "machine.openshift.io/v1beta1", kind: "MachineSet", name: "ms", uid: "u" },
      ],
      uid: "uid-1",
      resourceVersion: "42",
      generation: 3,
      annotations: { "machine-api-migration.openshift.io/paused-by": "machine-api-migration" },
    };
    const result = toCapi(machine);
    for (const o of result.ok ? [result.value.machine, result.value.infraMachine] : []) {
      expect(o.metadata).not.toHaveProperty("finalizers");
      expect(o.metadata).not.toHaveProperty("ownerReferences");
      expect(o.metadata).not.toHaveProperty("uid");
      expect(o.metadata).not.toHaveProperty("resourceVersion");
      expect(o.metadata?.annotations ?? {}).toEqual({});
    }
    expect(result.ok).toBe(true);
  });
  it("spec.authoritativeAPI is not carried to CAPI", () => {
    expect(capiOf(mapiMachine({ spec: { authoritativeAPI: "MachineAPI" } })).spec).not.toHaveProperty(
      "authoritativeAPI",
    );
  });
  it("unknown Infrastructure platform → a clear error naming it and the supported ones", () => {
    const result = toCapi(mapiMachine(), infrastructure({ platform: "GCP" }));
    expect(result.ok ? [] : result.errors.map(formatFieldError)).toEqual([
      'Infrastructure.status.platformStatus.type: Invalid value: "GCP": unsupported platform "GCP": supported platforms are AWS, OpenStack, PowerVS',
    ]);
  });
});

describe("SPEC §5.1 Machine level, CAPI → MAPI", () => {
  it("namespace: the MAPI namespace; same name; providerSpec wraps the AWSMachine", () => {
    const machine = mapiOf(capiMachine({ name: "m1" }));
    expect(machine).toMatchObject({
      apiVersion: "machine.openshift.io/v1beta1",
      kind: "Machine",
      metadata: { name: "m1", namespace: MAPI_NS },
      spec: {
        providerSpec: { value: { kind: "AWSMachineProviderConfig", ami: { id: "ami-0123456789abcdef0" } } },
      },
    });
  });
  it("labels: node-role.kubernetes.io/R → machine-type and machine-role R; cluster.x-k8s.io/ keys dropped; instance-type/region/zone added", () => {
    const machine = mapiOf(
      capiMachine({
        labels: {
          "node-role.kubernetes.io/worker": "",
          "cluster.x-k8s.io/cluster-name": CLUSTER,
          "cluster.x-k8s.io/set-name": "ms",
          "machine.openshift.io/cluster-api-machineset": "ms",
        },
      }),
    );
    expect(machine.metadata?.labels).toEqual({
      "machine.openshift.io/cluster-api-machine-role": "worker",
      "machine.openshift.io/cluster-api-machine-type": "worker",
      "machine.openshift.io/cluster-api-machineset": "ms",
      "machine.openshift.io/instance-type": "m6i.xlarge",
      "machine.openshift.io/region": "us-east-1",
      "machine.openshift.io/zone": "us-east-1a",
    });
  });
  it("labels: several node-role labels → one role and a warning", () => {
    const result = toMapi(
      capiMachine({ labels: { "node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/infra": "" } }),
    );
    expect(
      result.ok && result.value.machine.metadata?.labels?.["machine.openshift.io/cluster-api-machine-role"],
    ).toBe("infra");
    expect(result.ok && result.warnings).toEqual([
      'metadata.labels: several node-role labels (infra, worker); Machine API keeps one role: "infra"',
    ]);
  });
  it("annotations: delete mark renamed back; hooks back to lifecycleHooks (sorted); CAPI and product keys dropped", () => {
    const machine = mapiOf(
      capiMachine({
        annotations: {
          "cluster.x-k8s.io/delete-machine": "yes",
          "pre-drain.delete.hook.machine.cluster.x-k8s.io/b": "o2",
          "pre-drain.delete.hook.machine.cluster.x-k8s.io/a": "o1",
          "pre-terminate.delete.hook.machine.cluster.x-k8s.io/t": "o3",
          "cluster.x-k8s.io/paused": "",
          "machine-api-migration.openshift.io/paused-by": "machine-api-migration",
          note: "n",
        },
      }),
    );
    expect(machine.metadata?.annotations).toEqual({
      "machine.openshift.io/delete-machine": "yes",
      note: "n",
    });
    expect(machine.spec?.lifecycleHooks).toEqual({
      preDrain: [
        { name: "a", owner: "o1" },
        { name: "b", owner: "o2" },
      ],
      preTerminate: [{ name: "t", owner: "o3" }],
    });
  });
  it("errors on spec.version, drain/volume-detach timeouts and a deletion timeout ≠ 10", () => {
    expect(
      reverseErrors(
        capiMachine({
          spec: {
            version: "v1.31.0",
            deletion: {
              nodeDrainTimeoutSeconds: 60,
              nodeVolumeDetachTimeoutSeconds: 30,
              nodeDeletionTimeoutSeconds: 20,
            },
          },
        }),
      ),
    ).toEqual([
      'spec.version: Invalid value: "v1.31.0": version is not supported by Machine API',
      "spec.deletion.nodeDrainTimeoutSeconds: Invalid value: 60: nodeDrainTimeoutSeconds is not supported by Machine API",
      "spec.deletion.nodeVolumeDetachTimeoutSeconds: Invalid value: 30: nodeVolumeDetachTimeoutSeconds is not supported by Machine API",
      "spec.deletion.nodeDeletionTimeoutSeconds: Invalid value: 20: Machine API always waits 10s for node deletion; only 10 can be converted",
    ]);
  });
  it("errors on readinessGates, a bootstrap configRef, a foreign clusterName and an infrastructureRef to another kind", () => {
    expect(
      reverseErrors(
        capiMachine({
          spec: {
            clusterName: "other",
            readinessGates: [{ conditionType: "X" }],
            bootstrap: {
              configRef: { apiGroup: "bootstrap.cluster.x-k8s.io", kind: "KubeadmConfig", name: "c" },
            },
            infrastructureRef: {
              apiGroup: "infrastructure.cluster.x-k8s.io",
              kind: "DockerMachine",
              name: "worker-a",
            },
          },
        }),
      ).map((e) => e.split(":")[0]),
    ).toEqual([
      "spec.clusterName",
      "spec.readinessGates",
      "spec.bootstrap.configRef",
      "spec.infrastructureRef.kind",
    ]);
  });
  it("a missing InfraMachine → error naming it", () => {
    const result = capiMachineToMapi(capiMachine(), undefined, infrastructure(), { mapiNamespace: MAPI_NS });
    expect(result.ok ? [] : result.errors.map(formatFieldError)).toEqual([
      'spec.infrastructureRef: Invalid value: {"apiGroup":"infrastructure.cluster.x-k8s.io","kind":"AWSMachine","name":"worker-a"}: the AWSMachine is required to convert',
    ]);
  });
  it("providerID: taken from the AWSMachine when the CAPI Machine has none yet (the instance is never lost)", () => {
    const result = toMapi(
      capiMachine(),
      awsMachine({ spec: awsMachineSpec({ providerID: "aws:///us-east-1a/i-9", instanceID: "i-9" }) }),
    );
    expect(result.ok && result.value.machine.spec?.providerID).toBe("aws:///us-east-1a/i-9");
  });
  it("providerID: Machine and AWSMachine disagreeing → error", () => {
    const result = toMapi(
      capiMachine({ spec: { providerID: "aws:///us-east-1a/i-1" } }),
      awsMachine({ spec: awsMachineSpec({ providerID: "aws:///us-east-1a/i-2" }) }),
    );
    expect(result.ok ? [] : result.errors.map(formatFieldError)).toEqual([
      'AWSMachine.spec.providerID: Invalid value: "aws:///us-east-1a/i-2": differs from the Machine\'s spec.providerID "aws:///us-east-1a/i-1"; resolve which instance this is by hand',
    ]);
  });
  it("a source without a name → error (the twin has the same name)", () => {
    const machine = capiMachine({ name: "" });
    expect(reverseErrors(machine).map((e) => e.split(":")[0])).toContain("metadata.name");
    expect(errorsOf(mapiMachine({ name: "" }))).toEqual([
      'metadata.name: Invalid value: "": a name is required: the twin has the same name',
    ]);
  });
  it("never writes spec.authoritativeAPI, finalizers or ownerReferences to MAPI", () => {
    const capi = capiMachine();
    capi.metadata = {
      ...capi.metadata,
      finalizers: ["machine.cluster.x-k8s.io"],
      ownerReferences: [{ apiVersion: "cluster.x-k8s.io/v1beta2", kind: "MachineSet", name: "ms", uid: "u" }],
    };
    const machine = mapiOf(capi);
    expect(machine.spec).not.toHaveProperty("authoritativeAPI");
    expect(machine.metadata).not.toHaveProperty("finalizers");
    expect(machine.metadata).not.toHaveProperty("ownerReferences");
  });
});
