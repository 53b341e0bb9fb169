/**
 * The resource types the server serves: the built-in kinds (with the short names, scopes and
 * subresources kubectl expects) and the types CustomResourceDefinitions define. A registry instance is
 * owned by one server; CRD types come and go as CRDs are established and removed.
 */
import { MAPI_GROUP } from "../kube/kinds.js";
import { REVIEW_KINDS } from "./access-reviews.js";
import type { CompiledCrd, PrinterColumn, ResourceInfo, ScaleSubresource } from "./types.js";
import { resourceKey } from "./types.js";

interface BuiltIn {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced?: boolean;
  shortNames?: string[];
  status?: boolean;
  scale?: ScaleSubresource;
  categories?: string[];
  /** A review kind: create is its only verb, and nothing is stored (access-reviews.ts). */
  createOnly?: boolean;
  /** kube's strategy for the kind sets metadata.generation (GENERATION_TRACKED below). */
  generation?: boolean;
}

const REPLICAS: ScaleSubresource = {
  specReplicasPath: ".spec.replicas",
  statusReplicasPath: ".status.replicas",
  labelSelectorPath: ".status.selector",
};

/** Built-in kinds: storage is generic; behaviour that kube gives them specially lives in the write path. */
const BUILT_INS: readonly BuiltIn[] = [
  {
    group: "",
    version: "v1",
    kind: "Namespace",
    plural: "namespaces",
    namespaced: false,
    shortNames: ["ns"],
    status: true,
  },
  { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps", shortNames: ["cm"] },
  { group: "", version: "v1", kind: "Secret", plural: "secrets" },
  { group: "", version: "v1", kind: "ServiceAccount", plural: "serviceaccounts", shortNames: ["sa"] },
  { group: "", version: "v1", kind: "Event", plural: "events", shortNames: ["ev"] },
  {
    group: "",
    version: "v1",
    kind: "Service",
    plural: "services",
    shortNames: ["svc"],
    status: true,
    categories: ["all"],
  },
  {
    group: "",
    version: "v1",
    kind: "Pod",
    plural: "pods",
    shortNames: ["po"],
    status: true,
    categories: ["all"],
  },
  {
    group: "",
    version: "v1",
    kind: "Node",
    plural: "nodes",
    namespaced: false,
    shortNames: ["no"],
    status: true,
  },
  { group: "", version: "v1", kind: "Endpoints", plural: "endpoints", shortNames: ["ep"] },
  {
    group: "apps",
    version: "v1",
    kind: "Deployment",
    plural: "deployments",
    shortNames: ["deploy"],
    status: true,
    scale: REPLICAS,
    categories: ["all"],
  },
  {
    group: "apps",
    version: "v1",
    kind: "ReplicaSet",
    plural: "replicasets",
    shortNames: ["rs"],
    status: true,
    scale: REPLICAS,
    categories: ["all"],
  },
  {
    group: "apps",
    version: "v1",
    kind: "StatefulSet",
    plural: "statefulsets",
    shortNames: ["sts"],
    status: true,
    scale: REPLICAS,
    categories: ["all"],
  },
  {
    group: "apps",
    version: "v1",
    kind: "DaemonSet",
    plural: "daemonsets",
    shortNames: ["ds"],
    status: true,
    categories: ["all"],
  },
  { group: "coordination.k8s.io", version: "v1", kind: "Lease", plural: "leases" },
  { group: "events.k8s.io", version: "v1", kind: "Event", plural: "events", shortNames: ["ev"] },
  {
    group: "admissionregistration.k8s.io",
    version: "v1",
    kind: "MutatingWebhookConfiguration",
    plural: "mutatingwebhookconfigurations",
    namespaced: false,
  },
  {
    group: "admissionregistration.k8s.io",
    version: "v1",
    kind: "ValidatingWebhookConfiguration",
    plural: "validatingwebhookconfigurations",
    namespaced: false,
  },
  {
    group: "apiextensions.k8s.io",
    version: "v1",
    kind: "CustomResourceDefinition",
    plural: "customresourcedefinitions",
    namespaced: false,
    shortNames: ["crd", "crds"],
    status: true,
  },
  {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind: "ClusterRole",
    plural: "clusterroles",
    namespaced: false,
  },
  {
    group: "rbac.authorization.k8s.io",
    version: "v1",
    kind: "ClusterRoleBinding",
    plural: "clusterrolebindings",
    namespaced: false,
  },
  { group: "rbac.authorization.k8s.io", version: "v1", kind: "Role", plural: "roles" },
  { group: "rbac.authorization.k8s.io", version: "v1", kind: "RoleBinding", plural: "rolebindings" },
  {
    group: "policy",
    version: "v1",
    kind: "PodDisruptionBudget",
    plural: "poddisruptionbudgets",
    shortNames: ["pdb"],
    status: true,
  },
  {
    group: "scheduling.k8s.io",
    version: "v1",
    kind: "PriorityClass",
    plural: "priorityclasses",
    namespaced: false,
    shortNames: ["pc"],
  },
  {
    group: "networking.k8s.io",
    version: "v1",
    kind: "NetworkPolicy",
    plural: "networkpolicies",
    shortNames: ["netpol"],
  },
  ...REVIEW_KINDS.map((r) => ({ ...r, version: "v1", namespaced: false, createOnly: true })),
];

/** The built-ins this server serves whose kube strategy sets metadata.generation (pkg/registry/…/strategy.go). */
const GENERATION_TRACKED: ReadonlySet<string> = new Set([
  "Pod",
  "Deployment",
  "ReplicaSet",
  "StatefulSet",
  "DaemonSet",
  "MutatingWebhookConfiguration",
  "ValidatingWebhookConfiguration",
  "CustomResourceDefinition",
  "PodDisruptionBudget",
  "PriorityClass",
  "NetworkPolicy",
]);

const builtIn = (b: BuiltIn): ResourceInfo => ({
  group: b.group,
  versions: [b.version],
  storageVersion: b.version,
  plural: b.plural,
  singular: b.kind.toLowerCase(),
  kind: b.kind,
  listKind: `${b.kind}List`,
  namespaced: b.namespaced ?? true,
  shortNames: b.shortNames ?? [],
  categories: b.categories ?? [],
  statusSubresource: b.status ?? false,
  ...(b.scale ? { scale: b.scale } : {}),
  ...(b.createOnly ? { createOnly: true } : {}),
  ...(GENERATION_TRACKED.has(b.kind) ? { generation: true } : {}),
  builtIn: true,
  printerColumns: [],
});

/** Kube's version priority: GA > beta > alpha, then higher numbers first (v1 > v1beta2 > v1beta1 > v1alpha1). */
const compareVersions = (a: string, b: string): number => {
  const parse = (v: string): [number, number, number] | undefined => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return undefined;
    return [m[2] === undefined ? 3 : m[2] === "beta" ? 2 : 1, Number(m[1]), Number(m[3] ?? 0)];
  };
  const pa = parse(a);
  const pb = parse(b);
  if (!pa || !pb) return pa ? -1 : pb ? 1 : a.localeCompare(b);
  return pb[0] - pa[0] || pb[1] - pa[1] || pb[2] - pa[2];
};

