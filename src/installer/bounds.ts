/**
 * The bounds a provider's objects must stay within, because a transport ConfigMap is untrusted input
 * (SPEC §6: anyone who can write a ConfigMap in the CAPI namespace can write one). Pure checks over one
 * provider's rendered objects: the kind allowlist, RBAC inside the ceiling (ceiling.ts), bindings only to the
 * provider's own roles and its own ServiceAccounts, pods only under its own ServiceAccounts, admissible under
 * restricted-v2 and running images of the images ConfigMap, webhooks only to its own Services and API groups,
 * and never an object of the product's or one of the installer's own inputs. Each violation names its bound;
 * the renderer fails the whole provider on any. What needs the live cluster — never taking over an object
 * that lacks the provider's label — is in apply.ts.
 */
import type { KubeObject } from "../kube/object.js";
import { getPath, isRecord, labelsOf, nameOf } from "../kube/object.js";
import { pieceCount } from "../kube/rbac-coverage.js";
import {
  CEILING_NAME,
  CLUSTER_CEILING,
  MAX_RULE_PIECES,
  NAMESPACE_CEILING,
  type PolicyRule,
  policyRulesOf,
  uncovered,
} from "./ceiling.js";
import {
  ALLOWED_KINDS,
  carriesProductLabel,
  groupOf,
  isProductName,
  PRODUCT_LABEL,
  PRODUCT_NAME,
  type ProviderType,
  SERVICE_CA,
  shown,
  TRANSPORT_LABELS,
} from "./model.js";

/** Each bound's id, as messages name it (SPEC §6; docs/decisions.md records why each is drawn where it is). */
export type Bound =
  | "kind-allowlist"
  | "rbac-ceiling"
  | "own-roles"
  | "own-service-accounts"
  | "restricted-v2"
  | "images"
  | "webhooks"
  | "api-groups"
  | "services"
  | "product-objects"
  | "no-takeover"
  | "yaml";

export interface Violation {
  bound: Bound;
  detail: string;
}

export interface BoundsContext {
  /** What the provider is: the API groups its CRDs may define follow from it (PROVIDER_API_GROUPS). */
  type: ProviderType;
  namespace: string;
  /** The images ConfigMap's values that are valid image references: the only images pods may run. */
  images: ReadonlySet<string>;
  imagesConfigMap: string;
}

const RBAC = "rbac.authorization.k8s.io";
const ADMISSION = "admissionregistration.k8s.io";

/** The kind allowlist (SPEC §6), checked before anything else is done with a document. */
export function allowlistViolation(apiVersion: string, kind: string): Violation | undefined {
  if (ALLOWED_KINDS.has(`${groupOf(apiVersion)}/${kind}`)) return undefined;
  const names = [...ALLOWED_KINDS.keys()].map((k) => k.slice(k.indexOf("/") + 1));
  return {
    bound: "kind-allowlist",
    detail: `${shown(kind)} is not a kind the installer applies (${names.join(", ")})`,
  };
}

/** What the provider ships, by name: the only roles, ServiceAccounts, Services and API groups it may use. */
interface Own {
  serviceAccounts: Set<string>;
  roles: Set<string>;
  clusterRoles: Set<string>;
  services: Set<string>;
  apiGroups: Set<string>;
  /** The names of the CRDs it ships in its own groups: the only ones its roles may write. */
  crds: Set<string>;
}

/**
 * The API groups a provider of each type may define CRDs in — Cluster API's own, split as its providers split
 * them. A CRD makes its group the provider's own, and the provider's webhooks may match all of it; any other
 * group (OLM's, monitoring's, a CNI's, the core provider's for an infrastructure provider) is someone else's,
 * whatever CRD a transport ConfigMap ships in it.
 */
export const PROVIDER_API_GROUPS: Readonly<Record<ProviderType, readonly string[]>> = Object.freeze({
  core: ["cluster.x-k8s.io", "addons.cluster.x-k8s.io", "ipam.cluster.x-k8s.io", "runtime.cluster.x-k8s.io"],
  // Managed Kubernetes flavours (EKS in CAPA) ship their bootstrap and control-plane kinds with the provider.
  infrastructure: [
    "infrastructure.cluster.x-k8s.io",
    "bootstrap.cluster.x-k8s.io",
    "controlplane.cluster.x-k8s.io",
  ],
});

