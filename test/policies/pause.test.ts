/**
 * Table tests for the pause rules: `unpause-twin` (SPEC §2.3, decided from the request alone) and the
 * mutating `pause-new-capi` (SPEC §2.4), whose JSON Patch must be idempotent.
 */
import jsonpatch from "fast-json-patch";
import { describe, expect, it } from "vitest";
import { ANNOTATIONS, PAUSED_BY_VALUE } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { decide } from "../../src/policies/engine.js";
import {
  awsMachine,
  awsMachineTemplate,
  type Case,
  capiMachine,
  capiMachineSet,
  checkCase,
  context,
  createRequest,
  decideCase,
  edit,
  mapiMachine,
  mapiMachineSet,
  updateRequest,
} from "./builders.js";

const STALE = { freshness: () => ({ synced: false, disconnectedForMs: 0 }) };

describe("unpause-twin", () => {
  const cases: Case[] = [
    {
      name: "unpause-twin: denies removing a marked pause, whatever the cache says",
      request: updateRequest(
        capiMachine(),
        edit(capiMachine(), (c) => {
          delete c.metadata.annotations[ANNOTATIONS.paused];
        }),
      ),
      options: STALE,
      allowed: false,
      rule: "unpause-twin",
      message:
        'unpausing is refused: this is the paused copy of MAPI Machine openshift-machine-api/worker-a; only the handover unpauses it (metadata.annotations["cluster.x-k8s.io/paused"] removed). To make the Cluster API copy authoritative, migrate the MAPI Machine: oc patch machines.machine.openshift.io/worker-a -n openshift-machine-api --type=merge -p \'{"spec":{"authoritativeAPI":"ClusterAPI"}}\' (rule unpause-twin)',
    },
    {
      name: "unpause-twin: denies removing only the marker of an AWSMachine, naming its owner's MAPI Machine",
      request: updateRequest(
        awsMachine({ name: "worker-a-x7k2p", owner: "worker-a" }),
        edit(awsMachine({ name: "worker-a-x7k2p", owner: "worker-a" }), (a) => {
          delete a.metadata.annotations[ANNOTATIONS.pausedBy];
        }),
      ),
      allowed: false,
      rule: "unpause-twin",
      message:
        /^unpausing is refused: this is the paused copy of MAPI Machine openshift-machine-api\/worker-a; only the handover unpauses it \(metadata\.annotations\["machine-api-migration\.openshift\.io\/paused-by"\] removed\)/,
    },
    {
      name: "unpause-twin: denies unpausing a marked CAPI MachineSet even when its MAPI twin is ClusterAPI",
      request: updateRequest(
        capiMachineSet(),
        edit(capiMachineSet(), (c) => {
          c.metadata.annotations = {};
        }),
      ),
      objects: [mapiMachineSet({ status: "ClusterAPI" })],
      allowed: false,
      rule: "unpause-twin",
    },
    {
      name: "unpause-twin: an admin's own pause (no marker) is not its business",
      request: updateRequest(
        capiMachine({ name: "capi-only", paused: "admin" }),
        edit(capiMachine({ name: "capi-only", paused: "admin" }), (c) => {
          c.metadata.annotations = {};
        }),
      ),
      allowed: true,
      rule: "none",
    },
    {
      name: "unpause-twin: changing the pause annotation's value keeps the pause",
      request: updateRequest(
        capiMachine(),
        edit(capiMachine(), (c) => {
          c.metadata.annotations[ANNOTATIONS.paused] = "true";
        }),
      ),
      objects: [mapiMachine({ status: "ClusterAPI" })],
      allowed: true,
      rule: "none",
    },
  ];
  it.each(cases)("$name", (c) => {
    checkCase(c);
  });
});

/** Applies a decision's patch to the request object, as the API server does. */
const patched = (o: KubeObject, patch: jsonpatch.Operation[] | undefined): KubeObject =>
  patch ? jsonpatch.applyPatch(structuredClone(o), patch, true, false).newDocument : o;

