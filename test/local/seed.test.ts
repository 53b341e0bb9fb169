/**
 * The local-mode demo seed on each platform (SPEC §8, issue 23): `--seed demo` on AWS and `--seed
 * demo-openstack` on OpenStack are the same demo — the same MachineSets, Machines and names — with the
 * platform's Infrastructure, InfraCluster and installer-shaped providerSpecs. The OpenStack providerSpecs
 * convert to CAPO's kinds and back without an error or a warning, and everything the seed and the converter
 * write survives the project's CRDs (manifests/crds).
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
        ["a", "b", "c"].reduce((n, s) => n.replace(DEMO_PLATFORMS[platform].zone(s), s), name);
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
    expect(() => demoPlatform("GCP")).toThrow('the demo seeds no platform "GCP": it seeds AWS, OpenStack');
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
