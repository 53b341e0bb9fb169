/**
 * The admission decision: runs the rules of one webhook (rules/index.ts) over a request and the cluster
 * view, and folds their verdicts into one Decision — the first deny wins, warnings accumulate, mutations
 * accumulate on one draft that is diffed once into a JSON Patch. Cross-cutting behaviour lives here and
 * nowhere else: not enforcing without the migration API (SPEC §0.1), the controller identities' exemption
 * (§2.2), other namespaces, stale caches ("retry", §2.1) and totality (a rule that throws denies on the
 * Fail webhook and is skipped on the Ignore ones). Pure: no I/O, no clock.
 */
import type { ResourceType } from "../kube/kinds.js";
import { isRecord, type KubeObject } from "../kube/object.js";
import { filedUnder } from "../kube/store.js";
import { cloneJson, jsonPatch } from "./draft.js";
import { RULES } from "./rules/index.js";
import { SLICE_SPENT } from "./slices.js";
import { requestNamespace, resourceOf, subjectOf } from "./subject.js";
import type {
  AdmissionRequest,
  Decision,
  ObjectStore,
  Oversize,
  PolicyContext,
  PolicySettings,
  WebhookName,
} from "./types.js";
import { type Deny, denyText, type Rule, type RuleContext, type Verdict } from "./verdict.js";
import { clusterView } from "./view.js";

/** Decision.rule values that are not rule ids. */
export const NON_RULE_DECISIONS = Object.freeze({
  none: "none",
  notEnforcing: "not-enforcing",
  controllerUser: "controller-user",
  otherNamespace: "other-namespace",
  engine: "engine",
  objectTooComplex: "object-too-complex",
});

const STALE_VIEW_MESSAGE = "cluster view is stale, retry in a few seconds";
export const MAX_WARNING_LENGTH = 120;

/** Thrown by the guarded store when a rule reads a kind whose cache is stale; the engine answers "retry". */
class StaleViewError extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** Why the view of one kind cannot be trusted, or undefined when it can (SPEC §2.1 `cacheStaleAfter`). */
function staleness(store: ObjectStore, type: ResourceType, settings: PolicySettings): string | undefined {
  let freshness: unknown;
  try {
    freshness = store.freshness(type);
  } catch {
    return `${kindName(type)}: freshness unknown`;
  }
  if (!isRecord(freshness) || freshness.synced !== true) return `${kindName(type)}: cache not synced`;
  const gone = Number(freshness.disconnectedForMs);
  if (!(gone <= settings.cacheStaleAfterMs))
    return `${kindName(type)}: no open watch for ${Number.isFinite(gone) ? Math.round(gone / 1000) : "?"}s`;
  return undefined;
}

/** The kind's name in a stale answer; built only for one (every rule's reads are checked per decision). */
const kindName = (type: ResourceType): string => resourceOf(type.plural, type.group || "core");

/**
 * The view rules see: every read first checks that its kind is fresh, so no rule can decide on old data.
 * Built per decision, so it holds no closures over helpers (methods only: cheap to create).
 */
function guardedStore(store: ObjectStore, settings: PolicySettings): ObjectStore {
  return {
    get(type, namespace, name) {
      ensureFresh(store, type, settings);
      return store.get(type, namespace, name);
    },
    list(type, namespace) {
      ensureFresh(store, type, settings);
      const all = store.list(type, namespace);
      return Array.isArray(all) ? all : [];
    },
    byIndex(type, namespace, index, value) {
      ensureFresh(store, type, settings);
      const filed = filedUnder(store, type, namespace, index, value);
      return Array.isArray(filed) ? filed : [];
    },
    freshness(type) {
      return store.freshness(type);
    },
  };
}

function ensureFresh(store: ObjectStore, type: ResourceType, settings: PolicySettings): void {
  const why = staleness(store, type, settings);
  if (why) throw new StaleViewError(why);
}

