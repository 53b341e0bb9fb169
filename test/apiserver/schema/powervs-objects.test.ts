/**
 * Cross-check of the CAPIBM CRDs in manifests/crds against what the product writes on PowerVS (SPEC §8:
 * "nothing the product writes is pruned silently"; §5.5): the IBMPowerVSMachines and
 * IBMPowerVSMachineTemplates the converter writes from realistic PowerVSMachineProviderConfigs, the MAPI
 * objects it writes back from realistic CAPIBM objects (and those CAPIBM objects themselves), status both
 * ways and as the CAPIBM stand-in reports it, and every field rule powervs-unsupported-fields must see —
 * each survives its CRD unpruned and valid.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { loadProjectCrds } from "../../../src/apiserver/fixtures/crds.js";
import type { CompiledCrd } from "../../../src/apiserver/schema/index.js";
import { getPath, isRecord, type KubeObject } from "../../../src/kube/object.js";
import {
  POWERVS_FIELD_TABLE,
  POWERVS_UNSUPPORTED_FIELDS,
  type PowerVSUnsupportedField,
} from "../../../src/platforms/powervs/index.js";
import { provisionedStatus } from "../../../src/simulate/capibm.js";
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
  ibmPowerVSMachine,
  ibmPowerVSMachineSpec,
  ibmPowerVSMachineTemplate,
  PROVIDER_ID,
  powervsCapiMachine,
  powervsCapiMachineSet,
  powervsInfrastructure,
  powervsMapiMachine,
  powervsMapiMachineSet,
  powervsProviderSpec,
  SERVICE_INSTANCE_ID,
} from "../../sync/conversion/powervs-builders.js";
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

const infra = powervsInfrastructure();
const INSTANCE = PROVIDER_ID.split("/").pop() ?? "";

/** A providerSpec without the keys a row sets to undefined (a MAPI object has no undefined fields). */
const providerSpec = (extra: Record<string, unknown> = {}): Record<string, unknown> =>
  JSON.parse(JSON.stringify(powervsProviderSpec(extra)));

/**
 * PowerVSMachineProviderConfigs as installers and admins write them, together setting every field the
 * converter carries and every reference type: the installer's worker (workspace by ID, image by name,
 * network by regex), one naming everything by ID with dedicated whole processors, one by name and regex
 * with capped processors and no key pair.
 */
const PROVIDER_SPECS: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ["the installer's worker", providerSpec()],
  [
    "everything by ID, dedicated whole processors, a larger system",
    providerSpec({
      image: { type: "ID", id: "0f3c1a2b-4d5e-4f60-8a7b-9c0d1e2f3a4b" },
      network: { type: "ID", id: "d1e2f3a4-b5c6-4d7e-8f90-a1b2c3d4e5f6" },
      systemType: "e980",
      processorType: "Dedicated",
      processors: 2,
      memoryGiB: 64,
    }),
  ],
  [
    "the workspace by name, the image by regex, capped processors, no key pair",
    providerSpec({
      serviceInstance: { type: "Name", name: "demo-workspace" },
      image: { type: "RegEx", regex: "^rhcos-4\\.17.*$" },
      network: { type: "Name", name: "demo-network" },
      processorType: "Capped",
      processors: "1.25",
      keyPairName: undefined,
    }),
  ],
];

