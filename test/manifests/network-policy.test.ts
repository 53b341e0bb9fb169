/**
 * The NetworkPolicies of the kustomize base and of the installer (SPEC §9, issue 21), judged by which connections they admit
 * rather than by their text: the rendered policies, plus the default-deny cluster-capi-operator puts on
 * openshift-cluster-api, go through a small evaluator of Kubernetes NetworkPolicy semantics
 * (helpers.ts) for a table of peers. The product's pod is the one the rendered Deployment makes (its labels
 * and container ports), so a relabelled pod or a moved port fails here. The evaluator's own semantics
 * have a short table first, so a lenient evaluator cannot pass the policies.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { parseConfig, SETTINGS } from "../../src/config.js";
import { getPath, isRecord, type KubeObject } from "../../src/kube/object.js";
import {
  type Connection,
  type ContainerPort,
  type Endpoint,
  networkPoliciesAdmit,
  ofKind,
  renderKustomization,
  theOne,
} from "./helpers.js";

const CAPI_NS = SETTINGS.capiNamespace.default;
/** SPEC §2.1: metrics get their own HTTPS listener, `--metrics-port`, default 8443. */
const METRICS_PORT = SETTINGS.metricsPort.default;
const API_SERVER_PORT = 6443;

/** What cluster-capi-operator ships for the namespace: nothing in or out unless another policy says so. */
const PLATFORM_DEFAULT_DENY: KubeObject = {
  apiVersion: "networking.k8s.io/v1",
  kind: "NetworkPolicy",
  metadata: { name: "default-deny", namespace: CAPI_NS },
  spec: { podSelector: {}, policyTypes: ["Ingress", "Egress"] },
};

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

const podTemplate = (objects: readonly KubeObject[], name: string) => {
  const d = theOne(objects, "Deployment", name);
  const labels = getPath(d, ["spec", "template", "metadata", "labels"]) as Record<string, string>;
  const containers = getPath(d, ["spec", "template", "spec", "containers"]) as Record<string, unknown>[];
  const ports = containers.flatMap((c) => (Array.isArray(c.ports) ? (c.ports as ContainerPort[]) : []));
  const args = containers.flatMap((c) => (Array.isArray(c.args) ? (c.args as string[]) : []));
  return { labels, ports, args };
};

const product = (): Endpoint => {
  const { labels, ports } = podTemplate(base, "machine-api-migration");
  return { kind: "pod", namespace: CAPI_NS, labels, ports };
};
const webhookPort = (): number => {
  const parsed = parseConfig(podTemplate(base, "machine-api-migration").args, {});
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.config.webhookPort;
};

// Peers, as they are on an OpenShift cluster.
const apiServerEndpoint: Endpoint = { kind: "host", address: "10.0.0.10" };
const node: Endpoint = { kind: "host", address: "10.0.0.21" };
const internet: Endpoint = { kind: "host", address: "52.94.0.10" };
const publicResolver: Endpoint = { kind: "host", address: "8.8.8.8" };
const pod = (namespace: string, labels: Record<string, string>, ports?: ContainerPort[]): Endpoint => ({
  kind: "pod",
  namespace,
  labels,
  namespaceLabels: namespace.startsWith("openshift-") ? { "openshift.io/cluster-monitoring": "true" } : {},
  ...(ports ? { ports } : {}),
});
const dnsDefault = pod("openshift-dns", { "dns.operator.openshift.io/daemonset-dns": "default" }, [
  { name: "dns", containerPort: 5353, protocol: "UDP" },
  { name: "dns-tcp", containerPort: 5353, protocol: "TCP" },
  { name: "metrics", containerPort: 9154, protocol: "TCP" },
]);
const otherDnsPod = pod("openshift-dns", { app: "something-else" });
const kubeDns = pod("kube-system", { "k8s-app": "kube-dns" });
const prometheus = pod("openshift-monitoring", { "app.kubernetes.io/name": "prometheus" });
const userWorkloadPrometheus = pod("openshift-user-workload-monitoring", {
  "app.kubernetes.io/name": "prometheus",
});
const capiManager = pod(CAPI_NS, { "cluster.x-k8s.io/provider": "cluster-api" }, [
  { name: "webhook-server", containerPort: 9443 },
]);
const userPod = pod("team-a", { app: "tooling" });

