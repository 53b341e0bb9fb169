/**
 * Cross-check of the CAPO CRDs in manifests/crds against what the product writes on OpenStack (SPEC §8:
 * "nothing the product writes is pruned silently"; §5.5): the OpenStackMachines and OpenStackMachineTemplates
 * the converter writes from realistic OpenstackProviderSpecs, the MAPI objects it writes back from realistic
 * CAPO objects (and those CAPO objects themselves), status both ways and as the CAPO stand-in reports it,
 * and every field rule openstack-unsupported-fields must see — each survives its CRD unpruned and valid.
 * The OpenStack demo seed has its own check (test/local/seed.test.ts).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { loadProjectCrds } from "../../../src/apiserver/fixtures/crds.js";
import type { CompiledCrd } from "../../../src/apiserver/schema/index.js";
import { getPath, isRecord, type KubeObject } from "../../../src/kube/object.js";
import {
  OPENSTACK_FIELD_TABLE,
  OPENSTACK_UNSUPPORTED_FIELDS,
  type OpenStackUnsupportedField,
} from "../../../src/platforms/openstack/index.js";
import { provisionedStatus } from "../../../src/simulate/capo.js";
import { capiPausedConditions } from "../../../src/simulate/common.js";
import {
  capiMachineSetToMapi,
  capiMachineStatusToMapi,
  capiMachineToMapi,
  formatFieldError,
  mapiMachineSetToCapi,
  mapiMachineStatusToCapi,
  mapiMachineToCapi,
} from "../../../src/sync/conversion/index.js";
import { CAPI_NS, MAPI_NS } from "../../sync/conversion/builders.js";
import {
  NETWORK_ID,
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
} from "../../sync/conversion/openstack-builders.js";
import { checkAgainst, compiledProjectCrds } from "./survival.js";

let byKind: ReadonlyMap<string, CompiledCrd> = new Map();
let crds: KubeObject[] = [];

beforeAll(async () => {
  byKind = await compiledProjectCrds();
  crds = await loadProjectCrds();
});

const check = (o: KubeObject) => checkAgainst(byKind, o);
/** The objects of `objects` that lose a field to their CRD or fail its validation, with why. */
const failing = (objects: readonly KubeObject[]) =>
  objects
    .map((o) => ({ object: `${o.kind} ${o.metadata?.name}`, ...check(o) }))
    .filter((r) => r.lost.length > 0 || r.causes.length > 0);

const infra = openstackInfrastructure();
const SERVER = "8f2c1e0a-1111-4222-8333-444455556666";
const PROVIDER_ID = `openstack:///${SERVER}`;

/** A providerSpec without the keys a row sets to undefined (a MAPI object has no undefined fields). */
const providerSpec = (extra: Record<string, unknown> = {}): Record<string, unknown> =>
  JSON.parse(JSON.stringify(openstackProviderSpec(extra)));

/**
 * OpenstackProviderSpecs as installers and admins write them, together setting every field the converter
 * carries: the installer's worker, one attached by `ports[]` with every port field, one by `networks[]` of
 * every shape with both volume kinds and security groups both ways.
 */
const PROVIDER_SPECS: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ["the installer's worker", providerSpec()],
  [
    "ports with every field, a key pair, a config drive and a server group by ID",
    providerSpec({
      networks: undefined,
      ports: [
        {
          networkID: NETWORK_ID,
          nameSuffix: "storage",
          description: "storage network",
          fixedIPs: [{ subnetID: SUBNET_ID, ipAddress: "10.0.0.5" }],
          securityGroups: ["0c3fd4a6-5e8b-4b41-9d2e-7a1c3b5d9e01"],
          allowedAddressPairs: [{ ipAddress: "10.0.0.9", macAddress: "fa:16:3e:00:00:02" }],
          adminStateUp: true,
          macAddress: "fa:16:3e:00:00:01",
          portSecurity: false,
          profile: { capabilities: "switchdev", trusted: "true" },
          vnicType: "direct",
          tags: ["storage"],
          trunk: false,
        },
      ],
      keyName: "ops",
      configDrive: true,
      serverGroupID: "5d1c9a3e-2b7f-4c6d-8e1a-9f0b2c4d6e8a",
      serverGroupName: undefined,
    }),
  ],
  [
    "networks by uuid, by filter and of subnets only; root and additional volumes; security groups both ways",
    providerSpec({
      networks: [
        {
          uuid: NETWORK_ID,
          subnets: [{ uuid: SUBNET_ID, portTags: ["primary"] }],
          portTags: ["x"],
          noAllowedAddressPairs: true,
          vnicType: "direct",
          portSecurity: true,
          profile: { capabilities: "switchdev" },
        },
        {
          subnets: [
            { uuid: "7e4b2a1c-9d3f-4e5a-8b6c-1d2e3f4a5b6c" },
            {
              filter: {
                name: "extra",
                cidr: "10.1.0.0/16",
                ipVersion: 4,
                gateway_ip: "10.1.0.1",
                tags: "a,b",
              },
            },
          ],
        },
        { filter: { name: "public", projectId: "p-1", tags: "a", notTagsAny: "b", description: "ext" } },
      ],
      securityGroups: [
        { uuid: "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d" },
        { name: "demo-extra", filter: { projectId: "p-1", tags: "a,b", tagsAny: "c" } },
      ],
      rootVolume: { diskSize: 100, volumeType: "ssd", availabilityZone: "cinder-az1" },
      additionalBlockDevices: [
        {
          name: "etcd",
          sizeGiB: 10,
          storage: { type: "Volume", volume: { type: "fast", availabilityZone: "z" } },
        },
        { name: "scratch", sizeGiB: 5, storage: { type: "Local" } },
      ],
    }),
  ],
];

