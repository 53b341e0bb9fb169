import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import {
  type AdmissionAttributes,
  type AdmissionDispatcher,
  createAdmissionDispatcher,
} from "../../../src/apiserver/admission/index.js";
import type { KubeObject } from "../../../src/kube/object.js";
import {
  createCertificateAuthority,
  issueServingCertificate,
  webhookSans,
} from "../../../src/server/certs.js";

/**
 * The product's own three webhook configurations (manifests/webhooks.yaml, SPEC §2.2) dispatched by the local
 * API server's admission: the right requests reach the right path, controllers and other namespaces never
 * do, and `clientConfig.service` is reached through the resolver with the certificate checked for
 * `<service>.<namespace>.svc`.
 */
let server: Server;
let dispatcher: AdmissionDispatcher;
const calls: string[] = [];

beforeAll(async () => {
  const ca = createCertificateAuthority("webhooks.yaml test CA");
  // Only the service DNS names: dialing 127.0.0.1 must still verify against the .svc name.
  const cert = issueServingCertificate(
    ca,
    webhookSans("machine-api-migration", "openshift-cluster-api").slice(0, 2),
  );
  server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const review = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      const path = (req.url ?? "").split("?")[0]!;
      calls.push(path);
      const response =
        path === "/validate"
          ? { allowed: false, status: { code: 403, reason: "Forbidden", message: "mapi-frozen: refused" } }
          : { allowed: true, warnings: [`from ${path}`] };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          apiVersion: "admission.k8s.io/v1",
          kind: "AdmissionReview",
          response: { uid: review.request.uid, ...response },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  const caBundle = Buffer.from(ca.certPem).toString("base64");
  const docs = parseAllDocuments(await readFile("manifests/webhooks.yaml", "utf8")).map(
    (d) => d.toJS() as KubeObject,
  );
  for (const d of docs)
    for (const w of d.webhooks as Array<{ clientConfig: Record<string, unknown> }>)
      w.clientConfig.caBundle = caBundle;
  const mutating = docs.filter((d) => d.kind === "MutatingWebhookConfiguration");
  const validating = docs.filter((d) => d.kind === "ValidatingWebhookConfiguration");
  expect(mutating).toHaveLength(1);
  expect(validating).toHaveLength(2);
  dispatcher = createAdmissionDispatcher({
    configurations: () => ({ mutating, validating }),
    resolveService: (svc) =>
      svc.name === "machine-api-migration" && svc.namespace === "openshift-cluster-api"
        ? { baseUrl: `https://127.0.0.1:${port}` }
        : undefined,
  });
});

