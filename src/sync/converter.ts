/**
 * The production converter handed to the sync planner: src/sync/conversion's public functions behind the
 * `SyncConverter` interface of snapshot.ts. Kept as its own small module so the planner depends only on the
 * interface (tests inject fakes that fail or warn on demand) and the composition root picks this one.
 */
import {
  capiMachineSetStatusToMapi,
  capiMachineSetToMapi,
  capiMachineStatusToMapi,
  capiMachineToMapi,
  mapiMachineSetStatusToCapi,
  mapiMachineSetToCapi,
  mapiMachineStatusToCapi,
  mapiMachineToCapi,
} from "./conversion/index.js";
import type { SyncConverter } from "./snapshot.js";

export const conversionConverter: SyncConverter = Object.freeze({
  mapiMachineToCapi,
  mapiMachineSetToCapi,
  capiMachineToMapi,
  capiMachineSetToMapi,
  mapiMachineStatusToCapi,
  capiMachineStatusToMapi,
  mapiMachineSetStatusToCapi,
  capiMachineSetStatusToMapi,
});
