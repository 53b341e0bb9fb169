import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type AdmissionAttributes,
  type AdmissionDispatcher,
  createAdmissionDispatcher,
} from "../../../src/apiserver/admission/index.js";
import {
  AWSMACHINE_DEFAULTER_WEBHOOK,
  type AwsMachineDefaulter,
  awsMachineDefaulterConfiguration,
  startAwsMachineDefaulter,
} from "../../../src/apiserver/fixtures/awsmachine-defaulter.js";
import type { KubeObject } from "../../../src/kube/object.js";
import {
  type CertificateAuthority,
  createCertificateAuthority,
  issueServingCertificate,
} from "../../../src/server/certs.js";

/** What a test webhook answers: a response (uid is filled in unless given), or "hang" to never answer. */
type Answer = Record<string, unknown> | "hang";
interface Received {
  url: string;
  review: { request: Record<string, unknown> };
}
interface TestWebhook {
  url: (path?: string) => string;
  received: Received[];
  stop: () => Promise<void>;
}

let ca: CertificateAuthority;
let serving: { certPem: string; keyPem: string };
/** Signed by a CA the webhooks' caBundle does not name. */
let foreignServing: { certPem: string; keyPem: string };
const running: TestWebhook[] = [];
let dispatcher: AdmissionDispatcher | undefined;

beforeAll(() => {
  ca = createCertificateAuthority("admission test CA");
  serving = issueServingCertificate(ca, ["127.0.0.1", "localhost"]);
  foreignServing = issueServingCertificate(createCertificateAuthority("other CA"), ["127.0.0.1"]);
});

afterEach(async () => {
  dispatcher?.close?.();
  dispatcher = undefined;
  await Promise.all(running.splice(0).map((w) => w.stop()));
});

async function startWebhook(
  answer: (request: Record<string, unknown>) => Answer,
  cert = serving,
): Promise<TestWebhook> {
  const received: Received[] = [];
  const server: Server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const review = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      received.push({ url: req.url ?? "", review });
      const a = answer(review.request);
      if (a === "hang") return; // never answers; the dispatcher's timeout must fire
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          apiVersion: "admission.k8s.io/v1",
          kind: "AdmissionReview",
          response: { uid: review.request.uid, ...a },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  const hook: TestWebhook = {
    url: (path = "/hook") => `https://127.0.0.1:${port}${path}`,
    received,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  running.push(hook);
  return hook;
}

const caBundle = (c: CertificateAuthority = ca) => Buffer.from(c.certPem).toString("base64");

const webhook = (name: string, url: string, over: Record<string, unknown> = {}) => ({
  name,
  admissionReviewVersions: ["v1"],
  sideEffects: "None",
  clientConfig: { url, caBundle: caBundle() },
  rules: [
    {
      operations: ["CREATE", "UPDATE"],
      apiGroups: ["machine.openshift.io"],
      apiVersions: ["v1beta1"],
      resources: ["machines", "machines/status"],
    },
  ],
  ...over,
});

const config = (
  kind: "Mutating" | "Validating",
  name: string,
  webhooks: unknown[],
  resourceVersion = "1",
): KubeObject => ({
  apiVersion: "admissionregistration.k8s.io/v1",
  kind: `${kind}WebhookConfiguration`,
  metadata: { name, uid: `uid-${name}`, resourceVersion },
  webhooks,
});

const machine = (labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: "machine.openshift.io/v1beta1",
  kind: "Machine",
  metadata: { name: "worker-a", namespace: "openshift-machine-api", labels },
  spec: { providerID: "aws:///us-east-1a/i-1" },
});

const attrs = (over: Partial<AdmissionAttributes> = {}): AdmissionAttributes => ({
  operation: "CREATE",
  kind: { group: "machine.openshift.io", version: "v1beta1", kind: "Machine" },
  resource: { group: "machine.openshift.io", version: "v1beta1", resource: "machines" },
  name: "worker-a",
  namespace: "openshift-machine-api",
  namespaceLabels: { "kubernetes.io/metadata.name": "openshift-machine-api" },
  object: machine(),
  oldObject: null,
  userInfo: { username: "alice", groups: ["system:authenticated"] },
  dryRun: false,
  options: { kind: "CreateOptions", apiVersion: "meta.k8s.io/v1" },
  ...over,
});

