/**
 * pack-provider (SPEC §6): a released components file becomes a transport ConfigMap with the SPEC labels,
 * cert-manager rewritten to OpenShift service-ca, caBundles dropped, variables left for the installer in
 * their plain style, and a refusal over 1 MiB. Also the command's exit codes and messages.
 */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: clusterctl's ${VAR} syntax is what these tests are about
import { readFile } from "node:fs/promises";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { runPackProvider } from "../../src/installer/cli.js";
import { MAX_CONFIGMAP_BYTES, packProvider, SERVICE_CA } from "../../src/installer/pack.js";
import type { KubeObject } from "../../src/kube/object.js";

const FIXTURE = "test/fixtures/providers/capz-like-components.yaml";
const components = await readFile(FIXTURE, "utf8");

const pack = (overrides: Partial<Parameters<typeof packProvider>[0]> = {}) =>
  packProvider({
    name: "azure",
    type: "infrastructure",
    version: "v1.17.2",
    namespace: "openshift-cluster-api",
    components,
    ...overrides,
  });

const ALIAS_BOMB = [
  "apiVersion: v1",
  "kind: ConfigMap",
  "metadata: {name: lol}",
  "data:",
  '  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  "  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]",
  "  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]",
  "  d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]",
  "",
].join("\n");

const NO_OBJECTS = "holds no Kubernetes objects (is it the components YAML, not a compressed archive?)";

const documentsOf = (configMap: KubeObject): KubeObject[] =>
  parseAllDocuments(String((configMap.data as Record<string, string>).components)).map(
    (d) => d.toJS() as KubeObject,
  );

/** The flags every pack-provider command line below starts with. */
const AWS_V1 = ["--name", "aws", "--type", "infrastructure", "--version", "v1"];

