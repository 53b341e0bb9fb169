/**
 * The transport ConfigMaps `--seed demo-providers` loads in local mode (SPEC §6): small but real-shaped core
 * (cluster-api) and AWS components — CRDs (one cluster-scoped), a ServiceAccount with a Role and
 * ClusterRole, a webhook Service, and a manager Deployment using the image placeholder and `${VAR:=default}`
 * variables — packed by pack.ts exactly as `pack-provider` would, plus the images ConfigMap. The CRDs are
 * ones the project's own CRDs (manifests/crds) do not define, so installing them never replaces a schema the
 * product depends on. `seedDemoProviders` writes them (and an AWS Infrastructure when none exists).
 */
import type { KubeClient } from "../kube/client.js";
import { ConflictError } from "../kube/errors.js";
import { KINDS } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import { infrastructure } from "../local/seed.js";
import { packProvider } from "./pack.js";

const crd = (
  group: string,
  kind: string,
  plural: string,
  scope: "Namespaced" | "Cluster",
  version: string,
): string => `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${plural}.${group}
  annotations:
    controller-gen.kubebuilder.io/version: v0.17.2
spec:
  group: ${group}
  names:
    kind: ${kind}
    listKind: ${kind}List
    plural: ${plural}
    singular: ${kind.toLowerCase()}
  scope: ${scope}
  versions:
  - name: ${version}
    served: true
    storage: true
    subresources:
      status: {}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion:
            type: string
          kind:
            type: string
          metadata:
            type: object
          spec:
            type: object
            x-kubernetes-preserve-unknown-fields: true
          status:
            type: object
            x-kubernetes-preserve-unknown-fields: true
`;

const manager = (o: { name: string; serviceAccount: string; args: string[]; labels: string }): string => `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${o.name}
  namespace: capi-system
  labels:
    ${o.labels}
spec:
  replicas: \${MANAGER_REPLICAS:=1}
  selector:
    matchLabels:
      ${o.labels}
  template:
    metadata:
      labels:
        ${o.labels}
    spec:
      serviceAccountName: ${o.serviceAccount}
      containers:
      - name: manager
        image: to.be/replaced:v99
        command:
        - /manager
        args:
${o.args.map((a) => `        - ${a}`).join("\n")}
        ports:
        - containerPort: 9443
          name: webhook-server
          protocol: TCP
        volumeMounts:
        - mountPath: /tmp/k8s-webhook-server/serving-certs
          name: cert
          readOnly: true
      volumes:
      - name: cert
        secret:
          secretName: ${o.name.replace("-controller-manager", "")}-webhook-service-cert
`;

const rbac = (prefix: string, serviceAccount: string, clusterRules: string): string => `
apiVersion: v1
kind: ServiceAccount
metadata:
  name: ${serviceAccount}
  namespace: capi-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: ${prefix}-leader-election-role
  namespace: capi-system
rules:
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: ${prefix}-leader-election-rolebinding
  namespace: capi-system
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: ${prefix}-leader-election-role
subjects:
- kind: ServiceAccount
  name: ${serviceAccount}
  namespace: capi-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: ${prefix}-manager-role
rules:
${clusterRules}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: ${prefix}-manager-rolebinding
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: ${prefix}-manager-role
subjects:
- kind: ServiceAccount
  name: ${serviceAccount}
  namespace: capi-system
---
apiVersion: v1
kind: Service
metadata:
  name: ${prefix}-webhook-service
  namespace: capi-system
spec:
  ports:
  - port: 443
    targetPort: webhook-server
  selector:
    cluster.x-k8s.io/provider: ${prefix === "capi" ? "cluster-api" : "infrastructure-aws"}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: ${prefix}-serving-cert
  namespace: capi-system
spec:
  dnsNames:
  - ${prefix}-webhook-service.capi-system.svc
  - ${prefix}-webhook-service.capi-system.svc.cluster.local
  issuerRef:
    kind: Issuer
    name: ${prefix}-selfsigned-issuer
  secretName: ${prefix}-webhook-service-cert
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  name: ${prefix}-selfsigned-issuer
  namespace: capi-system
spec:
  selfSigned: {}
`;

/** A clusterctl variable with its default, as released components write it: `${NAME:=default}`. */
const variable = (name: string, fallback: string): string => `\${${name}:=${fallback}}`;

