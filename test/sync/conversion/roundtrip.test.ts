/**
 * SPEC §5 "Round trip MAPI→CAPI→MAPI and CAPI→MAPI→CAPI is lossless for every supported input", as
 * fast-check properties over generated valid inputs.
 *
 * What makes a generated input "valid" (each constraint is a documented lossy or refused case of the
 * converter, covered by the table tests instead):
 * - MAPI side: no `deviceIndex`, `loadBalancers` or `spec.taints`; `credentialsSecret` is always
 *   `aws-cloud-credentials` and `placement.region` always the Infrastructure region (CAPI → MAPI writes
 *   both); `subnet` always present (MAPI serialises it as `{}`); no `spec.metadata` (its labels/annotations
 *   merge into the object's on the CAPI side); no `authoritativeAPI` (the sync owns it); machine role and
 *   type equal and not `master` (control plane load balancers need the AWSCluster); the Machine's
 *   `instance-type`/`region`/`zone` labels match its providerSpec (CAPI → MAPI rebuilds them); no
 *   `instance-state` annotation; tags and lifecycle hooks have unique names, sorted (CAPI keeps them in
 *   maps); every EBS volume sets `volumeSize` (120 would be written), `iops` > 0 and a non-empty KMS key
 *   (0 and "" mean unset), no `deleteOnTermination`; `metadataServiceOptions` is absent or `Required`
 *   (`""`/`Optional` both mean optional); host placement `AnyAvailable` only with a dedicated host, and a
 *   `dynamicHostAllocation` only with tags; empty lists are omitted rather than `[]`.
 * - CAPI side: `cluster-name` label is the infrastructure name and no other `cluster.x-k8s.io/` keys;
 *   at most one `node-role.kubernetes.io/` label; `hostAffinity`, `rootVolume`, `subnet`, `ignition`
 *   and the fixed `instanceMetadataOptions` always written (as MAPI → CAPI writes them); volumes set
 *   `size`; `deletion.nodeDeletionTimeoutSeconds` is 10; `providerID`/`instanceID` on the AWSMachine
 *   match the Machine's `providerID`; no `version`, `readinessGates`, `minReadySeconds` or bootstrap
 *   `configRef`.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../../src/kube/object.js";
import {
  capiMachineSetToMapi,
  capiMachineToMapi,
  formatFieldErrors,
  mapiMachineSetToCapi,
  mapiMachineToCapi,
  templateName,
} from "../../../src/sync/conversion/index.js";
import { CAPI_NS, CLUSTER, infrastructure, MAPI_NS, REGION } from "./builders.js";

const RUNS = { numRuns: 150 };
const infra = infrastructure();

const token = fc.stringMatching(/^[a-z][a-z0-9]{0,7}$/);
const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
/** Label/annotation keys no converter rule touches. */
const userKey = fc.tuple(fc.constantFrom("example.com/", "team.io/", ""), token).map(([p, t]) => `${p}${t}`);
const userMap = fc.dictionary(userKey, token, { maxKeys: 3 });
const nonEmpty = (map: Record<string, string>) => (Object.keys(map).length > 0 ? map : undefined);

const filters = fc.array(
  fc.record({ name: token, values: fc.array(token, { minLength: 1, maxLength: 2 }) }),
  {
    minLength: 1,
    maxLength: 2,
  },
);
const reference = fc.oneof(
  fc.record({ id: token }),
  fc.record({ filters }),
  fc.record({ id: token, filters }),
);
const hostId = fc
  .oneof(fc.stringMatching(/^[0-9a-f]{8}$/), fc.stringMatching(/^[0-9a-f]{17}$/))
  .map((hex) => `h-${hex}`);
const tagMap = fc.dictionary(token, token, { minKeys: 1, maxKeys: 3 });
const kmsKey = fc.oneof(
  fc.record({ id: token.map((t) => `key-${t}`) }),
  fc.record({ arn: token.map((t) => `arn:aws:kms:us-east-1:123456789012:key/${t}`) }),
);
const volumeType = fc.constantFrom("gp2", "gp3", "io1", "io2", "st1");
const hookList = fc
  .uniqueArray(token, { maxLength: 2 })
  .chain((names) =>
    fc
      .tuple(...names.map(() => token))
      .map((owners) => names.sort().map((name, i) => ({ name, owner: owners[i] as string }))),
  );

