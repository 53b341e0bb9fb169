/**
 * Admission webhook dispatch for the local API server (SPEC §8): from the stored
 * Mutating/ValidatingWebhookConfigurations, pick the webhooks a request reaches (rules, selectors,
 * matchConditions), call them over HTTPS as kube-apiserver does — mutating ones in order, each JSON Patch
 * applied before the next; validating ones in parallel — and fold their answers into one outcome with kube's
 * messages. `clientConfig.service` is reached only through the optional `resolveService` option (there is
 * no cluster DNS here); without it such a webhook fails per its failurePolicy.
 */
import { randomUUID } from "node:crypto";
import jsonpatch from "fast-json-patch";
import type { Logger } from "pino";
import { cloneJson } from "../../json-text.js";
import { canonicalJson, type KubeObject } from "../../kube/object.js";
import { appendAll } from "../../lists.js";
import { celFailed, celGoErrorText } from "../schema/cel.js";
import { type CallResult, callWebhook, type ServiceResolver, type WebhookResponse } from "./call.js";
import { type CelConverter, conditionVariables, memoisedConverter } from "./conditions.js";
import {
  type CompiledConfiguration,
  type CompiledWebhook,
  compileConfiguration,
  configurationKey,
  destroyConfiguration,
} from "./configuration.js";
import {
  admissionRequest,
  namespaceSelectorMatches,
  objectSelectorMatches,
  ruleMatches,
} from "./matching.js";
import type { AdmissionAttributes, AdmissionDispatcher, AdmissionOutcome } from "./types.js";

export type { ServiceResolver } from "./call.js";
export type { AdmissionAttributes, AdmissionDispatcher, AdmissionOutcome } from "./types.js";

type Denial = Extract<AdmissionOutcome, { allowed: false }>;
type Status = Denial["status"];

export interface AdmissionDispatcherOptions {
  configurations: () => { mutating: readonly KubeObject[]; validating: readonly KubeObject[] };
  logger?: Logger;
  /** Maps `clientConfig.service` to an address; the certificate is still verified for `<name>.<namespace>.svc`. */
  resolveService?: ServiceResolver;
  /** Request uid source (tests pin it); defaults to crypto.randomUUID. */
  newUid?: () => string;
}

/** kube's `ToStatusErr`: never a code below 400 on a rejection, and the webhook named in the message. */
function denialStatus(webhookName: string, status: WebhookResponse["status"]): Status {
  const deniedBy = `admission webhook ${JSON.stringify(webhookName)} denied the request`;
  const code = status?.code !== undefined && status.code >= 400 ? status.code : 400;
  const message = status?.message
    ? `${deniedBy}: ${status.message}`
    : status?.reason
      ? `${deniedBy}: ${status.reason}`
      : `${deniedBy} without explanation`;
  return { code, reason: status?.reason ?? "", message };
}

type Invocation =
  | { kind: "skip" }
  | { kind: "dryRunUnsupported" }
  | { kind: "fail"; error: string }
  | { kind: "forbidden"; errors: string[] }
  | { kind: "answer"; response: WebhookResponse };

const dryRunDenial = (w: CompiledWebhook, warnings: string[]): Denial => ({
  allowed: false,
  status: {
    code: 400,
    reason: "BadRequest",
    message: `admission webhook ${JSON.stringify(w.name)} does not support dry run`,
  },
  warnings,
});

/** kube wraps a webhook call failure under failurePolicy Fail in an InternalError. */
const callFailure = (webhookName: string, error: string): Status => {
  const cause = `failed calling webhook ${JSON.stringify(webhookName)}: ${error}`;
  return {
    code: 500,
    reason: "InternalError",
    message: `Internal error occurred: ${cause}`,
    details: { causes: [{ reason: "", message: cause, field: "" }] },
  };
};

/**
 * kube's answer when a webhook's matchConditions cannot be evaluated under failurePolicy Fail: Forbidden
 * for the request's resource (the webhook is not called), naming every condition that failed.
 */
const matchFailure = (a: AdmissionAttributes, errors: string[]): Status => {
  const { group, resource } = a.resource;
  const qualified = group ? `${resource}.${group}` : resource;
  const why = errors.length === 1 ? errors[0]! : `[${errors.join(", ")}]`;
  return {
    code: 403,
    reason: "Forbidden",
    message: a.name
      ? `${qualified} ${JSON.stringify(a.name)} is forbidden: ${why}`
      : `${qualified} is forbidden: ${why}`,
    details: { ...(a.name ? { name: a.name } : {}), ...(group ? { group } : {}), kind: resource },
  };
};

/** Sort order of kube: configurations by name, webhooks in their listed order. */
const ordered = (configs: readonly CompiledConfiguration[], names: Map<string, string>): CompiledWebhook[] =>
  [...configs]
    .sort((a, b) => (names.get(a.key) ?? "").localeCompare(names.get(b.key) ?? ""))
    .flatMap((c) => c.webhooks);