describe("pack-provider: the transport ConfigMap", () => {
  it("is printed with no DEL, C1 or bidirectional control raw, and reads back to the same components (decision 158)", () => {
    const hostile = [
      "apiVersion: v1",
      "kind: ConfigMap",
      "metadata: {name: notes, namespace: capa-system}",
      'data: {a: "look\\u202eevil", b: "clear\\x9b2J", c: "del\\x7f"}',
      "",
    ].join("\n");
    const result = pack({ components: hostile });
    if (!result.ok) throw new Error(result.error);
    expect(result.yaml).not.toMatch(/[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    const read = parse(result.yaml) as KubeObject;
    expect(read.data).toEqual(result.configMap.data);
    expect(documentsOf(read)[0]?.data).toEqual({ a: "look\u202eevil", b: "clear\u009b2J", c: "del\u007f" });
  });

  it("carries the SPEC §6 labels, name and namespace, components under data.components", () => {
    const result = pack();
    if (!result.ok) throw new Error(result.error);
    expect(result.configMap.metadata).toEqual({
      name: "capi-provider-infrastructure-azure",
      namespace: "openshift-cluster-api",
      labels: {
        "provider.cluster.x-k8s.io/name": "azure",
        "provider.cluster.x-k8s.io/type": "infrastructure",
        "provider.cluster.x-k8s.io/version": "v1.17.2",
      },
    });
    expect(parse(result.yaml)).toEqual(result.configMap);
  });

  it("cert-manager: Certificate → serving-cert annotation on its Service, Issuer dropped, inject-ca-from → inject-cabundle", () => {
    const result = pack();
    if (!result.ok) throw new Error(result.error);
    const docs = documentsOf(result.configMap);
    expect(docs.map((d) => d.kind)).toEqual([
      "Namespace",
      "CustomResourceDefinition",
      "ServiceAccount",
      "ClusterRoleBinding",
      "Service",
      "Deployment",
      "ValidatingWebhookConfiguration",
    ]);
    const byKind = (k: string) => docs.find((d) => d.kind === k)!;
    expect(byKind("Service").metadata?.annotations).toEqual({
      [SERVICE_CA.servingCertSecretName]: "capz-webhook-service-cert",
    });
    for (const k of ["CustomResourceDefinition", "ValidatingWebhookConfiguration"]) {
      expect(byKind(k).metadata?.annotations?.[SERVICE_CA.injectCabundle]).toBe("true");
      expect(byKind(k).metadata?.annotations).not.toHaveProperty("cert-manager.io/inject-ca-from");
    }
    expect(JSON.stringify(docs)).not.toContain("caBundle");
    expect(result.warnings).toEqual([
      "rewrote 1 cert-manager Certificate(s) to service-ca serving-cert annotations and dropped 1 Issuer(s)",
    ]);
  });

  it("variables stay plain so they substitute to numbers and booleans at install time", () => {
    const result = pack();
    if (!result.ok) throw new Error(result.error);
    const text = String((result.configMap.data as Record<string, string>).components);
    expect(text).toContain("replicas: ${CAPZ_REPLICAS:=1}");
    expect(text).toContain("- --v=${CAPZ_LOGLEVEL:=0}");
    expect(text).toContain("image: to.be/replaced:v99");
  });

  it("a Certificate whose DNS names match no Service is reported", () => {
    const result = pack({
      components: components.replaceAll("capz-webhook-service.capz-system", "elsewhere.capz-system"),
    });
    if (!result.ok) throw new Error(result.error);
    expect(result.warnings).toContain(
      "Certificate capz-system/capz-serving-cert: no Service in the components matches its dnsNames (elsewhere.capz-system.svc, elsewhere.capz-system.svc.cluster.local); Secret capz-webhook-service-cert will not be created by service-ca",
    );
  });

  it("refuses a ConfigMap over 1 MiB", () => {
    const big = `${components}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: padding\ndata:\n  blob: "${"x".repeat(MAX_CONFIGMAP_BYTES)}"\n`;
    const result = pack({ components: big });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatch(
      /^the transport ConfigMap would be \d+ bytes, over the 1048576-byte \(1 MiB\) limit of a ConfigMap; trim the components \(for example CRD descriptions\) or split the provider$/,
    );
  });

  it.each([
    [{ type: "bootstrap" }, '--type must be one of core, infrastructure, not "bootstrap"'],
    [{ type: "core", name: "capi" }, 'the core provider is named cluster-api, not "capi"'],
    [{ name: "AWS" }, `--name must be a DNS label (lower-case letters, digits, '-'), not "AWS"`],
    [{ version: "v 2" }, '--version must be a label value such as v2.9.0, not "v 2"'],
    [
      { configMapName: "Bad_Name!" },
      `--configmap-name must be a DNS subdomain (lower-case letters, digits, '-', '.'; at most 253 characters), not "Bad_Name!"`,
    ],
    [
      { configMapName: "a".repeat(254) },
      `--configmap-name must be a DNS subdomain (lower-case letters, digits, '-', '.'; at most 253 characters), not "${"a".repeat(254)}"`,
    ],
    [
      { namespace: "n".repeat(64) },
      `--namespace must be a DNS label (lower-case letters, digits, '-'; at most 63 characters), not "${"n".repeat(64)}"`,
    ],
  ])("refuses bad arguments %o", (overrides, message) => {
    expect(pack(overrides)).toEqual({ ok: false, error: message, usage: true });
  });

  it("refuses an alias bomb as outside its bounds, without expanding it", () => {
    expect(pack({ components: ALIAS_BOMB })).toEqual({
      ok: false,
      error:
        "components: YAML document 1 line 1: its aliases expand beyond the bound of 100 alias uses (maxAliasCount)",
      bound: true,
    });
  });

  it("--configmap-name: a DNS subdomain of 253 characters names the ConfigMap", () => {
    const configMapName = `${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(61)}`;
    expect(configMapName).toHaveLength(253);
    const result = pack({ configMapName });
    if (!result.ok) throw new Error(result.error);
    expect(result.configMap.metadata?.name).toBe(configMapName);
  });

  it("packs several components files in order, each one's documents after the previous one's", () => {
    const result = pack({
      components: [
        { path: "core.yaml", text: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: one\n" },
        {
          path: "extra.yaml",
          text: "---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: two\n  namespace: one\n---\n",
        },
      ],
    });
    if (!result.ok) throw new Error(result.error);
    expect(documentsOf(result.configMap).map((d) => `${d.kind}/${d.metadata?.name}`)).toEqual([
      "Namespace/one",
      "ServiceAccount/two",
    ]);
  });

  it.each([
    ["an empty file", "", `in.yaml ${NO_OBJECTS}`],
    ["only a comment and empty documents", "# only a comment\n---\n---\n", `in.yaml ${NO_OBJECTS}`],
    [
      "a gzipped file read as UTF-8",
      gzipSync(components).toString("utf8"),
      `in.yaml ${NO_OBJECTS.replace(" (", ": it is binary, not YAML text (")}`,
    ],
    [
      "a string",
      "hello\n",
      "document 1 of in.yaml (line 1) is not a Kubernetes object: it is a string, not a mapping with apiVersion and kind",
    ],
    [
      "a sequence",
      "- a\n- b\n",
      "document 1 of in.yaml (line 1) is not a Kubernetes object: it is a sequence, not a mapping with apiVersion and kind",
    ],
    [
      "a mapping without apiVersion and kind after an object",
      "apiVersion: v1\nkind: Namespace\nmetadata: {name: ok}\n---\nmetadata: {name: x}\n",
      "document 2 of in.yaml (line 5) is not a Kubernetes object: missing apiVersion, kind",
    ],
    [
      "a kind that is not a string, no name",
      "apiVersion: v1\nkind: 7\n",
      "document 1 of in.yaml (line 1) is not a Kubernetes object: missing kind, metadata.name",
    ],
  ])("refuses components holding no Kubernetes objects: %s", (_, text, error) => {
    expect(pack({ components: [{ path: "in.yaml", text }] })).toEqual({ ok: false, error });
  });

  it("names the file at fault among several", () => {
    expect(
      pack({
        components: [
          { path: "a.yaml", text: components },
          { path: "b.yaml", text: "" },
        ],
      }),
    ).toEqual({ ok: false, error: `b.yaml ${NO_OBJECTS}` });
    expect(
      pack({
        components: [
          { path: "a.yaml", text: components },
          { path: "bomb.yaml", text: ALIAS_BOMB },
        ],
      }),
    ).toEqual({
      ok: false,
      error:
        "bomb.yaml: YAML document 1 line 1: its aliases expand beyond the bound of 100 alias uses (maxAliasCount)",
      bound: true,
    });
  });

  it("refuses components that are not YAML", () => {
    const result = pack({ components: "kind: [Deployment\n" });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/^components document 1 line \d+: /);
  });
});

describe("pack-provider: the command", () => {
  const io = (files: Record<string, string>) => {
    const out: string[] = [];
    const err: string[] = [];
    return {
      out,
      err,
      io: {
        stdout: { write: (s: string) => out.push(s) },
        stderr: { write: (s: string) => err.push(s) },
        readFile: async (p: string) => {
          const f = files[p];
          if (f === undefined) throw new Error(`ENOENT: no such file, open '${p}'`);
          return f;
        },
      },
    };
  };

  it("prints the ConfigMap and exits 0", async () => {
    const t = io({ "components.yaml": components });
    const code = await runPackProvider(
      ["--name", "aws", "--type", "infrastructure", "--version=v2.9.0", "-f", "components.yaml"],
      t.io,
    );
    expect(code).toBe(0);
    const cm = parse(t.out.join("")) as KubeObject;
    expect(cm.metadata?.name).toBe("capi-provider-infrastructure-aws");
    expect(t.err.join("")).toContain("rewrote 1 cert-manager Certificate(s)");
  });

  it("-f may be given more than once: every file is packed, in the order given", async () => {
    const t = io({
      "core.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: one\n",
      "components.yaml": components,
      "extra.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: last\n  namespace: one\n",
    });
    const argv = ["--name", "aws", "--type", "infrastructure", "--version", "v2.9.0"];
    const files = ["-f", "core.yaml", "--filename", "components.yaml", "-f=extra.yaml"];
    expect(await runPackProvider([...argv, ...files], t.io)).toBe(0);
    const cm = parse(t.out.join("")) as KubeObject;
    expect(documentsOf(cm).map((d) => `${d.kind}/${d.metadata?.name}`)).toEqual([
      "Namespace/one",
      "Namespace/capz-system",
      "CustomResourceDefinition/azureclusters.infrastructure.cluster.x-k8s.io",
      "ServiceAccount/capz-manager",
      "ClusterRoleBinding/capz-manager-rolebinding",
      "Service/capz-webhook-service",
      "Deployment/capz-controller-manager",
      "ValidatingWebhookConfiguration/capz-validating-webhook-configuration",
      "ConfigMap/last",
    ]);
  });

  it.each([
    [["--name", "aws", "--type", "infrastructure", "-f", "c.yaml"], 2, "pack-provider: missing --version"],
    [["--name", "aws", "--bogus", "x"], 2, 'pack-provider: unknown argument "--bogus"'],
    [
      ["--name", "aws", "--type", "infrastructure", "--version", "v1", "-f", "nope.yaml"],
      1,
      "pack-provider: cannot read nope.yaml",
    ],
    [
      ["--name", "aws", "--type", "other", "--version", "v1", "-f", "c.yaml"],
      2,
      "pack-provider: --type must be one of core, infrastructure",
    ],
    [
      ["--name", "aws", "--type", "infrastructure", "--version", "v1", "-f", "bomb.yaml"],
      2,
      "pack-provider: components: YAML document 1 line 1: its aliases expand beyond the bound of 100 alias uses (maxAliasCount)\n",
    ],
    ...[
      ["--name", "gcp"],
      ["--name=gcp"],
      ["--type", "core"],
      ["--version", "v2"],
      ["--namespace", "other"],
      ["--configmap-name", "other"],
    ].map((again): [string[], number, string] => [
      [...AWS_V1, "--namespace", "openshift-cluster-api", "--configmap-name", "cm", "-f", "c.yaml", ...again],
      2,
      `pack-provider: flag ${again[0]!.split("=")[0]} given twice\n`,
    ]),
    [
      ["--name", "aws", "--type", "infrastructure", "--version", "v1", "-f", "c.yaml", "--filename=c.yaml"],
      2,
      'pack-provider: flag --filename given twice for the same file "c.yaml"\n',
    ],
    [
      [...AWS_V1, "--configmap-name", "Bad_Name!", "-f", "c.yaml"],
      2,
      `pack-provider: --configmap-name must be a DNS subdomain (lower-case letters, digits, '-', '.'; at most 253 characters), not "Bad_Name!"\n`,
    ],
    ...[
      ["empty.yaml", `empty.yaml ${NO_OBJECTS}`],
      [
        "components.yaml.gz",
        `components.yaml.gz ${NO_OBJECTS.replace(" (", ": it is binary, not YAML text (")}`,
      ],
      ["hello.txt", "document 1 of hello.txt (line 1) is not a Kubernetes object: it is a string,"],
      ["list.yaml", "document 1 of list.yaml (line 1) is not a Kubernetes object: it is a sequence,"],
    ].map(([file, message]): [string[], number, string] => [
      ["--name", "aws", "--type", "infrastructure", "--version", "v1", "-f", file!],
      1,
      `pack-provider: ${message}`,
    ]),
    [
      ["--name", "aws", "--type", "infrastructure", "--version", "v1", "-f", "c.yaml", "-f", "empty.yaml"],
      1,
      `pack-provider: empty.yaml ${NO_OBJECTS}\n`,
    ],
  ])("%j exits %i", async (argv, code, message) => {
    const t = io({
      "c.yaml": components,
      "bomb.yaml": ALIAS_BOMB,
      "empty.yaml": "",
      "components.yaml.gz": gzipSync(components).toString("utf8"),
      "hello.txt": "hello\n",
      "list.yaml": "- a\n- b\n",
    });
    expect(await runPackProvider(argv, t.io)).toBe(code);
    expect(t.err.join("")).toContain(message);
    expect(t.out).toEqual([]);
  });
});
