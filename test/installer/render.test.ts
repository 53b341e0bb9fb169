/**
 * The pure renderer (SPEC §6 "Rendering"): variables, image placeholder, namespace forcing and the
 * references that follow it, clusterctl's provider label, never a caBundle, Namespaces left out, content
 * hashes, and every way a provider fails to render — each failure naming the ConfigMap, document and object.
 */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: clusterctl's ${VAR} syntax is what these tests are about
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { HASH_ANNOTATION, PROVIDER_LABEL } from "../../src/installer/model.js";
import {
  type ProviderSource,
  type RenderContext,
  renderProviders,
  substituteVariables,
} from "../../src/installer/render.js";
import type { KubeObject } from "../../src/kube/object.js";
import { getPath } from "../../src/kube/object.js";

// The released file without its cert-manager documents (pack-provider removes those; render must still
// drop the caBundles and fix the namespaces the file carries).
const components = (await readFile("test/fixtures/providers/capz-like-components.yaml", "utf8"))
  .split(/^---$/m)
  .filter((d) => !d.includes("apiVersion: cert-manager.io/v1"))
  .join("---");
const NS = "openshift-cluster-api";

const source = (overrides: Partial<ProviderSource> = {}): ProviderSource => ({
  name: "azure",
  type: "infrastructure",
  version: "v1.17.2",
  configMap: `${NS}/capi-provider-infrastructure-azure`,
  components,
  ...overrides,
});
const context = (overrides: Partial<RenderContext> = {}): RenderContext => ({
  namespace: NS,
  images: { "infrastructure-azure": "quay.io/openshift/capz:4.20" },
  variables: {},
  ...overrides,
});

const renderOne = (s: ProviderSource = source(), c: RenderContext = context()) => {
  const [result] = renderProviders([s], c);
  if (!result?.ok) throw new Error(JSON.stringify(result));
  return result.provider;
};
const find = (objects: { object: KubeObject }[], kind: string): KubeObject =>
  objects.find((o) => o.object.kind === kind)!.object;

describe("substituteVariables (clusterctl's envsubst subset)", () => {
  it.each([
    ["${A}", { A: "x" }, "x", []],
    ["${A:=d}", {}, "d", []],
    ["${A:=d}", { A: "" }, "d", []],
    ["${A=d}", { A: "" }, "", []],
    ["${A:-d}", {}, "d", []],
    ["${A:=}", {}, "", []],
    ["pre-${A}-${B:=2}", { A: "1" }, "pre-1-2", []],
    ["${A}", {}, "${A}", ["A"]],
    ["$A and ${not valid}", {}, "$A and ${not valid}", []],
  ])("%s with %j → %s", (text, variables, expected, missing) => {
    const out = substituteVariables(text, variables);
    expect(out.text).toBe(expected);
    expect(out.missing.map((m) => m.name)).toEqual(missing);
  });
});

