/**
 * The authority fields of SPEC §1, read the one way every controller, the admission rules and the simulated
 * providers read them. "Unset" means the same everywhere — the field is missing, `null` or `""` — and each
 * accessor names what it makes of it: `specAuthority` applies the CRD default (MachineAPI), `statusAuthority`
 * answers undefined while the status is unset. Pure; imports nothing but src/kube. The pause half of the
 * protocol is in ./pause.ts, the `Synchronized` reasons in ./synchronized.ts.
 */
import type { StableAuthority, StatusAuthority } from "../kube/kinds.js";
import { AUTHORITY } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import { getPath } from "../kube/object.js";

const STABLE_VALUES: readonly unknown[] = [AUTHORITY.machineAPI, AUTHORITY.clusterAPI];
const STATUS_VALUES: readonly unknown[] = [...STABLE_VALUES, AUTHORITY.migrating];

/** Missing, `null` or `""`: the API server prunes a null, and the CRD enum refuses `""` on a write. */
const isUnset = (v: unknown): v is undefined | null | "" => v === undefined || v === null || v === "";

export const isStableAuthority = (v: unknown): v is StableAuthority => STABLE_VALUES.includes(v);
const isStatusAuthority = (v: unknown): v is StatusAuthority => STATUS_VALUES.includes(v);

export const opposite = (a: StableAuthority): StableAuthority =>
  a === AUTHORITY.machineAPI ? AUTHORITY.clusterAPI : AUTHORITY.machineAPI;

/**
 * `spec.authoritativeAPI` with the CRD default applied: unset reads MachineAPI; a value outside the enum
 * reads undefined (admission rule `authority-enum` refuses it).
 */
export const specAuthority = (o: KubeObject | undefined): StableAuthority | undefined => {
  const v = getPath(o, ["spec", "authoritativeAPI"]);
  if (isUnset(v)) return AUTHORITY.machineAPI;
  return isStableAuthority(v) ? v : undefined;
};

/**
 * `spec.authoritativeAPI` as the user wrote it, the CRD default applied to an unset value: admission compares
 * and quotes what a request says, valid or not (`authority-enum` judges validity).
 */
export const specAuthorityAsWritten = (o: KubeObject | undefined): unknown => {
  const v = getPath(o, ["spec", "authoritativeAPI"]);
  return isUnset(v) ? AUTHORITY.machineAPI : v;
};

/**
 * `status.authoritativeAPI`; undefined while unset — machine-api-operator has not copied spec yet, so no
 * controller acts — and for a value outside the enum (the CRD refuses it).
 */
export const statusAuthority = (o: KubeObject | undefined): StatusAuthority | undefined => {
  const v = getPath(o, ["status", "authoritativeAPI"]);
  return isStatusAuthority(v) ? v : undefined;
};

export type StatusAuthorityReading = StatusAuthority | "absent" | "invalid";

/** `status.authoritativeAPI` for readers that tell an unset status ("absent") from a bad one ("invalid"). */
export const statusAuthorityReading = (o: KubeObject | undefined): StatusAuthorityReading => {
  const v = getPath(o, ["status", "authoritativeAPI"]);
  if (isUnset(v)) return "absent";
  return isStatusAuthority(v) ? v : "invalid";
};

/** `status.synchronizedAPI`: the stable authority a handover started from; undefined while unset or invalid. */
export const synchronizedAPI = (o: KubeObject | undefined): StableAuthority | undefined => {
  const v = getPath(o, ["status", "synchronizedAPI"]);
  return isStableAuthority(v) ? v : undefined;
};

/** `status.synchronizedGeneration`; 0 while unset. */
export const synchronizedGeneration = (o: KubeObject | undefined): number => {
  const v = getPath(o, ["status", "synchronizedGeneration"]);
  return typeof v === "number" ? v : 0;
};
