/**
 * Helpers for the manifest and image tests: rendering a kustomization with the real kubectl (own HOME and
 * cache, as every kubectl in these tests), a small RBAC evaluator (which rules of which bindings grant a
 * service account a request — so the tests state what the product needs and must not have as requests,
 * not as rule text), label-selector matching, and a Dockerfile reader (instructions and stages). All but
 * `renderKustomization` are pure.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { isRecord, type KubeObject } from "../../src/kube/object.js";

const KUBECTL = "/usr/bin/kubectl";

/** `kubectl kustomize <dir>` parsed into objects; throws with kubectl's stderr when it does not render. */
export async function renderKustomization(dir: string): Promise<KubeObject[]> {
  const home = await mkdtemp(join(tmpdir(), "manifests-kubectl-"));
  try {
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(
        KUBECTL,
        ["kustomize", dir],
        {
          env: { PATH: "/usr/bin:/bin", HOME: home, KUBECACHEDIR: join(home, "cache") },
          timeout: 20_000,
          maxBuffer: 16 * 1024 * 1024,
        },
        (err, out, stderr) => (err ? reject(new Error(`kubectl kustomize ${dir}: ${stderr}`)) : resolve(out)),
      );
    });
    return parseAllDocuments(stdout).flatMap((doc) => {
      if (doc.errors.length > 0) throw new Error(`${dir}: ${doc.errors[0]!.message}`);
      const value: unknown = doc.toJS();
      return isRecord(value) ? [value as KubeObject] : [];
    });
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

export const ofKind = (objects: readonly KubeObject[], kind: string): KubeObject[] =>
  objects.filter((o) => o.kind === kind);

