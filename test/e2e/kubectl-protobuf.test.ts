/**
 * kubectl's generator commands in local mode (issue 22): `kubectl create configmap|secret|namespace` send
 * protobuf bodies, which the local server decodes for those built-ins (src/apiserver/protobuf) — so a
 * person following a Kubernetes tutorial against `npm start` sees them work, and `get -o json` shows what
 * they sent. A custom resource still refuses protobuf with 415, as a real server does.
 */
import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Product, runKubectl, startProduct } from "./helpers.js";

let product: Product;
const kubectl = (args: string[]) => runKubectl(product.dir, product.kubeconfig, args);

beforeAll(async () => {
  product = await startProduct("kubectl-protobuf", []);
}, 120_000);

afterAll(async () => {
  if (!product) return;
  product.child.kill("SIGTERM");
  await new Promise((r) => product.child.once("exit", r));
  await rm(product.dir, { recursive: true, force: true });
});

const getJson = async (args: string[]): Promise<Record<string, unknown>> => {
  const r = await kubectl(["get", ...args, "-o", "json", "--show-managed-fields"]);
  expect(r.stderr).toBe("");
  return JSON.parse(r.stdout) as Record<string, unknown>;
};

describe("kubectl create's protobuf bodies in local mode", () => {
  it("create namespace n: the namespace exists and is Active", async () => {
    const r = await kubectl(["create", "namespace", "n"]);
    expect(r).toMatchObject({ code: 0, stdout: "namespace/n created\n" });
    expect(await getJson(["namespace", "n"])).toMatchObject({
      kind: "Namespace",
      metadata: { name: "n" },
      status: { phase: "Active" },
    });
  });

  it("create configmap x --from-literal=a=b: get shows its data", async () => {
    const r = await kubectl(["create", "configmap", "x", "-n", "n", "--from-literal=a=b"]);
    expect(r).toMatchObject({ code: 0, stdout: "configmap/x created\n" });
    const cm = await getJson(["configmap", "x", "-n", "n"]);
    expect(cm).toMatchObject({
      kind: "ConfigMap",
      metadata: { name: "x", namespace: "n" },
      data: { a: "b" },
    });
    const managers = (cm.metadata as { managedFields: { manager: string }[] }).managedFields.map(
      (m) => m.manager,
    );
    expect(managers).toEqual(["kubectl-create"]);
  });

  it("create secret generic s --from-literal=k=v: get shows base64 data and type Opaque", async () => {
    const r = await kubectl(["create", "secret", "generic", "s", "-n", "n", "--from-literal=k=v"]);
    expect(r).toMatchObject({ code: 0, stdout: "secret/s created\n" });
    expect(await getJson(["secret", "s", "-n", "n"])).toMatchObject({
      kind: "Secret",
      metadata: { name: "s", namespace: "n" },
      data: { k: Buffer.from("v").toString("base64") },
      type: "Opaque",
    });
  });

  it("create configmap twice: the second is AlreadyExists, as on a real server", async () => {
    const r = await kubectl(["create", "configmap", "x", "-n", "n", "--from-literal=a=c"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('error: failed to create configmap: configmaps "x" already exists\n');
  });
});