afterAll(async () => {
  dispatcher?.close?.();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const MAPI = { group: "machine.openshift.io", version: "v1beta1" };
const CAPI = { group: "cluster.x-k8s.io", version: "v1beta2" };
const INFRA = { group: "infrastructure.cluster.x-k8s.io", version: "v1beta2" };
/** CAPO's served version (SPEC §5.5): OpenStack's kinds are routed wherever AWS's are. */
const CAPO = { group: "infrastructure.cluster.x-k8s.io", version: "v1beta1" };
/** CAPIBM serves v1beta2 (SPEC §5.5): PowerVS's kinds are routed wherever AWS's are. */
const CAPIBM = { group: "infrastructure.cluster.x-k8s.io", version: "v1beta2" };

const request = (
  gv: { group: string; version: string },
  resource: string,
  operation: AdmissionAttributes["operation"],
  over: Partial<AdmissionAttributes> = {},
): AdmissionAttributes => {
  const namespace = over.namespace ?? (gv === MAPI ? "openshift-machine-api" : "openshift-cluster-api");
  const obj: KubeObject = { metadata: { name: "worker-a", namespace } };
  return {
    operation,
    kind: { ...gv, kind: "Whatever" },
    resource: { ...gv, resource },
    name: "worker-a",
    namespace,
    namespaceLabels: { "kubernetes.io/metadata.name": namespace },
    object: operation === "DELETE" ? null : obj,
    oldObject: operation === "CREATE" ? null : obj,
    userInfo: { username: "alice", groups: ["system:authenticated"] },
    dryRun: false,
    options: null,
    ...over,
  };
};

const CONTROLLER = {
  username: "system:serviceaccount:openshift-machine-api:machine-api-controllers",
  groups: [],
};
/** The service account OpenShift runs CAPIBM as: a controller, skipped like CAPA's and CAPO's. */
const CAPIBM_CONTROLLER = {
  username: "system:serviceaccount:openshift-cluster-api:capi-ibmcloud-manager",
  groups: [],
};

describe("manifests/webhooks.yaml through the local API server's dispatcher (SPEC §2.2)", () => {
  it.each<[string, AdmissionAttributes, "mutate" | "validate", string[]]>([
    [
      "UPDATE MAPI Machine by a user: deny and warn",
      request(MAPI, "machines", "UPDATE"),
      "validate",
      ["/validate", "/validate-guard"],
    ],
    [
      "UPDATE MAPI machines/status: deny only",
      request(MAPI, "machines", "UPDATE", { subResource: "status" }),
      "validate",
      ["/validate"],
    ],
    [
      "UPDATE MAPI machinesets/scale: deny only",
      request(MAPI, "machinesets", "UPDATE", { subResource: "scale" }),
      "validate",
      ["/validate"],
    ],
    [
      "UPDATE CAPI machinesets/scale: deny only",
      request(CAPI, "machinesets", "UPDATE", { subResource: "scale" }),
      "validate",
      ["/validate"],
    ],
    [
      "UPDATE CAPI machines/status: not matched",
      request(CAPI, "machines", "UPDATE", { subResource: "status" }),
      "validate",
      [],
    ],
    ["DELETE CAPI Machine: warn only", request(CAPI, "machines", "DELETE"), "validate", ["/validate-guard"]],
    ["CREATE AWSMachine: mutate", request(INFRA, "awsmachines", "CREATE"), "mutate", ["/mutate"]],
    ["CREATE OpenStackMachine: mutate", request(CAPO, "openstackmachines", "CREATE"), "mutate", ["/mutate"]],
    [
      "UPDATE OpenStackMachineTemplate by a user: deny and warn",
      request(CAPO, "openstackmachinetemplates", "UPDATE"),
      "validate",
      ["/validate", "/validate-guard"],
    ],
    [
      "DELETE OpenStackCluster: warn only (cluster-delete-guard)",
      request(CAPO, "openstackclusters", "DELETE"),
      "validate",
      ["/validate-guard"],
    ],
    [
      "CREATE IBMPowerVSMachine: mutate",
      request(CAPIBM, "ibmpowervsmachines", "CREATE"),
      "mutate",
      ["/mutate"],
    ],
    [
      "UPDATE IBMPowerVSMachineTemplate by a user: deny and warn",
      request(CAPIBM, "ibmpowervsmachinetemplates", "UPDATE"),
      "validate",
      ["/validate", "/validate-guard"],
    ],
    [
      "DELETE IBMPowerVSCluster: warn only (cluster-delete-guard)",
      request(CAPIBM, "ibmpowervsclusters", "DELETE"),
      "validate",
      ["/validate-guard"],
    ],
    [
      "UPDATE by a controller identity: skipped",
      request(MAPI, "machines", "UPDATE", { userInfo: CONTROLLER }),
      "validate",
      [],
    ],
    [
      "UPDATE IBMPowerVSMachine by CAPIBM's identity: skipped",
      request(CAPIBM, "ibmpowervsmachines", "UPDATE", { userInfo: CAPIBM_CONTROLLER }),
      "validate",
      [],
    ],
    [
      "another namespace: never matched",
      request(MAPI, "machines", "UPDATE", { namespace: "kube-system" }),
      "validate",
      [],
    ],
    [
      "Leases: never matched",
      request({ group: "coordination.k8s.io", version: "v1" }, "leases", "UPDATE"),
      "validate",
      [],
    ],
  ])("%s", async (_name, attrs, phase, expected) => {
    calls.length = 0;
    const out = phase === "mutate" ? await dispatcher.mutate(attrs) : await dispatcher.validate(attrs);
    expect([...calls].sort()).toEqual(expected);
    expect(out.allowed).toBe(!expected.includes("/validate"));
    if (!out.allowed)
      expect(out.status).toEqual({
        code: 403,
        reason: "Forbidden",
        message:
          'admission webhook "deny.machine-api-migration.openshift.io" denied the request: mapi-frozen: refused',
      });
  });
});
