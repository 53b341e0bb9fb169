/**
 * The PowerVS platform (SPEC §5.5; issue 23): PowerVSMachineProviderConfig ⇄ CAPIBM v1beta2 IBMPowerVSMachine
 * and IBMPowerVSMachineTemplate, as openshift/cluster-capi-operator's pkg/conversion converts them, with the
 * differences decision 88 lists. PowerVS is not in the registry yet, so every conversion names it through
 * the `platforms` option. Table rows first, then errors and warnings, status, and round trips.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  POWERVS_FIELD_TABLE,
  POWERVS_MACHINE_FINALIZER,
  POWERVS_UNSUPPORTED_FIELDS,
  type PowerVSUnsupportedField,
  powervsPlatform,
  zoneOf,
} from "../../../src/platforms/powervs/index.js";
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
  CAPIBM_API_VERSION,
  ibmPowerVSMachine,
  ibmPowerVSMachineSpec,
  ibmPowerVSMachineTemplate,
  PROVIDER_ID,
  PVS_REGION,
  PVS_ZONE,
  powervsCapiMachine,
  powervsCapiMachineSet,
  powervsInfrastructure,
  powervsMapiMachine,
  powervsMapiMachineSet,
  powervsProviderSpec,
  SERVICE_INSTANCE_ID,
} from "./powervs-builders.js";

const P = "spec.providerSpec.value";
const S = "IBMPowerVSMachine.spec";
const infra = powervsInfrastructure();
/** PowerVS is not registered (issue 23): the tests add it to the supported list themselves. */
/** The registry holds PowerVS; the tests name the list anyway, so a platform dropped from it shows here. */
const WITH_POWERVS = PLATFORMS;

const toCapi = (value: Record<string, unknown>, providerID?: string) =>
  mapiMachineToCapi(
    powervsMapiMachine(value, providerID === undefined ? {} : { spec: { providerID } }),
    infra,
    { capiNamespace: CAPI_NS, platforms: WITH_POWERVS },
  );
const fail = (errors: Parameters<typeof formatFieldError>[0][]) =>
  new Error(errors.map(formatFieldError).join("\n"));

const capibmSpec = (extra: Record<string, unknown>) => {
  const result = toCapi(powervsProviderSpec(extra));
  if (!result.ok) throw fail(result.errors);
  return result.value.infraMachine.spec as Record<string, unknown>;
};
const capiErrors = (extra: Record<string, unknown>) => {
  const result = toCapi(powervsProviderSpec(extra));
  return result.ok ? [] : result.errors.map(formatFieldError);
};

const toMapi = (spec: Record<string, unknown>, capiSpec: Record<string, unknown> = {}) =>
  capiMachineToMapi(powervsCapiMachine({ spec: capiSpec }), ibmPowerVSMachine(spec), infra, {
    mapiNamespace: MAPI_NS,
    platforms: WITH_POWERVS,
  });
const providerValueOf = (machine: { spec?: unknown }) =>
  (machine.spec as { providerSpec: { value: Record<string, unknown> } }).providerSpec.value;
const mapiValue = (extra: Record<string, unknown>) => {
  const result = toMapi(ibmPowerVSMachineSpec(extra));
  if (!result.ok) throw fail(result.errors);
  return providerValueOf(result.value.machine);
};
const mapiErrors = (extra: Record<string, unknown>, capiSpec: Record<string, unknown> = {}) => {
  const result = toMapi(ibmPowerVSMachineSpec(extra), capiSpec);
  return result.ok ? [] : result.errors.map(formatFieldError);
};