type Row = [string, "admitted" | "denied", () => Connection];
const out = (to: Endpoint, protocol: Connection["protocol"], port: number) => (): Connection => ({
  from: product(),
  to,
  protocol,
  port,
});
const into = (from: Endpoint, protocol: Connection["protocol"], port: () => number) => (): Connection => ({
  from,
  to: product(),
  protocol,
  port: port(),
});
const webhook = () => webhookPort();
const metrics = () => METRICS_PORT;
const fixed = (n: number) => () => n;

const ROWS: Row[] = [
  // Egress: the API server and DNS, nothing else.
  [
    "egress to the API server's endpoint on TCP 6443",
    "admitted",
    out(apiServerEndpoint, "TCP", API_SERVER_PORT),
  ],
  [
    "egress to the API server's endpoint on UDP 6443",
    "denied",
    out(apiServerEndpoint, "UDP", API_SERVER_PORT),
  ],
  ["egress to the API server's endpoint on TCP 2379 (etcd)", "denied", out(apiServerEndpoint, "TCP", 2379)],
  ["egress to a cloud API on TCP 443", "denied", out(internet, "TCP", 443)],
  ["egress to openshift-dns dns-default on UDP 5353", "admitted", out(dnsDefault, "UDP", 5353)],
  ["egress to openshift-dns dns-default on TCP 5353", "admitted", out(dnsDefault, "TCP", 5353)],
  ["egress to openshift-dns dns-default on UDP 53", "admitted", out(dnsDefault, "UDP", 53)],
  ["egress to openshift-dns dns-default on TCP 53", "admitted", out(dnsDefault, "TCP", 53)],
  ["egress to openshift-dns dns-default on its metrics port 9154", "denied", out(dnsDefault, "TCP", 9154)],
  ["egress to another pod of openshift-dns on UDP 5353", "denied", out(otherDnsPod, "UDP", 5353)],
  ["egress to kube-system kube-dns on UDP 53", "denied", out(kubeDns, "UDP", 53)],
  ["egress to a public resolver on UDP 53", "denied", out(publicResolver, "UDP", 53)],
  ["egress to the CAPI manager's webhook in the same namespace", "denied", out(capiManager, "TCP", 9443)],
  ["egress to Prometheus on TCP 9091", "denied", out(prometheus, "TCP", 9091)],
  // Ingress: the webhook from anywhere, metrics from the platform monitoring stack only.
  ["ingress to the webhook port from the API server", "admitted", into(apiServerEndpoint, "TCP", webhook)],
  ["ingress to the webhook port from the kubelet (probes)", "admitted", into(node, "TCP", webhook)],
  ["ingress to the webhook port from a pod of another namespace", "admitted", into(userPod, "TCP", webhook)],
  ["ingress to the webhook port over UDP", "denied", into(apiServerEndpoint, "UDP", webhook)],
  ["ingress to the metrics port from openshift-monitoring", "admitted", into(prometheus, "TCP", metrics)],
  [
    "ingress to the metrics port from openshift-user-workload-monitoring",
    "denied",
    into(userWorkloadPrometheus, "TCP", metrics),
  ],
  ["ingress to the metrics port from the same namespace", "denied", into(capiManager, "TCP", metrics)],
  ["ingress to the metrics port from a host", "denied", into(node, "TCP", metrics)],
  [
    "ingress from openshift-monitoring to another port (9090)",
    "denied",
    into(prometheus, "TCP", fixed(9090)),
  ],
  ["ingress from anywhere to TCP 22", "denied", into(internet, "TCP", fixed(22))],
  ["ingress from a pod of another namespace to TCP 8080", "denied", into(userPod, "TCP", fixed(8080))],
];