// ---------------------------------------------------------------------------------------------------
// MAPI inputs

const ebs = fc.record({
  volumeSize: fc.integer({ min: 8, max: 16384 }),
  volumeType: opt(volumeType),
  iops: opt(fc.integer({ min: 100, max: 64000 })),
  throughputMib: opt(fc.integer({ min: 125, max: 1000 })),
  encrypted: opt(fc.boolean()),
  kmsKey: opt(kmsKey),
});
const blockDevices = fc
  .tuple(opt(ebs), fc.array(fc.record({ deviceName: token.map((t) => `/dev/${t}`), ebs }), { maxLength: 2 }))
  .map(([root, others]) => [...(root === undefined ? [] : [{ ebs: root }]), ...others])
  .map((list) => (list.length > 0 ? list : undefined));
const dedicatedHost = fc.oneof(
  fc.record({ id: hostId }),
  fc.record({ allocationStrategy: fc.constant("Dynamic") }),
  fc.record({
    allocationStrategy: fc.constant("Dynamic"),
    dynamicHostAllocation: fc.record({ tags: tagMap }),
  }),
);
// DedicatedHost needs a host (openshift/api); a dynamic allocation needs DedicatedHost (SPEC §5.3 additions).
const mapiHost = fc.oneof(
  fc.record({ affinity: fc.constant("DedicatedHost"), dedicatedHost }),
  fc.record({ affinity: fc.constant("AnyAvailable"), dedicatedHost: fc.record({ id: hostId }) }),
);

const mapiProviderSpec = fc.record({
  apiVersion: fc.constant("machine.openshift.io/v1beta1"),
  kind: fc.constant("AWSMachineProviderConfig"),
  ami: fc.record({ id: token.map((t) => `ami-${t}`) }),
  instanceType: opt(token),
  cpuOptions: opt(
    fc.record({ confidentialCompute: fc.constantFrom("Disabled", "AMDEncryptedVirtualizationNestedPaging") }),
  ),
  tags: opt(
    tagMap.map((m) =>
      Object.keys(m)
        .sort()
        .map((name) => ({ name, value: m[name] })),
    ),
  ),
  iamInstanceProfile: opt(fc.record({ id: token })),
  keyName: opt(token),
  publicIp: opt(fc.boolean()),
  networkInterfaceType: opt(fc.constantFrom("ENA", "EFA", "")),
  securityGroups: opt(fc.array(reference, { minLength: 1, maxLength: 2 })),
  subnet: fc.oneof(reference, fc.constant({})),
  placement: fc.record({
    region: fc.constant(REGION),
    availabilityZone: opt(token),
    tenancy: opt(fc.constantFrom("default", "dedicated", "host")),
    host: opt(mapiHost),
  }),
  credentialsSecret: fc.constant({ name: "aws-cloud-credentials" }),
  userDataSecret: opt(fc.record({ name: token })),
  blockDevices,
  spotMarketOptions: opt(fc.record({ maxPrice: opt(token) })),
  metadataServiceOptions: opt(fc.constant({ authentication: "Required" })),
  placementGroupName: opt(token),
  placementGroupPartition: opt(fc.integer({ min: 1, max: 7 })),
  capacityReservationId: opt(token),
  marketType: opt(fc.constantFrom("OnDemand", "Spot", "CapacityBlock", "")),
});

const roleLabels = (role: string | undefined): Record<string, string> =>
  role === undefined
    ? {}
    : {
        "machine.openshift.io/cluster-api-machine-role": role,
        "machine.openshift.io/cluster-api-machine-type": role,
      };
const role = opt(fc.constantFrom("worker", "infra", "gpu"));
const lifecycleHooks = fc.record({ preDrain: hookList, preTerminate: hookList }).map((h) => {
  const out: Record<string, unknown> = {};
  if (h.preDrain.length > 0) out.preDrain = h.preDrain;
  if (h.preTerminate.length > 0) out.preTerminate = h.preTerminate;
  return Object.keys(out).length > 0 ? out : undefined;
});

