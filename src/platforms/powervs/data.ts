/**
 * PowerVS facts more than one layer reads, as plain data with no conversion in it: the Infrastructure
 * platform name, the provider config and provider status kinds, CAPIBM's kinds (v1beta2, the version
 * upstream's converter writes) and InfraMachine finalizer, the values the converter writes although the
 * source did not say them, and the IBMPowerVSMachine fields the MAPI providerSpec cannot represent (the
 * `powervs-unsupported-fields` admission rule). The field table is table.ts.
 */
import { FINALIZERS, KINDS } from "../../kube/kinds.js";

/** Infrastructure `status.platformStatus.type` of this platform. */
export const POWERVS_PLATFORM = "PowerVS";

/** `providerSpec.value.apiVersion` / `kind` of a PowerVS Machine (MAPI's machine.openshift.io/v1). */
export const PROVIDER_CONFIG_API_VERSION = "machine.openshift.io/v1";
export const PROVIDER_CONFIG_KIND = "PowerVSMachineProviderConfig";
/** `status.providerStatus.kind` the PowerVS machine controller writes (same API version). */
export const PROVIDER_STATUS_KIND = "PowerVSMachineProviderStatus";

/** CAPIBM's kinds (v1beta2, the version upstream's converter writes) and its InfraMachine finalizer. */
export const POWERVS_KINDS = Object.freeze({
  ibmPowerVSMachine: KINDS.ibmPowerVSMachine,
  ibmPowerVSMachineTemplate: KINDS.ibmPowerVSMachineTemplate,
  ibmPowerVSCluster: KINDS.ibmPowerVSCluster,
});

/** CAPIBM's finalizer on an IBMPowerVSMachine; the handover waits on it like the AWS one. */
export const POWERVS_MACHINE_FINALIZER = FINALIZERS.ibmPowerVSMachine;

/** Every value the converter writes although the source did not say it. */
export const POWERVS_PROVIDER_DEFAULTS = Object.freeze({
  /** The credentials secret the installer names; CAPIBM has its own credentials, so it is written back. */
  credentialsSecretName: "powervs-credentials",
});

/** MAPI `PowerVSResource.type` values and the field each one reads (the CAPIBM reference key is the same). */
export const POWERVS_RESOURCE_TYPES = Object.freeze({ ID: "id", Name: "name", RegEx: "regex" } as const);

export const POWERVS_PROCESSOR_TYPES: readonly string[] = Object.freeze(["Dedicated", "Shared", "Capped"]);

/** PowerVS instance state CAPIBM reports for a running instance (`status.ready` follows it). */
export const ACTIVE_INSTANCE_STATE = "ACTIVE";

/**
 * IBMPowerVSMachine spec fields (dotted, relative to the spec) the MAPI providerSpec has no place for.
 * CAPI → MAPI refuses each with the rule's name in the message.
 */
export const POWERVS_UNSUPPORTED_FIELDS = Object.freeze(["imageRef"] as const);

export type PowerVSUnsupportedField = (typeof POWERVS_UNSUPPORTED_FIELDS)[number];