export const crdResource = (c: CompiledCrd): ResourceInfo => {
  const served = c.versions.filter((v) => v.served);
  const versions = served.map((v) => v.name).sort(compareVersions);
  const storage = c.versions.find((v) => v.storage) ?? c.versions[0]!;
  const preferred = served.find((v) => v.name === versions[0]) ?? storage;
  return {
    group: c.group,
    versions,
    storageVersion: storage.name,
    plural: c.names.plural,
    singular: c.names.singular || c.names.kind.toLowerCase(),
    kind: c.names.kind,
    listKind: c.names.listKind || `${c.names.kind}List`,
    namespaced: c.scope === "Namespaced",
    shortNames: c.names.shortNames,
    categories: c.names.categories,
    statusSubresource: preferred.subresources.status,
    ...(preferred.subresources.scale ? { scale: preferred.subresources.scale } : {}),
    builtIn: false,
    crd: c,
    printerColumns: preferred.additionalPrinterColumns as PrinterColumn[],
  };
};

export class Registry {
  private readonly types = new Map<string, ResourceInfo>();

  constructor(private readonly preferredGroups: readonly string[] = [MAPI_GROUP]) {
    for (const b of BUILT_INS) this.types.set(resourceKey(b), builtIn(b));
  }

  add(info: ResourceInfo): void {
    this.types.set(resourceKey(info), info);
  }
  remove(key: string): void {
    const t = this.types.get(key);
    if (t && !t.builtIn) this.types.delete(key);
  }
  byKey(key: string): ResourceInfo | undefined {
    return this.types.get(key);
  }
  /** The type served at group/version/plural, or undefined when that version is not served. */
  find(group: string, version: string, plural: string): ResourceInfo | undefined {
    const t = this.types.get(`${group}/${plural}`);
    return t?.versions.includes(version) ? t : undefined;
  }
  byGroupKind(group: string, kind: string): ResourceInfo | undefined {
    for (const t of this.types.values()) if (t.group === group && t.kind === kind) return t;
    return undefined;
  }
  all(): ResourceInfo[] {
    return [...this.types.values()];
  }
  /**
   * Groups in discovery order: core and built-in groups first, then CRD groups with the preferred ones
   * first (kubectl resolves an ambiguous plural to the first group listed), then by name.
   */
  groups(): Array<{ name: string; versions: string[] }> {
    const byGroup = new Map<string, { builtIn: boolean; versions: Set<string> }>();
    for (const t of this.types.values()) {
      if (t.group === "") continue;
      const g = byGroup.get(t.group) ?? { builtIn: t.builtIn, versions: new Set<string>() };
      for (const v of t.versions) g.versions.add(v);
      byGroup.set(t.group, g);
    }
    const rank = (name: string, b: boolean): number => {
      if (b) return 0;
      const i = this.preferredGroups.indexOf(name);
      return i >= 0 ? 1 + i : 1 + this.preferredGroups.length;
    };
    return [...byGroup.entries()]
      .sort(([a, ga], [b, gb]) => rank(a, ga.builtIn) - rank(b, gb.builtIn) || a.localeCompare(b))
      .map(([name, g]) => ({ name, versions: [...g.versions].sort(compareVersions) }));
  }
}
