/**
 * The memoising converter (src/sync/converter.ts) is the plain converter with a memory: for every input it
 * returns what the plain one returns, converts again whenever any input it reads is another object or
 * another value, hands out frozen results a caller cannot change for the next one, never freezes an input,
 * and leaves every plan the sync makes exactly as it was.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../src/kube/object.js";
import { IndexedStore } from "../../src/kube/store.js";
import { conversionConverter, memoisingConverter } from "../../src/sync/converter.js";
import { planMachineSetSync, planMachineSync, type SyncPlan } from "../../src/sync/plan.js";
import type { SyncConverter } from "../../src/sync/snapshot.js";
import { nestedObjects } from "../support/deep.js";
import {
  capiCluster,
  deps,
  fakeConverter,
  NOW,
  infrastructure as syncInfrastructure,
  mapiMachine as syncMapiMachine,
  mapiMachineSet as syncMapiMachineSet,
  providerSpec as syncProviderSpec,
  World,
} from "./builders.js";
import {
  awsMachine,
  awsMachineSpec,
  awsMachineTemplate,
  CAPI_NS,
  capiMachine,
  capiMachineSet,
  infrastructure,
  MAPI_NS,
  mapiMachine,
  mapiMachineCreatedSince,
  mapiMachineSet,
  providerSpec,
} from "./conversion/builders.js";
import {
  openStackMachine,
  openstackCapiMachine,
  openstackInfrastructure,
  openstackMapiMachine,
  openstackProviderSpec,
} from "./conversion/openstack-builders.js";
import {
  ibmPowerVSMachine,
  powervsCapiMachine,
  powervsInfrastructure,
  powervsMapiMachine,
  powervsProviderSpec,
} from "./conversion/powervs-builders.js";

const plain = conversionConverter;
const infra = infrastructure();
const toCapi = { capiNamespace: CAPI_NS };
const toMapi = { mapiNamespace: MAPI_NS };

/** Every spec conversion of the interface, called the same way on any converter. */
interface Inputs {
  mapi: KubeObject;
  set: KubeObject;
  capi: KubeObject;
  capiSet: KubeObject;
  infraMachine: KubeObject;
  template: KubeObject;
}

const calls = (c: SyncConverter, o: Inputs) => ({
  mapiMachineToCapi: () => c.mapiMachineToCapi(o.mapi, infra, toCapi),
  mapiMachineSetToCapi: () => c.mapiMachineSetToCapi(o.set, infra, toCapi),
  capiMachineToMapi: () => c.capiMachineToMapi(o.capi, o.infraMachine, infra, toMapi),
  capiMachineSetToMapi: () => c.capiMachineSetToMapi(o.capiSet, o.template, infra, toMapi),
});

const isDeepFrozen = (v: unknown): boolean =>
  typeof v !== "object" || v === null || (Object.isFrozen(v) && Object.values(v).every(isDeepFrozen));
const isNowhereFrozen = (v: unknown): boolean =>
  typeof v !== "object" || v === null || (!Object.isFrozen(v) && Object.values(v).every(isNowhereFrozen));

const inputs: Record<string, Inputs> = {
  "a worker Machine": {
    mapi: mapiMachine(),
    set: mapiMachineSet(),
    capi: capiMachine(),
    capiSet: capiMachineSet("workers-tpl"),
    infraMachine: awsMachine(),
    template: awsMachineTemplate("workers-tpl"),
  },
  "a Machine with a delete mark and a user label": {
    mapi: mapiMachine({
      labels: { "example.com/team": "a", "machine.openshift.io/cluster-api-machine-role": "worker" },
      annotations: { "machine.openshift.io/delete-machine": "true" },
    }),
    set: mapiMachineSet({ value: providerSpec({ instanceType: "c6i.large" }) }),
    capi: capiMachine({ annotations: { "cluster.x-k8s.io/delete-machine": "yes" } }),
    capiSet: capiMachineSet("workers-tpl", { templateSpec: awsMachineSpec({ instanceType: "c6i.large" }) }),
    infraMachine: awsMachine({ spec: awsMachineSpec({ instanceType: "c6i.large" }) }),
    template: awsMachineTemplate("workers-tpl", awsMachineSpec({ instanceType: "c6i.large" })),
  },
  "inputs that fail to convert (deviceIndex 1, no name)": {
    mapi: mapiMachine({ value: providerSpec({ deviceIndex: 1 }) }),
    set: mapiMachineSet({ value: providerSpec({ deviceIndex: 1 }) }),
    capi: { ...capiMachine(), metadata: {} },
    capiSet: { ...capiMachineSet("workers-tpl"), metadata: {} },
    infraMachine: awsMachine(),
    template: awsMachineTemplate("workers-tpl"),
  },
};

