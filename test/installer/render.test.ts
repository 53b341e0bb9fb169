/**
 * The pure renderer (SPEC §6 "Rendering"): variables, image placeholder, namespace forcing and the
 * references that follow it, clusterctl's provider label, never a caBundle, Namespaces left out, content
 * hashes, and every way a provider fails to render — each failure naming the ConfigMap, document and object.
 */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: clusterctl's ${VAR} syntax is what these tests are about
import { readFile } from "node:fs/promises";
import fc from "fast-check";
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
// drop the caBundles and fix the namespaces the file carries), plus the ClusterRole its binding names (the
// trimmed fixture leaves it out; SPEC §6 binds only roles the same provider ships).
const CAPZ_MANAGER_ROLE = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: capz-manager-role
rules:
- apiGroups: [infrastructure.cluster.x-k8s.io, cluster.x-k8s.io]
  resources: ["*"]
  verbs: [get, list, watch, create, update, patch, delete]
`;
const components = [
  ...(await readFile("test/fixtures/providers/capz-like-components.yaml", "utf8"))
    .split(/^---$/m)
    .filter((d) => !d.includes("apiVersion: cert-manager.io/v1")),
  CAPZ_MANAGER_ROLE,
].join("---");
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
  imagesConfigMap: "machine-api-migration-images",
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

describe("substituteVariables: linear in the text, as a hostile scalar demands", () => {
  // The pattern the scan replaced, kept as the oracle on small inputs: for well-formed and malformed text
  // alike the scan must find what it found. Its `([^}]*)` rescans the rest of the text from every `${NAME:=`
  // when no `}` follows, which made a 200 KB scalar cost 49 s.
  const OLD_PATTERN = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[=-])([^}]*))?\}/g;
  const oracle = (text: string, variables: Readonly<Record<string, string>>, maxLength = Infinity) => {
    const missing: { name: string; offset: number }[] = [];
    const value = (whole: string, name: string, op?: string, fallback?: string): string => {
      const v = Object.hasOwn(variables, name) ? variables[name] : undefined;
      if (op === undefined) return v ?? whole;
      return v === undefined || (op.startsWith(":") && v === "") ? (fallback ?? "") : v;
    };
    let length = text.length;
    for (const m of text.matchAll(OLD_PATTERN)) {
      const [whole, name, op, fallback] = m as unknown as [string, string, string?, string?];
      length += value(whole, name, op, fallback).length - whole.length;
      if (op === undefined && !Object.hasOwn(variables, name)) missing.push({ name, offset: m.index });
    }
    if (length > maxLength) return { text, missing, tooLong: true as const };
    return {
      text: text.replace(OLD_PATTERN, (w, n: string, o?: string, f?: string) => value(w, n, o, f)),
      missing,
    };
  };
  const pieces = ["$", "{", "}", "${", "A", "B", "_", "1", ":", "=", "-", ":=", ":-", "x", " ", "$$", "}}"];
  const text = fc.array(fc.constantFrom(...pieces), { maxLength: 40 }).map((p) => p.join(""));
  const variables = fc.dictionary(
    fc.constantFrom("A", "B", "_", "A1", "x"),
    fc.constantFrom("", "v", "${A}", "}"),
  );

  it("finds, substitutes and reports exactly what the old pattern did, on any text", () => {
    fc.assert(
      fc.property(text, variables, fc.option(fc.nat(60), { nil: undefined }), (t, v, max) => {
        expect(substituteVariables(t, v, max)).toEqual(oracle(t, v, max));
      }),
      { numRuns: 10_000 },
    );
  });

  // Half a megabyte of each hostile shape (a transport ConfigMap holds up to 1 MiB): the old pattern took
  // minutes on each (quadratic: 49 s at 200 KB), a linear scan milliseconds. vitest's 60 s timeout is only a
  // guard here, never a measurement.
  const HOSTILE = 512 * 1024;
  const repeat = (unit: string): string => unit.repeat(Math.floor(HOSTILE / unit.length));
  it.each([
    ["${A:=", repeat("${A:=")],
    ["${A-", repeat("${A-")],
    ["${A=$", repeat("${A=$")],
  ])("a scalar of %s repeated, with no brace ever closing, is left as it is", (_, hostile) => {
    expect(substituteVariables(hostile, {})).toEqual({ text: hostile, missing: [] });
  });

  it("a transport ConfigMap with such a scalar renders (the event loop is not held for minutes)", () => {
    const hostile = repeat("${A:=");
    const provider = renderOne(
      source({
        name: "cluster-api",
        type: "core",
        configMap: `${NS}/core`,
        components: `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n  a: "${hostile}"\n`,
      }),
    );
    expect(getPath(provider.objects[0]?.object, ["data", "a"])).toBe(hostile);
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
      source({
        name: "cluster-api",
        type: "core",
        components: [
          "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: machines.cluster.x-k8s.io}\nspec:\n  group: cluster.x-k8s.io\n  scope: Namespaced\n  names: {kind: Machine, plural: machines}\n  versions: [{name: v1beta2, served: true, storage: true}]\n",
          "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: capi-manager}\n",
        ].join("---\n"),
      }),
      context({ images: { "cluster-api": "img" } }),
    );
    expect(core.objects).toHaveLength(2);
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
      ["ClusterRole", "others"],
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

  it("a document breaking one bound thousands of times lists the first five and counts the rest", () => {
    // 30,000 containers once made one message of megabytes, and a ClusterOperator status nobody could write.
    const containers = 10_000;
    const deployment = [
      "apiVersion: apps/v1",
      "kind: Deployment",
      "metadata: {name: d}",
      "spec:",
      "  template:",
      "    spec:",
      "      containers:",
      ...Array.from({ length: containers }, (_, i) => `      - {name: c${i}, image: quay.io/x/y:${i}}`),
    ].join("\n");
    const errors = failing(source({ components: deployment }));
    const images = errors.find((e) => e.includes("outside bound images"));
    const detail = (i: number) =>
      `container c${i} runs image quay.io/x/y:${i}, which is not a value of the images ConfigMap machine-api-migration-images`;
    expect(images).toBe(
      `${where}, document 1 (Deployment d): outside bound images: ${[0, 1, 2, 3, 4].map(detail).join("; ")}; and ${containers - 5} more`,
    );
    for (const e of errors) expect(e.length).toBeLessThan(2048);
  });

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
      "a kind off the allowlist",
      "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n",
      [
        `${where}, document 1 (Widget w): outside bound kind-allowlist: Widget is not a kind the installer applies (CustomResourceDefinition, Deployment, Service, ServiceAccount, ConfigMap, Role, RoleBinding, ClusterRole, ClusterRoleBinding, ValidatingWebhookConfiguration, MutatingWebhookConfiguration)`,
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

  it("custom resources are never applied, not even of a CRD in the same set (SPEC §6 allowlist)", () => {
    const crd =
      "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: gizmos.infrastructure.cluster.x-k8s.io}\nspec:\n  group: infrastructure.cluster.x-k8s.io\n  scope: Namespaced\n  names: {kind: Gizmo, plural: gizmos}\n  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]\n";
    const gizmo = "apiVersion: infrastructure.cluster.x-k8s.io/v1\nkind: Gizmo\nmetadata: {name: g}\n";
    expect(failing(source({ components: `${crd}---\n${gizmo}` }))).toEqual([
      `${where}, document 2 (Gizmo g): outside bound kind-allowlist: Gizmo is not a kind the installer applies (CustomResourceDefinition, Deployment, Service, ServiceAccount, ConfigMap, Role, RoleBinding, ClusterRole, ClusterRoleBinding, ValidatingWebhookConfiguration, MutatingWebhookConfiguration)`,
    ]);
  });
});

describe("render: variables are substituted into parsed scalars, never into YAML text (SPEC §6)", () => {
  const serviceAccount = (annotation: string) =>
    `apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n  annotations:\n    note: ${annotation}\n`;
  const INJECTED = [
    "x",
    "---",
    "apiVersion: rbac.authorization.k8s.io/v1",
    "kind: ClusterRoleBinding",
    "metadata: {name: pwn}",
    "roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}",
    "subjects: [{kind: Group, apiGroup: rbac.authorization.k8s.io, name: 'system:authenticated'}]",
  ].join("\n");

  it("a value holding `\\n---\\n` and a whole document stays one string: no document is injected", () => {
    const p = renderOne(
      source({ components: serviceAccount("${NOTE}") }),
      context({ variables: { NOTE: INJECTED } }),
    );
    expect(p.objects.map((o) => `${o.object.kind} ${o.object.metadata?.name}`)).toEqual([
      "ServiceAccount sa",
    ]);
    expect(p.objects[0]?.object.metadata?.annotations?.note).toBe(INJECTED);
  });

  it("a value that is YAML structure stays a string; one that reads as a number or boolean takes that type", () => {
    const text = [
      "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa}",
      'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: ${REPLICAS}\n  paused: ${PAUSED}\n  minReadySeconds: "${QUOTED}"\n  template:\n    metadata:\n      labels: ${LABELS}\n    spec:\n      serviceAccountName: sa\n      containers: [{name: m, image: to.be/replaced:v99}]\n',
    ].join("\n---\n");
    const p = renderOne(
      source({ components: text }),
      context({ variables: { REPLICAS: "3", PAUSED: "false", QUOTED: "7", LABELS: "{app: x, evil: y}" } }),
    );
    expect(find(p.objects, "Deployment").spec).toMatchObject({
      replicas: 3,
      paused: false,
      minReadySeconds: "7",
      template: { metadata: { labels: "{app: x, evil: y}" } },
    });
  });

  it("a value that is a deep pile of brackets stays a string (it never reaches YAML's recursive composer)", () => {
    const pile = "[".repeat(200_000);
    const p = renderOne(
      source({ components: serviceAccount("${NOTE}") }),
      context({ variables: { NOTE: pile } }),
    );
    expect(p.objects[0]?.object.metadata?.annotations?.note).toBe(pile);
  });

  it("a variable in a comment is not substituted and needs no value", () => {
    const p = renderOne(source({ components: `# set \${UNSET} to tune\n${serviceAccount("plain")}` }));
    expect(p.objects[0]?.object.metadata?.annotations?.note).toBe("plain");
  });
});