describe("registry: PowerVS is a supported platform (decision 88)", () => {
  it("the registry picks the PowerVS converter with no platforms option", () => {
    const lookup = platformFor(infra);
    expect(lookup.ok && lookup.platform).toBe(powervsPlatform);
  });
  it("status.platformStatus.type PowerVS → the PowerVS converter with CAPIBM's kinds", () => {
    const lookup = platformFor(infra, WITH_POWERVS);
    expect(lookup.ok && lookup.platform).toBe(powervsPlatform);
    expect(lookup.ok && lookup.infrastructure.region).toBe(PVS_REGION);
    expect(powervsPlatform.infraMachine).toEqual({
      group: "infrastructure.cluster.x-k8s.io",
      version: "v1beta2",
      kind: "IBMPowerVSMachine",
      plural: "ibmpowervsmachines",
      namespaced: true,
    });
    expect(powervsPlatform.infraMachineTemplate.plural).toBe("ibmpowervsmachinetemplates");
    expect(powervsPlatform.infraCluster.kind).toBe("IBMPowerVSCluster");
    expect(POWERVS_MACHINE_FINALIZER).toBe("ibmpowervsmachine.infrastructure.cluster.x-k8s.io");
    expect(zoneOf(infra)).toBe(PVS_ZONE);
  });
});

describe("PowerVS Machine level (MAPI → CAPI)", () => {
  it("the installer's worker converts to an IBMPowerVSMachine v1beta2 and a CAPI Machine", () => {
    const result = toCapi(powervsProviderSpec(), PROVIDER_ID);
    if (!result.ok) throw fail(result.errors);
    expect(result.warnings).toEqual([]);
    expect(result.value.infraMachine).toEqual({
      apiVersion: CAPIBM_API_VERSION,
      kind: "IBMPowerVSMachine",
      metadata: {
        name: "worker-a",
        namespace: CAPI_NS,
        labels: { "cluster.x-k8s.io/cluster-name": CLUSTER },
      },
      spec: ibmPowerVSMachineSpec({ providerID: PROVIDER_ID }),
    });
    expect(result.value.machine.spec).toMatchObject({
      clusterName: CLUSTER,
      providerID: PROVIDER_ID,
      bootstrap: { dataSecretName: "worker-user-data" },
      infrastructureRef: {
        apiGroup: "infrastructure.cluster.x-k8s.io",
        kind: "IBMPowerVSMachine",
        name: "worker-a",
      },
    });
    // Power VS has no failure domains: upstream clears it.
    expect(result.value.machine.spec).not.toHaveProperty("failureDomain");
  });
  it("MachineSet → CAPI MachineSet + IBMPowerVSMachineTemplate (v1beta2, hashed name)", () => {
    const result = mapiMachineSetToCapi(powervsMapiMachineSet(powervsProviderSpec()), infra, {
      capiNamespace: CAPI_NS,
      platforms: WITH_POWERVS,
    });
    if (!result.ok) throw fail(result.errors);
    const template = result.value.infraTemplate;
    expect(template.apiVersion).toBe(CAPIBM_API_VERSION);
    expect(template.kind).toBe("IBMPowerVSMachineTemplate");
    expect(template.metadata?.name).toMatch(/^workers-[0-9a-f]+$/);
    expect(template.spec).toEqual({ template: { spec: ibmPowerVSMachineSpec() } });
    expect(result.value.machineSet.spec).toMatchObject({
      clusterName: CLUSTER,
      template: {
        spec: { infrastructureRef: { kind: "IBMPowerVSMachineTemplate", name: template.metadata?.name } },
      },
    });
  });
});

