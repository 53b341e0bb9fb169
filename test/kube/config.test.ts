/** The client factory: where the KubeConfig comes from and how a bad source is reported. */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { connect, KubeConfigError, kubeConfigFor, resolveKubeconfig } from "../../src/kube/config.js";

const kubeconfigText = `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: "https://127.0.0.1:6443" } }]
users: [{ name: u, user: { token: t } }]
contexts: [{ name: ctx, context: { cluster: c, user: u } }]
current-context: ctx
`;

describe("client factory", () => {
  it("loads a kubeconfig file", async () => {
    const dir = await mkdtemp(join(tmpdir(), "kube-config-"));
    const path = join(dir, "kubeconfig");
    await writeFile(path, kubeconfigText);
    expect(kubeConfigFor({ kubeconfigPath: path }).getCurrentCluster()?.server).toBe(
      "https://127.0.0.1:6443",
    );
  });

  it("loads kubeconfig text (local mode) and builds a client on it", () => {
    const { kubeConfig, client, transport } = connect({ kubeconfigText });
    expect(kubeConfig.getCurrentUser()?.token).toBe("t");
    expect(typeof client.get).toBe("function");
    expect(typeof transport.stream).toBe("function");
  });

  it("names the setting when the kubeconfig file cannot be read", () => {
    expect(() => kubeConfigFor({ kubeconfigPath: "/nonexistent/kubeconfig" })).toThrow(
      /setting kubeconfig \(--kubeconfig \/nonexistent\/kubeconfig\)/,
    );
  });

  it("refuses a kubeconfig without a current cluster", () => {
    expect(() => kubeConfigFor({ kubeconfigText: "apiVersion: v1\nkind: Config\n" })).toThrow(
      KubeConfigError,
    );
  });
});

