import { beforeAll, describe, expect, it } from "vitest";
import { loadProjectCrds } from "../../../src/apiserver/fixtures/crds.js";
import { type CompiledCrd, compileCrd } from "../../../src/apiserver/schema/index.js";
import type { KubeObject } from "../../../src/kube/object.js";
import { mapiMachineSetToCapi, mapiMachineToCapi } from "../../../src/sync/conversion/index.js";
import * as build from "../../sync/conversion/builders.js";

const compiled = new Map<string, CompiledCrd>();

beforeAll(async () => {
  for (const crd of await loadProjectCrds()) {
    const r = compileCrd(crd);
    if (!r.ok) throw new Error(`${crd.metadata?.name}: ${JSON.stringify(r.causes)}`);
    compiled.set(crd.metadata?.name ?? "", r.value);
  }
});

const crd = (name: string): CompiledCrd => {
  const c = compiled.get(name);
  if (!c) throw new Error(`no CRD ${name}`);
  return c;
};

describe("manifests/crds (SPEC §8, §0)", () => {
  it("holds every CRD the product needs, and each compiles", () => {
    expect([...compiled.keys()].sort()).toEqual([
      "awsclusters.infrastructure.cluster.x-k8s.io",
      "awsmachines.infrastructure.cluster.x-k8s.io",
      "awsmachinetemplates.infrastructure.cluster.x-k8s.io",
      "clusteroperators.config.openshift.io",
      "clusters.cluster.x-k8s.io",
      "featuregates.config.openshift.io",
      "ibmpowervsclusters.infrastructure.cluster.x-k8s.io",
      "ibmpowervsmachines.infrastructure.cluster.x-k8s.io",
      "ibmpowervsmachinetemplates.infrastructure.cluster.x-k8s.io",
      "infrastructures.config.openshift.io",
      "machines.cluster.x-k8s.io",
      "machines.machine.openshift.io",
      "machinesets.cluster.x-k8s.io",
      "machinesets.machine.openshift.io",
      "openstackclusters.infrastructure.cluster.x-k8s.io",
      "openstackmachines.infrastructure.cluster.x-k8s.io",
      "openstackmachinetemplates.infrastructure.cluster.x-k8s.io",
    ]);
  });

  it.each([
    [
      "machinesets.machine.openshift.io",
      {
        specReplicasPath: ".spec.replicas",
        statusReplicasPath: ".status.replicas",
        labelSelectorPath: ".status.labelSelector",
      },
    ],
    [
      "machinesets.cluster.x-k8s.io",
      {
        specReplicasPath: ".spec.replicas",
        statusReplicasPath: ".status.replicas",
        labelSelectorPath: ".status.selector",
      },
    ],
  ])("%s declares the scale subresource", (name, scale) => {
    expect(crd(name).versions[0]?.subresources).toEqual({ status: true, scale });
  });

  it.each([
    ["infrastructures.config.openshift.io", "Cluster"],
    ["featuregates.config.openshift.io", "Cluster"],
    ["clusteroperators.config.openshift.io", "Cluster"],
    ["machines.machine.openshift.io", "Namespaced"],
    ["awsmachines.infrastructure.cluster.x-k8s.io", "Namespaced"],
    ["openstackmachines.infrastructure.cluster.x-k8s.io", "Namespaced"],
    ["ibmpowervsmachines.infrastructure.cluster.x-k8s.io", "Namespaced"],
  ])("%s is %s-scoped", (name, scope) => {
    expect(crd(name).scope).toBe(scope);
  });

  it("MAPI Machine printer columns follow OpenShift's", () => {
    expect(
      crd("machines.machine.openshift.io").versions[0]?.additionalPrinterColumns.map((c) => c.name),
    ).toEqual(["Phase", "Type", "Region", "Zone", "Age", "Node", "ProviderID", "State"]);
    expect(
      crd("machinesets.machine.openshift.io").versions[0]?.additionalPrinterColumns.map((c) => c.name),
    ).toEqual(["Desired", "Current", "Ready", "Available", "Age"]);
  });
});

const mapiMachine = (spec: Record<string, unknown>, status?: Record<string, unknown>): KubeObject => ({
  apiVersion: "machine.openshift.io/v1beta1",
  kind: "Machine",
  metadata: { name: "worker-a", namespace: "openshift-machine-api" },
  spec,
  ...(status ? { status } : {}),
});