const ownOf = (objects: readonly KubeObject[], type: ProviderType): Own => {
  const own: Own = {
    serviceAccounts: new Set(),
    roles: new Set(),
    clusterRoles: new Set(),
    services: new Set(),
    apiGroups: new Set(),
    crds: new Set(),
  };
  for (const o of objects) {
    const key = `${groupOf(String(o.apiVersion))}/${o.kind}`;
    if (key === "/ServiceAccount") own.serviceAccounts.add(nameOf(o));
    else if (key === "/Service") own.services.add(nameOf(o));
    else if (key === `${RBAC}/Role`) own.roles.add(nameOf(o));
    else if (key === `${RBAC}/ClusterRole`) own.clusterRoles.add(nameOf(o));
    else if (key === "apiextensions.k8s.io/CustomResourceDefinition") {
      const group = getPath(o, ["spec", "group"]);
      if (typeof group === "string" && PROVIDER_API_GROUPS[type].includes(group)) {
        own.apiGroups.add(group);
        own.crds.add(nameOf(o));
      }
    }
  }
  return own;
};

const PRODUCT_LABEL_TEXT = `${PRODUCT_LABEL.key}=${PRODUCT_LABEL.value}`;

const list = (v: unknown): unknown[] | undefined =>
  v === undefined || v === null ? [] : Array.isArray(v) ? v : undefined;
const text = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** Violations of every bound but the allowlist, per object of one provider (same order as `objects`). */
export function violationsOf(objects: readonly KubeObject[], context: BoundsContext): Violation[][] {
  const own = ownOf(objects, context.type);
  const pieces: PieceBudget = { left: MAX_RULE_PIECES };
  return objects.map((o) => {
    const out: Violation[] = [];
    const add = (bound: Bound, detail: string): void => {
      out.push({ bound, detail });
    };
    const key = `${groupOf(String(o.apiVersion))}/${o.kind}`;
    if (isProductName(nameOf(o)))
      add(
        "product-objects",
        `has the name of one of the product's own objects (${PRODUCT_NAME}*), which the installer never touches`,
      );
    if (carriesProductLabel(labelsOf(o)))
      add(
        "product-objects",
        `carries label ${PRODUCT_LABEL_TEXT}, the product's own, by which the product's Service, PodDisruptionBudget, NetworkPolicies and ServiceMonitor select what is its`,
      );
    switch (key) {
      case "/ConfigMap":
        checkConfigMap(o, context, add);
        break;
      case "/Service":
        checkService(o, add);
        break;
      case "apps/Deployment":
        checkPod(getPath(o, ["spec", "template"]), own, context, add);
        break;
      case `${RBAC}/ClusterRole`:
        checkClusterRole(o, own, pieces, add);
        break;
      case `${RBAC}/Role`:
        checkRules(o.rules, [...CLUSTER_CEILING, ...NAMESPACE_CEILING], own, pieces, add);
        break;
      case `${RBAC}/ClusterRoleBinding`:
      case `${RBAC}/RoleBinding`:
        checkBinding(o, own, context, add);
        break;
      case `${ADMISSION}/ValidatingWebhookConfiguration`:
      case `${ADMISSION}/MutatingWebhookConfiguration`:
        checkWebhooks(o, own, add);
        break;
      case "apiextensions.k8s.io/CustomResourceDefinition":
        checkCrd(o, own, context.type, add);
        break;
    }
    return out;
  });
}

type Add = (bound: Bound, detail: string) => void;

function checkConfigMap(o: KubeObject, context: BoundsContext, add: Add): void {
  if (nameOf(o) === context.imagesConfigMap)
    add(
      "product-objects",
      `is the images ConfigMap ${shown(context.imagesConfigMap)}, an input of the installer`,
    );
  const label = Object.values(TRANSPORT_LABELS).find((l) => l in labelsOf(o));
  if (label)
    add(
      "product-objects",
      `carries label ${label}, which would make it a transport ConfigMap, an input of the installer`,
    );
}

function checkService(o: KubeObject, add: Add): void {
  const type = getPath(o, ["spec", "type"]);
  if (type !== undefined && type !== "ClusterIP")
    add(
      "services",
      `is of type ${shown(String(type))}; only ClusterIP Services without external IPs are applied`,
    );
  const externalIPs = getPath(o, ["spec", "externalIPs"]);
  if (externalIPs !== undefined && !(Array.isArray(externalIPs) && externalIPs.length === 0))
    add("services", "sets externalIPs; only ClusterIP Services without external IPs are applied");
  const annotations = isRecord(o.metadata?.annotations) ? o.metadata.annotations : {};
  // service-ca honours the alpha spelling of the annotation as well as the beta one.
  for (const key of [SERVICE_CA.servingCertSecretName, SERVICE_CA.alphaServingCertSecretName]) {
    const secret = annotations[key];
    if (typeof secret === "string" && isProductName(secret))
      add("product-objects", `asks service-ca for Secret ${shown(secret)}, the product's own`);
  }
}