const toCapi = (value: Record<string, unknown>, providerID?: string) => {
  const result = mapiMachineToCapi(
    powervsMapiMachine(value, providerID === undefined ? {} : { spec: { providerID } }),
    infra,
    { capiNamespace: CAPI_NS },
  );
  if (!result.ok) throw new Error(result.errors.map(formatFieldError).join("\n"));
  return result.value;
};
const setToCapi = (value: Record<string, unknown>) => {
  const result = mapiMachineSetToCapi(powervsMapiMachineSet(value), infra, { capiNamespace: CAPI_NS });
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

describe("the CAPIBM CRDs model every field the PowerVS converter touches", () => {
  const specFields = [...new Set(POWERVS_FIELD_TABLE.flatMap((row) => row.capi))];
  it.each([
    ["ibmpowervsmachines.infrastructure.cluster.x-k8s.io", ["spec"]],
    ["ibmpowervsmachinetemplates.infrastructure.cluster.x-k8s.io", ["spec", "template", "spec"]],
  ] as const)("%s: every spec field of the field table and of powervs-unsupported-fields", (crd, spec) => {
    const missing = [...specFields, ...POWERVS_UNSUPPORTED_FIELDS.map((f) => f.split("."))].filter(
      (field) => schemaAt(crd, [...spec, ...[field].flat()]) === undefined,
    );
    expect(missing).toEqual([]);
  });

  it.each([
    ["ibmpowervsmachines.infrastructure.cluster.x-k8s.io"],
    ["ibmpowervsmachinetemplates.infrastructure.cluster.x-k8s.io"],
    ["ibmpowervsclusters.infrastructure.cluster.x-k8s.io"],
  ])("%s is served as v1beta2 with a status subresource", (name) => {
    const crd = crds.find((c) => c.metadata?.name === name);
    expect(getPath(crd, ["spec", "versions"])).toMatchObject([
      { name: "v1beta2", served: true, storage: true, subresources: { status: {} } },
    ]);
  });

  it("the check itself notices a pruned IBMPowerVSMachine field", () => {
    const o = ibmPowerVSMachine(ibmPowerVSMachineSpec({ notInTheSchema: true }));
    expect(check(o).lost).toEqual([".spec.notInTheSchema"]);
  });

  it("and refuses an image named two ways (CAPIBM names a resource one way)", () => {
    const o = ibmPowerVSMachine(ibmPowerVSMachineSpec({ image: { id: INSTANCE, name: "rhcos" } }));
    expect(check(o).causes).toEqual(["spec.image: Too many: 2: must have at most 1 items"]);
  });

  it("and a processor type CAPIBM does not know", () => {
    const o = ibmPowerVSMachine(ibmPowerVSMachineSpec({ processorType: "Elastic" }));
    expect(check(o).causes).toHaveLength(1);
    expect(check(o).causes[0]).toMatch(/^spec\.processorType: Unsupported value: "Elastic"/);
  });

  it("status keeps what it does not model (CAPIBM's health, fault, v1beta2 conditions)", () => {
    const o = ibmPowerVSMachine(ibmPowerVSMachineSpec(), {
      status: { ...provisionedStatus(INSTANCE), health: "OK", fault: { code: 500 }, v1beta2: { x: 1 } },
    });
    expect(check(o)).toEqual({ lost: [], causes: [] });
  });
});

describe("MAPI → CAPI: what the converter writes survives the CAPIBM and CAPI CRDs", () => {
  it("the realistic providerSpecs set every IBMPowerVSMachine field the converter writes (precondition)", () => {
    const written = new Set(
      PROVIDER_SPECS.flatMap(([, value]) => Object.keys(toCapi(value, PROVIDER_ID).infraMachine.spec ?? {})),
    );
    // Read only on the way back: CAPIBM's deprecated workspace ID and the refused imageRef.
    const notWritten = ["serviceInstanceID", "imageRef"];
    const table = new Set(
      POWERVS_FIELD_TABLE.flatMap((row) => row.capi).filter((f) => !notWritten.includes(f)),
    );
    expect([...table].filter((f) => !written.has(f))).toEqual([]);
  });

  it.each(PROVIDER_SPECS)("Machine (%s) → IBMPowerVSMachine and CAPI Machine", (_name, value) => {
    const { machine, infraMachine } = toCapi(value, PROVIDER_ID);
    expect(infraMachine.kind).toBe("IBMPowerVSMachine");
    expect(failing([infraMachine, machine])).toEqual([]);
  });

  it.each(PROVIDER_SPECS)(
    "MachineSet (%s) → IBMPowerVSMachineTemplate and CAPI MachineSet",
    (_name, value) => {
      const { machineSet, infraTemplate } = setToCapi(value);
      expect(infraTemplate.kind).toBe("IBMPowerVSMachineTemplate");
      expect(failing([infraTemplate, machineSet])).toEqual([]);
    },
  );
});

/** IBMPowerVSMachine specs as a person writes them on the CAPI side, within what Machine API can carry. */
const CAPIBM_SPECS: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ["what the converter writes for the installer's worker", ibmPowerVSMachineSpec()],
  [
    "the deprecated serviceInstanceID, everything else by ID, integer processors, a providerID",
    (() => {
      const { serviceInstance: _workspace, ...spec } = ibmPowerVSMachineSpec({
        serviceInstanceID: SERVICE_INSTANCE_ID,
        image: { id: "0f3c1a2b-4d5e-4f60-8a7b-9c0d1e2f3a4b" },
        network: { id: "d1e2f3a4-b5c6-4d7e-8f90-a1b2c3d4e5f6" },
        processorType: "Dedicated",
        processors: 1,
        providerID: PROVIDER_ID,
      });
      return spec;
    })(),
  ],
  [
    "the workspace by regex, the network by name, no SSH key",
    (() => {
      const { sshKey: _key, ...spec } = ibmPowerVSMachineSpec({
        serviceInstance: { regex: "^demo-.*$" },
        network: { name: "demo-network" },
      });
      return spec;
    })(),
  ],
];

