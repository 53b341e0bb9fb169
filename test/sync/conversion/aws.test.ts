/**
 * SPEC §5.3: every row of the AWS table, both ways, named after the row. MAPI → CAPI rows convert a
 * Machine whose providerSpec differs from the minimal one only in the row's field; CAPI → MAPI rows
 * convert a CAPI Machine with an AWSMachine that differs only in the row's field.
 */
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../../src/kube/object.js";
import { AWS_UNSUPPORTED_FIELDS, type AwsUnsupportedField } from "../../../src/platforms/aws/index.js";
import {
  AWS_PROVIDER_DEFAULTS,
  capiMachineToMapi,
  formatFieldError,
  mapiMachineSetToCapi,
  mapiMachineToCapi,
} from "../../../src/sync/conversion/index.js";
import {
  awsMachine,
  awsMachineSpec,
  CAPI_NS,
  capiMachine,
  infrastructure,
  MAPI_NS,
  mapiMachine,
  mapiMachineSet,
  providerSpec,
} from "./builders.js";

const P = "spec.providerSpec.value";

/**
 * An AWSMachine spec setting each field of the platform's unsupported list (and nothing else unsupported).
 * Keyed by the list's own type, so a field added to the list does not compile here until it has a sample.
 */
const UNSUPPORTED_SAMPLES: Readonly<Record<AwsUnsupportedField, Record<string, unknown>>> = {
  "ami.eksLookupType": { ami: { id: "ami-1", eksLookupType: "AmazonLinux" } },
  imageLookupFormat: { imageLookupFormat: "x" },
  imageLookupOrg: { imageLookupOrg: "1" },
  imageLookupBaseOS: { imageLookupBaseOS: "rhel" },
  networkInterfaces: { networkInterfaces: ["eni-1"] },
  uncompressedUserData: { uncompressedUserData: true },
  "ignition.proxy": { ignition: { storageType: "UnencryptedUserData", proxy: { httpProxy: "p" } } },
  "ignition.tls": { ignition: { storageType: "UnencryptedUserData", tls: {} } },
  securityGroupOverrides: { securityGroupOverrides: { node: "sg-1" } },
  "cloudInit.secretCount": { cloudInit: { secretCount: 1 } },
  "cloudInit.secretPrefix": { cloudInit: { secretPrefix: "p" } },
  "cloudInit.insecureSkipSecretsManager": { cloudInit: { insecureSkipSecretsManager: true } },
  "cloudInit.secureSecretsBackend": { cloudInit: { secureSecretsBackend: "ssm-parameter-store" } },
};

const toCapi = (value: Record<string, unknown>, labels?: Record<string, string>) =>
  mapiMachineToCapi(mapiMachine({ value, ...(labels === undefined ? {} : { labels }) }), infrastructure(), {
    capiNamespace: CAPI_NS,
  });

/** The AWSMachine spec for a providerSpec; fails the test if conversion failed. */
const capiSpec = (extra: Record<string, unknown>) => {
  const result = toCapi(providerSpec(extra));
  if (!result.ok) throw new Error(result.errors.map(formatFieldError).join("\n"));
  return result.value.infraMachine.spec as Record<string, unknown>;
};

const capiErrors = (extra: Record<string, unknown>, labels?: Record<string, string>) => {
  const result = toCapi(providerSpec(extra), labels);
  return result.ok ? [] : result.errors.map(formatFieldError);
};

const capiWarnings = (extra: Record<string, unknown>) => {
  const result = toCapi(providerSpec(extra));
  return result.ok ? result.warnings : ["<failed>"];
};

const toMapi = (
  spec: Record<string, unknown>,
  opts: {
    labels?: Record<string, string>;
    awsCluster?: KubeObject;
    machineSpec?: Record<string, unknown>;
  } = {},
) =>
  capiMachineToMapi(
    capiMachine({
      ...(opts.labels === undefined ? {} : { labels: opts.labels }),
      ...(opts.machineSpec === undefined ? {} : { spec: opts.machineSpec }),
    }),
    awsMachine({ spec }),
    infrastructure(),
    { mapiNamespace: MAPI_NS, ...(opts.awsCluster === undefined ? {} : { infraCluster: opts.awsCluster }) },
  );

const mapiValue = (extra: Record<string, unknown>) => {
  const result = toMapi(awsMachineSpec(extra));
  if (!result.ok) throw new Error(result.errors.map(formatFieldError).join("\n"));
  return (result.value.machine.spec as { providerSpec: { value: Record<string, unknown> } }).providerSpec
    .value;
};

const mapiErrors = (extra: Record<string, unknown>, opts: Parameters<typeof toMapi>[1] = {}) => {
  const result = toMapi(awsMachineSpec(extra), opts);
  return result.ok ? [] : result.errors.map(formatFieldError);
};