describe("NetworkPolicies of the base: which peers the product's pods may talk to (SPEC §9)", () => {
  const policies = () => ofKind(base, "NetworkPolicy");

  it.each(ROWS)("%s: %s", (_what, verdict, connection) => {
    const all = [PLATFORM_DEFAULT_DENY, ...policies()];
    expect(networkPoliciesAdmit(all, connection()) ? "admitted" : "denied").toBe(verdict);
  });

  it.each(ROWS)("without the platform's default-deny too — %s: %s", (_what, verdict, connection) => {
    expect(networkPoliciesAdmit(policies(), connection()) ? "admitted" : "denied").toBe(verdict);
  });

  it("the webhook port the policy admits is the one the process listens on (--webhook-port, container port https)", () => {
    const https = (product() as Extract<Endpoint, { kind: "pod" }>).ports?.find((p) => p.name === "https");
    expect(https?.containerPort).toBe(webhookPort());
    const admitted = (port: number) =>
      networkPoliciesAdmit([PLATFORM_DEFAULT_DENY, ...policies()], into(userPod, "TCP", fixed(port))());
    expect(admitted(webhookPort())).toBe(true);
    expect(admitted(webhookPort() + 1)).toBe(false);
  });

  it("the metrics port the policy admits is the one the process listens on (--metrics-port, container port metrics)", () => {
    const parsed = parseConfig(podTemplate(base, "machine-api-migration").args, {});
    if (!parsed.ok) throw new Error(parsed.error);
    expect(parsed.config.metricsPort).toBe(METRICS_PORT);
    const metricsPort = (product() as Extract<Endpoint, { kind: "pod" }>).ports?.find(
      (p) => p.name === "metrics",
    );
    expect(metricsPort?.containerPort).toBe(parsed.config.metricsPort);
    const admitted = (port: number) =>
      networkPoliciesAdmit([PLATFORM_DEFAULT_DENY, ...policies()], into(prometheus, "TCP", fixed(port))());
    expect(admitted(parsed.config.metricsPort)).toBe(true);
    expect(admitted(parsed.config.metricsPort + 1)).toBe(false);
  });

  it("open nothing for the other pods of the namespace (the platform's own policies do that), nor the installer's", () => {
    const installerPod: Endpoint = {
      kind: "pod",
      namespace: CAPI_NS,
      labels: podTemplate(installer, "machine-api-migration-installer").labels,
    };
    for (const other of [capiManager, installerPod]) {
      const all = [PLATFORM_DEFAULT_DENY, ...policies()];
      expect(
        networkPoliciesAdmit(all, { from: other, to: apiServerEndpoint, protocol: "TCP", port: 6443 }),
      ).toBe(false);
      expect(networkPoliciesAdmit(all, { from: prometheus, to: other, protocol: "TCP", port: 8443 })).toBe(
        false,
      );
    }
  });

  it("every policy lives in the CAPI namespace and selects the product's pods", () => {
    expect(policies().length).toBeGreaterThan(0);
    for (const p of policies()) {
      expect(p.metadata?.namespace, p.metadata?.name).toBe(CAPI_NS);
      const selector = getPath(p, ["spec", "podSelector"]);
      expect(isRecord(selector) && Object.keys(selector).length > 0, p.metadata?.name).toBe(true);
    }
  });

  it("the cert-manager overlay ships the same policies", () => {
    expect(ofKind(certManager, "NetworkPolicy")).toEqual(policies());
  });
});

/** The installer's pod, as the rendered installer Deployment makes it (SPEC §6, §9). */
const installerPod = (): Endpoint => {
  const { labels, ports } = podTemplate(installer, "machine-api-migration-installer");
  return { kind: "pod", namespace: CAPI_NS, labels, ports };
};
const installerOut = (to: Endpoint, protocol: Connection["protocol"], port: number) => (): Connection => ({
  from: installerPod(),
  to,
  protocol,
  port,
});
const intoInstaller = (from: Endpoint, protocol: Connection["protocol"], port: number) => (): Connection => ({
  from,
  to: installerPod(),
  protocol,
  port,
});

