/** The client factory: where the KubeConfig comes from and how a bad source is reported. */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { connect, KubeConfigError, kubeConfigFor } from "../../src/kube/config.js";

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
