/**
 * The write path's admission seam (SPEC §8): attributes handed to the dispatcher (operation, user with
 * system:authenticated, object/oldObject, options, dryRun, subresource, namespace labels), mutations
 * applied then defaulted again, denials reaching the client as the dispatcher's Status, warnings as
 * `Warning: 299` headers; and end to end with the real dispatcher calling an HTTPS webhook.
 */
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiServer } from "../../src/apiserver/index.js";
import type { AdmissionAttributes, AdmissionOutcome } from "../../src/apiserver/types.js";
import { createCertificateAuthority, issueServingCertificate } from "../../src/server/certs.js";
import {
  call,
  configMap,
  grant,
  namespace,
  start,
  USER_TOKEN,
  WIDGETS,
  widget,
  widgetCrd,
} from "./helpers.js";

describe("admission seam", () => {
  let s: ApiServer;
  const calls: Array<{ phase: string; a: AdmissionAttributes }> = [];
  let verdict: (phase: string, a: AdmissionAttributes) => AdmissionOutcome | undefined = () => undefined;

  beforeAll(async () => {
    const handler =
      (phase: string) =>
      async (a: AdmissionAttributes): Promise<AdmissionOutcome> => {
        calls.push({ phase, a });
        return verdict(phase, a) ?? { allowed: true, object: a.object, warnings: [] };
      };
    s = await start({ admission: { mutate: handler("mutate"), validate: handler("validate") } });
    await call(s, "POST", "/api/v1/namespaces", namespace("adm", { team: "blue" }));
    await call(s, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetCrd());
    await grant(s, "alice", "adm", [
      { apiGroups: ["example.com"], resources: ["widgets"], verbs: ["create"] },
    ]);
  });
  afterAll(() => s.stop());

  it("CREATE: mutate then validate with the user, namespace labels, options and the defaulted object", async () => {
    calls.length = 0;
    const r = await call(s, "POST", `${WIDGETS("adm")}?fieldManager=me`, widget("a1", "adm", {}), {
      token: USER_TOKEN,
    });
    expect(r.status).toBe(201);
    expect(calls.map((c) => c.phase)).toEqual(["mutate", "validate"]);
    const a = calls[0]!.a;
    expect(a).toMatchObject({
      operation: "CREATE",
      kind: { group: "example.com", version: "v1", kind: "Widget" },
      resource: { group: "example.com", version: "v1", resource: "widgets" },
      name: "a1",
      namespace: "adm",
      namespaceLabels: { team: "blue" },
      userInfo: { username: "alice", groups: ["devs", "system:authenticated"] },
      dryRun: false,
      options: { kind: "CreateOptions", apiVersion: "meta.k8s.io/v1", fieldManager: "me" },
      oldObject: null,
    });
    expect(a.object?.spec).toEqual({ size: "small" });
  });

  it("a mutation is kept and defaulted again; server-owned metadata cannot be changed by it", async () => {
    verdict = (phase, a) =>
      phase === "mutate" && a.operation === "CREATE"
        ? {
            allowed: true,
            object: {
              ...a.object,
              metadata: { ...a.object!.metadata, uid: "forged", labels: { mutated: "yes" } },
              spec: { replicas: 2 },
            },
            warnings: ["mutated it"],
          }
        : undefined;
    const r = await call(s, "POST", WIDGETS("adm"), widget("a2", "adm", {}));
    verdict = () => undefined;
    expect(r.body.metadata.labels).toEqual({ mutated: "yes" });
    expect(r.body.metadata.uid).not.toBe("forged");
    expect(r.body.spec).toEqual({ replicas: 2, size: "small" });
    expect(r.headers.warning).toBe('299 - "mutated it"');
  });

  it("UPDATE on /status carries the subresource and oldObject; DELETE carries DeleteOptions and no object", async () => {
    calls.length = 0;
    await call(
      s,
      "PATCH",
      `${WIDGETS("adm")}/a1/status`,
      { status: { phase: "Ready" } },
      { contentType: "application/merge-patch+json" },
    );
    const u = calls.find((c) => c.phase === "validate")!.a;
    expect(u).toMatchObject({
      operation: "UPDATE",
      subResource: "status",
      options: { kind: "PatchOptions" },
    });
    expect(u.oldObject?.status).toBeUndefined();
    expect(u.object?.status).toEqual({ phase: "Ready" });
    calls.length = 0;
    // The body holds every option: kube reads the query only when there is no body (decision 126).
    await call(s, "DELETE", `${WIDGETS("adm")}/a1`, { propagationPolicy: "Foreground", dryRun: ["All"] });
    const d = calls.find((c) => c.phase === "validate")!.a;
    expect(d).toMatchObject({
      operation: "DELETE",
      object: null,
      dryRun: true,
      options: { kind: "DeleteOptions", propagationPolicy: "Foreground" },
    });
    expect(d.oldObject?.metadata?.name).toBe("a1");
    expect((await call(s, "GET", `${WIDGETS("adm")}/a1`)).status).toBe(200);
  });

  it("PUT sends UpdateOptions; server-side apply sends PatchOptions with force", async () => {
    const current = await call(s, "GET", `${WIDGETS("adm")}/a2`);
    calls.length = 0;
    await call(s, "PUT", `${WIDGETS("adm")}/a2`, { ...current.body, spec: { replicas: 3 } });
    expect(calls.find((c) => c.phase === "validate")!.a.options).toMatchObject({ kind: "UpdateOptions" });
    calls.length = 0;
    await call(
      s,
      "PATCH",
      `${WIDGETS("adm")}/a2?fieldManager=ssa&force=true`,
      widget("a2", "adm", { replicas: 4 }),
      {
        contentType: "application/apply-patch+yaml",
      },
    );
    expect(calls.find((c) => c.phase === "validate")!.a.options).toMatchObject({
      kind: "PatchOptions",
      fieldManager: "ssa",
      force: true,
    });
  });

  it("the scale subresource is admitted as autoscaling/v1 Scale objects; a mutated Scale is applied", async () => {
    await call(s, "POST", WIDGETS("adm"), widget("scaled", "adm", { replicas: 1 }));
    calls.length = 0;
    verdict = (phase, a) =>
      phase === "mutate" && a.subResource === "scale"
        ? { allowed: true, object: { ...a.object, spec: { replicas: 5 } }, warnings: [] }
        : undefined;
    const r = await call(
      s,
      "PATCH",
      `${WIDGETS("adm")}/scaled/scale`,
      { spec: { replicas: 3 } },
      { contentType: "application/merge-patch+json" },
    );
    verdict = () => undefined;
    expect(r.body).toMatchObject({ kind: "Scale", spec: { replicas: 5 } });
    const v = calls.find((c) => c.phase === "validate")!.a;
    expect(v).toMatchObject({
      kind: { group: "autoscaling", version: "v1", kind: "Scale" },
      resource: { group: "example.com", version: "v1", resource: "widgets" },
      subResource: "scale",
      object: { apiVersion: "autoscaling/v1", kind: "Scale", spec: { replicas: 5 } },
      oldObject: { kind: "Scale", spec: { replicas: 1 } },
    });
    expect((await call(s, "GET", `${WIDGETS("adm")}/scaled`)).body.spec.replicas).toBe(5);
  });

  it("a denial reaches the client as the dispatcher's Status (code, reason, message, no details) with warnings", async () => {
    verdict = (phase) =>
      phase === "validate"
        ? {
            allowed: false,
            status: {
              code: 403,
              reason: "Forbidden",
              message: 'admission webhook "x.example" denied the request: nope',
            },
            warnings: ["ünïcode warning"],
          }
        : undefined;
    const r = await call(s, "POST", "/api/v1/namespaces/adm/configmaps", configMap("denied", "adm"));
    verdict = () => undefined;
    expect(r.status).toBe(403);
    expect(r.body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'admission webhook "x.example" denied the request: nope',
      reason: "Forbidden",
      code: 403,
    });
    expect(Buffer.from(String(r.headers.warning), "latin1").toString("utf8")).toBe('299 - "ünïcode warning"');
    expect((await call(s, "GET", "/api/v1/namespaces/adm/configmaps/denied")).status).toBe(404);
  });

  it("webhook configuration objects are never sent to admission", async () => {
    calls.length = 0;
    await call(s, "POST", "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations", {
      metadata: { name: "m" },
      webhooks: [],
    });
    expect(calls).toEqual([]);
  });
});