const INSTALLER_ROWS: Row[] = [
  // Egress: the API server and DNS, like the product's pods, nothing else.
  [
    "egress to the API server's endpoint on TCP 6443",
    "admitted",
    installerOut(apiServerEndpoint, "TCP", API_SERVER_PORT),
  ],
  [
    "egress to the API server's endpoint on UDP 6443",
    "denied",
    installerOut(apiServerEndpoint, "UDP", API_SERVER_PORT),
  ],
  [
    "egress to the API server's endpoint on TCP 2379 (etcd)",
    "denied",
    installerOut(apiServerEndpoint, "TCP", 2379),
  ],
  ["egress to a registry or cloud API on TCP 443", "denied", installerOut(internet, "TCP", 443)],
  ["egress to openshift-dns dns-default on UDP 5353", "admitted", installerOut(dnsDefault, "UDP", 5353)],
  ["egress to openshift-dns dns-default on TCP 5353", "admitted", installerOut(dnsDefault, "TCP", 5353)],
  ["egress to openshift-dns dns-default on UDP 53", "admitted", installerOut(dnsDefault, "UDP", 53)],
  ["egress to openshift-dns dns-default on TCP 53", "admitted", installerOut(dnsDefault, "TCP", 53)],
  [
    "egress to openshift-dns dns-default on its metrics port 9154",
    "denied",
    installerOut(dnsDefault, "TCP", 9154),
  ],
  ["egress to another pod of openshift-dns on UDP 5353", "denied", installerOut(otherDnsPod, "UDP", 5353)],
  ["egress to a public resolver on UDP 53", "denied", installerOut(publicResolver, "UDP", 53)],
  [
    "egress to the product's webhook in the same namespace",
    "denied",
    () => ({ from: installerPod(), to: product(), protocol: "TCP", port: webhookPort() }),
  ],
  [
    "egress to the CAPI manager's webhook in the same namespace",
    "denied",
    installerOut(capiManager, "TCP", 9443),
  ],
  // Ingress: it serves nothing.
  ["ingress from the API server on TCP 9443", "denied", intoInstaller(apiServerEndpoint, "TCP", 9443)],
  ["ingress from openshift-monitoring on TCP 8443", "denied", intoInstaller(prometheus, "TCP", 8443)],
  ["ingress from a pod of another namespace on TCP 8080", "denied", intoInstaller(userPod, "TCP", 8080)],
];

describe("NetworkPolicies of the installer: which peers its pod may talk to (SPEC §6, §9)", () => {
  const installerPolicies = () => ofKind(installer, "NetworkPolicy");

  it.each(INSTALLER_ROWS)("%s: %s", (_what, verdict, connection) => {
    const all = [PLATFORM_DEFAULT_DENY, ...installerPolicies(), ...ofKind(base, "NetworkPolicy")];
    expect(networkPoliciesAdmit(all, connection()) ? "admitted" : "denied").toBe(verdict);
  });

  it.each(INSTALLER_ROWS)(
    "without the platform's default-deny too — %s: %s",
    (_what, verdict, connection) => {
      const all = [...installerPolicies(), ...ofKind(base, "NetworkPolicy")];
      expect(networkPoliciesAdmit(all, connection()) ? "admitted" : "denied").toBe(verdict);
    },
  );

  it("open nothing for the product's pods nor the other pods of the namespace", () => {
    const all = [PLATFORM_DEFAULT_DENY, ...installerPolicies()];
    for (const other of [product(), capiManager]) {
      expect(
        networkPoliciesAdmit(all, { from: other, to: apiServerEndpoint, protocol: "TCP", port: 6443 }),
      ).toBe(false);
      expect(networkPoliciesAdmit(all, { from: other, to: dnsDefault, protocol: "UDP", port: 5353 })).toBe(
        false,
      );
    }
  });

  it("every policy lives in the CAPI namespace and selects the installer's pods", () => {
    expect(installerPolicies().length).toBeGreaterThan(0);
    for (const p of installerPolicies()) {
      expect(p.metadata?.namespace, p.metadata?.name).toBe(CAPI_NS);
      expect(getPath(p, ["spec", "podSelector", "matchLabels"]), p.metadata?.name).toEqual(
        podTemplate(installer, "machine-api-migration-installer").labels,
      );
    }
  });
});

