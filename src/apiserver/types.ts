/**
 * The seam between the API server core and its two collaborators: CRD schema compilation
 * (src/apiserver/schema) and admission dispatch (src/apiserver/admission). The contract types are
 * re-exported from here (never redeclared) so the rest of src/apiserver depends on this one file, plus the internal types
 * shared by storage, the write path and the HTTP layer.
 */
import type { KubeObject } from "../kube/object.js";

export type { CompiledCrd, StatusCause } from "./schema/index.js";

import type { CompiledCrd } from "./schema/index.js";

export type { AdmissionAttributes, AdmissionDispatcher, AdmissionOutcome } from "./admission/types.js";

/** An authenticated caller as admission sees it. */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
}

export type { PrinterColumn, ScaleSubresource } from "./schema/index.js";

import type { PrinterColumn, ScaleSubresource } from "./schema/index.js";

/** One served resource type (a built-in or a CRD), independent of the version it is read through. */
export interface ResourceInfo {
  readonly group: string;
  /** Served versions, preferred (storage) first. */
  readonly versions: readonly string[];
  readonly storageVersion: string;
  readonly plural: string;
  readonly singular: string;
  readonly kind: string;
  readonly listKind: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly statusSubresource: boolean;
  readonly scale?: ScaleSubresource;
  /** Built-ins accept strategic merge patch; CRD kinds answer 415. */
  readonly builtIn: boolean;
  /** A built-in whose kube strategy keeps metadata.generation (custom resources always do). */
  readonly generation?: boolean;
  /** A review kind (SelfSubjectAccessReview, TokenReview, …): POST is answered, nothing is stored. */
  readonly createOnly?: boolean;
  readonly crd?: CompiledCrd;
  readonly printerColumns: readonly PrinterColumn[];
}

/** `group/plural`: where objects of a type are stored, whatever version they are read through. */
export const resourceKey = (r: { group: string; plural: string }): string => `${r.group}/${r.plural}`;

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED";

/** A change as storage records it: the new state (last state for DELETED) and the state before it. */
export interface StoreEvent {
  readonly type: WatchEventType;
  readonly rv: number;
  readonly key: string;
  readonly object: KubeObject;
  readonly oldObject: KubeObject | undefined;
  /** JSON of `object`, made at most once whatever the number of watchers. */
  json?: string;
}