describe("render: YAML is bounded and every bound is a reported problem, never a throw (SPEC §6)", () => {
  const failing = (components: string) => {
    const [result] = renderProviders([source({ components })], context());
    if (!result || result.ok) throw new Error("expected a failure");
    return result.errors;
  };
  const where = `ConfigMap ${NS}/capi-provider-infrastructure-azure`;
  const ALIAS_BOMB = [
    "apiVersion: v1",
    "kind: ConfigMap",
    "metadata: {name: lol}",
    "data:",
    '  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
    "  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]",
    "  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]",
    "  d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]",
    "  e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]",
    "  f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]",
    "",
  ].join("\n");

  it("an alias bomb", () => {
    expect(failing(ALIAS_BOMB)).toEqual([
      `${where}: outside bound yaml: YAML document 1 line 1: its aliases expand beyond the bound of 100 alias uses (maxAliasCount)`,
    ]);
  });

  it("an alias bomb whose anchor a variable fills", () => {
    const bomb =
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n  a: &a ${BIG}\n  list: [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n";
    const [result] = renderProviders(
      [source({ components: bomb })],
      context({ variables: { BIG: "x".repeat(200_000) } }),
    );
    expect(result?.ok ? [] : result?.errors).toEqual([
      `${where}: outside bound yaml: YAML document 1 line 1: expands (its aliases and variables included) beyond the bound of 1572864 bytes of JSON`,
    ]);
  });

  it("a variable repeated over many documents: the provider's growth is bounded in all, not per document", () => {
    // Each document grows by 10 KB, far below the per-document bound; 200 of them grow by 2 MB. Before, 560
    // documents with a 1 MB value built 560 MB of objects and threw a RangeError out of the renderer.
    const many = Array.from(
      { length: 200 },
      (_, i) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c${i}}\ndata: {a: "\${BIG}"}\n`,
    ).join("---\n");
    const [result] = renderProviders(
      [source({ components: many })],
      context({ variables: { BIG: "x".repeat(10_000) } }),
    );
    expect(result?.ok ? [] : result?.errors).toEqual([
      `${where}: outside bound yaml: YAML document 158 line 786: its variables grow the provider's documents by more than the bound of 1572864 bytes in all`,
    ]);
  });

  it("an alias to the node that contains it (recursive data)", () => {
    expect(failing("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: loop}\ndata: &d {self: *d}\n")).toEqual(
      [
        `${where}: outside bound yaml: YAML document 1 line 1: an alias refers to a node that contains it, which no JSON object can hold`,
      ],
    );
  });

  it("an alias to no anchor", () => {
    expect(failing("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\ndata: *nowhere\n")).toEqual([
      `${where}: YAML document 2 line 5: alias *nowhere refers to no anchor before it`,
    ]);
  });

  it("components larger than a ConfigMap can hold", () => {
    const big = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata: {blob: "${"x".repeat(1024 * 1024)}"}\n`;
    expect(failing(big)).toEqual([
      `${where}: outside bound yaml: the text is ${big.length} bytes, beyond the bound of 1048576 bytes`,
    ]);
  });

  it("too many documents", () => {
    const many = Array.from(
      { length: 1001 },
      (_, i) => `apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: sa${i}}\n`,
    ).join("---\n");
    expect(failing(many)).toEqual([
      `${where}: outside bound yaml: the text holds more than 1000 YAML documents`,
    ]);
  });

  it("YAML 1.1 tags give no timestamps or binary: a %YAML 1.1 directive is read as the 1.2 core schema", () => {
    const p = renderOne(
      source({
        components:
          "%YAML 1.1\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {when: 2001-12-14, blob: !!binary aGk=}\n",
      }),
    );
    expect(p.objects[0]?.object.data).toEqual({ when: "2001-12-14", blob: "aGk=" });
  });
});