describe("PowerVSMachineProviderConfig → IBMPowerVSMachine (field table)", () => {
  it.each([
    ["ID", { type: "ID", id: "x-1" }, { id: "x-1" }],
    ["Name", { type: "Name", name: "x" }, { name: "x" }],
    ["RegEx", { type: "RegEx", regex: "^x.*$" }, { regex: "^x.*$" }],
  ])("serviceInstance, image, network of type %s → the reference with that one key", (_t, mapi, capi) => {
    expect(capibmSpec({ serviceInstance: mapi, image: mapi, network: mapi })).toMatchObject({
      serviceInstance: capi,
      image: capi,
      network: capi,
    });
  });
  it("keyPairName → sshKey; systemType, processorType, processors, memoryGiB copied", () => {
    expect(
      capibmSpec({
        keyPairName: "k",
        systemType: "e980",
        processorType: "Dedicated",
        processors: 2,
        memoryGiB: 64,
      }),
    ).toMatchObject({
      sshKey: "k",
      systemType: "e980",
      processorType: "Dedicated",
      processors: 2,
      memoryGiB: 64,
    });
  });
  it("processors as a string (fractional) stays a string", () => {
    expect(capibmSpec({ processors: "0.25" }).processors).toBe("0.25");
  });
  it("userDataSecret.name → CAPI Machine bootstrap.dataSecretName; credentialsSecret not carried", () => {
    const result = toCapi(powervsProviderSpec({ userDataSecret: { name: "custom-user-data" } }));
    if (!result.ok) throw fail(result.errors);
    expect(result.value.machine.spec).toMatchObject({ bootstrap: { dataSecretName: "custom-user-data" } });
    expect(result.value.infraMachine.spec).not.toHaveProperty("credentialsSecret");
  });
  it("no userDataSecret → no dataSecretName", () => {
    const result = toCapi(powervsProviderSpec({ userDataSecret: undefined }));
    if (!result.ok) throw fail(result.errors);
    expect(result.value.machine.spec).toMatchObject({ bootstrap: {} });
  });
  it("unset optional fields stay unset", () => {
    expect(
      capibmSpec({
        keyPairName: undefined,
        systemType: undefined,
        processorType: undefined,
        processors: undefined,
        memoryGiB: undefined,
      }),
    ).toEqual({
      serviceInstance: { id: SERVICE_INSTANCE_ID },
      image: { name: "rhcos-demo-x7k2p" },
      network: { regex: "^DHCPSERVER.*demo-x7k2p.*_Private$" },
    });
  });
});