const mapiMachineArb: fc.Arbitrary<KubeObject> = fc
  .record({
    name: token,
    role,
    labels: userMap,
    annotations: userMap,
    deleteMark: opt(token),
    lifecycleHooks,
    providerID: opt(token.map((t) => `aws:///us-east-1a/i-${t}`)),
    value: mapiProviderSpec,
  })
  .map((g) => {
    const zone = g.value.placement.availabilityZone;
    const labels: Record<string, string> = {
      ...g.labels,
      ...roleLabels(g.role),
      "machine.openshift.io/region": REGION,
      ...(g.value.instanceType === undefined
        ? {}
        : { "machine.openshift.io/instance-type": g.value.instanceType }),
      ...(zone === undefined ? {} : { "machine.openshift.io/zone": zone }),
    };
    const annotations = {
      ...g.annotations,
      ...(g.deleteMark === undefined ? {} : { "machine.openshift.io/delete-machine": g.deleteMark }),
    };
    return {
      apiVersion: "machine.openshift.io/v1beta1",
      kind: "Machine",
      metadata: { name: g.name, namespace: MAPI_NS, labels, annotations: nonEmpty(annotations) },
      spec: { lifecycleHooks: g.lifecycleHooks, providerID: g.providerID, providerSpec: { value: g.value } },
    } as KubeObject;
  });

const mapiMachineSetArb: fc.Arbitrary<KubeObject> = fc
  .record({
    name: token,
    role,
    labels: userMap,
    annotations: userMap,
    templateLabels: userMap,
    templateAnnotations: userMap,
    selector: fc.dictionary(userKey, token, { minKeys: 1, maxKeys: 2 }),
    replicas: opt(fc.integer({ min: 0, max: 50 })),
    deletePolicy: fc.constantFrom("Random", "Newest", "Oldest"),
    minReadySeconds: opt(fc.integer({ min: 0, max: 600 })),
    lifecycleHooks,
    value: mapiProviderSpec,
  })
  .map(
    (g) =>
      ({
        apiVersion: "machine.openshift.io/v1beta1",
        kind: "MachineSet",
        metadata: {
          name: g.name,
          namespace: MAPI_NS,
          labels: nonEmpty(g.labels),
          annotations: nonEmpty(g.annotations),
        },
        spec: {
          replicas: g.replicas,
          selector: { matchLabels: g.selector },
          deletePolicy: g.deletePolicy,
          minReadySeconds: g.minReadySeconds,
          template: {
            metadata: {
              labels: nonEmpty({ ...g.templateLabels, ...g.selector, ...roleLabels(g.role) }),
              annotations: nonEmpty(g.templateAnnotations),
            },
            spec: { lifecycleHooks: g.lifecycleHooks, providerSpec: { value: g.value } },
          },
        },
      }) as KubeObject,
  );

// ---------------------------------------------------------------------------------------------------
// CAPI inputs

const volume = fc.record({
  size: fc.integer({ min: 8, max: 16384 }),
  type: opt(volumeType),
  iops: opt(fc.integer({ min: 100, max: 64000 })),
  throughput: opt(fc.integer({ min: 125, max: 1000 })),
  encrypted: opt(fc.boolean()),
  encryptionKey: opt(kmsKey.map((k) => ("id" in k ? k.id : k.arn))),
});
const capiHost = fc.oneof(
  fc.record({ hostAffinity: fc.constant("default") }),
  fc.record({ hostAffinity: fc.constantFrom("default", "host"), hostID: hostId }),
  fc.record({
    hostAffinity: fc.constant("host"),
    dynamicHostAllocation: fc.oneof(fc.constant({}), fc.record({ tags: tagMap })),
  }),
);