describe("kubeconfig resolution as kubectl's (SPEC §9: --kubeconfig, then KUBECONFIG, then ~/.kube/config)", () => {
  const files = new Set(["/a/kc", "/b/kc", "/home/u/.kube/config"]);
  const exists = (path: string) => files.has(path);
  const inPod = { KUBERNETES_SERVICE_HOST: "10.0.0.1", KUBERNETES_SERVICE_PORT: "443" };
  it.each([
    [
      "the setting wins over everything",
      "/x/kc",
      { KUBECONFIG: "/a/kc", HOME: "/home/u" },
      { kind: "files", paths: ["/x/kc"], origin: "setting kubeconfig (--kubeconfig /x/kc)" },
    ],
    [
      "KUBECONFIG over ~/.kube/config",
      undefined,
      { KUBECONFIG: "/a/kc", HOME: "/home/u" },
      { kind: "files", paths: ["/a/kc"], origin: "KUBECONFIG (/a/kc)" },
    ],
    [
      "KUBECONFIG lists: missing entries skipped, the rest merged in order",
      undefined,
      { KUBECONFIG: "/missing:/b/kc::/a/kc" },
      { kind: "files", paths: ["/b/kc", "/a/kc"], origin: "KUBECONFIG (/b/kc:/a/kc)" },
    ],
    [
      "~/.kube/config when KUBECONFIG is unset",
      undefined,
      { HOME: "/home/u" },
      { kind: "files", paths: ["/home/u/.kube/config"], origin: "/home/u/.kube/config" },
    ],
    [
      "an empty KUBECONFIG counts as unset",
      undefined,
      { KUBECONFIG: "", HOME: "/home/u" },
      { kind: "files", paths: ["/home/u/.kube/config"], origin: "/home/u/.kube/config" },
    ],
    [
      "KUBECONFIG naming no existing file does not fall back to ~/.kube/config",
      undefined,
      { KUBECONFIG: "/missing", HOME: "/home/u" },
      { kind: "none", reason: "KUBECONFIG (/missing) names no existing file" },
    ],
    [
      "the pod's service account when there is no file",
      undefined,
      { HOME: "/nohome", ...inPod },
      { kind: "in-cluster" },
    ],
    [
      "a file wins over the pod's service account (as in client-go)",
      undefined,
      { HOME: "/home/u", ...inPod },
      { kind: "files", paths: ["/home/u/.kube/config"], origin: "/home/u/.kube/config" },
    ],
    [
      "nothing at all",
      undefined,
      {},
      {
        kind: "none",
        reason: "no kubeconfig found (--kubeconfig, KUBECONFIG, ~/.kube/config) and not in a pod",
      },
    ],
  ] as const)("%s", (_name, explicit, env, expected) => {
    expect(resolveKubeconfig({ explicit, env, exists })).toEqual(expected);
  });

  const twoContexts = (current: string) => `apiVersion: v1
kind: Config
clusters:
- { name: good, cluster: { server: "https://127.0.0.1:6443" } }
- { name: bad, cluster: { server: "https://127.0.0.1:1" } }
users: [{ name: u, user: { token: t } }]
contexts:
- { name: good, context: { cluster: good, user: u } }
- { name: bad, context: { cluster: bad, user: u } }
current-context: ${current}
`;

  it("--context selects a context of the file; an unknown one is refused naming the flag", async () => {
    const dir = await mkdtemp(join(tmpdir(), "kube-config-"));
    const path = join(dir, "kubeconfig");
    await writeFile(path, twoContexts("bad"));
    const source = { kubeconfigPaths: [path], origin: path };
    expect(kubeConfigFor(source).getCurrentCluster()?.server).toBe("https://127.0.0.1:1");
    expect(kubeConfigFor({ ...source, context: "good" }).getCurrentCluster()?.server).toBe(
      "https://127.0.0.1:6443",
    );
    expect(() => kubeConfigFor({ ...source, context: "nope" })).toThrow(
      `context "nope" (--context) is not in ${path}`,
    );
  });

  it("merges several files as kubectl does: the first to define a name or current-context wins", async () => {
    const dir = await mkdtemp(join(tmpdir(), "kube-config-"));
    const first = join(dir, "first");
    const second = join(dir, "second");
    await writeFile(first, kubeconfigText.replace("https://127.0.0.1:6443", "https://first:6443"));
    await writeFile(second, twoContexts("good"));
    const kc = kubeConfigFor({ kubeconfigPaths: [first, second], origin: "KUBECONFIG" });
    expect(kc.getCurrentContext()).toBe("ctx");
    expect(kc.getCurrentCluster()?.server).toBe("https://first:6443");
    expect(
      kubeConfigFor({
        kubeconfigPaths: [first, second],
        origin: "KUBECONFIG",
        context: "good",
      }).getCurrentCluster()?.server,
    ).toBe("https://127.0.0.1:6443");
  });
});

