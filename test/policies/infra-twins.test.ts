/**
 * Regression tables for issue 20, finding 2 (SPEC §2.3 v5): an infrastructure object's MAPI twin is worked
 * out from `oldObject` on UPDATE — never from owners or labels the request sets — its ownerReferences and
 * template label may not be added or changed while it is frozen, and a CREATE is judged from every MAPI
 * object it may mirror (its owners' twins, the mirror that references it, its name). Each case runs on every
 * platform's infrastructure kinds, not only AWS's.
 */
import { describe, expect, it } from "vitest";
import { ANNOTATIONS, LABELS, PAUSED_BY_VALUE } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import {
  awsMachine,
  awsMachineTemplate,
  type Case,
  capiMachine,
  capiMachineOwnerRef,
  capiMachineSet,
  checkCase,
  createRequest,
  decideCase,
  edit,
  INFRA_PLATFORMS,
  mapiMachine,
  mapiMachineSet,
  onPlatform,
  SET_A,
  SET_B,
  TEMPLATE_A,
  updateRequest,
  twinWorld as world,
} from "./builders.js";

const firstOwner = (name: string) => (draft: { metadata: { ownerReferences?: unknown[] } }) => {
  draft.metadata.ownerReferences = [capiMachineOwnerRef(name), ...(draft.metadata.ownerReferences ?? [])];
};

const EDIT_MAPI_A =
  'Edit the Machine API copy instead: oc edit machines.machine.openshift.io/worker-a -n openshift-machine-api — or migrate it to Cluster API first: oc patch machines.machine.openshift.io/worker-a -n openshift-machine-api --type=merge -p \'{"spec":{"authoritativeAPI":"ClusterAPI"}}\' (rule capi-frozen)';

