/**
 * Every admission rule of SPEC §2.3 and §2.4, in the order the engine evaluates them. For each webhook
 * the first deny wins, so more specific and cache-independent rules come first: field validity (422), then
 * `unpause-twin` (decided from the request alone, before any rule that might answer "retry" on a stale
 * cache, and more telling than `product-annotations` about a removed marker), the product's annotations and
 * status, then the frozen rules, the migration rules and the create rules. Warn and DELETE rules live on
 * `validate-guard` (the guard webhook, SPEC §2.2), the mutation on `mutate`.
 */
import type { Rule } from "../verdict.js";
import { productAnnotations } from "./annotations.js";
import { capiCreatePaused, capiCreateTwinPaused, mapiCreateTwin } from "./create.js";
import {
  clusterDeleteGuard,
  deleteAuthoritativeViaMirror,
  deleteNonauthoritativeParent,
  orphanIgnoredByCapi,
} from "./delete.js";
import { authorityEnum, capiUnsupportedFields, platformUnsupportedFields } from "./fields.js";
import { capiFrozen, frozenWhileMigrating, mapiFrozen } from "./frozen.js";
import {
  migrationMachineBusy,
  migrationNotSynchronized,
  migrationTwinNotReady,
  migrationUnconvertible,
  migrationUnsupportedOwner,
} from "./migration.js";
import { pauseNewCapi, unpauseTwin } from "./pause.js";
import { statusOwnedByControllers } from "./status.js";

export const RULES: readonly Rule[] = Object.freeze([
  // validate (machine-api-migration-deny, failurePolicy Fail)
  authorityEnum,
  capiUnsupportedFields,
  ...platformUnsupportedFields, // aws-, openstack-, powervs-unsupported-fields: one per platform
  unpauseTwin,
  productAnnotations,
  statusOwnedByControllers,
  mapiFrozen,
  capiFrozen,
  frozenWhileMigrating,
  migrationUnsupportedOwner,
  migrationMachineBusy,
  migrationTwinNotReady,
  migrationUnconvertible,
  capiCreatePaused,
  capiCreateTwinPaused,
  mapiCreateTwin,
  // validate-guard (machine-api-migration-guard, failurePolicy Ignore): `orphan-ignored-by-capi` before
  // `delete-authoritative-via-mirror`, because confirming cannot make an orphaning delete keep the Machines.
  migrationNotSynchronized,
  deleteNonauthoritativeParent,
  orphanIgnoredByCapi,
  deleteAuthoritativeViaMirror,
  clusterDeleteGuard,
  // mutate (machine-api-migration-mutate, failurePolicy Ignore)
  pauseNewCapi,
]);

/** Every rule id, for metrics that pre-register their label values. */
export const RULE_IDS: readonly string[] = Object.freeze(RULES.map((r) => r.id));