/** How many more verb-resource pairs this provider's roles may have checked (MAX_RULE_PIECES in all). */
interface PieceBudget {
  left: number;
}

const CRD_RESOURCES: ReadonlySet<string> = new Set([
  "customresourcedefinitions",
  "customresourcedefinitions/status",
]);
const WRITE_VERBS: ReadonlySet<string> = new Set(["create", "update", "patch", "delete", "deletecollection"]);

/**
 * Whether a rule lets its holder write a CRD this provider does not ship. The ceiling grants CRD updates for
 * CAPI's CRD migrator, which rewrites its own CRDs' stored versions; any other CRD's conversion webhook and
 * served versions are someone else's API, so a write must name the provider's own CRDs.
 */
const writesOthersCrds = (r: PolicyRule, own: Own): boolean =>
  // Wildcards are outside the ceiling already (`uncovered` names them).
  r.apiGroups.includes("apiextensions.k8s.io") &&
  r.resources.some((x) => CRD_RESOURCES.has(x)) &&
  r.verbs.some((v) => WRITE_VERBS.has(v)) &&
  (r.resourceNames.length === 0 || r.resourceNames.some((n) => !own.crds.has(n)));

function checkRules(
  rules: unknown,
  ceiling: Parameters<typeof uncovered>[0],
  own: Own,
  budget: PieceBudget,
  add: Add,
): void {
  const parsed = policyRulesOf(rules);
  if (!parsed.ok) {
    add("rbac-ceiling", parsed.message);
    return;
  }
  if (parsed.rules.some((r) => writesOthersCrds(r, own)))
    add(
      "rbac-ceiling",
      `may write CustomResourceDefinitions that are not this provider's own; a role may write only the CRDs its provider ships, named in resourceNames (${[...own.crds].join(", ") || "it ships none"})`,
    );
  // A role over the bound alone is refused by `uncovered`; a thousand roles each just under it would still
  // hold a hundred million pairs to check, so the bound holds for the provider's roles together.
  const count = pieceCount(parsed.rules);
  if (count <= MAX_RULE_PIECES && count > budget.left) {
    add(
      "rbac-ceiling",
      `with the provider's roles before it, more than ${MAX_RULE_PIECES} verb-resource pairs, too many to check`,
    );
    return;
  }
  budget.left -= Math.min(count, budget.left);
  const missing = uncovered(ceiling, parsed.rules);
  if (missing.length > 0)
    add(
      "rbac-ceiling",
      `grants what the ceiling ClusterRole ${CEILING_NAME} does not: ${missing.join(", ")}`,
    );
}

function checkClusterRole(o: KubeObject, own: Own, budget: PieceBudget, add: Add): void {
  if (o.aggregationRule !== undefined && o.aggregationRule !== null)
    add(
      "rbac-ceiling",
      "has an aggregationRule, which gathers rules from other ClusterRoles that the ceiling cannot check",
    );
  for (const label of Object.keys(labelsOf(o)))
    if (label.startsWith(`${RBAC}/aggregate-to-`))
      add("rbac-ceiling", `carries label ${shown(label)}, which would add its rules to roles others hold`);
  checkRules(o.rules, CLUSTER_CEILING, own, budget, add);
}

function checkBinding(o: KubeObject, own: Own, context: BoundsContext, add: Add): void {
  const roleRef = isRecord(o.roleRef) ? o.roleRef : {};
  const kind = text(roleRef.kind) ?? "";
  const name = text(roleRef.name) ?? "";
  const shipped =
    roleRef.apiGroup === RBAC &&
    ((kind === "ClusterRole" && own.clusterRoles.has(name)) ||
      (kind === "Role" && o.kind === "RoleBinding" && own.roles.has(name)));
  if (!shipped)
    add("own-roles", `binds ${shown(kind || "a role")} ${shown(name)}, which this provider does not ship`);
  const subjects = list(o.subjects);
  if (!subjects) {
    add("own-service-accounts", "subjects is not a list");
    return;
  }
  for (const s of subjects) {
    const subject = isRecord(s) ? s : {};
    const subjectKind = text(subject.kind) ?? "";
    const subjectName = text(subject.name) ?? "";
    if (subjectKind !== "ServiceAccount")
      add(
        "own-service-accounts",
        `binds ${shown(subjectKind || "a subject")} ${shown(subjectName)}; subjects may only be ServiceAccounts this provider ships`,
      );
    else if (subject.namespace !== context.namespace || !own.serviceAccounts.has(subjectName))
      add(
        "own-service-accounts",
        `binds ServiceAccount ${shown(String(subject.namespace ?? ""))}/${shown(subjectName)}, which this provider does not ship`,
      );
  }
}