describe("PowerVS errors (MAPI → CAPI)", () => {
  it.each(["serviceInstance", "image", "network"])("%s with an unknown type → upstream's error", (field) => {
    expect(capiErrors({ [field]: { type: "UUID", id: "x" } })).toEqual([
      `${P}.${field}.type: Invalid value: "UUID": unknown type`,
    ]);
  });
  it.each(["serviceInstance", "image", "network"])(
    "%s missing → upstream's error on the empty type",
    (field) => {
      expect(capiErrors({ [field]: undefined })).toEqual([
        `${P}.${field}.type: Invalid value: "": unknown type`,
      ]);
    },
  );
  it("type without its key → error (upstream writes an empty reference CAPIBM cannot resolve)", () => {
    expect(capiErrors({ image: { type: "ID", name: "rhcos" } })).toEqual([
      `${P}.image.name: Invalid value: "rhcos": name must be unset when type is ID`,
      `${P}.image.id: Invalid value: null: id is required when type is ID`,
    ]);
    expect(capiErrors({ network: { type: "Name", name: "" } })).toEqual([
      `${P}.network.name: Invalid value: "": name is required when type is Name`,
    ]);
  });
  it("a second key besides the type's → error (upstream drops it)", () => {
    expect(capiErrors({ serviceInstance: { type: "ID", id: "a", regex: "b" } })).toEqual([
      `${P}.serviceInstance.regex: Invalid value: "b": regex must be unset when type is ID`,
    ]);
  });
  it("loadBalancers → upstream's error", () => {
    const lbs = [{ name: "demo-int", type: "Application" }];
    expect(capiErrors({ loadBalancers: lbs })).toEqual([
      `${P}.loadBalancers: Invalid value: ${JSON.stringify(lbs)}: loadBalancers are not supported`,
    ]);
    expect(capiErrors({ loadBalancers: [] })).toEqual([]);
  });
  it("providerSpec.metadata set → upstream's error", () => {
    expect(capiErrors({ metadata: { name: "x" } })).toEqual([
      `${P}.metadata: Invalid value: {"name":"x"}: metadata is not supported`,
    ]);
  });
  it("credentialsSecret other than powervs-credentials → error; the default or none is accepted", () => {
    expect(capiErrors({ credentialsSecret: { name: "mine" } })).toEqual([
      `${P}.credentialsSecret: Invalid value: {"name":"mine"}: credentialsSecret must be "powervs-credentials" or unset: CAPIBM uses its own credentials, convert this machine by hand`,
    ]);
    expect(capiErrors({ credentialsSecret: undefined })).toEqual([]);
  });
  it.each([
    [
      { processorType: "Turbo" },
      `${P}.processorType: Invalid value: "Turbo": processorType must be one of Dedicated, Shared, Capped or unset`,
    ],
    [{ processors: 0.5 }, `${P}.processors: Invalid value: 0.5: must be an integer or a string`],
    [{ memoryGiB: "32" }, `${P}.memoryGiB: Invalid value: "32": must be an integer`],
    [{ memoryGiB: 2 ** 31 }, `${P}.memoryGiB: Invalid value: 2147483648: must fit in a 32-bit integer`],
    [{ keyPairName: 7 }, `${P}.keyPairName: Invalid value: 7: must be a string`],
    [
      { userDataSecret: { name: "u", namespace: "x" } },
      `${P}.userDataSecret.namespace: Invalid value: "x": unknown secret reference field`,
    ],
    [
      { image: { type: "Name", name: "x", tag: "y" } },
      `${P}.image.tag: Invalid value: "y": unknown PowerVS resource field`,
    ],
  ])("error: %j", (extra, error) => {
    expect(capiErrors(extra)).toEqual([error]);
  });
  it("wrong kind and unknown field → errors at their paths", () => {
    expect(capiErrors({ kind: "AWSMachineProviderConfig", bogus: 1 })).toEqual([
      `${P}.kind: Invalid value: "AWSMachineProviderConfig": kind must be PowerVSMachineProviderConfig on PowerVS`,
      `${P}.bogus: Invalid value: 1: field has no CAPI equivalent and cannot be converted`,
    ]);
  });
  it("every error of a providerSpec is reported at once", () => {
    expect(
      capiErrors({
        image: undefined,
        network: { type: "x" },
        loadBalancers: [{ name: "a" }],
        metadata: { name: "m" },
      }),
    ).toHaveLength(4);
  });
  it("an empty infrastructureName → error", () => {
    const result = mapiMachineToCapi(
      powervsMapiMachine(powervsProviderSpec()),
      powervsInfrastructure({ name: "" }),
      { capiNamespace: CAPI_NS, platforms: WITH_POWERVS },
    );
    expect(result.ok ? [] : result.errors.map(formatFieldError)).toEqual([
      `Infrastructure.status.infrastructureName: Invalid value: "": infrastructureName (the CAPI cluster name) must be set`,
    ]);
  });
});