function dispatch(mutating: KubeObject[], validating: KubeObject[] = []): AdmissionDispatcher {
  dispatcher = createAdmissionDispatcher({ configurations: () => ({ mutating, validating }) });
  return dispatcher;
}

const patch = (ops: unknown[]) => ({
  allowed: true,
  patchType: "JSONPatch",
  patch: Buffer.from(JSON.stringify(ops)).toString("base64"),
});

describe("mutating webhooks (SPEC §8)", () => {
  it("applies each JSON Patch before calling the next webhook, in configuration-name order", async () => {
    const first = await startWebhook(() =>
      patch([{ op: "add", path: "/metadata/labels/first", value: "1" }]),
    );
    const second = await startWebhook((req) => {
      const labels = (req.object as KubeObject).metadata?.labels ?? {};
      return patch([
        { op: "add", path: "/metadata/labels/second", value: labels.first === "1" ? "saw-first" : "missed" },
      ]);
    });
    // "b-config" is listed first but runs second: kube sorts configurations by name.
    const d = dispatch([
      config("Mutating", "b-config", [webhook("second.example.com", second.url())]),
      config("Mutating", "a-config", [webhook("first.example.com", first.url())]),
    ]);
    const out = await d.mutate(attrs());
    expect(out.allowed).toBe(true);
    if (out.allowed) expect(out.object?.metadata?.labels).toEqual({ first: "1", second: "saw-first" });
  });

  it.each([
    ["IfNeeded", 2, "2"],
    ["Never", 1, "1"],
  ])(
    "reinvocationPolicy %s: called again only when a later webhook changed the object",
    async (policy, calls, seen) => {
      // "counter" writes how many labels it saw; "adder" (later) adds one, so only a reinvoked counter sees 2.
      const counter = await startWebhook((req) => {
        const labels = (req.object as KubeObject).metadata?.labels ?? {};
        const n = Object.keys(labels).filter((k) => k !== "count").length;
        return patch([{ op: "add", path: "/metadata/labels/count", value: String(n) }]);
      });
      const adder = await startWebhook(() =>
        patch([{ op: "add", path: "/metadata/labels/added", value: "x" }]),
      );
      const out = await dispatch([
        config("Mutating", "a", [
          webhook("counter.example.com", counter.url(), { reinvocationPolicy: policy }),
        ]),
        config("Mutating", "b", [webhook("adder.example.com", adder.url())]),
      ]).mutate(attrs({ object: machine({ first: "1" }) }));
      expect(counter.received).toHaveLength(calls);
      expect(adder.received).toHaveLength(1);
      expect(out.allowed && out.object?.metadata?.labels?.count).toBe(seen);
    },
  );

  it("never sends webhook configurations themselves to webhooks", async () => {
    const hook = await startWebhook(() => ({ allowed: false }));
    const everything = {
      rules: [{ operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*"] }],
    };
    const d = dispatch(
      [config("Mutating", "m", [webhook("m.example.com", hook.url(), everything)])],
      [config("Validating", "v", [webhook("v.example.com", hook.url(), everything)])],
    );
    const cfg = attrs({
      kind: { group: "admissionregistration.k8s.io", version: "v1", kind: "ValidatingWebhookConfiguration" },
      resource: {
        group: "admissionregistration.k8s.io",
        version: "v1",
        resource: "validatingwebhookconfigurations",
      },
      namespace: undefined,
      object: config("Validating", "v", []),
    });
    expect((await d.mutate(cfg)).allowed).toBe(true);
    expect((await d.validate(cfg)).allowed).toBe(true);
    expect(hook.received).toHaveLength(0);
    expect((await d.validate(attrs())).allowed).toBe(false);
  });

  it("sends an admission.k8s.io/v1 AdmissionReview with the request attributes and ?timeout=Ns", async () => {
    const hook = await startWebhook(() => ({ allowed: true }));
    const d = dispatch([
      config("Mutating", "m", [webhook("m.example.com", hook.url("/mutate"), { timeoutSeconds: 7 })]),
    ]);
    await d.mutate(attrs({ subResource: undefined }));
    expect(hook.received).toHaveLength(1);
    const { url, review } = hook.received[0]!;
    expect(url).toBe("/mutate?timeout=7s");
    expect(review).toMatchObject({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview" });
    expect(review.request).toMatchObject({
      kind: { group: "machine.openshift.io", version: "v1beta1", kind: "Machine" },
      resource: { group: "machine.openshift.io", version: "v1beta1", resource: "machines" },
      name: "worker-a",
      namespace: "openshift-machine-api",
      operation: "CREATE",
      userInfo: { username: "alice", groups: ["system:authenticated"] },
      object: machine(),
      oldObject: null,
      dryRun: false,
    });
    expect(review.request.uid).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("defaults timeoutSeconds to 10", async () => {
    const hook = await startWebhook(() => ({ allowed: true }));
    await dispatch([config("Mutating", "m", [webhook("m.example.com", hook.url())])]).mutate(attrs());
    expect(hook.received[0]?.url).toBe("/hook?timeout=10s");
  });

  it("does not call webhooks whose rules do not match (subresource)", async () => {
    const hook = await startWebhook(() => ({ allowed: true }));
    const d = dispatch([config("Mutating", "m", [webhook("m.example.com", hook.url())])]);
    await d.mutate(attrs({ subResource: "scale" }));
    expect(hook.received).toHaveLength(0);
    await d.mutate(attrs({ subResource: "status" }));
    expect(hook.received).toHaveLength(1);
  });

  it("collects warnings from every webhook", async () => {
    const a = await startWebhook(() => ({ allowed: true, warnings: ["from a"] }));
    const b = await startWebhook(() => ({ allowed: true, warnings: ["from b"] }));
    const out = await dispatch([
      config("Mutating", "a", [webhook("a.example.com", a.url())]),
      config("Mutating", "b", [webhook("b.example.com", b.url())]),
    ]).mutate(attrs());
    expect(out).toMatchObject({ allowed: true, warnings: ["from a", "from b"] });
  });

  it("takes 200,000 warnings from a webhook (decision 135: spread into a call, they threw)", async () => {
    const many = Array.from({ length: 200_000 }, (_, i) => `w${i}`);
    const hook = await startWebhook(() => ({ allowed: true, warnings: many }));
    const d = dispatch([config("Mutating", "m", [webhook("m.example.com", hook.url())])]);
    const out = await d.mutate(attrs());
    expect(out.allowed).toBe(true);
    expect(out.warnings).toHaveLength(200_000);
  });

  it("mimics CAPA's AWSMachine defaulting through the fixture webhook (SPEC §8)", async () => {
    const defaulter: AwsMachineDefaulter = await startAwsMachineDefaulter({ ca });
    running.push({ url: () => defaulter.url, received: [], stop: () => defaulter.stop() });
    const d = dispatch([
      awsMachineDefaulterConfiguration({ url: defaulter.url, caBundle: defaulter.caBundle }),
    ]);
    const awsAttrs = (spec: Record<string, unknown>): AdmissionAttributes =>
      attrs({
        kind: { group: "infrastructure.cluster.x-k8s.io", version: "v1beta2", kind: "AWSMachine" },
        resource: { group: "infrastructure.cluster.x-k8s.io", version: "v1beta2", resource: "awsmachines" },
        namespace: "openshift-cluster-api",
        object: {
          apiVersion: "infrastructure.cluster.x-k8s.io/v1beta2",
          kind: "AWSMachine",
          metadata: { name: "worker-a", namespace: "openshift-cluster-api" },
          spec,
        },
      });
    const plain = await d.mutate(
      awsAttrs({ instanceType: "m6i.large", rootVolume: { size: 120, deviceName: "/dev/xvda" } }),
    );
    expect(plain.allowed && plain.object?.spec).toEqual({
      instanceType: "m6i.large",
      rootVolume: { size: 120 },
      cloudInit: { secureSecretsBackend: "secrets-manager" },
    });
    const ignition = await d.mutate(
      awsAttrs({ instanceType: "m6i.large", ignition: { storageType: "UnencryptedUserData" } }),
    );
    expect(ignition.allowed && ignition.object?.spec).toEqual({
      instanceType: "m6i.large",
      ignition: { storageType: "UnencryptedUserData", version: "2.3" },
    });
    expect(defaulter.requests()).toBe(2);
    expect(AWSMACHINE_DEFAULTER_WEBHOOK).toBe("mutation.awsmachine.infrastructure.cluster.x-k8s.io");
  });
});

describe("denials and failures (kube's messages)", () => {
  it.each<[string, Record<string, unknown>, { code: number; reason: string; message: string }]>([
    [
      "status code and message are kept",
      { allowed: false, status: { code: 403, reason: "Forbidden", message: "mapi-frozen: no" } },
      {
        code: 403,
        reason: "Forbidden",
        message: 'admission webhook "deny.example.com" denied the request: mapi-frozen: no',
      },
    ],
    [
      "422 is kept",
      { allowed: false, status: { code: 422, reason: "Invalid", message: "bad value" } },
      {
        code: 422,
        reason: "Invalid",
        message: 'admission webhook "deny.example.com" denied the request: bad value',
      },
    ],
    [
      "no status: 400 without explanation",
      { allowed: false },
      {
        code: 400,
        reason: "",
        message: 'admission webhook "deny.example.com" denied the request without explanation',
      },
    ],
    [
      "a code below 400 becomes 400; the reason stands in for a missing message",
      { allowed: false, status: { code: 200, reason: "NotToday" } },
      {
        code: 400,
        reason: "NotToday",
        message: 'admission webhook "deny.example.com" denied the request: NotToday',
      },
    ],
  ])("validating deny: %s", async (_name, response, status) => {
    const hook = await startWebhook(() => ({ ...response, warnings: ["careful"] }));
    const out = await dispatch(
      [],
      [config("Validating", "v", [webhook("deny.example.com", hook.url())])],
    ).validate(attrs());
    expect(out).toEqual({ allowed: false, status, warnings: ["careful"] });
  });

  it("a mutating webhook's denial stops the chain", async () => {
    const deny = await startWebhook(() => ({ allowed: false, status: { code: 403, message: "no" } }));
    const later = await startWebhook(() => ({ allowed: true }));
    const out = await dispatch([
      config("Mutating", "a", [webhook("deny.example.com", deny.url())]),
      config("Mutating", "b", [webhook("later.example.com", later.url())]),
    ]).mutate(attrs());
    expect(out).toMatchObject({ allowed: false, status: { code: 403 } });
    expect(later.received).toHaveLength(0);
  });

  it("validating webhooks all run; the first denial in configuration order is reported", async () => {
    const ok = await startWebhook(() => ({ allowed: true, warnings: ["w-ok"] }));
    const deny1 = await startWebhook(() => ({ allowed: false, status: { code: 403, message: "one" } }));
    const deny2 = await startWebhook(() => ({ allowed: false, status: { code: 403, message: "two" } }));
    const out = await dispatch(
      [],
      [
        config("Validating", "c", [webhook("two.example.com", deny2.url())]),
        config("Validating", "a", [
          webhook("ok.example.com", ok.url()),
          webhook("one.example.com", deny1.url()),
        ]),
      ],
    ).validate(attrs());
    expect(out).toEqual({
      allowed: false,
      status: {
        code: 403,
        reason: "",
        message: 'admission webhook "one.example.com" denied the request: one',
      },
      warnings: ["w-ok"],
    });
    expect([ok, deny1, deny2].map((h) => h.received.length)).toEqual([1, 1, 1]);
  });

  describe.each([
    [
      "dead endpoint",
      async () => "https://127.0.0.1:1/hook",
      /failed to call webhook: Post "https:\/\/127\.0\.0\.1:1\/hook\?timeout=1s": dial tcp 127\.0\.0\.1:1: connect: connection refused$/,
    ],
    ["timeout", async () => (await startWebhook(() => "hang")).url(), /context deadline exceeded/],
    [
      "caBundle mismatch",
      async () => (await startWebhook(() => ({ allowed: true }), foreignServing)).url(),
      /tls: failed to verify certificate: x509: certificate signed by unknown authority$/,
    ],
    [
      "response uid mismatch",
      async () => (await startWebhook(() => ({ uid: "wrong", allowed: true }))).url(),
      /expected response\.uid=".+", got "wrong"/,
    ],
  ])("%s", (_name, endpoint, error) => {
    it("failurePolicy Fail denies with kube's message", async () => {
      const url = await endpoint();
      const out = await dispatch(
        [],
        [
          config("Validating", "v", [
            webhook("fail.example.com", url, { failurePolicy: "Fail", timeoutSeconds: 1 }),
          ]),
        ],
      ).validate(attrs());
      expect(out.allowed).toBe(false);
      if (!out.allowed) {
        expect(out.status.code).toBe(500);
        expect(out.status.reason).toBe("InternalError");
        expect(out.status.message).toMatch(
          /^Internal error occurred: failed calling webhook "fail\.example\.com": /,
        );
        expect(out.status.message).toMatch(error);
      }
    });

    it("failurePolicy Ignore skips the webhook", async () => {
      const url = await endpoint();
      const out = await dispatch([
        config("Mutating", "m", [
          webhook("ignore.example.com", url, { failurePolicy: "Ignore", timeoutSeconds: 1 }),
        ]),
      ]).mutate(attrs());
      expect(out).toEqual({ allowed: true, object: machine(), warnings: [] });
    });
  });

  it.each([
    [{ patchType: undefined }, "webhook returned response.patch but not response.patchType"],
    [{ patchType: "MergePatch" }, 'webhook returned invalid response.patchType of "MergePatch"'],
  ])("a mutating answer with a bad patch type fails the webhook: %j", async (over, error) => {
    const hook = await startWebhook(() => ({ ...patch([]), ...over }));
    const out = await dispatch([config("Mutating", "m", [webhook("m.example.com", hook.url())])]).mutate(
      attrs(),
    );
    expect(out).toMatchObject({
      allowed: false,
      status: {
        code: 500,
        message: `Internal error occurred: failed calling webhook "m.example.com": ${error}`,
      },
    });
  });

  it("a validating webhook that returns a patch is a failure", async () => {
    const hook = await startWebhook(() => patch([{ op: "add", path: "/metadata/labels/x", value: "y" }]));
    const out = await dispatch(
      [],
      [config("Validating", "v", [webhook("v.example.com", hook.url())])],
    ).validate(attrs());
    expect(out).toMatchObject({
      allowed: false,
      status: { code: 500, message: expect.stringContaining("may not return a patch") },
    });
  });

  it("clientConfig.service without a resolver fails per failurePolicy (no cluster DNS here)", async () => {
    const service = {
      clientConfig: { service: { namespace: "ns", name: "svc", path: "/v" }, caBundle: caBundle() },
    };
    const out = await dispatch(
      [],
      [config("Validating", "v", [webhook("svc.example.com", "unused", service)])],
    ).validate(attrs());
    expect(out).toMatchObject({
      allowed: false,
      status: {
        code: 500,
        message:
          'Internal error occurred: failed calling webhook "svc.example.com": unable to resolve service ns/svc',
      },
    });
  });

  it("dryRun is refused by a webhook that may have side effects", async () => {
    const hook = await startWebhook(() => ({ allowed: true }));
    const out = await dispatch(
      [],
      [config("Validating", "v", [webhook("side.example.com", hook.url(), { sideEffects: "Unknown" })])],
    ).validate(attrs({ dryRun: true }));
    expect(out).toMatchObject({
      allowed: false,
      status: { code: 400, message: 'admission webhook "side.example.com" does not support dry run' },
    });
    expect(hook.received).toHaveLength(0);
  });
});

describe("selectors and matchConditions (SPEC §2.2: controllers are skipped)", () => {
  const skipControllers = {
    matchConditions: [
      {
        name: "not-a-controller",
        expression:
          "!(request.userInfo.username in ['system:serviceaccount:openshift-cluster-api:machine-api-migration'])",
      },
    ],
  };

  it.each([
    ["a user is sent to the webhook", "alice", 1],
    [
      "a controller identity is skipped",
      "system:serviceaccount:openshift-cluster-api:machine-api-migration",
      0,
    ],
  ])("%s", async (_name, username, calls) => {
    const hook = await startWebhook(() => ({ allowed: false, status: { code: 403, message: "no" } }));
    const out = await dispatch(
      [],
      [config("Validating", "v", [webhook("v.example.com", hook.url(), skipControllers)])],
    ).validate(attrs({ userInfo: { username, groups: [] } }));
    expect(hook.received).toHaveLength(calls);
    expect(out.allowed).toBe(calls === 0);
  });

  it("matchConditions see object and oldObject; any false skips", async () => {
    const hook = await startWebhook(() => ({ allowed: true }));
    const d = dispatch([
      config("Mutating", "m", [
        webhook("m.example.com", hook.url(), {
          matchConditions: [
            {
              name: "has-labels",
              expression: "has(object.metadata.labels) && 'role' in object.metadata.labels",
            },
            { name: "update-only", expression: "oldObject != null" },
          ],
        }),
      ]),
    ]);
    await d.mutate(attrs({ object: machine({ role: "worker" }) }));
    expect(hook.received).toHaveLength(0);
    await d.mutate(attrs({ operation: "UPDATE", object: machine({ role: "worker" }), oldObject: machine() }));
    expect(hook.received).toHaveLength(1);
  });

  it("a matchCondition that errors follows failurePolicy", async () => {
    const hook = await startWebhook(() => ({ allowed: true }));
    const bad = { matchConditions: [{ name: "broken", expression: "object.spec.nope == 1" }] };
    const fail = await dispatch(
      [],
      [config("Validating", "v", [webhook("v.example.com", hook.url(), bad)])],
    ).validate(attrs());
    // kube: the webhook is not called and the request is Forbidden (decision 79).
    expect(fail).toMatchObject({ allowed: false, status: { code: 403, reason: "Forbidden" } });
    dispatcher?.close?.();
    const ignore = await dispatch(
      [],
      [
        config("Validating", "v", [
          webhook("v.example.com", hook.url(), { ...bad, failurePolicy: "Ignore" }),
        ]),
      ],
    ).validate(attrs());
    expect(ignore.allowed).toBe(true);
    expect(hook.received).toHaveLength(0);
  });

  it("namespaceSelector keeps other namespaces out", async () => {
    const hook = await startWebhook(() => ({ allowed: true }));
    const d = dispatch([
      config("Mutating", "m", [
        webhook("m.example.com", hook.url(), {
          namespaceSelector: {
            matchExpressions: [
              { key: "kubernetes.io/metadata.name", operator: "In", values: ["openshift-machine-api"] },
            ],
          },
        }),
      ]),
    ]);
    await d.mutate(
      attrs({ namespace: "kube-system", namespaceLabels: { "kubernetes.io/metadata.name": "kube-system" } }),
    );
    expect(hook.received).toHaveLength(0);
    await d.mutate(attrs());
    expect(hook.received).toHaveLength(1);
  });

  it("objectSelector", async () => {
    const hook = await startWebhook(() => ({ allowed: true }));
    const d = dispatch([
      config("Mutating", "m", [
        webhook("m.example.com", hook.url(), { objectSelector: { matchLabels: { role: "worker" } } }),
      ]),
    ]);
    await d.mutate(attrs({ object: machine({ role: "infra" }) }));
    expect(hook.received).toHaveLength(0);
    await d.mutate(attrs({ object: machine({ role: "worker" }) }));
    expect(hook.received).toHaveLength(1);
  });

  it("an edited configuration (new resourceVersion) takes effect on the next request", async () => {
    const hook = await startWebhook(() => ({ allowed: false, status: { code: 403, message: "no" } }));
    let current = [config("Validating", "v", [webhook("v.example.com", hook.url())], "1")];
    dispatcher = createAdmissionDispatcher({ configurations: () => ({ mutating: [], validating: current }) });
    expect((await dispatcher.validate(attrs())).allowed).toBe(false);
    current = [config("Validating", "v", [webhook("v.example.com", hook.url(), { rules: [] })], "2")];
    expect((await dispatcher.validate(attrs())).allowed).toBe(true);
    current = [];
    expect((await dispatcher.validate(attrs())).allowed).toBe(true);
  });

  it("unchanged configurations are reused across requests, and close() drops them (the next request reconnects)", async () => {
    const hook = await startWebhook(() => ({ allowed: false, status: { code: 403, message: "no" } }));
    const d = dispatch([], [config("Validating", "v", [webhook("v.example.com", hook.url())])]);
    expect((await d.validate(attrs())).allowed).toBe(false);
    expect((await d.validate(attrs())).allowed).toBe(false);
    d.close?.();
    expect((await d.validate(attrs())).allowed).toBe(false);
    expect(hook.received).toHaveLength(3);
  });
});

afterAll(() => {
  dispatcher?.close?.();
});