const awsMachineSpecArb = fc
  .record({
    ami: fc.record({ id: token.map((t) => `ami-${t}`) }),
    instanceType: opt(token),
    cpuOptions: opt(
      fc.record({
        confidentialCompute: fc.constantFrom("Disabled", "AMDEncryptedVirtualizationNestedPaging"),
      }),
    ),
    additionalTags: opt(tagMap),
    iamInstanceProfile: opt(token),
    sshKeyName: opt(token),
    publicIP: opt(fc.boolean()),
    networkInterfaceType: opt(fc.constantFrom("interface", "efa", "")),
    additionalSecurityGroups: opt(fc.array(reference, { minLength: 1, maxLength: 2 })),
    subnet: fc.oneof(reference, fc.constant({})),
    tenancy: opt(fc.constantFrom("default", "dedicated", "host")),
    host: capiHost,
    rootVolume: fc.oneof(fc.constant({}), volume),
    nonRootVolumes: opt(
      fc.array(fc.record({ deviceName: token.map((t) => `/dev/${t}`), volume }), {
        minLength: 1,
        maxLength: 2,
      }),
    ),
    spotMarketOptions: opt(fc.record({ maxPrice: opt(token) })),
    httpTokens: fc.constantFrom("optional", "required"),
    placementGroupName: opt(token),
    placementGroupPartition: opt(fc.integer({ min: 1, max: 7 })),
    capacityReservationId: opt(token),
    marketType: opt(fc.constantFrom("OnDemand", "Spot", "CapacityBlock", "")),
  })
  .map(({ host, httpTokens, nonRootVolumes, ...rest }) => ({
    ...rest,
    ...host,
    nonRootVolumes: nonRootVolumes?.map((v) => ({ deviceName: v.deviceName, ...v.volume })),
    instanceMetadataOptions: {
      httpTokens,
      httpEndpoint: "enabled",
      httpProtocolIpv6: "disabled",
      instanceMetadataTags: "disabled",
      httpPutResponseHopLimit: 1,
    },
    ignition: { storageType: "UnencryptedUserData" },
  }));

const capiLabels = (role: string | undefined, user: Record<string, string>) => ({
  ...user,
  ...(role === undefined ? {} : { [`node-role.kubernetes.io/${role}`]: "" }),
  "cluster.x-k8s.io/cluster-name": CLUSTER,
});
const capiAnnotations = fc
  .record({ user: userMap, deleteMark: opt(token), preDrain: hookList, preTerminate: hookList })
  .map((a) => {
    const out: Record<string, string> = { ...a.user };
    if (a.deleteMark !== undefined) out["cluster.x-k8s.io/delete-machine"] = a.deleteMark;
    for (const h of a.preDrain) out[`pre-drain.delete.hook.machine.cluster.x-k8s.io/${h.name}`] = h.owner;
    for (const h of a.preTerminate)
      out[`pre-terminate.delete.hook.machine.cluster.x-k8s.io/${h.name}`] = h.owner;
    return nonEmpty(out);
  });
const capiMachineSpec = (
  kind: string,
  name: string,
  dataSecretName: string | undefined,
  failureDomain: string | undefined,
) => ({
  clusterName: CLUSTER,
  bootstrap: dataSecretName === undefined ? {} : { dataSecretName },
  infrastructureRef: { apiGroup: "infrastructure.cluster.x-k8s.io", kind, name },
  failureDomain,
  deletion: { nodeDeletionTimeoutSeconds: 10 },
});

const capiMachinePairArb = fc
  .record({
    name: token,
    role,
    labels: userMap,
    annotations: capiAnnotations,
    dataSecretName: opt(token),
    failureDomain: opt(token),
    instance: opt(token),
    spec: awsMachineSpecArb,
  })
  .map((g) => {
    const providerID = g.instance === undefined ? undefined : `aws:///us-east-1a/i-${g.instance}`;
    const machine: KubeObject = {
      apiVersion: "cluster.x-k8s.io/v1beta2",
      kind: "Machine",
      metadata: {
        name: g.name,
        namespace: CAPI_NS,
        labels: capiLabels(g.role, g.labels),
        annotations: g.annotations,
      },
      spec: { ...capiMachineSpec("AWSMachine", g.name, g.dataSecretName, g.failureDomain), providerID },
    };
    const infraMachine: KubeObject = {
      apiVersion: "infrastructure.cluster.x-k8s.io/v1beta2",
      kind: "AWSMachine",
      metadata: { name: g.name, namespace: CAPI_NS, labels: { "cluster.x-k8s.io/cluster-name": CLUSTER } },
      spec: { ...g.spec, providerID, instanceID: g.instance === undefined ? undefined : `i-${g.instance}` },
    };
    return { machine, infraMachine };
  });

