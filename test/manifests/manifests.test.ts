/**
 * The deployable manifests (SPEC §9, §2.2, §3.4; issue 9): the kustomize base, the cert-manager overlay and
 * the installer are rendered with the real `kubectl kustomize` and their objects checked — RBAC by the
 * requests the product makes (and must never be able to make), the webhook configurations against the
 * settings table of src/config.ts so they cannot drift, the Deployment's placement, probes, shutdown
 * timing and hardening, and the cert-manager overlay's replacement of the service-ca annotations.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import {
  type LabelSelector,
  namespaceSelectorMatches,
  parseRules,
  ruleMatches,
} from "../../src/apiserver/admission/matching.js";
import type { AdmissionAttributes } from "../../src/apiserver/admission/types.js";
import { listenHosts, parseConfig, SETTINGS } from "../../src/config.js";
import { CEILING_NAME, CLUSTER_API_GROUPS, ceilingRoles } from "../../src/installer/ceiling.js";
import { PRODUCT_LABEL } from "../../src/installer/model.js";
import { INFRA_GROUP, type ResourceType } from "../../src/kube/kinds.js";
import { getPath, isRecord, type KubeObject } from "../../src/kube/object.js";
import { METRIC_NAMES } from "../../src/migration/metrics.js";
import { PLATFORMS } from "../../src/platforms/registry.js";
import {
  type Access,
  allRules,
  grants,
  markdownAnchors,
  ofKind,
  renderKustomization,
  selectorMatches,
  theOne,
} from "./helpers.js";

const MAPI_NS = SETTINGS.mapiNamespace.default;
const CAPI_NS = SETTINGS.capiNamespace.default;
const CONTROLLER_USERS = SETTINGS.controllerUsers.default;
const PRODUCT = { namespace: CAPI_NS, name: "machine-api-migration" };
const INSTALLER = { namespace: CAPI_NS, name: "machine-api-migration-installer" };
const SERVICE_CA_CABUNDLE = "service.beta.openshift.io/inject-cabundle";
const SERVICE_CA_SECRET = "service.beta.openshift.io/serving-cert-secret-name";
const CERT_MANAGER_INJECT = "cert-manager.io/inject-ca-from";
/** SPEC §2.1: who may scrape the metrics listener; bound to the platform Prometheus. */
const METRICS_READER = "machine-api-migration-metrics-reader";
const PROMETHEUS = { namespace: "openshift-monitoring", name: "prometheus-k8s" };

let base: KubeObject[];
let certManager: KubeObject[];
let installer: KubeObject[];

beforeAll(async () => {
  [base, certManager, installer] = await Promise.all([
    renderKustomization("manifests"),
    renderKustomization("manifests/overlays/cert-manager"),
    renderKustomization("manifests/installer"),
  ]);
}, 60_000);

const renders = () =>
  [
    ["base", base],
    ["cert-manager overlay", certManager],
    ["installer", installer],
  ] as const;

type Container = Record<string, unknown> & { name: string; args?: string[]; command?: string[] };
const podSpec = (d: KubeObject): Record<string, unknown> => {
  const spec = getPath(d, ["spec", "template", "spec"]);
  if (!isRecord(spec)) throw new Error(`Deployment ${d.metadata?.name} has no pod spec`);
  return spec;
};
const containerOf = (d: KubeObject): Container => {
  const containers = podSpec(d).containers;
  if (!Array.isArray(containers) || containers.length !== 1)
    throw new Error(`Deployment ${d.metadata?.name} should run exactly one container`);
  return containers[0] as Container;
};
const productDeployment = (objects: readonly KubeObject[]) =>
  theOne(objects, "Deployment", "machine-api-migration");

describe("every kustomization (SPEC §9)", () => {
  it("renders with kubectl kustomize and holds no Namespace", () => {
    for (const [label, objects] of renders()) {
      expect(objects.length, label).toBeGreaterThan(0);
      expect(ofKind(objects, "Namespace"), label).toEqual([]);
    }
  });

  it("RBAC has no wildcard verb, resource, group or name, and no non-resource URL but a scraper's get /metrics", () => {
    for (const [label, objects] of renders()) {
      const rules = allRules(objects);
      expect(rules.length, label).toBeGreaterThan(0);
      for (const { where, rule } of rules) {
        // The installer's ceiling (SPEC §6) bounds what providers may grant, and a provider's CRDs add
        // resources to the Cluster API groups that nobody can list in advance: there, and only there, every
        // resource of a Cluster API group, and controller-runtime's /metrics URL.
        const ceiling = where === `ClusterRole ${CEILING_NAME}` || where === `Role ${CEILING_NAME}`;
        const anyResource =
          ceiling && (rule.apiGroups ?? []).every((g) => CLUSTER_API_GROUPS.includes(g)) ? ["*"] : [];
        const fields = [
          rule.verbs,
          (rule.resources ?? []).filter((r) => !anyResource.includes(r)),
          rule.apiGroups ?? [],
          rule.resourceNames ?? [],
        ];
        for (const field of fields)
          expect(
            field.filter((v) => v.includes("*")),
            `${label}: ${where}`,
          ).toEqual([]);
        const metricsReader = where === `ClusterRole ${METRICS_READER}`;
        if ((ceiling || metricsReader) && rule.nonResourceURLs !== undefined)
          expect(rule, `${label}: ${where}`).toEqual({ nonResourceURLs: ["/metrics"], verbs: ["get"] });
        else expect(rule.nonResourceURLs, `${label}: ${where}`).toBeUndefined();
      }
    }
  });

  it("every namespaced object names its namespace (the base has no kustomize namespace override)", () => {
    const clusterScoped = new Set([
      "ClusterRole",
      "ClusterRoleBinding",
      "ValidatingWebhookConfiguration",
      "MutatingWebhookConfiguration",
      "ValidatingAdmissionPolicy",
      "ValidatingAdmissionPolicyBinding",
    ]);
    for (const [label, objects] of renders())
      for (const o of objects.filter((x) => !clusterScoped.has(String(x.kind))))
        expect(o.metadata?.namespace, `${label}: ${o.kind} ${o.metadata?.name}`).toMatch(/^openshift-/);
  });
});

