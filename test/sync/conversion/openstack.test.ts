/**
 * The OpenStack platform (SPEC §5.5; issue 23): OpenstackProviderSpec ⇄ CAPO v1beta1 OpenStackMachine and
 * OpenStackMachineTemplate, as openshift/cluster-capi-operator's pkg/conversion converts them, with the
 * differences decision 77 lists. Table rows first, then errors and warnings, status, and round trips.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  OPENSTACK_UNSUPPORTED_FIELDS,
  type OpenStackUnsupportedField,
  openstackPlatform,
} from "../../../src/platforms/openstack/index.js";
import {
  capiMachineSetToMapi,
  capiMachineStatusToMapi,
  capiMachineToMapi,
  formatFieldError,
  mapiMachineSetToCapi,
  mapiMachineStatusToCapi,
  mapiMachineToCapi,
  PLATFORMS,
  platformFor,
} from "../../../src/sync/conversion/index.js";
import { CAPI_NS, CLUSTER, MAPI_NS } from "./builders.js";
import {
  CAPO_API_VERSION,
  NETWORK_ID,
  OS_ZONE,
  openStackMachine,
  openStackMachineSpec,
  openStackMachineTemplate,
  openstackCapiMachine,
  openstackCapiMachineSet,
  openstackInfrastructure,
  openstackMapiMachine,
  openstackMapiMachineSet,
  openstackProviderSpec,
  SUBNET_ID,
} from "./openstack-builders.js";

const P = "spec.providerSpec.value";
const S = "OpenStackMachine.spec";
const infra = openstackInfrastructure();
/** The registry holds OpenStack; the tests name the list anyway, so a platform dropped from it shows here. */
const WITH_OPENSTACK = PLATFORMS;

const toCapi = (value: Record<string, unknown>, providerID?: string) =>
  mapiMachineToCapi(
    openstackMapiMachine(value, providerID === undefined ? {} : { spec: { providerID } }),
    infra,
    { capiNamespace: CAPI_NS, platforms: WITH_OPENSTACK },
  );

const capoSpec = (extra: Record<string, unknown>) => {
  const result = toCapi(openstackProviderSpec(extra));
  if (!result.ok) throw new Error(result.errors.map(formatFieldError).join("\n"));
  return result.value.infraMachine.spec as Record<string, unknown>;
};
const capiErrors = (extra: Record<string, unknown>) => {
  const result = toCapi(openstackProviderSpec(extra));
  return result.ok ? [] : result.errors.map(formatFieldError);
};
const capiWarnings = (extra: Record<string, unknown>) => {
  const result = toCapi(openstackProviderSpec(extra));
  return result.ok ? result.warnings : ["<failed>"];
};

const toMapi = (spec: Record<string, unknown>) =>
  capiMachineToMapi(openstackCapiMachine(), openStackMachine(spec), infra, {
    mapiNamespace: MAPI_NS,
    platforms: WITH_OPENSTACK,
  });
const providerValueOf = (machine: { spec?: unknown }) =>
  (machine.spec as { providerSpec: { value: Record<string, unknown> } }).providerSpec.value;
const mapoValue = (extra: Record<string, unknown>) => {
  const result = toMapi(openStackMachineSpec(extra));
  if (!result.ok) throw new Error(result.errors.map(formatFieldError).join("\n"));
  return providerValueOf(result.value.machine);
};
const mapiErrors = (extra: Record<string, unknown>) => {
  const result = toMapi(openStackMachineSpec(extra));
  return result.ok ? [] : result.errors.map(formatFieldError);
};
const mapiWarnings = (extra: Record<string, unknown>) => {
  const result = toMapi(openStackMachineSpec(extra));
  return result.ok ? result.warnings : ["<failed>"];
};

describe("registry: platformFor picks OpenStack", () => {
  it("is a supported platform: the registry converts on OpenStack with no platforms option (decision 87)", () => {
    const lookup = platformFor(infra);
    expect(lookup.ok && lookup.platform).toBe(openstackPlatform);
    expect(
      mapiMachineToCapi(openstackMapiMachine(openstackProviderSpec()), infra, { capiNamespace: CAPI_NS }).ok,
    ).toBe(true);
  });
  it("status.platformStatus.type OpenStack → the OpenStack converter with CAPO's kinds", () => {
    const lookup = platformFor(infra, WITH_OPENSTACK);
    expect(lookup.ok && lookup.platform).toBe(openstackPlatform);
    expect(lookup.ok && lookup.platform.infraMachine).toMatchObject({
      kind: "OpenStackMachine",
      version: "v1beta1",
    });
  });
});

