/**
 * The metrics listener against the real API server (SPEC §2.1, §7, §8.1): the product as a process under its
 * ServiceAccount with the shipped RBAC, scraped the way the platform Prometheus scrapes it. No token → 401;
 * a real ServiceAccount token whose user may not `get /metrics` → 403; the token of
 * `openshift-monitoring/prometheus-k8s`, bound by the shipped `machine-api-migration-metrics-reader`
 * ClusterRoleBinding → 200 with controller-runtime's series. Every answer is the real TokenReview and
 * SubjectAccessReview of kube-apiserver, made with the product's own (shipped) permissions — the local API
 * server has neither review, so only this suite can show them. The webhook port serves no /metrics.
 */
import { readFile } from "node:fs/promises";
import { request as httpsRequest } from "node:https";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { connect } from "../../src/kube/config.js";
import { KINDS, type ResourceType } from "../../src/kube/kinds.js";
import { isRecord, type KubeObject } from "../../src/kube/object.js";
import { type ClusterProduct, startClusterProduct } from "./product.js";

const METRICS_READER = "machine-api-migration-metrics-reader";
const PROMETHEUS = { namespace: "openshift-monitoring", name: "prometheus-k8s" };

const type = (group: string, kind: string, plural: string, namespaced: boolean) =>
  ({ group, version: "v1", kind, plural, namespaced }) as ResourceType;
const CLUSTER_ROLE = type("rbac.authorization.k8s.io", "ClusterRole", "clusterroles", false);
const CLUSTER_ROLE_BINDING = type(
  "rbac.authorization.k8s.io",
  "ClusterRoleBinding",
  "clusterrolebindings",
  false,
);
const SERVICE_ACCOUNT = type("", "ServiceAccount", "serviceaccounts", true);

let p: ClusterProduct;
let caPem: string;
let prometheusToken: string;
/** A fresh token of prometheus-k8s: one the product has not reviewed (and so not cached) yet. */
let newPrometheusToken: () => Promise<string>;

interface Answer {
  status: number;
  body: string;
}
const scrape = (url: string, token?: string): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const req = httpsRequest(
      new URL("/metrics", url),
      { ca: caPem, agent: false, headers: token ? { authorization: `Bearer ${token}` } : {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end();
  });

/** The token of the one user in a kubeconfig (what that identity's pod would mount). */
const tokenOf = (kubeconfig: string): string => {
  const users = (parse(kubeconfig) as { users: { user: { token: string } }[] }).users;
  const token = users[0]?.user.token;
  if (!token) throw new Error("kubeconfig without a token");
  return token;
};

/** The shipped metrics-reader ClusterRole and its binding, from manifests/base/monitoring.yaml as written. */
const shippedReaderRbac = async (): Promise<KubeObject[]> =>
  parseAllDocuments(await readFile("manifests/base/monitoring.yaml", "utf8"))
    .map((d) => d.toJS() as unknown)
    .filter(
      (o): o is KubeObject =>
        isRecord(o) &&
        (o.kind === "ClusterRole" || o.kind === "ClusterRoleBinding") &&
        isRecord(o.metadata) &&
        o.metadata.name === METRICS_READER,
    );

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  p = await startClusterProduct("metrics", { simulateProviders: false });
  caPem = await readFile(join(p.dir, "certs", "ca.crt"), "utf8");

  // As a cluster admin: the monitoring stack's ServiceAccount, and the shipped ClusterRole and binding.
  const admin = p.cluster.clientAs("admin");
  await admin
    .create(KINDS.namespace, {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: PROMETHEUS.namespace },
    })
    .catch(() => undefined);
  await admin.create(SERVICE_ACCOUNT, { apiVersion: "v1", kind: "ServiceAccount", metadata: PROMETHEUS });
  const rbac = await shippedReaderRbac();
  expect(rbac.map((o) => o.kind).sort()).toEqual(["ClusterRole", "ClusterRoleBinding"]);
  for (const o of rbac) await admin.create(o.kind === "ClusterRole" ? CLUSTER_ROLE : CLUSTER_ROLE_BINDING, o);

  const { transport } = connect({ kubeconfigText: p.cluster.kubeconfigFor("admin") });
  newPrometheusToken = async () => {
    const issued = (await transport.request({
      method: "POST",
      path: `/api/v1/namespaces/${PROMETHEUS.namespace}/serviceaccounts/${PROMETHEUS.name}/token`,
      body: {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: { expirationSeconds: 3600 },
      },
    })) as { status?: { token?: string } };
    if (!issued.status?.token) throw new Error(`TokenRequest gave no token: ${JSON.stringify(issued)}`);
    return issued.status.token;
  };
  prometheusToken = await newPrometheusToken();
}, 300_000);