describe.each(INFRA_PLATFORMS)(
  "capi-frozen and frozen-while-migrating on %s infrastructure kinds",
  (platform) => {
    const machine = (o: Parameters<typeof awsMachine>[0] = {}) => onPlatform(awsMachine(o), platform);
    const template = (o: Parameters<typeof awsMachineTemplate>[0] = {}) =>
      onPlatform(awsMachineTemplate(o), platform);
    const mirror = machine();
    const mirrorTemplate = template();
    const objects = world(platform);
    const cases: Case[] = [
      {
        name: "capi-frozen: a new first ownerReference naming a ClusterAPI Machine does not unfreeze the paused mirror (twin from oldObject)",
        request: updateRequest(
          mirror,
          edit(mirror, (a) => {
            firstOwner("worker-b")(a);
            a.spec.instanceType = "m6i.2xlarge";
          }),
        ),
        objects,
        allowed: false,
        rule: "capi-frozen",
        message: `${platform}Machine openshift-cluster-api/worker-a is not authoritative (MAPI Machine openshift-machine-api/worker-a has status.authoritativeAPI=MachineAPI): spec.instanceType, metadata.ownerReferences changed. Its ownerReferences may be removed, not added or changed, while it is not authoritative: they decide which Machine API object it mirrors. ${EDIT_MAPI_A}`,
      },
      {
        name: "capi-frozen: denies adding an ownerReference to a frozen InfraMachine",
        request: updateRequest(mirror, edit(mirror, firstOwner("worker-b"))),
        objects,
        allowed: false,
        rule: "capi-frozen",
        message: `${platform}Machine openshift-cluster-api/worker-a is not authoritative (MAPI Machine openshift-machine-api/worker-a has status.authoritativeAPI=MachineAPI): metadata.ownerReferences changed. Its ownerReferences may be removed, not added or changed, while it is not authoritative: they decide which Machine API object it mirrors. ${EDIT_MAPI_A}`,
      },
      {
        name: "capi-frozen: denies replacing the ownerReference of a frozen InfraMachine",
        request: updateRequest(
          mirror,
          edit(mirror, (a) => {
            a.metadata.ownerReferences = [capiMachineOwnerRef("worker-b")];
          }),
        ),
        objects,
        allowed: false,
        rule: "capi-frozen",
        message: /: metadata\.ownerReferences changed\. Its ownerReferences may be removed, not added/,
      },
      {
        name: "capi-frozen: denies changing a field of the ownerReference of a frozen InfraMachine",
        request: updateRequest(
          mirror,
          edit(mirror, (a) => {
            a.metadata.ownerReferences[0].blockOwnerDeletion = false;
          }),
        ),
        objects,
        allowed: false,
        rule: "capi-frozen",
        message: /: metadata\.ownerReferences changed\./,
      },
      {
        name: "capi-frozen: allows removing a spoofed ownerReference from a frozen InfraMachine (the repair)",
        request: updateRequest(edit(mirror, firstOwner("worker-b")), mirror),
        objects,
        allowed: true,
        rule: "none",
      },
      {
        name: "capi-frozen: allows removing every ownerReference of a frozen InfraMachine (garbage collector's orphaning)",
        request: updateRequest(
          mirror,
          edit(mirror, (a) => {
            a.metadata.ownerReferences = [];
          }),
        ),
        objects,
        allowed: true,
        rule: "none",
      },
      {
        name: "capi-frozen: an InfraMachine with several CAPI Machine owners is frozen if any owner's twin is",
        request: updateRequest(
          edit(mirror, firstOwner("worker-b")),
          edit(mirror, (a) => {
            firstOwner("worker-b")(a);
            a.spec.instanceType = "m6i.2xlarge";
          }),
        ),
        objects,
        allowed: false,
        rule: "capi-frozen",
        message: `${platform}Machine openshift-cluster-api/worker-a is not authoritative (MAPI Machine openshift-machine-api/worker-a has status.authoritativeAPI=MachineAPI): spec.instanceType changed. ${EDIT_MAPI_A}`,
      },
      {
        name: "capi-frozen: the InfraMachine a paused mirror CAPI Machine references is frozen whatever owner it names",
        request: updateRequest(
          machine({ name: "worker-a-infra", owner: "worker-b" }),
          edit(machine({ name: "worker-a-infra", owner: "worker-b" }), (a) => {
            a.spec.instanceType = "m6i.2xlarge";
          }),
        ),
        objects: world(platform).map((o) =>
          o.kind === "Machine" && o.metadata?.name === "worker-a" && o.apiVersion?.startsWith("cluster.")
            ? edit(o, (c) => {
                c.spec.infrastructureRef.name = "worker-a-infra";
              })
            : o,
        ),
        allowed: false,
        rule: "capi-frozen",
        message: new RegExp(
          `^${platform}Machine openshift-cluster-api/worker-a-infra is not authoritative \\(MAPI Machine openshift-machine-api/worker-a has status\\.authoritativeAPI=MachineAPI\\): spec\\.instanceType changed\\.`,
        ),
      },
      {
        name: "capi-frozen: an InfraMachine named after a MachineAPI Machine is frozen whatever owner it names (mirror made before its CAPI Machine)",
        request: updateRequest(
          machine({ owner: "worker-b" }),
          edit(machine({ owner: "worker-b" }), (a) => {
            a.spec.instanceType = "m6i.2xlarge";
          }),
        ),
        objects: world(platform, { withoutCapiMachineA: true }),
        allowed: false,
        rule: "capi-frozen",
        message: new RegExp(
          `^${platform}Machine openshift-cluster-api/worker-a is not authoritative \\(MAPI Machine openshift-machine-api/worker-a has`,
        ),
      },
      {
        name: "capi-frozen: adding an ownerReference to an authoritative InfraMachine (MAPI twin ClusterAPI) is not refused",
        request: updateRequest(
          machine({ name: "worker-b", paused: "none" }),
          edit(machine({ name: "worker-b", paused: "none" }), (a) => {
            a.metadata.ownerReferences.push({
              apiVersion: "v1",
              kind: "ConfigMap",
              name: "inventory",
              uid: "uid-configmap-inventory",
            });
          }),
        ),
        objects,
        allowed: true,
        rule: "none",
      },
      {
        name: "capi-frozen: relabelling a frozen template to a ClusterAPI MachineSet does not unfreeze it (twin from oldObject)",
        request: updateRequest(
          mirrorTemplate,
          edit(mirrorTemplate, (t) => {
            t.metadata.labels[LABELS.templateMachineSet] = SET_B;
            t.spec.template.spec.instanceType = "m6i.2xlarge";
          }),
        ),
        objects,
        allowed: false,
        rule: "capi-frozen",
        message: `${platform}MachineTemplate openshift-cluster-api/${TEMPLATE_A} is not authoritative (MAPI MachineSet openshift-machine-api/${SET_A} has status.authoritativeAPI=MachineAPI): spec.template.spec.instanceType, metadata.labels["machine.openshift.io/cluster-api-machineset"] changed. Edit the Machine API copy instead: oc edit machinesets.machine.openshift.io/${SET_A} -n openshift-machine-api — or migrate it to Cluster API first: oc patch machinesets.machine.openshift.io/${SET_A} -n openshift-machine-api --type=merge -p '{"spec":{"authoritativeAPI":"ClusterAPI"}}' (rule capi-frozen)`,
      },
      {
        name: "capi-frozen: denies relabelling a frozen template",
        request: updateRequest(
          mirrorTemplate,
          edit(mirrorTemplate, (t) => {
            t.metadata.labels[LABELS.templateMachineSet] = SET_B;
          }),
        ),
        objects,
        allowed: false,
        rule: "capi-frozen",
        message:
          /: metadata\.labels\["machine\.openshift\.io\/cluster-api-machineset"\] changed\. Edit the Machine API copy/,
      },
      {
        name: "capi-frozen: denies removing the template label of a frozen template (a protected label)",
        request: updateRequest(
          mirrorTemplate,
          edit(mirrorTemplate, (t) => {
            delete t.metadata.labels[LABELS.templateMachineSet];
          }),
        ),
        objects,
        allowed: false,
        rule: "capi-frozen",
        message: /: metadata\.labels\["machine\.openshift\.io\/cluster-api-machineset"\] changed\./,
      },
      {
        name: "capi-frozen: the template a paused mirror CAPI MachineSet references is frozen whatever MachineSet its label names",
        request: updateRequest(
          template({ machineSet: SET_B }),
          edit(template({ machineSet: SET_B }), (t) => {
            t.spec.template.spec.instanceType = "m6i.2xlarge";
          }),
        ),
        objects,
        allowed: false,
        rule: "capi-frozen",
        message: new RegExp(
          `^${platform}MachineTemplate openshift-cluster-api/${TEMPLATE_A} is not authoritative \\(MAPI MachineSet openshift-machine-api/${SET_A} has`,
        ),
      },
      {
        name: "frozen-while-migrating: an InfraMachine is frozen while any of its owners' MAPI Machines is Migrating",
        request: updateRequest(
          machine({ name: "worker-x", owner: "worker-c", paused: "none" }),
          edit(machine({ name: "worker-x", owner: "worker-c", paused: "none" }), (a) => {
            firstOwner("worker-b")(a);
            a.metadata.labels["team.example.com/owner"] = "storage";
          }),
        ),
        objects,
        allowed: false,
        rule: "frozen-while-migrating",
        message: new RegExp(
          `^${platform}Machine openshift-cluster-api/worker-x is frozen while MAPI Machine openshift-machine-api/worker-c is being migrated \\(status\\.authoritativeAPI=Migrating\\): metadata\\.labels\\["team\\.example\\.com/owner"\\], metadata\\.ownerReferences changed;`,
        ),
      },
      {
        name: "frozen-while-migrating: with several owners, one Migrating is enough (twin from oldObject)",
        request: updateRequest(
          edit(machine({ name: "worker-x", owner: "worker-c", paused: "none" }), firstOwner("worker-b")),
          edit(machine({ name: "worker-x", owner: "worker-c", paused: "none" }), (a) => {
            firstOwner("worker-b")(a);
            a.metadata.labels["team.example.com/owner"] = "storage";
          }),
        ),
        objects,
        allowed: false,
        rule: "frozen-while-migrating",
        message: /is frozen while MAPI Machine openshift-machine-api\/worker-c is being migrated/,
      },
    ];
    it.each(cases)("$name", (c) => {
      checkCase(c);
    });
  },
);