/** Control characters: C0, DEL and C1 (Go's unicode.IsControl, what kube-apiserver refuses in a warning). */
const CONTROLS = /\p{Cc}/gu;

/**
 * Warning text safe for a `Warning` header: one line, at most MAX_WARNING_LENGTH characters, and no control
 * character — C0, DEL or C1: kube-apiserver drops a warning holding any (its NewWarningHeader refuses
 * unicode.IsControl), and the person at kubectl would lose the explanation.
 */
export function boundedWarning(text: string): string {
  const line = String(text).replace(CONTROLS, " ").trim();
  if (line.length <= MAX_WARNING_LENGTH) return line;
  let cut = line.slice(0, MAX_WARNING_LENGTH - 3);
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1); // never split a surrogate pair
  return `${cut}...`;
}

const allowed = (rule: string, warnings: string[] = []): Decision => ({ allowed: true, rule, warnings });

const denied = (rule: string, d: Deny, warnings: string[]): Decision => ({
  allowed: false,
  rule,
  status: {
    code: d.code,
    reason: d.code === 422 ? "Invalid" : "Forbidden",
    message: `${denyText(d)} (rule ${rule})`,
  },
  warnings,
});

const internalError = (rule: string): Deny => ({
  kind: "deny",
  code: 403,
  message: `internal error evaluating rule ${rule}; retry`,
  fieldPaths: [],
  hint: "",
});

const staleDeny = (reason: string): Deny => ({
  kind: "deny",
  code: 403,
  message: `${STALE_VIEW_MESSAGE} (${reason}).`,
  fieldPaths: [],
  hint: "",
});

const count = (n: number): string => n.toLocaleString("en-US");

/**
 * Decision 89: a review whose objects hold more JSON values than a decision may build reaches the engine with
 * them emptied, and is refused here — after the exemptions, which read only the request — rather than
 * decided on what is left. Kubernetes refuses a write whose validation would cost too much the same way.
 */
function tooComplex(request: AdmissionRequest, oversize: Oversize): Deny {
  const { kind } = request.kind;
  const name = `${request.namespace ? `${request.namespace}/` : ""}${request.name || "(a new object)"}`;
  const sides: string[] = [];
  if (oversize.objectValues !== undefined) sides.push(`it holds ${count(oversize.objectValues)} JSON values`);
  if (oversize.oldObjectValues !== undefined)
    sides.push(`its stored version holds ${count(oversize.oldObjectValues)}`);
  return {
    kind: "deny",
    code: 422,
    message: `${kind} ${name} is too large to decide: ${sides.join(" and ")}, more than the ${count(oversize.limit)} machine-api-migration decides (managedFields aside; a ${kind} holds a few hundred).`,
    fieldPaths: [],
    hint:
      oversize.objectValues !== undefined
        ? "Remove the bulk from the object and retry."
        : "It was stored without this webhook's decision; a cluster admin must remove the bulk with admission bypassed.",
  };
}

const readsOf = (rule: Rule, request: AdmissionRequest): readonly ResourceType[] =>
  typeof rule.reads === "function" ? rule.reads(request) : rule.reads;

/**
 * The context rules are called with: `ctx` and the request's subject, classified once here instead of by each
 * of the ~20 rules that ask about it (preflight, which runs the migration rules itself, uses this too).
 */
export const ruleContext = (request: AdmissionRequest, ctx: PolicyContext): RuleContext => ({
  ...ctx,
  subject: subjectOf(request, ctx.settings),
});

/**
 * Decides one admission request on one webhook. Total: it never throws and always returns a well-formed
 * Decision — except, while it runs in slices (./slices.ts), the signal that the slice is spent, which the
 * driver catches; `rules` is a parameter only so tests can add a misbehaving rule.
 */
