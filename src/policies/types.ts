/**
 * The contract between the admission server (src/server) and the policy engine (src/policies): the
 * admission request as the engine sees it, the read-only cluster view it decides from, and the decision
 * it returns. No I/O is reachable through anything in this file.
 */

import type { Operation } from "fast-json-patch";
import type { FieldError } from "../kube/field-error.js";
import type { KubeObject } from "../kube/object.js";
import type { ObjectStore } from "../kube/store.js";

/** The three webhook configurations of SPEC §2.2, by the path that serves them. */
export type WebhookName = "validate" | "validate-guard" | "mutate";

export interface UserInfo {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}
export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

/** `request` of an admission.k8s.io/v1 AdmissionReview, after the server's codec validated it. */
export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  requestKind?: GroupVersionKind;
  requestResource?: GroupVersionResource;
  requestSubResource?: string;
  name?: string;
  namespace?: string;
  operation: "CREATE" | "UPDATE" | "DELETE" | "CONNECT";
  userInfo: UserInfo;
  object: KubeObject | null;
  oldObject: KubeObject | null;
  dryRun?: boolean;
  options?: Record<string, unknown> | null;
  /**
   * Set by the server, never read from the body: the review's objects held more JSON values than a decision
   * may build, so `object`/`oldObject` are emptied and the engine refuses it (decision 89).
   */
  oversize?: Oversize;
}

/** How many JSON values each too-large side of a review held, and the bound (src/server/review-census.ts). */
export interface Oversize {
  readonly objectValues?: number;
  readonly oldObjectValues?: number;
  readonly limit: number;
}

// The read side of a cache is src/kube's (the runtime layer); re-exported for the many readers that import
// it from here with the rest of the policy contract.
export type { Freshness, ObjectStore } from "../kube/store.js";

/** What admission rules and the handover planner read: the store plus twin resolution (SPEC §0, §2.3). */
export interface ClusterView extends ObjectStore {
  /**
   * The object of the other API that mirrors `object`: same name, other namespace; for an infrastructure
   * object the MAPI object that binds it most of all those it may mirror (view.ts `mapiTwinsOf`, SPEC §2.3).
   */
  twinOf(object: KubeObject): KubeObject | undefined;
}

/**
 * Whether a MAPI Machine/MachineSet converts to the other API right now (rule `migration-unconvertible`).
 * Returns every blocking field error; empty when it converts. Backed by src/sync/conversion.
 */
export type ConvertibilityCheck = (
  mapiObject: KubeObject,
  target: "ClusterAPI" | "MachineAPI",
  view: ClusterView,
) => FieldError[];

export interface PolicySettings {
  mapiNamespace: string;
  capiNamespace: string;
  controllerUsers: readonly string[];
  requireDeleteConfirmation: boolean;
  cacheStaleAfterMs: number;
}

export interface PolicyContext {
  view: ClusterView;
  settings: PolicySettings;
  checkConvertible: ConvertibilityCheck;
  /** False when the cluster lacks the migration API (SPEC §0.1): every rule allows. */
  enforcing: boolean;
}

export interface DenyStatus {
  code: 403 | 422;
  reason: "Forbidden" | "Invalid";
  message: string;
}

/** What the engine answers for one request on one webhook. */
export interface Decision {
  allowed: boolean;
  /** Id of the rule that denied, warned or mutated; "none" when no rule had anything to say. */
  rule: string;
  status?: DenyStatus;
  warnings: string[];
  /** Mutating webhook only: RFC 6902 operations, produced by diffing. Absent when nothing changes. */
  patch?: Operation[];
}