describe("OpenStack Machine level (MAPI → CAPI)", () => {
  it("the installer's worker converts to an OpenStackMachine v1beta1 and a CAPI Machine", () => {
    const result = toCapi(openstackProviderSpec(), "openstack:///8f2c1e0a-1111-2222-3333-444455556666");
    if (!result.ok) throw new Error(result.errors.map(formatFieldError).join("\n"));
    expect(result.warnings).toEqual([]);
    expect(result.value.infraMachine).toEqual({
      apiVersion: CAPO_API_VERSION,
      kind: "OpenStackMachine",
      metadata: {
        name: "worker-a",
        namespace: CAPI_NS,
        labels: { "cluster.x-k8s.io/cluster-name": CLUSTER },
      },
      spec: openStackMachineSpec({ providerID: "openstack:///8f2c1e0a-1111-2222-3333-444455556666" }),
    });
    expect(result.value.machine.spec).toMatchObject({
      clusterName: CLUSTER,
      bootstrap: { dataSecretName: "worker-user-data" },
      infrastructureRef: {
        apiGroup: "infrastructure.cluster.x-k8s.io",
        kind: "OpenStackMachine",
        name: "worker-a",
      },
      failureDomain: OS_ZONE,
    });
  });
  it("MachineSet → CAPI MachineSet + OpenStackMachineTemplate (v1beta1, hashed name)", () => {
    const result = mapiMachineSetToCapi(openstackMapiMachineSet(openstackProviderSpec()), infra, {
      capiNamespace: CAPI_NS,
      platforms: WITH_OPENSTACK,
    });
    if (!result.ok) throw new Error(result.errors.map(formatFieldError).join("\n"));
    const template = result.value.infraTemplate;
    expect(template.apiVersion).toBe(CAPO_API_VERSION);
    expect(template.kind).toBe("OpenStackMachineTemplate");
    expect(template.metadata?.name).toMatch(/^workers-[0-9a-f]+$/);
    expect(template.spec).toEqual({ template: { spec: openStackMachineSpec() } });
    expect(result.value.machineSet.spec).toMatchObject({
      template: {
        spec: { infrastructureRef: { kind: "OpenStackMachineTemplate", name: template.metadata?.name } },
      },
    });
  });
});

