/**
 * AWS status mirroring (SPEC §5.4) and the instance labels MAO puts on AWS Machines: AWSMachine status
 * from the MAPI providerStatus, and the MAPI providerStatus (instanceId, instanceState, MachineCreation
 * condition) from the AWSMachine. The spec is converted by the field table (table.ts).
 */
import { MAPI_API_VERSION } from "../../kube/kinds.js";
import { getPath, isRecord, type KubeObject } from "../../kube/object.js";
import {
  keptConditions,
  keptTransitionTime,
  type Unstamped,
  unstamped,
} from "../../sync/conversion/stamp.js";
import { PROVIDER_STATUS_KIND } from "./data.js";

export const infraMachineStatusFromMapi = (mapiMachine: KubeObject): Record<string, unknown> => {
  const providerStatus = getPath(mapiMachine, ["status", "providerStatus"]);
  const value = getPath(mapiMachine, ["spec", "providerSpec", "value"]);
  const status: Record<string, unknown> = {};
  const state = isRecord(providerStatus) ? providerStatus.instanceState : undefined;
  if (typeof state === "string") status.instanceState = state;
  status.ready = state === "running";
  const spot = isRecord(value) && (isRecord(value.spotMarketOptions) || value.marketType === "Spot");
  status.interruptible = spot;
  const dedicated = isRecord(providerStatus) ? providerStatus.dedicatedHost : undefined;
  if (isRecord(dedicated) && typeof dedicated.id === "string") status.dedicatedHost = { id: dedicated.id };
  return status;
};

/** MAPI's MachineCreation condition from the InfraMachine: whether AWS ever gave us an instance. */
const machineCreationCondition = (infraMachine: KubeObject, capiMachine: KubeObject) => {
  const instanceID = getPath(infraMachine, ["spec", "instanceID"]);
  if (typeof instanceID === "string" && instanceID !== "")
    return {
      type: "MachineCreation",
      status: "True",
      reason: "MachineCreationSucceeded",
      message: "Machine successfully created",
    };
  const failure = getPath(capiMachine, ["status", "deprecated", "v1beta1", "failureMessage"]);
  if (typeof failure === "string" && failure !== "")
    return { type: "MachineCreation", status: "False", reason: "MachineCreationFailed", message: failure };
  return undefined;
};

export const providerStatusFromCapi = (
  infraMachine: KubeObject,
  capiMachine: KubeObject,
  existing: unknown,
): Unstamped<Record<string, unknown>> => {
  const status: Record<string, unknown> = { apiVersion: MAPI_API_VERSION, kind: PROVIDER_STATUS_KIND };
  const instanceID = getPath(infraMachine, ["spec", "instanceID"]);
  if (typeof instanceID === "string" && instanceID !== "") status.instanceId = instanceID;
  const state = getPath(infraMachine, ["status", "instanceState"]);
  if (typeof state === "string") status.instanceState = state;
  const dedicated = getPath(infraMachine, ["status", "dedicatedHost"]);
  if (isRecord(dedicated) && typeof dedicated.id === "string") status.dedicatedHost = { id: dedicated.id };
  const previous = keptConditions(existing);
  const creation = machineCreationCondition(infraMachine, capiMachine);
  const others = previous.filter((c) => c.type !== "MachineCreation");
  if (creation === undefined) {
    const kept = previous.find((c) => c.type === "MachineCreation");
    const conditions = kept === undefined ? others : [...others, kept];
    if (conditions.length > 0) status.conditions = conditions;
    return unstamped(status);
  }
  const lastTransitionTime = keptTransitionTime(
    previous.find((c) => c.type === "MachineCreation"),
    creation.status,
  );
  if (lastTransitionTime !== undefined) {
    status.conditions = [...others, { ...creation, lastTransitionTime }];
    return unstamped(status);
  }
  status.conditions = [...others, { ...creation }];
  return unstamped(status, [["conditions", others.length]]);
};