export function createAdmissionDispatcher(opts: AdmissionDispatcherOptions): AdmissionDispatcher {
  // Compiled configurations live as long as their uid+resourceVersion is still stored.
  const cache = new Map<string, CompiledConfiguration>();
  const newUid = opts.newUid ?? randomUUID;
  const log = opts.logger;

  /**
   * The webhooks ordered for the last set of configurations, by what they were computed from (each
   * configuration's compile key and name): most requests see the same set and skip the sort.
   */
  let last: { signature: string; hooks: Map<string, CompiledWebhook[]> } | undefined;

  const current = (which: "mutating" | "validating"): CompiledWebhook[] => {
    const all = opts.configurations();
    const signature = signatureOf(all);
    if (last?.signature !== signature) last = { signature, hooks: new Map() };
    let hooks = last.hooks.get(which);
    if (!hooks) {
      hooks = compiledHooks(all, which);
      last.hooks.set(which, hooks);
    }
    return hooks;
  };

  const compiledHooks = (
    all: ReturnType<AdmissionDispatcherOptions["configurations"]>,
    which: "mutating" | "validating",
  ): CompiledWebhook[] => {
    const live = new Set<string>();
    const names = new Map<string, string>();
    const compiled: CompiledConfiguration[] = [];
    for (const kind of ["mutating", "validating"] as const) {
      for (const c of all[kind]) {
        const key = `${kind}:${configurationKey(c)}`;
        live.add(key);
        let entry = cache.get(key);
        if (!entry) {
          entry = { ...compileConfiguration(c), key };
          cache.set(key, entry);
        }
        names.set(key, c.metadata?.name ?? "");
        if (kind === which) compiled.push(entry);
      }
    }
    for (const [key, entry] of cache) {
      if (!live.has(key)) {
        destroyConfiguration(entry);
        cache.delete(key);
      }
    }
    return ordered(compiled, names);
  };

  /**
   * Rules and selectors, then matchConditions; `error` is a condition that could not be evaluated. `convert`
   * is the dispatch's memoised JSON → CEL conversion, shared by all its webhooks.
   */
  const reaches = (
    w: CompiledWebhook,
    a: AdmissionAttributes,
    convert: CelConverter,
  ): { match: boolean; errors?: string[] } => {
    if (!w.rules.some((r) => ruleMatches(r, a))) return { match: false };
    if (!namespaceSelectorMatches(w.namespaceSelector, a)) return { match: false };
    if (!objectSelectorMatches(w.objectSelector, a)) return { match: false };
    if (w.matchConditions.length === 0) return { match: true };
    const vars = conditionVariables(a, convert);
    const errors: string[] = [];
    for (const mc of w.matchConditions) {
      if (mc.error || !mc.program) {
        errors.push(`compilation failed for matchCondition ${JSON.stringify(mc.name)}: ${mc.error}`);
        continue;
      }
      const result = mc.program(vars);
      if (celFailed(result))
        errors.push(`expression '${mc.expression}' resulted in error: ${celGoErrorText(result.message)}`);
      else if (result !== true) return { match: false }; // any false wins over errors, as in kube
    }
    return errors.length > 0 ? { match: true, errors } : { match: true };
  };

  const review = (a: AdmissionAttributes, uid: string) => ({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: admissionRequest(a, uid),
  });

  /** One webhook: matching, dry-run guard, call. */
  const invoke = async (
    w: CompiledWebhook,
    a: AdmissionAttributes,
    convert: CelConverter,
  ): Promise<Invocation> => {
    const m = reaches(w, a, convert);
    if (!m.match) return { kind: "skip" };
    if (m.errors)
      return w.failurePolicy === "Ignore" ? { kind: "skip" } : { kind: "forbidden", errors: m.errors };
    // kube refuses (whatever the failurePolicy) to dry-run a request through a webhook with side effects.
    if (a.dryRun && w.sideEffects !== "None" && w.sideEffects !== "NoneOnDryRun")
      return { kind: "dryRunUnsupported" };
    const uid = newUid();
    const started = process.hrtime.bigint();
    const result: CallResult = await callWebhook(w, review(a, uid), uid, opts.resolveService);
    log?.debug(
      {
        webhook: w.name,
        configuration: w.configurationName,
        operation: a.operation,
        resource: a.resource.resource,
        subResource: a.subResource,
        name: a.name,
        namespace: a.namespace,
        ok: result.ok,
        micros: Number((process.hrtime.bigint() - started) / 1000n),
      },
      "admission webhook called",
    );
    return result.ok ? { kind: "answer", response: result.response } : { kind: "fail", error: result.error };
  };

  const failureOutcome = (w: CompiledWebhook, error: string, warnings: string[]): Denial | undefined => {
    if (w.failurePolicy === "Ignore") {
      log?.warn({ webhook: w.name, error }, "admission webhook failed; ignored by failurePolicy");
      return undefined;
    }
    return { allowed: false, status: callFailure(w.name, error), warnings };
  };

  return {
    async mutate(a) {
      const warnings: string[] = [];
      if (isWebhookConfigurationResource(a)) return { allowed: true, object: a.object, warnings };
      let object = a.object;
      let changes = 0;
      /** For IfNeeded webhooks: the change count right after their call (their own patch included). */
      const calledAt = new Map<CompiledWebhook, number>();
      const convert = memoisedConverter();
      const run = async (w: CompiledWebhook): Promise<Denial | undefined> => {
        const r = await invoke(w, { ...a, object }, convert);
        if (r.kind === "skip") return undefined;
        if (r.kind === "dryRunUnsupported") return dryRunDenial(w, warnings);
        if (r.kind === "forbidden") return { allowed: false, status: matchFailure(a, r.errors), warnings };
        if (r.kind === "fail") return failureOutcome(w, r.error, warnings);
        appendAll(warnings, r.response.warnings);
        if (!r.response.allowed)
          return { allowed: false, status: denialStatus(w.name, r.response.status), warnings };
        if (r.response.patch !== undefined && object !== null) {
          const patched = applyPatch(object, r.response);
          if ("error" in patched) return failureOutcome(w, patched.error, warnings);
          if (canonicalJson(patched.object) !== canonicalJson(object)) changes += 1;
          object = patched.object;
        }
        calledAt.set(w, changes);
        return undefined;
      };
      const hooks = current("mutating");
      for (const w of hooks) {
        const denial = await run(w);
        if (denial) return denial;
      }
      // kube's reinvocation: IfNeeded webhooks run once more if someone changed the object after them.
      for (const w of hooks) {
        const at = calledAt.get(w);
        if (w.reinvocationPolicy !== "IfNeeded" || at === undefined || at === changes) continue;
        const denial = await run(w);
        if (denial) return denial;
      }
      return { allowed: true, object, warnings };
    },

    async validate(a) {
      if (isWebhookConfigurationResource(a)) return { allowed: true, object: a.object, warnings: [] };
      const hooks = current("validating");
      const convert = memoisedConverter();
      const results = await Promise.all(hooks.map((w) => invoke(w, a, convert)));
      const warnings = results.flatMap((r) => (r.kind === "answer" ? r.response.warnings : []));
      // kube decides whether to call each webhook before it calls any: a matchCondition error comes first.
      const unmatchable = results.find((r) => r.kind === "forbidden");
      if (unmatchable) return { allowed: false, status: matchFailure(a, unmatchable.errors), warnings };
      for (const [i, r] of results.entries()) {
        const w = hooks[i]!;
        if (r.kind === "dryRunUnsupported") return dryRunDenial(w, warnings);
        if (r.kind === "fail") {
          const denial = failureOutcome(w, r.error, warnings);
          if (denial) return denial;
        } else if (r.kind === "answer") {
          if (r.response.patch !== undefined)
            return {
              allowed: false,
              status: callFailure(w.name, "validating webhook may not return a patch"),
              warnings,
            };
          if (!r.response.allowed)
            return { allowed: false, status: denialStatus(w.name, r.response.status), warnings };
        }
      }
      return { allowed: true, object: a.object, warnings };
    },

    close() {
      for (const entry of cache.values()) destroyConfiguration(entry);
      cache.clear();
      last = undefined;
    },
  };
}

