/**
 * What a rule is and what it may answer. A rule is data plus two pure functions (STYLE pattern 2): the
 * engine (engine.ts) asks `appliesTo` first, checks the freshness of the kinds the rule declares in `reads`,
 * then calls `check`. A verdict allows, denies (with the field paths it refuses and the command to run
 * instead), warns, or — on the mutating webhook only — mutates a draft copy that the engine diffs into a
 * JSON Patch. Nothing here performs I/O.
 */
import type { ResourceType } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import type { Subject } from "./subject.js";
import type { AdmissionRequest, PolicyContext, WebhookName } from "./types.js";

export interface Allow {
  readonly kind: "allow";
}
export interface Deny {
  readonly kind: "deny";
  /** 403 when policy forbids the request, 422 when a field value is invalid (SPEC §2.1). */
  readonly code: 403 | 422;
  /** Object, changed field paths and why; written for an admin at a terminal. */
  readonly message: string;
  readonly fieldPaths: readonly string[];
  /** What to do instead, with the exact, fully-qualified command. */
  readonly hint: string;
}
export interface Warn {
  readonly kind: "warn";
  readonly text: string;
}
export interface Mutate {
  readonly kind: "mutate";
  /** Changes the draft in place; the engine owns the draft and diffs it against the request object. */
  readonly apply: (draft: KubeObject) => void;
  readonly warning?: string;
}
export type Verdict = Allow | Deny | Warn | Mutate;

const ALLOW: Allow = Object.freeze({ kind: "allow" });
export const allow = (): Verdict => ALLOW;
export const deny = (
  code: 403 | 422,
  message: string,
  fieldPaths: readonly string[],
  hint: string,
): Verdict => ({
  kind: "deny",
  code,
  message,
  fieldPaths,
  hint,
});
export const warn = (text: string): Verdict => ({ kind: "warn", text });
export const mutate = (apply: (draft: KubeObject) => void, warning?: string): Verdict =>
  warning === undefined ? { kind: "mutate", apply } : { kind: "mutate", apply, warning };

/** The text a denied user reads: the message, then what to do instead. */
export const denyText = (d: Deny): string => (d.hint ? `${d.message} ${d.hint}` : d.message);

/**
 * What a rule sees besides the request: the decision's context, and the request's subject as the engine
 * classified it once per decision (subject.ts `subjectOf`) — rules read it, never recompute it.
 */
export interface RuleContext extends PolicyContext {
  /** Undefined when the request is not about a machine kind in its API's namespace. */
  readonly subject: Subject | undefined;
}

export interface Rule {
  /** Stable id (SPEC §2.3/§2.4), used in messages, logs and metric labels. */
  readonly id: string;
  readonly webhook: WebhookName;
  /**
   * The kinds `check` reads from the cluster view. The engine refuses with "retry" when one of them is
   * stale rather than let the rule guess; a read of any other stale kind is refused the same way.
   */
  readonly reads: readonly ResourceType[] | ((request: AdmissionRequest) => readonly ResourceType[]);
  /** Cheap, request-only predicate: operation, kind, subresource. Never reads the view. */
  readonly appliesTo: (request: AdmissionRequest, ctx: RuleContext) => boolean;
  readonly check: (request: AdmissionRequest, ctx: RuleContext) => Verdict;
}
