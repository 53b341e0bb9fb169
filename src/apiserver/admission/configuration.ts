/**
 * Turns stored Mutating/ValidatingWebhookConfiguration objects (admissionregistration.k8s.io/v1) into
 * ready-to-call webhooks: defaults applied as the API server would have, matchConditions compiled to CEL
 * once, and one keep-alive HTTPS agent per webhook that trusts exactly its caBundle. Compiled
 * configurations are cached by the dispatcher under uid + resourceVersion, so an edit recompiles.
 */
import { Agent } from "node:https";
import { createSecureContext } from "node:tls";
import type { KubeObject } from "../../kube/object.js";
import { isRecord } from "../../kube/object.js";
import { type CelProgram, compileExpression } from "../schema/cel.js";
import { type LabelSelector, parseRules, type RuleWithOperations } from "./matching.js";

export interface ServiceReference {
  namespace: string;
  name: string;
  path?: string;
  port: number;
}

export interface CompiledWebhook {
  readonly configurationName: string;
  readonly name: string;
  readonly rules: readonly RuleWithOperations[];
  readonly namespaceSelector: LabelSelector | undefined;
  readonly objectSelector: LabelSelector | undefined;
  /** Compiled conditions; an entry with `error` failed to compile and is handled by failurePolicy when reached. */
  readonly matchConditions: ReadonlyArray<{
    name: string;
    expression: string;
    program?: CelProgram;
    error?: string;
  }>;
  readonly failurePolicy: "Fail" | "Ignore";
  readonly timeoutSeconds: number;
  readonly sideEffects: string;
  /** Mutating only: `IfNeeded` webhooks are called once more when a later webhook changed the object. */
  readonly reinvocationPolicy: "Never" | "IfNeeded";
  readonly url: string | undefined;
  readonly service: ServiceReference | undefined;
  readonly agent: Agent;
}

export interface CompiledConfiguration {
  readonly key: string;
  readonly webhooks: readonly CompiledWebhook[];
}

const DEFAULT_TIMEOUT_SECONDS = 10;
const MAX_TIMEOUT_SECONDS = 30;

export const configurationKey = (c: KubeObject): string =>
  `${c.kind ?? ""}/${c.metadata?.uid ?? c.metadata?.name ?? ""}/${c.metadata?.resourceVersion ?? ""}`;

const selector = (v: unknown): LabelSelector | undefined => (isRecord(v) ? (v as LabelSelector) : undefined);

function decodeCaBundle(v: unknown): string | undefined {
  if (typeof v !== "string" || v === "") return undefined;
  return Buffer.from(v, "base64").toString("utf8");
}

export function compileConfiguration(c: KubeObject): CompiledConfiguration {
  const configurationName = c.metadata?.name ?? "";
  const raw = Array.isArray(c.webhooks) ? c.webhooks.filter(isRecord) : [];
  const webhooks = raw.map((w): CompiledWebhook => {
    const clientConfig = isRecord(w.clientConfig) ? w.clientConfig : {};
    const svc = isRecord(clientConfig.service) ? clientConfig.service : undefined;
    const timeout = typeof w.timeoutSeconds === "number" ? w.timeoutSeconds : DEFAULT_TIMEOUT_SECONDS;
    const conditions = Array.isArray(w.matchConditions) ? w.matchConditions.filter(isRecord) : [];
    const ca = decodeCaBundle(clientConfig.caBundle);
    return {
      configurationName,
      name: typeof w.name === "string" ? w.name : "",
      rules: parseRules(w.rules),
      namespaceSelector: selector(w.namespaceSelector),
      objectSelector: selector(w.objectSelector),
      matchConditions: conditions.map((mc) => {
        const name = typeof mc.name === "string" ? mc.name : "";
        const expr = typeof mc.expression === "string" ? mc.expression : "";
        try {
          return {
            name,
            expression: expr,
            program: compileExpression(expr, ["object", "oldObject", "request", "authorizer", "params"])
              .program,
          };
        } catch (e) {
          return { name, expression: expr, error: (e as Error).message };
        }
      }),
      failurePolicy: w.failurePolicy === "Ignore" ? "Ignore" : "Fail",
      timeoutSeconds: Math.min(Math.max(1, timeout), MAX_TIMEOUT_SECONDS),
      sideEffects: typeof w.sideEffects === "string" ? w.sideEffects : "Unknown",
      reinvocationPolicy: w.reinvocationPolicy === "IfNeeded" ? "IfNeeded" : "Never",
      url: typeof clientConfig.url === "string" ? clientConfig.url : undefined,
      service: svc
        ? {
            namespace: String(svc.namespace ?? ""),
            name: String(svc.name ?? ""),
            port: typeof svc.port === "number" ? svc.port : 443,
            ...(typeof svc.path === "string" ? { path: svc.path } : {}),
          }
        : undefined,
      // Keep-alive so repeated calls reuse the TLS session; the caBundle pins trust (system roots when absent,
      // as kube does). It goes in as a secure context: as a `ca` option Node's agent would paste the PEM into
      // the name of its connection pool, rebuilt and hashed a few times per call.
      agent: new Agent({
        keepAlive: true,
        maxSockets: 16,
        ...(ca ? { secureContext: createSecureContext({ ca }) } : {}),
      }),
    };
  });
  return { key: configurationKey(c), webhooks };
}

export function destroyConfiguration(c: CompiledConfiguration): void {
  for (const w of c.webhooks) w.agent.destroy();
}