describe("the NetworkPolicy evaluator (test helper) follows Kubernetes semantics", () => {
  const a = pod("ns-a", { app: "a" }, [{ name: "web", containerPort: 8080 }]);
  const b = pod("ns-b", { app: "b" });
  const policy = (spec: Record<string, unknown>, namespace = "ns-a"): KubeObject => ({
    kind: "NetworkPolicy",
    metadata: { name: "p", namespace },
    spec,
  });
  const toA = (port: number, protocol: Connection["protocol"] = "TCP"): Connection => ({
    from: b,
    to: a,
    protocol,
    port,
  });

  it.each([
    ["no policy: everything is admitted", [], toA(1), true],
    [
      "a policy selecting another pod does not isolate this one",
      [policy({ podSelector: { matchLabels: { app: "z" } }, ingress: [] })],
      toA(1),
      true,
    ],
    [
      "policyTypes defaults to Ingress: a selecting policy without rules denies ingress",
      [policy({ podSelector: {} })],
      toA(1),
      false,
    ],
    [
      "an Egress-only policy leaves ingress open",
      [policy({ podSelector: {}, policyTypes: ["Egress"] })],
      toA(1),
      true,
    ],
    [
      "a peer with only a podSelector means pods of the policy's own namespace",
      [policy({ podSelector: {}, ingress: [{ from: [{ podSelector: {} }] }] })],
      toA(1),
      false,
    ],
    [
      "a namespaceSelector admits pods of the namespaces it matches",
      [
        policy({
          podSelector: {},
          ingress: [
            { from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "ns-b" } } }] },
          ],
        }),
      ],
      toA(1),
      true,
    ],
    [
      "namespaceSelector and podSelector in one peer must both match",
      [
        policy({
          podSelector: {},
          ingress: [{ from: [{ namespaceSelector: {}, podSelector: { matchLabels: { app: "z" } } }] }],
        }),
      ],
      toA(1),
      false,
    ],
    [
      "a named port resolves to the destination pod's container port",
      [policy({ podSelector: {}, ingress: [{ ports: [{ port: "web" }] }] })],
      toA(8080),
      true,
    ],
    [
      "a named port does not match another number",
      [policy({ podSelector: {}, ingress: [{ ports: [{ port: "web" }] }] })],
      toA(8081),
      false,
    ],
    [
      "a port's protocol defaults to TCP",
      [policy({ podSelector: {}, ingress: [{ ports: [{ port: 8080 }] }] })],
      toA(8080, "UDP"),
      false,
    ],
    [
      "endPort makes a range",
      [policy({ podSelector: {}, ingress: [{ ports: [{ port: 8000, endPort: 8100 }] }] })],
      toA(8080),
      true,
    ],
    [
      "the sender's egress must admit too",
      [policy({ podSelector: {}, policyTypes: ["Egress"] }, "ns-b")],
      toA(8080),
      false,
    ],
    [
      "policies add up: one admitting rule of any selecting policy is enough",
      [policy({ podSelector: {} }), policy({ podSelector: {}, ingress: [{}] })],
      toA(8080),
      true,
    ],
  ] as const)("%s", (_what, policies, connection, expected) => {
    expect(networkPoliciesAdmit(policies as readonly KubeObject[], connection)).toBe(expected);
  });

  it("refuses to guess about ipBlock peers", () => {
    const p = policy({ podSelector: {}, ingress: [{ from: [{ ipBlock: { cidr: "10.0.0.0/8" } }] }] });
    expect(() => networkPoliciesAdmit([p], toA(1))).toThrow(/ipBlock/);
  });
});