/** Everything the ordered webhooks depend on: per configuration its kind, compile key and name. */
const signatureOf = (all: { mutating: readonly KubeObject[]; validating: readonly KubeObject[] }): string => {
  let out = "";
  for (const c of all.mutating) out += `m\u0000${configurationKey(c)}\u0000${c.metadata?.name ?? ""}\u0001`;
  for (const c of all.validating) out += `v\u0000${configurationKey(c)}\u0000${c.metadata?.name ?? ""}\u0001`;
  return out;
};

/** kube never sends webhook configurations (or admission policies) to webhooks, so a bad webhook cannot lock itself in. */
const isWebhookConfigurationResource = (a: AdmissionAttributes): boolean =>
  a.resource.group === "admissionregistration.k8s.io" &&
  [
    "mutatingwebhookconfigurations",
    "validatingwebhookconfigurations",
    "validatingadmissionpolicies",
    "validatingadmissionpolicybindings",
    "mutatingadmissionpolicies",
    "mutatingadmissionpolicybindings",
  ].includes(a.resource.resource);

function applyPatch(
  object: KubeObject,
  response: WebhookResponse,
): { object: KubeObject } | { error: string } {
  if (response.patchType === undefined)
    return { error: "webhook returned response.patch but not response.patchType" };
  if (response.patchType !== "JSONPatch")
    return { error: `webhook returned invalid response.patchType of ${JSON.stringify(response.patchType)}` };
  try {
    const ops = JSON.parse(Buffer.from(response.patch ?? "", "base64").toString("utf8"));
    if (!Array.isArray(ops)) return { error: "patch is not a JSON array" };
    const result = jsonpatch.applyPatch(cloneJson(object), ops, true, false).newDocument;
    return { object: result as KubeObject };
  } catch (e) {
    return { error: `JSON patch failed: ${(e as Error).message}` };
  }
}