/** Where a webhook configuration or a CRD's conversion webhook sends requests: only a Service of its own. */
function checkClientConfig(clientConfig: unknown, who: string, own: Own, add: Add): void {
  const config = isRecord(clientConfig) ? clientConfig : {};
  if (config.url !== undefined) {
    add("webhooks", `${who} calls a URL; it may only call a Service this provider ships`);
    return;
  }
  const service = text(getPath(config, ["service", "name"]));
  if (service === undefined)
    add("webhooks", `${who} names no Service; it may only call a Service this provider ships`);
  else if (!own.services.has(service))
    add("webhooks", `${who} calls Service ${shown(service)}, which this provider does not ship`);
}

function checkWebhooks(o: KubeObject, own: Own, add: Add): void {
  const webhooks = list(o.webhooks);
  if (!webhooks) {
    add("webhooks", "webhooks is not a list");
    return;
  }
  const ownGroups = [...own.apiGroups].sort().join(", ") || "none";
  for (const w of webhooks) {
    const webhook = isRecord(w) ? w : {};
    const who = `webhook ${shown(text(webhook.name) ?? "(unnamed)")}`;
    checkClientConfig(webhook.clientConfig, who, own, add);
    const rules = list(webhook.rules);
    if (!rules) {
      add("webhooks", `${who} rules is not a list`);
      continue;
    }
    for (const r of rules) {
      const groups = list(isRecord(r) ? r.apiGroups : undefined);
      if (!groups) {
        add("webhooks", `${who} has a rule whose apiGroups is not a list`);
        continue;
      }
      for (const g of groups)
        if (typeof g !== "string" || !own.apiGroups.has(g))
          add(
            "webhooks",
            `${who} matches API group ${JSON.stringify(shown(String(g)))}, not one of this provider's own (${ownGroups})`,
          );
    }
  }
}

function checkCrd(o: KubeObject, own: Own, type: ProviderType, add: Add): void {
  const group = getPath(o, ["spec", "group"]);
  const groups = PROVIDER_API_GROUPS[type];
  if (typeof group !== "string" || group === "") add("api-groups", "defines no API group");
  else if (!groups.includes(group))
    add(
      "api-groups",
      `defines API group ${shown(group)}; ${type === "core" ? "the core provider's" : "an infrastructure provider's"} CRDs are in ${groups.slice(0, -1).join(", ")} or ${groups.at(-1)}`,
    );
  const conversion = getPath(o, ["spec", "conversion"]);
  if (!isRecord(conversion)) return;
  for (const clientConfig of [
    getPath(conversion, ["webhook", "clientConfig"]),
    conversion.webhookClientConfig,
  ])
    if (clientConfig !== undefined) checkClientConfig(clientConfig, "the conversion webhook", own, add);
}

/** restricted-v2 admits these volume types only. */
const RESTRICTED_VOLUMES = new Set([
  "configMap",
  "csi",
  "downwardAPI",
  "emptyDir",
  "ephemeral",
  "persistentVolumeClaim",
  "projected",
  "secret",
]);
const REQUIRED_SCC = "openshift.io/required-scc";

