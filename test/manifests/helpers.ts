/**
 * Helpers for the manifest and image tests: rendering a kustomization with the real kubectl (own HOME and
 * cache, as every kubectl in these tests), a small RBAC evaluator (which rules of which bindings grant a
 * service account a request — so the tests state what the product needs and must not have as requests,
 * not as rule text), label-selector matching, a NetworkPolicy evaluator (does a set of policies admit one
 * connection — so the tests state which peers may talk to the product, not policy text), Markdown heading
 * anchors, and a Dockerfile reader (instructions and stages). All but `renderKustomization` are pure.
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
// NetworkPolicy

export type Protocol = "TCP" | "UDP" | "SCTP";

export interface ContainerPort {
  name?: string;
  containerPort: number;
  protocol?: Protocol;
}

/**
 * One end of a connection: a pod (network policies select it by its labels and its namespace's labels) or a
 * host — a node, the API server's endpoint, anything outside the pod network — which only a rule without
 * peers admits (an `ipBlock` is not interpreted: a policy that has one makes the evaluator throw).
 */
export type Endpoint =
  | {
      kind: "pod";
      namespace: string;
      /** `kubernetes.io/metadata.name` is added: Kubernetes sets it on every namespace. */
      namespaceLabels?: Record<string, string>;
      labels: Record<string, string>;
      /** Its containers' ports, for policies that name a port. */
      ports?: readonly ContainerPort[];
    }
  | { kind: "host"; address: string };

export interface Connection {
  from: Endpoint;
  to: Endpoint;
  protocol: Protocol;
  port: number;
}

interface NetworkPolicyPort {
  protocol?: Protocol;
  port?: number | string;
  endPort?: number;
}
interface NetworkPolicyPeer {
  podSelector?: unknown;
  namespaceSelector?: unknown;
  ipBlock?: unknown;
}
interface NetworkPolicyRule {
  ports?: NetworkPolicyPort[];
  peers?: NetworkPolicyPeer[];
}

const specOf = (policy: KubeObject): Record<string, unknown> => (isRecord(policy.spec) ? policy.spec : {});

/** `spec.policyTypes`, or its default: Ingress, plus Egress when the policy has egress rules. */
const policyTypesOf = (policy: KubeObject): string[] => {
  const spec = specOf(policy);
  if (Array.isArray(spec.policyTypes)) return spec.policyTypes as string[];
  return ["Ingress", ...(Array.isArray(spec.egress) && spec.egress.length > 0 ? ["Egress"] : [])];
};

const networkRulesOf = (policy: KubeObject, direction: "Ingress" | "Egress"): NetworkPolicyRule[] => {
  const spec = specOf(policy);
  const rules = direction === "Ingress" ? spec.ingress : spec.egress;
  if (!Array.isArray(rules)) return [];
  return rules.map((r: Record<string, unknown>) => ({
    ...(Array.isArray(r.ports) ? { ports: r.ports as NetworkPolicyPort[] } : {}),
    ...(Array.isArray(direction === "Ingress" ? r.from : r.to)
      ? { peers: (direction === "Ingress" ? r.from : r.to) as NetworkPolicyPeer[] }
      : {}),
  }));
};

const namespaceLabelsOf = (pod: Extract<Endpoint, { kind: "pod" }>): Record<string, string> => ({
  ...pod.namespaceLabels,
  "kubernetes.io/metadata.name": pod.namespace,
});

/** The policies of the pod's namespace that select it for `direction`. */
const isolating = (policies: readonly KubeObject[], pod: Endpoint, direction: "Ingress" | "Egress") =>
  pod.kind !== "pod"
    ? []
    : policies.filter(
        (p) =>
          p.kind === "NetworkPolicy" &&
          p.metadata?.namespace === pod.namespace &&
          selectorMatches(specOf(p).podSelector ?? {}, pod.labels) &&
          policyTypesOf(p).includes(direction),
      );

const peerMatches = (peer: NetworkPolicyPeer, policyNamespace: string, other: Endpoint): boolean => {
  if (peer.ipBlock !== undefined) throw new Error("ipBlock peers are not interpreted by this evaluator");
  if (other.kind !== "pod") return false;
  const namespaceOk =
    peer.namespaceSelector === undefined
      ? other.namespace === policyNamespace
      : selectorMatches(peer.namespaceSelector, namespaceLabelsOf(other));
  return namespaceOk && (peer.podSelector === undefined || selectorMatches(peer.podSelector, other.labels));
};

/** A named port is looked up among the destination pod's container ports (a host has none). */
const portMatches = (p: NetworkPolicyPort, c: Connection): boolean => {
  if ((p.protocol ?? "TCP") !== c.protocol) return false;
  if (p.port === undefined) return true;
  if (typeof p.port === "number") return c.port >= p.port && c.port <= (p.endPort ?? p.port);
  const named = c.to.kind === "pod" ? (c.to.ports ?? []) : [];
  return named.some(
    (cp) => cp.name === p.port && (cp.protocol ?? "TCP") === c.protocol && cp.containerPort === c.port,
  );
};

const ruleAdmits = (
  rule: NetworkPolicyRule,
  policyNamespace: string,
  other: Endpoint,
  c: Connection,
): boolean =>
  (rule.peers === undefined ||
    rule.peers.length === 0 ||
    rule.peers.some((peer) => peerMatches(peer, policyNamespace, other))) &&
  (rule.ports === undefined || rule.ports.length === 0 || rule.ports.some((p) => portMatches(p, c)));

/**
 * Kubernetes NetworkPolicy semantics for one connection: the sender's egress and the receiver's ingress
 * must each admit it. A pod no policy selects for a direction is not isolated in it; a pod that some are
 * is admitted when any rule of any of them admits the peer and the port (policies only add). Hosts are
 * never isolated. Replies to an admitted connection are not modelled (they are always allowed).
 */
export function networkPoliciesAdmit(policies: readonly KubeObject[], c: Connection): boolean {
  const side = (pod: Endpoint, other: Endpoint, direction: "Ingress" | "Egress"): boolean => {
    const selecting = isolating(policies, pod, direction);
    return (
      selecting.length === 0 ||
      selecting.some((p) =>
        networkRulesOf(p, direction).some((rule) => ruleAdmits(rule, p.metadata?.namespace ?? "", other, c)),
      )
    );
  };
  return side(c.from, c.to, "Egress") && side(c.to, c.from, "Ingress");
}

// ---------------------------------------------------------------------------------------------------------
// Markdown

/** The anchors GitHub gives a Markdown file's headings (`## Foo: bar` → `foo-bar`), fenced code skipped. */
export function markdownAnchors(text: string): string[] {
  const anchors: string[] = [];
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of text.split("\n")) {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      continue;
    }
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.push(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
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