describe("SPEC §5.3 AWS providerSpec → AWSMachine (MAPI → CAPI)", () => {
  it("ami.id → ami.id", () => {
    expect(capiSpec({ ami: { id: "ami-1" } }).ami).toEqual({ id: "ami-1" });
  });
  it("ami.arn → error 'unable to convert AMI ARN reference. Not supported in CAPI'", () => {
    expect(capiErrors({ ami: { arn: "arn:aws:ec2:::image/ami-1" } })).toEqual([
      `${P}.ami.arn: Invalid value: "arn:aws:ec2:::image/ami-1": unable to convert AMI ARN reference. Not supported in CAPI`,
    ]);
  });
  it("ami.filters → error", () => {
    expect(capiErrors({ ami: { filters: [{ name: "name", values: ["rhcos*"] }] } })).toEqual([
      `${P}.ami.filters: Invalid value: [{"name":"name","values":["rhcos*"]}]: unable to convert AMI Filters reference. Not supported in CAPI`,
    ]);
  });
  it("ami none → error", () => {
    expect(capiErrors({ ami: undefined })).toEqual([
      `${P}.ami: Invalid value: null: unable to find a valid AMI resource type`,
    ]);
    expect(capiErrors({ ami: {} })).toEqual([
      `${P}.ami: Invalid value: {}: unable to find a valid AMI resource type`,
    ]);
  });
  it("instanceType → instanceType", () => {
    expect(capiSpec({ instanceType: "m5.large" }).instanceType).toBe("m5.large");
  });
  it("cpuOptions.confidentialCompute → cpuOptions.confidentialCompute", () => {
    expect(
      capiSpec({ cpuOptions: { confidentialCompute: "AMDEncryptedVirtualizationNestedPaging" } }).cpuOptions,
    ).toEqual({
      confidentialCompute: "AMDEncryptedVirtualizationNestedPaging",
    });
  });
  it("tags[] {name,value} → additionalTags {name: value}", () => {
    expect(
      capiSpec({
        tags: [
          { name: "a", value: "1" },
          { name: "b", value: "2" },
        ],
      }).additionalTags,
    ).toEqual({ a: "1", b: "2" });
  });
  it("tags[] with a duplicate name → warning, last value wins", () => {
    const result = toCapi(
      providerSpec({
        tags: [
          { name: "a", value: "1" },
          { name: "a", value: "2" },
        ],
      }),
    );
    expect(result.ok && result.value.infraMachine.spec?.additionalTags).toEqual({ a: "2" });
    expect(result.ok && result.warnings).toEqual([
      `${P}.tags[1]: duplicate tag name "a": the last value wins`,
    ]);
  });
  it("iamInstanceProfile.id → iamInstanceProfile (string)", () => {
    expect(capiSpec({ iamInstanceProfile: { id: "worker-profile" } }).iamInstanceProfile).toBe(
      "worker-profile",
    );
  });
  it("iamInstanceProfile.arn → error", () => {
    expect(capiErrors({ iamInstanceProfile: { arn: "arn:aws:iam::1:instance-profile/x" } })).toEqual([
      `${P}.iamInstanceProfile.arn: Invalid value: "arn:aws:iam::1:instance-profile/x": unable to convert ARN reference. Not supported in CAPI`,
    ]);
  });
  it("keyName → sshKeyName", () => {
    expect(capiSpec({ keyName: "ops" }).sshKeyName).toBe("ops");
  });
  it("deviceIndex ≠ 0 → error 'deviceIndex must be 0 or unset'", () => {
    expect(capiErrors({ deviceIndex: 1 })).toEqual([
      `${P}.deviceIndex: Invalid value: 1: deviceIndex must be 0 or unset`,
    ]);
  });
  it("deviceIndex 0 → nothing", () => {
    expect(capiErrors({ deviceIndex: 0 })).toEqual([]);
    expect(capiSpec({ deviceIndex: 0 })).not.toHaveProperty("deviceIndex");
  });
  it("publicIp → publicIP", () => {
    expect(capiSpec({ publicIp: true }).publicIP).toBe(true);
  });
  it.each([
    ["ENA", "interface"],
    ["EFA", "efa"],
    ["", ""],
  ])("networkInterfaceType %j → %j", (mapi, capi) => {
    expect(capiSpec({ networkInterfaceType: mapi }).networkInterfaceType).toBe(capi);
  });
  it("networkInterfaceType other → error", () => {
    expect(capiErrors({ networkInterfaceType: "SRIOV" })).toEqual([
      `${P}.networkInterfaceType: Invalid value: "SRIOV": networkInterfaceType must be ENA, EFA or empty`,
    ]);
  });
  it("securityGroups[] {id, filters} → additionalSecurityGroups[]", () => {
    const groups = [{ id: "sg-1" }, { filters: [{ name: "tag:Name", values: ["node"] }] }];
    expect(capiSpec({ securityGroups: groups }).additionalSecurityGroups).toEqual(groups);
  });
  it("subnet {id, filters} → subnet", () => {
    expect(capiSpec({ subnet: { id: "subnet-9" } }).subnet).toEqual({ id: "subnet-9" });
    const filters = [{ name: "tag:Name", values: ["private-a"] }];
    expect(capiSpec({ subnet: { filters } }).subnet).toEqual({ filters });
  });
  it("subnet is always present", () => {
    expect(capiSpec({ subnet: undefined }).subnet).toEqual({});
  });
  it("placement.region must equal the Infrastructure region, else error", () => {
    expect(capiErrors({ placement: { region: "us-east-1", availabilityZone: "us-east-1a" } })).toEqual([]);
    expect(capiErrors({ placement: { region: "eu-west-1" } })).toEqual([
      `${P}.placement.region: Invalid value: "eu-west-1": placement.region should match infrastructure status value "us-east-1"`,
    ]);
  });
  it("placement.availabilityZone → Machine spec.failureDomain", () => {
    const result = toCapi(
      providerSpec({ placement: { region: "us-east-1", availabilityZone: "us-east-1c" } }),
    );
    expect(result.ok && result.value.machine.spec?.failureDomain).toBe("us-east-1c");
  });
  it("placement.tenancy → tenancy", () => {
    expect(capiSpec({ placement: { tenancy: "dedicated" } }).tenancy).toBe("dedicated");
  });
  it("placement.host absent → hostAffinity default (written explicitly)", () => {
    expect(capiSpec({}).hostAffinity).toBe("default");
    expect(capiSpec({ placement: undefined }).hostAffinity).toBe("default");
  });
  it("placement.host.affinity AnyAvailable → hostAffinity default", () => {
    expect(capiSpec({ placement: { host: { affinity: "AnyAvailable" } } }).hostAffinity).toBe("default");
  });
  it("placement.host.affinity DedicatedHost, dedicatedHost.id → hostAffinity host, hostID", () => {
    const spec = capiSpec({
      placement: { host: { affinity: "DedicatedHost", dedicatedHost: { id: "h-0123456789abcdef0" } } },
    });
    expect(spec.hostAffinity).toBe("host");
    expect(spec.hostID).toBe("h-0123456789abcdef0");
  });
  it("placement.host.dedicatedHost.allocationStrategy Dynamic → dynamicHostAllocation", () => {
    const spec = capiSpec({
      placement: {
        host: {
          affinity: "DedicatedHost",
          dedicatedHost: { allocationStrategy: "Dynamic", dynamicHostAllocation: { tags: { team: "a" } } },
        },
      },
    });
    expect(spec.dynamicHostAllocation).toEqual({ tags: { team: "a" } });
    expect(spec).not.toHaveProperty("hostID");
  });
  it("placement.host.affinity other → error", () => {
    expect(capiErrors({ placement: { host: { affinity: "Anywhere" } } })).toEqual([
      `${P}.placement.host.affinity: Invalid value: "Anywhere": affinity must be AnyAvailable or DedicatedHost`,
    ]);
  });
  it("loadBalancers on a non-control-plane Machine → error", () => {
    expect(capiErrors({ loadBalancers: [{ name: "lb-int", type: "network" }] })).toEqual([
      `${P}.loadBalancers: Invalid value: [{"name":"lb-int","type":"network"}]: loadBalancers are not supported for non-control plane machines`,
    ]);
  });
  it("loadBalancers on a control plane Machine → left to the AWSCluster", () => {
    const master = {
      "machine.openshift.io/cluster-api-machine-role": "master",
      "machine.openshift.io/cluster-api-machine-type": "master",
    };
    expect(capiErrors({ loadBalancers: [{ name: "lb-int", type: "network" }] }, master)).toEqual([]);
  });
  it("loadBalancers on a MachineSet → error (never control plane)", () => {
    const result = mapiMachineSetToCapi(
      mapiMachineSet({ value: providerSpec({ loadBalancers: [{ name: "lb", type: "classic" }] }) }),
      infrastructure(),
      { capiNamespace: CAPI_NS },
    );
    expect(result.ok ? [] : result.errors.map((e) => e.path)).toEqual([
      "spec.template.spec.providerSpec.value.loadBalancers",
    ]);
  });
  it("credentialsSecret set and ≠ aws-cloud-credentials → error", () => {
    expect(capiErrors({ credentialsSecret: { name: "mine" } })).toEqual([
      `${P}.credentialsSecret: Invalid value: {"name":"mine"}: credentialsSecret must be "aws-cloud-credentials" or unset: CAPA uses its own credentials, convert this machine by hand`,
    ]);
    expect(capiErrors({ credentialsSecret: undefined })).toEqual([]);
  });
  it("no block devices → rootVolume {}", () => {
    expect(capiSpec({}).rootVolume).toEqual({});
  });
  it("blockDevices[] without deviceName → rootVolume; ebs fields map, size defaults to 120", () => {
    const spec = capiSpec({
      blockDevices: [
        {
          ebs: {
            volumeType: "io2",
            iops: 3000,
            throughputMib: 250,
            encrypted: true,
            kmsKey: { id: "key-1" },
          },
        },
      ],
    });
    expect(spec.rootVolume).toEqual({
      size: 120,
      type: "io2",
      iops: 3000,
      throughput: 250,
      encrypted: true,
      encryptionKey: "key-1",
    });
  });
  it("ebs.volumeSize → size; kmsKey.arn → encryptionKey", () => {
    const spec = capiSpec({
      blockDevices: [{ ebs: { volumeSize: 200, kmsKey: { arn: "arn:aws:kms:us-east-1:1:key/k" } } }],
    });
    expect(spec.rootVolume).toEqual({ size: 200, encryptionKey: "arn:aws:kms:us-east-1:1:key/k" });
  });
  it('installer\'s empty values (iops 0, kmsKey arn "") mean unset', () => {
    expect(
      capiSpec({ blockDevices: [{ ebs: { volumeSize: 120, iops: 0, kmsKey: { arn: "" } } }] }).rootVolume,
    ).toEqual({ size: 120 });
  });
  it("blockDevices[] with deviceName → nonRootVolumes[]", () => {
    const spec = capiSpec({
      blockDevices: [
        { ebs: { volumeSize: 100 } },
        { deviceName: "/dev/xvdb", ebs: { volumeSize: 50, volumeType: "gp3" } },
      ],
    });
    expect(spec.rootVolume).toEqual({ size: 100 });
    expect(spec.nonRootVolumes).toEqual([{ deviceName: "/dev/xvdb", size: 50, type: "gp3" }]);
  });
  it("blockDevices[] without ebs → warning 'missing ebs configuration for block device'", () => {
    expect(capiWarnings({ blockDevices: [{ deviceName: "/dev/xvdb" }] })).toEqual([
      `${P}.blockDevices[0]: missing ebs configuration for block device; it is not carried over`,
    ]);
  });
  it("blockDevices[].noDevice / virtualName → error", () => {
    expect(
      capiErrors({
        blockDevices: [
          { ebs: { volumeSize: 120 } },
          { deviceName: "/dev/xvdb", noDevice: "", virtualName: "ephemeral0", ebs: {} },
        ],
      }),
    ).toEqual([
      `${P}.blockDevices[1].noDevice: Invalid value: "": noDevice is not supported in CAPI`,
      `${P}.blockDevices[1].virtualName: Invalid value: "ephemeral0": virtualName is not supported in CAPI`,
    ]);
  });
  it("ebs.deleteOnTermination=false on the root volume → warning", () => {
    expect(
      capiWarnings({ blockDevices: [{ ebs: { volumeSize: 120, deleteOnTermination: false } }] }),
    ).toEqual([
      `${P}.blockDevices[0].ebs.deleteOnTermination: deleteOnTermination=false is not supported in CAPI for the root volume; the root volume will be deleted with the instance`,
    ]);
  });
  it("ebs.deleteOnTermination=false on a non-root volume → error", () => {
    expect(
      capiErrors({ blockDevices: [{ deviceName: "/dev/xvdb", ebs: { deleteOnTermination: false } }] }),
    ).toEqual([
      `${P}.blockDevices[0].ebs.deleteOnTermination: Invalid value: false: non-root volumes with deleteOnTermination=false are not supported in CAPI`,
    ]);
  });
  it("spotMarketOptions.maxPrice → spotMarketOptions.maxPrice", () => {
    expect(capiSpec({ spotMarketOptions: { maxPrice: "0.12" } }).spotMarketOptions).toEqual({
      maxPrice: "0.12",
    });
    expect(capiSpec({ spotMarketOptions: {} }).spotMarketOptions).toEqual({});
  });
  it.each([
    ["Optional", "optional"],
    ["", "optional"],
    [undefined, "optional"],
    ["Required", "required"],
  ])("metadataServiceOptions.authentication %j → httpTokens %j, plus the fixed defaults", (auth, tokens) => {
    const spec = capiSpec({
      metadataServiceOptions: auth === undefined ? undefined : { authentication: auth },
    });
    expect(spec.instanceMetadataOptions).toEqual({
      httpTokens: tokens,
      httpEndpoint: "enabled",
      httpProtocolIpv6: "disabled",
      instanceMetadataTags: "disabled",
      httpPutResponseHopLimit: 1,
    });
  });
  it("placementGroupName / placementGroupPartition → same", () => {
    const spec = capiSpec({ placementGroupName: "pg", placementGroupPartition: 3 });
    expect([spec.placementGroupName, spec.placementGroupPartition]).toEqual(["pg", 3]);
  });
  it("capacityReservationId, marketType → same", () => {
    const spec = capiSpec({ capacityReservationId: "cr-1", marketType: "CapacityBlock" });
    expect([spec.capacityReservationId, spec.marketType]).toEqual(["cr-1", "CapacityBlock"]);
  });
  it('marketType other than OnDemand/Spot/CapacityBlock/"" → error', () => {
    expect(capiErrors({ marketType: "Reserved" })).toEqual([
      `${P}.marketType: Invalid value: "Reserved": marketType must be OnDemand, Spot, CapacityBlock or empty`,
    ]);
  });
  it("(always) → ignition.storageType UnencryptedUserData", () => {
    expect(capiSpec({}).ignition).toEqual({ storageType: "UnencryptedUserData" });
  });
  it("Machine spec.providerID → providerID + instanceID", () => {
    const result = mapiMachineToCapi(
      mapiMachine({ spec: { providerID: "aws:///us-east-1a/i-0abc123" } }),
      infrastructure(),
      {
        capiNamespace: CAPI_NS,
      },
    );
    expect(result.ok && result.value.infraMachine.spec).toMatchObject({
      providerID: "aws:///us-east-1a/i-0abc123",
      instanceID: "i-0abc123",
    });
    expect(result.ok && result.value.machine.spec?.providerID).toBe("aws:///us-east-1a/i-0abc123");
  });
  it("providerID whose last segment is not an instance → no instanceID", () => {
    const result = mapiMachineToCapi(
      mapiMachine({ spec: { providerID: "aws:///us-east-1a/" } }),
      infrastructure(),
      {
        capiNamespace: CAPI_NS,
      },
    );
    expect(result.ok && result.value.infraMachine.spec).not.toHaveProperty("instanceID");
  });
  it("a providerSpec field outside the table → error, never dropped", () => {
    expect(capiErrors({ networkInterfaces: [{ id: "eni-1" }] })).toEqual([
      `${P}.networkInterfaces: Invalid value: [{"id":"eni-1"}]: field has no CAPI equivalent and cannot be converted`,
    ]);
  });
  it("collects every error of the object, not the first", () => {
    expect(
      capiErrors({
        ami: { arn: "a" },
        deviceIndex: 2,
        networkInterfaceType: "x",
        credentialsSecret: { name: "c" },
      }).map((e) => e.split(":")[0]),
    ).toEqual([`${P}.ami.arn`, `${P}.deviceIndex`, `${P}.networkInterfaceType`, `${P}.credentialsSecret`]);
  });
  it("every provider default written is listed in AWS_PROVIDER_DEFAULTS", () => {
    const spec = capiSpec({ subnet: undefined, placement: undefined });
    expect(spec.hostAffinity).toBe(AWS_PROVIDER_DEFAULTS.hostAffinity);
    expect(spec.subnet).toEqual(AWS_PROVIDER_DEFAULTS.subnet);
    expect(spec.rootVolume).toEqual(AWS_PROVIDER_DEFAULTS.rootVolume);
    expect(spec.instanceMetadataOptions).toEqual({
      httpTokens: AWS_PROVIDER_DEFAULTS.httpTokens,
      ...AWS_PROVIDER_DEFAULTS.instanceMetadataOptions,
    });
    expect(spec.ignition).toEqual({ storageType: AWS_PROVIDER_DEFAULTS.ignitionStorageType });
    expect(capiSpec({ blockDevices: [{ ebs: {} }] }).rootVolume).toEqual({
      size: AWS_PROVIDER_DEFAULTS.volumeSize,
    });
  });
});

