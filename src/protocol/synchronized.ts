/**
 * The reasons of the `Synchronized` condition on a MAPI object that the handover protocol relies on (SPEC
 * §3.1 steps 4, 7 and 10, §3.3, §4.5): the migration planner writes some, the sync writes the others, and
 * each side waits for the other's. The sync's failure reasons and all messages stay with their writers
 * (src/sync/condition.ts, src/migration/planner.ts). Pure data; imports nothing.
 */
export const SYNCHRONIZED_REASONS = Object.freeze({
  /** Sync: the twins agree (SPEC §4.5). */
  resourceSynchronized: "ResourceSynchronized",
  /** Planner, step 4: `Synchronized=Unknown` until the final sync; its lastTransitionTime dates the start. */
  awaitingFinalSync: "AwaitingFinalSync",
  /** Sync, step 7 waits for it: the final sync from the old authority is done (SPEC §4.2). */
  finalSyncComplete: "FinalSyncComplete",
  /** Planner, step 10: the handover completed. */
  authoritativeAPIChanged: "AuthoritativeAPIChanged",
  /** Planner, SPEC §3.3. */
  migrationCancelled: "MigrationCancelled",
});