describe("admission with the real dispatcher and an HTTPS webhook", () => {
  let s: ApiServer;
  let hook: Server;
  let caBundle: string;
  let url: string;

  beforeAll(async () => {
    const ca = createCertificateAuthority("webhook test CA");
    const cert = issueServingCertificate(ca, ["127.0.0.1", "localhost"]);
    caBundle = Buffer.from(ca.certPem).toString("base64");
    hook = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", () => {
        const review = JSON.parse(body);
        const obj = review.request.object;
        const deny = obj?.data?.forbidden === "true";
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(
          JSON.stringify({
            apiVersion: "admission.k8s.io/v1",
            kind: "AdmissionReview",
            response: {
              uid: review.request.uid,
              allowed: !deny,
              ...(deny ? { status: { code: 403, message: "forbidden data" } } : {}),
              warnings: [`seen by ${review.request.userInfo.username}`],
            },
          }),
        );
      });
    });
    await new Promise<void>((r) => hook.listen(0, "127.0.0.1", () => r()));
    url = `https://127.0.0.1:${(hook.address() as AddressInfo).port}/validate`;
    s = await start();
    await call(s, "POST", "/api/v1/namespaces", namespace("hooked"));
  });
  afterAll(async () => {
    await s.stop();
    await new Promise((r) => hook.close(r));
  });

  it('denies with `admission webhook "<name>" denied the request: <message>` and passes warnings', async () => {
    const created = await call(
      s,
      "POST",
      "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
      {
        metadata: { name: "cm-check" },
        webhooks: [
          {
            name: "cm.example.com",
            clientConfig: { url, caBundle },
            rules: [
              {
                operations: ["CREATE", "UPDATE"],
                apiGroups: [""],
                apiVersions: ["v1"],
                resources: ["configmaps"],
              },
            ],
            sideEffects: "None",
            admissionReviewVersions: ["v1"],
            failurePolicy: "Fail",
            timeoutSeconds: 5,
          },
        ],
      },
    );
    expect(created.status).toBe(201);
    const ok = await call(s, "POST", "/api/v1/namespaces/hooked/configmaps", configMap("fine", "hooked"));
    expect(ok.status).toBe(201);
    expect(ok.headers.warning).toBe('299 - "seen by kube:admin"');
    const denied = await call(
      s,
      "POST",
      "/api/v1/namespaces/hooked/configmaps",
      configMap("bad", "hooked", { forbidden: "true" }),
    );
    expect(denied.status).toBe(403);
    expect(denied.body.message).toBe('admission webhook "cm.example.com" denied the request: forbidden data');
  });
});
