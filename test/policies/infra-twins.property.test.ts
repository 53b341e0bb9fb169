/**
 * Property (issue 20, SPEC §2.3 v5): whatever owners, labels and names a request spoofs, on every platform's
 * InfraMachine and template kind,
 * - no UPDATE of a frozen infrastructure object is admitted that changes its spec, adds or changes an
 *   ownerReference, or changes its template label (nor, while its MAPI twin is Migrating, any label), and
 * - no CREATE of an object some MachineAPI or Migrating MAPI object would take for its mirror (by its name,
 *   an owner, the template label, or the reference of a paused CAPI copy) is admitted unpaused, and the
 *   mutating webhook pauses it.
 * The oracle is the fixture world (test/policies/builders.ts `twinWorld`), not the product's twin resolution.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CAPI_API_VERSION, LABELS } from "../../src/kube/kinds.js";
import type { KubeObject, OwnerReference } from "../../src/kube/object.js";
import { sameJson } from "../../src/policies/compare.js";
import { decide } from "../../src/policies/engine.js";
import {
  awsMachine,
  awsMachineTemplate,
  capiMachineOwnerRef,
  context,
  createRequest,
  edit,
  INFRA_PLATFORMS,
  onPlatform,
  SET_A,
  SET_B,
  TEMPLATE_A,
  twinWorld,
  updateRequest,
} from "./builders.js";

/** Owners a request may name: real and missing CAPI Machines, other versions, groups and kinds, junk. */
const OWNER_POOL: OwnerReference[] = [
  capiMachineOwnerRef("worker-a"),
  capiMachineOwnerRef("worker-b"),
  capiMachineOwnerRef("worker-c"),
  capiMachineOwnerRef("worker-x"),
  { ...capiMachineOwnerRef("worker-b"), apiVersion: "cluster.x-k8s.io/v1beta1" },
  { ...capiMachineOwnerRef("worker-b"), controller: false },
  { ...capiMachineOwnerRef("worker-b"), uid: "uid-capi-machine-worker-a" },
  { ...capiMachineOwnerRef("worker-b"), apiVersion: "machine.openshift.io/v1beta1" },
  { apiVersion: CAPI_API_VERSION, kind: "MachineSet", name: SET_B, uid: `uid-capi-machineset-${SET_B}` },
  { apiVersion: CAPI_API_VERSION, kind: "Cluster", name: "ci-abc12", uid: "uid-cluster" },
  { apiVersion: "v1", kind: "ConfigMap", name: "worker-b", uid: "uid-configmap" },
  { kind: "Machine", name: "worker-b" } as OwnerReference,
];
const LABEL_VALUES = [SET_A, SET_B, "", "no-such-set", "worker-b", TEMPLATE_A];
const NAMES = ["worker-a", "worker-b", "worker-c", "worker-x", SET_A, SET_B, TEMPLATE_A, ""];

type Owners = (old: OwnerReference[]) => OwnerReference[];

const ownerEdit: fc.Arbitrary<Owners> = fc.oneof(
  fc.constant<Owners>((old) => old),
  fc.constantFrom(...OWNER_POOL).map<Owners>((ref) => (old) => [ref, ...old]),
  fc.constantFrom(...OWNER_POOL).map<Owners>((ref) => (old) => [...old, ref]),
  fc.array(fc.constantFrom(...OWNER_POOL), { maxLength: 3 }).map<Owners>((refs) => () => refs),
  fc
    .array(fc.boolean(), { minLength: 4, maxLength: 4 })
    .map<Owners>((keep) => (old) => old.filter((_, i) => keep[i % keep.length])),
  fc.constant<Owners>((old) => [...old].reverse()),
  fc
    .record({
      field: fc.constantFrom("name", "uid", "apiVersion", "kind", "controller"),
      value: fc.constantFrom<unknown>(
        "worker-b",
        "uid-capi-machine-worker-b",
        "cluster.x-k8s.io/v1beta1",
        false,
      ),
    })
    .map<Owners>(
      ({ field, value }) =>
        (old) =>
          old.map((ref, i) => (i === 0 ? { ...ref, [field]: value } : ref)),
    ),
);

// biome-ignore lint/suspicious/noExplicitAny: a spoofed body is arbitrary JSON
type Draft = Record<string, any>;

/**
 * One spoofed request body: owners, the template label (kept, set or removed), a user's label, the body's own
 * name (the request's name stays the object's, as the API server sends it), the spec, finalizers removed.
 * Keeping the label and the spec is as likely as changing them, so that admitted requests are common enough
 * for the property to say something about them.
 */
const spoof = fc.record({
  owners: ownerEdit,
  templateLabel: fc.option(fc.option(fc.constantFrom(...LABEL_VALUES), { nil: null }), {
    nil: undefined,
    freq: 1,
  }),
  userLabel: fc.boolean(),
  bodyName: fc.option(fc.constantFrom(...NAMES), { nil: undefined }),
  spec: fc.oneof(fc.constant("same"), fc.constantFrom("instanceType", "newField", "removed")),
  dropFinalizers: fc.boolean(),
});
type Spoof = typeof spoof extends fc.Arbitrary<infer T> ? T : never;