describe("MAPI CRDs: authority fields (SPEC §1)", () => {
  it("defaults spec.authoritativeAPI to MachineAPI (Machine and MachineSet template)", () => {
    const m = crd("machines.machine.openshift.io").pruneAndDefault(
      "v1beta1",
      mapiMachine({ providerSpec: { value: {} } }),
    );
    expect(m.spec?.authoritativeAPI).toBe("MachineAPI");
    const set = crd("machinesets.machine.openshift.io").pruneAndDefault("v1beta1", {
      apiVersion: "machine.openshift.io/v1beta1",
      kind: "MachineSet",
      metadata: { name: "s", namespace: "openshift-machine-api" },
      spec: { selector: {}, template: { spec: {} } },
    });
    expect(set.spec).toMatchObject({
      authoritativeAPI: "MachineAPI",
      replicas: 1,
      template: { spec: { authoritativeAPI: "MachineAPI" } },
    });
  });

  it("keeps providerSpec.value whole (raw extension)", () => {
    const value = {
      apiVersion: "machine.openshift.io/v1beta1",
      kind: "AWSMachineProviderConfig",
      anything: { deep: [1] },
    };
    const m = crd("machines.machine.openshift.io").pruneAndDefault(
      "v1beta1",
      mapiMachine({ providerSpec: { value } }),
    );
    expect(m.spec?.providerSpec).toEqual({ value });
  });

  it("rejects spec.authoritativeAPI outside the enum with kube's message", () => {
    const causes = crd("machines.machine.openshift.io").validate(
      "v1beta1",
      mapiMachine({ authoritativeAPI: "Migrating" }),
      undefined,
    );
    expect(causes).toEqual([
      {
        reason: "FieldValueNotSupported",
        field: "spec.authoritativeAPI",
        message: 'Unsupported value: "Migrating": supported values: "MachineAPI", "ClusterAPI"',
      },
      // The CRD has CEL rules; after a blocking schema error kube skips them and says so (conformance probe
      // "custom resource create with a value outside the enum").
      {
        reason: "FieldValueInvalid",
        field: "<nil>",
        message:
          'Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
      },
    ]);
  });

  it("rejects a negative status.synchronizedGeneration", () => {
    const causes = crd("machines.machine.openshift.io").validate(
      "v1beta1",
      mapiMachine({}, { authoritativeAPI: "MachineAPI", synchronizedGeneration: -1 }),
      undefined,
    );
    expect(causes.map((c) => c.field)).toEqual(["status.synchronizedGeneration"]);
  });
});

const TRANSITION =
  'Invalid value: "string": The authoritativeAPI field must not transition directly from MachineAPI to ClusterAPI or vice versa. It must transition through Migrating.';
const REMOVED = 'Invalid value: "object": authoritativeAPI may not be removed once set';
const DECREASE =
  'Invalid value: "object": synchronizedGeneration must not decrease unless authoritativeAPI is transitioning from Migrating to another value';

