/**
 * OpenStack status mirroring (SPEC §5.4) and the instance labels MAO puts on OpenStack Machines: the
 * OpenStackMachine status from the MAPI providerStatus, and the MAPI providerStatus (instanceId,
 * instanceState, kept conditions) from the OpenStackMachine. The spec is converted by table.ts.
 */
import { getPath, isRecord, type KubeObject } from "../../kube/object.js";
import { keptConditions, type Unstamped, unstamped } from "../../sync/conversion/stamp.js";
import { ACTIVE_INSTANCE_STATE } from "./data.js";

export const infraMachineStatusFromMapi = (mapiMachine: KubeObject): Record<string, unknown> => {
  const providerStatus = getPath(mapiMachine, ["status", "providerStatus"]);
  const state = isRecord(providerStatus) ? providerStatus.instanceState : undefined;
  const status: Record<string, unknown> = {};
  if (typeof state === "string" && state !== "") status.instanceState = state;
  status.ready = state === ACTIVE_INSTANCE_STATE;
  return status;
};

/**
 * MAPO's providerStatus has no fixed kind we could verify, so none is written; conditions already there
 * (MAPO's own) are kept as they are.
 */
export const providerStatusFromCapi = (
  infraMachine: KubeObject,
  _capiMachine: KubeObject,
  existing: unknown,
): Unstamped<Record<string, unknown>> => {
  const status: Record<string, unknown> = {};
  const instanceID = getPath(infraMachine, ["spec", "instanceID"]);
  if (typeof instanceID === "string" && instanceID !== "") status.instanceId = instanceID;
  const state = getPath(infraMachine, ["status", "instanceState"]);
  if (typeof state === "string" && state !== "") status.instanceState = state;
  const conditions = keptConditions(existing);
  if (conditions.length > 0) status.conditions = conditions;
  return unstamped(status);
};
