/**
 * OpenStack facts more than one layer reads, as plain data with no conversion in it: the Infrastructure
 * platform name, the provider config kinds, CAPO's kinds (v1beta1, the version upstream's converter writes),
 * the values the converter writes although the source did not say them, and the OpenStackMachine fields the
 * MAPI providerSpec cannot represent (the future `openstack-unsupported-fields` admission rule). The field
 * table is table.ts; the nested shapes are shapes.ts.
 */
import { FINALIZERS, KINDS } from "../../kube/kinds.js";

/** Infrastructure `status.platformStatus.type` of this platform. */
export const OPENSTACK_PLATFORM = "OpenStack";

/** `providerSpec.value.apiVersion` / `kind` of an OpenStack Machine (MAPO's own API group version). */
export const PROVIDER_CONFIG_API_VERSION = "machine.openshift.io/v1alpha1";
export const PROVIDER_CONFIG_KIND = "OpenstackProviderSpec";

/**
 * CAPO's kinds (v1beta1, the version upstream's converter writes) and its InfraMachine finalizer, which the
 * handover waits on like the AWS one; both live in src/kube/kinds.ts with every other name.
 */
export const OPENSTACK_KINDS = Object.freeze({
  openStackMachine: KINDS.openStackMachine,
  openStackMachineTemplate: KINDS.openStackMachineTemplate,
  openStackCluster: KINDS.openStackCluster,
});
export const OPENSTACK_MACHINE_FINALIZER = FINALIZERS.openStackMachine;

/** Every value the converter writes although the source did not say it. */
export const OPENSTACK_PROVIDER_DEFAULTS = Object.freeze({
  /** `image.filter.name` when the providerSpec has no image: MAPO's `image` is a non-pointer string. */
  imageName: "",
  /** `flavor` when the providerSpec has none: MAPO's `flavor` is a non-pointer string. */
  flavor: "",
  /** Root volume availability zone source: MAPO names its zone, so `from: Name` both ways. */
  volumeAvailabilityZoneFrom: "Name",
  /** The port binding profile values MAPO understands, and what CAPO's booleans turn back into. */
  profile: Object.freeze({ capabilities: "switchdev", trusted: "true" }),
});

/** Nova instance state CAPO reports for a running server (`status.ready` follows it). */
export const ACTIVE_INSTANCE_STATE = "ACTIVE";

/**
 * OpenStackMachine spec fields (dotted, relative to the spec) the MAPI providerSpec has no place for.
 * CAPI → MAPI refuses each with the rule's name in the message.
 */
export const OPENSTACK_UNSUPPORTED_FIELDS = Object.freeze([
  "flavorID",
  "image.id",
  "image.imageRef",
  "floatingIPPoolRef",
  "schedulerHintAdditionalProperties",
  "identityRef.region",
] as const);

export type OpenStackUnsupportedField = (typeof OPENSTACK_UNSUPPORTED_FIELDS)[number];