describe.each(["machines.machine.openshift.io", "machinesets.machine.openshift.io"])(
  "%s: OpenShift's three status rules (SPEC §1, §8)",
  (name) => {
    type Status = Record<string, unknown> | undefined;
    const object = (status: Status): KubeObject => ({
      apiVersion: "machine.openshift.io/v1beta1",
      kind: name.startsWith("machinesets") ? "MachineSet" : "Machine",
      metadata: { name: "x", namespace: "openshift-machine-api" },
      spec: name.startsWith("machinesets") ? { selector: {} } : {},
      ...(status ? { status } : {}),
    });
    it.each<[string, Status, Status, Array<{ field: string; message: string }>]>([
      ["absent → MachineAPI is allowed", undefined, { authoritativeAPI: "MachineAPI" }, []],
      [
        "MachineAPI → Migrating is allowed",
        { authoritativeAPI: "MachineAPI" },
        { authoritativeAPI: "Migrating" },
        [],
      ],
      [
        "Migrating → ClusterAPI is allowed",
        { authoritativeAPI: "Migrating" },
        { authoritativeAPI: "ClusterAPI" },
        [],
      ],
      [
        "Migrating → MachineAPI (cancel) is allowed",
        { authoritativeAPI: "Migrating" },
        { authoritativeAPI: "MachineAPI" },
        [],
      ],
      [
        "MachineAPI → ClusterAPI is refused",
        { authoritativeAPI: "MachineAPI" },
        { authoritativeAPI: "ClusterAPI" },
        [{ field: "status.authoritativeAPI", message: TRANSITION }],
      ],
      [
        "ClusterAPI → MachineAPI is refused",
        { authoritativeAPI: "ClusterAPI" },
        { authoritativeAPI: "MachineAPI" },
        [{ field: "status.authoritativeAPI", message: TRANSITION }],
      ],
      [
        "removing authoritativeAPI is refused",
        { authoritativeAPI: "MachineAPI", phase: "Running" },
        { phase: "Running" },
        [{ field: "status", message: REMOVED }],
      ],
      [
        "decreasing synchronizedGeneration is refused",
        { authoritativeAPI: "MachineAPI", synchronizedGeneration: 5 },
        { authoritativeAPI: "MachineAPI", synchronizedGeneration: 4 },
        [{ field: "status.synchronizedGeneration", message: DECREASE }],
      ],
      [
        "removing synchronizedGeneration is refused",
        { authoritativeAPI: "ClusterAPI", synchronizedGeneration: 5 },
        { authoritativeAPI: "ClusterAPI" },
        [{ field: "status.synchronizedGeneration", message: DECREASE }],
      ],
      [
        "synchronizedGeneration may drop to 0 when leaving Migrating (handover completes, §3.1 step 10)",
        { authoritativeAPI: "Migrating", synchronizedGeneration: 5 },
        { authoritativeAPI: "ClusterAPI", synchronizedGeneration: 0 },
        [],
      ],
      [
        "synchronizedGeneration may not drop while staying Migrating",
        { authoritativeAPI: "Migrating", synchronizedGeneration: 5 },
        { authoritativeAPI: "Migrating", synchronizedGeneration: 0 },
        [{ field: "status.synchronizedGeneration", message: DECREASE }],
      ],
      [
        "increasing synchronizedGeneration is allowed",
        { authoritativeAPI: "MachineAPI", synchronizedGeneration: 5 },
        { authoritativeAPI: "MachineAPI", synchronizedGeneration: 6 },
        [],
      ],
    ])("%s", (_name, oldStatus, newStatus, expected) => {
      const c = crd(name);
      const causes = c.validate("v1beta1", object(newStatus), object(oldStatus));
      expect(causes.map(({ field, message }) => ({ field, message }))).toEqual(expected);
      for (const cause of causes) expect(cause.reason).toBe("FieldValueInvalid");
    });

    it("transition rules are not evaluated on CREATE", () => {
      expect(crd(name).validate("v1beta1", object({ authoritativeAPI: "ClusterAPI" }), undefined)).toEqual(
        [],
      );
    });
  },
);