describe("product RBAC: least privilege by request (SPEC §9, §3, §4, §7)", () => {
  const all = (group: string, resources: string[], namespace: string, verbs: string[]): Access[] =>
    resources.flatMap((resource) => verbs.map((verb) => ({ verb, group, resource, namespace })));
  // No `update`: the product writes these only by PATCH and server-side apply (src/kube/client.ts `patch`);
  // its one PUT is the Lease's renewal (src/kube/leader.ts), decision 189.
  const READ_WRITE = ["get", "list", "watch", "create", "patch", "delete"];
  const STATUS = ["get", "patch"];
  const needed: [string, Access[]][] = [
    [
      "MAPI machines and machinesets",
      all("machine.openshift.io", ["machines", "machinesets"], MAPI_NS, READ_WRITE),
    ],
    [
      "MAPI status subresources",
      all("machine.openshift.io", ["machines/status", "machinesets/status"], MAPI_NS, STATUS),
    ],
    [
      "CAPI machines and machinesets",
      all("cluster.x-k8s.io", ["machines", "machinesets"], CAPI_NS, READ_WRITE),
    ],
    [
      "CAPI status subresources",
      all("cluster.x-k8s.io", ["machines/status", "machinesets/status"], CAPI_NS, STATUS),
    ],
    ["CAPI clusters (read)", all("cluster.x-k8s.io", ["clusters"], CAPI_NS, ["get", "list", "watch"])],
    [
      "AWS machines and templates",
      all("infrastructure.cluster.x-k8s.io", ["awsmachines", "awsmachinetemplates"], CAPI_NS, READ_WRITE),
    ],
    ["AWSMachine status", all("infrastructure.cluster.x-k8s.io", ["awsmachines/status"], CAPI_NS, STATUS)],
    [
      "AWSClusters (read)",
      all("infrastructure.cluster.x-k8s.io", ["awsclusters"], CAPI_NS, ["get", "list", "watch"]),
    ],
    [
      "Infrastructure informer",
      all("config.openshift.io", ["infrastructures"], "", ["get", "list", "watch"]),
    ],
    [
      "FeatureGate/cluster (§0.1)",
      [
        {
          verb: "get",
          group: "config.openshift.io",
          resource: "featuregates",
          namespace: "",
          name: "cluster",
        },
      ],
    ],
    [
      "the MAPI CRDs (§0.1) and the twins' CRDs (§4.6)",
      [
        "machines.machine.openshift.io",
        "machinesets.machine.openshift.io",
        "machines.cluster.x-k8s.io",
        "machinesets.cluster.x-k8s.io",
        "awsmachines.infrastructure.cluster.x-k8s.io",
      ].map((name) => ({
        verb: "get",
        group: "apiextensions.k8s.io",
        resource: "customresourcedefinitions",
        namespace: "",
        name,
      })),
    ],
    [
      "the two namespaces (§4.6)",
      [MAPI_NS, CAPI_NS].map((name) => ({
        verb: "get",
        group: "",
        resource: "namespaces",
        namespace: "",
        name,
      })),
    ],
    [
      "leader election Lease (§7)",
      [
        { verb: "create", group: "coordination.k8s.io", resource: "leases", namespace: CAPI_NS },
        ...["get", "update"].map((verb) => ({
          verb,
          group: "coordination.k8s.io",
          resource: "leases",
          namespace: CAPI_NS,
          name: SETTINGS.leaseName.default,
        })),
      ],
    ],
    [
      "Events in both namespaces (§3.4)",
      [MAPI_NS, CAPI_NS].flatMap((namespace) => all("", ["events"], namespace, ["create", "patch"])),
    ],
    [
      "TokenReviews and SubjectAccessReviews: who may scrape the metrics listener (§2.1)",
      [
        { verb: "create", group: "authentication.k8s.io", resource: "tokenreviews", namespace: "" },
        { verb: "create", group: "authorization.k8s.io", resource: "subjectaccessreviews", namespace: "" },
      ],
    ],
    [
      "the platform's migration controllers check (§0.1)",
      [{ verb: "get", group: "apps", resource: "deployments", namespace: CAPI_NS, name: "capi-controllers" }],
    ],
    // SPEC §0, §5.5: on every platform of the registry, what the AWS rows above grant on AWS's kinds.
    ...PLATFORMS.flatMap((p): [string, Access[]][] => [
      [
        `${p.platform}: ${p.infraMachine.kind} and ${p.infraMachineTemplate.kind}`,
        [p.infraMachine, p.infraMachineTemplate].flatMap((t) =>
          all(t.group, [t.plural], CAPI_NS, READ_WRITE),
        ),
      ],
      [
        `${p.platform}: ${p.infraMachine.kind} status`,
        all(p.infraMachine.group, [`${p.infraMachine.plural}/status`], CAPI_NS, STATUS),
      ],
      [
        `${p.platform}: ${p.infraCluster.kind} (read)`,
        all(p.infraCluster.group, [p.infraCluster.plural], CAPI_NS, ["get", "list", "watch"]),
      ],
      [
        `${p.platform}: the CRDs of ${p.infraMachine.kind} and ${p.infraMachineTemplate.kind} (§4.6)`,
        [p.infraMachine, p.infraMachineTemplate].map((t) => ({
          verb: "get",
          group: "apiextensions.k8s.io",
          resource: "customresourcedefinitions",
          namespace: "",
          name: `${t.plural}.${t.group}`,
        })),
      ],
    ]),
  ];
  it.each(needed)("grants %s", (_what, accesses) => {
    for (const access of accesses) expect(grants(base, PRODUCT, access), JSON.stringify(access)).toBe(true);
  });

  const forbidden: [string, Access][] = [
    ["reading Secrets", { verb: "get", group: "", resource: "secrets", namespace: CAPI_NS }],
    ["listing Secrets", { verb: "list", group: "", resource: "secrets", namespace: MAPI_NS }],
    ["reading ConfigMaps", { verb: "list", group: "", resource: "configmaps", namespace: CAPI_NS }],
    ["touching Pods", { verb: "delete", group: "", resource: "pods", namespace: CAPI_NS }],
    [
      "MAPI machines outside the MAPI namespace",
      { verb: "patch", group: "machine.openshift.io", resource: "machines", namespace: "kube-system" },
    ],
    [
      "CAPI machines in the MAPI namespace",
      { verb: "create", group: "cluster.x-k8s.io", resource: "machines", namespace: MAPI_NS },
    ],
    [
      "deleting CRDs",
      { verb: "delete", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", namespace: "" },
    ],
    [
      "reading an unrelated CRD",
      {
        verb: "get",
        group: "apiextensions.k8s.io",
        resource: "customresourcedefinitions",
        namespace: "",
        name: "clusterversions.config.openshift.io",
      },
    ],
    [
      "another Lease",
      {
        verb: "update",
        group: "coordination.k8s.io",
        resource: "leases",
        namespace: CAPI_NS,
        name: "cluster-capi-operator-leader",
      },
    ],
    [
      "editing webhook configurations",
      {
        verb: "update",
        group: "admissionregistration.k8s.io",
        resource: "validatingwebhookconfigurations",
        namespace: "",
      },
    ],
    [
      "editing the Infrastructure",
      { verb: "update", group: "config.openshift.io", resource: "infrastructures", namespace: "" },
    ],
    [
      "creating RBAC",
      { verb: "create", group: "rbac.authorization.k8s.io", resource: "rolebindings", namespace: CAPI_NS },
    ],
    [
      "minting ServiceAccount tokens",
      { verb: "create", group: "", resource: "serviceaccounts/token", namespace: CAPI_NS },
    ],
    [
      "reviewing access in a namespace on someone's behalf (only the cluster-wide review is needed)",
      {
        verb: "create",
        group: "authorization.k8s.io",
        resource: "localsubjectaccessreviews",
        namespace: CAPI_NS,
      },
    ],
    [
      "the MachineSet scale subresource (controllers patch spec.replicas)",
      { verb: "update", group: "machine.openshift.io", resource: "machinesets/scale", namespace: MAPI_NS },
    ],
    // The product never PUTs a machine kind or its status: it PATCHes and applies (decision 189).
    ...[
      { group: "machine.openshift.io", resources: ["machines", "machinesets"], namespace: MAPI_NS },
      { group: "cluster.x-k8s.io", resources: ["machines", "machinesets"], namespace: CAPI_NS },
      ...PLATFORMS.map((p) => ({
        group: p.infraMachine.group,
        resources: [p.infraMachine.plural],
        namespace: CAPI_NS,
      })),
    ].flatMap(({ group, resources, namespace }) =>
      resources.flatMap((plural) =>
        [plural, `${plural}/status`].map((resource): [string, Access] => [
          `update (PUT) of ${resource}.${group}: the product only patches and applies`,
          { verb: "update", group, resource, namespace },
        ]),
      ),
    ),
    ...PLATFORMS.map((p): [string, Access] => [
      `update (PUT) of ${p.infraMachineTemplate.plural}.${p.infraMachineTemplate.group}: the product only patches and applies`,
      {
        verb: "update",
        group: p.infraMachineTemplate.group,
        resource: p.infraMachineTemplate.plural,
        namespace: CAPI_NS,
      },
    ]),
  ];
  it.each(forbidden)("never grants %s", (_what, access) => {
    expect(grants(base, PRODUCT, access)).toBe(false);
  });

  /**
   * Every request the product could make on a platform's infrastructure kinds, by role: the kind, each of its
   * subresources and its CRD, every verb, in both namespaces.
   */
  const platformAccesses = (p: (typeof PLATFORMS)[number]): [string, Access][] => {
    const roles: [string, ResourceType][] = [
      ["InfraMachine", p.infraMachine],
      ["InfraMachineTemplate", p.infraMachineTemplate],
      ["InfraCluster", p.infraCluster],
    ];
    const verbs = [...READ_WRITE, "update", "deletecollection"];
    return roles.flatMap(([role, t]) => [
      ...["", "/status", "/finalizers", "/scale"].flatMap((sub) =>
        [MAPI_NS, CAPI_NS].flatMap((namespace) =>
          verbs.map((verb): [string, Access] => [
            `${verb} ${role}${sub} in ${namespace}`,
            { verb, group: t.group, resource: `${t.plural}${sub}`, namespace },
          ]),
        ),
      ),
      ...verbs.map((verb): [string, Access] => [
        `${verb} the CRD of ${role}`,
        {
          verb,
          group: "apiextensions.k8s.io",
          resource: "customresourcedefinitions",
          namespace: "",
          name: `${t.plural}.${t.group}`,
        },
      ]),
    ]);
  };
  const aws = PLATFORMS.find((p) => p.platform === "AWS")!;
  it.each(PLATFORMS.filter((p) => p !== aws).map((p) => [p.platform, p] as const))(
    "grants on %s's infrastructure kinds exactly what it grants on AWS's, role for role (SPEC §0)",
    (_name, platform) => {
      const granted = (p: typeof platform) =>
        platformAccesses(p)
          .filter(([, access]) => grants(base, PRODUCT, access))
          .map(([what]) => what);
      expect(granted(aws).length).toBeGreaterThan(0);
      expect(granted(platform)).toEqual(granted(aws));
    },
  );

  it("binds the service account whose user name is the first controller user (SPEC §2.2)", () => {
    expect(CONTROLLER_USERS[0]).toBe(`system:serviceaccount:${PRODUCT.namespace}:${PRODUCT.name}`);
    expect(theOne(base, "ServiceAccount", PRODUCT.name).metadata?.namespace).toBe(PRODUCT.namespace);
    expect(podSpec(productDeployment(base)).serviceAccountName).toBe(PRODUCT.name);
  });
});

describe("webhook configurations (SPEC §2.2)", () => {
  const CONFIGURATIONS = [
    {
      name: "machine-api-migration-deny",
      kind: "ValidatingWebhookConfiguration",
      failurePolicy: "Fail",
      path: "/validate",
      operations: ["CREATE", "UPDATE"],
    },
    {
      name: "machine-api-migration-guard",
      kind: "ValidatingWebhookConfiguration",
      failurePolicy: "Ignore",
      path: "/validate-guard",
      operations: ["DELETE", "UPDATE"],
      /** cluster-delete-guard (SPEC §2.3): deleting the Cluster or its infrastructure cluster cascades. */
      deleteOnly: {
        "cluster.x-k8s.io": ["clusters"],
        [INFRA_GROUP]: PLATFORMS.map((p) => p.infraCluster.plural),
      },
    },
    {
      name: "machine-api-migration-mutate",
      kind: "MutatingWebhookConfiguration",
      failurePolicy: "Ignore",
      path: "/mutate",
      operations: ["CREATE"],
    },
  ];
  /** The machine kinds and the only subresources admission may see, per group (SPEC §2.2). */
  const MACHINE_RESOURCES: Record<string, string[]> = {
    "machine.openshift.io": [
      "machines",
      "machinesets",
      "machines/status",
      "machinesets/status",
      "machinesets/scale",
    ],
    "cluster.x-k8s.io": ["machines", "machinesets", "machinesets/scale"],
    [INFRA_GROUP]: PLATFORMS.flatMap((p) => [p.infraMachine.plural, p.infraMachineTemplate.plural]),
  };
  const webhooksOf = (c: KubeObject): Record<string, unknown>[] =>
    Array.isArray(c.webhooks) ? (c.webhooks as Record<string, unknown>[]) : [];
  const rulesOf = (w: Record<string, unknown>) =>
    (Array.isArray(w.rules) ? w.rules : []) as {
      operations: string[];
      apiGroups: string[];
      apiVersions: string[];
      resources: string[];
      scope?: string;
    }[];

  it("the base holds exactly the three configurations, one webhook each", () => {
    const configurations = [
      ...ofKind(base, "ValidatingWebhookConfiguration"),
      ...ofKind(base, "MutatingWebhookConfiguration"),
    ];
    expect(configurations.map((c) => c.metadata?.name).sort()).toEqual(
      CONFIGURATIONS.map((c) => c.name).sort(),
    );
    for (const c of configurations) expect(webhooksOf(c)).toHaveLength(1);
  });

  describe.each(CONFIGURATIONS)("$name", (expected) => {
    const webhook = () => webhooksOf(theOne(base, expected.kind, expected.name))[0]!;

    it(`failurePolicy ${expected.failurePolicy}, sideEffects None, admissionReviewVersions [v1], timeoutSeconds 5, matchPolicy Equivalent`, () => {
      expect(webhook()).toMatchObject({
        failurePolicy: expected.failurePolicy,
        sideEffects: "None",
        admissionReviewVersions: ["v1"],
        timeoutSeconds: 5,
        matchPolicy: "Equivalent",
      });
    });

    it(`rules: only the machine kinds and their subresources, operations ${expected.operations.join(", ")} (and DELETE of what cluster-delete-guard protects), namespaced`, () => {
      const rules = rulesOf(webhook());
      expect(rules.length).toBeGreaterThan(0);
      const deleteOnly: Record<string, string[]> = ("deleteOnly" in expected && expected.deleteOnly) || {};
      for (const rule of rules) {
        const guards = rule.apiGroups.every((g) => rule.resources.every((r) => deleteOnly[g]?.includes(r)));
        expect([...rule.operations].sort()).toEqual(guards ? ["DELETE"] : expected.operations);
        expect(rule.scope).toBe("Namespaced");
        expect(rule.apiVersions.filter((v) => v.includes("*"))).toEqual([]);
        if (guards) continue;
        for (const group of rule.apiGroups) {
          expect(Object.keys(MACHINE_RESOURCES)).toContain(group);
          for (const resource of rule.resources) expect(MACHINE_RESOURCES[group]).toContain(resource);
        }
      }
      const matched = rules.flatMap((r) => r.resources);
      for (const never of ["pods", "leases", "events", "configmaps", "secrets", "namespaces", "*"])
        expect(matched).not.toContain(never);
    });

    it("namespaceSelector matches only the MAPI and CAPI namespaces", () => {
      const selector = webhook().namespaceSelector;
      expect(selector).toBeDefined();
      const namespaces = [
        MAPI_NS,
        CAPI_NS,
        "kube-system",
        "kube-node-lease",
        "default",
        "openshift-monitoring",
      ];
      const matched = namespaces.filter((n) =>
        selectorMatches(selector, { "kubernetes.io/metadata.name": n }),
      );
      expect(matched).toEqual([MAPI_NS, CAPI_NS]);
    });

    it("matchConditions skip exactly the default controllerUsers of src/config.ts", () => {
      const conditions = webhook().matchConditions as { name: string; expression: string }[];
      expect(conditions).toHaveLength(1);
      const list = CONTROLLER_USERS.map((u) => `'${u}'`).join(", ");
      expect(conditions[0]!.expression).toBe(`!(request.userInfo.username in [${list}])`);
    });

    it("calls the product Service on its HTTPS port", () => {
      const service = theOne(base, "Service", "machine-api-migration");
      const ports = getPath(service, ["spec", "ports"]) as { port: number; targetPort: unknown }[];
      expect(webhook().clientConfig).toEqual({
        service: {
          name: "machine-api-migration",
          namespace: CAPI_NS,
          path: expected.path,
          port: ports[0]!.port,
        },
      });
    });
  });

  it("the mutating webhook may be re-invoked after other mutations (reinvocationPolicy IfNeeded)", () => {
    expect(
      webhooksOf(theOne(base, "MutatingWebhookConfiguration", "machine-api-migration-mutate"))[0],
    ).toMatchObject({
      reinvocationPolicy: "IfNeeded",
    });
  });

  describe.each(PLATFORMS.map((p) => [p.platform, p] as const))(
    "routes %s's infrastructure kinds wherever AWS's are (SPEC §0, §2.2), at the version its provider serves",
    (_name, platform) => {
      /** Which configurations a request reaches, by kube's own matching (src/apiserver/admission/matching.ts). */
      const reached = (
        type: ResourceType,
        operation: AdmissionAttributes["operation"],
        namespace: string,
      ) => {
        const a: AdmissionAttributes = {
          operation,
          kind: { group: type.group, version: type.version, kind: type.kind },
          resource: { group: type.group, version: type.version, resource: type.plural },
          subResource: "",
          name: "worker-a",
          namespace,
          namespaceLabels: { "kubernetes.io/metadata.name": namespace },
          object: { metadata: { name: "worker-a", labels: {} } },
          oldObject: null,
          userInfo: { username: "kube:admin", groups: ["system:cluster-admins"] },
          dryRun: false,
          options: null,
        };
        return CONFIGURATIONS.filter((c) =>
          webhooksOf(theOne(base, c.kind, c.name)).some(
            (w) =>
              parseRules(w.rules).some((rule) => ruleMatches(rule, a)) &&
              namespaceSelectorMatches(w.namespaceSelector as LabelSelector | undefined, a),
          ),
        ).map((c) => c.name);
      };
      const DENY = "machine-api-migration-deny";
      const GUARD = "machine-api-migration-guard";
      const MUTATE = "machine-api-migration-mutate";
      const machineKinds = [
        ["InfraMachine", platform.infraMachine],
        ["InfraMachineTemplate", platform.infraMachineTemplate],
      ] as const;

      it.each(machineKinds)(
        "%s: CREATE reaches -deny and -mutate, UPDATE -deny and -guard, DELETE -guard",
        (_role, type) => {
          expect(reached(type, "CREATE", CAPI_NS)).toEqual([DENY, MUTATE]);
          expect(reached(type, "UPDATE", CAPI_NS)).toEqual([DENY, GUARD]);
          expect(reached(type, "DELETE", CAPI_NS)).toEqual([GUARD]);
          expect(reached(type, "UPDATE", "kube-system")).toEqual([]);
        },
      );

      it("InfraCluster: only DELETE reaches -guard (cluster-delete-guard)", () => {
        const type = platform.infraCluster;
        expect(reached(type, "DELETE", CAPI_NS)).toEqual([GUARD]);
        expect(reached(type, "CREATE", CAPI_NS)).toEqual([]);
        expect(reached(type, "UPDATE", CAPI_NS)).toEqual([]);
      });
    },
  );

  it("the deny webhook sees the status subresource of the MAPI kinds only (SPEC §2.2)", () => {
    const rules = rulesOf(
      webhooksOf(theOne(base, "ValidatingWebhookConfiguration", "machine-api-migration-deny"))[0]!,
    );
    const statuses = rules.flatMap((r) =>
      r.resources.filter((x) => x.endsWith("/status")).map((x) => `${r.apiGroups.join(",")}:${x}`),
    );
    expect(statuses.sort()).toEqual([
      "machine.openshift.io:machines/status",
      "machine.openshift.io:machinesets/status",
    ]);
  });
});

describe("product Deployment (SPEC §9, §7)", () => {
  const deployment = () => productDeployment(base);
  const config = () => {
    const parsed = parseConfig(containerOf(deployment()).args ?? [], {});
    if (!parsed.ok) throw new Error(parsed.error);
    return parsed.config;
  };

  it("container args are valid serve flags (parsed by src/config.ts)", () => {
    const parsed = parseConfig(containerOf(deployment()).args ?? [], {});
    expect(parsed).toMatchObject({ ok: true, rest: [] });
  });

  it("sets no listen address: in a pod both listeners take every address, IPv6 too (SPEC §2.1, decision 188)", () => {
    expect(config()).toMatchObject({ webhookHost: undefined, metricsHost: undefined });
    expect(listenHosts(config(), "in-cluster")).toEqual({ webhook: undefined, metrics: undefined });
  });

  it("2 replicas in the CAPI namespace, priorityClass system-cluster-critical, never below 2 during a rollout", () => {
    expect(deployment().metadata?.namespace).toBe(CAPI_NS);
    expect(getPath(deployment(), ["spec", "replicas"])).toBe(2);
    expect(podSpec(deployment()).priorityClassName).toBe("system-cluster-critical");
    expect(getPath(deployment(), ["spec", "strategy", "rollingUpdate", "maxUnavailable"])).toBe(0);
  });

  it("runs only on control-plane nodes and tolerates their taints", () => {
    const terms = getPath(podSpec(deployment()), [
      "affinity",
      "nodeAffinity",
      "requiredDuringSchedulingIgnoredDuringExecution",
      "nodeSelectorTerms",
    ]) as { matchExpressions: { key: string; operator: string }[] }[];
    const controlPlaneKeys = ["node-role.kubernetes.io/master", "node-role.kubernetes.io/control-plane"];
    expect(terms.length).toBeGreaterThan(0);
    // Terms are ORed: each one must on its own require a control-plane label.
    for (const term of terms)
      expect(
        term.matchExpressions.some((e) => controlPlaneKeys.includes(e.key) && e.operator === "Exists"),
      ).toBe(true);
    const tolerations = podSpec(deployment()).tolerations as {
      key: string;
      operator: string;
      effect: string;
    }[];
    for (const key of controlPlaneKeys)
      expect(tolerations).toContainEqual({ key, operator: "Exists", effect: "NoSchedule" });
  });

  it("spreads its replicas over nodes (pod anti-affinity on the hostname, selecting its own pods)", () => {
    const terms = getPath(podSpec(deployment()), [
      "affinity",
      "podAntiAffinity",
      "preferredDuringSchedulingIgnoredDuringExecution",
    ]) as { podAffinityTerm: { topologyKey: string; labelSelector: unknown } }[];
    const podLabels = getPath(deployment(), ["spec", "template", "metadata", "labels"]) as Record<
      string,
      string
    >;
    expect(terms.map((t) => t.podAffinityTerm.topologyKey)).toContain("kubernetes.io/hostname");
    for (const t of terms) expect(selectorMatches(t.podAffinityTerm.labelSelector, podLabels)).toBe(true);
  });

  it("the Deployment selector, Service, PodDisruptionBudget (minAvailable 1) all select its pods and only them", () => {
    const podLabels = getPath(deployment(), ["spec", "template", "metadata", "labels"]) as Record<
      string,
      string
    >;
    const installerPodLabels = getPath(theOne(installer, "Deployment", INSTALLER.name), [
      "spec",
      "template",
      "metadata",
      "labels",
    ]) as Record<string, string>;
    const pdb = theOne(base, "PodDisruptionBudget", "machine-api-migration");
    expect(getPath(pdb, ["spec", "minAvailable"])).toBe(1);
    const serviceSelector = getPath(theOne(base, "Service", "machine-api-migration"), ["spec", "selector"]);
    for (const selector of [
      getPath(deployment(), ["spec", "selector"]),
      getPath(pdb, ["spec", "selector"]),
      { matchLabels: serviceSelector },
    ]) {
      expect(selectorMatches(selector, podLabels)).toBe(true);
      expect(selectorMatches(selector, installerPodLabels)).toBe(false);
    }
  });

  it("every selector of the product's own pods and Services names the label the installer refuses on a provider's (decision 117)", () => {
    const { key, value } = PRODUCT_LABEL;
    for (const [label, objects] of renders()) {
      const selectors: [string, unknown][] = [];
      for (const o of objects) {
        const name = `${o.kind} ${o.metadata?.name}`;
        if (o.kind === "Deployment") {
          selectors.push([name, getPath(o, ["spec", "selector"])]);
          const terms = getPath(podSpec(o), [
            "affinity",
            "podAntiAffinity",
            "preferredDuringSchedulingIgnoredDuringExecution",
          ]);
          for (const t of Array.isArray(terms) ? terms : [])
            selectors.push([`${name} anti-affinity`, getPath(t, ["podAffinityTerm", "labelSelector"])]);
        }
        if (o.kind === "Service") selectors.push([name, { matchLabels: getPath(o, ["spec", "selector"]) }]);
        if (o.kind === "PodDisruptionBudget" || o.kind === "ServiceMonitor")
          selectors.push([name, getPath(o, ["spec", "selector"])]);
        if (o.kind === "NetworkPolicy") selectors.push([name, getPath(o, ["spec", "podSelector"])]);
      }
      expect(selectors.length, label).toBeGreaterThan(0);
      for (const [name, selector] of selectors)
        expect(getPath(selector, ["matchLabels", key]), `${label}: ${name}`).toBe(value);
    }
  });

  it("probes /healthz (liveness) and /readyz (readiness) over HTTPS on the webhook port", () => {
    const c = containerOf(deployment());
    const ports = c.ports as { name: string; containerPort: number }[];
    const https = ports.find((p) => p.name === "https");
    expect(https?.containerPort).toBe(config().webhookPort);
    expect(getPath(c, ["livenessProbe", "httpGet"])).toEqual({
      path: "/healthz",
      port: "https",
      scheme: "HTTPS",
    });
    expect(getPath(c, ["readinessProbe", "httpGet"])).toEqual({
      path: "/readyz",
      port: "https",
      scheme: "HTTPS",
    });
    const service = theOne(base, "Service", "machine-api-migration");
    expect(getPath(service, ["spec", "ports"])).toContainEqual(
      expect.objectContaining({ port: 443, targetPort: "https" }),
    );
  });

  it("serves metrics on their own container port `metrics` (--metrics-port), which the Service exposes (SPEC §2.1)", () => {
    const c = containerOf(deployment());
    const ports = c.ports as { name: string; containerPort: number; protocol?: string }[];
    const metrics = ports.find((p) => p.name === "metrics");
    expect(metrics?.containerPort).toBe(config().metricsPort);
    expect(metrics?.containerPort).not.toBe(config().webhookPort);
    const service = theOne(base, "Service", "machine-api-migration");
    expect(getPath(service, ["spec", "ports"])).toContainEqual(
      expect.objectContaining({ name: "metrics", port: config().metricsPort, targetPort: "metrics" }),
    );
  });

  it("preStop sleeps at least the shutdown delay, and the grace period outlasts preStop + delay + a webhook timeout", () => {
    const command = getPath(containerOf(deployment()), [
      "lifecycle",
      "preStop",
      "exec",
      "command",
    ]) as string[];
    expect(command[0]).toBe("sleep");
    const preStop = Number(command[1]);
    const delay = config().shutdownDelay;
    expect(preStop).toBeGreaterThanOrEqual(delay);
    const grace = podSpec(deployment()).terminationGracePeriodSeconds as number;
    expect(grace).toBeGreaterThan(preStop + delay + 5);
  });

  it("is hardened: non-root, read-only root FS, no privilege escalation, no capabilities, RuntimeDefault seccomp", () => {
    for (const d of [deployment(), theOne(installer, "Deployment", INSTALLER.name)]) {
      const pod = podSpec(d);
      expect(pod.securityContext, String(d.metadata?.name)).toMatchObject({
        runAsNonRoot: true,
        seccompProfile: { type: "RuntimeDefault" },
      });
      // A fixed UID would be refused by OpenShift's restricted SCC, which assigns one.
      expect(getPath(pod, ["securityContext", "runAsUser"])).toBeUndefined();
      expect(containerOf(d).securityContext, String(d.metadata?.name)).toEqual({
        runAsNonRoot: true,
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ["ALL"] },
      });
      expect(pod.hostNetwork).toBeUndefined();
      expect(getPath(containerOf(d), ["resources", "requests", "cpu"])).toBeDefined();
      expect(getPath(containerOf(d), ["resources", "requests", "memory"])).toBeDefined();
    }
  });

  it("asks for the platform's reserved CPUs where workloads are partitioned (target.workload.openshift.io/management)", () => {
    const annotations = getPath(deployment(), ["spec", "template", "metadata", "annotations"]) as Record<
      string,
      string
    >;
    expect(JSON.parse(annotations["target.workload.openshift.io/management"] ?? "null")).toEqual({
      effect: "PreferredDuringScheduling",
    });
  });

  it("mounts the serving certificate Secret where --tls-cert-file and --tls-key-file point", () => {
    const c = containerOf(deployment());
    const mounts = c.volumeMounts as { name: string; mountPath: string; readOnly?: boolean }[];
    const volumes = podSpec(deployment()).volumes as { name: string; secret?: { secretName: string } }[];
    const secretName = getPath(theOne(base, "Service", "machine-api-migration"), [
      "metadata",
      "annotations",
      SERVICE_CA_SECRET,
    ]);
    const certVolume = volumes.find((v) => v.secret?.secretName === secretName);
    expect(certVolume).toBeDefined();
    const mount = mounts.find((m) => m.name === certVolume!.name);
    expect(mount?.readOnly).toBe(true);
    expect(config().tlsCertFile).toBe(`${mount!.mountPath}/tls.crt`);
    expect(config().tlsKeyFile).toBe(`${mount!.mountPath}/tls.key`);
  });
});