/** The released-style components YAML of the demo core provider (cluster-api v1.10.0). */
export const DEMO_CORE_COMPONENTS = [
  `
apiVersion: v1
kind: Namespace
metadata:
  name: capi-system
`,
  crd("cluster.x-k8s.io", "MachineHealthCheck", "machinehealthchecks", "Namespaced", "v1beta2"),
  crd("cluster.x-k8s.io", "ClusterClass", "clusterclasses", "Namespaced", "v1beta2"),
  rbac(
    "capi",
    "capi-manager",
    `- apiGroups: ["cluster.x-k8s.io"]
  resources: ["*"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]`,
  ),
  manager({
    name: "capi-controller-manager",
    serviceAccount: "capi-manager",
    labels: "cluster.x-k8s.io/provider: cluster-api",
    args: [
      "--leader-elect",
      `--diagnostics-address=${variable("CAPI_DIAGNOSTICS_ADDRESS", ":8443")}`,
      `--feature-gates=MachinePool=${variable("EXP_MACHINE_POOL", "false")},ClusterTopology=${variable("CLUSTER_TOPOLOGY", "false")}`,
    ],
  }),
].join("---");

/** The released-style components YAML of the demo AWS provider (v2.9.0). */
export const DEMO_AWS_COMPONENTS = [
  crd(
    "infrastructure.cluster.x-k8s.io",
    "AWSClusterTemplate",
    "awsclustertemplates",
    "Namespaced",
    "v1beta2",
  ),
  crd(
    "infrastructure.cluster.x-k8s.io",
    "AWSClusterControllerIdentity",
    "awsclustercontrolleridentities",
    "Cluster",
    "v1beta2",
  ),
  rbac(
    "capa",
    "capa-controller-manager",
    `- apiGroups: ["infrastructure.cluster.x-k8s.io"]
  resources: ["*"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]`,
  ),
  manager({
    name: "capa-controller-manager",
    serviceAccount: "capa-controller-manager",
    labels: "cluster.x-k8s.io/provider: infrastructure-aws",
    args: [
      "--leader-elect",
      `--v=${variable("CAPA_LOGLEVEL", "0")}`,
      `--diagnostics-address=${variable("CAPA_DIAGNOSTICS_ADDRESS", ":8443")}`,
      `--feature-gates=EKS=${variable("CAPA_EKS", "false")},MachinePool=${variable("EXP_MACHINE_POOL", "false")}`,
    ],
  }),
].join("---");

export const DEMO_IMAGES = Object.freeze({
  "cluster-api": "registry.k8s.io/cluster-api/cluster-api-controller:v1.10.0",
  "infrastructure-aws": "registry.k8s.io/cluster-api-aws/cluster-api-aws-controller:v2.9.0",
});

const packed = (
  name: string,
  type: string,
  version: string,
  namespace: string,
  components: string,
): KubeObject => {
  const result = packProvider({ name, type, version, namespace, components });
  if (!result.ok) throw new Error(`demo provider ${name} does not pack: ${result.error}`);
  return result.configMap;
};

/** The two transport ConfigMaps (core, AWS) in `capiNamespace`. */
export function demoProviderConfigMaps(capiNamespace: string): KubeObject[] {
  return [
    packed("cluster-api", "core", "v1.10.0", capiNamespace, DEMO_CORE_COMPONENTS),
    packed("aws", "infrastructure", "v2.9.0", capiNamespace, DEMO_AWS_COMPONENTS),
  ];
}

function demoImagesConfigMap(capiNamespace: string, name: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: capiNamespace },
    data: { ...DEMO_IMAGES },
  };
}

const createIfMissing = async (client: KubeClient, type: typeof KINDS.configMap, o: KubeObject) => {
  try {
    return await client.create(type, o);
  } catch (e) {
    if (e instanceof ConflictError && e.alreadyExists) return undefined;
    throw e;
  }
};

/** Writes the demo providers as an admin would: transports, images, and an AWS Infrastructure if none. */
export async function seedDemoProviders(
  admin: KubeClient,
  settings: { capiNamespace: string; installerImagesConfigMap: string },
): Promise<void> {
  const infra = infrastructure();
  const created = await createIfMissing(admin, KINDS.infrastructure, infra);
  if (created) await admin.updateStatus(KINDS.infrastructure, { ...created, status: infra.status });
  await createIfMissing(
    admin,
    KINDS.configMap,
    demoImagesConfigMap(settings.capiNamespace, settings.installerImagesConfigMap),
  );
  for (const configMap of demoProviderConfigMaps(settings.capiNamespace))
    await createIfMissing(admin, KINDS.configMap, configMap);
}