const toCapi = (value: Record<string, unknown>, providerID?: string) => {
  const result = mapiMachineToCapi(
    openstackMapiMachine(value, providerID === undefined ? {} : { spec: { providerID } }),
    infra,
    { capiNamespace: CAPI_NS },
  );
  if (!result.ok) throw new Error(result.errors.map(formatFieldError).join("\n"));
  return result.value;
};
const setToCapi = (value: Record<string, unknown>) => {
  const result = mapiMachineSetToCapi(openstackMapiMachineSet(value), infra, { capiNamespace: CAPI_NS });
  if (!result.ok) throw new Error(result.errors.map(formatFieldError).join("\n"));
  return result.value;
};

/** The schema of a CRD's first version at `path` (through `properties`), from the YAML as written. */
const schemaAt = (crdName: string, path: readonly string[]): unknown => {
  const crd = crds.find((c) => c.metadata?.name === crdName);
  const [version] = (getPath(crd, ["spec", "versions"]) as unknown[] | undefined) ?? [];
  const root = getPath(version, ["schema", "openAPIV3Schema"]);
  return path.reduce<unknown>((s, key) => (isRecord(s) ? getPath(s, ["properties", key]) : undefined), root);
};

describe("the CAPO CRDs model every field the OpenStack converter touches", () => {
  const specFields = [...new Set(OPENSTACK_FIELD_TABLE.flatMap((row) => row.capi))];
  it.each([
    ["openstackmachines.infrastructure.cluster.x-k8s.io", ["spec"]],
    ["openstackmachinetemplates.infrastructure.cluster.x-k8s.io", ["spec", "template", "spec"]],
  ] as const)("%s: every spec field of the field table and of openstack-unsupported-fields", (crd, spec) => {
    const missing = [...specFields, ...OPENSTACK_UNSUPPORTED_FIELDS.map((f) => f.split("."))].filter(
      (field) => schemaAt(crd, [...spec, ...[field].flat()]) === undefined,
    );
    expect(missing).toEqual([]);
  });

  it("the check itself notices a pruned OpenStackMachine field", () => {
    const o = openStackMachine(openStackMachineSpec({ notInTheSchema: true }));
    expect(check(o).lost).toEqual([".spec.notInTheSchema"]);
  });

  it("and refuses an image named two ways (CAPO takes exactly one)", () => {
    const o = openStackMachine(openStackMachineSpec({ image: { id: SERVER, filter: { name: "rhcos" } } }));
    expect(check(o).causes).toEqual(["spec.image: Too many: 2: must have at most 1 items"]);
  });
});