describe("CAPI → MAPI: CAPIBM objects and what the converter writes back survive their CRDs", () => {
  it.each(CAPIBM_SPECS)("IBMPowerVSMachine (%s) is valid as written", (_name, spec) => {
    expect(failing([ibmPowerVSMachine(spec), ibmPowerVSMachineTemplate("workers-abc", spec)])).toEqual([]);
  });

  it.each(CAPIBM_SPECS)("→ MAPI Machine, and back to an IBMPowerVSMachine (%s)", (_name, spec) => {
    const back = capiMachineToMapi(powervsCapiMachine(), ibmPowerVSMachine(spec), infra, {
      mapiNamespace: MAPI_NS,
    });
    if (!back.ok) throw new Error(back.errors.map(formatFieldError).join("\n"));
    const again = mapiMachineToCapi(back.value.machine, infra, { capiNamespace: CAPI_NS });
    if (!again.ok) throw new Error(again.errors.map(formatFieldError).join("\n"));
    expect(failing([back.value.machine, again.value.infraMachine, again.value.machine])).toEqual([]);
  });

  it.each(CAPIBM_SPECS)("MachineSet + IBMPowerVSMachineTemplate (%s) → MAPI MachineSet", (_name, spec) => {
    const result = capiMachineSetToMapi(
      powervsCapiMachineSet("workers-abc"),
      ibmPowerVSMachineTemplate("workers-abc", spec),
      infra,
      { mapiNamespace: MAPI_NS },
    );
    if (!result.ok) throw new Error(result.errors.map(formatFieldError).join("\n"));
    expect(failing([result.value.machineSet])).toEqual([]);
  });
});

/** A realistic CAPI-side spec for each field rule powervs-unsupported-fields refuses. */
const UNSUPPORTED_SPECS: Readonly<Record<PowerVSUnsupportedField, () => Record<string, unknown>>> = {
  imageRef: () => {
    const { image: _image, ...spec } = ibmPowerVSMachineSpec();
    return { ...spec, imageRef: { name: "rhcos-demo-x7k2p" } };
  },
};

describe("powervs-unsupported-fields: each field survives the CRD, so the rule sees it", () => {
  it.each(POWERVS_UNSUPPORTED_FIELDS)(
    "%s is kept, and converting it to MAPI is refused at its path",
    (field) => {
      const o = ibmPowerVSMachine(UNSUPPORTED_SPECS[field]());
      expect(check(o)).toEqual({ lost: [], causes: [] });
      expect(check(ibmPowerVSMachineTemplate("workers-abc", UNSUPPORTED_SPECS[field]()))).toEqual({
        lost: [],
        causes: [],
      });
      const result = capiMachineToMapi(powervsCapiMachine(), o, infra, { mapiNamespace: MAPI_NS });
      expect(result.ok ? [] : result.errors.map((e) => e.path)).toEqual([`IBMPowerVSMachine.spec.${field}`]);
    },
  );
});

describe("status (SPEC §5.4) on PowerVS survives the CRDs, both directions", () => {
  const now = "2026-12-01T10:00:00Z";
  it("MAPI providerStatus → IBMPowerVSMachine and CAPI Machine status", () => {
    const mapi = powervsMapiMachine(powervsProviderSpec(), {
      spec: { providerID: PROVIDER_ID },
      status: {
        phase: "Running",
        providerStatus: {
          apiVersion: "machine.openshift.io/v1",
          kind: "PowerVSMachineProviderStatus",
          instanceId: INSTANCE,
          instanceState: "ACTIVE",
          serviceInstanceID: SERVICE_INSTANCE_ID,
        },
      },
    });
    const { machine, infraMachine } = toCapi(powervsProviderSpec(), PROVIDER_ID);
    const forward = mapiMachineStatusToCapi(mapi, infra, { now, capiMachine: machine });
    if (!forward.ok) throw new Error(forward.errors.map(formatFieldError).join("\n"));
    expect(forward.value.infraMachineStatus).toEqual({
      instanceID: INSTANCE,
      instanceState: "ACTIVE",
      ready: true,
    });
    expect(
      failing([
        { ...infraMachine, status: forward.value.infraMachineStatus },
        { ...machine, status: forward.value.machineStatus },
      ]),
    ).toEqual([]);
  });

  it("what the CAPIBM stand-in reports (Paused, ready, instanceID, ACTIVE) → MAPI status", () => {
    const reported = ibmPowerVSMachine(ibmPowerVSMachineSpec({ providerID: PROVIDER_ID }));
    const conditions = capiPausedConditions(reported, Date.parse(now)) ?? [];
    const pvsm = { ...reported, status: { conditions, ...provisionedStatus(INSTANCE) } };
    const capi = powervsCapiMachine({
      spec: { providerID: PROVIDER_ID },
      status: { phase: "Running", nodeRef: { name: "worker-a" } },
    });
    const mapi = powervsMapiMachine(powervsProviderSpec(), { spec: { providerID: PROVIDER_ID } });
    const backward = capiMachineStatusToMapi(capi, pvsm, infra, { now, mapiMachine: mapi });
    if (!backward.ok) throw new Error(backward.errors.map(formatFieldError).join("\n"));
    expect(backward.value.status).toMatchObject({
      providerStatus: {
        kind: "PowerVSMachineProviderStatus",
        instanceId: INSTANCE,
        instanceState: "ACTIVE",
        serviceInstanceID: SERVICE_INSTANCE_ID,
      },
    });
    expect(failing([pvsm, { ...mapi, status: backward.value.status }])).toEqual([]);
  });
});
