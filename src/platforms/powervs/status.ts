/**
 * PowerVS status mirroring (SPEC §5.4): the IBMPowerVSMachine status from the MAPI providerStatus, and the
 * MAPI providerStatus (instanceId, instanceState, serviceInstanceID, kept conditions) from the
 * IBMPowerVSMachine. The spec is converted by table.ts.
 */
import { getPath, isRecord, type KubeObject } from "../../kube/object.js";
import { keptConditions, type Unstamped, unstamped } from "../../sync/conversion/stamp.js";
import { ACTIVE_INSTANCE_STATE, PROVIDER_CONFIG_API_VERSION, PROVIDER_STATUS_KIND } from "./data.js";

const nonEmpty = (v: unknown): v is string => typeof v === "string" && v !== "";

export const infraMachineStatusFromMapi = (mapiMachine: KubeObject): Record<string, unknown> => {
  const providerStatus = getPath(mapiMachine, ["status", "providerStatus"]);
  const source = isRecord(providerStatus) ? providerStatus : {};
  const status: Record<string, unknown> = {};
  // CAPIBM keeps the instance ID in its status (AWS keeps it in the spec).
  if (nonEmpty(source.instanceId)) status.instanceID = source.instanceId;
  if (nonEmpty(source.instanceState)) status.instanceState = source.instanceState;
  status.ready = source.instanceState === ACTIVE_INSTANCE_STATE;
  return status;
};

/** `ibmpowervs://<region>/<zone>/<service instance ID>/<instance ID>`: the workspace the instance is in. */
const serviceInstanceOf = (providerID: unknown): string | undefined => {
  if (typeof providerID !== "string") return undefined;
  const match = /^ibmpowervs:\/\/[^/]*\/[^/]*\/([^/]+)\/[^/]+$/.exec(providerID);
  return match?.[1];
};

/** Conditions already there (the PowerVS machine controller's own) are kept as they are. */
export const providerStatusFromCapi = (
  infraMachine: KubeObject,
  capiMachine: KubeObject,
  existing: unknown,
): Unstamped<Record<string, unknown>> => {
  const status: Record<string, unknown> = {
    apiVersion: PROVIDER_CONFIG_API_VERSION,
    kind: PROVIDER_STATUS_KIND,
  };
  const instanceID = getPath(infraMachine, ["status", "instanceID"]);
  if (nonEmpty(instanceID)) status.instanceId = instanceID;
  const serviceInstanceID = serviceInstanceOf(
    getPath(infraMachine, ["spec", "providerID"]) ?? getPath(capiMachine, ["spec", "providerID"]),
  );
  if (serviceInstanceID !== undefined) status.serviceInstanceID = serviceInstanceID;
  const state = getPath(infraMachine, ["status", "instanceState"]);
  if (nonEmpty(state)) status.instanceState = state;
  const conditions = keptConditions(existing);
  if (conditions.length > 0) status.conditions = conditions;
  return unstamped(status);
};
