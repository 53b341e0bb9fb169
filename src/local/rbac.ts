/**
 * Who may do what in local mode and the tests' local clusters (SPEC §8): the RBAC a cluster would hold. The
 * product's own ServiceAccount and roles from manifests/base exactly as shipped, the installer's from
 * manifests/installer, the roles of the controllers the simulated providers stand in for
 * (providers-rbac.yaml, shared with the real control plane's set-up), and OpenShift's `cluster-admins`
 * binding that makes the `admin` user (group `system:cluster-admins`) a cluster admin. Loading is plain
 * data; local/cluster.ts writes it.
 */
import { readFile } from "node:fs/promises";
import { parseAllDocuments } from "yaml";
import type { ResourceType } from "../kube/kinds.js";
import { isRecord, type KubeObject } from "../kube/object.js";
import { appendAll } from "../lists.js";

const PRODUCT_RBAC_MANIFESTS: readonly string[] = [
  "manifests/base/serviceaccount.yaml",
  "manifests/base/rbac.yaml",
];
/** Only its ServiceAccount and RBAC objects: the installer's Deployment has nothing to run here. */
const INSTALLER_MANIFEST = "manifests/installer/installer.yaml";
export const PROVIDERS_RBAC = "src/local/providers-rbac.yaml";

/** The namespaces the shipped manifests name; local mode's configured ones replace them. */
const SHIPPED_NAMESPACES = { mapiNamespace: "openshift-machine-api", capiNamespace: "openshift-cluster-api" };

const RBAC_GROUP = "rbac.authorization.k8s.io";
export const RBAC_TYPES: Readonly<Record<string, ResourceType>> = Object.freeze({
  ServiceAccount: {
    group: "",
    version: "v1",
    kind: "ServiceAccount",
    plural: "serviceaccounts",
    namespaced: true,
  },
  ClusterRole: {
    group: RBAC_GROUP,
    version: "v1",
    kind: "ClusterRole",
    plural: "clusterroles",
    namespaced: false,
  },
  ClusterRoleBinding: {
    group: RBAC_GROUP,
    version: "v1",
    kind: "ClusterRoleBinding",
    plural: "clusterrolebindings",
    namespaced: false,
  },
  Role: { group: RBAC_GROUP, version: "v1", kind: "Role", plural: "roles", namespaced: true },
  RoleBinding: {
    group: RBAC_GROUP,
    version: "v1",
    kind: "RoleBinding",
    plural: "rolebindings",
    namespaced: true,
  },
});

/** The type an RBAC object (or ServiceAccount) is written as; undefined for any other kind. */
export const rbacTypeOf = (o: KubeObject): ResourceType | undefined => {
  const t = RBAC_TYPES[String(o.kind)];
  return t && o.apiVersion === (t.group ? `${t.group}/${t.version}` : t.version) ? t : undefined;
};

/** OpenShift's binding of its cluster admins (kube:admin is in `system:cluster-admins`) to cluster-admin. */
export const clusterAdminsBinding = (): KubeObject => ({
  apiVersion: `${RBAC_GROUP}/v1`,
  kind: "ClusterRoleBinding",
  metadata: { name: "cluster-admins" },
  roleRef: { apiGroup: RBAC_GROUP, kind: "ClusterRole", name: "cluster-admin" },
  subjects: [{ apiGroup: RBAC_GROUP, kind: "Group", name: "system:cluster-admins" }],
});

/**
 * The shipped objects for configured namespaces: every string that is exactly a shipped namespace's name
 * (an object's namespace, a subject's, a `resourceNames` entry) becomes the configured one. The defaults
 * change nothing — the manifests are applied as shipped.
 */
export const inNamespaces = (
  o: KubeObject,
  ns: { mapiNamespace: string; capiNamespace: string },
): KubeObject => {
  const rename = new Map([
    [SHIPPED_NAMESPACES.mapiNamespace, ns.mapiNamespace],
    [SHIPPED_NAMESPACES.capiNamespace, ns.capiNamespace],
  ]);
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return rename.get(v) ?? v;
    if (Array.isArray(v)) return v.map(walk);
    if (isRecord(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(o) as KubeObject;
};

/** The ServiceAccounts and RBAC objects of a manifest file, in file order (other kinds left out). */
export async function rbacObjectsIn(path: string): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  for (const doc of parseAllDocuments(await readFile(path, "utf8"))) {
    if (doc.errors.length > 0) throw new Error(`${path}: ${doc.errors[0]?.message}`);
    const value: unknown = doc.toJS();
    if (isRecord(value) && rbacTypeOf(value as KubeObject)) out.push(value as KubeObject);
  }
  return out;
}

/**
 * Everything RBAC local mode writes after the `cluster-admins` binding, in an order the API accepts
 * (ServiceAccounts, then roles, then bindings): the product's and the installer's manifests and the
 * stand-ins' roles. The stand-ins' ServiceAccounts are not created: in a cluster their providers' own
 * manifests create them (the installer's demo providers do here), and a token file authenticates them.
 */
export async function localRbac(ns: { mapiNamespace: string; capiNamespace: string }): Promise<KubeObject[]> {
  const objects: KubeObject[] = [];
  for (const path of [...PRODUCT_RBAC_MANIFESTS, INSTALLER_MANIFEST, PROVIDERS_RBAC])
    appendAll(
      objects,
      (await rbacObjectsIn(path)).map((o) => inNamespaces(o, ns)),
    );
  const order = ["ServiceAccount", "ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding"];
  return objects.sort((a, b) => order.indexOf(String(a.kind)) - order.indexOf(String(b.kind)));
}