describe("OpenstackProviderSpec → OpenStackMachine (field table)", () => {
  it("flavor → flavor; image → image.filter.name; keyName → sshKeyName", () => {
    expect(capoSpec({ keyName: "ops" })).toMatchObject({
      flavor: "m1.xlarge",
      image: { filter: { name: "rhcos-4.17" } },
      sshKeyName: "ops",
    });
  });
  it("cloudsSecret + cloudName → identityRef {name, cloudName} (namespace not carried)", () => {
    expect(capoSpec({}).identityRef).toEqual({ name: "openstack-cloud-credentials", cloudName: "openstack" });
  });
  it("no cloudsSecret → no identityRef; a lone cloudName → warning", () => {
    expect(capoSpec({ cloudsSecret: undefined, cloudName: undefined })).not.toHaveProperty("identityRef");
    expect(capiWarnings({ cloudsSecret: undefined })).toEqual([
      `${P}.cloudName: cloudName is ignored without a cloudsSecret, ignoring`,
    ]);
  });
  it("serverGroupID → serverGroup.id; serverGroupName → serverGroup.filter.name; both → id wins, warning", () => {
    expect(capoSpec({ serverGroupID: "sg-uuid", serverGroupName: undefined }).serverGroup).toEqual({
      id: "sg-uuid",
    });
    expect(capiWarnings({ serverGroupID: "sg-uuid" })).toEqual([
      `${P}.serverGroupName: serverGroupName is dropped because serverGroupID is set (both must name the same server group)`,
    ]);
  });
  it("serverMetadata map → [{key, value}] sorted by key", () => {
    expect(capoSpec({ serverMetadata: { b: "2", a: "1" } }).serverMetadata).toEqual([
      { key: "a", value: "1" },
      { key: "b", value: "2" },
    ]);
  });
  it("configDrive, trunk, tags copied", () => {
    expect(capoSpec({ configDrive: true, trunk: false, tags: ["x"] })).toMatchObject({
      configDrive: true,
      trunk: false,
      tags: ["x"],
    });
  });
  it("rootVolume {diskSize, volumeType, availabilityZone} → {sizeGiB, type, availabilityZone {from: Name, name}}", () => {
    expect(
      capoSpec({ rootVolume: { diskSize: 100, volumeType: "ssd", availabilityZone: "cinder-az1" } })
        .rootVolume,
    ).toEqual({ sizeGiB: 100, type: "ssd", availabilityZone: { from: "Name", name: "cinder-az1" } });
  });
  it("rootVolume deprecated sourceType/deviceType/sourceUUID → upstream's warnings", () => {
    expect(
      capiWarnings({
        rootVolume: { diskSize: 30, sourceType: "image", deviceType: "disk", sourceUUID: "rhcos" },
      }),
    ).toEqual([
      `${P}.rootVolume.deviceType: deviceType is silently ignored by MAPO and will not be converted`,
      `${P}.rootVolume.sourceType: sourceType is silently ignored by MAPO and will not be converted`,
      `${P}.rootVolume.sourceUUID: sourceUUID is superseded by spec.image in MAPO and will be ignored here`,
    ]);
  });
  it("additionalBlockDevices: Volume keeps type and zone; Local has no volume", () => {
    expect(
      capoSpec({
        additionalBlockDevices: [
          {
            name: "etcd",
            sizeGiB: 10,
            storage: { type: "Volume", volume: { type: "fast", availabilityZone: "z" } },
          },
          { name: "scratch", sizeGiB: 5, storage: { type: "Local" } },
        ],
      }).additionalBlockDevices,
    ).toEqual([
      {
        name: "etcd",
        sizeGiB: 10,
        storage: { type: "Volume", volume: { type: "fast", availabilityZone: { from: "Name", name: "z" } } },
      },
      { name: "scratch", sizeGiB: 5, storage: { type: "Local" } },
    ]);
  });
  it("securityGroups: uuid → {id}; name (+filter) → {filter}", () => {
    expect(
      capoSpec({ securityGroups: [{ uuid: "u1" }, { name: "w", filter: { projectId: "p", tags: "a,b" } }] })
        .securityGroups,
    ).toEqual([{ id: "u1" }, { filter: { projectID: "p", tags: ["a", "b"], name: "w" } }]);
  });
  it("ports[] → CAPO ports with network.id, fixedIPs subnet+ip, security group IDs, inverted portSecurity, profile", () => {
    const port = {
      networkID: NETWORK_ID,
      nameSuffix: "storage",
      fixedIPs: [{ subnetID: SUBNET_ID, ipAddress: "10.0.0.5" }],
      securityGroups: ["sg-1"],
      allowedAddressPairs: [{ ipAddress: "10.0.0.9" }],
      portSecurity: false,
      profile: { capabilities: '["switchdev"]', trusted: "true" },
      vnicType: "direct",
      tags: ["t"],
      trunk: false,
    };
    expect(capoSpec({ ports: [port], networks: undefined }).ports).toEqual([
      {
        network: { id: NETWORK_ID },
        description: "",
        nameSuffix: "storage",
        fixedIPs: [{ subnet: { id: SUBNET_ID }, ipAddress: "10.0.0.5" }],
        securityGroups: [{ id: "sg-1" }],
        tags: ["t"],
        trunk: false,
        allowedAddressPairs: [{ ipAddress: "10.0.0.9" }],
        vnicType: "direct",
        profile: { ovsHWOffload: true, trustedVF: true },
        disablePortSecurity: true,
      },
    ]);
  });
  it("networks[] with uuid → one port on that network with a fixed IP per subnet and the network's settings", () => {
    const networks = [
      {
        uuid: NETWORK_ID,
        subnets: [{ uuid: SUBNET_ID }],
        portTags: ["x"],
        noAllowedAddressPairs: true,
        vnicType: "direct",
        portSecurity: true,
      },
    ];
    expect(capoSpec({ networks }).ports).toEqual([
      {
        network: { id: NETWORK_ID },
        fixedIPs: [{ subnet: { id: SUBNET_ID } }],
        tags: ["x"],
        allowedAddressPairs: [],
        vnicType: "direct",
        disablePortSecurity: false,
      },
    ]);
  });
  it("networks[] of subnets only → one port per subnet, without a network", () => {
    expect(capoSpec({ networks: [{ subnets: [{ uuid: "s1" }, { uuid: "s2" }] }] }).ports).toEqual([
      { fixedIPs: [{ subnet: { id: "s1" } }] },
      { fixedIPs: [{ subnet: { id: "s2" } }] },
    ]);
  });
  it("ports come before networks (upstream's order)", () => {
    const ports = capoSpec({ ports: [{ networkID: "n1" }] }).ports as Record<string, unknown>[];
    expect(ports.map((p) => (p.network as { id?: string } | undefined)?.id)).toEqual(["n1", undefined]);
  });
  it("availabilityZone → Machine failureDomain, not the OpenStackMachine", () => {
    expect(capoSpec({})).not.toHaveProperty("availabilityZone");
  });
});