describe("ownerReferences of frozen MAPI and CAPI Machines and MachineSets (SPEC §2.3)", () => {
  const configMapOwner = {
    apiVersion: "v1",
    kind: "ConfigMap",
    name: "inventory",
    uid: "uid-configmap-inventory",
  };
  const cases: Case[] = [
    {
      name: "mapi-frozen: denies adding an ownerReference to a MAPI Machine that is not authoritative",
      request: updateRequest(
        mapiMachine({ status: "ClusterAPI" }),
        edit(mapiMachine({ status: "ClusterAPI" }), (m) => {
          m.metadata.ownerReferences = [configMapOwner];
        }),
      ),
      objects: [capiMachine({ paused: "none" })],
      allowed: false,
      rule: "mapi-frozen",
      message:
        "MAPI Machine openshift-machine-api/worker-a is not authoritative (status.authoritativeAPI=ClusterAPI): metadata.ownerReferences changed. Its ownerReferences may be removed, not added or changed, while it is not authoritative. Edit the Cluster API copy instead: oc edit machines.cluster.x-k8s.io/worker-a -n openshift-cluster-api — or set spec.authoritativeAPI=MachineAPI to migrate back. (rule mapi-frozen)",
    },
    {
      name: "capi-frozen: denies adding an ownerReference to a CAPI MachineSet whose MAPI twin is MachineAPI",
      request: updateRequest(
        capiMachineSet(),
        edit(capiMachineSet(), (c) => {
          c.metadata.ownerReferences = [configMapOwner];
        }),
      ),
      objects: [mapiMachineSet()],
      allowed: false,
      rule: "capi-frozen",
      message: `CAPI MachineSet openshift-cluster-api/${SET_A} is not authoritative (MAPI MachineSet openshift-machine-api/${SET_A} has status.authoritativeAPI=MachineAPI): metadata.ownerReferences changed. Its ownerReferences may be removed, not added or changed, while it is not authoritative. Edit the Machine API copy instead: oc edit machinesets.machine.openshift.io/${SET_A} -n openshift-machine-api — or migrate it to Cluster API first: oc patch machinesets.machine.openshift.io/${SET_A} -n openshift-machine-api --type=merge -p '{"spec":{"authoritativeAPI":"ClusterAPI"}}' (rule capi-frozen)`,
    },
    {
      name: "frozen-while-migrating: still judges ownerReferences while Migrating (not capi-frozen)",
      request: updateRequest(
        capiMachine(),
        edit(capiMachine(), (c) => {
          c.metadata.ownerReferences = [configMapOwner];
        }),
      ),
      objects: [mapiMachine({ status: "Migrating", synchronizedAPI: "MachineAPI" })],
      allowed: false,
      rule: "frozen-while-migrating",
      message: /metadata\.ownerReferences changed/,
    },
  ];
  it.each(cases)("$name", (c) => {
    checkCase(c);
  });
});