describe("IBMPowerVSMachine → PowerVSMachineProviderConfig (CAPI → MAPI)", () => {
  it("the converter's own IBMPowerVSMachine converts back to the installer's providerSpec", () => {
    expect(mapiValue({})).toEqual(powervsProviderSpec());
  });
  it.each([
    [{ id: "a" }, { type: "ID", id: "a" }],
    [{ name: "a" }, { type: "Name", name: "a" }],
    [{ regex: "a" }, { type: "RegEx", regex: "a" }],
  ])("reference %j → PowerVSResource %j", (capi, mapi) => {
    expect(mapiValue({ serviceInstance: capi, image: capi, network: capi })).toMatchObject({
      serviceInstance: mapi,
      image: mapi,
      network: mapi,
    });
  });
  it("deprecated serviceInstanceID alone → serviceInstance of type ID (upstream)", () => {
    expect(mapiValue({ serviceInstance: undefined, serviceInstanceID: "si-1" }).serviceInstance).toEqual({
      type: "ID",
      id: "si-1",
    });
    expect(mapiValue({ serviceInstanceID: SERVICE_INSTANCE_ID }).serviceInstance).toEqual({
      type: "ID",
      id: SERVICE_INSTANCE_ID,
    });
    expect(mapiValue({ serviceInstanceID: "" }).serviceInstance).toEqual({
      type: "ID",
      id: SERVICE_INSTANCE_ID,
    });
  });
  it("bootstrap.dataSecretName → userDataSecret; credentialsSecret always the default", () => {
    const result = capiMachineToMapi(
      powervsCapiMachine({ spec: { bootstrap: { dataSecretName: "other-user-data" } } }),
      ibmPowerVSMachine(),
      infra,
      { mapiNamespace: MAPI_NS, platforms: WITH_POWERVS },
    );
    if (!result.ok) throw fail(result.errors);
    expect(providerValueOf(result.value.machine)).toMatchObject({
      userDataSecret: { name: "other-user-data" },
      credentialsSecret: { name: "powervs-credentials" },
    });
  });
  it("Machine gets instance-type (systemType) and region labels; no zone (no failure domain)", () => {
    const result = toMapi(ibmPowerVSMachineSpec());
    if (!result.ok) throw fail(result.errors);
    expect(result.value.machine.metadata?.labels).toMatchObject({
      "machine.openshift.io/instance-type": "s922",
      "machine.openshift.io/region": PVS_REGION,
    });
    expect(result.value.machine.metadata?.labels).not.toHaveProperty("machine.openshift.io/zone");
  });
  it.each([
    [
      { serviceInstance: undefined },
      `${S}.serviceInstance: Invalid value: null: unable to convert service instance, service instance is nil`,
    ],
    [
      { serviceInstance: {} },
      `${S}.serviceInstance: Invalid value: {}: unable to convert service instance to MAPI`,
    ],
    [
      { image: undefined },
      `${S}.image: Invalid value: null: unable to convert image, image and imageref is nil`,
    ],
    [
      { image: {} },
      `${S}.image: Invalid value: {}: unable to convert image, image id, name and regex all are nil`,
    ],
    [{ network: {} }, `${S}.network: Invalid value: {}: unable to convert network to MAPI`],
    [{ network: undefined }, `${S}.network: Invalid value: {}: unable to convert network to MAPI`],
  ])("upstream's error: %j", (extra, error) => {
    expect(mapiErrors(extra)).toEqual([error]);
  });
  it.each([
    [
      { image: { id: "a", name: "b" } },
      `${S}.image: Invalid value: {"id":"a","name":"b"}: only one of id, name or regex may be set: Machine API names a PowerVS resource one way`,
    ],
    [
      { serviceInstanceID: "si-2" },
      `${S}.serviceInstanceID: Invalid value: "si-2": serviceInstanceID and serviceInstance name different workspaces: keep only serviceInstance`,
    ],
    [
      { network: { name: "n", crn: "c" } },
      `${S}.network.crn: Invalid value: "c": not supported by Machine API (rule powervs-unsupported-fields)`,
    ],
    [
      { processorType: "Turbo" },
      `${S}.processorType: Invalid value: "Turbo": processorType must be one of Dedicated, Shared, Capped or unset`,
    ],
    [{ memoryGiB: 1.5 }, `${S}.memoryGiB: Invalid value: 1.5: must be an integer`],
    [
      { ignition: { version: "2.3" } },
      `${S}.ignition: Invalid value: {"version":"2.3"}: not supported by Machine API (rule powervs-unsupported-fields)`,
    ],
  ])("error (upstream drops or damages it): %j", (extra, error) => {
    expect(mapiErrors(extra)).toEqual([error]);
  });
  it("a CAPI failureDomain → error (PowerVS has none; upstream drops it)", () => {
    expect(mapiErrors({}, { failureDomain: "dal10" })).toEqual([
      `spec.failureDomain: Invalid value: "dal10": PowerVS has no failure domains, so Machine API cannot carry one: remove it`,
    ]);
  });

  const UNSUPPORTED_SAMPLES: Readonly<Record<PowerVSUnsupportedField, Record<string, unknown>>> = {
    imageRef: { image: undefined, imageRef: { name: "rhcos-capi-powervs" } },
  };
  it.each(POWERVS_UNSUPPORTED_FIELDS)(
    "unsupported field %s → error at its path (upstream converts imageRef to a name)",
    (field) => {
      const errors = mapiErrors(UNSUPPORTED_SAMPLES[field]);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(
        new RegExp(`^${S}\\.${field.replace(".", "\\.")}: Invalid value: .*powervs-unsupported-fields`),
      );
    },
  );
  it("every table field on the CAPI side is known to the frame (no unknown-field error for the builder's spec)", () => {
    const known = new Set(POWERVS_FIELD_TABLE.flatMap((row) => row.capi));
    for (const key of Object.keys(ibmPowerVSMachineSpec({ providerID: PROVIDER_ID })))
      expect(known).toContain(key);
  });
  it("MachineSet + IBMPowerVSMachineTemplate → MAPI MachineSet", () => {
    const result = capiMachineSetToMapi(
      powervsCapiMachineSet("workers-abc"),
      ibmPowerVSMachineTemplate("workers-abc"),
      infra,
      { mapiNamespace: MAPI_NS, platforms: WITH_POWERVS },
    );
    if (!result.ok) throw fail(result.errors);
    const value = (
      result.value.machineSet.spec as { template: { spec: { providerSpec: { value: unknown } } } }
    ).template.spec.providerSpec.value;
    expect(value).toEqual(powervsProviderSpec());
  });
  it("MachineSet template errors name the template's paths", () => {
    const result = capiMachineSetToMapi(
      powervsCapiMachineSet("workers-abc"),
      ibmPowerVSMachineTemplate("workers-abc", ibmPowerVSMachineSpec({ network: {} })),
      infra,
      { mapiNamespace: MAPI_NS, platforms: WITH_POWERVS },
    );
    expect(result.ok ? [] : result.errors.map(formatFieldError)).toEqual([
      "IBMPowerVSMachineTemplate.spec.template.spec.network: Invalid value: {}: unable to convert network to MAPI",
    ]);
  });
});