describe("render: SPEC §6 rendering rules", () => {
  it("forces the CAPI namespace on namespaced objects only, and on ServiceAccount subjects and webhook services", () => {
    const p = renderOne();
    expect(find(p.objects, "ServiceAccount").metadata?.namespace).toBe(NS);
    expect(find(p.objects, "Deployment").metadata?.namespace).toBe(NS);
    expect(find(p.objects, "ClusterRoleBinding").metadata).not.toHaveProperty("namespace");
    expect(find(p.objects, "ClusterRoleBinding").subjects).toEqual([
      { kind: "ServiceAccount", name: "capz-manager", namespace: NS },
    ]);
    expect(getPath(find(p.objects, "ValidatingWebhookConfiguration"), ["webhooks"])).toMatchObject([
      { clientConfig: { service: { name: "capz-webhook-service", namespace: NS } } },
    ]);
    expect(
      getPath(find(p.objects, "CustomResourceDefinition"), [
        "spec",
        "conversion",
        "webhook",
        "clientConfig",
        "service",
        "namespace",
      ]),
    ).toBe(NS);
  });

  it("never sets a caBundle (service-ca injects it)", () => {
    const p = renderOne();
    expect(JSON.stringify(p.objects)).not.toContain("caBundle");
  });

  it("labels every object with clusterctl's provider label", () => {
    const p = renderOne();
    for (const o of p.objects)
      expect(o.object.metadata?.labels?.[PROVIDER_LABEL]).toBe("infrastructure-azure");
    const core = renderOne(
      source({ name: "cluster-api", type: "core" }),
      context({ images: { "cluster-api": "img" } }),
    );
    for (const o of core.objects) expect(o.object.metadata?.labels?.[PROVIDER_LABEL]).toBe("cluster-api");
  });

  it("leaves Namespace documents out and says so", () => {
    const p = renderOne();
    expect(p.objects.map((o) => o.object.kind)).not.toContain("Namespace");
    expect(p.skipped).toEqual([`Namespace capz-system (components are installed in ${NS})`]);
  });

  it("replaces the image placeholder and substitutes variables, typed by YAML after substitution", () => {
    const p = renderOne(source(), context({ variables: { CAPZ_REPLICAS: "3", CAPZ_LOGLEVEL: "2" } }));
    const deployment = find(p.objects, "Deployment");
    expect(deployment.spec?.replicas).toBe(3);
    expect(getPath(deployment, ["spec", "template", "spec", "containers"])).toMatchObject([
      {
        image: "quay.io/openshift/capz:4.20",
        args: ["--leader-elect", "--v=2", "--feature-gates=MachinePool=false"],
      },
    ]);
    expect(find(p.objects, "ServiceAccount").metadata?.annotations).toMatchObject({
      "azure.workload.identity/client-id": "",
    });
  });

  it("puts phases in SPEC order data: CRDs, others, Deployments", () => {
    const p = renderOne();
    expect(p.objects.map((o) => [o.object.kind, o.phase])).toEqual([
      ["CustomResourceDefinition", "crds"],
      ["ServiceAccount", "others"],
      ["ClusterRoleBinding", "others"],
      ["Service", "others"],
      ["Deployment", "deployments"],
      ["ValidatingWebhookConfiguration", "others"],
    ]);
  });

  it("hashes objects and the provider revision: same input same hash, any change a new revision", () => {
    const a = renderOne();
    const b = renderOne();
    expect(a.revision).toBe(b.revision);
    expect(a.objects.map((o) => o.hash)).toEqual(b.objects.map((o) => o.hash));
    for (const o of a.objects) expect(o.object.metadata?.annotations?.[HASH_ANNOTATION]).toBe(o.hash);
    const c = renderOne(source({ version: "v1.17.3" }));
    expect(c.revision).not.toBe(a.revision);
    expect(c.objects.map((o) => o.hash)).toEqual(a.objects.map((o) => o.hash));
    const d = renderOne(source(), context({ variables: { CAPZ_LOGLEVEL: "5" } }));
    expect(d.revision).not.toBe(a.revision);
    expect(d.objects.filter((o, i) => o.hash !== a.objects[i]?.hash).map((o) => o.object.kind)).toEqual([
      "Deployment",
    ]);
  });

  it("strips server-owned metadata and status", () => {
    const p = renderOne(
      source({
        components:
          "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n  uid: abc\n  resourceVersion: '7'\n  creationTimestamp: null\nstatus: {x: 1}\n",
      }),
    );
    expect(p.objects[0]?.object.metadata).toEqual({
      name: "sa",
      namespace: NS,
      labels: { [PROVIDER_LABEL]: "infrastructure-azure" },
      annotations: { [HASH_ANNOTATION]: p.objects[0]?.hash },
    });
    expect(p.objects[0]?.object).not.toHaveProperty("status");
  });
});