describe.each(INFRA_PLATFORMS)(
  "capi-create-paused and pause-new-capi on %s infrastructure kinds",
  (platform) => {
    const machine = (o: Parameters<typeof awsMachine>[0] = {}) => onPlatform(awsMachine(o), platform);
    const template = (o: Parameters<typeof awsMachineTemplate>[0] = {}) =>
      onPlatform(awsMachineTemplate(o), platform);
    const objects = world(platform);
    const spoofedMirror = machine({ owner: "worker-b", paused: "none" });
    const creates: [string, KubeObject, KubeObject[], string][] = [
      [
        "an InfraMachine named after a MachineAPI Machine, whatever owner it names",
        spoofedMirror,
        objects,
        `${platform}Machine openshift-cluster-api/worker-a must be created paused while MAPI Machine openshift-machine-api/worker-a holds authority (status.authoritativeAPI=MachineAPI): metadata.annotations["cluster.x-k8s.io/paused"] is missing. Add the annotation cluster.x-k8s.io/paused: "" (the mutating webhook normally adds it; check that machine-api-migration-mutate is running), or migrate the MAPI Machine to Cluster API first. (rule capi-create-paused)`,
      ],
      [
        "an InfraMachine with several owners, one of whose twins is MachineAPI (a CREATE is paused if any owner's twin requires it)",
        edit(machine({ name: "worker-x", owner: "worker-a", paused: "none" }), firstOwner("worker-b")),
        objects,
        `${platform}Machine openshift-cluster-api/worker-x must be created paused while MAPI Machine openshift-machine-api/worker-a holds authority`,
      ],
      [
        "the InfraMachine a paused mirror CAPI Machine references, whatever owner it names",
        machine({ name: "worker-a-infra", owner: "worker-b", paused: "none" }),
        objects.map((o) =>
          o.kind === "Machine" && o.metadata?.name === "worker-a" && o.apiVersion?.startsWith("cluster.")
            ? edit(o, (c) => {
                c.spec.infrastructureRef.name = "worker-a-infra";
              })
            : o,
        ),
        `${platform}Machine openshift-cluster-api/worker-a-infra must be created paused while MAPI Machine openshift-machine-api/worker-a holds authority`,
      ],
      [
        "the template a paused mirror CAPI MachineSet references, whatever MachineSet its label names",
        template({ machineSet: SET_B }),
        objects,
        `${platform}MachineTemplate openshift-cluster-api/${TEMPLATE_A} must be created paused while MAPI MachineSet openshift-machine-api/${SET_A} holds authority`,
      ],
    ];

    it.each(creates)("capi-create-paused: denies an unpaused create of %s", (_, object, cached, message) => {
      const d = checkCase({
        name: "",
        request: createRequest(object),
        objects: cached,
        allowed: false,
        rule: "capi-create-paused",
      });
      expect(d.status?.message?.startsWith(message)).toBe(true);
    });

    it.each(creates)("pause-new-capi: pauses and marks a create of %s", (_, object, cached) => {
      const d = decideCase({
        name: "",
        webhook: "mutate",
        request: createRequest(object),
        objects: cached,
        allowed: true,
        rule: "",
      });
      expect(d).toMatchObject({ allowed: true, rule: "pause-new-capi" });
      expect(d.patch).toContainEqual({
        op: "add",
        path: "/metadata/annotations/machine-api-migration.openshift.io~1paused-by",
        value: PAUSED_BY_VALUE,
      });
      expect(d.patch).toContainEqual({
        op: "add",
        path: "/metadata/annotations/cluster.x-k8s.io~1paused",
        value: "",
      });
    });

    it("capi-create-paused: allows an unpaused InfraMachine of a ClusterAPI Machine", () => {
      checkCase({
        name: "",
        request: createRequest(machine({ name: "worker-b", paused: "none" })),
        objects,
        allowed: true,
        rule: "none",
      });
      const mutated = decideCase({
        name: "",
        webhook: "mutate",
        request: createRequest(machine({ name: "worker-b", paused: "none" })),
        objects,
        allowed: true,
        rule: "",
      });
      expect(mutated).toEqual({ allowed: true, rule: "none", warnings: [] });
    });

    it("capi-create-paused: allows a paused InfraMachine named after a MachineAPI Machine", () => {
      checkCase({
        name: "",
        request: createRequest(
          edit(spoofedMirror, (a) => {
            a.metadata.annotations = { [ANNOTATIONS.paused]: "", [ANNOTATIONS.pausedBy]: PAUSED_BY_VALUE };
          }),
        ),
        objects,
        allowed: true,
        rule: "none",
      });
    });
  },
);