describe("SPEC §5.3 AWSMachine → AWS providerSpec (CAPI → MAPI)", () => {
  it("ami.id ← ami.id; no AMI id → error", () => {
    expect(mapiValue({ ami: { id: "ami-9" } }).ami).toEqual({ id: "ami-9" });
    expect(mapiErrors({ ami: undefined })).toEqual([
      "AWSMachine.spec.ami.id: Invalid value: null: an AMI id is required",
    ]);
  });
  it("instanceType, cpuOptions ← same", () => {
    const value = mapiValue({ instanceType: "c5.large", cpuOptions: { confidentialCompute: "Disabled" } });
    expect([value.instanceType, value.cpuOptions]).toEqual(["c5.large", { confidentialCompute: "Disabled" }]);
  });
  it("tags[] ← additionalTags, sorted by name", () => {
    expect(mapiValue({ additionalTags: { b: "2", a: "1" } }).tags).toEqual([
      { name: "a", value: "1" },
      { name: "b", value: "2" },
    ]);
  });
  it("iamInstanceProfile.id ← iamInstanceProfile; keyName ← sshKeyName; publicIp ← publicIP", () => {
    const value = mapiValue({ iamInstanceProfile: "p", sshKeyName: "k", publicIP: false });
    expect([value.iamInstanceProfile, value.keyName, value.publicIp]).toEqual([{ id: "p" }, "k", false]);
  });
  it.each([
    ["interface", "ENA"],
    ["efa", "EFA"],
    ["", ""],
  ])("networkInterfaceType %j → %j", (capi, mapi) => {
    expect(mapiValue({ networkInterfaceType: capi }).networkInterfaceType).toBe(mapi);
  });
  it("networkInterfaceType other → error", () => {
    expect(mapiErrors({ networkInterfaceType: "trunk" })).toEqual([
      'AWSMachine.spec.networkInterfaceType: Invalid value: "trunk": networkInterfaceType must be interface, efa or empty',
    ]);
  });
  it("securityGroups ← additionalSecurityGroups; subnet ← subnet (always present)", () => {
    const value = mapiValue({ additionalSecurityGroups: [{ id: "sg-1" }], subnet: undefined });
    expect(value.securityGroups).toEqual([{ id: "sg-1" }]);
    expect(value.subnet).toEqual({});
  });
  it("placement.region ← Infrastructure region; availabilityZone ← failureDomain; tenancy ← tenancy", () => {
    expect(mapiValue({ tenancy: "host" }).placement).toEqual({
      region: "us-east-1",
      availabilityZone: "us-east-1a",
      tenancy: "host",
    });
  });
  it("hostAffinity default without host → no placement.host", () => {
    expect(mapiValue({}).placement).not.toHaveProperty("host");
  });
  it("hostAffinity host + hostID → DedicatedHost with dedicatedHost.id", () => {
    expect(
      (
        mapiValue({ hostAffinity: "host", hostID: "h-0123456789abcdef0" }).placement as Record<
          string,
          unknown
        >
      ).host,
    ).toEqual({
      affinity: "DedicatedHost",
      dedicatedHost: { id: "h-0123456789abcdef0" },
    });
  });
  it("hostAffinity default + hostID → AnyAvailable with dedicatedHost.id", () => {
    expect((mapiValue({ hostID: "h-01234567" }).placement as Record<string, unknown>).host).toEqual({
      affinity: "AnyAvailable",
      dedicatedHost: { id: "h-01234567" },
    });
  });
  it("dynamicHostAllocation → allocationStrategy Dynamic", () => {
    expect(
      (mapiValue({ hostAffinity: "host", dynamicHostAllocation: {} }).placement as Record<string, unknown>)
        .host,
    ).toEqual({
      affinity: "DedicatedHost",
      dedicatedHost: { allocationStrategy: "Dynamic" },
    });
  });
  it("hostID must match ^h-([0-9a-f]{8}|[0-9a-f]{17})$", () => {
    expect(mapiErrors({ hostAffinity: "host", hostID: "h-xyz" })).toEqual([
      'AWSMachine.spec.hostID: Invalid value: "h-xyz": hostID must match ^h-([0-9a-f]{8}|[0-9a-f]{17})$',
    ]);
  });
  it("control plane load balancers come from the AWSCluster", () => {
    const awsCluster: KubeObject = {
      apiVersion: "infrastructure.cluster.x-k8s.io/v1beta2",
      kind: "AWSCluster",
      metadata: { name: "demo-x7k2p", namespace: CAPI_NS },
      spec: {
        controlPlaneLoadBalancer: { name: "demo-x7k2p-int", loadBalancerType: "nlb" },
        secondaryControlPlaneLoadBalancer: { name: "demo-x7k2p-ext", loadBalancerType: "nlb" },
      },
    };
    const labels = { "node-role.kubernetes.io/master": "", "cluster.x-k8s.io/control-plane": "" };
    const result = toMapi(awsMachineSpec(), { labels, awsCluster });
    expect(
      result.ok &&
        (result.value.machine.spec as { providerSpec: { value: Record<string, unknown> } }).providerSpec.value
          .loadBalancers,
    ).toEqual([
      { name: "demo-x7k2p-int", type: "network" },
      { name: "demo-x7k2p-ext", type: "network" },
    ]);
    expect(mapiErrors({}, { labels })).toEqual([
      "AWSMachine.spec.loadBalancers: Invalid value: null: the AWSCluster is needed to convert a control plane machine (its load balancers live there)",
    ]);
  });
  it("credentialsSecret is always aws-cloud-credentials; userDataSecret ← bootstrap.dataSecretName", () => {
    const value = mapiValue({});
    expect(value.credentialsSecret).toEqual({ name: "aws-cloud-credentials" });
    expect(value.userDataSecret).toEqual({ name: "worker-user-data" });
  });
  it("rootVolume {} → no block devices; rootVolume → blockDevices[] without deviceName; nonRootVolumes → with deviceName", () => {
    expect(mapiValue({})).not.toHaveProperty("blockDevices");
    expect(
      mapiValue({
        rootVolume: {
          size: 120,
          type: "gp3",
          iops: 3000,
          throughput: 125,
          encrypted: true,
          encryptionKey: "arn:aws:kms:k",
        },
        nonRootVolumes: [{ deviceName: "/dev/xvdb", size: 50, encryptionKey: "key-1" }],
      }).blockDevices,
    ).toEqual([
      {
        ebs: {
          volumeSize: 120,
          volumeType: "gp3",
          iops: 3000,
          throughputMib: 125,
          encrypted: true,
          kmsKey: { arn: "arn:aws:kms:k" },
        },
      },
      { deviceName: "/dev/xvdb", ebs: { volumeSize: 50, kmsKey: { id: "key-1" } } },
    ]);
  });
  it("spotMarketOptions, placementGroup*, capacityReservationId, marketType ← same", () => {
    const value = mapiValue({
      spotMarketOptions: { maxPrice: "1" },
      placementGroupName: "pg",
      placementGroupPartition: 2,
      capacityReservationId: "cr-1",
      marketType: "Spot",
    });
    expect(value).toMatchObject({
      spotMarketOptions: { maxPrice: "1" },
      placementGroupName: "pg",
      placementGroupPartition: 2,
      capacityReservationId: "cr-1",
      marketType: "Spot",
    });
  });
  it("marketType other → error", () => {
    expect(mapiErrors({ marketType: "Reserved" })).toEqual([
      'AWSMachine.spec.marketType: Invalid value: "Reserved": marketType must be OnDemand, Spot, CapacityBlock or empty',
    ]);
  });
  it("instanceMetadataOptions httpTokens required → authentication Required; optional → unset", () => {
    const required = awsMachineSpec().instanceMetadataOptions as Record<string, unknown>;
    expect(
      mapiValue({ instanceMetadataOptions: { ...required, httpTokens: "required" } }).metadataServiceOptions,
    ).toEqual({
      authentication: "Required",
    });
    expect(mapiValue({})).not.toHaveProperty("metadataServiceOptions");
  });
  it("instance metadata options other than the fixed values → error", () => {
    expect(
      mapiErrors({
        instanceMetadataOptions: {
          httpTokens: "optional",
          httpEndpoint: "disabled",
          httpPutResponseHopLimit: 2,
        },
      }),
    ).toEqual([
      'AWSMachine.spec.instanceMetadataOptions.httpEndpoint: Invalid value: "disabled": only "enabled" can be represented in Machine API',
      "AWSMachine.spec.instanceMetadataOptions.httpPutResponseHopLimit: Invalid value: 2: only 1 can be represented in Machine API",
    ]);
  });
  it("ignition.storageType other than UnencryptedUserData → error", () => {
    expect(mapiErrors({ ignition: { storageType: "ClusterObjectStore" } })).toEqual([
      'AWSMachine.spec.ignition.storageType: Invalid value: "ClusterObjectStore": only UnencryptedUserData can be represented in Machine API',
    ]);
  });
  it("Machine spec.providerID ← CAPI Machine spec.providerID", () => {
    const result = toMapi(awsMachineSpec({ providerID: "aws:///us-east-1a/i-1", instanceID: "i-1" }), {
      machineSpec: { providerID: "aws:///us-east-1a/i-1" },
    });
    expect(result.ok && result.value.machine.spec?.providerID).toBe("aws:///us-east-1a/i-1");
  });
  it.each(AWS_UNSUPPORTED_FIELDS.map((field) => [field, UNSUPPORTED_SAMPLES[field], field] as const))(
    "aws-unsupported-fields: %s → error",
    (_name, extra, field) => {
      const errors = mapiErrors(extra);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(
        new RegExp(
          `^AWSMachine\\.spec\\.${field.replace(".", "\\.")}: Invalid value: .*: not supported by Machine API \\(rule aws-unsupported-fields\\)$`,
        ),
      );
    },
  );
  it("an empty cloudInit (as the server serialises it) converts", () => {
    expect(mapiErrors({ cloudInit: {} })).toEqual([]);
  });
});