describe("memoisingConverter: the plain converter's results, remembered", () => {
  for (const [name, objects] of Object.entries(inputs)) {
    it(`returns what the plain converter returns, and the same result again for the same objects: ${name}`, () => {
      const memo = calls(memoisingConverter(plain), objects);
      const expected = calls(plain, objects);
      for (const key of Object.keys(memo) as (keyof typeof memo)[]) {
        const first = memo[key]();
        expect(first, key).toEqual(expected[key]());
        expect(memo[key](), key).toBe(first);
      }
    });
  }

  it("returns what the plain converter returns for generated Machines (property)", () => {
    const memo = memoisingConverter(plain);
    fc.assert(
      fc.property(
        fc.constantFrom("m6i.xlarge", "c6i.large", "r6i.2xlarge"),
        fc.option(fc.constantFrom(0, 1), { nil: undefined }),
        fc.dictionary(fc.stringMatching(/^example\.com\/[a-z]{1,6}$/), fc.stringMatching(/^[a-z]{0,6}$/), {
          maxKeys: 3,
        }),
        fc.boolean(),
        (instanceType, deviceIndex, userLabels, deleteMark) => {
          const mapi = mapiMachine({
            labels: { "machine.openshift.io/cluster-api-machine-role": "worker", ...userLabels },
            ...(deleteMark ? { annotations: { "machine.openshift.io/delete-machine": "" } } : {}),
            value: providerSpec({ instanceType, ...(deviceIndex === undefined ? {} : { deviceIndex }) }),
          });
          const result = memo.mapiMachineToCapi(mapi, infra, toCapi);
          expect(result).toEqual(plain.mapiMachineToCapi(structuredClone(mapi), infra, toCapi));
          expect(memo.mapiMachineToCapi(mapi, infra, toCapi)).toBe(result);
          if (result.ok) {
            const { machine, infraMachine } = result.value;
            const back = memo.capiMachineToMapi(machine, infraMachine, infra, toMapi);
            expect(back).toEqual(plain.capiMachineToMapi(machine, infraMachine, infra, toMapi));
          }
          // Results are frozen without walking the inputs: they must share none of the cache's objects.
          for (const o of [mapi, infra]) expect(isNowhereFrozen(o)).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("converts again when the cache replaced an input object, or a scalar input differs", () => {
    const memo = memoisingConverter(plain);
    const mapi = mapiMachine();
    const first = memo.mapiMachineToCapi(mapi, infra, toCapi);
    const changed = mapiMachine({ value: providerSpec({ instanceType: "c6i.large" }) });
    const second = memo.mapiMachineToCapi(changed, infra, toCapi);
    expect(second).toEqual(plain.mapiMachineToCapi(changed, infra, toCapi));
    expect(second).not.toEqual(first);
    const elsewhere = memo.mapiMachineToCapi(mapi, infra, { capiNamespace: "other" });
    expect(elsewhere).toEqual(plain.mapiMachineToCapi(mapi, infra, { capiNamespace: "other" }));
    const otherInfra = infrastructure({ name: "other-cluster" });
    expect(memo.mapiMachineToCapi(mapi, otherInfra, toCapi)).toEqual(
      plain.mapiMachineToCapi(mapi, otherInfra, toCapi),
    );
    // The InfraMachine and the (optional) AWSCluster of a reverse conversion are part of the key too.
    const capi = capiMachine();
    const before = memo.capiMachineToMapi(capi, awsMachine(), infra, toMapi);
    const larger = awsMachine({ spec: awsMachineSpec({ instanceType: "m6i.4xlarge" }) });
    expect(memo.capiMachineToMapi(capi, larger, infra, toMapi)).toEqual(
      plain.capiMachineToMapi(capi, larger, infra, toMapi),
    );
    expect(memo.capiMachineToMapi(capi, larger, infra, toMapi)).not.toEqual(before);
    const awsCluster: KubeObject = { apiVersion: "x/v1", kind: "AWSCluster", metadata: { name: "c" } };
    const withCluster = memo.capiMachineToMapi(capi, larger, infra, { ...toMapi, infraCluster: awsCluster });
    expect(withCluster).toEqual(
      plain.capiMachineToMapi(capi, larger, infra, { ...toMapi, infraCluster: awsCluster }),
    );
    expect(memo.capiMachineToMapi(capi, larger, infra, { ...toMapi, infraCluster: awsCluster })).toBe(
      withCluster,
    );
  });

  it("hands out frozen results: a caller's change cannot leak into what the next caller gets", () => {
    const memo = memoisingConverter(plain);
    const mapi = mapiMachine();
    const result = memo.mapiMachineToCapi(mapi, infra, toCapi);
    expect(isDeepFrozen(result)).toBe(true);
    if (!result.ok) throw new Error("expected a conversion");
    expect(() => {
      (result.value.machine.spec as Record<string, unknown>).providerID = "changed";
    }).toThrow(TypeError);
    const labels = result.value.infraMachine.metadata?.labels ?? {};
    expect(() => {
      labels.extra = "x";
    }).toThrow(TypeError);
    expect(memo.mapiMachineToCapi(mapi, infra, toCapi)).toEqual(plain.mapiMachineToCapi(mapi, infra, toCapi));
  });

  it("never freezes an input (the cache's objects stay as they were)", () => {
    const memo = memoisingConverter(plain);
    const objects = inputs["a worker Machine"] as Inputs;
    for (const call of Object.values(calls(memo, objects))) call();
    for (const o of [...Object.values(objects), infra]) {
      expect(isNowhereFrozen(o)).toBe(true);
    }
  });

  it("status mirroring at a moving `now`: what the plain converter returns at that `now`", () => {
    const memo = memoisingConverter(plain);
    const mapi = mapiMachine({ status: { phase: "Running" } });
    const capi = capiMachine();
    const at = (now: string) => memo.mapiMachineStatusToCapi(mapi, infra, { now, capiMachine: capi });
    expect(at("2026-11-30T10:00:00Z")).toEqual(
      plain.mapiMachineStatusToCapi(mapi, infra, { now: "2026-11-30T10:00:00Z", capiMachine: capi }),
    );
    expect(at("2026-12-01T10:00:00Z")).toEqual(
      plain.mapiMachineStatusToCapi(mapi, infra, { now: "2026-12-01T10:00:00Z", capiMachine: capi }),
    );
  });
});

// ------------------------------------------------- a Machine's spec conversions, keyed by the parts they read

/**
 * What a Machine's spec conversion reads of an object (decision 165): its type, name, labels, annotations and
 * spec; of an InfraMachine, its type, name and spec. The memo hands the conversion exactly that, so these
 * tests prove the view is all it needs: any other field, of any value, changes no result.
 */
const viewOf = (o: KubeObject, withLabels: boolean): KubeObject => ({
  ...(o.apiVersion === undefined ? {} : { apiVersion: o.apiVersion }),
  ...(o.kind === undefined ? {} : { kind: o.kind }),
  metadata: {
    ...(o.metadata?.name === undefined ? {} : { name: o.metadata.name }),
    ...(withLabels && o.metadata?.labels !== undefined ? { labels: o.metadata.labels } : {}),
    ...(withLabels && o.metadata?.annotations !== undefined ? { annotations: o.metadata.annotations } : {}),
  },
  ...(o.spec === undefined ? {} : { spec: o.spec }),
});

/** Each platform's Machine, twin and InfraMachine, and some that fail to convert. */
const platformInputs: Record<
  string,
  { infra: KubeObject; mapi: KubeObject; capi: KubeObject; infraMachine: KubeObject }
> = {
  AWS: { infra, mapi: mapiMachine(), capi: capiMachine(), infraMachine: awsMachine() },
  "AWS, a delete mark and an instance recorded on the AWSMachine": {
    infra,
    mapi: mapiMachine({ annotations: { "machine.openshift.io/delete-machine": "true" } }),
    capi: capiMachine({ annotations: { "cluster.x-k8s.io/delete-machine": "yes" } }),
    infraMachine: awsMachine({
      spec: awsMachineSpec({ providerID: "aws:///us-east-1a/i-0abc", instanceID: "i-0abc" }),
    }),
  },
  OpenStack: {
    infra: openstackInfrastructure(),
    mapi: openstackMapiMachine(openstackProviderSpec()),
    capi: openstackCapiMachine(),
    infraMachine: openStackMachine(),
  },
  PowerVS: {
    infra: powervsInfrastructure(),
    mapi: powervsMapiMachine(powervsProviderSpec()),
    capi: powervsCapiMachine(),
    infraMachine: ibmPowerVSMachine(),
  },
  "failing: no name, a wrong kind and apiVersion": {
    infra,
    mapi: { ...mapiMachine(), kind: "MachineSet", metadata: { labels: { a: "b" } } },
    capi: { ...capiMachine(), apiVersion: "cluster.x-k8s.io/v1beta1", metadata: {} },
    infraMachine: { ...awsMachine(), kind: "OpenStackMachine" },
  },
};

/** Fields of an object no spec conversion reads, any of which an event may change. */
const otherFields = fc.record(
  {
    metadata: fc.record(
      {
        uid: fc.uuid(),
        resourceVersion: fc.stringMatching(/^[0-9]{1,6}$/),
        generation: fc.nat(),
        namespace: fc.constantFrom("openshift-machine-api", "openshift-cluster-api", "elsewhere"),
        finalizers: fc.array(fc.constantFrom("machine.machine.openshift.io", "a/b"), { maxLength: 2 }),
        ownerReferences: fc.array(
          fc.record({
            apiVersion: fc.constant("v1"),
            kind: fc.constant("X"),
            name: fc.string(),
            uid: fc.uuid(),
          }),
          { maxLength: 2 },
        ),
        creationTimestamp: fc.constant("2026-12-01T00:00:00Z"),
        deletionTimestamp: fc.constant("2026-12-07T00:00:00Z"),
        managedFields: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 2 }),
      },
      { requiredKeys: [] },
    ),
    status: fc.jsonValue({ maxDepth: 3 }),
    extra: fc.jsonValue({ maxDepth: 2 }),
  },
  { requiredKeys: [] },
);

const withOtherFields = (
  o: KubeObject,
  other: Record<string, unknown>,
  labels?: Record<string, string>,
): KubeObject => {
  const { metadata: meta = {}, ...rest } = other as { metadata?: Record<string, unknown> };
  return {
    ...o,
    ...rest,
    metadata: {
      ...o.metadata,
      ...meta,
      ...(labels === undefined ? {} : { labels, annotations: { "other/annotation": "x" } }),
    },
  };
};

describe("memoisingConverter: a Machine's spec conversions read only their view, remembered by its parts (decision 165)", () => {
  for (const [name, o] of Object.entries(platformInputs)) {
    it(`the plain conversion of the view is the plain conversion of the object, whatever else it holds: ${name} (property)`, () => {
      const toMapiOpts = { mapiNamespace: MAPI_NS };
      fc.assert(
        fc.property(otherFields, otherFields, otherFields, (a, b, c) => {
          const mapi = withOtherFields(o.mapi, a);
          const capi = withOtherFields(o.capi, b);
          // An InfraMachine's labels and annotations are not read either.
          const infraMachine = withOtherFields(o.infraMachine, c, { "other/label": "y" });
          expect(plain.mapiMachineToCapi(mapi, o.infra, toCapi)).toEqual(
            plain.mapiMachineToCapi(viewOf(mapi, true), o.infra, toCapi),
          );
          expect(plain.capiMachineToMapi(capi, infraMachine, o.infra, toMapiOpts)).toEqual(
            plain.capiMachineToMapi(viewOf(capi, true), viewOf(infraMachine, false), o.infra, toMapiOpts),
          );
          const memo = memoisingConverter(plain);
          expect(memo.mapiMachineToCapi(mapi, o.infra, toCapi)).toEqual(
            plain.mapiMachineToCapi(mapi, o.infra, toCapi),
          );
          expect(memo.capiMachineToMapi(capi, infraMachine, o.infra, toMapiOpts)).toEqual(
            plain.capiMachineToMapi(capi, infraMachine, o.infra, toMapiOpts),
          );
        }),
        { numRuns: 40 },
      );
    });
  }

  /** The plain converter, counting its spec conversions. */
  const counting = () => {
    const count = { toCapi: 0, toMapi: 0 };
    const inner: SyncConverter = {
      ...plain,
      mapiMachineToCapi: (...args) => {
        count.toCapi++;
        return plain.mapiMachineToCapi(...args);
      },
      capiMachineToMapi: (...args) => {
        count.toMapi++;
        return plain.capiMachineToMapi(...args);
      },
    };
    return { count, memo: memoisingConverter(inner) };
  };

  it("an object whose status, finalizers or resourceVersion alone changed converts from memory", () => {
    const { count, memo } = counting();
    const mapi = mapiMachine({ status: { phase: "Provisioning" } });
    const first = memo.mapiMachineToCapi(mapi, infra, toCapi);
    // The next version as the informer store keeps it: a new object, its unchanged parts the same objects.
    const next: KubeObject = {
      ...mapi,
      metadata: { ...mapi.metadata, resourceVersion: "2", finalizers: ["machine.machine.openshift.io"] },
      status: { phase: "Running" },
    };
    expect(memo.mapiMachineToCapi(next, infra, toCapi)).toBe(first);
    expect(count.toCapi).toBe(1);
    const capi = capiMachine();
    const infraMachine = awsMachine();
    const back = memo.capiMachineToMapi(capi, infraMachine, infra, toMapi);
    const infraNext: KubeObject = {
      ...infraMachine,
      status: { ready: true },
      metadata: { ...infraMachine.metadata, labels: { x: "y" } },
    };
    expect(memo.capiMachineToMapi({ ...capi, status: { phase: "Running" } }, infraNext, infra, toMapi)).toBe(
      back,
    );
    expect(count.toMapi).toBe(1);
  });

  it("converts again when a part it reads is another object, or a scalar it reads another value", () => {
    const { count, memo } = counting();
    const mapi = mapiMachine();
    const first = memo.mapiMachineToCapi(mapi, infra, toCapi);
    const variants: [string, KubeObject, boolean][] = [
      ["the spec, copied (equal, another object)", { ...mapi, spec: structuredClone(mapi.spec) }, true],
      ["another instance type", mapiMachine({ value: providerSpec({ instanceType: "c6i.large" }) }), false],
      ["a label", { ...mapi, metadata: { ...mapi.metadata, labels: { a: "b" } } }, false],
      [
        "an annotation",
        {
          ...mapi,
          metadata: { ...mapi.metadata, annotations: { "machine.openshift.io/delete-machine": "" } },
        },
        false,
      ],
      ["the name", { ...mapi, metadata: { ...mapi.metadata, name: "worker-b" } }, false],
      ["the kind", { ...mapi, kind: "MachineSet" }, false],
      ["the apiVersion", { ...mapi, apiVersion: "machine.openshift.io/v1" }, false],
    ];
    let calls = 1;
    for (const [what, variant, equal] of variants) {
      const result = memo.mapiMachineToCapi(variant, infra, toCapi);
      expect(count.toCapi, what).toBe(++calls);
      expect(result, what).toEqual(plain.mapiMachineToCapi(variant, infra, toCapi));
      if (equal) expect(result, what).toEqual(first);
      else expect(result, what).not.toEqual(first);
    }
    // The InfraMachine's spec and name are read by the reverse conversion.
    const capi = capiMachine();
    const infraMachine = awsMachine();
    memo.capiMachineToMapi(capi, infraMachine, infra, toMapi);
    const larger = { ...infraMachine, spec: awsMachineSpec({ instanceType: "m6i.4xlarge" }) };
    expect(memo.capiMachineToMapi(capi, larger, infra, toMapi)).toEqual(
      plain.capiMachineToMapi(capi, larger, infra, toMapi),
    );
    const renamed = { ...infraMachine, metadata: { ...infraMachine.metadata, name: "other" } };
    expect(memo.capiMachineToMapi(capi, renamed, infra, toMapi)).toEqual(
      plain.capiMachineToMapi(capi, renamed, infra, toMapi),
    );
    expect(count.toMapi).toBe(3);
  });

  it("a part that is not an object (no API server sends one) converts by the whole object, as before", () => {
    const { count, memo } = counting();
    const odd = { ...mapiMachine(), spec: "not a map" } as unknown as KubeObject;
    const oddLabels = {
      ...mapiMachine(),
      metadata: { name: "worker-a", labels: "x" },
    } as unknown as KubeObject;
    for (const o of [odd, oddLabels]) {
      expect(memo.mapiMachineToCapi(o, infra, toCapi)).toEqual(plain.mapiMachineToCapi(o, infra, toCapi));
      expect(memo.mapiMachineToCapi(o, infra, toCapi)).toBe(memo.mapiMachineToCapi(o, infra, toCapi));
    }
    expect(count.toCapi).toBe(2);
    // No InfraMachine (the interface names one; the plain conversion answers for none): as before.
    const none = undefined as unknown as KubeObject;
    expect(memo.capiMachineToMapi(capiMachine(), none, infra, toMapi)).toEqual(
      plain.capiMachineToMapi(capiMachine(), none, infra, toMapi),
    );
  });

  it("through the informer store: a status write's new version converts from memory", () => {
    const { count, memo } = counting();
    const store = new IndexedStore();
    const { current: first } = store.upsert(mapiMachine({ status: { phase: "Provisioning" } }));
    const result = memo.mapiMachineToCapi(first, infra, toCapi);
    // As the watch delivers it: parsed afresh, every part a new object.
    const { current } = store.upsert(structuredClone({ ...first, status: { phase: "Running" } }));
    expect(current).not.toBe(first);
    expect(memo.mapiMachineToCapi(current, infra, toCapi)).toBe(result);
    const { current: changed } = store.upsert(
      structuredClone({
        ...current,
        spec: { providerSpec: { value: providerSpec({ instanceType: "c6i.large" }) } },
      }),
    );
    expect(memo.mapiMachineToCapi(changed, infra, toCapi)).toEqual(
      plain.mapiMachineToCapi(changed, infra, toCapi),
    );
    expect(count.toCapi).toBe(2);
  });
});

// ------------------------------------------------------------------------------ status mirroring, remembered

const NOWS = ["2026-11-30T10:00:00Z", "2026-11-30T10:00:01Z", "2026-12-01T00:00:00Z"];
const EARLIER = "2026-11-29T08:00:00Z";

/** A CAPI Machine whose conditions are what mirroring `mapi` once produced (the steady state). */
const mirroredCapi = (mapi: KubeObject): KubeObject => {
  const first = plain.mapiMachineStatusToCapi(mapi, infra, { now: EARLIER });
  if (!first.ok) throw new Error("conversion failed");
  return capiMachine({ status: { conditions: first.value.machineStatus.conditions } });
};

describe("memoisingConverter: status mirroring remembered without the clock, stamped per call", () => {
  const running = mapiMachine({ status: { phase: "Running", nodeRef: { name: "ip-10-0-0-5" } } });
  const statusCases: Record<string, { mapi: KubeObject; capi?: KubeObject; stamped: boolean }> = {
    "steady (every condition as produced): the same frozen result at every now": {
      mapi: running,
      capi: mirroredCapi(running),
      stamped: false,
    },
    "a phase change (conditions flip): each call carries its own now": {
      mapi: running,
      capi: mirroredCapi(mapiMachine({ status: { phase: "Provisioned" } })),
      stamped: true,
    },
    "no CAPI Machine yet: every condition carries the call's now": { mapi: running, stamped: true },
    "no Infrastructure: the same failure at every now": { mapi: running, stamped: false },
  };
  for (const [name, { mapi, capi, stamped }] of Object.entries(statusCases)) {
    it(`MAPI → CAPI, ${name}`, () => {
      const memo = memoisingConverter(plain);
      const infrastructureOf = name.startsWith("no Infrastructure") ? undefined : infra;
      const results = NOWS.map((now) => {
        const opts = { now, ...(capi ? { capiMachine: capi } : {}) };
        const result = memo.mapiMachineStatusToCapi(mapi, infrastructureOf, opts);
        expect(result).toEqual(plain.mapiMachineStatusToCapi(mapi, infrastructureOf, opts));
        expect(JSON.stringify(result)).toBe(
          JSON.stringify(plain.mapiMachineStatusToCapi(mapi, infrastructureOf, opts)),
        );
        return result;
      });
      if (stamped) {
        expect(JSON.stringify(results[0])).toContain(NOWS[0]);
        expect(results[1]).not.toEqual(results[0]);
      } else {
        expect(results[1]).toBe(results[0]);
        expect(results[2]).toBe(results[0]);
        expect(isDeepFrozen(results[0])).toBe(true);
      }
    });
  }

  it("CAPI → MAPI: a held MachineCreation condition gives one remembered result; a new one is stamped", () => {
    const memo = memoisingConverter(plain);
    const capi = capiMachine();
    const infraMachine = awsMachine({ spec: awsMachineSpec({ instanceID: "i-0abc" }) });
    const held = mapiMachineCreatedSince(EARLIER);
    const fresh = mapiMachine();
    for (const mapi of [held, fresh]) {
      const results = NOWS.map((now) => {
        const result = memo.capiMachineStatusToMapi(capi, infraMachine, infra, { now, mapiMachine: mapi });
        expect(result).toEqual(
          plain.capiMachineStatusToMapi(capi, infraMachine, infra, { now, mapiMachine: mapi }),
        );
        return result;
      });
      if (mapi === held) expect(results[1]).toBe(results[0]);
      else expect(JSON.stringify(results[2])).toContain(NOWS[2]);
    }
  });

  it("returns what the plain converter returns for generated statuses, conditions and nows (property)", () => {
    const memo = memoisingConverter(plain);
    const phase = fc.constantFrom("", "Provisioning", "Provisioned", "Running", "Deleting", "Failed");
    const condition = fc.record({
      type: fc.constantFrom("Ready", "Available", "NodeReady", "Deleting", "Paused", "MachineCreation"),
      status: fc.constantFrom("True", "False"),
      lastTransitionTime: fc.constantFrom(EARLIER, ""),
    });
    const conditions = fc.array(condition, { maxLength: 4 });
    fc.assert(
      fc.property(
        phase,
        fc.boolean(),
        conditions,
        conditions,
        conditions,
        fc.option(fc.constantFrom("i-0abc", ""), { nil: undefined }),
        fc.array(fc.constantFrom(...NOWS), { minLength: 1, maxLength: 3 }),
        (mapiPhase, hasNode, capiConditions, otherConditions, providerConditions, instanceID, nows) => {
          const mapiWith = (conditions: unknown[]) =>
            mapiMachine({
              status: {
                phase: mapiPhase,
                ...(hasNode ? { nodeRef: { name: "n1" } } : {}),
                providerStatus: { conditions },
              },
            });
          const capiWith = (conditions: unknown[]) =>
            capiMachine({ status: { phase: mapiPhase, conditions } });
          // The same object with another partner must convert again (each object is part of the key).
          const [mapi, otherMapi] = [mapiWith(providerConditions), mapiWith(otherConditions)];
          const [capi, otherCapi] = [capiWith(capiConditions), capiWith(otherConditions)];
          const infraMachine = awsMachine({
            spec: awsMachineSpec(instanceID === undefined ? {} : { instanceID }),
          });
          for (const now of nows) {
            for (const capiMachine of [capi, otherCapi]) {
              expect(memo.mapiMachineStatusToCapi(mapi, infra, { now, capiMachine })).toEqual(
                plain.mapiMachineStatusToCapi(mapi, infra, { now, capiMachine }),
              );
            }
            for (const mapiMachine of [mapi, otherMapi]) {
              expect(memo.capiMachineStatusToMapi(capi, infraMachine, infra, { now, mapiMachine })).toEqual(
                plain.capiMachineStatusToMapi(capi, infraMachine, infra, { now, mapiMachine }),
              );
            }
          }
          for (const o of [mapi, otherMapi, capi, otherCapi, infraMachine, infra])
            expect(isNowhereFrozen(o)).toBe(true);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("converts again when the cache replaced an object the status mirroring reads", () => {
    const memo = memoisingConverter(plain);
    const now = NOWS[0] as string;
    const mapi = mapiMachine({ status: { phase: "Running", nodeRef: { name: "n1" } } });
    const capi = mirroredCapi(mapi);
    const steady = memo.mapiMachineStatusToCapi(mapi, infra, { now, capiMachine: capi });
    const deleting = mapiMachine({ status: { phase: "Deleting", nodeRef: { name: "n1" } } });
    expect(memo.mapiMachineStatusToCapi(deleting, infra, { now, capiMachine: capi })).toEqual(
      plain.mapiMachineStatusToCapi(deleting, infra, { now, capiMachine: capi }),
    );
    const otherCapi = mirroredCapi(deleting);
    expect(memo.mapiMachineStatusToCapi(mapi, infra, { now, capiMachine: otherCapi })).toEqual(
      plain.mapiMachineStatusToCapi(mapi, infra, { now, capiMachine: otherCapi }),
    );
    expect(memo.mapiMachineStatusToCapi(mapi, infra, { now })).toEqual(
      plain.mapiMachineStatusToCapi(mapi, infra, { now }),
    );
    expect(memo.mapiMachineStatusToCapi(mapi, infra, { now, capiMachine: capi })).toBe(steady);
    // CAPI → MAPI reads the InfraMachine (instance id, state) and the MAPI Machine (held conditions).
    const capiRunning = capiMachine({ status: { phase: "Running" } });
    const pending = awsMachine({ status: { instanceState: "pending" } });
    const running2 = awsMachine({ status: { instanceState: "running" } });
    for (const infraMachine of [pending, running2]) {
      expect(
        memo.capiMachineStatusToMapi(capiRunning, infraMachine, infra, { now, mapiMachine: mapi }),
      ).toEqual(plain.capiMachineStatusToMapi(capiRunning, infraMachine, infra, { now, mapiMachine: mapi }));
    }
  });

  it("never freezes an input of status mirroring (kept conditions stay the cache's, unfrozen)", () => {
    const memo = memoisingConverter(plain);
    const mapi = mapiMachine({
      status: { phase: "Running", providerStatus: { conditions: [{ type: "X" }] } },
    });
    const capi = capiMachine({ status: { conditions: [{ type: "Paused", status: "False" }] } });
    const infraMachine = awsMachine();
    memo.mapiMachineStatusToCapi(mapi, infra, { now: EARLIER, capiMachine: capi });
    memo.capiMachineStatusToMapi(capi, infraMachine, infra, { now: EARLIER, mapiMachine: mapi });
    for (const o of [mapi, capi, infraMachine, infra]) expect(isNowhereFrozen(o)).toBe(true);
  });

  it("passes status mirroring through when the inner converter has no unstamped step", () => {
    const fake = fakeConverter();
    const memo = memoisingConverter(fake);
    const mapi = syncMapiMachine("worker", { status: { phase: "Running" } });
    const capi = capiMachine();
    expect(memo.mapiMachineStatusToCapi(mapi, infra, { now: EARLIER })).toEqual(
      fake.mapiMachineStatusToCapi(mapi, infra, { now: EARLIER }),
    );
    expect(memo.capiMachineStatusToMapi(capi, awsMachine(), infra, { now: EARLIER })).toEqual(
      fake.capiMachineStatusToMapi(capi, awsMachine(), infra, { now: EARLIER }),
    );
  });

  it("MachineSet status mirroring (no clock): the plain result, remembered per input objects, frozen", () => {
    const memo = memoisingConverter(plain);
    const set = { ...mapiMachineSet(), status: { replicas: 2, readyReplicas: 1, availableReplicas: 1 } };
    const toCapiResult = memo.mapiMachineSetStatusToCapi(set, infra);
    expect(toCapiResult).toEqual(plain.mapiMachineSetStatusToCapi(set, infra));
    expect(memo.mapiMachineSetStatusToCapi(set, infra)).toBe(toCapiResult);
    expect(isDeepFrozen(toCapiResult)).toBe(true);
    expect(memo.mapiMachineSetStatusToCapi(set, undefined)).toEqual(
      plain.mapiMachineSetStatusToCapi(set, undefined),
    );
    const capiSet = { ...capiMachineSet("workers-tpl"), status: { replicas: 3, readyReplicas: 2 } };
    const toMapiResult = memo.capiMachineSetStatusToMapi(capiSet);
    expect(toMapiResult).toEqual(plain.capiMachineSetStatusToMapi(capiSet));
    expect(memo.capiMachineSetStatusToMapi(capiSet)).toBe(toMapiResult);
    const scaled = { ...capiSet, status: { replicas: 4 } };
    expect(memo.capiMachineSetStatusToMapi(scaled)).toEqual(plain.capiMachineSetStatusToMapi(scaled));
  });
});

// ------------------------------------------------------------------------------------ plans are unchanged

const realProviderSpec = () =>
  syncProviderSpec("m6i.xlarge", {
    blockDevices: [{ ebs: { encrypted: true, volumeSize: 120, volumeType: "gp3" } }],
    credentialsSecret: { name: "aws-cloud-credentials" },
    userDataSecret: { name: "worker-user-data" },
  });

/**
 * Drives `plan` to a fixed point with the memoising converter, checking on every round that the plain
 * converter plans exactly the same from the same snapshot objects (planned twice with the memo: a miss,
 * then a hit).
 */
const settleComparing = <S>(
  read: () => S,
  plan: (s: S, c: SyncConverter, now: Date) => SyncPlan,
  world: World,
  memo = memoisingConverter(plain),
  nowAt: (round: number) => Date = () => NOW,
) => {
  for (let round = 0; round < 10; round++) {
    const snapshot = read();
    const now = nowAt(round);
    const expected = plan(snapshot, plain, now);
    expect(plan(snapshot, memo, now)).toEqual(expected);
    expect(plan(snapshot, memo, now)).toEqual(expected);
    if (expected.writes.length === 0) return round;
    world.execute(expected.writes);
  }
  throw new Error("no fixed point");
};

describe("planning with the memoising converter: the same plans as with the plain converter", () => {
  it("a Machine from nothing to a quiet MAPI → CAPI sync, then handed over and synced CAPI → MAPI", () => {
    const mapi = syncMapiMachine("worker", {
      spec: { providerSpec: realProviderSpec(), providerID: "aws:///us-east-1a/i-0abc123def4567890" },
      meta: { annotations: { "machine.openshift.io/delete-machine": "true" } },
    });
    const world = new World([syncInfrastructure(), capiCluster(), mapi]);
    const machinePlan = (s: ReturnType<World["machineSnapshot"]>, c: SyncConverter, now: Date) =>
      planMachineSync(s, deps(c), now);
    expect(settleComparing(() => world.machineSnapshot("worker"), machinePlan, world)).toBeGreaterThan(0);
    world.mutate("machine.openshift.io/v1beta1", "Machine", MAPI_NS, "worker", (o) => {
      o.spec = { ...o.spec, authoritativeAPI: "ClusterAPI" };
      o.status = { ...o.status, authoritativeAPI: "ClusterAPI", synchronizedAPI: "ClusterAPI" };
    });
    expect(settleComparing(() => world.machineSnapshot("worker"), machinePlan, world)).toBeGreaterThan(0);
  });

  it("a Machine whose status moves on between reconciles, each planned at a later now", () => {
    const mapi = syncMapiMachine("worker", {
      spec: { providerSpec: realProviderSpec(), providerID: "aws:///us-east-1a/i-0abc123def4567890" },
      status: { phase: "Provisioning" },
    });
    const world = new World([syncInfrastructure(), capiCluster(), mapi]);
    const memo = memoisingConverter(plain);
    let clock = NOW.getTime();
    const later = () => {
      clock += 1000;
      return new Date(clock);
    };
    const machinePlan = (s: ReturnType<World["machineSnapshot"]>, c: SyncConverter, now: Date) =>
      planMachineSync(s, deps(c), now);
    const settle = () =>
      settleComparing(() => world.machineSnapshot("worker"), machinePlan, world, memo, later);
    const setStatus = (apiVersion: string, namespace: string, status: Record<string, unknown>) =>
      world.mutate(apiVersion, "Machine", namespace, "worker", (o) => {
        o.status = { ...o.status, ...status };
      });
    expect(settle()).toBeGreaterThan(0);
    for (const phase of ["Provisioned", "Running", "Running"]) {
      setStatus("machine.openshift.io/v1beta1", MAPI_NS, {
        phase,
        ...(phase === "Running" ? { nodeRef: { kind: "Node", name: "ip-10-0-0-5" } } : {}),
      });
      expect(settle()).toBeGreaterThanOrEqual(0);
    }
    world.mutate("machine.openshift.io/v1beta1", "Machine", MAPI_NS, "worker", (o) => {
      o.spec = { ...o.spec, authoritativeAPI: "ClusterAPI" };
      o.status = { ...o.status, authoritativeAPI: "ClusterAPI", synchronizedAPI: "ClusterAPI" };
    });
    expect(settle()).toBeGreaterThan(0);
    for (const phase of ["Deleting", "Running"]) {
      setStatus("cluster.x-k8s.io/v1beta2", CAPI_NS, { phase });
      expect(settle()).toBeGreaterThan(0);
    }
  });

  it("a MachineSet from nothing to a quiet MAPI → CAPI sync, then handed over and synced CAPI → MAPI", () => {
    const set = syncMapiMachineSet("worker");
    const template = (set.spec as { template: { spec: Record<string, unknown> } }).template;
    template.spec.providerSpec = realProviderSpec();
    const world = new World([syncInfrastructure(), capiCluster(), set]);
    const setPlan = (s: ReturnType<World["machineSetSnapshot"]>, c: SyncConverter, now: Date) =>
      planMachineSetSync(s, deps(c), now);
    expect(settleComparing(() => world.machineSetSnapshot("worker"), setPlan, world)).toBeGreaterThan(0);
    world.mutate("machine.openshift.io/v1beta1", "MachineSet", MAPI_NS, "worker", (o) => {
      o.spec = { ...o.spec, authoritativeAPI: "ClusterAPI" };
      o.status = { ...o.status, authoritativeAPI: "ClusterAPI", synchronizedAPI: "ClusterAPI" };
    });
    expect(settleComparing(() => world.machineSetSnapshot("worker"), setPlan, world)).toBeGreaterThanOrEqual(
      0,
    );
  });
});

describe("SPEC §5 objects as deep as kube-apiserver stores them (issue 20)", () => {
  // kube-apiserver decodes objects up to 10,000 levels (managedFields included): a Machine whose providerSpec
  // or providerStatus holds a value ~9,990 deep is stored and reaches the sync's converter.
  const deep = nestedObjects(9_990);
  const deepMachine = mapiMachine({
    value: providerSpec({ crafted: deep }),
    status: { phase: "Running", providerStatus: { crafted: deep } },
  });
  const deepSet = mapiMachineSet({ value: providerSpec({ crafted: deep }) });

  it("the memoising converter returns the plain converter's field error, and remembers it", () => {
    const memo = memoisingConverter(plain);
    for (const convert of [
      (c: SyncConverter) => c.mapiMachineToCapi(deepMachine, infra, toCapi),
      (c: SyncConverter) => c.mapiMachineSetToCapi(deepSet, infra, toCapi),
    ]) {
      const first = convert(memo);
      const expected = convert(plain);
      expect(first.ok).toBe(false);
      expect(expected.ok).toBe(false);
      const paths = (r: typeof first) => (r.ok ? [] : r.errors.map((e) => e.path));
      expect(paths(first)).toEqual(paths(expected));
      expect(paths(first).some((p) => p.endsWith("providerSpec.value.crafted"))).toBe(true);
      expect(convert(memo)).toBe(first);
    }
  });

  it("status mirroring of such a Machine runs, remembered", () => {
    const memo = memoisingConverter(plain);
    const opts = { now: NOW.toISOString() };
    const first = memo.mapiMachineStatusToCapi(deepMachine, infra, opts);
    expect(JSON.stringify(first)).toBe(
      JSON.stringify(plain.mapiMachineStatusToCapi(deepMachine, infra, opts)),
    );
  });
});