describe("PowerVS status (SPEC §5.4)", () => {
  const now = "2026-12-01T10:00:00Z";
  it("MAPI providerStatus instanceId/instanceState ACTIVE → IBMPowerVSMachine instanceID, instanceState, ready", () => {
    const mapi = powervsMapiMachine(powervsProviderSpec(), {
      status: { phase: "Running", providerStatus: { instanceId: "7c1d", instanceState: "ACTIVE" } },
    });
    const result = mapiMachineStatusToCapi(mapi, infra, { now, platforms: WITH_POWERVS });
    expect(result.ok && result.value.infraMachineStatus).toEqual({
      instanceID: "7c1d",
      instanceState: "ACTIVE",
      ready: true,
    });
  });
  it("BUILD or no instance state → not ready", () => {
    for (const providerStatus of [{ instanceState: "BUILD" }, undefined]) {
      const mapi = powervsMapiMachine(
        powervsProviderSpec(),
        providerStatus === undefined ? {} : { status: { providerStatus } },
      );
      const result = mapiMachineStatusToCapi(mapi, infra, { now, platforms: WITH_POWERVS });
      expect(result.ok && result.value.infraMachineStatus).toMatchObject({ ready: false });
    }
  });
  it("IBMPowerVSMachine status → MAPI providerStatus (kind, instanceId, instanceState, serviceInstanceID); conditions kept", () => {
    const condition = { type: "MachineCreation", status: "True", lastTransitionTime: "2026-01-01T00:00:00Z" };
    const result = capiMachineStatusToMapi(
      powervsCapiMachine({ spec: { providerID: PROVIDER_ID }, status: { phase: "Running" } }),
      ibmPowerVSMachine(ibmPowerVSMachineSpec({ providerID: PROVIDER_ID }), {
        status: { instanceID: "7c1d", instanceState: "ACTIVE", ready: true },
      }),
      infra,
      {
        now,
        platforms: WITH_POWERVS,
        mapiMachine: powervsMapiMachine(powervsProviderSpec(), {
          status: { providerStatus: { conditions: [condition] } },
        }),
      },
    );
    expect(result.ok && result.value.status).toMatchObject({
      phase: "Running",
      providerStatus: {
        apiVersion: "machine.openshift.io/v1",
        kind: "PowerVSMachineProviderStatus",
        instanceId: "7c1d",
        instanceState: "ACTIVE",
        serviceInstanceID: SERVICE_INSTANCE_ID,
        conditions: [condition],
      },
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
  const capi = mapiMachineToCapi(powervsMapiMachine(value), infra, {
    capiNamespace: CAPI_NS,
    platforms: WITH_POWERVS,
  });
  if (!capi.ok) return { errors: capi.errors.map(formatFieldError) };
  const back = capiMachineToMapi(capi.value.machine, capi.value.infraMachine, infra, {
    mapiNamespace: MAPI_NS,
    platforms: WITH_POWERVS,
  });
  if (!back.ok) return { errors: back.errors.map(formatFieldError) };
  return { value: providerValueOf(back.value.machine), capi };
};

const token = fc.stringMatching(/^[a-z0-9][a-z0-9._^$*-]{0,15}$/);
const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const defined = (o: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
const resource = fc.oneof(
  token.map((id) => ({ type: "ID", id })),
  token.map((name) => ({ type: "Name", name })),
  token.map((regex) => ({ type: "RegEx", regex })),
);
const providerSpecArb = fc
  .record({
    serviceInstance: resource,
    image: resource,
    network: resource,
    keyPairName: opt(token),
    systemType: opt(fc.constantFrom("s922", "e880", "e980", "s1022", "")),
    processorType: opt(fc.constantFrom("Dedicated", "Shared", "Capped", "")),
    processors: opt(fc.oneof(fc.integer({ min: 1, max: 143 }), fc.constantFrom("0.25", "0.5", "1", "1.75"))),
    memoryGiB: opt(fc.integer({ min: 2, max: 15307 })),
    userDataSecret: opt(token.map((name) => ({ name }))),
  })
  .map((fields) =>
    defined({
      apiVersion: "machine.openshift.io/v1",
      kind: "PowerVSMachineProviderConfig",
      // CAPIBM's credentials are the installer's: the default is always written back (decision 88).
      credentialsSecret: { name: "powervs-credentials" },
      ...fields,
    }),
  );

describe("PowerVS round trips (SPEC §5: lossless for supported input)", () => {
  it("the installer's providerSpec survives MAPI → CAPI → MAPI", () => {
    expect(roundTrip(powervsProviderSpec()).value).toEqual(powervsProviderSpec());
  });
  it("property: MAPI → CAPI → MAPI equals the generated providerSpec", () => {
    fc.assert(
      fc.property(providerSpecArb, (value) => {
        const result = roundTrip(value);
        expect(result.errors).toBeUndefined();
        expect(result.value).toEqual(value);
      }),
      { numRuns: 300 },
    );
  });
  it("property: CAPI → MAPI → CAPI gives back the same IBMPowerVSMachine spec", () => {
    fc.assert(
      fc.property(providerSpecArb, (value) => {
        const first = roundTrip(value);
        if (first.capi === undefined || !first.capi.ok) throw new Error(String(first.errors));
        const again = mapiMachineToCapi(powervsMapiMachine(first.value as Record<string, unknown>), infra, {
          capiNamespace: CAPI_NS,
          platforms: WITH_POWERVS,
        });
        expect(again.ok && again.value.infraMachine.spec).toEqual(first.capi.value.infraMachine.spec);
      }),
      { numRuns: 200 },
    );
  });
});