describe("MAPI → CAPI: what the converter writes survives the CAPO and CAPI CRDs", () => {
  it("the realistic providerSpecs set every OpenStackMachine field the converter writes (precondition)", () => {
    const written = new Set(
      PROVIDER_SPECS.flatMap(([, value]) => Object.keys(toCapi(value, PROVIDER_ID).infraMachine.spec ?? {})),
    );
    const notWritten = ["flavorID", "floatingIPPoolRef", "schedulerHintAdditionalProperties", "instanceID"];
    const table = new Set(
      OPENSTACK_FIELD_TABLE.flatMap((row) => row.capi).filter((f) => !notWritten.includes(f)),
    );
    expect([...table].filter((f) => !written.has(f))).toEqual([]);
  });

  it.each(PROVIDER_SPECS)("Machine (%s) → OpenStackMachine and CAPI Machine", (_name, value) => {
    const { machine, infraMachine } = toCapi(value, PROVIDER_ID);
    expect(infraMachine.kind).toBe("OpenStackMachine");
    expect(failing([infraMachine, machine])).toEqual([]);
  });

  it.each(PROVIDER_SPECS)(
    "MachineSet (%s) → OpenStackMachineTemplate and CAPI MachineSet",
    (_name, value) => {
      const { machineSet, infraTemplate } = setToCapi(value);
      expect(infraTemplate.kind).toBe("OpenStackMachineTemplate");
      expect(failing([infraTemplate, machineSet])).toEqual([]);
    },
  );
});

/** OpenStackMachine specs as a person writes them on the CAPI side, within what Machine API can carry. */
const CAPO_SPECS: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ["what the converter writes for the installer's worker", openStackMachineSpec()],
  [
    "ports by network ID with fixed IPs, port security groups, pairs and binding profile",
    openStackMachineSpec({
      ports: [
        {
          network: { id: NETWORK_ID },
          nameSuffix: "storage",
          description: "storage network",
          fixedIPs: [{ subnet: { id: SUBNET_ID }, ipAddress: "10.0.0.5" }],
          securityGroups: [{ id: "0c3fd4a6-5e8b-4b41-9d2e-7a1c3b5d9e01" }],
          allowedAddressPairs: [{ ipAddress: "10.0.0.9" }],
          adminStateUp: true,
          macAddress: "fa:16:3e:00:00:01",
          tags: ["storage"],
          trunk: false,
          vnicType: "direct",
          profile: { ovsHWOffload: true, trustedVF: true },
          disablePortSecurity: true,
        },
        {
          network: { filter: { name: "public", projectID: "p-1", tags: ["a"] } },
          // Fields Machine API cannot carry but only warns about: kept by the CRD all the same.
          hostID: "compute-1",
          propagateUplinkStatus: true,
          valueSpecs: [{ name: "binding", key: "binding:host_id", value: "compute-1" }],
        },
        { fixedIPs: [{ subnet: { filter: { name: "extra", ipVersion: 4, cidr: "10.1.0.0/16" } } }] },
      ],
      sshKeyName: "ops",
      configDrive: true,
      serverGroup: { id: "5d1c9a3e-2b7f-4c6d-8e1a-9f0b2c4d6e8a" },
      rootVolume: { sizeGiB: 100, type: "ssd", availabilityZone: { from: "Name", name: "cinder-az1" } },
      additionalBlockDevices: [
        {
          name: "etcd",
          sizeGiB: 10,
          storage: {
            type: "Volume",
            volume: { type: "fast", availabilityZone: { from: "Name", name: "z" } },
          },
        },
        { name: "scratch", sizeGiB: 5, storage: { type: "Local" } },
      ],
      providerID: PROVIDER_ID,
      instanceID: SERVER,
    }),
  ],
];

describe("CAPI → MAPI: CAPO objects and what the converter writes back survive their CRDs", () => {
  it.each(CAPO_SPECS)("OpenStackMachine (%s) is valid as written", (_name, spec) => {
    expect(failing([openStackMachine(spec), openStackMachineTemplate("workers-abc", spec)])).toEqual([]);
  });

  it.each(CAPO_SPECS)("→ MAPI Machine, and back to an OpenStackMachine (%s)", (_name, spec) => {
    const back = capiMachineToMapi(openstackCapiMachine(), openStackMachine(spec), infra, {
      mapiNamespace: MAPI_NS,
    });
    if (!back.ok) throw new Error(back.errors.map(formatFieldError).join("\n"));
    const again = mapiMachineToCapi(back.value.machine, infra, { capiNamespace: CAPI_NS });
    if (!again.ok) throw new Error(again.errors.map(formatFieldError).join("\n"));
    expect(failing([back.value.machine, again.value.infraMachine, again.value.machine])).toEqual([]);
  });

  it.each(CAPO_SPECS)("MachineSet + OpenStackMachineTemplate (%s) → MAPI MachineSet", (_name, spec) => {
    const result = capiMachineSetToMapi(
      openstackCapiMachineSet("workers-abc"),
      openStackMachineTemplate("workers-abc", spec),
      infra,
      { mapiNamespace: MAPI_NS },
    );
    if (!result.ok) throw new Error(result.errors.map(formatFieldError).join("\n"));
    expect(failing([result.value.machineSet])).toEqual([]);
  });
});