function applySpoof(base: KubeObject, s: Spoof): KubeObject {
  return edit(base, (o: Draft) => {
    const owners = s.owners(Array.isArray(o.metadata.ownerReferences) ? o.metadata.ownerReferences : []);
    if (owners.length > 0) o.metadata.ownerReferences = owners;
    else delete o.metadata.ownerReferences;
    o.metadata.labels ??= {};
    if (s.templateLabel === null) delete o.metadata.labels[LABELS.templateMachineSet];
    else if (s.templateLabel !== undefined) o.metadata.labels[LABELS.templateMachineSet] = s.templateLabel;
    if (s.userLabel) o.metadata.labels["team.example.com/owner"] = "storage";
    if (s.bodyName !== undefined) o.metadata.name = s.bodyName;
    const spec = o.spec.template?.spec ?? o.spec;
    if (s.spec === "instanceType") spec.instanceType = "m6i.2xlarge";
    else if (s.spec === "newField") spec.placementGroupName = "pg-1";
    else if (s.spec === "removed") delete spec.rootVolume;
    if (s.dropFinalizers) o.metadata.finalizers = [];
  });
}

/** The frozen objects of the world, with the authority of the MAPI object that freezes them. */
function frozenObjects(platform: string): { object: KubeObject; twin: "MachineAPI" | "Migrating" }[] {
  const machine = (o: Parameters<typeof awsMachine>[0]) => onPlatform(awsMachine(o), platform);
  const template = (o: Parameters<typeof awsMachineTemplate>[0]) =>
    onPlatform(awsMachineTemplate({ paused: "marked", ...o }), platform);
  return [
    { object: machine({}), twin: "MachineAPI" },
    { object: machine({ owner: null }), twin: "MachineAPI" },
    { object: machine({ name: "worker-c" }), twin: "Migrating" },
    {
      object: edit(machine({ name: "worker-x", owner: "worker-a" }), (a) => {
        a.metadata.ownerReferences.unshift(capiMachineOwnerRef("worker-b"));
      }),
      twin: "MachineAPI",
    },
    { object: template({}), twin: "MachineAPI" },
    { object: template({ name: `${SET_A}-0badf00d` }), twin: "MachineAPI" },
  ];
}

const labelOf = (o: KubeObject): string | undefined => o.metadata?.labels?.[LABELS.templateMachineSet];

describe("infrastructure twins (property)", () => {
  it("no admitted UPDATE edits a frozen InfraMachine or template, whatever it spoofs", () => {
    let admitted = 0;
    let denied = 0;
    fc.assert(
      fc.property(fc.constantFrom(...INFRA_PLATFORMS), fc.nat(), spoof, (platform, pick, s) => {
        const candidates = frozenObjects(platform);
        const { object: old, twin } = candidates[pick % candidates.length]!;
        const next = applySpoof(old, s);
        const request = updateRequest(old, next, { name: old.metadata?.name });
        const d = decide("validate", request, context(twinWorld(platform)));
        if (!d.allowed) {
          denied++;
          return;
        }
        admitted++;
        expect(sameJson(next.spec, old.spec)).toBe(true);
        const oldOwners = old.metadata?.ownerReferences ?? [];
        for (const ref of next.metadata?.ownerReferences ?? [])
          expect(oldOwners.some((o) => sameJson(o, ref))).toBe(true);
        expect(labelOf(next)).toBe(labelOf(old));
        if (twin === "Migrating") expect(next.metadata?.labels).toEqual(old.metadata?.labels);
      }),
      { numRuns: 2000 },
    );
    // The generator is not so wild that everything is refused: identity, removals and reorders get through.
    expect(admitted).toBeGreaterThan(100);
    expect(denied).toBeGreaterThan(admitted);
  });

  it("no CREATE that a MachineAPI or Migrating MAPI object would take for its mirror is admitted unpaused", () => {
    const FROZEN_MACHINES = ["worker-a", "worker-c"];
    let mirrors = 0;
    fc.assert(
      fc.property(
        fc.constantFrom(...INFRA_PLATFORMS),
        fc.constantFrom("Machine", "MachineTemplate"),
        fc.constantFrom(...NAMES.filter((n) => n !== "")),
        fc.array(fc.constantFrom(...OWNER_POOL), { maxLength: 3 }),
        fc.option(fc.constantFrom(...LABEL_VALUES), { nil: undefined }),
        (platform, role, name, owners, label) => {
          const base =
            role === "Machine"
              ? awsMachine({ name, owner: null, paused: "none" })
              : awsMachineTemplate({ name, machineSet: null, paused: "none" });
          const object = onPlatform(
            edit(base, (o) => {
              if (owners.length > 0) o.metadata.ownerReferences = owners;
              if (label !== undefined) o.metadata.labels[LABELS.templateMachineSet] = label;
            }),
            platform,
          );
          const capiOwners = owners.filter(
            (r) => r.kind === "Machine" && String(r.apiVersion).startsWith("cluster.x-k8s.io/"),
          );
          // Each CAPI Machine of the world references the InfraMachine of its own name, and SET_A's CAPI
          // MachineSet references TEMPLATE_A: a mirror by name, owner, label or reference.
          const isMirror =
            role === "Machine"
              ? FROZEN_MACHINES.includes(name) || capiOwners.some((r) => FROZEN_MACHINES.includes(r.name))
              : label === SET_A || name === TEMPLATE_A;
          if (!isMirror) return;
          mirrors++;
          const ctx = context(twinWorld(platform));
          const validated = decide("validate", createRequest(object), ctx);
          expect({ allowed: validated.allowed, rule: validated.rule }).toEqual({
            allowed: false,
            rule: "capi-create-paused",
          });
          const mutated = decide("mutate", createRequest(object), ctx);
          expect(mutated.rule).toBe("pause-new-capi");
          const paused = (mutated.patch ?? []).map((op) => op.path);
          expect(paused).toContain("/metadata/annotations/cluster.x-k8s.io~1paused");
        },
      ),
      { numRuns: 1000 },
    );
    expect(mirrors).toBeGreaterThan(100);
  });
});