describe("OpenStack errors and warnings (MAPI → CAPI)", () => {
  it.each([
    ["floatingIP", "192.0.2.10", "floatingIP has no CAPO equivalent"],
    ["primarySubnet", "subnet-x", "primarySubnet has no CAPO equivalent"],
  ])("%s set → error (upstream drops it silently)", (field, value, message) => {
    const errors = capiErrors({ [field]: value });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(`${P}.${field}: Invalid value: ${JSON.stringify(value)}: ${message}`);
  });
  it("unknown providerSpec field → error at its path", () => {
    expect(capiErrors({ bogus: 1 })).toEqual([
      `${P}.bogus: Invalid value: 1: field has no CAPI equivalent and cannot be converted`,
    ]);
  });
  it("providerSpec.metadata set → error", () => {
    expect(capiErrors({ metadata: { name: "x" } })).toEqual([
      `${P}.metadata: Invalid value: {"name":"x"}: metadata is not supported`,
    ]);
  });
  it("wrong kind → error", () => {
    expect(capiErrors({ kind: "AWSMachineProviderConfig" })).toEqual([
      `${P}.kind: Invalid value: "AWSMachineProviderConfig": kind must be OpenstackProviderSpec on OpenStack`,
    ]);
  });
  it("port profile with an unsupported key → upstream's error", () => {
    expect(capiErrors({ ports: [{ networkID: "n", profile: { foo: "bar" } }] })).toEqual([
      `${P}.ports[0].profile: Invalid value: {"foo":"bar"}: profile contains an unsupported key`,
    ]);
  });
  it("Volume block device without volume → upstream's error", () => {
    expect(
      capiErrors({ additionalBlockDevices: [{ name: "d", sizeGiB: 1, storage: { type: "Volume" } }] }),
    ).toEqual([
      `${P}.additionalBlockDevices[0].storage.volume: Invalid value: null: volume is required, but is missing`,
    ]);
  });
  it("root volume without diskSize → error (CAPO needs sizeGiB ≥ 1)", () => {
    expect(capiErrors({ rootVolume: { volumeType: "ssd" } })).toEqual([
      `${P}.rootVolume.diskSize: Invalid value: null: a root volume needs a diskSize of at least 1 GiB`,
    ]);
  });
  it("a network with nothing to attach to → error", () => {
    expect(capiErrors({ networks: [{ portTags: ["x"] }] })).toEqual([
      `${P}.networks[0]: Invalid value: {"portTags":["x"]}: a network needs a uuid, a filter or subnets`,
    ]);
  });
  it("a security group with no uuid, name or filter → error", () => {
    expect(capiErrors({ securityGroups: [{}] })).toEqual([
      `${P}.securityGroups[0]: Invalid value: {}: A security group must be referenced by a UUID or filter`,
    ]);
  });
  it("every error of a providerSpec is reported at once", () => {
    expect(capiErrors({ floatingIP: "192.0.2.1", primarySubnet: "s", bogus: true })).toHaveLength(3);
  });
  it.each([
    [
      { networks: [{ uuid: "n", fixedIp: "10.0.0.1" }] },
      `${P}.networks[0].fixedIp: fixedIp is ignored by MAPO, ignoring`,
    ],
    [
      { ports: [{ networkID: "n", hostID: "h" }] },
      `${P}.ports[0].hostID: hostID is ignored by MAPO, ignoring`,
    ],
    [
      { networks: [{ subnets: [{ uuid: "s", filter: { networkId: "n" } }] }] },
      `${P}.networks[0].subnets[0].filter.networkId: networkId is ignored by MAPO, ignoring`,
    ],
    [{ sshUserName: "core" }, `${P}.sshUserName: sshUserName is ignored by MAPO and will not be converted`],
    [
      { networks: [{ uuid: "n", filter: { name: "x" } }] },
      `${P}.networks[0].filter: the network filter is ignored because the network has a uuid`,
    ],
  ])("warning: %j", (extra, warning) => {
    expect(capiWarnings(extra)).toContain(warning);
  });
});