/** A realistic CAPI-side spec for each field rule openstack-unsupported-fields refuses. */
const UNSUPPORTED_SPECS: Readonly<Record<OpenStackUnsupportedField, () => Record<string, unknown>>> = {
  flavorID: () => {
    const { flavor: _flavor, ...spec } = openStackMachineSpec();
    return { ...spec, flavorID: "3c8e5a2b-7d1f-4e9a-b6c4-0f2d8e1a5b7c" };
  },
  "image.id": () => openStackMachineSpec({ image: { id: "c1a2b3d4-e5f6-4789-8abc-def012345678" } }),
  "image.imageRef": () => openStackMachineSpec({ image: { imageRef: { name: "rhcos-4.17" } } }),
  floatingIPPoolRef: () =>
    openStackMachineSpec({
      floatingIPPoolRef: { apiGroup: "ipam.cluster.x-k8s.io", kind: "InClusterIPPool", name: "public" },
    }),
  schedulerHintAdditionalProperties: () =>
    openStackMachineSpec({
      schedulerHintAdditionalProperties: [
        { name: "same_host", value: { type: "String", string: "a-server" } },
      ],
    }),
  "identityRef.region": () =>
    openStackMachineSpec({
      identityRef: { name: "openstack-cloud-credentials", cloudName: "openstack", region: "RegionOne" },
    }),
};

describe("openstack-unsupported-fields: each field survives the CRD, so the rule sees it", () => {
  it.each(OPENSTACK_UNSUPPORTED_FIELDS)(
    "%s is kept, and converting it to MAPI is refused at its path",
    (field) => {
      const o = openStackMachine(UNSUPPORTED_SPECS[field]());
      expect(check(o)).toEqual({ lost: [], causes: [] });
      expect(check(openStackMachineTemplate("workers-abc", UNSUPPORTED_SPECS[field]()))).toEqual({
        lost: [],
        causes: [],
      });
      const result = capiMachineToMapi(openstackCapiMachine(), o, infra, { mapiNamespace: MAPI_NS });
      expect(result.ok ? [] : result.errors.map((e) => e.path)).toEqual([`OpenStackMachine.spec.${field}`]);
    },
  );
});

describe("status (SPEC §5.4) on OpenStack survives the CRDs, both directions", () => {
  const now = "2026-12-01T10:00:00Z";
  it("MAPI providerStatus → OpenStackMachine and CAPI Machine status", () => {
    const mapi = openstackMapiMachine(openstackProviderSpec(), {
      spec: { providerID: PROVIDER_ID },
      status: { phase: "Running", providerStatus: { instanceId: SERVER, instanceState: "ACTIVE" } },
    });
    const { machine, infraMachine } = toCapi(openstackProviderSpec(), PROVIDER_ID);
    const forward = mapiMachineStatusToCapi(mapi, infra, { now, capiMachine: machine });
    if (!forward.ok) throw new Error(forward.errors.map(formatFieldError).join("\n"));
    expect(forward.value.infraMachineStatus).toEqual({ instanceState: "ACTIVE", ready: true });
    expect(
      failing([
        { ...infraMachine, status: forward.value.infraMachineStatus },
        { ...machine, status: forward.value.machineStatus },
      ]),
    ).toEqual([]);
  });

  it("what the CAPO stand-in reports (Paused, ready, instanceID, ACTIVE) → MAPI status", () => {
    const reported = openStackMachine(openStackMachineSpec({ providerID: PROVIDER_ID, instanceID: SERVER }));
    const conditions = capiPausedConditions(reported, Date.parse(now)) ?? [];
    const osm = { ...reported, status: { conditions, ...provisionedStatus(SERVER) } };
    const capi = openstackCapiMachine({
      spec: { providerID: PROVIDER_ID },
      status: { phase: "Running", nodeRef: { name: "worker-a" } },
    });
    const mapi = openstackMapiMachine(openstackProviderSpec(), { spec: { providerID: PROVIDER_ID } });
    const backward = capiMachineStatusToMapi(capi, osm, infra, { now, mapiMachine: mapi });
    if (!backward.ok) throw new Error(backward.errors.map(formatFieldError).join("\n"));
    expect(backward.value.status).toMatchObject({
      providerStatus: { instanceId: SERVER, instanceState: "ACTIVE" },
    });
    expect(failing([osm, { ...mapi, status: backward.value.status }])).toEqual([]);
  });
});