export function decide(
  webhook: WebhookName,
  request: AdmissionRequest,
  ctx: PolicyContext,
  rules: readonly Rule[] = RULES,
): Decision {
  try {
    return evaluate(webhook, request, ctx, rules);
  } catch (error) {
    if (error === SLICE_SPENT) throw error;
    return webhook === "validate"
      ? denied(NON_RULE_DECISIONS.engine, internalError(NON_RULE_DECISIONS.engine), [])
      : allowed(NON_RULE_DECISIONS.engine);
  }
}

function evaluate(
  webhook: WebhookName,
  request: AdmissionRequest,
  ctx: PolicyContext,
  rules: readonly Rule[],
): Decision {
  if (ctx.enforcing === false) return allowed(NON_RULE_DECISIONS.notEnforcing);
  if (!isRecord(request) || request.operation === "CONNECT") return allowed(NON_RULE_DECISIONS.none);
  const { settings } = ctx;
  const username = isRecord(request.userInfo) ? request.userInfo.username : undefined;
  if (
    typeof username === "string" &&
    Array.isArray(settings.controllerUsers) &&
    settings.controllerUsers.includes(username)
  )
    return allowed(NON_RULE_DECISIONS.controllerUser);
  const namespace = requestNamespace(request);
  if (namespace !== settings.mapiNamespace && namespace !== settings.capiNamespace)
    return allowed(NON_RULE_DECISIONS.otherNamespace);

  if (request.oversize !== undefined) {
    return denied(NON_RULE_DECISIONS.objectTooComplex, tooComplex(request, request.oversize), []);
  }

  const store = guardedStore(ctx.view, settings);
  const ruleCtx = ruleContext(request, { ...ctx, view: clusterView(store, settings) });
  const original = webhook === "mutate" && request.operation !== "DELETE" ? request.object : undefined;
  const warnings: string[] = [];
  let speaker: string | undefined;
  // Copied only when a rule mutates: most requests on the mutating webhook change nothing, and copying every
  // object that passes by would cost each of them a walk of the whole object.
  let draft: KubeObject | undefined;
  let mutated = false;

  for (const rule of rules) {
    if (rule.webhook !== webhook) continue;
    let verdict: Verdict;
    try {
      if (!rule.appliesTo(request, ruleCtx)) continue;
      for (const type of readsOf(rule, request)) {
        const why = staleness(ctx.view, type, settings);
        if (why) throw new StaleViewError(why);
      }
      verdict = rule.check(request, ruleCtx);
    } catch (error) {
      if (error === SLICE_SPENT) throw error;
      if (error instanceof StaleViewError) verdict = staleDeny(error.reason);
      else if (webhook === "validate") verdict = internalError(rule.id);
      else continue; // Ignore webhooks: a broken rule must not block anything it only advises on
    }
    switch (verdict.kind) {
      case "allow":
        break;
      case "deny":
        return denied(rule.id, verdict, warnings);
      case "warn": {
        const text = boundedWarning(verdict.text);
        if (text && !warnings.includes(text)) warnings.push(text);
        speaker ??= rule.id;
        break;
      }
      case "mutate": {
        if (!isRecord(original)) break;
        try {
          // A fresh copy per mutation: a rule that throws half-way leaves the draft as it was.
          const next = cloneJson(draft ?? original);
          verdict.apply(next);
          draft = next;
          mutated = true;
        } catch (error) {
          if (error === SLICE_SPENT) throw error;
          continue;
        }
        const text = verdict.warning === undefined ? "" : boundedWarning(verdict.warning);
        if (text && !warnings.includes(text)) warnings.push(text);
        speaker ??= rule.id;
        break;
      }
      default: {
        const impossible: never = verdict;
        return impossible;
      }
    }
  }

  const decision = allowed(speaker ?? NON_RULE_DECISIONS.none, warnings);
  if (mutated && draft && isRecord(original)) {
    const patch = jsonPatch(original, draft);
    if (patch.length > 0) decision.patch = patch;
  }
  return decision;
}
