/**
 * kubectl's generator and auth commands in local mode (issue 22): `kubectl create configmap|secret|namespace|
 * serviceaccount|role|clusterrole|rolebinding|clusterrolebinding|priorityclass|poddisruptionbudget`, `kubectl
 * auth can-i` and `kubectl auth whoami` send protobuf bodies, which the local server decodes for those
 * built-ins (src/apiserver/protobuf) — so a person following a Kubernetes tutorial against `npm start` sees
 * them work, and `get -o json` shows what they sent. The access reviews answer from the server's own RBAC
 * (src/apiserver/access-reviews.ts). A custom resource still refuses protobuf with 415, as a real server does.
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

describe("kubectl's RBAC generators and auth commands in local mode", () => {
  it("create serviceaccount, role, rolebinding, …, deployment and service: each is stored as sent", async () => {
    for (const args of [
      ["serviceaccount", "robot", "-n", "n"],
      ["role", "pod-reader", "-n", "n", "--verb=get,list", "--resource=pods"],
      ["rolebinding", "robot-reads", "-n", "n", "--role=pod-reader", "--serviceaccount=n:robot"],
      ["clusterrole", "node-reader", "--verb=get", "--resource=nodes"],
      ["clusterrolebinding", "robot-nodes", "--clusterrole=node-reader", "--serviceaccount=n:robot"],
      ["priorityclass", "high", "--value=1000", "--description=probe"],
      ["poddisruptionbudget", "pdb", "-n", "n", "--selector=app=x", "--min-available=50%"],
      ["deployment", "web", "-n", "n", "--image=registry.example/web:1", "--replicas=2", "--port=8080"],
      ["service", "clusterip", "web", "-n", "n", "--tcp=80:8080"],
    ]) {
      const r = await kubectl(["create", ...args]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
    }
    expect(await getJson(["rolebinding", "robot-reads", "-n", "n"])).toMatchObject({
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "pod-reader" },
      subjects: [{ kind: "ServiceAccount", name: "robot", namespace: "n" }],
    });
    expect(await getJson(["role", "pod-reader", "-n", "n"])).toMatchObject({
      rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] }],
    });
    expect(await getJson(["priorityclass", "high"])).toMatchObject({
      value: 1000,
      preemptionPolicy: "PreemptLowerPriority",
    });
    expect(await getJson(["poddisruptionbudget", "pdb", "-n", "n"])).toMatchObject({
      spec: { minAvailable: "50%", selector: { matchLabels: { app: "x" } } },
    });
    // The workload kinds' messages are generated from Kubernetes' sources (src/apiserver/protobuf/generated.ts).
    expect(await getJson(["deployment", "web", "-n", "n"])).toMatchObject({
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: "web" } },
        template: {
          metadata: { labels: { app: "web" } },
          spec: {
            containers: [{ name: "web", image: "registry.example/web:1", ports: [{ containerPort: 8080 }] }],
          },
        },
      },
    });
    expect(await getJson(["service", "web", "-n", "n"])).toMatchObject({
      spec: { type: "ClusterIP", ports: [{ name: "80-8080", port: 80, protocol: "TCP", targetPort: 8080 }] },
    });
  });

  it("auth can-i answers from the server's RBAC: the product may not read Secrets cluster-wide", async () => {
    expect(
      await kubectl(["auth", "can-i", "list", "secrets", "-A", "--context", "controller"]),
    ).toMatchObject({
      code: 1,
      stdout: "no\n",
    });
    expect(
      await kubectl([
        "auth",
        "can-i",
        "list",
        "machines.machine.openshift.io",
        "-n",
        "openshift-machine-api",
        "--context",
        "controller",
      ]),
    ).toMatchObject({ code: 0, stdout: "yes\n" });
    // The binding made above, asked about through impersonation: admin may impersonate (cluster-admin), and
    // the answer is the robot's, not admin's.
    const asRobot = (verb: string) =>
      kubectl(["auth", "can-i", verb, "nodes", "--as=system:serviceaccount:n:robot"]);
    expect(await asRobot("get")).toMatchObject({ code: 0, stdout: "yes\n" });
    expect(await asRobot("delete")).toMatchObject({ code: 1, stdout: "no\n" });
    // The product's identity may not impersonate anyone.
    const refused = await kubectl(["get", "configmaps", "-n", "n", "--context", "controller", "--as=alice"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'users "alice" is forbidden: User "system:serviceaccount:openshift-cluster-api:machine-api-migration" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
  });

  it("auth whoami names the caller and its groups", async () => {
    const r = await kubectl(["auth", "whoami", "--context", "controller", "-o", "json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      kind: "SelfSubjectReview",
      status: {
        userInfo: {
          username: "system:serviceaccount:openshift-cluster-api:machine-api-migration",
          groups: [
            "system:serviceaccounts",
            "system:serviceaccounts:openshift-cluster-api",
            "system:authenticated",
          ],
        },
      },
    });
  });
});