/** The one object of `kind` named `name`; throws (failing the test) when missing. */
export function theOne(objects: readonly KubeObject[], kind: string, name: string): KubeObject {
  const found = objects.find((o) => o.kind === kind && o.metadata?.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in the render`);
  return found;
}

// ---------------------------------------------------------------------------------------------------------
// RBAC

export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs: string[];
  nonResourceURLs?: string[];
}

export interface ServiceAccountRef {
  namespace: string;
  name: string;
}

/** One API request as the authorizer sees it; `namespace` empty for cluster-scoped objects. */
export interface Access {
  verb: string;
  group: string;
  /** `machines`, or `machines/status` for a subresource. */
  resource: string;
  namespace: string;
  name?: string;
}

const rulesOf = (o: KubeObject): PolicyRule[] => (Array.isArray(o.rules) ? (o.rules as PolicyRule[]) : []);

const bindsSubject = (binding: KubeObject, sa: ServiceAccountRef): boolean =>
  Array.isArray(binding.subjects) &&
  binding.subjects.some(
    (s) => isRecord(s) && s.kind === "ServiceAccount" && s.name === sa.name && s.namespace === sa.namespace,
  );

const ruleGrants = (rule: PolicyRule, access: Access): boolean =>
  (rule.apiGroups ?? []).includes(access.group) &&
  (rule.resources ?? []).includes(access.resource) &&
  rule.verbs.includes(access.verb) &&
  (rule.resourceNames === undefined ||
    rule.resourceNames.length === 0 ||
    (access.name !== undefined && rule.resourceNames.includes(access.name)));

/**
 * Whether the bindings in `objects` grant `sa` this access: a ClusterRoleBinding grants its ClusterRole
 * everywhere, a RoleBinding grants its Role or ClusterRole in the binding's namespace only. Literal
 * matching only — the manifests have no wildcards (a separate test), so none are interpreted here.
 */
export function grants(objects: readonly KubeObject[], sa: ServiceAccountRef, access: Access): boolean {
  const role = (kind: string, name: string, namespace?: string) =>
    objects.find(
      (o) =>
        o.kind === kind &&
        o.metadata?.name === name &&
        (namespace === undefined || o.metadata?.namespace === namespace),
    );
  for (const binding of objects) {
    if (binding.kind !== "ClusterRoleBinding" && binding.kind !== "RoleBinding") continue;
    if (!bindsSubject(binding, sa)) continue;
    const ref = isRecord(binding.roleRef) ? binding.roleRef : {};
    const bindingNamespace = binding.metadata?.namespace ?? "";
    if (binding.kind === "RoleBinding" && access.namespace !== bindingNamespace) continue;
    const granted =
      ref.kind === "ClusterRole"
        ? role("ClusterRole", String(ref.name))
        : role("Role", String(ref.name), bindingNamespace);
    if (granted && rulesOf(granted).some((rule) => ruleGrants(rule, access))) return true;
  }
  return false;
}

/** Every rule of every Role and ClusterRole, with where it came from (for messages). */
export const allRules = (objects: readonly KubeObject[]): { where: string; rule: PolicyRule }[] =>
  objects
    .filter((o) => o.kind === "Role" || o.kind === "ClusterRole")
    .flatMap((o) => rulesOf(o).map((rule) => ({ where: `${o.kind} ${o.metadata?.name}`, rule })));

// ---------------------------------------------------------------------------------------------------------
// Label selectors

interface Requirement {
  key: string;
  operator: "In" | "NotIn" | "Exists" | "DoesNotExist";
  values?: string[];
}

/** Kubernetes label-selector semantics (matchLabels AND matchExpressions); an empty selector matches all. */
export function selectorMatches(selector: unknown, labels: Record<string, string>): boolean {
  if (!isRecord(selector)) return true;
  const matchLabels = isRecord(selector.matchLabels) ? selector.matchLabels : {};
  const expressions = Array.isArray(selector.matchExpressions)
    ? (selector.matchExpressions as Requirement[])
    : [];
  return (
    Object.entries(matchLabels).every(([k, v]) => labels[k] === v) &&
    expressions.every((r) => {
      const has = r.key in labels;
      switch (r.operator) {
        case "In":
          return has && (r.values ?? []).includes(labels[r.key]!);
        case "NotIn":
          return !has || !(r.values ?? []).includes(labels[r.key]!);
        case "Exists":
          return has;
        case "DoesNotExist":
          return !has;
        default:
          throw new Error(`unknown selector operator ${String(r.operator)}`);
      }
    })
  );
}

// ---------------------------------------------------------------------------------------------------------
// Dockerfile

export interface Instruction {
  keyword: string;
  /** Everything after the keyword, continuation lines joined. */
  args: string;
}

export interface Stage {
  from: string;
  name?: string;
  instructions: Instruction[];
}

/** Instructions with `\` continuations joined and comments dropped (the parser directive line included). */
export function dockerInstructions(text: string): Instruction[] {
  const logical: string[] = [];
  let pending = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (pending === "" && (line === "" || line.startsWith("#"))) continue;
    if (line.startsWith("#")) continue; // a comment inside a continuation
    if (line.endsWith("\\")) {
      pending += `${line.slice(0, -1).trim()} `;
      continue;
    }
    logical.push(pending + line);
    pending = "";
  }
  if (pending !== "") logical.push(pending.trim());
  return logical.map((l) => {
    const space = l.search(/\s/);
    return space < 0
      ? { keyword: l.toUpperCase(), args: "" }
      : { keyword: l.slice(0, space).toUpperCase(), args: l.slice(space).trim() };
  });
}

/** The build stages, each opened by its FROM (`FROM image [AS name]`). */
export function dockerStages(instructions: readonly Instruction[]): Stage[] {
  const stages: Stage[] = [];
  for (const i of instructions) {
    if (i.keyword === "FROM") {
      const words = i.args.split(/\s+/).filter((w) => !w.startsWith("--"));
      const as = words.findIndex((w) => w.toUpperCase() === "AS");
      stages.push({
        from: words[0] ?? "",
        ...(as >= 0 && words[as + 1] ? { name: words[as + 1] } : {}),
        instructions: [],
      });
    } else if (stages.length > 0) stages[stages.length - 1]!.instructions.push(i);
  }
  return stages;
}

/** An exec-form (JSON array) ENTRYPOINT or CMD; undefined for the shell form. */
export function execForm(args: string): string[] | undefined {
  try {
    const parsed: unknown = JSON.parse(args);
    return Array.isArray(parsed) && parsed.every((p) => typeof p === "string") ? parsed : undefined;
  } catch {
    return undefined;
  }
}
