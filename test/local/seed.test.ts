/**
 * The local-mode demo seed on each platform (SPEC §8, issue 23): `--seed demo` on AWS, `--seed
 * demo-openstack` on OpenStack and `--seed demo-powervs` on PowerVS are the same demo — the same MachineSets,
 * Machines and names — with the platform's Infrastructure, InfraCluster and installer-shaped providerSpecs.
 * The OpenStack and PowerVS providerSpecs convert to CAPO's and CAPIBM's kinds and back without an error or a
 * warning, and everything the seed and the converter write survives the project's CRDs (manifests/crds).
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { CompiledCrd } from "../../src/apiserver/schema/index.js";
import { KINDS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { provisionedMapiStatus } from "../../src/local/demo.js";
import {
  DEMO_INFRASTRUCTURE_NAME,
  DEMO_PLATFORMS,
  type DemoPlatformType,
  demoPlatform,
  demoSeed,
  infrastructure,
  openstackProviderSpec,
  POWERVS_DEMO,
  powervsProviderSpec,
} from "../../src/local/seed.js";
import { convertDocuments } from "../../src/sync/conversion/documents.js";
import {
  capiMachineSetToMapi,
  capiMachineToMapi,
  formatFieldError,
  mapiMachineSetToCapi,
  mapiMachineStatusToCapi,
  mapiMachineToCapi,
  platformFor,
} from "../../src/sync/conversion/index.js";
import { checkAgainst, compiledProjectCrds } from "../apiserver/schema/survival.js";

const ns = { mapiNamespace: "openshift-machine-api", capiNamespace: "openshift-cluster-api" };
const openstack = demoSeed(ns, "OpenStack");
const openstackInfrastructure = openstack.clusterScoped.find((o) => o.kind === "Infrastructure")!;
const machines = openstack.machines.map((m) => m.machine);
const providerValueOf = (o: KubeObject) =>
  (o.spec as { providerSpec: { value: Record<string, unknown> } }).providerSpec.value;
const templateValueOf = (o: KubeObject) =>
  (o.spec as { template: { spec: { providerSpec: { value: Record<string, unknown> } } } }).template.spec
    .providerSpec.value;
const powervs = demoSeed(ns, "PowerVS");
const powervsInfrastructure = powervs.clusterScoped.find((o) => o.kind === "Infrastructure")!;
const powervsMachines = powervs.machines.map((m) => m.machine);
const fail = (errors: Parameters<typeof formatFieldError>[0][]) =>
  new Error(errors.map(formatFieldError).join("\n"));

describe("the demo is the same on every platform", () => {
  it("AWS is the default: demoSeed(ns) is demoSeed(ns, 'AWS'), infrastructure() is infrastructure('AWS')", () => {
    expect(demoSeed(ns)).toEqual(demoSeed(ns, "AWS"));
    expect(infrastructure()).toEqual(infrastructure("AWS"));
  });

  it("the same FeatureGate, Machines, MachineSets and ownership; names differ only by zone", () => {
    const aws = demoSeed(ns, "AWS");
    // Names with the platform's zone of suffix `a`/`b`/`c` written as the suffix alone.
    const layout = (seed: typeof aws, platform: DemoPlatformType) => {
      const unzoned = (name = "") =>
        ["a", "b", "c"].reduce(
          (n, s) => n.replace(`-worker-${DEMO_PLATFORMS[platform].zone(s)}`, `-worker-${s}`),
          name,
        );
      return {
        featureGate: seed.clusterScoped[0],
        sets: seed.machineSets.map((o) => unzoned(o.metadata?.name)),
        machines: seed.machines.map(({ machine, ownerSetName }) => [
          unzoned(machine.metadata?.name),
          ownerSetName && unzoned(ownerSetName),
        ]),
      };
    };
    expect(layout(openstack, "OpenStack")).toEqual(layout(aws, "AWS"));
    expect(layout(powervs, "PowerVS")).toEqual(layout(aws, "AWS"));
    expect(layout(aws, "AWS").sets).toEqual([
      `${DEMO_INFRASTRUCTURE_NAME}-worker-a`,
      `${DEMO_INFRASTRUCTURE_NAME}-worker-b`,
    ]);
  });

  it("each call returns fresh objects (a caller's change never leaks into the next seed)", () => {
    const first = infrastructure("OpenStack");
    (
      first.status as { platformStatus: { openstack: { cloudName: string } } }
    ).platformStatus.openstack.cloudName = "changed";
    expect(infrastructure("OpenStack")).toMatchObject({
      status: { platformStatus: { openstack: { cloudName: "openstack" } } },
    });
  });

  it("a platform the demo does not seed is named in the error", () => {
    expect(() => demoPlatform("GCP")).toThrow(
      'the demo seeds no platform "GCP": it seeds AWS, OpenStack, PowerVS',
    );
  });
});

describe("--seed demo-openstack: the cluster-wide objects", () => {
  it("Infrastructure: platformSpec and platformStatus of type OpenStack, the demo's infrastructureName", () => {
    expect(openstackInfrastructure).toEqual({
      apiVersion: "config.openshift.io/v1",
      kind: "Infrastructure",
      metadata: { name: "cluster" },
      spec: { platformSpec: { type: "OpenStack", openstack: {} } },
      status: {
        infrastructureName: DEMO_INFRASTRUCTURE_NAME,
        platform: "OpenStack",
        platformStatus: {
          type: "OpenStack",
          openstack: {
            apiServerInternalIP: "10.0.0.5",
            apiServerInternalIPs: ["10.0.0.5"],
            cloudName: "openstack",
            ingressIP: "10.0.0.7",
            ingressIPs: ["10.0.0.7"],
            loadBalancer: { type: "OpenShiftManagedDefault" },
          },
        },
        controlPlaneTopology: "HighlyAvailable",
        infrastructureTopology: "HighlyAvailable",
      },
    });
    const lookup = platformFor(openstackInfrastructure);
    expect(lookup.ok && lookup.platform.platform).toBe("OpenStack");
    expect(lookup.ok && lookup.infrastructure.clusterName).toBe(DEMO_INFRASTRUCTURE_NAME);
  });

  it("the CAPI Cluster's infrastructureRef names the OpenStackCluster (v1beta1, identityRef, ready)", () => {
    const [cluster, openStackCluster] = openstack.capi;
    expect(cluster?.spec).toEqual({
      infrastructureRef: {
        apiGroup: "infrastructure.cluster.x-k8s.io",
        kind: "OpenStackCluster",
        name: DEMO_INFRASTRUCTURE_NAME,
      },
    });
    expect(openStackCluster).toEqual({
      apiVersion: `${KINDS.openStackCluster.group}/${KINDS.openStackCluster.version}`,
      kind: "OpenStackCluster",
      metadata: { name: DEMO_INFRASTRUCTURE_NAME, namespace: ns.capiNamespace },
      spec: { identityRef: { cloudName: "openstack", name: "openstack-cloud-credentials" } },
      status: { ready: true },
    });
  });
});

describe("--seed demo-openstack: the providerSpecs convert (SPEC §5.5)", () => {
  it("every Machine's installer-shaped OpenstackProviderSpec converts to CAPI without an error or a warning", () => {
    for (const machine of machines) {
      const result = mapiMachineToCapi(machine, openstackInfrastructure, { capiNamespace: ns.capiNamespace });
      if (!result.ok) throw fail(result.errors);
      expect(result.warnings).toEqual([]);
      expect(result.value.infraMachine.kind).toBe("OpenStackMachine");
      expect(result.value.machine.spec).toMatchObject({
        clusterName: DEMO_INFRASTRUCTURE_NAME,
        bootstrap: { dataSecretName: "worker-user-data" },
        failureDomain: providerValueOf(machine).availabilityZone,
      });
    }
  });

  it("the OpenStackMachine spec of the handed-over Machine, field by field", () => {
    const result = mapiMachineToCapi(machines[2]!, openstackInfrastructure, {
      capiNamespace: ns.capiNamespace,
    });
    if (!result.ok) throw fail(result.errors);
    expect(result.value.infraMachine.spec).toEqual({
      flavor: "m1.xlarge",
      image: { filter: { name: `${DEMO_INFRASTRUCTURE_NAME}-rhcos` } },
      ports: [
        {
          fixedIPs: [
            {
              subnet: {
                filter: {
                  name: `${DEMO_INFRASTRUCTURE_NAME}-nodes`,
                  tags: [`openshiftClusterID=${DEMO_INFRASTRUCTURE_NAME}`],
                },
              },
            },
          ],
        },
      ],
      securityGroups: [{ filter: { name: `${DEMO_INFRASTRUCTURE_NAME}-worker` } }],
      trunk: true,
      tags: [`openshiftClusterID=${DEMO_INFRASTRUCTURE_NAME}`],
      serverMetadata: [
        { key: "Name", value: `${DEMO_INFRASTRUCTURE_NAME}-worker` },
        { key: "openshiftClusterID", value: DEMO_INFRASTRUCTURE_NAME },
      ],
      serverGroup: { filter: { name: `${DEMO_INFRASTRUCTURE_NAME}-worker-az-c` } },
      identityRef: { name: "openstack-cloud-credentials", cloudName: "openstack" },
    });
  });

  it("MAPI → CAPI → MAPI gives every Machine's providerSpec back, but for what MAPO serialises away", () => {
    for (const machine of machines) {
      const capi = mapiMachineToCapi(machine, openstackInfrastructure, { capiNamespace: ns.capiNamespace });
      if (!capi.ok) throw fail(capi.errors);
      const back = capiMachineToMapi(capi.value.machine, capi.value.infraMachine, openstackInfrastructure, {
        mapiNamespace: ns.mapiNamespace,
      });
      if (!back.ok) throw fail(back.errors);
      expect(back.warnings).toEqual([]);
      // Decision 77: the secret's namespace is not carried; empty filters are not written back.
      const { cloudsSecret, networks, securityGroups, ...rest } = providerValueOf(machine);
      expect(providerValueOf(back.value.machine)).toEqual({
        ...rest,
        cloudsSecret: { name: (cloudsSecret as { name: string }).name },
        networks: (networks as Array<Record<string, unknown>>).map(({ filter: _, ...n }) => n),
        securityGroups: (securityGroups as Array<Record<string, unknown>>).map(({ filter: _, ...g }) => g),
      });
      // … and converting that again gives the same OpenStackMachine spec.
      const again = mapiMachineToCapi(back.value.machine, openstackInfrastructure, {
        capiNamespace: ns.capiNamespace,
      });
      expect(again.ok && again.value.infraMachine.spec).toEqual(capi.value.infraMachine.spec);
    }
  });

  it("each MachineSet converts to a CAPI MachineSet + OpenStackMachineTemplate and back, without a word", () => {
    for (const set of openstack.machineSets) {
      const capi = mapiMachineSetToCapi(set, openstackInfrastructure, { capiNamespace: ns.capiNamespace });
      if (!capi.ok) throw fail(capi.errors);
      expect(capi.warnings).toEqual([]);
      expect(capi.value.infraTemplate.kind).toBe("OpenStackMachineTemplate");
      const back = capiMachineSetToMapi(
        capi.value.machineSet,
        capi.value.infraTemplate,
        openstackInfrastructure,
        {
          mapiNamespace: ns.mapiNamespace,
        },
      );
      if (!back.ok) throw fail(back.errors);
      expect(back.warnings).toEqual([]);
      expect(templateValueOf(back.value.machineSet)).toMatchObject({
        flavor: templateValueOf(set).flavor,
        availabilityZone: templateValueOf(set).availabilityZone,
        serverGroupName: templateValueOf(set).serverGroupName,
      });
    }
  });

  it("openstackProviderSpec(zone, flavor): one server group per zone, the flavor asked for", () => {
    expect(openstackProviderSpec("az-b", "m1.large")).toMatchObject({
      availabilityZone: "az-b",
      flavor: "m1.large",
      serverGroupName: `${DEMO_INFRASTRUCTURE_NAME}-worker-az-b`,
    });
  });
});

describe("provisionedMapiStatus: what MAO reports on each platform", () => {
  it("OpenStack (MAPO): openstack:///<server uuid>, ACTIVE, the node named after the Machine", () => {
    const machine = machines[0]!;
    const { _providerID, ...status } = provisionedMapiStatus(machine, 1, "MachineAPI", "OpenStack");
    expect(_providerID).toBe("openstack:///3f7c2a9e-1b4d-4e6f-8a2c-5a3c9e1b7d30");
    expect(status).toMatchObject({
      phase: "Running",
      providerStatus: { instanceId: "3f7c2a9e-1b4d-4e6f-8a2c-5a3c9e1b7d30", instanceState: "ACTIVE" },
      nodeRef: { kind: "Node", name: machine.metadata?.name },
      addresses: [
        { type: "InternalIP", address: "10.0.129.18" },
        { type: "InternalDNS", address: machine.metadata?.name },
      ],
    });
  });

  it("AWS (the default): aws:///<zone>/<instance id>, running, EC2's node name", () => {
    const machine = demoSeed(ns).machines[0]!.machine;
    const { _providerID, ...status } = provisionedMapiStatus(machine, 1, "MachineAPI");
    expect(_providerID).toBe("aws:///us-east-1a/i-05a3c9e1b7d2f5");
    expect(status).toMatchObject({
      providerStatus: { instanceId: "i-05a3c9e1b7d2f5", instanceState: "running" },
      nodeRef: { name: "ip-10-0-129-18.ec2.internal" },
    });
  });

  it.each(Object.keys(DEMO_PLATFORMS) as DemoPlatformType[])(
    "%s: the sync mirrors the reported status into a ready InfraMachine (SPEC §5.4)",
    (platform) => {
      const seed = demoSeed(ns, platform);
      const machine = seed.machines[2]!.machine;
      const { _providerID: providerID, ...status } = provisionedMapiStatus(
        machine,
        3,
        "ClusterAPI",
        platform,
      );
      const result = mapiMachineStatusToCapi(
        { ...machine, spec: { ...machine.spec, providerID }, status },
        seed.clusterScoped[1]!,
        { now: "2026-01-02T03:04:05Z" },
      );
      if (!result.ok) throw fail(result.errors);
      expect(result.value.infraMachineStatus).toMatchObject({ ready: true });
    },
  );
});

describe("--seed demo-openstack survives the project's CRDs (SPEC §8: nothing is pruned silently)", () => {
  let byKind: ReadonlyMap<string, CompiledCrd> = new Map();
  beforeAll(async () => {
    byKind = await compiledProjectCrds();
  });
  const failures = (objects: KubeObject[]) =>
    objects
      .map((o) => ({ object: `${o.kind} ${o.metadata?.name}`, ...checkAgainst(byKind, o) }))
      .filter((r) => r.lost.length > 0 || r.causes.length > 0);

  const seedObjects = [...openstack.clusterScoped, ...openstack.capi, ...openstack.machineSets, ...machines];
  it.each(seedObjects.map((o) => [`${o.kind} ${o.metadata?.name}`, o] as const))(
    "seed: %s survives pruning and validates",
    (_name, o) => {
      expect(checkAgainst(byKind, o)).toEqual({ lost: [], causes: [] });
    },
  );

  it("what the converter writes from it, and back, survives pruning and validates", () => {
    const capi = convertDocuments([...openstack.machineSets, ...machines], openstackInfrastructure, {
      to: "capi",
      ...ns,
    });
    expect(capi.errors).toEqual([]);
    expect(capi.objects.map((o) => o.kind).sort()).toEqual([
      "Machine",
      "Machine",
      "Machine",
      "MachineSet",
      "MachineSet",
      "OpenStackMachine",
      "OpenStackMachine",
      "OpenStackMachine",
      "OpenStackMachineTemplate",
      "OpenStackMachineTemplate",
    ]);
    expect(failures(capi.objects)).toEqual([]);
    const back = convertDocuments([...capi.objects, ...openstack.capi], openstackInfrastructure, {
      to: "mapi",
      ...ns,
    });
    expect(back.errors).toEqual([]);
    expect(back.objects).toHaveLength(5);
    expect(failures(back.objects)).toEqual([]);
  });
});

describe("--seed demo-powervs: the cluster-wide objects", () => {
  it("Infrastructure: platformSpec and platformStatus of type PowerVS (region, zone, resource group)", () => {
    expect(powervsInfrastructure).toMatchObject({
      spec: { platformSpec: { type: "PowerVS", powervs: {} } },
      status: {
        infrastructureName: DEMO_INFRASTRUCTURE_NAME,
        platform: "PowerVS",
        platformStatus: {
          type: "PowerVS",
          powervs: { region: "dal", zone: "dal10", resourceGroup: POWERVS_DEMO.resourceGroup },
        },
      },
    });
    const lookup = platformFor(powervsInfrastructure);
    expect(lookup.ok && lookup.platform.platform).toBe("PowerVS");
    expect(lookup.ok && lookup.infrastructure.clusterName).toBe(DEMO_INFRASTRUCTURE_NAME);
  });

  it("the CAPI Cluster's infrastructureRef names the IBMPowerVSCluster (v1beta2: workspace, zone, network)", () => {
    const [cluster, powerVSCluster] = powervs.capi;
    expect(cluster?.spec).toEqual({
      infrastructureRef: {
        apiGroup: "infrastructure.cluster.x-k8s.io",
        kind: "IBMPowerVSCluster",
        name: DEMO_INFRASTRUCTURE_NAME,
      },
    });
    expect(powerVSCluster).toEqual({
      apiVersion: `${KINDS.ibmPowerVSCluster.group}/${KINDS.ibmPowerVSCluster.version}`,
      kind: "IBMPowerVSCluster",
      metadata: { name: DEMO_INFRASTRUCTURE_NAME, namespace: ns.capiNamespace },
      spec: {
        serviceInstance: { id: POWERVS_DEMO.serviceInstanceID },
        zone: "dal10",
        resourceGroup: { name: POWERVS_DEMO.resourceGroup },
        network: { name: `${DEMO_INFRASTRUCTURE_NAME}-network` },
      },
      status: { ready: true },
    });
  });

  it("no zone per Machine: the MachineSets are numbered as the installer numbers them, same providerSpec", () => {
    expect(powervs.machineSets.map((o) => o.metadata?.name)).toEqual([
      `${DEMO_INFRASTRUCTURE_NAME}-worker-0`,
      `${DEMO_INFRASTRUCTURE_NAME}-worker-1`,
    ]);
    expect(
      powervs.machines.map(({ machine, ownerSetName }) => [machine.metadata?.name, ownerSetName]),
    ).toEqual([
      [`${DEMO_INFRASTRUCTURE_NAME}-worker-0-4qzbx`, `${DEMO_INFRASTRUCTURE_NAME}-worker-0`],
      [`${DEMO_INFRASTRUCTURE_NAME}-worker-1-8n2vd`, `${DEMO_INFRASTRUCTURE_NAME}-worker-1`],
      [`${DEMO_INFRASTRUCTURE_NAME}-infra-0`, undefined],
    ]);
    for (const set of powervs.machineSets) expect(templateValueOf(set)).toEqual(powervsProviderSpec());
  });

  it("powervsProviderSpec: the installer's PowerVSMachineProviderConfig for a worker", () => {
    expect(powervsProviderSpec()).toEqual({
      apiVersion: "machine.openshift.io/v1",
      kind: "PowerVSMachineProviderConfig",
      serviceInstance: { type: "ID", id: POWERVS_DEMO.serviceInstanceID },
      image: { type: "Name", name: `rhcos-${DEMO_INFRASTRUCTURE_NAME}` },
      network: { type: "Name", name: `${DEMO_INFRASTRUCTURE_NAME}-network` },
      systemType: "s922",
      processorType: "Shared",
      processors: "0.5",
      memoryGiB: 32,
      keyPairName: `${DEMO_INFRASTRUCTURE_NAME}-key`,
      credentialsSecret: { name: "powervs-credentials" },
      userDataSecret: { name: "worker-user-data" },
    });
    expect(powervsProviderSpec("e980")).toMatchObject({ systemType: "e980" });
  });
});

describe("--seed demo-powervs: the providerSpecs convert (SPEC §5.5)", () => {
  it("the IBMPowerVSMachine spec of the handed-over Machine, field by field; no failure domain", () => {
    const result = mapiMachineToCapi(powervsMachines[2]!, powervsInfrastructure, {
      capiNamespace: ns.capiNamespace,
    });
    if (!result.ok) throw fail(result.errors);
    expect(result.warnings).toEqual([]);
    expect(result.value.infraMachine.kind).toBe("IBMPowerVSMachine");
    expect(result.value.infraMachine.spec).toEqual({
      serviceInstance: { id: POWERVS_DEMO.serviceInstanceID },
      image: { name: `rhcos-${DEMO_INFRASTRUCTURE_NAME}` },
      network: { name: `${DEMO_INFRASTRUCTURE_NAME}-network` },
      sshKey: `${DEMO_INFRASTRUCTURE_NAME}-key`,
      systemType: "s922",
      processorType: "Shared",
      processors: "0.5",
      memoryGiB: 32,
    });
    expect(result.value.machine.spec).toMatchObject({
      clusterName: DEMO_INFRASTRUCTURE_NAME,
      bootstrap: { dataSecretName: "worker-user-data" },
    });
    expect(result.value.machine.spec?.failureDomain).toBeUndefined();
  });

  it("MAPI → CAPI → MAPI gives every Machine's providerSpec back whole, without a word", () => {
    for (const machine of powervsMachines) {
      const capi = mapiMachineToCapi(machine, powervsInfrastructure, { capiNamespace: ns.capiNamespace });
      if (!capi.ok) throw fail(capi.errors);
      expect(capi.warnings).toEqual([]);
      const back = capiMachineToMapi(capi.value.machine, capi.value.infraMachine, powervsInfrastructure, {
        mapiNamespace: ns.mapiNamespace,
      });
      if (!back.ok) throw fail(back.errors);
      expect(back.warnings).toEqual([]);
      expect(providerValueOf(back.value.machine)).toEqual(providerValueOf(machine));
    }
  });

  it("each MachineSet converts to a CAPI MachineSet + IBMPowerVSMachineTemplate and back, without a word", () => {
    for (const set of powervs.machineSets) {
      const capi = mapiMachineSetToCapi(set, powervsInfrastructure, { capiNamespace: ns.capiNamespace });
      if (!capi.ok) throw fail(capi.errors);
      expect(capi.warnings).toEqual([]);
      expect(capi.value.infraTemplate.kind).toBe("IBMPowerVSMachineTemplate");
      const back = capiMachineSetToMapi(
        capi.value.machineSet,
        capi.value.infraTemplate,
        powervsInfrastructure,
        {
          mapiNamespace: ns.mapiNamespace,
        },
      );
      if (!back.ok) throw fail(back.errors);
      expect(back.warnings).toEqual([]);
      expect(templateValueOf(back.value.machineSet)).toEqual(templateValueOf(set));
    }
  });

  it("provisionedMapiStatus: ibmpowervs://<region>/<zone>/<workspace>/<instance>, ACTIVE, the node named after the Machine", () => {
    const machine = powervsMachines[0]!;
    const { _providerID, ...status } = provisionedMapiStatus(machine, 1, "MachineAPI", "PowerVS");
    expect(_providerID).toBe(
      `ibmpowervs://dal/dal10/${POWERVS_DEMO.serviceInstanceID}/7c1d9e2a-0b3f-4a5c-8d6e-9f0a1b2c3d4f`,
    );
    expect(status).toMatchObject({
      phase: "Running",
      providerStatus: {
        apiVersion: "machine.openshift.io/v1",
        kind: "PowerVSMachineProviderStatus",
        instanceId: "7c1d9e2a-0b3f-4a5c-8d6e-9f0a1b2c3d4f",
        instanceState: "ACTIVE",
        serviceInstanceID: POWERVS_DEMO.serviceInstanceID,
      },
      nodeRef: { kind: "Node", name: machine.metadata?.name },
      addresses: [
        { type: "InternalIP", address: "10.0.129.18" },
        { type: "InternalDNS", address: machine.metadata?.name },
      ],
    });
  });
});

describe("--seed demo-powervs survives the project's CRDs (SPEC §8)", () => {
  let byKind: ReadonlyMap<string, CompiledCrd> = new Map();
  beforeAll(async () => {
    byKind = await compiledProjectCrds();
  });
  const failures = (objects: KubeObject[]) =>
    objects
      .map((o) => ({ object: `${o.kind} ${o.metadata?.name}`, ...checkAgainst(byKind, o) }))
      .filter((r) => r.lost.length > 0 || r.causes.length > 0);

  const seedObjects = [...powervs.clusterScoped, ...powervs.capi, ...powervs.machineSets, ...powervsMachines];
  it.each(seedObjects.map((o) => [`${o.kind} ${o.metadata?.name}`, o] as const))(
    "seed: %s survives pruning and validates",
    (_name, o) => {
      expect(checkAgainst(byKind, o)).toEqual({ lost: [], causes: [] });
    },
  );

  it("what the converter writes from it, and back, survives pruning and validates", () => {
    const capi = convertDocuments([...powervs.machineSets, ...powervsMachines], powervsInfrastructure, {
      to: "capi",
      ...ns,
    });
    expect(capi.errors).toEqual([]);
    expect(capi.objects.map((o) => o.kind).sort()).toEqual([
      "IBMPowerVSMachine",
      "IBMPowerVSMachine",
      "IBMPowerVSMachine",
      "IBMPowerVSMachineTemplate",
      "IBMPowerVSMachineTemplate",
      "Machine",
      "Machine",
      "Machine",
      "MachineSet",
      "MachineSet",
    ]);
    expect(failures(capi.objects)).toEqual([]);
    const back = convertDocuments([...capi.objects, ...powervs.capi], powervsInfrastructure, {
      to: "mapi",
      ...ns,
    });
    expect(back.errors).toEqual([]);
    expect(back.objects).toHaveLength(5);
    expect(failures(back.objects)).toEqual([]);
  });
});