describe("SPEC §5.3 AWS additions in v5 (upstream's converter does each)", () => {
  const toCapiOn = (infra: KubeObject, extra: Record<string, unknown>) =>
    mapiMachineToCapi(mapiMachine({ value: providerSpec(extra) }), infra, { capiNamespace: CAPI_NS });
  const toMapiOn = (infra: KubeObject, spec: Record<string, unknown>, awsCluster?: KubeObject) =>
    capiMachineToMapi(capiMachine(), awsMachine({ spec }), infra, {
      mapiNamespace: MAPI_NS,
      ...(awsCluster === undefined ? {} : { infraCluster: awsCluster }),
    });
  const errorsOf = (
    result: { ok: true } | { ok: false; errors: Parameters<typeof formatFieldError>[0][] },
  ) => (result.ok ? [] : result.errors.map(formatFieldError));
  const dualStack = (ipFamily: string) => infrastructure({ ipFamily });
  const DUAL_STACK_DNS = {
    enableResourceNameDnsAAAARecord: true,
    enableResourceNameDnsARecord: true,
    hostnameType: "resource-name",
  };

  it("providerSpec.metadata set → error 'metadata is not supported'", () => {
    expect(capiErrors({ metadata: { name: "x", labels: { a: "b" } } })).toEqual([
      `${P}.metadata: Invalid value: {"name":"x","labels":{"a":"b"}}: metadata is not supported`,
    ]);
  });
  it("providerSpec.metadata empty (as Go serialises it: {} or creationTimestamp null) → accepted", () => {
    expect(capiErrors({ metadata: {} })).toEqual([]);
    expect(capiErrors({ metadata: { creationTimestamp: null } })).toEqual([]);
  });
  it("placement.region is compared only when the Infrastructure has a region", () => {
    expect(
      errorsOf(toCapiOn(infrastructure({ region: "" }), { placement: { region: "eu-west-1" } })),
    ).toEqual([]);
    expect(
      errorsOf(toCapiOn(infrastructure({ region: "us-east-1" }), { placement: { region: "eu-west-1" } })),
    ).toEqual([
      `${P}.placement.region: Invalid value: "eu-west-1": placement.region should match infrastructure status value "us-east-1"`,
    ]);
  });
  it.each(["DualStackIPv4Primary", "DualStackIPv6Primary"])(
    "dual-stack cluster (%s) → privateDnsName and assignPrimaryIPv6 as upstream derives them",
    (ipFamily) => {
      const result = toCapiOn(dualStack(ipFamily), {});
      if (!result.ok) throw new Error(result.errors.map(formatFieldError).join("\n"));
      const spec = result.value.infraMachine.spec as Record<string, unknown>;
      expect(spec.privateDnsName).toEqual(DUAL_STACK_DNS);
      expect(spec.assignPrimaryIPv6).toBe("enabled");
    },
  );
  it.each(["IPv4", undefined])("single-stack cluster (ipFamily %s) → neither field", (ipFamily) => {
    const result = toCapiOn(infrastructure(ipFamily === undefined ? {} : { ipFamily }), {});
    if (!result.ok) throw new Error(result.errors.map(formatFieldError).join("\n"));
    expect(result.value.infraMachine.spec).not.toHaveProperty("privateDnsName");
    expect(result.value.infraMachine.spec).not.toHaveProperty("assignPrimaryIPv6");
  });
  it("dual-stack fields come back to MAPI as nothing when they are what the cluster's IP family derives", () => {
    const spec = awsMachineSpec({ privateDnsName: DUAL_STACK_DNS, assignPrimaryIPv6: "enabled" });
    const result = toMapiOn(dualStack("DualStackIPv4Primary"), spec);
    expect(errorsOf(result)).toEqual([]);
    expect(
      result.ok &&
        (result.value.machine.spec as { providerSpec: { value: Record<string, unknown> } }).providerSpec
          .value,
    ).not.toHaveProperty("privateDnsName");
  });
  it("dual-stack fields that differ from what the IP family derives → error (MAPI cannot carry them)", () => {
    expect(
      errorsOf(
        toMapiOn(
          infrastructure(),
          awsMachineSpec({ privateDnsName: DUAL_STACK_DNS, assignPrimaryIPv6: "enabled" }),
        ),
      ),
    ).toEqual([
      `AWSMachine.spec.privateDnsName: Invalid value: ${JSON.stringify(DUAL_STACK_DNS)}: Machine API derives privateDnsName from the cluster's IP family ("IPv4"), which sets none: it cannot be converted`,
      'AWSMachine.spec.assignPrimaryIPv6: Invalid value: "enabled": Machine API derives assignPrimaryIPv6 from the cluster\'s IP family ("IPv4"), which sets none: it cannot be converted',
    ]);
    expect(
      errorsOf(
        toMapiOn(dualStack("DualStackIPv6Primary"), awsMachineSpec({ assignPrimaryIPv6: "disabled" })),
      ),
    ).toEqual([
      `AWSMachine.spec.privateDnsName: Invalid value: null: Machine API derives privateDnsName from the cluster's IP family ("DualStackIPv6Primary"): only ${JSON.stringify(DUAL_STACK_DNS)} can be converted`,
      'AWSMachine.spec.assignPrimaryIPv6: Invalid value: "disabled": Machine API derives assignPrimaryIPv6 from the cluster\'s IP family ("DualStackIPv6Primary"): only "enabled" can be converted',
    ]);
  });
  it("hostAffinity host needs hostID or dynamicHostAllocation (openshift/api forbids DedicatedHost without either)", () => {
    expect(mapiErrors({ hostAffinity: "host" })).toEqual([
      'AWSMachine.spec.hostAffinity: Invalid value: "host": hostAffinity host needs hostID or dynamicHostAllocation',
    ]);
  });
  it("MAPI → CAPI: allocationStrategy Dynamic needs affinity DedicatedHost (it could never convert back)", () => {
    expect(
      capiErrors({
        placement: { host: { affinity: "AnyAvailable", dedicatedHost: { allocationStrategy: "Dynamic" } } },
      }),
    ).toEqual([
      `${P}.placement.host.dedicatedHost.allocationStrategy: Invalid value: "Dynamic": allocationStrategy Dynamic needs affinity DedicatedHost`,
    ]);
  });
  it("dynamicHostAllocation needs hostAffinity host", () => {
    expect(mapiErrors({ dynamicHostAllocation: { tags: { team: "a" } } })).toEqual([
      'AWSMachine.spec.dynamicHostAllocation: Invalid value: {"tags":{"team":"a"}}: dynamicHostAllocation needs hostAffinity host',
    ]);
    expect(mapiErrors({ hostAffinity: "default", dynamicHostAllocation: {} })).toEqual([
      "AWSMachine.spec.dynamicHostAllocation: Invalid value: {}: dynamicHostAllocation needs hostAffinity host",
    ]);
  });
  it("volume throughput / iops / size above MAPI's int32 range → error", () => {
    const big = 2 ** 31;
    expect(
      mapiErrors({
        rootVolume: { size: big, throughput: big },
        nonRootVolumes: [{ deviceName: "/dev/xvdb", size: 50, iops: big }],
      }),
    ).toEqual([
      `AWSMachine.spec.rootVolume.size: Invalid value: ${big}: must be at most 2147483647 (Machine API stores it as int32)`,
      `AWSMachine.spec.rootVolume.throughput: Invalid value: ${big}: must be at most 2147483647 (Machine API stores it as int32)`,
      `AWSMachine.spec.nonRootVolumes[0].iops: Invalid value: ${big}: must be at most 2147483647 (Machine API stores it as int32)`,
    ]);
    expect(mapiErrors({ rootVolume: { size: 2 ** 31 - 1, throughput: 2 ** 31 - 1 } })).toEqual([]);
  });
  it("an AWSCluster identityRef → error (the Machines would silently change credentials)", () => {
    const awsCluster: KubeObject = {
      apiVersion: "infrastructure.cluster.x-k8s.io/v1beta2",
      kind: "AWSCluster",
      metadata: { name: "demo-x7k2p", namespace: CAPI_NS },
      spec: { identityRef: { kind: "AWSClusterRoleIdentity", name: "team-a" } },
    };
    expect(errorsOf(toMapiOn(infrastructure(), awsMachineSpec(), awsCluster))).toEqual([
      'AWSCluster.spec.identityRef: Invalid value: {"kind":"AWSClusterRoleIdentity","name":"team-a"}: Machine API runs every Machine with the credentials secret "aws-cloud-credentials"; the AWSCluster\'s identity cannot be carried, so converting would silently change the credentials these Machines use — remove identityRef or keep them on Cluster API',
    ]);
    const noIdentity = { ...awsCluster, spec: {} };
    expect(errorsOf(toMapiOn(infrastructure(), awsMachineSpec(), noIdentity))).toEqual([]);
  });
});