/** A Deployment's pod template: its ServiceAccount, restricted-v2, its images, and the product's Secrets. */
function checkPod(template: unknown, own: Own, context: BoundsContext, add: Add): void {
  if (isRecord(template) && carriesProductLabel(labelsOf(template as KubeObject)))
    add(
      "product-objects",
      `the pod carries label ${PRODUCT_LABEL_TEXT}, the product's own: the product's Service would send the API server's admission reviews to it`,
    );
  const scc = getPath(template, ["metadata", "annotations", REQUIRED_SCC]);
  if (scc !== undefined && scc !== "restricted-v2")
    add("restricted-v2", `the pod asks for SCC ${shown(String(scc))}`);
  const spec = isRecord(getPath(template, ["spec"]))
    ? (getPath(template, ["spec"]) as Record<string, unknown>)
    : {};

  const serviceAccount = text(spec.serviceAccountName) ?? text(spec.serviceAccount);
  const deprecated = text(spec.serviceAccount);
  if (serviceAccount === undefined || serviceAccount === "")
    add(
      "own-service-accounts",
      "runs pods as the namespace's default ServiceAccount; name a ServiceAccount this provider ships",
    );
  else if (
    !own.serviceAccounts.has(serviceAccount) ||
    (deprecated !== undefined && deprecated !== serviceAccount)
  )
    add(
      "own-service-accounts",
      `runs pods as ServiceAccount ${shown(deprecated !== undefined && deprecated !== serviceAccount ? deprecated : serviceAccount)}, which this provider does not ship`,
    );

  for (const [field, what] of [
    ["hostNetwork", "network"],
    ["hostPID", "PID"],
    ["hostIPC", "IPC"],
  ] as const)
    if (spec[field] === true) add("restricted-v2", `the pod uses the host's ${what} namespace`);
  checkSecurityContext(spec.securityContext, "the pod", add);

  const productSecret = (name: unknown, who: string): void => {
    if (typeof name === "string" && isProductName(name))
      add("product-objects", `${who} reads Secret ${shown(name)}, the product's own`);
  };
  const volumes = list(spec.volumes) ?? [];
  for (const v of volumes) {
    const volume = isRecord(v) ? v : {};
    const who = `volume ${shown(text(volume.name) ?? "(unnamed)")}`;
    for (const type of Object.keys(volume).filter((k) => k !== "name"))
      if (!RESTRICTED_VOLUMES.has(type)) add("restricted-v2", `${who} is a ${shown(type)} volume`);
    productSecret(getPath(volume, ["secret", "secretName"]), who);
    for (const source of list(getPath(volume, ["projected", "sources"])) ?? [])
      productSecret(getPath(source, ["secret", "name"]), who);
  }

  for (const field of ["initContainers", "containers", "ephemeralContainers"]) {
    const containers = list(spec[field]);
    if (!containers) {
      add("restricted-v2", `${field} is not a list`);
      continue;
    }
    for (const c of containers) {
      const container = isRecord(c) ? c : {};
      const who = `container ${shown(text(container.name) ?? "(unnamed)")}`;
      checkSecurityContext(container.securityContext, who, add);
      for (const p of list(container.ports) ?? []) {
        const hostPort = getPath(p, ["hostPort"]);
        if (hostPort !== undefined && hostPort !== 0)
          add("restricted-v2", `${who} uses host port ${shown(String(hostPort))}`);
      }
      const image = container.image;
      if (typeof image !== "string" || !context.images.has(image))
        add(
          "images",
          `${who} runs image ${shown(String(image))}, which is not a value of the images ConfigMap ${shown(context.imagesConfigMap)}`,
        );
      for (const e of list(container.env) ?? [])
        productSecret(getPath(e, ["valueFrom", "secretKeyRef", "name"]), who);
      for (const e of list(container.envFrom) ?? []) productSecret(getPath(e, ["secretRef", "name"]), who);
    }
  }
}

/** What restricted-v2 refuses in a pod's or a container's securityContext. */
function checkSecurityContext(value: unknown, who: string, add: Add): void {
  if (!isRecord(value)) return;
  if (value.privileged === true) add("restricted-v2", `${who} is privileged`);
  if (value.allowPrivilegeEscalation === true) add("restricted-v2", `${who} allows privilege escalation`);
  if (value.runAsUser === 0) add("restricted-v2", `${who} runs as root (runAsUser 0)`);
  for (const cap of list(getPath(value, ["capabilities", "add"])) ?? [])
    if (cap !== "NET_BIND_SERVICE") add("restricted-v2", `${who} adds capability ${shown(String(cap))}`);
  if (value.procMount !== undefined && value.procMount !== "Default")
    add("restricted-v2", `${who} sets procMount ${shown(String(value.procMount))}`);
  const seLinuxType = getPath(value, ["seLinuxOptions", "type"]);
  if (seLinuxType !== undefined && seLinuxType !== "")
    add("restricted-v2", `${who} sets SELinux type ${shown(String(seLinuxType))}`);
  const seccomp = getPath(value, ["seccompProfile", "type"]);
  if (seccomp !== undefined && seccomp !== "RuntimeDefault")
    add("restricted-v2", `${who} sets seccomp profile ${shown(String(seccomp))}`);
  if (getPath(value, ["windowsOptions", "hostProcess"]) === true)
    add("restricted-v2", `${who} runs as a Windows host process`);
}