describe("empty and malformed kubeconfig files (kubectl's clientcmd: an empty file is an empty config)", () => {
  const write = async (files: Record<string, string>): Promise<Record<string, string>> => {
    const dir = await mkdtemp(join(tmpdir(), "kube-config-"));
    const paths: Record<string, string> = {};
    for (const [name, text] of Object.entries(files)) {
      paths[name] = join(dir, name);
      await writeFile(paths[name], text);
    }
    return paths;
  };
  const messageOf = (load: () => unknown): string => {
    try {
      load();
    } catch (e) {
      expect(e).toBeInstanceOf(KubeConfigError);
      return (e as Error).message;
    }
    throw new Error("expected the load to fail");
  };

  it.each([
    ["an empty file", ""],
    ["whitespace only", "  \n\n\t\n"],
    ["comments only", "# written by a script that found nothing\n\n# the end\n"],
    ["an empty mapping", "{}\n"],
    ["apiVersion and kind only", "apiVersion: v1\nkind: Config\n"],
    ["empty lists", "apiVersion: v1\nkind: Config\nclusters: []\nusers: null\ncontexts:\n"],
  ])("%s in KUBECONFIG contributes nothing; the other files are merged", async (_name, text) => {
    const { empty, real } = await write({ empty: text, real: kubeconfigText });
    for (const paths of [
      [empty!, real!],
      [real!, empty!],
    ]) {
      const kc = kubeConfigFor({ kubeconfigPaths: paths, origin: `KUBECONFIG (${paths.join(":")})` });
      expect(kc.getCurrentContext()).toBe("ctx");
      expect(kc.getCurrentCluster()?.server).toBe("https://127.0.0.1:6443");
      expect(kc.getCurrentUser()?.token).toBe("t");
    }
  });

  it("a lone empty file in KUBECONFIG is refused naming the file: it holds no clusters or contexts", async () => {
    const { empty } = await write({ empty: "" });
    expect(
      messageOf(() => kubeConfigFor({ kubeconfigPaths: [empty!], origin: `KUBECONFIG (${empty})` })),
    ).toBe(
      `KUBECONFIG (${empty}) holds no clusters or contexts (${empty} is empty); name a kubeconfig that has the cluster, as "oc config view --minify --flatten" writes it`,
    );
  });

  it("several empty files are all named", async () => {
    const { a, b, c } = await write({ a: "", b: "{}\n", c: "# nothing\n" });
    expect(
      messageOf(() =>
        kubeConfigFor({ kubeconfigPaths: [a!, b!, c!], origin: `KUBECONFIG (${a}:${b}:${c})` }),
      ),
    ).toBe(
      `KUBECONFIG (${a}:${b}:${c}) holds no clusters or contexts (${a}, ${b} and ${c} are empty); name a kubeconfig that has the cluster, as "oc config view --minify --flatten" writes it`,
    );
  });

  it("--kubeconfig naming an empty file is refused naming the setting and the file (CLIs and serve alike)", async () => {
    const { empty } = await write({ empty: "\n" });
    const expected = `setting kubeconfig (--kubeconfig ${empty}) holds no clusters or contexts (${empty} is empty); name a kubeconfig that has the cluster, as "oc config view --minify --flatten" writes it`;
    expect(messageOf(() => kubeConfigFor({ kubeconfigPath: empty! }))).toBe(expected);
    expect(
      messageOf(() =>
        kubeConfigFor({ kubeconfigPaths: [empty!], origin: `setting kubeconfig (--kubeconfig ${empty})` }),
      ),
    ).toBe(expected);
  });

  it("files holding users only: no clusters or contexts, and none of them is called empty", async () => {
    const { users } = await write({ users: "users: [{ name: u, user: { token: t } }]\n" });
    expect(
      messageOf(() => kubeConfigFor({ kubeconfigPaths: [users!], origin: `KUBECONFIG (${users})` })),
    ).toBe(
      `KUBECONFIG (${users}) holds no clusters or contexts; name a kubeconfig that has the cluster, as "oc config view --minify --flatten" writes it`,
    );
  });

  it.each([
    ["a YAML list", "- a\n- b\n", "it is a list, not a mapping of clusters, users and contexts"],
    ["a number", "42\n", "it is a number, not a mapping of clusters, users and contexts"],
    ["a string", "hello there\n", "it is a string, not a mapping of clusters, users and contexts"],
    [
      "clusters as a mapping",
      "clusters: { c: { server: https://x } }\n",
      "clusters is a mapping, not a list",
    ],
    ["contexts as a string", "contexts: ctx\n", "contexts is a string, not a list"],
    ["a null cluster entry", "clusters: [null]\n", "clusters[0] is null, not a mapping"],
    ["a user entry that is a string", "users: [u]\n", "users[0] is a string, not a mapping"],
    [
      "a name that is a number",
      "clusters: [{ name: 5, cluster: { server: https://x } }]\n",
      "clusters[0].name is a number, not a string",
    ],
    [
      "a cluster body that is a list",
      "clusters: [{ name: c, cluster: [] }]\n",
      "clusters[0].cluster is a list, not a mapping",
    ],
    [
      "a server that is a number",
      "clusters: [{ name: c, cluster: { server: 6443 } }]\n",
      "clusters[0].cluster.server is a number, not a string",
    ],
    [
      "a certificate path that is a list",
      "clusters: [{ name: c, cluster: { server: https://x, certificate-authority: [a] } }]\n",
      "clusters[0].cluster.certificate-authority is a list, not a string",
    ],
    [
      "a token-file that is a number",
      "users: [{ name: u, user: { token-file: 0 } }]\n",
      "users[0].user.token-file is a number, not a string",
    ],
    [
      "an exec that is a string",
      "users: [{ name: u, user: { exec: oc } }]\n",
      "users[0].user.exec is a string, not a mapping",
    ],
    [
      "a context's cluster that is a mapping",
      "contexts: [{ name: x, context: { cluster: {} } }]\n",
      "contexts[0].context.cluster is a mapping, not a string",
    ],
    ["a current-context that is a list", "current-context: [a]\n", "current-context is a list, not a string"],
    [
      "two YAML documents",
      `${kubeconfigText}---\n${kubeconfigText}`,
      "it holds 2 YAML documents, where a kubeconfig is one",
    ],
  ])("a file holding %s is refused naming the file and what is wrong", async (_name, text, problem) => {
    const { bad, real } = await write({ bad: text, real: kubeconfigText });
    const origin = `KUBECONFIG (${real}:${bad})`;
    const message = messageOf(() => kubeConfigFor({ kubeconfigPaths: [real!, bad!], origin }));
    expect(message).toBe(`cannot load ${origin}: ${bad} is not a kubeconfig: ${problem}`);
    expect(messageOf(() => kubeConfigFor({ kubeconfigPath: bad! }))).toBe(
      `cannot load setting kubeconfig (--kubeconfig ${bad}): ${bad} is not a kubeconfig: ${problem}`,
    );
  });

  it("a file that is not YAML is refused naming the file, never with a JavaScript error's text", async () => {
    const { bad } = await write({ bad: "clusters: [\n  { name: c\n" });
    const message = messageOf(() =>
      kubeConfigFor({ kubeconfigPaths: [bad!], origin: `KUBECONFIG (${bad})` }),
    );
    expect(message).toMatch(
      new RegExp(`^cannot load KUBECONFIG \\(${bad}\\): ${bad}: YAML document 1 line \\d+: `),
    );
    expect(message).not.toMatch(/TypeError|Cannot read properties|undefined/);
  });

  it("an entry client-node finds incomplete is refused naming the file", async () => {
    const { bad } = await write({ bad: "clusters: [{ name: c }]\n" });
    expect(messageOf(() => kubeConfigFor({ kubeconfigPaths: [bad!], origin: `KUBECONFIG (${bad})` }))).toBe(
      `cannot load KUBECONFIG (${bad}): ${bad}: clusters[0].cluster is missing`,
    );
  });

  it("the local API server's kubeconfig text goes through the same checks", () => {
    expect(messageOf(() => kubeConfigFor({ kubeconfigText: "" }))).toBe(
      `the local API server's kubeconfig holds no clusters or contexts (it is empty); name a kubeconfig that has the cluster, as "oc config view --minify --flatten" writes it`,
    );
    expect(messageOf(() => kubeConfigFor({ kubeconfigText: "[]" }))).toBe(
      "cannot load the local API server's kubeconfig: it is not a kubeconfig: it is a list, not a mapping of clusters, users and contexts",
    );
  });

  it("relative certificate paths of a merged file stay relative to that file", async () => {
    const { empty, real } = await write({
      empty: "",
      real: kubeconfigText.replace(
        'server: "https://127.0.0.1:6443"',
        'server: "https://127.0.0.1:6443", certificate-authority: ca.crt',
      ),
    });
    const kc = kubeConfigFor({ kubeconfigPaths: [empty!, real!], origin: "KUBECONFIG" });
    expect(kc.getCurrentCluster()?.caFile).toBe(join(real!, "..", "ca.crt"));
  });
});