describe("OpenShift service-ca (base) and cert-manager (overlay)", () => {
  const webhookConfigurations = (objects: readonly KubeObject[]) => [
    ...ofKind(objects, "ValidatingWebhookConfiguration"),
    ...ofKind(objects, "MutatingWebhookConfiguration"),
  ];
  const annotations = (o: KubeObject) => o.metadata?.annotations ?? {};

  it("base: service-ca injects every caBundle and issues the serving Secret; no cert-manager objects", () => {
    for (const c of webhookConfigurations(base)) {
      expect(annotations(c)[SERVICE_CA_CABUNDLE], c.metadata?.name).toBe("true");
      expect(annotations(c)[CERT_MANAGER_INJECT]).toBeUndefined();
    }
    expect(annotations(theOne(base, "Service", "machine-api-migration"))[SERVICE_CA_SECRET]).toBe(
      "machine-api-migration-tls",
    );
    expect(base.filter((o) => String(o.apiVersion).startsWith("cert-manager.io/"))).toEqual([]);
  });

  it("overlay: no service-ca annotation is left anywhere", () => {
    for (const o of certManager) {
      expect(annotations(o)[SERVICE_CA_CABUNDLE], `${o.kind} ${o.metadata?.name}`).toBeUndefined();
      expect(annotations(o)[SERVICE_CA_SECRET], `${o.kind} ${o.metadata?.name}`).toBeUndefined();
    }
  });

  it("overlay: every webhook configuration injects the CA of a Certificate that writes the mounted Secret for the Service's DNS name", () => {
    const configurations = webhookConfigurations(certManager);
    expect(configurations).toHaveLength(3);
    const volumes = podSpec(productDeployment(certManager)).volumes as { secret?: { secretName: string } }[];
    const mounted = volumes.flatMap((v) => (v.secret ? [v.secret.secretName] : []));
    for (const c of configurations) {
      const [namespace, name] = String(annotations(c)[CERT_MANAGER_INJECT]).split("/");
      const certificate = certManager.find(
        (o) => o.kind === "Certificate" && o.metadata?.namespace === namespace && o.metadata?.name === name,
      );
      expect(certificate, c.metadata?.name).toBeDefined();
      expect(mounted).toContain(getPath(certificate, ["spec", "secretName"]));
      expect(getPath(certificate, ["spec", "dnsNames"])).toContain(`machine-api-migration.${CAPI_NS}.svc`);
      const issuer = getPath(certificate, ["spec", "issuerRef"]) as { name: string; kind: string };
      expect(certManager.some((o) => o.kind === issuer.kind && o.metadata?.name === issuer.name)).toBe(true);
    }
  });

  it("overlay: the serving certificate is signed by a CA Issuer, so its renewal does not change the caBundle", () => {
    const serving = theOne(certManager, "Certificate", "machine-api-migration-serving-cert");
    const issuerName = getPath(serving, ["spec", "issuerRef", "name"]);
    const issuer = theOne(certManager, "Issuer", String(issuerName));
    expect(getPath(issuer, ["spec", "ca", "secretName"])).toBeDefined();
  });

  it("overlay: the Deployment and the webhooks' rules are the base's, unchanged", () => {
    expect(productDeployment(certManager)).toEqual(productDeployment(base));
    for (const c of webhookConfigurations(base))
      expect(theOne(certManager, String(c.kind), String(c.metadata?.name)).webhooks).toEqual(c.webhooks);
  });
});