afterAll(async () => {
  await p?.stop();
});

describe("the metrics listener against kube-apiserver's TokenReview and SubjectAccessReview (SPEC §2.1)", () => {
  it("is printed on the ready line, on its own port", () => {
    const product = p.processes[0]!;
    expect(product.metricsUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(new URL(product.metricsUrl).port).not.toBe(new URL(product.webhookUrl).port);
  });

  it("401 without a token", async () => {
    const answer = await scrape(p.processes[0]!.metricsUrl);
    expect(answer.status).toBe(401);
    expect(answer.body).not.toContain("controller_runtime");
  });

  it("401 for a token the API server does not know", async () => {
    const answer = await scrape(p.processes[0]!.metricsUrl, "not-a-real-token");
    expect(answer.status).toBe(401);
  });

  it("403 for a real ServiceAccount token whose user may not get /metrics (capa-controller-manager)", async () => {
    const answer = await scrape(p.processes[0]!.metricsUrl, tokenOf(p.cluster.kubeconfigFor("capa")));
    expect(answer.status).toBe(403);
    expect(answer.body).toContain(
      "Authorization denied for user system:serviceaccount:openshift-cluster-api:capa-controller-manager",
    );
    expect(answer.body).not.toContain("controller_runtime");
  });

  it("200 with controller-runtime's series for prometheus-k8s, through the shipped metrics-reader binding", async () => {
    const url = p.processes[0]!.metricsUrl;
    const wanted = [
      /^controller_runtime_reconcile_total\{controller="machine-sync",result="success"\} \d+/m,
      /^controller_runtime_active_workers\{controller="migration-machine"\} \d+/m,
      /^controller_runtime_max_concurrent_reconciles\{controller="machineset-sync"\} \d+/m,
      /^workqueue_adds_total\{name="machine-sync",controller="machine-sync"\} [1-9]/m,
      /^workqueue_queue_duration_seconds_count\{name="machine-sync",controller="machine-sync"\} [1-9]/m,
      /^leader_election_master_status\{name="machine-api-migration"\} 1/m,
      /^rest_client_requests_total\{code="201",method="POST",host="[^"]+"\} [1-9]/m,
      /^controller_runtime_webhook_requests_total\{webhook="\/validate",code="200"\} [1-9]/m,
      /^machine_api_migration_admission_requests_total\{/m,
      /^process_cpu_seconds_total /m,
    ];
    let last: Answer = { status: 0, body: "" };
    for (let i = 0; i < 150; i++) {
      last = await scrape(url, prometheusToken);
      if (last.status === 200 && wanted.every((w) => w.test(last.body))) break;
      await pause(200);
    }
    expect(last.status).toBe(200);
    for (const w of wanted) expect(last.body, String(w)).toMatch(w);
    // The old, unprefixed names are gone.
    expect(last.body).not.toMatch(/^reconcile_total\{/m);
    expect(last.body).not.toMatch(/^admission_requests_total\{/m);
  });

  it("the shipped tokenreviews rule is what lets the product review a token: without it, 500", async () => {
    const admin = p.cluster.clientAs("admin");
    const shipped = await admin.get(CLUSTER_ROLE, "", "machine-api-migration");
    const rules = shipped.rules as { apiGroups?: string[]; resources?: string[] }[];
    const withoutTokenReviews = rules.filter((r) => !(r.resources ?? []).includes("tokenreviews"));
    expect(withoutTokenReviews.length).toBe(rules.length - 1);
    await admin.update(CLUSTER_ROLE, { ...shipped, rules: withoutTokenReviews });
    try {
      let answer: Answer = { status: 0, body: "" };
      for (let i = 0; i < 50 && answer.status !== 500; i++) {
        answer = await scrape(p.processes[0]!.metricsUrl, await newPrometheusToken());
        if (answer.status !== 500) await pause(200);
      }
      expect(answer.status).toBe(500);
      expect(answer.body).toContain("Authentication failed");
    } finally {
      const current = await admin.get(CLUSTER_ROLE, "", "machine-api-migration");
      await admin.update(CLUSTER_ROLE, { ...current, rules });
    }
    let restored: Answer = { status: 0, body: "" };
    for (let i = 0; i < 50 && restored.status !== 200; i++) {
      restored = await scrape(p.processes[0]!.metricsUrl, await newPrometheusToken());
      if (restored.status !== 200) await pause(200);
    }
    expect(restored.status).toBe(200);
  });

  it("the webhook port has no /metrics", async () => {
    const answer = await scrape(p.processes[0]!.webhookUrl, prometheusToken);
    expect(answer.status).toBe(404);
    expect(answer.body).not.toContain("controller_runtime");
  });
});