describe("pause-new-capi", () => {
  const created: [string, KubeObject, KubeObject][] = [
    ["CAPI Machine", capiMachine({ paused: "none" }), mapiMachine()],
    ["CAPI MachineSet", capiMachineSet({ paused: "none" }), mapiMachineSet()],
    ["AWSMachine", awsMachine({ paused: "none" }), mapiMachine()],
    ["AWSMachineTemplate", awsMachineTemplate({ paused: "none" }), mapiMachineSet()],
  ];
  it.each(created)(
    "pause-new-capi: pauses and marks a new %s while the MAPI twin is MachineAPI",
    (_, object, mapi) => {
      const objects = [mapi];
      const d = decideCase({
        name: "",
        webhook: "mutate",
        request: createRequest(object),
        objects,
        allowed: true,
        rule: "",
      });
      expect(d).toMatchObject({ allowed: true, rule: "pause-new-capi" });
      expect(d.patch).toBeDefined();
      expect(d.patch?.every((op) => op.op === "add" || op.op === "replace")).toBe(true);
      const after = patched(object, d.patch);
      expect(after.metadata?.annotations).toMatchObject({
        [ANNOTATIONS.paused]: "",
        [ANNOTATIONS.pausedBy]: PAUSED_BY_VALUE,
      });
      expect(d.warnings[0]).toMatch(
        /^paused: MAPI Machine(Set)? openshift-machine-api\/\S+ is authoritative$/,
      );
      // Reinvocation (reinvocationPolicy: IfNeeded) on the patched object changes nothing.
      const again = decide("mutate", createRequest(after), context(objects));
      expect(again).toEqual({ allowed: true, rule: "none", warnings: [] });
      // …and the validating webhook admits the patched object (the marker is the mutation's own).
      expect(decide("validate", createRequest(after), context(objects)).allowed).toBe(true);
    },
  );

  it("pause-new-capi: the patch adds the annotations map when the object has none", () => {
    const object = edit(capiMachine({ paused: "none" }), (c) => {
      delete c.metadata.annotations;
    });
    const d = decide("mutate", createRequest(object), context([mapiMachine()]));
    expect(d.patch).toEqual([
      {
        op: "add",
        path: "/metadata/annotations",
        value: { [ANNOTATIONS.paused]: "", [ANNOTATIONS.pausedBy]: PAUSED_BY_VALUE },
      },
    ]);
    expect(d.warnings).toEqual(["paused: MAPI Machine openshift-machine-api/worker-a is authoritative"]);
  });

  it("pause-new-capi: adopts an existing pause by adding only the marker", () => {
    const object = capiMachine({ paused: "admin" });
    const d = decide("mutate", createRequest(object), context([mapiMachine({ status: "Migrating" })]));
    expect(d.patch).toEqual([
      {
        op: "add",
        path: "/metadata/annotations/machine-api-migration.openshift.io~1paused-by",
        value: PAUSED_BY_VALUE,
      },
    ]);
    expect(d.warnings).toEqual(["paused: MAPI Machine openshift-machine-api/worker-a is being migrated"]);
  });

  const untouched: Case[] = [
    {
      name: "pause-new-capi: leaves a new CAPI Machine alone when the MAPI twin is ClusterAPI",
      webhook: "mutate",
      request: createRequest(capiMachine({ paused: "none" })),
      objects: [mapiMachine({ status: "ClusterAPI" })],
      allowed: true,
      rule: "none",
      warnings: [],
    },
    {
      name: "pause-new-capi: leaves a CAPI-only Machine (no MAPI twin) alone",
      webhook: "mutate",
      request: createRequest(capiMachine({ name: "capi-only", paused: "none" })),
      allowed: true,
      rule: "none",
      warnings: [],
    },
    {
      name: "pause-new-capi: a stale MAPI view answers retry rather than guess",
      webhook: "mutate",
      request: createRequest(capiMachine({ paused: "none" })),
      objects: [mapiMachine()],
      options: STALE,
      allowed: false,
      rule: "pause-new-capi",
      message:
        /^cluster view is stale, retry in a few seconds \(machines\.machine\.openshift\.io: cache not synced\)\./,
    },
  ];
  it.each(untouched)("$name", (c) => {
    const d = checkCase(c);
    expect(d.patch).toBeUndefined();
  });
});