describe("PrometheusRule and ServiceMonitor (SPEC §3.4, §2.1, §7)", () => {
  const JOB = "machine-api-migration";
  const alerts = () =>
    (
      getPath(theOne(base, "PrometheusRule", "machine-api-migration"), ["spec", "groups"]) as {
        rules: {
          alert: string;
          expr: string;
          for?: string;
          labels?: Record<string, string>;
          annotations?: Record<string, string>;
        }[];
      }[]
    ).flatMap((g) => g.rules);

  it.each([
    ["MachineMigrationStuck", METRIC_NAMES.migrationStuck],
    ["MachineNotSynchronized", METRIC_NAMES.synchronizedFalse],
  ])("%s alerts on %s, the name the product exports, selected by the scrape job", (alert, metric) => {
    const rule = alerts().find((r) => r.alert === alert);
    expect(metric).toMatch(/^machine_api_migration_/);
    expect(rule?.expr).toMatch(new RegExp(`\\b${metric}\\{[^}]*job="${JOB}"[^}]*\\}`));
    expect(rule?.for).toBeDefined();
    expect(rule?.labels?.severity).toBeDefined();
  });

  it("every alert selects the product's series by job, the Service the ServiceMonitor scrapes", () => {
    const monitor = theOne(base, "ServiceMonitor", "machine-api-migration");
    // prometheus-operator names the job after the Service unless the ServiceMonitor sets jobLabel.
    expect(getPath(monitor, ["spec", "jobLabel"])).toBeUndefined();
    expect(theOne(base, "Service", JOB).metadata?.name).toBe(JOB);
    for (const rule of alerts()) expect(rule.expr, rule.alert).toContain(`job="${JOB}"`);
  });

  it("every alert's runbook_url is a section of docs/operations.md named after the alert", async () => {
    const sections = markdownAnchors(await readFile("docs/operations.md", "utf8"));
    expect(alerts().length).toBeGreaterThan(0);
    for (const rule of alerts()) {
      const url = rule.annotations?.runbook_url ?? "";
      expect(url, rule.alert).toBe(`docs/operations.md#${rule.alert.toLowerCase()}`);
      expect(sections, rule.alert).toContain(url.split("#")[1]);
    }
  });

  it("the runbook location is set in one place: the base kustomization's machine-api-migration-docs literal", async () => {
    const copy = await mkdtemp(join(tmpdir(), "manifests-runbooks-"));
    try {
      await cp("manifests/base", copy, { recursive: true });
      const kustomization = join(copy, "kustomization.yaml");
      const text = await readFile(kustomization, "utf8");
      expect(text).toContain("operations=docs/operations.md");
      const elsewhere = "https://git.example.com/ops/machine-api-migration/blob/v1/docs/operations.md";
      await writeFile(
        kustomization,
        text.replace("operations=docs/operations.md", `operations=${elsewhere}`),
      );
      const rendered = await renderKustomization(copy);
      const urls = (
        getPath(theOne(rendered, "PrometheusRule", "machine-api-migration"), ["spec", "groups"]) as {
          rules: { alert: string; annotations?: Record<string, string> }[];
        }[]
      ).flatMap((g) => g.rules.map((r) => r.annotations?.runbook_url));
      expect(urls).toEqual(alerts().map((r) => `${elsewhere}#${r.alert.toLowerCase()}`));
      // The literal only feeds the build: no ConfigMap is applied to the cluster.
      expect(ofKind(rendered, "ConfigMap")).toEqual([]);
    } finally {
      await rm(copy, { recursive: true, force: true });
    }
  });

  it("the ServiceMonitor scrapes /metrics over HTTPS on the Service's metrics port with Prometheus's bearer token", () => {
    const monitor = theOne(base, "ServiceMonitor", "machine-api-migration");
    const service = theOne(base, "Service", "machine-api-migration");
    expect(selectorMatches(getPath(monitor, ["spec", "selector"]), service.metadata?.labels ?? {})).toBe(
      true,
    );
    expect(getPath(monitor, ["spec", "endpoints"])).toEqual([
      expect.objectContaining({
        port: "metrics",
        path: "/metrics",
        scheme: "https",
        bearerTokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token",
      }),
    ]);
    const ports = getPath(service, ["spec", "ports"]) as { name: string }[];
    expect(ports.map((p) => p.name)).toContain("metrics");
    // The overlay only swaps the CA Prometheus verifies with; port and token stay.
    expect(
      getPath(theOne(certManager, "ServiceMonitor", "machine-api-migration"), ["spec", "endpoints"]),
    ).toEqual([expect.objectContaining({ port: "metrics", bearerTokenFile: expect.any(String) })]);
  });

  it("the platform Prometheus may get /metrics: a ClusterRole with only that, bound to prometheus-k8s", () => {
    const reader = theOne(base, "ClusterRole", METRICS_READER);
    expect(reader.rules).toEqual([{ nonResourceURLs: ["/metrics"], verbs: ["get"] }]);
    const bindings = ofKind(base, "ClusterRoleBinding").filter(
      (b) => (b.roleRef as { name?: string } | undefined)?.name === METRICS_READER,
    );
    expect(bindings.map((b) => ({ roleRef: b.roleRef, subjects: b.subjects }))).toEqual([
      {
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: METRICS_READER },
        subjects: [{ kind: "ServiceAccount", ...PROMETHEUS }],
      },
    ]);
    // The product's own service account is not a scraper.
    expect(
      ofKind(base, "ClusterRoleBinding").some(
        (b) =>
          (b.roleRef as { name?: string }).name === METRICS_READER &&
          JSON.stringify(b.subjects).includes(`"name":"${PRODUCT.name}"`),
      ),
    ).toBe(false);
  });
});