describe("render: failures name the ConfigMap, document and object", () => {
  const failing = (s: ProviderSource, c: RenderContext = context()) => {
    const [result] = renderProviders([s], c);
    if (!result || result.ok) throw new Error("expected a failure");
    return result.errors;
  };
  const where = `ConfigMap ${NS}/capi-provider-infrastructure-azure`;

  it.each([
    [
      "a variable without value or default",
      "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n  annotations:\n    x: ${NEEDED}\n",
      [`${where}, document 1 (ServiceAccount sa): variable \${NEEDED} has no value and no default`],
    ],
    [
      "an image placeholder without an image",
      "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template: {spec: {containers: [{name: c, image: to.be/replaced:v99}]}}\n",
      [
        `${where}, document 1 (Deployment d): uses the image placeholder to.be/replaced:v99 but the images ConfigMap has no key "infrastructure-azure"`,
      ],
    ],
    [
      "a kind nobody serves",
      "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n",
      [
        `${where}, document 1 (Widget w): the API server does not serve Widget in example.com/v1 and no CRD in the components defines it`,
      ],
    ],
    [
      "a document without a name",
      "apiVersion: v1\nkind: ServiceAccount\nmetadata: {}\n",
      [`${where}, document 1 (ServiceAccount): missing metadata.name`],
    ],
    [
      "the same object twice",
      "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ServiceAccount\nmetadata: {name: a, namespace: other}\n",
      [`${where}, document 2 (ServiceAccount a): ServiceAccount ${NS}/a is also document 1`],
    ],
    ["no objects at all", "# nothing\n---\n", [`${where}: the components contain no objects to install`]],
    [
      "only a Namespace",
      "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n",
      [`${where}: the components contain no objects to install`],
    ],
  ])("%s", (_, text, errors) => {
    expect(failing(source({ components: text }), context({ images: {} }))).toEqual(errors);
  });

  it("YAML that does not parse", () => {
    const errors = failing(source({ components: "apiVersion: v1\nkind: [x\n" }));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(new RegExp(`^${where}: YAML document 1 line \\d+: `));
  });

  it("an object two providers both install fails the second provider only", () => {
    const sa = "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: shared}\n";
    const [core, infra] = renderProviders(
      [
        source({ name: "cluster-api", type: "core", configMap: `${NS}/core`, components: sa }),
        source({ components: sa }),
      ],
      context(),
    );
    expect(core?.ok).toBe(true);
    expect(infra).toMatchObject({
      ok: false,
      errors: [`${where}: ServiceAccount ${NS}/shared is also in provider cluster-api`],
    });
  });

  it("custom resources take their scope from a CRD of another provider in the same set", () => {
    const crd = (scope: string) =>
      `apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: gizmos.example.com}\nspec:\n  group: example.com\n  scope: ${scope}\n  names: {kind: Gizmo, plural: gizmos}\n  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]\n`;
    const gizmo = "apiVersion: example.com/v1\nkind: Gizmo\nmetadata: {name: g, namespace: elsewhere}\n";
    for (const [scope, namespace] of [
      ["Cluster", undefined],
      ["Namespaced", NS],
    ] as const) {
      const results = renderProviders(
        [
          source({ name: "cluster-api", type: "core", configMap: `${NS}/core`, components: crd(scope) }),
          source({ components: gizmo }),
        ],
        context(),
      );
      const infra = results[1];
      if (!infra?.ok) throw new Error(JSON.stringify(infra));
      expect(infra.provider.objects[0]?.object.metadata?.namespace).toBe(namespace);
    }
  });

  it("discovery scopes are used for kinds neither built in nor defined by the components", () => {
    const p = renderOne(
      source({
        components: "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: m}\n",
      }),
      context({ scopes: new Map([["monitoring.coreos.com/ServiceMonitor", "Namespaced"]]) }),
    );
    expect(p.objects[0]?.object.metadata?.namespace).toBe(NS);
  });
});
