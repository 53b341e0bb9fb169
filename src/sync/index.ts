/**
 * The public face of the sync controllers' pure core (SPEC §4): what the controller shell and the
 * composition root import. The shell reads a snapshot (snapshot.ts readers over the informer cache, plus
 * the live storage flag when a plan asks for it), calls a planner with the converter and `now`, executes
 * the plan's writes in order, records its Events and honours its requeue. The converters themselves live
 * in ./conversion.
 */
export {
  conversionFailed,
  type Direction,
  formatFieldError,
  mapiStatusWrite,
  REASONS,
  refusedWriteCondition,
  type SynchronizedCondition,
  type SyncKind,
  storageBeingRemoved,
  synchronized,
  updateRefused,
} from "./condition.js";
export { conversionConverter, memoisingConverter } from "./converter.js";
export { CREATED_FOR_GENERATION, PAUSE_ANNOTATIONS } from "./desired.js";
export {
  ACKNOWLEDGER_KEYS,
  type Branch,
  type BranchKind,
  fork,
  forkMachine,
  forkMachineSet,
} from "./fork.js";
export {
  CAPI_UNTOUCHED_CONDITIONS,
  planMachineSetSync,
  planMachineSync,
  type Requeue,
  type SyncPlan,
} from "./plan.js";
export {
  type ConversionResult,
  defaultInfraTypeResolver,
  type InfraTypeResolver,
  type MachineSetSnapshot,
  type MachineSnapshot,
  machineKeysFor,
  machineSetKeysFor,
  readMachineSetSnapshot,
  readMachineSnapshot,
  type SnapshotReadOptions,
  type SyncConverter,
  type SyncDeps,
  type SyncSettings,
  storageToCheck,
} from "./snapshot.js";
export {
  type ObjectRef,
  SYNC_FIELD_MANAGER,
  type SyncEvent,
  type SyncWrite,
  type SyncWriteKind,
} from "./writes.js";