describe("OpenStackMachine → OpenstackProviderSpec (CAPI → MAPI)", () => {
  it("the converter's own OpenStackMachine converts back to the installer's providerSpec (minus namespace)", () => {
    const { cloudsSecret: _secret, ...rest } = openstackProviderSpec();
    expect(mapoValue({})).toEqual({
      ...rest,
      cloudsSecret: { name: "openstack-cloud-credentials" },
      securityGroups: [{ name: "demo-worker" }],
      networks: [{ subnets: [{ filter: { name: "demo-nodes", tags: "openshiftClusterID=demo" } }] }],
    });
  });
  it("a CAPO port with nameSuffix or a port-only field → MAPO ports[]; otherwise → networks[]", () => {
    const value = mapoValue({
      ports: [
        { network: { id: "n1" }, nameSuffix: "a" },
        { network: { id: "n2" }, macAddress: "fa:16:3e:00:00:01" },
        { network: { id: "n3" }, fixedIPs: [{ subnet: { id: "s3" } }] },
        { network: { filter: { name: "net" } } },
      ],
    });
    expect(value.ports).toEqual([
      { networkID: "n1", nameSuffix: "a" },
      { networkID: "n2", macAddress: "fa:16:3e:00:00:01" },
    ]);
    expect(value.networks).toEqual([{ uuid: "n3", subnets: [{ uuid: "s3" }] }, { filter: { name: "net" } }]);
  });
  it("a single port security group is kept (upstream keeps only lists of two or more)", () => {
    expect(mapoValue({ ports: [{ network: { id: "n" }, securityGroups: [{ id: "sg" }] }] }).ports).toEqual([
      { networkID: "n", securityGroups: ["sg"] },
    ]);
  });
  it("failureDomain → availabilityZone; Machine gets instance-type and zone labels", () => {
    const result = toMapi(openStackMachineSpec());
    if (!result.ok) throw new Error("failed");
    expect(providerValueOf(result.value.machine).availabilityZone).toBe(OS_ZONE);
    expect(result.value.machine.metadata?.labels).toMatchObject({
      "machine.openshift.io/instance-type": "m1.xlarge",
      "machine.openshift.io/zone": OS_ZONE,
    });
  });
  it.each([
    [
      { flavorID: "f-1" },
      `${S}.flavorID: Invalid value: "f-1": MAPO only supports defining flavors via names`,
    ],
    [
      { image: { id: "img-1" } },
      `${S}.image.id: Invalid value: "img-1": MAPO only supports defining images by names`,
    ],
    [
      { image: { imageRef: { name: "orc" } } },
      `${S}.image.imageRef: Invalid value: {"name":"orc"}: MAPO only supports defining images by names`,
    ],
    [
      {
        ports: [{ network: { id: "n" }, nameSuffix: "x", fixedIPs: [{ subnet: { filter: { name: "s" } } }] }],
      },
      `${S}.ports[0].fixedIPs[0].subnet.filter: Invalid value: {"name":"s"}: MAPO only supports defining subnets via IDs`,
    ],
    [
      { ports: [{ nameSuffix: "x" }] },
      `${S}.ports[0].network: Invalid value: null: A port must have a reference to a network`,
    ],
    [
      { ports: [{ network: { id: "n" }, securityGroups: [{ filter: { name: "g" } }] }] },
      `${S}.ports[0].securityGroups[0]: Invalid value: {"filter":{"name":"g"}}: MAPO only supports defining port security groups by ID`,
    ],
    [
      { securityGroups: [{}] },
      `${S}.securityGroups[0]: Invalid value: {}: A security group must be referenced by a UUID or filter`,
    ],
    [
      { serverGroup: {} },
      `${S}.serverGroup: Invalid value: {}: A server group must be referenced by a UUID or filter`,
    ],
    [
      { additionalBlockDevices: [{ name: "d", sizeGiB: 1, storage: { type: "Volume" } }] },
      `${S}.additionalBlockDevices[0]: Invalid value: {"name":"d","sizeGiB":1,"storage":{"type":"Volume"}}: The volume field must be populated if type is volume`,
    ],
    [
      { rootVolume: { sizeGiB: 10, availabilityZone: { from: "Machine" } } },
      `${S}.rootVolume.availabilityZone.from: Invalid value: "Machine": Machine API can only name a volume availability zone (from: Name)`,
    ],
  ])("error: %j", (extra, error) => {
    expect(mapiErrors(extra)).toEqual([error]);
  });
  it("image filter tags → upstream's warning", () => {
    expect(mapiWarnings({ image: { filter: { name: "rhcos", tags: ["a"] } } })).toEqual([
      `${S}.image.filter.tags: MAPO does not support filtering image by tags`,
    ]);
  });
  it.each(["hostID", "propagateUplinkStatus", "valueSpecs"])("port %s → upstream's warning", (key) => {
    expect(
      mapiWarnings({
        ports: [{ network: { id: "n" }, nameSuffix: "x", [key]: key === "valueSpecs" ? [] : true }],
      }),
    ).toEqual([`${S}.ports[0].${key}: The ${key} field has no equivalent in MAPO and is not supported`]);
  });

  const UNSUPPORTED_SAMPLES: Readonly<Record<OpenStackUnsupportedField, Record<string, unknown>>> = {
    flavorID: { flavorID: "f" },
    "image.id": { image: { id: "i" } },
    "image.imageRef": { image: { imageRef: { name: "i" } } },
    floatingIPPoolRef: { floatingIPPoolRef: { name: "pool" } },
    schedulerHintAdditionalProperties: { schedulerHintAdditionalProperties: [{ name: "x" }] },
    "identityRef.region": { identityRef: { name: "s", cloudName: "c", region: "r" } },
  };
  it.each(OPENSTACK_UNSUPPORTED_FIELDS)("unsupported field %s → error at its path", (field) => {
    const errors = mapiErrors(UNSUPPORTED_SAMPLES[field]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(new RegExp(`^${S}\\.${field.replace(".", "\\.")}: Invalid value: `));
  });
  it("MachineSet + OpenStackMachineTemplate → MAPI MachineSet", () => {
    const result = capiMachineSetToMapi(
      openstackCapiMachineSet("workers-abc"),
      openStackMachineTemplate("workers-abc"),
      infra,
      { mapiNamespace: MAPI_NS, platforms: WITH_OPENSTACK },
    );
    if (!result.ok) throw new Error(result.errors.map(formatFieldError).join("\n"));
    const value = (
      result.value.machineSet.spec as { template: { spec: { providerSpec: { value: unknown } } } }
    ).template.spec.providerSpec.value;
    expect(value).toMatchObject({ kind: "OpenstackProviderSpec", flavor: "m1.xlarge", image: "rhcos-4.17" });
  });
});

describe("OpenStack status (SPEC §5.4)", () => {
  const now = "2026-12-01T10:00:00Z";
  it("MAPI providerStatus.instanceState ACTIVE → OpenStackMachine instanceState, ready", () => {
    const mapi = openstackMapiMachine(openstackProviderSpec(), {
      status: { phase: "Running", providerStatus: { instanceState: "ACTIVE" } },
    });
    const result = mapiMachineStatusToCapi(mapi, infra, { now, platforms: WITH_OPENSTACK });
    expect(result.ok && result.value.infraMachineStatus).toEqual({ instanceState: "ACTIVE", ready: true });
  });
  it("no instance state → not ready", () => {
    const result = mapiMachineStatusToCapi(openstackMapiMachine(openstackProviderSpec()), infra, {
      now,
      platforms: WITH_OPENSTACK,
    });
    expect(result.ok && result.value.infraMachineStatus).toEqual({ ready: false });
  });
  it("OpenStackMachine instanceID/instanceState → MAPI providerStatus; existing conditions kept", () => {
    const condition = { type: "MachineCreation", status: "True", lastTransitionTime: "2026-01-01T00:00:00Z" };
    const result = capiMachineStatusToMapi(
      openstackCapiMachine({ status: { phase: "Running" } }),
      openStackMachine(openStackMachineSpec({ instanceID: "8f2c" }), { status: { instanceState: "ACTIVE" } }),
      infra,
      {
        now,
        platforms: WITH_OPENSTACK,
        mapiMachine: openstackMapiMachine(openstackProviderSpec(), {
          status: { providerStatus: { conditions: [condition] } },
        }),
      },
    );
    expect(result.ok && result.value.status).toMatchObject({
      phase: "Running",
      providerStatus: { instanceId: "8f2c", instanceState: "ACTIVE", conditions: [condition] },
    });
    // Copies, not the MAPI Machine's own objects (the sync's memo freezes its results, src/sync/converter.ts).
    expect(
      result.ok && (result.value.status.providerStatus as { conditions: unknown[] }).conditions[0],
    ).not.toBe(condition);
  });
});

// ---------------------------------------------------------------------------------------------------
// round trips

const roundTrip = (value: Record<string, unknown>) => {
  const capi = mapiMachineToCapi(openstackMapiMachine(value), infra, {
    capiNamespace: CAPI_NS,
    platforms: WITH_OPENSTACK,
  });
  if (!capi.ok) return { errors: capi.errors.map(formatFieldError) };
  const back = capiMachineToMapi(capi.value.machine, capi.value.infraMachine, infra, {
    mapiNamespace: MAPI_NS,
    platforms: WITH_OPENSTACK,
  });
  if (!back.ok) return { errors: back.errors.map(formatFieldError) };
  return { value: providerValueOf(back.value.machine), capi };
};

/** What MAPI → CAPI → MAPI preserves: everything but the secret namespaces (decision 77). */
const supported = (value: Record<string, unknown>) => {
  const { cloudsSecret, userDataSecret, ...rest } = value as {
    cloudsSecret?: { name: string };
    userDataSecret?: { name: string };
  } & Record<string, unknown>;
  return {
    ...rest,
    ...(cloudsSecret === undefined ? {} : { cloudsSecret: { name: cloudsSecret.name } }),
    ...(userDataSecret === undefined ? {} : { userDataSecret: { name: userDataSecret.name } }),
  };
};

const token = fc.stringMatching(/^[a-z][a-z0-9-]{0,9}$/);
const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const defined = (o: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
const tags = fc.uniqueArray(token, { minLength: 1, maxLength: 3 }).map((t) => t.join(","));
const neutronFilter = fc
  .record({
    name: opt(token),
    description: opt(token),
    projectId: opt(token),
    tags: opt(tags),
    notTagsAny: opt(tags),
  })
  .map(defined)
  .filter((f) => Object.keys(f).length > 0);
const subnetFilter = fc
  .record({
    name: opt(token),
    cidr: opt(fc.constantFrom("10.0.0.0/16", "fd00::/64")),
    ipVersion: opt(fc.constantFrom(4, 6)),
    tags: opt(tags),
  })
  .map(defined)
  .filter((f) => Object.keys(f).length > 0);
const subnet = fc.oneof(
  token.map((uuid) => ({ uuid })),
  subnetFilter.map((filter) => ({ filter })),
);
const networkSettings = fc
  .record({
    portTags: opt(fc.uniqueArray(token, { minLength: 1, maxLength: 2 })),
    vnicType: opt(fc.constantFrom("normal", "direct")),
    portSecurity: opt(fc.boolean()),
    noAllowedAddressPairs: opt(fc.constant(true)),
    profile: opt(fc.constantFrom({ capabilities: "switchdev" }, { trusted: "true" })),
  })
  .map(defined);
const network = fc.oneof(
  fc
    .tuple(
      fc.oneof(
        token.map((uuid) => ({ uuid })),
        neutronFilter.map((filter) => ({ filter })),
      ),
      fc.array(subnet, { maxLength: 2 }),
      networkSettings,
    )
    .map(([ref, subnets, settings]) => ({ ...ref, ...(subnets.length > 0 ? { subnets } : {}), ...settings })),
  fc.tuple(subnet, networkSettings).map(([s, settings]) => ({ subnets: [s], ...settings })),
);
const port = fc
  .record({
    networkID: token,
    nameSuffix: opt(token),
    description: opt(token),
    adminStateUp: opt(fc.boolean()),
    macAddress: opt(fc.constant("fa:16:3e:00:00:01")),
    fixedIPs: opt(
      fc.array(fc.record({ subnetID: token, ipAddress: opt(fc.constant("10.0.0.7")) }).map(defined), {
        minLength: 1,
        maxLength: 2,
      }),
    ),
    securityGroups: opt(fc.uniqueArray(token, { minLength: 1, maxLength: 2 })),
    allowedAddressPairs: opt(
      fc.array(
        fc
          .record({ ipAddress: fc.constant("10.0.0.9"), macAddress: opt(fc.constant("fa:16:3e:00:00:02")) })
          .map(defined),
        { minLength: 1, maxLength: 1 },
      ),
    ),
    tags: opt(fc.uniqueArray(token, { minLength: 1, maxLength: 2 })),
    vnicType: opt(fc.constantFrom("normal", "direct")),
    profile: opt(
      fc.constantFrom(
        { capabilities: "switchdev" },
        { trusted: "true" },
        { capabilities: "switchdev", trusted: "true" },
      ),
    ),
    portSecurity: opt(fc.boolean()),
    trunk: opt(fc.boolean()),
  })
  .map(defined);
const securityGroup = fc.oneof(
  token.map((uuid) => ({ uuid })),
  fc
    .tuple(
      token,
      fc.option(
        neutronFilter.map(({ name: _n, ...f }) => f).filter((f) => Object.keys(f).length > 0),
        { nil: undefined },
      ),
    )
    .map(([name, filter]) => (filter === undefined ? { name } : { name, filter })),
);
const blockDevice = fc
  .tuple(token, fc.integer({ min: 1, max: 500 }), fc.boolean(), opt(token), opt(token))
  .map(([name, sizeGiB, volume, type, zone]) => ({
    name,
    sizeGiB,
    storage: volume
      ? { type: "Volume", volume: defined({ type, availabilityZone: zone }) }
      : { type: "Local" },
  }));
const providerSpecArb = fc
  .record({
    flavor: token,
    image: token,
    keyName: opt(token),
    availabilityZone: opt(token),
    cloudsSecret: opt(token.map((name) => ({ name, namespace: "openshift-machine-api" }))),
    cloudName: opt(token),
    userDataSecret: opt(token.map((name) => ({ name }))),
    networks: opt(fc.array(network, { minLength: 1, maxLength: 2 })),
    ports: opt(fc.array(port, { minLength: 1, maxLength: 2 })),
    securityGroups: opt(fc.array(securityGroup, { minLength: 1, maxLength: 2 })),
    trunk: opt(fc.boolean()),
    tags: opt(fc.uniqueArray(token, { minLength: 1, maxLength: 3 })),
    serverMetadata: opt(fc.dictionary(token, token, { minKeys: 1, maxKeys: 3 })),
    configDrive: opt(fc.boolean()),
    rootVolume: opt(
      fc
        .record({
          diskSize: fc.integer({ min: 1, max: 1000 }),
          volumeType: opt(token),
          availabilityZone: opt(token),
        })
        .map(defined),
    ),
    additionalBlockDevices: opt(
      fc.uniqueArray(blockDevice, { minLength: 1, maxLength: 2, selector: (d) => d.name }),
    ),
    serverGroup: opt(
      fc.oneof(
        token.map((id) => ({ serverGroupID: id })),
        token.map((name) => ({ serverGroupName: name })),
      ),
    ),
  })
  .map(({ serverGroup, cloudName, cloudsSecret, ...rest }) =>
    defined({
      apiVersion: "machine.openshift.io/v1alpha1",
      kind: "OpenstackProviderSpec",
      ...rest,
      cloudsSecret,
      // cloudName without a secret is dropped with a warning (upstream), so generate it only with one.
      cloudName: cloudsSecret === undefined ? undefined : cloudName,
      ...serverGroup,
    }),
  );

describe("OpenStack round trips (SPEC §5: lossless for supported input)", () => {
  it("the installer's providerSpec survives MAPI → CAPI → MAPI", () => {
    const { value } = roundTrip(openstackProviderSpec());
    expect(value).toEqual({
      ...supported(openstackProviderSpec()),
      networks: [{ subnets: [{ filter: { name: "demo-nodes", tags: "openshiftClusterID=demo" } }] }],
      securityGroups: [{ name: "demo-worker" }],
    });
  });
  it("property: MAPI → CAPI → MAPI equals the generated providerSpec", () => {
    fc.assert(
      fc.property(providerSpecArb, (value) => {
        const result = roundTrip(value);
        expect(result.errors).toBeUndefined();
        expect(result.value).toEqual(supported(value));
      }),
      { numRuns: 300 },
    );
  });
  it("property: CAPI → MAPI → CAPI gives back the same OpenStackMachine spec", () => {
    fc.assert(
      fc.property(providerSpecArb, (value) => {
        const first = roundTrip(value);
        if (first.capi === undefined || !first.capi.ok) throw new Error(String(first.errors));
        const capoSpec1 = first.capi.value.infraMachine.spec;
        const again = mapiMachineToCapi(openstackMapiMachine(first.value as Record<string, unknown>), infra, {
          capiNamespace: CAPI_NS,
          platforms: WITH_OPENSTACK,
        });
        expect(again.ok && again.value.infraMachine.spec).toEqual(capoSpec1);
      }),
      { numRuns: 200 },
    );
  });
});
