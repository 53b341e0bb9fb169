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