const capiMachineSetPairArb = fc
  .record({
    name: token,
    role,
    labels: userMap,
    annotations: userMap,
    templateLabels: userMap,
    templateAnnotations: capiAnnotations,
    selector: fc.dictionary(userKey, token, { minKeys: 1, maxKeys: 2 }),
    replicas: opt(fc.integer({ min: 0, max: 50 })),
    order: fc.constantFrom("Random", "Newest", "Oldest"),
    minReadySeconds: opt(fc.integer({ min: 0, max: 600 })),
    dataSecretName: opt(token),
    failureDomain: opt(token),
    spec: awsMachineSpecArb,
  })
  .map((g) => {
    const infraTemplateName = templateName(g.name, JSON.parse(JSON.stringify(g.spec)));
    const machineSet: KubeObject = {
      apiVersion: "cluster.x-k8s.io/v1beta2",
      kind: "MachineSet",
      metadata: {
        name: g.name,
        namespace: CAPI_NS,
        labels: capiLabels(undefined, g.labels),
        annotations: nonEmpty(g.annotations),
      },
      spec: {
        clusterName: CLUSTER,
        replicas: g.replicas,
        deletion: { order: g.order },
        selector: { matchLabels: capiLabels(undefined, g.selector) },
        template: {
          metadata: {
            labels: capiLabels(g.role, { ...g.templateLabels, ...g.selector }),
            annotations: g.templateAnnotations,
          },
          spec: {
            ...capiMachineSpec("AWSMachineTemplate", infraTemplateName, g.dataSecretName, g.failureDomain),
            minReadySeconds: g.minReadySeconds,
          },
        },
      },
    };
    const infraTemplate: KubeObject = {
      apiVersion: "infrastructure.cluster.x-k8s.io/v1beta2",
      kind: "AWSMachineTemplate",
      metadata: {
        name: infraTemplateName,
        namespace: CAPI_NS,
        labels: {
          "machine.openshift.io/cluster-api-machineset": g.name,
          "cluster.x-k8s.io/cluster-name": CLUSTER,
        },
      },
      spec: { template: { spec: g.spec } },
    };
    return { machineSet, infraTemplate };
  });

// ---------------------------------------------------------------------------------------------------

const unwrap = <T>(
  result: { ok: true; value: T } | { ok: false; errors: Parameters<typeof formatFieldErrors>[0] },
): T => {
  if (!result.ok) throw new Error(`conversion failed: ${formatFieldErrors(result.errors)}`);
  return result.value;
};

describe("SPEC §5 round trip (fast-check)", () => {
  it("MAPI Machine → CAPI → MAPI is the identity", () => {
    fc.assert(
      fc.property(mapiMachineArb, (mapi) => {
        const capi = unwrap(mapiMachineToCapi(mapi, infra, { capiNamespace: CAPI_NS }));
        const back = unwrap(
          capiMachineToMapi(capi.machine, capi.infraMachine, infra, { mapiNamespace: MAPI_NS }),
        );
        expect(back.machine).toEqual(mapi);
      }),
      RUNS,
    );
  });
  it("CAPI Machine + AWSMachine → MAPI → CAPI is the identity", () => {
    fc.assert(
      fc.property(capiMachinePairArb, ({ machine, infraMachine }) => {
        const mapi = unwrap(capiMachineToMapi(machine, infraMachine, infra, { mapiNamespace: MAPI_NS }));
        const back = unwrap(mapiMachineToCapi(mapi.machine, infra, { capiNamespace: CAPI_NS }));
        expect(back.machine).toEqual(machine);
        expect(back.infraMachine).toEqual(infraMachine);
      }),
      RUNS,
    );
  });
  it("MAPI MachineSet → CAPI → MAPI is the identity", () => {
    fc.assert(
      fc.property(mapiMachineSetArb, (mapi) => {
        const capi = unwrap(mapiMachineSetToCapi(mapi, infra, { capiNamespace: CAPI_NS }));
        const back = unwrap(
          capiMachineSetToMapi(capi.machineSet, capi.infraTemplate, infra, { mapiNamespace: MAPI_NS }),
        );
        expect(back.machineSet).toEqual(mapi);
      }),
      RUNS,
    );
  });
  it("CAPI MachineSet + AWSMachineTemplate → MAPI → CAPI is the identity (template name included)", () => {
    fc.assert(
      fc.property(capiMachineSetPairArb, ({ machineSet, infraTemplate }) => {
        const mapi = unwrap(
          capiMachineSetToMapi(machineSet, infraTemplate, infra, { mapiNamespace: MAPI_NS }),
        );
        const back = unwrap(mapiMachineSetToCapi(mapi.machineSet, infra, { capiNamespace: CAPI_NS }));
        expect(back.machineSet).toEqual(machineSet);
        expect(back.infraTemplate).toEqual(infraTemplate);
      }),
      RUNS,
    );
  });
});