describe("installer (SPEC §6): its own Deployment, service account and RBAC", () => {
  it("the base does not contain it; its kustomization does, under its own service account", () => {
    expect(base.some((o) => o.metadata?.name === INSTALLER.name)).toBe(false);
    const d = theOne(installer, "Deployment", INSTALLER.name);
    expect(podSpec(d).serviceAccountName).toBe(INSTALLER.name);
    expect(theOne(installer, "ServiceAccount", INSTALLER.name).metadata?.namespace).toBe(INSTALLER.namespace);
  });

  it("ships the policy that refuses the CAPI namespace's ServiceAccounts a service-account-token Secret, bound to deny (decision 197)", () => {
    const policy = theOne(installer, "ValidatingAdmissionPolicy", "machine-api-migration-no-token-secrets");
    expect(getPath(policy, ["spec", "failurePolicy"])).toBe("Fail");
    expect(getPath(policy, ["spec", "matchConstraints", "namespaceSelector"])).toEqual({
      matchLabels: { "kubernetes.io/metadata.name": INSTALLER.namespace },
    });
    expect(getPath(policy, ["spec", "matchConstraints", "resourceRules"])).toEqual([
      { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["secrets"] },
    ]);
    const conditions = getPath(policy, ["spec", "matchConditions"]) as { expression: string }[];
    expect(conditions.map((c) => c.expression)).toEqual([
      "object.type == 'kubernetes.io/service-account-token'",
      `request.userInfo.username.startsWith('system:serviceaccount:${INSTALLER.namespace}:')`,
    ]);
    expect((getPath(policy, ["spec", "validations"]) as { reason?: string }[])[0]?.reason).toBe("Forbidden");
    const binding = theOne(
      installer,
      "ValidatingAdmissionPolicyBinding",
      "machine-api-migration-no-token-secrets",
    );
    expect(getPath(binding, ["spec", "policyName"])).toBe("machine-api-migration-no-token-secrets");
    expect(getPath(binding, ["spec", "validationActions"])).toEqual(["Deny"]);
    expect(getPath(binding, ["spec", "matchResources"])).toBeUndefined();
  });

  it("runs `node dist/cli.js installer` as one replica that never overlaps (Recreate), on control-plane nodes", () => {
    const d = theOne(installer, "Deployment", INSTALLER.name);
    expect(containerOf(d).command?.slice(-3)).toEqual(["node", "dist/cli.js", "installer"]);
    expect(getPath(d, ["spec", "replicas"])).toBe(1);
    expect(getPath(d, ["spec", "strategy", "type"])).toBe("Recreate");
    const tolerations = podSpec(d).tolerations as { key: string }[];
    expect(tolerations.map((t) => t.key)).toContain("node-role.kubernetes.io/master");
  });

  const may: [string, Access][] = [
    ["read transport ConfigMaps", { verb: "watch", group: "", resource: "configmaps", namespace: CAPI_NS }],
    [
      "apply CRDs",
      { verb: "patch", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", namespace: "" },
    ],
    [
      "create CRDs",
      { verb: "create", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", namespace: "" },
    ],
    [
      "apply provider Deployments",
      { verb: "patch", group: "apps", resource: "deployments", namespace: CAPI_NS },
    ],
    [
      "prune provider Deployments",
      { verb: "delete", group: "apps", resource: "deployments", namespace: CAPI_NS },
    ],
    ["list Secrets to prune", { verb: "list", group: "", resource: "secrets", namespace: CAPI_NS }],
    [
      "apply ClusterRoles",
      { verb: "patch", group: "rbac.authorization.k8s.io", resource: "clusterroles", namespace: "" },
    ],
    [
      "apply webhook configurations",
      {
        verb: "patch",
        group: "admissionregistration.k8s.io",
        resource: "validatingwebhookconfigurations",
        namespace: "",
      },
    ],
    [
      "create its ClusterOperator",
      { verb: "create", group: "config.openshift.io", resource: "clusteroperators", namespace: "" },
    ],
    [
      "write its ClusterOperator status",
      {
        verb: "update",
        group: "config.openshift.io",
        resource: "clusteroperators/status",
        namespace: "",
        name: SETTINGS.installerClusterOperator.default,
      },
    ],
    [
      "watch the Infrastructure",
      { verb: "watch", group: "config.openshift.io", resource: "infrastructures", namespace: "" },
    ],
  ];
  it.each(may)("may %s", (_what, access) => {
    expect(grants(installer, INSTALLER, access)).toBe(true);
  });

  const mayNot: [string, Access][] = [
    [
      "delete CRDs (never pruned)",
      { verb: "delete", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", namespace: "" },
    ],
    [
      "delete webhook configurations (never pruned)",
      {
        verb: "delete",
        group: "admissionregistration.k8s.io",
        resource: "mutatingwebhookconfigurations",
        namespace: "",
      },
    ],
    [
      "change the policy that keeps token Secrets out of its namespace (decision 197)",
      {
        verb: "delete",
        group: "admissionregistration.k8s.io",
        resource: "validatingadmissionpolicies",
        namespace: "",
      },
    ],
    [
      "unbind that policy",
      {
        verb: "patch",
        group: "admissionregistration.k8s.io",
        resource: "validatingadmissionpolicybindings",
        namespace: "",
      },
    ],
    [
      "write another ClusterOperator",
      {
        verb: "update",
        group: "config.openshift.io",
        resource: "clusteroperators/status",
        namespace: "",
        name: "cluster-api",
      },
    ],
    [
      "write outside the CAPI namespace",
      { verb: "create", group: "apps", resource: "deployments", namespace: "kube-system" },
    ],
    [
      "read Secrets outside the CAPI namespace",
      { verb: "list", group: "", resource: "secrets", namespace: MAPI_NS },
    ],
    [
      "touch machines",
      { verb: "update", group: "machine.openshift.io", resource: "machines", namespace: MAPI_NS },
    ],
    ["delete Namespaces", { verb: "delete", group: "", resource: "namespaces", namespace: "" }],
    ...(["clusterroles", "roles"] as const).flatMap((resource): [string, Access][] =>
      (["escalate", "bind"] as const).map((verb) => [
        `${verb} ${resource} (it may grant only what it holds: the ceiling)`,
        {
          verb,
          group: "rbac.authorization.k8s.io",
          resource,
          namespace: resource === "roles" ? CAPI_NS : "",
        },
      ]),
    ),
    ["impersonate", { verb: "impersonate", group: "", resource: "serviceaccounts", namespace: CAPI_NS }],
    [
      "ask for ServiceAccount tokens",
      { verb: "create", group: "", resource: "serviceaccounts/token", namespace: CAPI_NS },
    ],
  ];
  it.each(mayNot)("may not %s", (_what, access) => {
    expect(grants(installer, INSTALLER, access)).toBe(false);
  });

  it("no rule of its RBAC names escalate, bind or impersonate", () => {
    for (const { where, rule } of allRules(installer))
      expect(
        rule.verbs.filter((v) => ["escalate", "bind", "impersonate", "*"].includes(v)),
        where,
      ).toEqual([]);
  });

  it("ships the RBAC ceiling exactly as ceilingRoles() builds it, so the two cannot drift", () => {
    const shipped = [theOne(installer, "ClusterRole", CEILING_NAME), theOne(installer, "Role", CEILING_NAME)];
    const { labels, ...clusterRoleMetadata } = shipped[0]!.metadata ?? {};
    expect(labels).toMatchObject({ "app.kubernetes.io/component": "installer" });
    expect(
      shipped.map((o) => {
        const { labels: _labels, ...metadata } = o.metadata ?? {};
        return { ...o, metadata };
      }),
    ).toEqual(ceilingRoles(CAPI_NS));
    expect(clusterRoleMetadata).toEqual({ name: CEILING_NAME });
  });

  it("binds its ServiceAccount to the ceiling: the ClusterRole cluster-wide, the Role in the CAPI namespace", () => {
    const bindings = [...ofKind(installer, "ClusterRoleBinding"), ...ofKind(installer, "RoleBinding")].filter(
      (b) => isRecord(b.roleRef) && b.roleRef.name === CEILING_NAME,
    );
    expect(
      bindings.map((b) => ({
        kind: b.kind,
        namespace: b.metadata?.namespace,
        roleRef: b.roleRef,
        subjects: b.subjects,
      })),
    ).toEqual([
      {
        kind: "ClusterRoleBinding",
        namespace: undefined,
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: CEILING_NAME },
        subjects: [{ kind: "ServiceAccount", ...INSTALLER }],
      },
      {
        kind: "RoleBinding",
        namespace: CAPI_NS,
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: CEILING_NAME },
        subjects: [{ kind: "ServiceAccount", ...INSTALLER }],
      },
    ]);
  });

  it("the product's service account gets none of the installer's powers (reading the Infrastructure aside)", () => {
    for (const [what, access] of may.filter(([w]) => w !== "watch the Infrastructure"))
      expect(grants([...base, ...installer], PRODUCT, access), what).toBe(false);
  });
});