describe("CAPI/CAPA CRDs keep what the converter writes (SPEC §5)", () => {
  it("AWSMachine: every field of the §5.3 table survives pruning, defaults fill instance metadata options", () => {
    const spec = {
      ami: { id: "ami-1" },
      instanceType: "m6i.xlarge",
      cpuOptions: { confidentialCompute: "Disabled" },
      additionalTags: { a: "b" },
      iamInstanceProfile: "profile",
      sshKeyName: "key",
      publicIP: false,
      networkInterfaceType: "efa",
      additionalSecurityGroups: [{ id: "sg-1" }, { filters: [{ name: "tag:Name", values: ["x"] }] }],
      subnet: { filters: [{ name: "tag:Name", values: ["s"] }] },
      tenancy: "default",
      hostAffinity: "host",
      hostID: "h-0123456789abcdef0",
      dynamicHostAllocation: { tags: { a: "b" } },
      rootVolume: {
        size: 120,
        type: "gp3",
        encrypted: true,
        encryptionKey: "k",
        iops: 3000,
        throughput: 125,
      },
      nonRootVolumes: [{ deviceName: "/dev/sdb", size: 50, type: "gp3" }],
      spotMarketOptions: { maxPrice: "0.5" },
      placementGroupName: "pg",
      placementGroupPartition: 2,
      capacityReservationId: "cr-1",
      marketType: "Spot",
      ignition: { storageType: "UnencryptedUserData" },
      providerID: "aws:///us-east-1a/i-0abc",
      instanceID: "i-0abc",
      instanceMetadataOptions: { httpTokens: "required" },
    };
    const obj: KubeObject = {
      apiVersion: "infrastructure.cluster.x-k8s.io/v1beta2",
      kind: "AWSMachine",
      metadata: { name: "worker-a", namespace: "openshift-cluster-api" },
      spec,
      status: {
        ready: true,
        instanceState: "running",
        interruptible: false,
        initialization: { provisioned: true },
        somethingNew: 1,
      },
    };
    const c = crd("awsmachines.infrastructure.cluster.x-k8s.io");
    const out = c.pruneAndDefault("v1beta2", obj);
    expect(out.spec).toEqual({
      ...spec,
      ignition: { storageType: "UnencryptedUserData", version: "2.3" },
      instanceMetadataOptions: {
        httpTokens: "required",
        httpEndpoint: "enabled",
        httpProtocolIpv6: "disabled",
        httpPutResponseHopLimit: 1,
        instanceMetadataTags: "disabled",
      },
    });
    expect(out.status).toEqual(obj.status);
    expect(c.validate("v1beta2", out, undefined)).toEqual([]);
  });

  it("AWSMachine keeps the fields rule aws-unsupported-fields must see (SPEC §2.3)", () => {
    const spec = {
      instanceType: "m6i.large",
      ami: { eksLookupType: "AmazonLinux" },
      imageLookupFormat: "f",
      imageLookupOrg: "o",
      imageLookupBaseOS: "b",
      networkInterfaces: ["eni-1"],
      uncompressedUserData: true,
      ignition: {
        version: "3.4",
        storageType: "ClusterObjectStore",
        proxy: { httpProxy: "http://p" },
        tls: { caSources: ["data:,x"] },
      },
      securityGroupOverrides: { node: "sg-1" },
      cloudInit: {
        secretCount: 1,
        secretPrefix: "p",
        insecureSkipSecretsManager: false,
        secureSecretsBackend: "secrets-manager",
      },
    };
    const out = crd("awsmachines.infrastructure.cluster.x-k8s.io").pruneAndDefault("v1beta2", {
      apiVersion: "infrastructure.cluster.x-k8s.io/v1beta2",
      kind: "AWSMachine",
      metadata: { name: "a", namespace: "openshift-cluster-api" },
      spec,
    });
    expect(out.spec).toMatchObject(spec);
  });

  it("CAPI Machine and MachineSet keep spec.version and readinessGates (rule capi-unsupported-fields)", () => {
    const machineSpec = {
      clusterName: "c",
      bootstrap: { dataSecretName: "worker-user-data" },
      infrastructureRef: { apiGroup: "infrastructure.cluster.x-k8s.io", kind: "AWSMachine", name: "a" },
      version: "v1.31.0",
      readinessGates: [{ conditionType: "X" }],
      providerID: "aws:///us-east-1a/i-1",
      failureDomain: "us-east-1a",
      deletion: { nodeDeletionTimeoutSeconds: 10 },
    };
    const m = crd("machines.cluster.x-k8s.io").pruneAndDefault("v1beta2", {
      apiVersion: "cluster.x-k8s.io/v1beta2",
      kind: "Machine",
      metadata: { name: "a", namespace: "openshift-cluster-api" },
      spec: machineSpec,
    });
    expect(m.spec).toEqual(machineSpec);
    const setSpec = {
      clusterName: "c",
      replicas: 2,
      selector: { matchLabels: { a: "b" } },
      deletion: { order: "Random" },
      template: { metadata: { labels: { a: "b" } }, spec: { ...machineSpec, minReadySeconds: 3 } },
    };
    const s = crd("machinesets.cluster.x-k8s.io").pruneAndDefault("v1beta2", {
      apiVersion: "cluster.x-k8s.io/v1beta2",
      kind: "MachineSet",
      metadata: { name: "a", namespace: "openshift-cluster-api" },
      spec: setSpec,
    });
    expect(s.spec).toEqual(setSpec);
    expect(crd("machinesets.cluster.x-k8s.io").validate("v1beta2", s, undefined)).toEqual([]);
  });
});

describe("the AWS CRDs keep every field the converter writes (SPEC §5.3; issue 23)", () => {
  // A field the CRD does not declare is pruned by a real API server: the sync would write it on every
  // reconcile and never see it, and the InfraMachine would lack what upstream's converter sets.
  it.each(["IPv4", "DualStackIPv4Primary", "DualStackIPv6Primary"])(
    "a converted AWSMachine and AWSMachineTemplate lose nothing to pruning (ipFamily %s; defaults may be added)",
    (ipFamily) => {
      const infra = build.infrastructure({ ipFamily });
      const machine = mapiMachineToCapi(build.mapiMachine({ value: build.providerSpec() }), infra, {
        capiNamespace: build.CAPI_NS,
      });
      const set = mapiMachineSetToCapi(build.mapiMachineSet(), infra, { capiNamespace: build.CAPI_NS });
      if (!machine.ok || !set.ok) throw new Error("conversion failed");
      const awsMachine = machine.value.infraMachine;
      expect(
        crd("awsmachines.infrastructure.cluster.x-k8s.io").pruneAndDefault("v1beta2", awsMachine),
      ).toMatchObject(awsMachine);
      const template = set.value.infraTemplate;
      expect(
        crd("awsmachinetemplates.infrastructure.cluster.x-k8s.io").pruneAndDefault("v1beta2", template),
      ).toMatchObject(template);
    },
  );
});
