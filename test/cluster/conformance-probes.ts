/**
 * The probes of the differential conformance suite (issue 22, decision 48), as data: tables of requests —
 * verb × kind × edge case — each with the parts of the answer a client depends on (status code and reason,
 * a Status body's details and causes, the fields it reads back, the events a watch delivers). The runner
 * (conformance.cluster.test.ts) sends each to both servers and compares the views. Probes run in order and
 * may build on earlier ones (create, then update); every name is unique.
 */
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { isRecord } from "../../src/kube/object.js";
import { depthOf } from "../support/deep.js";

export const MAPI_NS = "openshift-machine-api";
export const CAPI_NS = "openshift-cluster-api";
/** The namespace the probes write in (created by the runner). */
export const NS = "conformance";

export interface Reply {
  status: number;
  reason: string;
  body: unknown;
  warnings: string[];
}

export type Raw = (
  context: string,
  method: string,
  path: string,
  body?: unknown,
  contentType?: string,
  /** More request headers (impersonation). */
  headers?: Record<string, string>,
) => Promise<Reply>;

export interface WatchEvent {
  type: string;
  object: Record<string, unknown>;
}

/** Per-backend facts and clients a probe's request may need (uids differ between the two servers). */
export interface World {
  raw: Raw;
  /** Opens a watch at `path`, runs `during` once it is open, and returns the events until the server ends it. */
  watch(
    context: string,
    path: string,
    during?: () => Promise<void>,
    headers?: Record<string, string>,
  ): Promise<WatchEvent[]>;
  capiMachineUid: string;
}

export interface Probe {
  name: string;
  run(w: World): Promise<unknown>;
}

// ---- views: what of an answer a client depends on ----

/** Status code and reason. */
export const code = (r: Reply): string => `${r.status} ${r.reason}`.trim();

const get = (o: unknown, path: string): unknown =>
  path.split(".").reduce<unknown>((v, k) => (isRecord(v) ? v[k] : undefined), o);

/** A Status body as a client reads it: code, reason, details' group/kind/name and causes' reason and field. */
export const statusOf = (r: Reply): unknown => {
  const details = isRecord(r.body) && isRecord(r.body.details) ? r.body.details : {};
  const causes = Array.isArray(details.causes)
    ? details.causes.map((c: Record<string, unknown>) => `${c.reason ?? ""} ${c.field ?? ""}`.trim()).sort()
    : undefined;
  return {
    code: r.status,
    reason: r.reason,
    ...(r.status >= 400
      ? { group: details.group, kind: details.kind, name: details.name, ...(causes ? { causes } : {}) }
      : {}),
  };
};

/** Code and the message verbatim (for refusals whose text clients or people act on). */
export const withMessage = (r: Reply): string =>
  `${code(r)}: ${isRecord(r.body) && r.body.kind === "Status" ? String(r.body.message) : ""}`;

/** Code and the named fields of the returned object. */
export const fields =
  (...paths: string[]) =>
  (r: Reply): unknown => ({
    code: code(r),
    ...Object.fromEntries(paths.map((p) => [p, get(r.body, p) ?? null])),
  });

/** Code and the sorted names of a list's items. */
export const names = (r: Reply): unknown => ({
  code: code(r),
  names:
    isRecord(r.body) && Array.isArray(r.body.items)
      ? r.body.items.map((i: Record<string, unknown>) => String(get(i, "metadata.name"))).sort()
      : null,
});

const probe = (name: string, run: (w: World) => Promise<unknown>): Probe => ({ name, run });

const ask = (
  name: string,
  as: string,
  method: string,
  path: string,
  body?: unknown,
  view: (r: Reply) => unknown = code,
  contentType?: string,
): Probe => ({ name, run: async (w) => view(await w.raw(as, method, path, body, contentType)) });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `done` holds for the reply (up to 20 s): a collector's or controller's work is asynchronous. */
const eventually = async (w: World, path: string, done: (r: Reply) => boolean): Promise<Reply> => {
  let r = await w.raw("admin", "GET", path);
  for (let i = 0; i < 100 && !done(r); i++) {
    await sleep(200);
    r = await w.raw("admin", "GET", path);
  }
  return r;
};

/** Repeats a request until `done` holds for its reply (up to 20 s): caches that catch up asynchronously. */
const waitForReply = async (send: () => Promise<Reply>, done: (r: Reply) => boolean): Promise<Reply> => {
  let r = await send();
  for (let i = 0; i < 100 && !done(r); i++) {
    await sleep(200);
    r = await send();
  }
  return r;
};

// ---- the probe CRDs ----

export const GROUP = "conformance.example.com";
const PROBES = `/apis/${GROUP}/v1/namespaces/${NS}/probes`;
const PLAINS = `/apis/${GROUP}/v1/namespaces/${NS}/plains`;
const CMS = `/api/v1/namespaces/${NS}/configmaps`;
const SECRETS = `/api/v1/namespaces/${NS}/secrets`;

export const probeCrds = (): Record<string, unknown>[] => [
  {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `probes.${GROUP}` },
    spec: {
      group: GROUP,
      scope: "Namespaced",
      names: { plural: "probes", singular: "probe", kind: "Probe", listKind: "ProbeList" },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          subresources: {
            status: {},
            scale: {
              specReplicasPath: ".spec.replicas",
              statusReplicasPath: ".status.replicas",
              labelSelectorPath: ".status.selector",
            },
          },
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: {
                spec: {
                  type: "object",
                  "x-kubernetes-validations": [
                    { rule: "!has(self.count) || self.count < 100", message: "count must be below 100" },
                  ],
                  properties: {
                    size: { type: "string", enum: ["small", "large"] },
                    count: { type: "integer", minimum: 0 },
                    short: { type: "string", maxLength: 5 },
                    one: { type: "object", maxProperties: 1, additionalProperties: { type: "string" } },
                    few: { type: "array", maxItems: 1, items: { type: "string" } },
                    replicas: { type: "integer" },
                    defaulted: { type: "string", default: "yes" },
                    fixed: {
                      type: "string",
                      "x-kubernetes-validations": [
                        { rule: "self == oldSelf", message: "fixed is immutable" },
                      ],
                    },
                    entries: {
                      type: "array",
                      "x-kubernetes-list-type": "map",
                      "x-kubernetes-list-map-keys": ["name"],
                      items: {
                        type: "object",
                        required: ["name"],
                        properties: { name: { type: "string" }, value: { type: "string" } },
                      },
                    },
                    tags: { type: "array", "x-kubernetes-list-type": "set", items: { type: "string" } },
                    atomic: { type: "array", items: { type: "string" } },
                    nested: {
                      type: "object",
                      required: ["must"],
                      properties: { must: { type: "string" }, other: { type: "string" } },
                    },
                  },
                },
                status: {
                  type: "object",
                  properties: {
                    replicas: { type: "integer" },
                    selector: { type: "string" },
                    phase: { type: "string" },
                  },
                },
              },
            },
          },
        },
      ],
    },
  },
  {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `plains.${GROUP}` },
    spec: {
      group: GROUP,
      scope: "Namespaced",
      names: { plural: "plains", singular: "plain", kind: "Plain", listKind: "PlainList" },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: {
                spec: { type: "object", properties: { a: { type: "string" } } },
                status: { type: "object", properties: { b: { type: "string" } } },
              },
            },
          },
        },
      ],
    },
  },
];

const cm = (name: string, extra: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, ...metadata },
  ...extra,
});
const pr = (name: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) => ({
  apiVersion: `${GROUP}/v1`,
  kind: "Probe",
  metadata: { name, ...metadata },
  spec,
});

// ---- protobuf bodies, built from Kubernetes' generated.proto field numbers ----

const pbMessage = (fn: (w: BinaryWriter) => void): Uint8Array => {
  const w = new BinaryWriter();
  fn(w);
  return w.finish();
};
const pbMap = (w: BinaryWriter, no: number, entries: Record<string, string | Uint8Array>): void => {
  for (const [k, v] of Object.entries(entries)) {
    w.tag(no, WireType.LengthDelimited).bytes(
      pbMessage((e) => {
        e.tag(1, WireType.LengthDelimited).string(k);
        if (typeof v === "string") e.tag(2, WireType.LengthDelimited).string(v);
        else e.tag(2, WireType.LengthDelimited).bytes(v);
      }),
    );
  }
};
const pbMeta = (name: string, labels: Record<string, string> = {}): Uint8Array =>
  pbMessage((m) => {
    m.tag(1, WireType.LengthDelimited).string(name);
    pbMap(m, 11, labels);
  });
const pbEnvelope = (apiVersion: string, kind: string, raw: Uint8Array): Buffer =>
  Buffer.concat([
    Uint8Array.of(0x6b, 0x38, 0x73, 0x00),
    pbMessage((u) => {
      u.tag(1, WireType.LengthDelimited).bytes(
        pbMessage((t) => {
          t.tag(1, WireType.LengthDelimited).string(apiVersion);
          t.tag(2, WireType.LengthDelimited).string(kind);
        }),
      );
      u.tag(2, WireType.LengthDelimited).bytes(raw);
    }),
  ]);
export const pbConfigMap = (name: string, data: Record<string, string>): Buffer =>
  pbEnvelope(
    "v1",
    "ConfigMap",
    pbMessage((c) => {
      c.tag(1, WireType.LengthDelimited).bytes(pbMeta(name, { via: "protobuf" }));
      pbMap(c, 2, data);
    }),
  );
const pbSecret = (name: string, data: Record<string, string>): Buffer =>
  pbEnvelope(
    "v1",
    "Secret",
    pbMessage((c) => {
      c.tag(1, WireType.LengthDelimited).bytes(pbMeta(name));
      pbMap(c, 2, Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v)])));
    }),
  );
const pbNamespace = (name: string): Buffer =>
  pbEnvelope(
    "v1",
    "Namespace",
    pbMessage((n) => n.tag(1, WireType.LengthDelimited).bytes(pbMeta(name))),
  );
const PB = "application/vnd.kubernetes.protobuf";

// ---- the tables ----

/** Each kind a 404 is probed for: its collection path, and one for a named object. */
const KIND_PATHS: { label: string; collection: string }[] = [
  { label: "core ConfigMap", collection: CMS },
  { label: "core Secret", collection: SECRETS },
  { label: "core ServiceAccount", collection: `/api/v1/namespaces/${NS}/serviceaccounts` },
  { label: "core Event", collection: `/api/v1/namespaces/${NS}/events` },
  { label: "core Namespace (cluster-scoped)", collection: "/api/v1/namespaces" },
  { label: "coordination Lease", collection: `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases` },
  { label: "rbac Role", collection: `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles` },
  { label: "rbac ClusterRole", collection: "/apis/rbac.authorization.k8s.io/v1/clusterroles" },
  { label: "CRD Probe", collection: PROBES },
  { label: "MAPI Machine", collection: `/apis/machine.openshift.io/v1beta1/namespaces/${MAPI_NS}/machines` },
  { label: "CAPI Machine", collection: `/apis/cluster.x-k8s.io/v1beta2/namespaces/${CAPI_NS}/machines` },
  {
    label: "CustomResourceDefinition",
    collection: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
  },
];

const notFoundProbes: Probe[] = KIND_PATHS.flatMap(({ label, collection }) => [
  ask(`404 details: get of a missing ${label}`, "admin", "GET", `${collection}/nope`, undefined, statusOf),
  ask(
    `404 details: delete of a missing ${label}`,
    "admin",
    "DELETE",
    `${collection}/nope`,
    undefined,
    statusOf,
  ),
  ask(
    `404 details: merge patch of a missing ${label}`,
    "admin",
    "PATCH",
    `${collection}/nope`,
    { metadata: { labels: { a: "b" } } },
    statusOf,
    "application/merge-patch+json",
  ),
]);

const pathProbes: Probe[] = [
  ask("an unknown core resource", "admin", "GET", `/api/v1/namespaces/${NS}/nopes`, undefined, code),
  ask("an unknown group", "admin", "GET", "/apis/nope.example.com/v1/things", undefined, code),
  ask("an unknown version of a served group", "admin", "GET", `/apis/${GROUP}/v9/namespaces/${NS}/probes`),
  ask(
    "create in a namespace that does not exist",
    "admin",
    "POST",
    "/api/v1/namespaces/no-such-namespace/configmaps",
    cm("x"),
    statusOf,
  ),
  ask(
    "create whose apiVersion differs from the URL's version",
    "admin",
    "POST",
    `/apis/machine.openshift.io/v1beta1/namespaces/${MAPI_NS}/machinesets`,
    { apiVersion: "machine.openshift.io/v1", kind: "MachineSet", metadata: { name: "wrong-version" } },
    statusOf,
  ),
  ask("POST to a named object's path", "admin", "POST", `${CMS}/some-name`, cm("some-name"), code),
  ask("the discovery root", "admin", "GET", "/api", undefined, fields("kind", "versions")),
  ask("discovery of the probe group", "admin", "GET", `/apis/${GROUP}/v1`, undefined, (r) => ({
    code: code(r),
    resources:
      isRecord(r.body) && Array.isArray(r.body.resources)
        ? r.body.resources
            .map(
              (x: Record<string, unknown>) => `${x.name} ${x.kind} ${(x.verbs as string[]).sort().join(",")}`,
            )
            .sort()
        : null,
  })),
];

/** ConfigMap creates: each body, the answer's code, reason and causes. */
const CONFIGMAP_CREATES: { name: string; body: unknown }[] = [
  { name: "an upper-case name", body: cm("Upper") },
  { name: "a name of 254 characters", body: cm("a".repeat(254)) },
  { name: "no name and no generateName", body: cm("") },
  { name: "a data key with a space", body: cm("bad-key", { data: { "a b": "x" } }) },
  {
    name: "a key in both data and binaryData",
    body: cm("dup-key", { data: { k: "x" }, binaryData: { k: "eA==" } }),
  },
  { name: "binaryData that is not base64", body: cm("bad-binary", { binaryData: { k: "%%%" } }) },
  {
    name: "a namespace in the body other than the URL's",
    body: cm("other-ns", {}, { namespace: "default" }),
  },
  { name: "a kind other than the URL's", body: { ...cm("wrong-kind"), kind: "Secret" } },
  { name: "a resourceVersion set", body: cm("with-rv", {}, { resourceVersion: "5" }) },
  { name: "an invalid label value", body: cm("bad-label", {}, { labels: { a: "not valid!" } }) },
  { name: "an invalid annotation key", body: cm("bad-annotation", {}, { annotations: { "a/b/c": "x" } }) },
  {
    name: "an ownerReference without a uid",
    body: cm(
      "no-owner-uid",
      {},
      { ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "o", uid: "" }] },
    ),
  },
  {
    name: "two controller ownerReferences",
    body: cm(
      "two-controllers",
      {},
      {
        ownerReferences: [
          {
            apiVersion: "v1",
            kind: "ConfigMap",
            name: "o1",
            uid: "11111111-1111-1111-1111-000000000001",
            controller: true,
          },
          {
            apiVersion: "v1",
            kind: "ConfigMap",
            name: "o2",
            uid: "11111111-1111-1111-1111-000000000002",
            controller: true,
          },
        ],
      },
    ),
  },
  {
    name: "a finalizer that is not a qualified name",
    body: cm("bad-finalizer", {}, { finalizers: ["not a name"] }),
  },
  { name: "a valid generateName", body: { ...cm(""), metadata: { generateName: "gen-" } } },
  { name: "a body that is a JSON array", body: [] },
];

const createProbes: Probe[] = CONFIGMAP_CREATES.map(({ name, body }) =>
  ask(`ConfigMap create with ${name}`, "admin", "POST", CMS, body, statusOf),
);

const protobufProbes: Probe[] = [
  ask(
    "protobuf: create a ConfigMap",
    "admin",
    "POST",
    CMS,
    pbConfigMap("pb-cm", { a: "b" }),
    fields("data", "metadata.labels"),
    PB,
  ),
  ask(
    "protobuf: create a Secret (type defaulted to Opaque)",
    "admin",
    "POST",
    SECRETS,
    pbSecret("pb-secret", { k: "v" }),
    fields("data", "type"),
    PB,
  ),
  ask(
    "protobuf: create a Namespace",
    "admin",
    "POST",
    "/api/v1/namespaces",
    pbNamespace("conformance-pb"),
    fields("metadata.name", "spec", "status.phase"),
    PB,
  ),
  ask(
    "protobuf: a ConfigMap body sent to the secrets endpoint",
    "admin",
    "POST",
    SECRETS,
    pbConfigMap("pb-wrong", {}),
    code,
    PB,
  ),
  ask(
    "protobuf: a custom resource (415 and the accepted types)",
    "admin",
    "POST",
    PROBES,
    pbConfigMap("pb-crd", {}),
    withMessage,
    PB,
  ),
  ask(
    "protobuf: a body without the magic prefix",
    "admin",
    "POST",
    CMS,
    Buffer.from("not protobuf"),
    code,
    PB,
  ),
  ask(
    "protobuf: a MAPI Machine",
    "admin",
    "POST",
    `/apis/machine.openshift.io/v1beta1/namespaces/${MAPI_NS}/machines`,
    pbConfigMap("pb-machine", {}),
    withMessage,
    PB,
  ),
  ask("an unknown content type", "admin", "POST", CMS, cm("ct"), code, "text/plain"),
];

const secretProbes: Probe[] = [
  ask(
    "Secret create without a type",
    "admin",
    "POST",
    SECRETS,
    { apiVersion: "v1", kind: "Secret", metadata: { name: "untyped" } },
    fields("type"),
  ),
  ask(
    "Secret create with stringData",
    "admin",
    "POST",
    SECRETS,
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "string-data" },
      stringData: { a: "b" },
      data: { c: "ZA==" },
    },
    fields("data", "stringData"),
  ),
  ask(
    "Secret of type kubernetes.io/tls without its keys",
    "admin",
    "POST",
    SECRETS,
    { apiVersion: "v1", kind: "Secret", metadata: { name: "tls" }, type: "kubernetes.io/tls", data: {} },
    statusOf,
  ),
  ask(
    "Secret data that is not base64",
    "admin",
    "POST",
    SECRETS,
    { apiVersion: "v1", kind: "Secret", metadata: { name: "bad-b64" }, data: { a: "%%%" } },
    code,
  ),
  ask(
    "Secret create immutable",
    "admin",
    "POST",
    SECRETS,
    { apiVersion: "v1", kind: "Secret", metadata: { name: "frozen" }, immutable: true, data: { a: "YQ==" } },
    code,
  ),
  ask(
    "Secret update of an immutable secret's data",
    "admin",
    "PUT",
    `${SECRETS}/frozen`,
    { apiVersion: "v1", kind: "Secret", metadata: { name: "frozen" }, immutable: true, data: { a: "Yg==" } },
    statusOf,
  ),
  ask(
    "Secret type change on update",
    "admin",
    "PUT",
    `${SECRETS}/untyped`,
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "untyped" },
      type: "kubernetes.io/basic-auth",
      data: { username: "dQ==" },
    },
    statusOf,
  ),
];

const namespaceProbes: Probe[] = [
  ask(
    "Namespace create with an invalid name",
    "admin",
    "POST",
    "/api/v1/namespaces",
    { apiVersion: "v1", kind: "Namespace", metadata: { name: "Bad_Name" } },
    statusOf,
  ),
  ask(
    "Namespace create: defaults and the name label",
    "admin",
    "POST",
    "/api/v1/namespaces",
    { apiVersion: "v1", kind: "Namespace", metadata: { name: "conformance-ns" } },
    fields("spec.finalizers", "status.phase", "metadata.labels"),
  ),
  probe(
    "Namespace delete: Terminating while an object holds a finalizer; a create in it is refused",
    async (w) => {
      await w.raw(
        "admin",
        "POST",
        "/api/v1/namespaces/conformance-ns/configmaps",
        cm("keep", {}, { finalizers: ["example.com/hold"] }),
      );
      const del = await w.raw("admin", "DELETE", "/api/v1/namespaces/conformance-ns");
      await eventually(
        w,
        "/api/v1/namespaces/conformance-ns/configmaps/keep",
        (r) => get(r.body, "metadata.deletionTimestamp") !== undefined,
      );
      const create = await w.raw("admin", "POST", "/api/v1/namespaces/conformance-ns/configmaps", cm("late"));
      const ns = await w.raw("admin", "GET", "/api/v1/namespaces/conformance-ns");
      return {
        delete: fields("status.phase")(del),
        create: statusOf(create),
        namespace: fields("status.phase")(ns),
      };
    },
  ),
  probe("Namespace delete: once the finalizer is removed, its contents and the namespace go", async (w) => {
    await w.raw(
      "admin",
      "PATCH",
      "/api/v1/namespaces/conformance-ns/configmaps/keep",
      { metadata: { finalizers: null } },
      "application/merge-patch+json",
    );
    const r = await eventually(w, "/api/v1/namespaces/conformance-ns", (x) => x.status === 404);
    return code(r);
  }),
];

/** Updates and resourceVersion semantics. */
const updateProbes: Probe[] = [
  ask("setup: a ConfigMap to update", "admin", "POST", CMS, cm("upd", { data: { a: "1" } }), code),
  ask(
    "update of a ConfigMap without a resourceVersion (unconditional)",
    "admin",
    "PUT",
    `${CMS}/upd`,
    cm("upd", { data: { a: "2" } }),
    fields("data"),
  ),
  ask(
    "update with a stale resourceVersion",
    "admin",
    "PUT",
    `${CMS}/upd`,
    cm("upd", { data: { a: "3" } }, { resourceVersion: "1" }),
    statusOf,
  ),
  ask(
    "update with a non-numeric resourceVersion",
    "admin",
    "PUT",
    `${CMS}/upd`,
    cm("upd", {}, { resourceVersion: "abc" }),
    code,
  ),
  ask("update whose body names another object", "admin", "PUT", `${CMS}/upd`, cm("other"), withMessage),
  ask(
    "update of a missing ConfigMap (no create on update)",
    "admin",
    "PUT",
    `${CMS}/missing`,
    cm("missing"),
    statusOf,
  ),
  ask(
    "update with a different uid",
    "admin",
    "PUT",
    `${CMS}/upd`,
    cm("upd", {}, { uid: "00000000-0000-0000-0000-000000000000" }),
    statusOf,
  ),
  ask(
    "setup: a Probe",
    "admin",
    "POST",
    PROBES,
    pr("p1", { size: "small", replicas: 1, fixed: "a" }),
    fields("metadata.generation", "spec.defaulted"),
  ),
  ask(
    "update of a custom resource without a resourceVersion",
    "admin",
    "PUT",
    `${PROBES}/p1`,
    pr("p1", { size: "large" }),
    statusOf,
  ),
  probe(
    "generation: a spec change increments it, a label change does not, a status change does not",
    async (w) => {
      const spec = await w.raw(
        "admin",
        "PATCH",
        `${PROBES}/p1`,
        { spec: { size: "large" } },
        "application/merge-patch+json",
      );
      const label = await w.raw(
        "admin",
        "PATCH",
        `${PROBES}/p1`,
        { metadata: { labels: { l: "1" } } },
        "application/merge-patch+json",
      );
      const status = await w.raw(
        "admin",
        "PATCH",
        `${PROBES}/p1/status`,
        { status: { phase: "Up" } },
        "application/merge-patch+json",
      );
      return [spec, label, status].map(fields("metadata.generation"));
    },
  ),
  ask(
    "the main resource ignores status changes",
    "admin",
    "PATCH",
    `${PROBES}/p1`,
    { status: { phase: "Down" } },
    fields("status.phase"),
    "application/merge-patch+json",
  ),
  ask(
    "the status subresource ignores spec changes",
    "admin",
    "PATCH",
    `${PROBES}/p1/status`,
    { spec: { size: "small" }, status: { replicas: 1, selector: "app=p1" } },
    fields("spec.size", "status.replicas"),
    "application/merge-patch+json",
  ),
  ask("status of a kind without a status subresource", "admin", "GET", `${PLAINS}/x/status`, undefined, code),
  ask(
    "GET of the status subresource",
    "admin",
    "GET",
    `${PROBES}/p1/status`,
    undefined,
    fields("kind", "status.phase"),
  ),
  ask(
    "CEL transition rule with oldSelf",
    "admin",
    "PATCH",
    `${PROBES}/p1`,
    { spec: { fixed: "b" } },
    statusOf,
    "application/merge-patch+json",
  ),
  ask(
    "CEL rule on the spec",
    "admin",
    "PATCH",
    `${PROBES}/p1`,
    { spec: { count: 150 } },
    statusOf,
    "application/merge-patch+json",
  ),
  ask(
    "CEL rule message",
    "admin",
    "PATCH",
    `${PROBES}/p1`,
    { spec: { count: 150 } },
    withMessage,
    "application/merge-patch+json",
  ),
  ask(
    "a JSON patch whose test fails",
    "admin",
    "PATCH",
    `${PROBES}/p1`,
    [{ op: "test", path: "/spec/size", value: "nope" }],
    code,
    "application/json-patch+json",
  ),
  ask(
    "a JSON patch removing a missing path",
    "admin",
    "PATCH",
    `${PROBES}/p1`,
    [{ op: "remove", path: "/spec/nothing" }],
    code,
    "application/json-patch+json",
  ),
  ask(
    "a strategic merge patch of a custom resource",
    "admin",
    "PATCH",
    `${PROBES}/p1`,
    { spec: {} },
    code,
    "application/strategic-merge-patch+json",
  ),
  ask(
    "a strategic merge patch of a ConfigMap",
    "admin",
    "PATCH",
    `${CMS}/upd`,
    { data: { b: "x" } },
    fields("data"),
    "application/strategic-merge-patch+json",
  ),
  ask(
    "a merge patch that is not JSON",
    "admin",
    "PATCH",
    `${CMS}/upd`,
    Buffer.from("{nope"),
    code,
    "application/merge-patch+json",
  ),
  ask("a patch with an unknown patch type", "admin", "PATCH", `${CMS}/upd`, {}, code, "application/x-patch"),
];

/** Schema validation, defaulting and pruning of a custom resource. */
const SCHEMA_CREATES: { name: string; spec: Record<string, unknown>; view?: (r: Reply) => unknown }[] = [
  { name: "a value outside the enum", spec: { size: "huge" } },
  { name: "a string where an integer belongs", spec: { count: "three" } },
  { name: "a number below the minimum", spec: { count: -1 } },
  { name: "a string over maxLength", spec: { short: "toolong" } },
  { name: "an object over maxProperties", spec: { one: { a: "x", b: "y" } } },
  { name: "a list over maxItems", spec: { few: ["a", "b"] } },
  { name: "a missing required field", spec: { nested: { other: "x" } } },
  { name: "a list-map entry without its key", spec: { entries: [{ value: "x" }] } },
  { name: "duplicate list-map keys", spec: { entries: [{ name: "a" }, { name: "a" }] } },
  { name: "duplicate list-set items", spec: { tags: ["a", "a"] } },
  { name: "an object where a string belongs", spec: { size: { a: 1 } } },
  { name: "several errors at once", spec: { size: "huge", count: -1, short: "toolong" } },
  { name: "a default", spec: { size: "small" }, view: fields("spec.defaulted") },
  { name: "an unknown field (pruned)", spec: { size: "small", bogus: 1 }, view: fields("spec.bogus") },
  {
    name: "a list-set item three times and another twice",
    spec: { tags: ["a", "b", "a", "a", "b"] },
    view: withMessage,
  },
  {
    name: "a list-map key three times",
    spec: { entries: [{ name: "a" }, { name: "a" }, { name: "a" }] },
    view: withMessage,
  },
  {
    name: "a list-set of 20,000 distinct items",
    spec: { tags: Array.from({ length: 20_000 }, (_, i) => `t${i}`) },
    view: code,
  },
];

const schemaProbes: Probe[] = SCHEMA_CREATES.map(({ name, spec, view }, i) =>
  ask(
    `custom resource create with ${name}`,
    "admin",
    "POST",
    PROBES,
    pr(`schema-${i}`, spec),
    view ?? statusOf,
  ),
);

/** fieldValidation on both kinds of resource. */
const FIELD_VALIDATION: { label: string; path: string; body: (n: string) => unknown }[] = [
  {
    label: "a custom resource",
    path: PROBES,
    body: (n) => ({ ...pr(n, { size: "small", bogus: 1 }), extra: true }),
  },
  { label: "a ConfigMap", path: CMS, body: (n) => ({ ...cm(n), bogus: 1 }) },
];
const fieldValidationProbes: Probe[] = FIELD_VALIDATION.flatMap(({ label, path, body }) =>
  (["Strict", "Warn", "Ignore", "Bogus"] as const).map((mode) =>
    ask(
      `fieldValidation=${mode} with unknown fields on ${label}`,
      "admin",
      "POST",
      `${path}?fieldValidation=${mode}`,
      body(`fv-${mode.toLowerCase()}`),
      (r) => ({
        ...(statusOf(r) as object),
        message: r.status >= 400 ? withMessage(r) : undefined,
        warnings: r.warnings.length,
      }),
    ),
  ),
);

/** Lists: paging, resourceVersion semantics, label and field selectors. */
const listProbes: Probe[] = [
  ...["l1", "l2", "l3", "l4"].map((n, i) =>
    ask(
      `setup: labelled ConfigMap ${n}`,
      "admin",
      "POST",
      CMS,
      cm(n, {}, { labels: { set: "list", tier: i < 2 ? "web" : "db", idx: String(i) } }),
      code,
    ),
  ),
  ask(
    "setup: a ConfigMap in the set without a tier",
    "admin",
    "POST",
    CMS,
    cm("l5", {}, { labels: { set: "list" } }),
    code,
  ),
  probe("list paging: limit=1 pages through every item with continue tokens", async (w) => {
    const seen: string[] = [];
    const shape: unknown[] = [];
    let cont = "";
    for (let i = 0; i < 10; i++) {
      const r = await w.raw(
        "admin",
        "GET",
        `${CMS}?labelSelector=tier&limit=1${cont ? `&continue=${encodeURIComponent(cont)}` : ""}`,
      );
      const body = r.body as {
        items: { metadata: { name: string } }[];
        metadata: { continue?: string; remainingItemCount?: number };
      };
      seen.push(...body.items.map((x) => x.metadata.name));
      shape.push({
        items: body.items.length,
        remaining: body.metadata.remainingItemCount ?? null,
        more: Boolean(body.metadata.continue),
      });
      cont = body.metadata.continue ?? "";
      if (!cont) break;
    }
    return { seen, shape };
  }),
  ask(
    "list with an invalid continue token",
    "admin",
    "GET",
    `${CMS}?limit=1&continue=garbage`,
    undefined,
    code,
  ),
  ask("list with limit=0 (no limit)", "admin", "GET", `${CMS}?labelSelector=tier&limit=0`, undefined, names),
  // `-l role:worker`, a typo for `role=worker`: a key no label can have is refused, not matched against nothing.
  ask(
    "list with a label selector whose key is not a label key",
    "admin",
    "GET",
    `${CMS}?labelSelector=${encodeURIComponent("role:worker")}`,
    undefined,
    code,
  ),
  ask(
    "list with a label selector whose value is not a label value",
    "admin",
    "GET",
    `${CMS}?labelSelector=${encodeURIComponent("tier in (-x)")}`,
    undefined,
    code,
  ),
  ask(
    "list with resourceVersion=0",
    "admin",
    "GET",
    `${CMS}?labelSelector=tier&resourceVersion=0`,
    undefined,
    names,
  ),
  ask(
    "list with resourceVersionMatch=Exact and no resourceVersion",
    "admin",
    "GET",
    `${CMS}?resourceVersionMatch=Exact`,
    undefined,
    code,
  ),
  ask(
    "list with resourceVersionMatch=Bogus",
    "admin",
    "GET",
    `${CMS}?resourceVersion=1&resourceVersionMatch=Bogus`,
    undefined,
    code,
  ),
  ask(
    "list with a non-numeric resourceVersion",
    "admin",
    "GET",
    `${CMS}?resourceVersion=abc`,
    undefined,
    code,
  ),
  ask(
    "list with resourceVersionMatch=NotOlderThan and resourceVersion=0",
    "admin",
    "GET",
    `${CMS}?labelSelector=tier&resourceVersion=0&resourceVersionMatch=NotOlderThan`,
    undefined,
    names,
  ),
  ask(
    "list with resourceVersion=0 and a limit",
    "admin",
    "GET",
    `${CMS}?labelSelector=tier&resourceVersion=0&limit=2`,
    undefined,
    (r) => ({ code: code(r) }),
  ),
  probe("list at an exact resourceVersion from the future", async (w) => {
    const cur = await w.raw("admin", "GET", CMS);
    const rv =
      Number((cur.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion) + 1_000_000;
    return statusOf(
      await w.raw("admin", "GET", `${CMS}?resourceVersion=${rv}&resourceVersionMatch=Exact&limit=1`),
    );
  }),
  probe("list at an exact resourceVersion that still exists", async (w) => {
    const cur = await w.raw("admin", "GET", `${CMS}?labelSelector=tier`);
    const rv = (cur.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    return names(
      await w.raw(
        "admin",
        "GET",
        `${CMS}?labelSelector=tier&resourceVersion=${rv}&resourceVersionMatch=Exact`,
      ),
    );
  }),
  ...[
    "tier=web",
    "tier==web",
    "tier!=web",
    "tier in (web,db)",
    "tier notin (web)",
    "tier",
    "!tier",
    "tier=web,idx=1",
    "idx>1",
  ].map((sel) =>
    ask(
      `labelSelector ${sel}`,
      "admin",
      "GET",
      `${CMS}?labelSelector=${encodeURIComponent(`set=list,${sel}`)}`,
      undefined,
      names,
    ),
  ),
  ask(
    "an invalid labelSelector",
    "admin",
    "GET",
    `${CMS}?labelSelector=${encodeURIComponent("tier in web")}`,
    undefined,
    code,
  ),
  ask(
    "fieldSelector metadata.name=l1",
    "admin",
    "GET",
    `${CMS}?fieldSelector=metadata.name%3Dl1`,
    undefined,
    names,
  ),
  ask(
    "fieldSelector metadata.name!=l1 with a label selector",
    "admin",
    "GET",
    `${CMS}?labelSelector=tier&fieldSelector=metadata.name!%3Dl1`,
    undefined,
    names,
  ),
  ask(
    "fieldSelector metadata.namespace across namespaces",
    "admin",
    "GET",
    `/api/v1/configmaps?labelSelector=tier&fieldSelector=metadata.namespace%3D${NS}`,
    undefined,
    names,
  ),
  ask(
    "fieldSelector on an unsupported ConfigMap field",
    "admin",
    "GET",
    `${CMS}?fieldSelector=data.a%3D1`,
    undefined,
    withMessage,
  ),
  ask(
    "fieldSelector on an unsupported custom resource field",
    "admin",
    "GET",
    `${PROBES}?fieldSelector=spec.size%3Dsmall`,
    undefined,
    code,
  ),
  ask(
    "fieldSelector type on Secrets",
    "admin",
    "GET",
    `${SECRETS}?fieldSelector=type%3Dkubernetes.io/basic-auth`,
    undefined,
    names,
  ),
  ask(
    "fieldSelector status.phase on Namespaces",
    "admin",
    "GET",
    "/api/v1/namespaces?fieldSelector=status.phase%3DActive,metadata.name%3Dconformance",
    undefined,
    names,
  ),
  ask("a malformed fieldSelector", "admin", "GET", `${CMS}?fieldSelector=metadata.name`, undefined, code),
  ask(
    "delete collection by label selector",
    "admin",
    "DELETE",
    `${CMS}?labelSelector=tier%3Ddb`,
    undefined,
    (r) => ({ ...(names(r) as object) }),
  ),
  ask("after the collection delete", "admin", "GET", `${CMS}?labelSelector=tier`, undefined, names),
  ask("a list's kind and apiVersion", "admin", "GET", `${CMS}?labelSelector=tier`, undefined, fields("kind")),
];

/** Watches: initial events, bookmarks, selectors, and what a change delivers. */
const watchView = (events: WatchEvent[]): string[] =>
  events.map((e) => {
    const meta = isRecord(e.object.metadata) ? e.object.metadata : {};
    const annotations = isRecord(meta.annotations) ? meta.annotations : {};
    return e.type === "BOOKMARK"
      ? `BOOKMARK ${annotations["k8s.io/initial-events-end"] ?? ""}`.trim()
      : e.type === "ERROR"
        ? `ERROR ${String(e.object.code)} ${String(e.object.reason)}`
        : `${e.type} ${String(meta.name)}`;
  });

const watchProbes: Probe[] = [
  probe(
    "watch with sendInitialEvents: the existing objects then the initial-events-end bookmark",
    async (w) =>
      watchView(
        await w.watch(
          "admin",
          `${CMS}?watch=1&labelSelector=tier&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=2`,
        ),
      ),
  ),
  probe("watch with sendInitialEvents but no resourceVersionMatch", async (w) =>
    code(await w.raw("admin", "GET", `${CMS}?watch=1&sendInitialEvents=true&timeoutSeconds=1`)),
  ),
  probe("watch from resourceVersion 0 (a synthetic ADDED per object)", async (w) =>
    watchView(
      await w.watch("admin", `${CMS}?watch=1&labelSelector=tier&resourceVersion=0&timeoutSeconds=1`),
    ).sort(),
  ),
  probe("watch from now: a create, an update, a delete", async (w) => {
    const list = await w.raw("admin", "GET", CMS);
    const rv = (list.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    return watchView(
      await w.watch(
        "admin",
        `${CMS}?watch=1&resourceVersion=${rv}&fieldSelector=metadata.name%3Dwatched&timeoutSeconds=2`,
        async () => {
          await w.raw("admin", "POST", CMS, cm("watched"));
          await w.raw(
            "admin",
            "PATCH",
            `${CMS}/watched`,
            { data: { a: "1" } },
            "application/merge-patch+json",
          );
          await w.raw("admin", "DELETE", `${CMS}/watched`);
        },
      ),
    );
  }),
  probe("watch with a label selector: an object leaving the selection is DELETED", async (w) => {
    await w.raw("admin", "POST", CMS, cm("mover", {}, { labels: { moving: "yes" } }));
    const list = await w.raw("admin", "GET", CMS);
    const rv = (list.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    return watchView(
      await w.watch(
        "admin",
        `${CMS}?watch=1&resourceVersion=${rv}&labelSelector=moving%3Dyes&timeoutSeconds=2`,
        async () => {
          await w.raw(
            "admin",
            "PATCH",
            `${CMS}/mover`,
            { metadata: { labels: { moving: "no" } } },
            "application/merge-patch+json",
          );
          await w.raw(
            "admin",
            "PATCH",
            `${CMS}/mover`,
            { metadata: { labels: { moving: "yes" } } },
            "application/merge-patch+json",
          );
        },
      ),
    );
  }),
  probe("watch of a single object by name in the path's field selector, as kubectl get -w does", async (w) =>
    watchView(await w.watch("admin", `${CMS}?watch=1&fieldSelector=metadata.name%3Dupd&timeoutSeconds=1`)),
  ),
  probe("watch with an invalid resourceVersion", async (w) =>
    code(await w.raw("admin", "GET", `${CMS}?watch=1&resourceVersion=abc&timeoutSeconds=1`)),
  ),
  probe("watch with allowWatchBookmarks and nothing changing: no event within 2 s", async (w) => {
    const list = await w.raw("admin", "GET", CMS);
    const rv = (list.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    return watchView(
      await w.watch(
        "admin",
        `${CMS}?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=2`,
      ),
    );
  }),
  probe("watch from resourceVersion 1 (older than anything kept)", async (w) =>
    watchView(
      await w.watch(
        "admin",
        `${CMS}?watch=1&resourceVersion=1&fieldSelector=metadata.name%3Dupd&timeoutSeconds=1`,
      ),
    ),
  ),
];

/** Finalizers, deletionTimestamp, dry-run and preconditions on delete. */
const deletionProbes: Probe[] = [
  ask(
    "setup: a ConfigMap with a finalizer",
    "admin",
    "POST",
    CMS,
    cm("fin", {}, { finalizers: ["example.com/hold"] }),
    code,
  ),
  ask(
    "delete of an object with a finalizer: 200 and the object, deletionTimestamp set",
    "admin",
    "DELETE",
    `${CMS}/fin`,
    undefined,
    (r) => ({
      code: code(r),
      kind: get(r.body, "kind"),
      deleting: get(r.body, "metadata.deletionTimestamp") !== undefined,
      finalizers: get(r.body, "metadata.finalizers"),
    }),
  ),
  ask("a second delete while it is terminating", "admin", "DELETE", `${CMS}/fin`, undefined, (r) => ({
    code: code(r),
    kind: get(r.body, "kind"),
  })),
  ask(
    "adding a finalizer while it is terminating",
    "admin",
    "PATCH",
    `${CMS}/fin`,
    { metadata: { finalizers: ["example.com/hold", "example.com/new"] } },
    statusOf,
    "application/merge-patch+json",
  ),
  ask(
    "changing data while it is terminating",
    "admin",
    "PATCH",
    `${CMS}/fin`,
    { data: { x: "1" } },
    fields("data"),
    "application/merge-patch+json",
  ),
  ask(
    "removing deletionTimestamp by update",
    "admin",
    "PATCH",
    `${CMS}/fin`,
    [{ op: "remove", path: "/metadata/deletionTimestamp" }],
    (r) => ({ code: code(r), deleting: get(r.body, "metadata.deletionTimestamp") !== undefined }),
    "application/json-patch+json",
  ),
  ask(
    "removing the last finalizer deletes it",
    "admin",
    "PATCH",
    `${CMS}/fin`,
    { metadata: { finalizers: null } },
    (r) => code(r),
    "application/merge-patch+json",
  ),
  ask("after the finalizer is gone", "admin", "GET", `${CMS}/fin`, undefined, code),
  ask(
    "delete of a custom resource: the answer is the object",
    "admin",
    "DELETE",
    `${PROBES}/schema-10`,
    undefined,
    fields("kind", "metadata.name"),
  ),
  ask(
    "delete of a ConfigMap: the answer is a Success Status",
    "admin",
    "DELETE",
    `${CMS}/l1`,
    undefined,
    fields("kind", "status", "details.name", "details.kind", "details.group"),
  ),
  ask(
    "delete with an unknown propagationPolicy",
    "admin",
    "DELETE",
    `${CMS}/l2?propagationPolicy=Sometimes`,
    undefined,
    statusOf,
  ),
  ask(
    "delete with a resourceVersion precondition that does not match",
    "admin",
    "DELETE",
    `${CMS}/l2`,
    { apiVersion: "v1", kind: "DeleteOptions", preconditions: { resourceVersion: "1" } },
    statusOf,
  ),
  ask(
    "delete with a uid precondition that does not match",
    "admin",
    "DELETE",
    `${CMS}/l2`,
    {
      apiVersion: "v1",
      kind: "DeleteOptions",
      preconditions: { uid: "00000000-0000-0000-0000-000000000000" },
    },
    statusOf,
  ),
  ask("delete with dryRun=All keeps the object", "admin", "DELETE", `${CMS}/l2?dryRun=All`, undefined, code),
  ask("after the dry-run delete", "admin", "GET", `${CMS}/l2`, undefined, fields("metadata.name")),
  ask("create with dryRun=All", "admin", "POST", `${CMS}?dryRun=All`, cm("dry"), (r) => ({
    code: code(r),
    name: get(r.body, "metadata.name"),
    uid: typeof get(r.body, "metadata.uid"),
  })),
  ask("after the dry-run create", "admin", "GET", `${CMS}/dry`, undefined, code),
  ask(
    "update with dryRun=All",
    "admin",
    "PATCH",
    `${CMS}/l2?dryRun=All`,
    { data: { dry: "run" } },
    fields("data"),
    "application/merge-patch+json",
  ),
  ask("after the dry-run update", "admin", "GET", `${CMS}/l2`, undefined, fields("data")),
  ask("an unknown dryRun value", "admin", "POST", `${CMS}?dryRun=Some`, cm("dry2"), code),
];

/** Server-side apply: ownership, conflicts, list types across managers. */
const APPLY = "application/apply-patch+yaml";
const applyAs = (manager: string, spec: Record<string, unknown>, force = false) => ({
  path: `${PROBES}/ssa?fieldManager=${manager}${force ? "&force=true" : ""}`,
  body: pr("ssa", spec),
});
const managersOf = (r: Reply): unknown => {
  const mf = get(r.body, "metadata.managedFields");
  return Array.isArray(mf)
    ? mf
        .map(
          (m: Record<string, unknown>) =>
            `${m.manager} ${m.operation}${m.subresource ? ` ${m.subresource}` : ""} ${JSON.stringify(m.fieldsV1)}`,
        )
        .sort()
    : null;
};
const ssaProbes: Probe[] = [
  (() => {
    const a = applyAs("alpha", {
      size: "small",
      entries: [{ name: "a", value: "1" }],
      tags: ["x"],
      atomic: ["p"],
    });
    return ask(
      "apply creates an object",
      "admin",
      "PATCH",
      a.path,
      a.body,
      (r) => ({ ...(fields("spec")(r) as object), managers: managersOf(r) }),
      APPLY,
    );
  })(),
  (() => {
    const b = applyAs("beta", { entries: [{ name: "b", value: "2" }], tags: ["y"] });
    return ask(
      "a second manager's list-map entry and list-set item merge with the first's",
      "admin",
      "PATCH",
      b.path,
      b.body,
      (r) => ({ ...(fields("spec.entries", "spec.tags")(r) as object), managers: managersOf(r) }),
      APPLY,
    );
  })(),
  (() => {
    const b = applyAs("beta", { size: "large" });
    return ask(
      "a conflicting apply: 409 with the field and its manager",
      "admin",
      "PATCH",
      b.path,
      b.body,
      (r) => ({ ...(statusOf(r) as object), message: withMessage(r) }),
      APPLY,
    );
  })(),
  (() => {
    const b = applyAs("beta", { size: "large", entries: [{ name: "b", value: "2" }] }, true);
    return ask(
      "a forced apply takes the field over",
      "admin",
      "PATCH",
      b.path,
      b.body,
      (r) => ({
        ...(fields("spec.size", "spec.entries", "spec.tags")(r) as object),
        managers: managersOf(r),
      }),
      APPLY,
    );
  })(),
  (() => {
    const a = applyAs("alpha", { entries: [{ name: "a", value: "1" }], atomic: ["q"] });
    return ask(
      "an apply dropping fields the manager owned alone removes them",
      "admin",
      "PATCH",
      a.path,
      a.body,
      fields("spec.size", "spec.tags", "spec.atomic", "spec.entries"),
      APPLY,
    );
  })(),
  (() => {
    const b = applyAs("beta", { size: "large", entries: [{ name: "b", value: "2" }], atomic: ["r"] });
    return ask(
      "an atomic list another manager owns conflicts",
      "admin",
      "PATCH",
      b.path,
      b.body,
      statusOf,
      APPLY,
    );
  })(),
  ask("apply without a fieldManager", "admin", "PATCH", `${PROBES}/ssa`, pr("ssa", {}), withMessage, APPLY),
  ask(
    "apply with a body whose name differs from the URL's",
    "admin",
    "PATCH",
    `${PROBES}/ssa?fieldManager=alpha`,
    pr("other", {}),
    code,
    APPLY,
  ),
  ask(
    "apply in a namespace that does not exist",
    "admin",
    "PATCH",
    `/apis/${GROUP}/v1/namespaces/nowhere/probes/ssa?fieldManager=alpha`,
    pr("ssa", {}),
    statusOf,
    APPLY,
  ),
  ask(
    "an update by another manager takes ownership (Update entry)",
    "admin",
    "PATCH",
    `${PROBES}/ssa?fieldManager=gamma`,
    { spec: { short: "ab" } },
    managersOf,
    "application/merge-patch+json",
  ),
  ask(
    "apply of a ConfigMap",
    "admin",
    "PATCH",
    `${CMS}/applied?fieldManager=alpha`,
    cm("applied", { data: { a: "1" } }),
    (r) => ({ ...(fields("data")(r) as object), managers: managersOf(r) }),
    APPLY,
  ),
  ask(
    "apply of the status subresource",
    "admin",
    "PATCH",
    `${PROBES}/ssa/status?fieldManager=alpha`,
    { apiVersion: `${GROUP}/v1`, kind: "Probe", metadata: { name: "ssa" }, status: { phase: "Applied" } },
    (r) => ({ ...(fields("status.phase")(r) as object), managers: managersOf(r) }),
    APPLY,
  ),
  ask(
    "apply with a YAML body",
    "admin",
    "PATCH",
    `${CMS}/applied?fieldManager=alpha`,
    Buffer.from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  a: '2'\n"),
    fields("data"),
    APPLY,
  ),
  ask(
    "apply with dryRun",
    "admin",
    "PATCH",
    `${CMS}/applied?fieldManager=alpha&dryRun=All`,
    cm("applied", { data: { a: "3" } }),
    fields("data"),
    APPLY,
  ),
];

/** Scale subresource. */
const scaleProbes: Probe[] = [
  ask(
    "GET scale of a custom resource",
    "admin",
    "GET",
    `${PROBES}/p1/scale`,
    undefined,
    fields("kind", "apiVersion", "spec.replicas", "status.replicas", "status.selector"),
  ),
  ask(
    "PUT scale changes the spec's replicas",
    "admin",
    "PUT",
    `${PROBES}/p1/scale`,
    {
      apiVersion: "autoscaling/v1",
      kind: "Scale",
      metadata: { name: "p1", namespace: NS },
      spec: { replicas: 3 },
    },
    fields("spec.replicas"),
  ),
  ask("after the scale", "admin", "GET", `${PROBES}/p1`, undefined, fields("spec.replicas")),
  ask(
    "merge patch of scale",
    "admin",
    "PATCH",
    `${PROBES}/p1/scale`,
    { spec: { replicas: 2 } },
    fields("spec.replicas"),
    "application/merge-patch+json",
  ),
  ask("scale of a kind without a scale subresource", "admin", "GET", `${PLAINS}/x/scale`, undefined, code),
  ask("scale of a missing object", "admin", "GET", `${PROBES}/nope/scale`, undefined, statusOf),
  ask(
    "PUT scale with a negative replica count",
    "admin",
    "PUT",
    `${PROBES}/p1/scale`,
    {
      apiVersion: "autoscaling/v1",
      kind: "Scale",
      metadata: { name: "p1", namespace: NS },
      spec: { replicas: -1 },
    },
    statusOf,
  ),
  ask(
    "PUT scale with a stale resourceVersion",
    "admin",
    "PUT",
    `${PROBES}/p1/scale`,
    {
      apiVersion: "autoscaling/v1",
      kind: "Scale",
      metadata: { name: "p1", namespace: NS, resourceVersion: "1" },
      spec: { replicas: 4 },
    },
    statusOf,
  ),
];

/** What each identity may do: RBAC as shipped (SPEC §8.1), with the 403's details. */
const IDENTITIES = ["controller", "mao", "capi", "capa", "installer"];
const RBAC_REQUESTS: { label: string; method: string; path: string; body?: unknown }[] = [
  { label: "list Secrets cluster-wide", method: "GET", path: "/api/v1/secrets" },
  { label: "list ConfigMaps in the probe namespace", method: "GET", path: CMS },
  {
    label: "list MAPI Machines",
    method: "GET",
    path: `/apis/machine.openshift.io/v1beta1/namespaces/${MAPI_NS}/machines`,
  },
  {
    label: "list CAPI Machines",
    method: "GET",
    path: `/apis/cluster.x-k8s.io/v1beta2/namespaces/${CAPI_NS}/machines`,
  },
  {
    label: "list AWSMachines",
    method: "GET",
    path: `/apis/infrastructure.cluster.x-k8s.io/v1beta2/namespaces/${CAPI_NS}/awsmachines`,
  },
  { label: "list Nodes", method: "GET", path: "/api/v1/nodes" },
  {
    label: "create a Namespace",
    method: "POST",
    path: "/api/v1/namespaces",
    body: { apiVersion: "v1", kind: "Namespace", metadata: { name: "rbac-probe" } },
  },
  {
    label: "delete a CRD",
    method: "DELETE",
    path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/plains.${GROUP}`,
  },
  {
    label: "get a Lease in the CAPI namespace",
    method: "GET",
    path: `/apis/coordination.k8s.io/v1/namespaces/${CAPI_NS}/leases/nope`,
  },
  {
    label: "create an Event in the MAPI namespace",
    method: "POST",
    path: `/api/v1/namespaces/${MAPI_NS}/events`,
    body: {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: "rbac-probe" },
      involvedObject: { kind: "Machine", namespace: MAPI_NS, name: "m" },
      reason: "Probe",
      message: "m",
    },
  },
  { label: "list the probe kind", method: "GET", path: PROBES },
  { label: "read /version", method: "GET", path: "/version" },
];
const rbacProbes: Probe[] = IDENTITIES.flatMap((as) =>
  RBAC_REQUESTS.map(({ label, method, path, body }) =>
    ask(`RBAC: ${as} may ${label}?`, as, method, path, body, (r) =>
      r.status === 403 ? statusOf(r) : code(r),
    ),
  ),
);

/**
 * ConfigMap `owner-<tag>` (with `ownerMeta`) and a dependent holding a finalizer that blocks its owner's
 * deletion; the owner deleted with `query`; the dependent released once it is seen deleting. What the delete
 * answered, whether the dependent was deleted first, the owner's finalizers meanwhile, and that it went.
 */
const foregroundDelete = async (w: World, tag: string, ownerMeta: Record<string, unknown>, query: string) => {
  const owner = await w.raw("admin", "POST", CMS, cm(`owner-${tag}`, {}, ownerMeta));
  const uid = String(get(owner.body, "metadata.uid"));
  await w.raw(
    "admin",
    "POST",
    CMS,
    cm(
      `dep-${tag}`,
      {},
      {
        finalizers: ["example.com/hold"],
        ownerReferences: [
          { apiVersion: "v1", kind: "ConfigMap", name: `owner-${tag}`, uid, blockOwnerDeletion: true },
        ],
      },
    ),
  );
  const del = await w.raw("admin", "DELETE", `${CMS}/owner-${tag}${query}`);
  const dep = await eventually(
    w,
    `${CMS}/dep-${tag}`,
    (r) => get(r.body, "metadata.deletionTimestamp") !== undefined,
  );
  const ownerNow = await w.raw("admin", "GET", `${CMS}/owner-${tag}`);
  await w.raw(
    "admin",
    "PATCH",
    `${CMS}/dep-${tag}`,
    { metadata: { finalizers: null } },
    "application/merge-patch+json",
  );
  const gone = await eventually(w, `${CMS}/owner-${tag}`, (r) => r.status === 404);
  return {
    delete: { ...(fields("metadata.finalizers")(del) as object) },
    dependentDeleting: get(dep.body, "metadata.deletionTimestamp") !== undefined,
    ownerWhileWaiting: fields("metadata.finalizers")(ownerNow),
    ownerAfter: code(gone),
  };
};

/** Garbage collection in all three policies, and owner references. */
const gcProbes: Probe[] = [
  probe("GC Background: a dependent of a deleted owner is collected", async (w) => {
    const owner = await w.raw("admin", "POST", CMS, cm("owner-bg"));
    const uid = String(get(owner.body, "metadata.uid"));
    await w.raw(
      "admin",
      "POST",
      CMS,
      cm("dep-bg", {}, { ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "owner-bg", uid }] }),
    );
    const del = await w.raw("admin", "DELETE", `${CMS}/owner-bg?propagationPolicy=Background`);
    const dep = await eventually(w, `${CMS}/dep-bg`, (r) => r.status === 404);
    return { delete: code(del), dependent: code(dep) };
  }),
  probe("GC Foreground: the owner waits with foregroundDeletion until its dependent is gone", (w) =>
    foregroundDelete(w, "fg", {}, "?propagationPolicy=Foreground"),
  ),
  // Decision 169: the DELETE guards read the policy the store will use, an object's own GC finalizer included.
  probe(
    "GC: a delete naming no policy keeps the owner's foregroundDeletion finalizer and deletes in the foreground",
    (w) => foregroundDelete(w, "fgf", { finalizers: ["foregroundDeletion"] }, ""),
  ),
  probe("GC: an explicit Background drops the owner's foregroundDeletion finalizer", async (w) => {
    await w.raw("admin", "POST", CMS, cm("owner-fgb", {}, { finalizers: ["foregroundDeletion"] }));
    const del = await w.raw("admin", "DELETE", `${CMS}/owner-fgb?propagationPolicy=Background`);
    const gone = await eventually(w, `${CMS}/owner-fgb`, (r) => r.status === 404);
    return { delete: code(del), ownerAfter: code(gone) };
  }),
  probe("GC Orphan: the dependent stays and loses its ownerReference", async (w) => {
    const owner = await w.raw("admin", "POST", CMS, cm("owner-or"));
    const uid = String(get(owner.body, "metadata.uid"));
    await w.raw(
      "admin",
      "POST",
      CMS,
      cm("dep-or", {}, { ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "owner-or", uid }] }),
    );
    const del = await w.raw("admin", "DELETE", `${CMS}/owner-or?propagationPolicy=Orphan`);
    await eventually(w, `${CMS}/owner-or`, (r) => r.status === 404);
    const dep = await eventually(
      w,
      `${CMS}/dep-or`,
      (r) => get(r.body, "metadata.ownerReferences") === undefined,
    );
    return { delete: code(del), dependent: fields("metadata.ownerReferences")(dep) };
  }),
  probe("GC: a dependent whose owner's kind is not served is left alone", async (w) => {
    const ref = (name: string, apiVersion: string, kind: string, uid: string) => ({
      ownerReferences: [{ apiVersion, kind, name, uid }],
    });
    const unserved = await w.raw(
      "admin",
      "POST",
      CMS,
      cm(
        "ghost-dependent",
        {},
        ref("ghost", "ghosts.example.com/v1", "Ghost", "22222222-2222-2222-2222-222222222222"),
      ),
    );
    // A dependent of a served kind's missing owner, created after it: once the collector has taken this one,
    // it has seen the other.
    await w.raw(
      "admin",
      "POST",
      CMS,
      cm("ghost-witness", {}, ref("never-there", "v1", "ConfigMap", "33333333-3333-3333-3333-333333333333")),
    );
    const witness = await eventually(w, `${CMS}/ghost-witness`, (r) => r.status === 404);
    await sleep(1_000);
    const after = await w.raw("admin", "GET", `${CMS}/ghost-dependent`);
    return { created: code(unserved), witness: code(witness), dependent: code(after) };
  }),
  probe("GC: a dependent whose ownerReference names an owner that never existed is collected", async (w) => {
    await w.raw(
      "admin",
      "POST",
      CMS,
      cm(
        "orphan-dependent",
        {},
        {
          ownerReferences: [
            {
              apiVersion: "v1",
              kind: "ConfigMap",
              name: "never-existed",
              uid: "11111111-1111-1111-1111-111111111111",
            },
          ],
        },
      ),
    );
    return code(await eventually(w, `${CMS}/orphan-dependent`, (r) => r.status === 404));
  }),
  probe(
    "GC: a dependent with a live owner and one that never existed is kept, with the dangling reference",
    async (w) => {
      const owner = await w.raw("admin", "POST", CMS, cm("owner-live"));
      const uid = String(get(owner.body, "metadata.uid"));
      await w.raw(
        "admin",
        "POST",
        CMS,
        cm(
          "dep-two",
          {},
          {
            ownerReferences: [
              { apiVersion: "v1", kind: "ConfigMap", name: "owner-live", uid },
              {
                apiVersion: "v1",
                kind: "ConfigMap",
                name: "ghost",
                uid: "11111111-1111-1111-1111-222222222222",
              },
            ],
          },
        ),
      );
      await sleep(3000);
      const dep = await w.raw("admin", "GET", `${CMS}/dep-two`);
      return {
        code: code(dep),
        owners: (get(dep.body, "metadata.ownerReferences") as { name: string }[] | undefined)?.map(
          (o) => o.name,
        ),
      };
    },
  ),
  ask(
    "CAPA's identity sets blockOwnerDeletion on a CAPI Machine owner (no update on machines/finalizers)",
    "capa",
    "POST",
    `/apis/infrastructure.cluster.x-k8s.io/v1beta2/namespaces/${CAPI_NS}/awsmachines`,
    undefined,
    statusOf,
  ),
];
// The CAPA probe needs the owner's uid, known only per world.
gcProbes[gcProbes.length - 1] = probe(gcProbes[gcProbes.length - 1]!.name, async (w) =>
  statusOf(
    await w.raw(
      "capa",
      "POST",
      `/apis/infrastructure.cluster.x-k8s.io/v1beta2/namespaces/${CAPI_NS}/awsmachines`,
      {
        apiVersion: "infrastructure.cluster.x-k8s.io/v1beta2",
        kind: "AWSMachine",
        metadata: {
          name: "conformance-owned",
          ownerReferences: [
            {
              apiVersion: "cluster.x-k8s.io/v1beta2",
              kind: "Machine",
              name: "conformance-owner",
              uid: w.capiMachineUid,
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        },
        spec: { instanceType: "m6i.large" },
      },
    ),
  ),
);

/** A namespace besides NS, for owners the GC must not find from NS. */
const OTHER_NS = "conformance-other";
const ensureOtherNamespace = (w: World): Promise<Reply> =>
  w.raw("admin", "POST", "/api/v1/namespaces", {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: OTHER_NS },
  });
const unhold = (w: World, path: string): Promise<Reply> =>
  w.raw("admin", "PATCH", path, { metadata: { finalizers: null } }, "application/merge-patch+json");
const ownerRef = (name: string, uid: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  name,
  uid,
  ...extra,
});
const deletingView = (r: Reply): unknown => ({
  code: code(r),
  deleting: get(r.body, "metadata.deletionTimestamp") !== undefined,
  finalizers: get(r.body, "metadata.finalizers") ?? null,
});
/** The warning events about one object, as `kubectl events` shows them (the uid in a message elided). */
const eventsAbout = async (w: World, namespace: string, name: string, uid: string): Promise<unknown> => {
  const path = `/api/v1/namespaces/${namespace}/events?fieldSelector=involvedObject.name%3D${name}`;
  const r = await eventually(
    w,
    path,
    (x) => Array.isArray(get(x.body, "items")) && (get(x.body, "items") as unknown[]).length > 0,
  );
  const items = (get(r.body, "items") as Record<string, unknown>[] | undefined) ?? [];
  return items.map((e) => ({
    type: e.type,
    reason: e.reason,
    involvedObject: `${get(e, "involvedObject.apiVersion")}/${get(e, "involvedObject.kind")} ${get(e, "involvedObject.namespace") ?? ""}/${get(e, "involvedObject.name")}`,
    source: get(e, "source.component") ?? null,
    message: String(e.message).replaceAll(uid, "<uid>"),
  }));
};

/** The GC's owner coordinates (apiVersion, kind, namespace, name and uid) and foreground ordering. */
const gcCoordinateProbes: Probe[] = [
  probe(
    "GC: an ownerReference whose uid is not the live owner's: the dependent is collected, the owner kept",
    async (w) => {
      await w.raw("admin", "POST", CMS, cm("owner-uid"));
      await w.raw(
        "admin",
        "POST",
        CMS,
        cm(
          "dep-uid",
          {},
          { ownerReferences: [ownerRef("owner-uid", "11111111-1111-1111-1111-333333333333")] },
        ),
      );
      const dep = await eventually(w, `${CMS}/dep-uid`, (r) => r.status === 404);
      return { dependent: code(dep), owner: code(await w.raw("admin", "GET", `${CMS}/owner-uid`)) };
    },
  ),
  probe(
    "GC: an ownerReference naming a live object's uid under another name: the dependent is collected",
    async (w) => {
      const owner = await w.raw("admin", "POST", CMS, cm("owner-renamed"));
      const uid = String(get(owner.body, "metadata.uid"));
      await w.raw(
        "admin",
        "POST",
        CMS,
        cm("dep-renamed", {}, { ownerReferences: [ownerRef("not-the-owner", uid)] }),
      );
      const dep = await eventually(w, `${CMS}/dep-renamed`, (r) => r.status === 404);
      return { dependent: code(dep), owner: code(await w.raw("admin", "GET", `${CMS}/owner-renamed`)) };
    },
  ),
  probe(
    "GC: a namespaced owner in another namespace is absent: the dependent is collected, an OwnerRefInvalidNamespace event",
    async (w) => {
      await ensureOtherNamespace(w);
      const owner = await w.raw("admin", "POST", `/api/v1/namespaces/${OTHER_NS}/configmaps`, {
        ...cm("owner-elsewhere"),
        metadata: { name: "owner-elsewhere", namespace: OTHER_NS },
      });
      const uid = String(get(owner.body, "metadata.uid"));
      await sleep(1000); // the collector has seen the owner
      await w.raw(
        "admin",
        "POST",
        CMS,
        cm("dep-elsewhere", {}, { ownerReferences: [ownerRef("owner-elsewhere", uid)] }),
      );
      const dep = await eventually(w, `${CMS}/dep-elsewhere`, (r) => r.status === 404);
      return {
        dependent: code(dep),
        owner: code(await w.raw("admin", "GET", `/api/v1/namespaces/${OTHER_NS}/configmaps/owner-elsewhere`)),
        events: await eventsAbout(w, NS, "dep-elsewhere", uid),
      };
    },
  ),
  probe(
    "GC: a cluster-scoped owner of a namespaced dependent: kept while it lives, collected after",
    async (w) => {
      const owner = await w.raw("admin", "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: "conformance-gc-owner" },
        rules: [],
      });
      const uid = String(get(owner.body, "metadata.uid"));
      await w.raw(
        "admin",
        "POST",
        CMS,
        cm(
          "dep-of-cluster",
          {},
          {
            ownerReferences: [
              {
                apiVersion: "rbac.authorization.k8s.io/v1",
                kind: "ClusterRole",
                name: "conformance-gc-owner",
                uid,
              },
            ],
          },
        ),
      );
      await sleep(3000);
      const kept = await w.raw("admin", "GET", `${CMS}/dep-of-cluster`);
      const del = await w.raw(
        "admin",
        "DELETE",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles/conformance-gc-owner",
      );
      const gone = await eventually(w, `${CMS}/dep-of-cluster`, (r) => r.status === 404);
      return { whileOwned: code(kept), ownerDelete: code(del), after: code(gone) };
    },
  ),
  probe(
    "GC: a cluster-scoped dependent of a namespaced owner is never collected, an OwnerRefInvalidNamespace event in default",
    async (w) => {
      const owner = await w.raw("admin", "POST", CMS, cm("owner-of-cluster"));
      const uid = String(get(owner.body, "metadata.uid"));
      const created = await w.raw("admin", "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: "conformance-gc-dependent", ownerReferences: [ownerRef("owner-of-cluster", uid)] },
        rules: [],
      });
      await w.raw("admin", "DELETE", `${CMS}/owner-of-cluster`);
      const events = await eventsAbout(w, "default", "conformance-gc-dependent", uid);
      await sleep(2000);
      const dep = await w.raw(
        "admin",
        "GET",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles/conformance-gc-dependent",
      );
      await w.raw(
        "admin",
        "DELETE",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles/conformance-gc-dependent",
      );
      return { created: code(created), dependent: code(dep), events };
    },
  ),
  probe(
    "GC Foreground: a blocking dependent with no dependents of its own is deleted in the background",
    async (w) => {
      const owner = await w.raw("admin", "POST", CMS, cm("owner-fg2"));
      const uid = String(get(owner.body, "metadata.uid"));
      await w.raw(
        "admin",
        "POST",
        CMS,
        cm(
          "dep-fg2",
          {},
          {
            finalizers: ["example.com/hold"],
            ownerReferences: [ownerRef("owner-fg2", uid, { blockOwnerDeletion: true })],
          },
        ),
      );
      await w.raw("admin", "DELETE", `${CMS}/owner-fg2?propagationPolicy=Foreground`);
      const dep = await eventually(
        w,
        `${CMS}/dep-fg2`,
        (r) => get(r.body, "metadata.deletionTimestamp") !== undefined,
      );
      const ownerWaiting = await w.raw("admin", "GET", `${CMS}/owner-fg2`);
      await unhold(w, `${CMS}/dep-fg2`);
      const gone = await eventually(w, `${CMS}/owner-fg2`, (r) => r.status === 404);
      return { dependent: deletingView(dep), owner: deletingView(ownerWaiting), ownerAfter: code(gone) };
    },
  ),
  probe(
    "GC Foreground: a non-blocking dependent with dependents of its own is deleted in the foreground; the owner waits only for blocking ones",
    async (w) => {
      const owner = await w.raw("admin", "POST", CMS, cm("owner-fg3"));
      const uid = String(get(owner.body, "metadata.uid"));
      await w.raw(
        "admin",
        "POST",
        CMS,
        cm(
          "holder-fg3",
          {},
          {
            finalizers: ["example.com/hold"],
            ownerReferences: [ownerRef("owner-fg3", uid, { blockOwnerDeletion: true })],
          },
        ),
      );
      const mid = await w.raw(
        "admin",
        "POST",
        CMS,
        cm("mid-fg3", {}, { ownerReferences: [ownerRef("owner-fg3", uid)] }),
      );
      const midUid = String(get(mid.body, "metadata.uid"));
      await w.raw(
        "admin",
        "POST",
        CMS,
        cm(
          "leaf-fg3",
          {},
          {
            finalizers: ["example.com/hold"],
            ownerReferences: [ownerRef("mid-fg3", midUid, { blockOwnerDeletion: true })],
          },
        ),
      );
      await sleep(1000); // the collector has seen the chain
      await w.raw("admin", "DELETE", `${CMS}/owner-fg3?propagationPolicy=Foreground`);
      const leaf = await eventually(
        w,
        `${CMS}/leaf-fg3`,
        (r) => get(r.body, "metadata.deletionTimestamp") !== undefined,
      );
      const midNow = await w.raw("admin", "GET", `${CMS}/mid-fg3`);
      const ownerNow = await w.raw("admin", "GET", `${CMS}/owner-fg3`);
      await unhold(w, `${CMS}/holder-fg3`);
      const ownerGone = await eventually(w, `${CMS}/owner-fg3`, (r) => r.status === 404);
      await unhold(w, `${CMS}/leaf-fg3`);
      const midGone = await eventually(w, `${CMS}/mid-fg3`, (r) => r.status === 404);
      return {
        leaf: deletingView(leaf),
        mid: deletingView(midNow),
        owner: deletingView(ownerNow),
        ownerAfterHolder: code(ownerGone),
        midAfterLeaf: code(midGone),
      };
    },
  ),
  probe(
    "GC Foreground: a dependent that also has a live owner is not deleted; it loses the deleting owner's reference",
    async (w) => {
      const owner = await w.raw("admin", "POST", CMS, cm("owner-fg4"));
      const other = await w.raw("admin", "POST", CMS, cm("other-fg4"));
      await w.raw(
        "admin",
        "POST",
        CMS,
        cm(
          "dep-fg4",
          {},
          {
            ownerReferences: [
              ownerRef("owner-fg4", String(get(owner.body, "metadata.uid")), { blockOwnerDeletion: true }),
              ownerRef("other-fg4", String(get(other.body, "metadata.uid"))),
            ],
          },
        ),
      );
      await sleep(1000); // the collector has seen both owners
      await w.raw("admin", "DELETE", `${CMS}/owner-fg4?propagationPolicy=Foreground`);
      const gone = await eventually(w, `${CMS}/owner-fg4`, (r) => r.status === 404);
      const dep = await eventually(
        w,
        `${CMS}/dep-fg4`,
        (r) => r.status !== 200 || (get(r.body, "metadata.ownerReferences") as unknown[]).length === 1,
      );
      return {
        owner: code(gone),
        dependent: {
          ...(deletingView(dep) as object),
          owners:
            (get(dep.body, "metadata.ownerReferences") as { name: string }[] | undefined)?.map(
              (o) => o.name,
            ) ?? null,
        },
      };
    },
  ),
];

/** What a watch delivers: finalizers as last stored, and bookmarks before the watch's timeout. */
const finalizerWatchView = (events: WatchEvent[]): string[] =>
  events.map((e) => {
    const meta = isRecord(e.object.metadata) ? e.object.metadata : {};
    return `${e.type} ${String(meta.name)} deleting=${meta.deletionTimestamp !== undefined} finalizers=${JSON.stringify(meta.finalizers ?? [])}`;
  });
const watchDetailProbes: Probe[] = [
  probe(
    "watch: an object with a finalizer deleted, then the finalizer removed (DELETED carries the last stored state)",
    async (w) => {
      const list = await w.raw("admin", "GET", CMS);
      const rv = (list.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
      let removal: Reply | undefined;
      const events = await w.watch(
        "admin",
        `${CMS}?watch=1&resourceVersion=${rv}&fieldSelector=metadata.name%3Dwatched-fin&timeoutSeconds=3`,
        async () => {
          await w.raw("admin", "POST", CMS, cm("watched-fin", {}, { finalizers: ["example.com/hold"] }));
          await w.raw("admin", "DELETE", `${CMS}/watched-fin`);
          removal = await unhold(w, `${CMS}/watched-fin`);
        },
      );
      return { events: finalizerWatchView(events), removal: removal ? deletingView(removal) : null };
    },
  ),
  probe(
    "watch with allowWatchBookmarks for 5 s and a write outside its selection: a BOOKMARK before the timeout, resourceVersion only",
    async (w) => {
      const list = await w.raw("admin", "GET", CMS);
      const rv = (list.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
      const events = await w.watch(
        "admin",
        `${CMS}?watch=1&resourceVersion=${rv}&fieldSelector=metadata.name%3Dnobody&allowWatchBookmarks=true&timeoutSeconds=5`,
        async () => {
          await w.raw("admin", "POST", CMS, cm("bookmark-nudge"));
        },
      );
      // One bookmark or two: kube's watch cache times them in 1 s buckets, so the count is not the answer.
      const shapes = events.map((e) => {
        const meta = isRecord(e.object.metadata) ? e.object.metadata : {};
        return {
          type: e.type,
          kind: e.object.kind,
          apiVersion: e.object.apiVersion,
          metadata: Object.keys(meta)
            .filter((k) => meta[k] !== null)
            .sort(),
          newer: Number(meta.resourceVersion) > Number(rv),
        };
      });
      return [...new Set(shapes.map((x) => JSON.stringify(x)))];
    },
  ),
];

/** Admission webhooks' matchConditions (CEL on request, object and oldObject). */
const VWCS = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
const UNREACHABLE = { url: "https://127.0.0.1:1/never" };
const matchWebhook = (name: string, conditions: string[], failurePolicy = "Fail") => ({
  name,
  clientConfig: UNREACHABLE,
  rules: [
    { operations: ["CREATE", "UPDATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["configmaps"] },
  ],
  matchConditions: conditions.map((expression, i) => ({ name: `c${i}`, expression })),
  sideEffects: "None",
  admissionReviewVersions: ["v1"],
  failurePolicy,
  timeoutSeconds: 2,
});
const inProbeNamespace = `request.namespace == '${NS}'`;
const dryRunCreate = (w: World, name: string): Promise<Reply> =>
  w.raw("admin", "POST", `${CMS}?dryRun=All`, cm(name));
const matchConditionProbes: Probe[] = [
  probe(
    "matchConditions: a configuration whose webhooks are called only when all conditions hold",
    async (w) => {
      const created = await w.raw("admin", "POST", VWCS, {
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "ValidatingWebhookConfiguration",
        metadata: { name: "conformance-match" },
        webhooks: [
          matchWebhook("mc.conformance.example.com", [
            inProbeNamespace,
            "object.metadata.name.startsWith('mc-')",
          ]),
          matchWebhook("mu.conformance.example.com", [
            inProbeNamespace,
            "object.metadata.name.startsWith('mu-')",
            "request.operation == 'UPDATE'",
            "oldObject.data.v != object.data.v",
          ]),
          matchWebhook("me.conformance.example.com", [
            inProbeNamespace,
            "object.metadata.name.startsWith('me-')",
            "object.data.missing == 'x'",
          ]),
          matchWebhook("md.conformance.example.com", [
            inProbeNamespace,
            "object.metadata.name.startsWith('md-')",
            "1 / (size(object.data) - 1) == 1",
          ]),
          matchWebhook(
            "mi.conformance.example.com",
            [inProbeNamespace, "object.metadata.name.startsWith('mi-')", "object.data.missing == 'x'"],
            "Ignore",
          ),
          matchWebhook("ma.conformance.example.com", [
            inProbeNamespace,
            "object.metadata.name.startsWith('ma-')",
            "request.userInfo.username != 'nobody' && request.kind.kind == 'ConfigMap' && oldObject == null",
          ]),
        ],
      });
      // The server's webhook configuration cache catches up: a dry run the conditions select fails once it has.
      const ready = await waitForReply(
        () => dryRunCreate(w, "mc-ready"),
        (r) => r.status === 500,
      );
      return { created: code(created), ready: code(ready) };
    },
  ),
  ask("matchConditions: a request they exclude is not sent", "admin", "POST", CMS, cm("other-mc"), code),
  ask(
    "matchConditions: a request they all match is sent (unreachable, failurePolicy Fail)",
    "admin",
    "POST",
    CMS,
    cm("mc-called"),
    statusOf,
  ),
  ask(
    "matchConditions: a CREATE excluded by request.operation, though oldObject is null",
    "admin",
    "POST",
    CMS,
    cm("mu-1", { data: { v: "1" } }),
    code,
  ),
  ask(
    "matchConditions: an UPDATE that leaves data.v as it was (oldObject vs object) is not sent",
    "admin",
    "PATCH",
    `${CMS}/mu-1`,
    { metadata: { labels: { a: "b" } } },
    code,
    "application/merge-patch+json",
  ),
  ask(
    "matchConditions: an UPDATE that changes data.v is sent",
    "admin",
    "PATCH",
    `${CMS}/mu-1`,
    { data: { v: "2" } },
    statusOf,
    "application/merge-patch+json",
  ),
  ask(
    "matchConditions: an expression that cannot be evaluated under failurePolicy Fail",
    "admin",
    "POST",
    CMS,
    cm("me-1"),
    statusOf,
  ),
  ask("matchConditions: a missing key, in cel-go's words", "admin", "POST", CMS, cm("me-2"), withMessage),
  ask(
    "matchConditions: a division by zero, in cel-go's words",
    "admin",
    "POST",
    CMS,
    cm("md-1", { data: { a: "b" } }),
    withMessage,
  ),
  ask(
    "empty maps: a ConfigMap created with empty data and labels",
    "admin",
    "POST",
    CMS,
    cm("empty-maps", { data: {}, binaryData: {} }, { labels: {}, annotations: {} }),
    fields("data", "binaryData", "metadata.labels", "metadata.annotations"),
  ),
  ask(
    "empty maps: a custom resource created with empty labels",
    "admin",
    "POST",
    PROBES,
    { ...pr("empty-maps", { size: "small" }), metadata: { name: "empty-maps", labels: {}, annotations: {} } },
    fields("metadata.labels", "metadata.annotations", "spec"),
  ),
  ask(
    "matchConditions: an expression that cannot be evaluated under failurePolicy Ignore",
    "admin",
    "POST",
    CMS,
    cm("mi-1"),
    code,
  ),
  ask(
    "matchConditions: request.userInfo, request.kind and a null oldObject on CREATE",
    "admin",
    "POST",
    CMS,
    cm("ma-1"),
    statusOf,
  ),
  ask(
    "matchConditions: an expression that does not compile",
    "admin",
    "POST",
    VWCS,
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: "conformance-bad-match" },
      webhooks: [matchWebhook("bad.conformance.example.com", ["object.metadata.name.startsWith("])],
    },
    statusOf,
  ),
  ask(
    "matchConditions: an expression that is not a bool",
    "admin",
    "POST",
    VWCS,
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: "conformance-string-match" },
      webhooks: [matchWebhook("str.conformance.example.com", ["object.metadata.name"])],
    },
    statusOf,
  ),
  ask(
    "matchConditions: two conditions with the same name, and one without a name",
    "admin",
    "POST",
    VWCS,
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: "conformance-dup-match" },
      webhooks: [
        {
          ...matchWebhook("dup.conformance.example.com", []),
          matchConditions: [
            { name: "same", expression: "true" },
            { name: "same", expression: "true" },
            { name: "", expression: "true" },
          ],
        },
      ],
    },
    statusOf,
  ),
  probe("matchConditions: the configuration deleted, its webhooks are no longer called", async (w) => {
    const del = await w.raw("admin", "DELETE", `${VWCS}/conformance-match`);
    const after = await waitForReply(
      () => dryRunCreate(w, "mc-ready"),
      (r) => r.status === 201,
    );
    return { delete: code(del), after: code(after) };
  }),
];

/** Built-in kinds' typed validation (issue 22's list). */
const builtinProbes: Probe[] = [
  ask(
    "a Lease whose renewTime and leaseDurationSeconds have the wrong types",
    "admin",
    "POST",
    `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`,
    {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: "bad-lease" },
      spec: { renewTime: "yesterday", leaseDurationSeconds: "15" },
    },
    code,
  ),
  ask(
    "a valid Lease",
    "admin",
    "POST",
    `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`,
    {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: "good-lease" },
      spec: { holderIdentity: "me", leaseDurationSeconds: 15, renewTime: "2024-01-01T00:00:00.000000Z" },
    },
    fields("spec.holderIdentity", "spec.leaseDurationSeconds", "spec.renewTime"),
  ),
  ask(
    "a ConfigMap over 1 MiB of data",
    "admin",
    "POST",
    CMS,
    cm("too-big", { data: { big: "x".repeat(1_500_000) } }),
    statusOf,
  ),
  ask(
    "an Event whose involvedObject is in another namespace",
    "admin",
    "POST",
    `/api/v1/namespaces/${NS}/events`,
    {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: "wrong-namespace" },
      involvedObject: { kind: "Machine", namespace: MAPI_NS, name: "m" },
      reason: "Test",
      message: "m",
    },
    statusOf,
  ),
  ask(
    "a ValidatingWebhookConfiguration without sideEffects or admissionReviewVersions",
    "admin",
    "POST",
    "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: "invalid" },
      webhooks: [{ name: "a.example.com", clientConfig: { url: "https://127.0.0.1:1/x" } }],
    },
    statusOf,
  ),
  ask(
    "a Role with a rule without verbs",
    "admin",
    "POST",
    `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`,
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: "no-verbs" },
      rules: [{ apiGroups: [""], resources: ["configmaps"] }],
    },
    statusOf,
  ),
  ask(
    "a RoleBinding whose roleRef changes",
    "admin",
    "POST",
    `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`,
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "rb" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
      subjects: [{ kind: "User", name: "u", apiGroup: "rbac.authorization.k8s.io" }],
    },
    code,
  ),
  ask(
    "changing a RoleBinding's roleRef",
    "admin",
    "PATCH",
    `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings/rb`,
    { roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "edit" } },
    statusOf,
    "application/merge-patch+json",
  ),
  ask(
    "a CRD whose name is not plural.group",
    "admin",
    "POST",
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    { ...probeCrds()[1]!, metadata: { name: "wrong.example.com" } },
    code,
  ),
];

// ---- built-in kinds' typed decoding and validation, second pass (conformance backlog items 9–12):
// Leases' MicroTimes and spec rules, Events of both groups, Namespaces' spec.finalizers, generateName,
// and where the local server was stricter than kube ----

const LEASES = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`;
const CORE_EVENTS = `/api/v1/namespaces/${NS}/events`;
const NEW_EVENTS = `/apis/events.k8s.io/v1/namespaces/${NS}/events`;
const DRY = "?dryRun=All";

const lease = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: "coordination.k8s.io/v1",
  kind: "Lease",
  metadata: { name },
  spec,
});
const coreEvent = (metadata: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "Event",
  metadata,
  involvedObject: { kind: "ConfigMap", namespace: NS, name: "c" },
  reason: "Test",
  message: "m",
  ...extra,
});
const newEvent = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: "events.k8s.io/v1",
  kind: "Event",
  metadata: { name },
  eventTime: "2026-12-05T10:00:00.000000Z",
  regarding: { kind: "ConfigMap", namespace: NS, name: "c" },
  reportingController: "example.com/probe",
  reportingInstance: "probe-1",
  action: "Probe",
  reason: "Test",
  type: "Normal",
  note: "n",
  ...extra,
});

/** A refusal as statusOf shows it, with its message (decode errors are read by people). */
const statusAndMessage = (r: Reply): unknown => ({
  ...(statusOf(r) as Record<string, unknown>),
  message: r.status >= 400 && isRecord(r.body) ? r.body.message : undefined,
});

/** statusOf with each cause's message: kube lists a map's causes in Go's random map order, so sorted. */
const causeMessages = (r: Reply): unknown => {
  const details = isRecord(r.body) && isRecord(r.body.details) ? r.body.details : {};
  const causes = Array.isArray(details.causes) ? (details.causes as Record<string, unknown>[]) : [];
  return {
    ...(statusOf(r) as Record<string, unknown>),
    messages: causes.map((c) => `${c.field}: ${c.message}`).sort(),
  };
};

/** Code, and on success the generated name's length and whether it starts with the first `keep` characters of `prefix`. */
const generatedName =
  (prefix: string, keep: number) =>
  (r: Reply): unknown => {
    const name = String(get(r.body, r.status >= 400 ? "details.name" : "metadata.name") ?? "");
    const view = { length: name.length, prefixKept: name.startsWith(prefix.slice(0, keep)) };
    if (r.status < 400) return { code: code(r), ...view };
    // The refusal names the generated (random) name: the view keeps its length only.
    const { name: _, message, ...status } = statusAndMessage(r) as Record<string, unknown>;
    return { ...status, ...view, message: String(message).replaceAll(name, "<generated>") };
  };

const builtin2Probes: Probe[] = [
  // Leases (item 9).
  ask(
    "builtin2: a Lease with leaseDurationSeconds 0",
    "admin",
    "POST",
    LEASES + DRY,
    lease("zero-duration", { leaseDurationSeconds: 0 }),
    statusOf,
  ),
  ask(
    "builtin2: a Lease with leaseTransitions -1",
    "admin",
    "POST",
    LEASES + DRY,
    lease("negative-transitions", { leaseTransitions: -1 }),
    statusOf,
  ),
  ask(
    "builtin2: a Lease whose renewTime has three fraction digits (toISOString)",
    "admin",
    "POST",
    LEASES + DRY,
    lease("millis-renew", { renewTime: "2026-12-05T10:00:00.000Z" }),
    statusAndMessage,
  ),
  ask(
    "builtin2: a Lease whose acquireTime has three fraction digits",
    "admin",
    "POST",
    LEASES + DRY,
    lease("millis-acquire", { acquireTime: "2026-12-05T10:00:00.123Z" }),
    statusAndMessage,
  ),
  ask(
    "builtin2: a Lease whose renewTime has no fraction",
    "admin",
    "POST",
    LEASES + DRY,
    lease("no-fraction", { renewTime: "2026-12-05T10:00:00Z" }),
    statusAndMessage,
  ),
  ask(
    "builtin2: a Lease whose renewTime has nine fraction digits",
    "admin",
    "POST",
    LEASES + DRY,
    lease("nanos", { renewTime: "2026-12-05T10:00:00.123456789Z" }),
    statusAndMessage,
  ),
  ask(
    "builtin2: a Lease whose renewTime has a lower-case t",
    "admin",
    "POST",
    LEASES + DRY,
    lease("lower-t", { renewTime: "2026-12-05t10:00:00.000000Z" }),
    statusAndMessage,
  ),
  ask(
    "builtin2: a Lease whose renewTime is on February 30th",
    "admin",
    "POST",
    LEASES + DRY,
    lease("feb-30", { renewTime: "2026-02-30T10:00:00.000000Z" }),
    statusAndMessage,
  ),
  ask(
    "builtin2: a Lease whose times carry an offset are stored in UTC",
    "admin",
    "POST",
    LEASES + DRY,
    lease("offset", {
      renewTime: "2026-12-05T12:00:00.123456+02:00",
      acquireTime: "2026-12-05T00:30:00.000001-01:30",
    }),
    fields("spec.renewTime", "spec.acquireTime"),
  ),
  ask(
    "builtin2: a Lease with preferredHolder but no strategy",
    "admin",
    "POST",
    LEASES,
    lease("preferred", { holderIdentity: "a", preferredHolder: "b" }),
    fields("spec.holderIdentity", "spec.preferredHolder", "spec.strategy"),
  ),
  ask(
    "builtin2: a Lease with a strategy and a preferredHolder",
    "admin",
    "POST",
    LEASES + DRY,
    lease("strategy", { strategy: "OldestEmulationVersion", preferredHolder: "b" }),
    fields("spec.preferredHolder", "spec.strategy"),
  ),
  ask(
    "builtin2: an unknown Lease strategy",
    "admin",
    "POST",
    LEASES + DRY,
    lease("bogus-strategy", { strategy: "Bogus" }),
    fields("spec.strategy"),
  ),
  ask(
    "builtin2: a merge patch adding preferredHolder and a strategy to a Lease",
    "admin",
    "PATCH",
    `${LEASES}/preferred`,
    { spec: { preferredHolder: "c", strategy: "OldestEmulationVersion", leaseTransitions: 2 } },
    fields("spec.preferredHolder", "spec.strategy", "spec.leaseTransitions"),
    "application/merge-patch+json",
  ),
  // Events and Namespaces (item 10).
  ask(
    "builtin2: a core Event without involvedObject.namespace in a namespace",
    "admin",
    "POST",
    CORE_EVENTS + DRY,
    coreEvent({ name: "no-involved-namespace" }, { involvedObject: { kind: "Node", name: "n" } }),
    statusOf,
  ),
  ask(
    "builtin2: a core Event with eventTime but no reportingComponent, instance or action",
    "admin",
    "POST",
    CORE_EVENTS + DRY,
    coreEvent({ name: "new-style" }, { eventTime: "2026-12-05T10:00:00.000000Z" }),
    statusOf,
  ),
  ask(
    "builtin2: a core Event with eventTime, complete",
    "admin",
    "POST",
    CORE_EVENTS + DRY,
    coreEvent(
      { name: "new-style-complete" },
      {
        eventTime: "2026-12-05T10:00:00.000000Z",
        reportingComponent: "example.com/probe",
        reportingInstance: "probe-1",
        action: "Probe",
      },
    ),
    code,
  ),
  ask(
    "builtin2: a core Event named Upper.x",
    "admin",
    "POST",
    CORE_EVENTS + DRY,
    coreEvent({ name: "Upper.x" }),
    fields("metadata.name"),
  ),
  ask(
    "builtin2: a core Event whose times have fractions and offsets",
    "admin",
    "POST",
    CORE_EVENTS + DRY,
    coreEvent(
      { name: "times" },
      {
        firstTimestamp: "2026-12-05T10:00:00.123Z",
        lastTimestamp: "2026-12-05T12:00:00+02:00",
      },
    ),
    fields("firstTimestamp", "lastTimestamp"),
  ),
  ask(
    "builtin2: an events.k8s.io Event",
    "admin",
    "POST",
    NEW_EVENTS + DRY,
    newEvent("complete"),
    fields("eventTime", "note", "regarding.name", "reportingController"),
  ),
  ask(
    "builtin2: an events.k8s.io Event without eventTime",
    "admin",
    "POST",
    NEW_EVENTS + DRY,
    newEvent("no-event-time", { eventTime: undefined }),
    statusOf,
  ),
  ask(
    "builtin2: an events.k8s.io Event whose note is over 1 KiB",
    "admin",
    "POST",
    NEW_EVENTS + DRY,
    newEvent("long-note", { note: "n".repeat(1025) }),
    statusOf,
  ),
  ask(
    "builtin2: an events.k8s.io Event with nothing but its name",
    "admin",
    "POST",
    NEW_EVENTS + DRY,
    { apiVersion: "events.k8s.io/v1", kind: "Event", metadata: { name: "bare" } },
    statusOf,
  ),
  ask(
    "builtin2: an events.k8s.io Event with a bad type, deprecated fields and a short series",
    "admin",
    "POST",
    NEW_EVENTS + DRY,
    newEvent("deprecated", {
      type: "Info",
      deprecatedCount: 2,
      deprecatedSource: { component: "c" },
      deprecatedFirstTimestamp: "2026-12-05T10:00:00Z",
      series: { count: 1 },
    }),
    statusOf,
  ),
  ask(
    "builtin2: an events.k8s.io Event named Upper.x",
    "admin",
    "POST",
    NEW_EVENTS + DRY,
    newEvent("Upper.x"),
    statusOf,
  ),
  ask(
    "builtin2: a Namespace whose spec.finalizers holds an invalid name",
    "admin",
    "POST",
    `/api/v1/namespaces${DRY}`,
    {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "bad-spec-finalizer" },
      spec: { finalizers: ["not valid"] },
    },
    statusOf,
  ),
  ask(
    "builtin2: a Namespace created with its own spec.finalizers keeps them",
    "admin",
    "POST",
    `/api/v1/namespaces${DRY}`,
    {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "own-spec-finalizer" },
      spec: { finalizers: ["example.com/x"] },
    },
    fields("spec.finalizers"),
  ),
  // generateName (item 11).
  ask(
    "builtin2: a ConfigMap with a 100-character generateName",
    "admin",
    "POST",
    CMS + DRY,
    { apiVersion: "v1", kind: "ConfigMap", metadata: { generateName: "g".repeat(100) } },
    generatedName("g".repeat(100), 58),
  ),
  ask(
    "builtin2: a ConfigMap with generateName gen.",
    "admin",
    "POST",
    CMS + DRY,
    { apiVersion: "v1", kind: "ConfigMap", metadata: { generateName: "gen." } },
    generatedName("gen.", 4),
  ),
  ask(
    "builtin2: a ConfigMap with generateName Gen-",
    "admin",
    "POST",
    CMS + DRY,
    { apiVersion: "v1", kind: "ConfigMap", metadata: { generateName: "Gen-" } },
    generatedName("Gen-", 4),
  ),
  ask(
    "builtin2: a ConfigMap with generateName a-",
    "admin",
    "POST",
    CMS + DRY,
    { apiVersion: "v1", kind: "ConfigMap", metadata: { generateName: "a-" } },
    generatedName("a-", 2),
  ),
  ask(
    "builtin2: a ConfigMap with a name and an invalid generateName",
    "admin",
    "POST",
    CMS + DRY,
    { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "named", generateName: "gen." } },
    statusOf,
  ),
  ask(
    "builtin2: a custom resource with generateName gen.",
    "admin",
    "POST",
    PROBES + DRY,
    { apiVersion: `${GROUP}/v1`, kind: "Probe", metadata: { generateName: "gen." }, spec: {} },
    generatedName("gen.", 4),
  ),
  ask(
    "builtin2: a custom resource with a 100-character generateName",
    "admin",
    "POST",
    PROBES + DRY,
    { apiVersion: `${GROUP}/v1`, kind: "Probe", metadata: { generateName: "p".repeat(100) }, spec: {} },
    generatedName("p".repeat(100), 58),
  ),
  ask(
    "builtin2: a core Event with generateName gen.",
    "admin",
    "POST",
    CORE_EVENTS + DRY,
    coreEvent({ generateName: "gen." }),
    generatedName("gen.", 4),
  ),
  ask(
    "builtin2: a Namespace with a 100-character generateName",
    "admin",
    "POST",
    `/api/v1/namespaces${DRY}`,
    { apiVersion: "v1", kind: "Namespace", metadata: { generateName: "n".repeat(100) } },
    generatedName("n".repeat(100), 58),
  ),
  ask(
    "builtin2: a Role with generateName gen.",
    "admin",
    "POST",
    `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles${DRY}`,
    { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", metadata: { generateName: "Gen." } },
    generatedName("Gen.", 4),
  ),
  // Where the local server was stricter (item 12).
  ask(
    "builtin2: a ConfigMap with the annotation key A.B/c",
    "admin",
    "POST",
    CMS + DRY,
    cm("upper-annotation", {}, { annotations: { "A.B/c": "v" } }),
    fields("metadata.annotations"),
  ),
  ask(
    "builtin2: a ConfigMap with the label key A.B/c",
    "admin",
    "POST",
    CMS + DRY,
    cm("upper-label", {}, { labels: { "A.B/c": "v" } }),
    statusAndMessage,
  ),
  ask(
    "builtin2: a ConfigMap with a null label value, annotation value and data value",
    "admin",
    "POST",
    CMS + DRY,
    cm("nulls", { data: { d: null } }, { labels: { l: null }, annotations: { a: null } }),
    fields("metadata.labels", "metadata.annotations", "data"),
  ),
  ask(
    "builtin2: a custom resource with a null label value",
    "admin",
    "POST",
    PROBES + DRY,
    pr("nulls", {}, { labels: { l: null }, annotations: { a: null } }),
    fields("metadata.labels", "metadata.annotations"),
  ),
  ask(
    "builtin2: a Lease whose renewTime is a number",
    "admin",
    "POST",
    LEASES + DRY,
    lease("number-renew", { renewTime: 5 }),
    statusAndMessage,
  ),
  ask(
    "builtin2: a core Event in default without involvedObject.namespace",
    "admin",
    "POST",
    "/api/v1/namespaces/default/events?dryRun=All",
    coreEvent({ name: "cluster-scoped" }, { involvedObject: { kind: "Node", name: "n" } }),
    code,
  ),
  ask("builtin2: an events.k8s.io Event to update", "admin", "POST", NEW_EVENTS, newEvent("to-update"), code),
  ask(
    "builtin2: an events.k8s.io Event's note and series changed",
    "admin",
    "PATCH",
    `${NEW_EVENTS}/to-update`,
    { note: "changed", series: { count: 1 } },
    statusOf,
    "application/merge-patch+json",
  ),
  ask(
    "builtin2: an events.k8s.io Event's series set",
    "admin",
    "PATCH",
    `${NEW_EVENTS}/to-update`,
    { series: { count: 2, lastObservedTime: "2026-12-05T11:00:00.000000+01:00" } },
    fields("series.count", "series.lastObservedTime", "note"),
    "application/merge-patch+json",
  ),
  ask(
    "builtin2: a core Event whose eventTime has three fraction digits",
    "admin",
    "POST",
    CORE_EVENTS + DRY,
    coreEvent({ name: "millis-event" }, { eventTime: "2026-12-05T10:00:00.000Z" }),
    statusAndMessage,
  ),
  ask(
    "builtin2: a Namespace named with 64 characters",
    "admin",
    "POST",
    `/api/v1/namespaces${DRY}`,
    { apiVersion: "v1", kind: "Namespace", metadata: { name: "n".repeat(64) } },
    statusAndMessage,
  ),
  ask(
    "builtin2: a Namespace named a.b",
    "admin",
    "POST",
    `/api/v1/namespaces${DRY}`,
    { apiVersion: "v1", kind: "Namespace", metadata: { name: "a.b" } },
    statusAndMessage,
  ),
  ask(
    "builtin2: a Service named 1abc",
    "admin",
    "POST",
    `/api/v1/namespaces/${NS}/services${DRY}`,
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "1abc" },
      spec: { ports: [{ port: 80 }] },
    },
    statusOf,
  ),
  ask(
    "builtin2: a ConfigMap with an invalid label key, label value and annotation key",
    "admin",
    "POST",
    CMS + DRY,
    cm("bad-keys", {}, { labels: { "a/b/c": "-x", "/x": "v" }, annotations: { "Bad Key!": "v" } }),
    causeMessages,
  ),
];

// ---- objects as deep as the decoder allows (issue 20): kube-apiserver decodes no object deeper than
// 10,000 levels; a Machine's managedFields mirror its deepest path 4 levels further down ----

const MACHINES = `/apis/machine.openshift.io/v1beta1/namespaces/${MAPI_NS}/machines`;
/** A MAPI Machine as JSON bytes, providerSpec.value.crafted nested so the object (without managedFields) is
 * `depth` levels deep; bytes, because JSON.stringify of such a value overflows the stack. */
const deepMachine = (name: string, depth: number): Uint8Array => {
  const text = JSON.stringify({
    apiVersion: "machine.openshift.io/v1beta1",
    kind: "Machine",
    metadata: { name, namespace: MAPI_NS },
    spec: { providerSpec: { value: { crafted: "@deep" } } },
  });
  const levels = depth - 4;
  return new TextEncoder().encode(
    text.replace('"@deep"', `${'{"n":'.repeat(levels - 1)}{}${"}".repeat(levels - 1)}`),
  );
};
const deepProbes: Probe[] = [
  ...[4_000, 9_990, 9_996].map(
    (depth): Probe => ({
      name: `deep objects: a Machine ${depth} levels deep is created and read back whole`,
      run: async (w) => {
        const created = await w.raw("admin", "POST", MACHINES, deepMachine(`deep-${depth}`, depth));
        const read = await w.raw("admin", "GET", `${MACHINES}/deep-${depth}`);
        return {
          created: code(created),
          read: code(read),
          specDepth: depthOf(isRecord(read.body) ? read.body.spec : undefined),
        };
      },
    }),
  ),
  ...[9_997, 10_001, 20_000].map(
    (depth): Probe => ({
      name: `deep objects: a Machine ${depth} levels deep is refused`,
      run: async (w) => {
        const created = await w.raw("admin", "POST", MACHINES, deepMachine(`deep-${depth}`, depth));
        const read = await w.raw("admin", "GET", `${MACHINES}/deep-${depth}`);
        return { created: withMessage(created), read: code(read) };
      },
    }),
  ),
];

/**
 * RBAC's escalation prevention: the installer holds neither `escalate` nor `bind`, so what its roles grant
 * and its bindings bind must be within what it holds (SPEC §6's RBAC ceiling rests on this).
 */
const RBAC_V1 = "/apis/rbac.authorization.k8s.io/v1";
const RBAC_API = "rbac.authorization.k8s.io/v1";
const MERGE = "application/merge-patch+json";
const clusterRoleOf = (name: string, rules: unknown[], extra: Record<string, unknown> = {}) => ({
  apiVersion: RBAC_API,
  kind: "ClusterRole",
  metadata: { name },
  rules,
  ...extra,
});
const HELD_RULES = [{ apiGroups: ["cluster.x-k8s.io"], resources: ["machines"], verbs: ["get", "list"] }];
const BEYOND_RULES = [
  { apiGroups: ["", "apps"], resources: ["secrets", "deployments/scale"], verbs: ["list", "delete"] },
  {
    apiGroups: ["cluster.x-k8s.io"],
    resources: ["machines"],
    resourceNames: ["a", "b"],
    verbs: ["escalate"],
  },
  { nonResourceURLs: ["/healthz", "/metrics", "/debug/*"], verbs: ["get", "post"] },
];
const bindingOf = (
  kind: "ClusterRoleBinding" | "RoleBinding",
  name: string,
  roleRef: Record<string, string>,
) => ({
  apiVersion: RBAC_API,
  kind,
  metadata: { name },
  roleRef: { apiGroup: "rbac.authorization.k8s.io", ...roleRef },
  subjects: [{ kind: "ServiceAccount", name: "machine-api-migration-installer", namespace: CAPI_NS }],
});
const escalationProbes: Probe[] = [
  ask(
    "RBAC escalation: the installer creates a ClusterRole within what it holds",
    "installer",
    "POST",
    `${RBAC_V1}/clusterroles`,
    clusterRoleOf("conformance-esc-held", HELD_RULES),
    fields("rules"),
  ),
  ask(
    "RBAC escalation: the installer creates a ClusterRole granting what it does not hold (kube's words)",
    "installer",
    "POST",
    `${RBAC_V1}/clusterroles`,
    clusterRoleOf("conformance-esc-beyond", BEYOND_RULES),
    (r) => ({ status: statusOf(r), message: withMessage(r) }),
  ),
  ask(
    "RBAC escalation: the installer creates an aggregating ClusterRole",
    "installer",
    "POST",
    `${RBAC_V1}/clusterroles`,
    clusterRoleOf("conformance-esc-aggregating", [], {
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { "conformance/aggregate": "true" } }] },
    }),
    withMessage,
  ),
  ask(
    "RBAC escalation: the installer adds a rule it does not hold by merge patch",
    "installer",
    "PATCH",
    `${RBAC_V1}/clusterroles/conformance-esc-held`,
    { rules: [...HELD_RULES, { apiGroups: [""], resources: ["pods/exec"], verbs: ["create"] }] },
    withMessage,
    MERGE,
  ),
  ask(
    "RBAC escalation: the installer labels a ClusterRole it holds",
    "installer",
    "PATCH",
    `${RBAC_V1}/clusterroles/conformance-esc-held`,
    { metadata: { labels: { probe: "yes" } } },
    fields("metadata.labels"),
    MERGE,
  ),
  ask(
    "RBAC escalation: the installer binds cluster-admin to itself",
    "installer",
    "POST",
    `${RBAC_V1}/clusterrolebindings`,
    bindingOf("ClusterRoleBinding", "conformance-esc-admin", { kind: "ClusterRole", name: "cluster-admin" }),
    withMessage,
  ),
  ask(
    "RBAC escalation: the installer binds a ClusterRole it holds",
    "installer",
    "POST",
    `${RBAC_V1}/clusterrolebindings`,
    bindingOf("ClusterRoleBinding", "conformance-esc-held", {
      kind: "ClusterRole",
      name: "conformance-esc-held",
    }),
    code,
  ),
  ask(
    "RBAC escalation: the installer binds a Role that does not exist",
    "installer",
    "POST",
    `${RBAC_V1}/namespaces/${CAPI_NS}/rolebindings`,
    bindingOf("RoleBinding", "conformance-esc-missing", { kind: "Role", name: "conformance-nope" }),
    (r) => ({ status: statusOf(r), message: withMessage(r) }),
  ),
  ask(
    "RBAC escalation: the installer binds a ClusterRole that does not exist, cluster-wide",
    "installer",
    "POST",
    `${RBAC_V1}/clusterrolebindings`,
    bindingOf("ClusterRoleBinding", "conformance-esc-missing", {
      kind: "ClusterRole",
      name: "conformance-nope",
    }),
    (r) => ({ status: statusOf(r), message: withMessage(r) }),
  ),
  ask(
    "RBAC escalation: the installer binds a role of an unknown kind",
    "installer",
    "POST",
    `${RBAC_V1}/namespaces/${CAPI_NS}/rolebindings`,
    bindingOf("RoleBinding", "conformance-esc-kind", { kind: "Group", name: "conformance-nope" }),
    (r) => ({ status: statusOf(r), message: withMessage(r) }),
  ),
  ask(
    "RBAC escalation: the installer creates a Role granting pods/exec in its namespace",
    "installer",
    "POST",
    `${RBAC_V1}/namespaces/${CAPI_NS}/roles`,
    {
      apiVersion: RBAC_API,
      kind: "Role",
      metadata: { name: "conformance-esc-exec" },
      rules: [{ apiGroups: [""], resources: ["pods/exec", "configmaps"], verbs: ["create", "get"] }],
    },
    withMessage,
  ),
  ask(
    "RBAC escalation: a cluster admin (not system:masters) grants anything",
    "admin",
    "POST",
    `${RBAC_V1}/clusterroles`,
    clusterRoleOf("conformance-esc-admin", BEYOND_RULES),
    code,
  ),
];

/**
 * The object as created, but for what differs by server and moment (uid, resourceVersion, timestamps); each
 * managed field set is compared whole (decision 90).
 */
const withoutVolatile = (body: Record<string, unknown>): Record<string, unknown> => {
  const { uid, resourceVersion, creationTimestamp, managedFields, ...metadata } = (body.metadata ??
    {}) as Record<string, unknown>;
  const managers = Array.isArray(managedFields)
    ? managedFields
        .map(
          (m: Record<string, unknown>) =>
            `${m.manager} ${m.operation} ${m.apiVersion} ${JSON.stringify(m.fieldsV1)}`,
        )
        .sort() // their order depends on whether writes fell in the same second
    : undefined;
  return { ...body, metadata: { ...metadata, managedFields: managers } };
};
const created = (r: Reply): unknown =>
  !isRecord(r.body) || r.body.kind === "Status" ? statusOf(r) : { code: code(r), ...withoutVolatile(r.body) };
const whole = (r: Reply): unknown => ({
  code: code(r),
  body: isRecord(r.body) ? withoutVolatile(r.body) : r.body,
});

const pbStrings = (w: BinaryWriter, no: number, values: string[]): void => {
  for (const v of values) w.tag(no, WireType.LengthDelimited).string(v);
};
const pbMessageField = (w: BinaryWriter, no: number, bytes: Uint8Array): void => {
  w.tag(no, WireType.LengthDelimited).bytes(bytes);
};
const pbRule = (verbs: string[], apiGroups: string[], resources: string[]): Uint8Array =>
  pbMessage((r) => {
    pbStrings(r, 1, verbs);
    pbStrings(r, 2, apiGroups);
    pbStrings(r, 3, resources);
  });
const pbLabelSelector = (labels: Record<string, string>): Uint8Array => pbMessage((l) => pbMap(l, 1, labels));
const pbBinding = (
  kind: "RoleBinding" | "ClusterRoleBinding",
  name: string,
  roleKind: string,
  role: string,
) =>
  pbEnvelope(
    RBAC_API,
    kind,
    pbMessage((b) => {
      pbMessageField(b, 1, pbMeta(name));
      pbMessageField(
        b,
        2,
        pbMessage((s) => {
          s.tag(1, WireType.LengthDelimited).string("ServiceAccount");
          s.tag(3, WireType.LengthDelimited).string("default");
          s.tag(4, WireType.LengthDelimited).string(NS);
        }),
      );
      pbMessageField(
        b,
        3,
        pbMessage((r) => {
          r.tag(1, WireType.LengthDelimited).string("rbac.authorization.k8s.io");
          r.tag(2, WireType.LengthDelimited).string(roleKind);
          r.tag(3, WireType.LengthDelimited).string(role);
        }),
      );
    }),
  );
const pbReview = (apiVersion: string, kind: string, spec?: Uint8Array): Buffer =>
  pbEnvelope(
    apiVersion,
    kind,
    pbMessage((m) => {
      pbMessageField(m, 1, new Uint8Array());
      if (spec) pbMessageField(m, 2, spec);
    }),
  );
const pbResourceAttributes = (verb: string, resource: string, namespace: string): Uint8Array =>
  pbMessage((s) =>
    pbMessageField(
      s,
      1,
      pbMessage((a) => {
        a.tag(1, WireType.LengthDelimited).string(namespace);
        a.tag(2, WireType.LengthDelimited).string(verb);
        a.tag(5, WireType.LengthDelimited).string(resource);
      }),
    ),
  );

/**
 * Protobuf bodies of the other built-ins kubectl's generators and `auth` commands send (`create
 * serviceaccount|role|clusterrole|rolebinding|clusterrolebinding|priorityclass|poddisruptionbudget`,
 * `auth can-i`, `auth whoami`): the object as created, whole.
 */
const protobufKindProbes: Probe[] = [
  ask(
    "protobuf: create a ServiceAccount",
    "admin",
    "POST",
    `/api/v1/namespaces/${NS}/serviceaccounts`,
    pbEnvelope(
      "v1",
      "ServiceAccount",
      pbMessage((m) => {
        pbMessageField(m, 1, pbMeta("pb-sa"));
        m.tag(4, WireType.Varint).bool(false);
      }),
    ),
    created,
    PB,
  ),
  ask(
    "protobuf: create a Role",
    "admin",
    "POST",
    `${RBAC_V1}/namespaces/${NS}/roles`,
    pbEnvelope(
      RBAC_API,
      "Role",
      pbMessage((m) => {
        pbMessageField(m, 1, pbMeta("pb-role"));
        pbMessageField(m, 2, pbRule(["get", "list"], [""], ["pods", "pods/log"]));
      }),
    ),
    created,
    PB,
  ),
  ask(
    "protobuf: create an aggregating ClusterRole",
    "admin",
    "POST",
    `${RBAC_V1}/clusterroles`,
    pbEnvelope(
      RBAC_API,
      "ClusterRole",
      pbMessage((m) => {
        pbMessageField(m, 1, pbMeta("conformance-pb-aggregating"));
        pbMessageField(
          m,
          3,
          pbMessage((a) => pbMessageField(a, 1, pbLabelSelector({ "conformance/pb": "x" }))),
        );
      }),
    ),
    created,
    PB,
  ),
  ask(
    "protobuf: create a RoleBinding",
    "admin",
    "POST",
    `${RBAC_V1}/namespaces/${NS}/rolebindings`,
    pbBinding("RoleBinding", "pb-rb", "Role", "pb-role"),
    created,
    PB,
  ),
  ask(
    "protobuf: create a ClusterRoleBinding",
    "admin",
    "POST",
    `${RBAC_V1}/clusterrolebindings`,
    pbBinding("ClusterRoleBinding", "conformance-pb-crb", "ClusterRole", "conformance-pb-aggregating"),
    created,
    PB,
  ),
  ask(
    "protobuf: create a PriorityClass",
    "admin",
    "POST",
    "/apis/scheduling.k8s.io/v1/priorityclasses",
    pbEnvelope(
      "scheduling.k8s.io/v1",
      "PriorityClass",
      pbMessage((m) => {
        pbMessageField(m, 1, pbMeta("conformance-pb-pc"));
        m.tag(2, WireType.Varint).int32(5);
        m.tag(4, WireType.LengthDelimited).string("probe");
      }),
    ),
    created,
    PB,
  ),
  ...[
    [
      "a percentage",
      (i: BinaryWriter) => i.tag(1, WireType.Varint).int64(1).tag(3, WireType.LengthDelimited).string("50%"),
    ],
    ["a number", (i: BinaryWriter) => i.tag(1, WireType.Varint).int64(0).tag(2, WireType.Varint).int32(0)],
  ].map(([label, minAvailable], n) =>
    ask(
      `protobuf: create a PodDisruptionBudget with minAvailable ${label}`,
      "admin",
      "POST",
      `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets`,
      pbEnvelope(
        "policy/v1",
        "PodDisruptionBudget",
        pbMessage((m) => {
          pbMessageField(m, 1, pbMeta(`pb-pdb-${n}`));
          pbMessageField(
            m,
            2,
            pbMessage((s) => {
              pbMessageField(s, 1, pbMessage(minAvailable as (w: BinaryWriter) => void));
              pbMessageField(s, 2, pbLabelSelector({ app: "x" }));
            }),
          );
        }),
      ),
      (r) => fields("spec")(r),
      PB,
    ),
  ),
  ask(
    "protobuf: kubectl create deployment (a Deployment)",
    "admin",
    "POST",
    `/apis/apps/v1/namespaces/${NS}/deployments`,
    pbEnvelope(
      "apps/v1",
      "Deployment",
      pbMessage((m) => {
        pbMessageField(m, 1, pbMeta("pb-deploy"));
        pbMessageField(
          m,
          2,
          pbMessage((spec) => {
            spec.tag(1, WireType.Varint).int32(1);
            pbMessageField(spec, 2, pbLabelSelector({ app: "pb" }));
            pbMessageField(
              spec,
              3,
              pbMessage((t) => {
                pbMessageField(t, 1, pbMeta("", { app: "pb" }));
                pbMessageField(
                  t,
                  2,
                  pbMessage((pod) =>
                    pbMessageField(
                      pod,
                      2,
                      pbMessage((c) => {
                        c.tag(1, WireType.LengthDelimited).string("app");
                        c.tag(2, WireType.LengthDelimited).string("registry.example/app:1");
                      }),
                    ),
                  ),
                );
              }),
            );
          }),
        );
      }),
    ),
    // What the body carried (a real server also defaults the pod template, which the local one does not).
    (r) => ({
      ...(fields("spec.replicas", "spec.selector", "spec.template.metadata.labels")(r) as object),
      containers: (
        get(r.body, "spec.template.spec.containers") as Record<string, unknown>[] | undefined
      )?.map((c) => ({ name: c.name, image: c.image })),
    }),
    PB,
  ),
  ask(
    "protobuf: kubectl create service clusterip (a Service)",
    "admin",
    "POST",
    `/api/v1/namespaces/${NS}/services`,
    pbEnvelope(
      "v1",
      "Service",
      pbMessage((m) => {
        pbMessageField(m, 1, pbMeta("pb-svc"));
        pbMessageField(
          m,
          2,
          pbMessage((spec) => {
            pbMessageField(
              spec,
              1,
              pbMessage((port) => {
                port.tag(1, WireType.LengthDelimited).string("80-8080");
                port.tag(2, WireType.LengthDelimited).string("TCP");
                port.tag(3, WireType.Varint).int32(80);
                pbMessageField(
                  port,
                  4,
                  pbMessage((t) => t.tag(1, WireType.Varint).int64(0).tag(2, WireType.Varint).int32(8080)),
                );
              }),
            );
            pbMap(spec, 2, { app: "pb" });
            spec.tag(4, WireType.LengthDelimited).string("ClusterIP");
          }),
        );
      }),
    ),
    fields("spec.ports", "spec.selector", "spec.type"),
    PB,
  ),
  ask(
    "protobuf: kubectl auth can-i (a SelfSubjectAccessReview)",
    "controller",
    "POST",
    "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
    pbReview(
      "authorization.k8s.io/v1",
      "SelfSubjectAccessReview",
      pbResourceAttributes("list", "secrets", ""),
    ),
    whole,
    PB,
  ),
  ask(
    "protobuf: kubectl auth whoami (a SelfSubjectReview)",
    "controller",
    "POST",
    "/apis/authentication.k8s.io/v1/selfsubjectreviews",
    pbReview("authentication.k8s.io/v1", "SelfSubjectReview"),
    fields("kind", "apiVersion", "status.userInfo.username", "status.userInfo.groups"),
    PB,
  ),
];

/** The access reviews: what the server says a user may do, as its authorizer decides a request. */
const SSAR = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
const SAR = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
const ssar = (spec: Record<string, unknown>, metadata: Record<string, unknown> = {}) => ({
  apiVersion: "authorization.k8s.io/v1",
  kind: "SelfSubjectAccessReview",
  metadata,
  spec,
});
const sar = (spec: Record<string, unknown>) => ({ ...ssar(spec), kind: "SubjectAccessReview" });
const PRODUCT_USER = `system:serviceaccount:${CAPI_NS}:machine-api-migration`;
const reviewProbes: Probe[] = [
  ask(
    "access review: the product may list MAPI Machines (allowed, with RBAC's reason)",
    "controller",
    "POST",
    SSAR,
    ssar({
      resourceAttributes: {
        namespace: MAPI_NS,
        verb: "list",
        group: "machine.openshift.io",
        resource: "machines",
      },
    }),
    whole,
  ),
  ask(
    "access review: the product may not list Secrets cluster-wide",
    "controller",
    "POST",
    SSAR,
    ssar({ resourceAttributes: { verb: "list", resource: "secrets", version: "v1", unknownField: "x" } }),
    whole,
  ),
  ask(
    "access review: a non-resource URL",
    "installer",
    "POST",
    SSAR,
    // Only system:discovery grants /apis: a URL two roles grant is answered with either binding's name
    // (kube's RBAC authorizer walks its informer cache, in no fixed order).
    ssar({ nonResourceAttributes: { path: "/apis", verb: "get" } }),
    whole,
  ),
  ask(
    "access review: both kinds of attributes",
    "controller",
    "POST",
    SSAR,
    ssar({ resourceAttributes: { verb: "get" }, nonResourceAttributes: { path: "/", verb: "get" } }),
    statusOf,
  ),
  ask("access review: neither kind of attributes", "controller", "POST", SSAR, ssar({}), (r) => ({
    status: statusOf(r),
    message: withMessage(r).replace(/Invalid value: [^:]*:/, "Invalid value: <value>:"),
  })),
  ask(
    "access review: a name in metadata",
    "controller",
    "POST",
    SSAR,
    ssar({ nonResourceAttributes: { path: "/", verb: "get" } }, { name: "x" }),
    statusOf,
  ),
  ask(
    "access review: a label selector with neither raw selector nor requirements",
    "controller",
    "POST",
    SSAR,
    ssar({ resourceAttributes: { verb: "list", resource: "pods", labelSelector: {} } }),
    statusOf,
  ),
  ask("access review: GET is not served", "controller", "GET", SSAR, undefined, statusOf),
  ask(
    "subject access review: an admin asks about the product's rights",
    "admin",
    "POST",
    SAR,
    sar({
      user: PRODUCT_USER,
      groups: ["system:serviceaccounts", `system:serviceaccounts:${CAPI_NS}`],
      resourceAttributes: {
        namespace: CAPI_NS,
        verb: "create",
        group: "cluster.x-k8s.io",
        resource: "machines",
      },
    }),
    whole,
  ),
  ask(
    "subject access review: an admin asks about a group only",
    "admin",
    "POST",
    SAR,
    sar({ groups: ["system:masters"], nonResourceAttributes: { path: "/metrics", verb: "get" } }),
    whole,
  ),
  ask(
    "subject access review: without a user or a group",
    "admin",
    "POST",
    SAR,
    sar({ resourceAttributes: { verb: "get", resource: "pods" } }),
    statusOf,
  ),
  ask(
    "subject access review: may the MAO stand-in ask?",
    "mao",
    "POST",
    SAR,
    sar({ user: "u", resourceAttributes: { verb: "get", resource: "pods" } }),
    statusOf,
  ),
  ask(
    "rules review: what the installer holds in the CAPI namespace (kubectl auth can-i --list)",
    "installer",
    "POST",
    "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
    { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectRulesReview", spec: { namespace: CAPI_NS } },
    (r) => {
      const status = isRecord(r.body) && isRecord(r.body.status) ? r.body.status : {};
      const sorted = (v: unknown) =>
        Array.isArray(v) ? [...new Set(v.map((x) => JSON.stringify(x)))].sort() : v;
      return {
        code: code(r),
        resourceRules: sorted(status.resourceRules),
        nonResourceRules: sorted(status.nonResourceRules),
        incomplete: status.incomplete,
        evaluationError: status.evaluationError ?? null,
      };
    },
  ),
  ask(
    "rules review: without a namespace",
    "installer",
    "POST",
    "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
    { apiVersion: "authorization.k8s.io/v1", kind: "SelfSubjectRulesReview", spec: {} },
    withMessage,
  ),
  ask(
    "token review: a token the server never issued",
    "admin",
    "POST",
    "/apis/authentication.k8s.io/v1/tokenreviews",
    { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token: "not-a-token" } },
    (r) => {
      const status = isRecord(r.body) && isRecord(r.body.status) ? r.body.status : {};
      return {
        code: code(r),
        authenticated: status.authenticated ?? false,
        user: status.user,
        error: typeof status.error,
      };
    },
  ),
  ask(
    "token review: without a token",
    "admin",
    "POST",
    "/apis/authentication.k8s.io/v1/tokenreviews",
    { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: {} },
    withMessage,
  ),
  ask(
    "discovery of authorization.k8s.io/v1",
    "admin",
    "GET",
    "/apis/authorization.k8s.io/v1",
    undefined,
    (r) => ({
      code: code(r),
      resources:
        isRecord(r.body) && Array.isArray(r.body.resources)
          ? r.body.resources
              .filter((x: Record<string, unknown>) => x.name !== "localsubjectaccessreviews")
              .map((x: Record<string, unknown>) => `${x.name} ${x.namespaced} ${JSON.stringify(x.verbs)}`)
              .sort()
          : null,
    }),
  ),
];

/** Impersonation (`kubectl --as`): allowed to a cluster admin, refused to everyone else, in kube's words. */
const SSR = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
const SSR_BODY = { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" };
const INSTALLER_USER = `system:serviceaccount:${CAPI_NS}:machine-api-migration-installer`;
const userInfoView = (r: Reply): unknown =>
  r.status === 201
    ? fields("status.userInfo.username", "status.userInfo.groups", "status.userInfo.uid")(r)
    : withMessage(r);
const asSomeone = (
  name: string,
  as: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  view: (r: Reply) => unknown,
  body?: unknown,
): Probe => ({ name, run: async (w) => view(await w.raw(as, method, path, body, undefined, headers)) });
const impersonationProbes: Probe[] = [
  asSomeone(
    "impersonation: an admin acts as the installer's ServiceAccount (whoami)",
    "admin",
    "POST",
    SSR,
    { "Impersonate-User": INSTALLER_USER },
    userInfoView,
    SSR_BODY,
  ),
  asSomeone(
    "impersonation: an admin acts as a user in a group, with a uid",
    "admin",
    "POST",
    SSR,
    { "Impersonate-User": "alice", "Impersonate-Group": "devs", "Impersonate-Uid": "u-1" },
    userInfoView,
    SSR_BODY,
  ),
  asSomeone(
    "impersonation: an admin acting as the installer is refused what the installer may not do",
    "admin",
    "GET",
    "/api/v1/secrets",
    { "Impersonate-User": INSTALLER_USER },
    withMessage,
  ),
  asSomeone(
    "impersonation: the product may not impersonate a user",
    "controller",
    "GET",
    CMS,
    { "Impersonate-User": "alice" },
    withMessage,
  ),
  asSomeone(
    "impersonation: the product may not impersonate a ServiceAccount",
    "controller",
    "GET",
    CMS,
    { "Impersonate-User": INSTALLER_USER },
    withMessage,
  ),
  asSomeone(
    "impersonation: a group without a user",
    "admin",
    "GET",
    CMS,
    { "Impersonate-Group": "devs" },
    code,
  ),
];

/**
 * Each manager's field set, as kube writes it (decision 90: structured-merge-diff's rules), sorted: the
 * entries' order depends on whether two writes fell in the same second (pinned in managed-fields.test.ts).
 */
const fieldSets = (r: Reply): unknown => {
  const mf = get(r.body, "metadata.managedFields");
  return {
    code: code(r),
    fieldSets: Array.isArray(mf)
      ? mf
          .map((m: Record<string, unknown>) => `${m.manager} ${m.operation} ${JSON.stringify(m.fieldsV1)}`)
          .sort()
      : statusOf(r),
  };
};
const applyEntries = (manager: string, spec: Record<string, unknown>, force = false): Probe =>
  ask(
    `managed fields: ${manager} applies ${JSON.stringify(spec)}${force ? " by force" : ""}`,
    "admin",
    "PATCH",
    `${PROBES}/mf-ssa?fieldManager=${manager}${force ? "&force=true" : ""}`,
    pr("mf-ssa", spec),
    (r) => ({ ...(fieldSets(r) as object), spec: get(r.body, "spec") }),
    APPLY,
  );

/** Managed fields: which nodes each manager owns after creates, updates and applies. */
const managedFieldsProbes: Probe[] = [
  ask(
    "managed fields: a map a create adds is a member of the field set",
    "admin",
    "POST",
    CMS,
    cm("mf-dot", { data: { a: "b" } }, { labels: { x: "y" } }),
    fieldSets,
  ),
  ask(
    "managed fields: an update takes what it changes and adds from the creator",
    "admin",
    "PATCH",
    `${CMS}/mf-dot?fieldManager=editor`,
    { metadata: { labels: { x: "w", y: "z" } }, data: { c: "d" } },
    fieldSets,
    MERGE,
  ),
  ask(
    "managed fields: an update removing a map takes it from everyone",
    "admin",
    "PATCH",
    `${CMS}/mf-dot?fieldManager=remover`,
    { data: null },
    fieldSets,
    MERGE,
  ),
  ask(
    "managed fields: a custom resource's create adds its spec",
    "admin",
    "POST",
    `${PROBES}?fieldManager=creator`,
    pr("mf-cr", { size: "small", nested: { must: "m" }, entries: [{ name: "a", value: "1" }] }),
    fieldSets,
  ),
  ask(
    "managed fields: an update of an associative list's element takes its field",
    "admin",
    "PATCH",
    `${PROBES}/mf-cr?fieldManager=editor`,
    { spec: { entries: [{ name: "a", value: "2" }, { name: "b" }], nested: { must: "m", other: "o" } } },
    fieldSets,
    MERGE,
  ),
  applyEntries("alpha", { entries: [{ name: "a", value: "1" }], tags: ["x"] }),
  applyEntries("beta", { entries: [{ name: "a", value: "2" }] }),
  applyEntries("beta", { entries: [{ name: "a", value: "2" }] }, true),
  applyEntries("alpha", { tags: ["x"] }),
  applyEntries("beta", { tags: ["y"] }),
  ask(
    "managed fields: an apply changing a RoleBinding's roleRef conflicts on the whole roleRef",
    "admin",
    "PATCH",
    `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings/pb-rb?fieldManager=other`,
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "pb-rb" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "elsewhere" },
    },
    (r) => ({ ...(statusOf(r) as object), message: withMessage(r) }),
    APPLY,
  ),
];

/**
 * Query parameters as kube's parameter codec reads them (found by a differential probe, decision 124): an
 * integer that is not one is a 400, never ignored (a watch with `timeoutSeconds=abc` never ended locally);
 * `watch` is true for any value but `false` and `0`; a continue token carries its own resourceVersion.
 */
const QUERY_MACHINES = `/apis/machine.openshift.io/v1beta1/namespaces/${NS}/machines`;
const queryParameterProbes: Probe[] = [
  ask("query: a list with limit=abc", "admin", "GET", `${CMS}?limit=abc`, undefined, code),
  ask("query: a list with timeoutSeconds=abc", "admin", "GET", `${CMS}?timeoutSeconds=abc`, undefined, code),
  ask("query: a list with limit=1.5", "admin", "GET", `${CMS}?limit=1.5`, undefined, code),
  probe("query: a watch with timeoutSeconds=abc", async (w) => {
    const r = await Promise.race([
      w.raw("admin", "GET", `${QUERY_MACHINES}?watch=true&timeoutSeconds=abc`),
      sleep(3_000).then(() => undefined),
    ]);
    return r ? code(r) : "no answer within 3 s";
  }),
  ask(
    "query: a watch=bogus is a watch",
    "admin",
    "GET",
    `${CMS}?watch=bogus&timeoutSeconds=1&labelSelector=none%3D1`,
    undefined,
    (r) => ({ code: code(r), listed: isRecord(r.body) && r.body.kind === "ConfigMapList" }),
  ),
  probe("query: a delete with gracePeriodSeconds=abc", async (w) => {
    await w.raw("admin", "POST", CMS, cm("query-grace"));
    const r = await w.raw("admin", "DELETE", `${CMS}/query-grace?gracePeriodSeconds=abc`);
    return { code: code(r), after: code(await w.raw("admin", "GET", `${CMS}/query-grace`)) };
  }),
  probe("query: a continue token with a resourceVersion", async (w) => {
    for (const n of ["query-page-1", "query-page-2"])
      await w.raw("admin", "POST", CMS, cm(n, {}, { labels: { set: "query" } }));
    const first = await w.raw("admin", "GET", `${CMS}?limit=1&labelSelector=set%3Dquery`);
    const token =
      isRecord(first.body) && isRecord(first.body.metadata) ? String(first.body.metadata.continue ?? "") : "";
    const next = await w.raw(
      "admin",
      "GET",
      `${CMS}?limit=1&labelSelector=set%3Dquery&continue=${encodeURIComponent(token)}&resourceVersion=1`,
    );
    return { token: token !== "", next: code(next) };
  }),
];

/**
 * The scale subresource's edge cases (backlog item 6) and resourceVersion preconditions and reads (item 7):
 * kube decodes a Scale strictly as its Go type (a wrong type or kind is a 400, a missing `spec` is replicas 0,
 * which drains a MachineSet) and parses a resourceVersion as an unsigned integer, "0" meaning none.
 */
const EDGE_SETS = `/apis/machine.openshift.io/v1beta1/namespaces/${NS}/machinesets`;
const edgeSet = (name: string) => ({
  apiVersion: "machine.openshift.io/v1beta1",
  kind: "MachineSet",
  metadata: { name },
  spec: {
    replicas: 2,
    selector: { matchLabels: { set: name } },
    template: { metadata: { labels: { set: name } } },
  },
});
const scaleBody = (name: string, rest: Record<string, unknown> = { spec: { replicas: 3 } }) => ({
  apiVersion: "autoscaling/v1",
  kind: "Scale",
  metadata: { name, namespace: NS },
  ...rest,
});
/**
 * The answer (its message when refused) and the replicas stored after it. A refused patch's message quotes
 * the patched Scale, with each server's uid, resourceVersion and times: that quote is left out.
 */
const scaleView = (r: Reply): unknown =>
  r.status >= 400
    ? withMessage(r).replace(/Invalid value: "(?:[^"\\]|\\.)*"/, 'Invalid value: "…"')
    : fields("spec.replicas")(r);
/** Sets the object's replicas to 2, sends one request to its `/scale`, and reads the replicas back. */
const scaleCase =
  (collection: string, name: string, method: string, body: unknown, contentType?: string, query = "") =>
  async (w: World): Promise<unknown> => {
    await w.raw("admin", "PATCH", `${collection}/${name}`, { spec: { replicas: 2 } }, MERGE);
    const r = await w.raw("admin", method, `${collection}/${name}/scale${query}`, body, contentType);
    const after = await w.raw("admin", "GET", `${collection}/${name}`);
    return { answer: scaleView(r), after: fields("spec.replicas")(after) };
  };
const RV_MACHINES = `/apis/machine.openshift.io/v1beta1/namespaces/${NS}/machines`;
/** Sends one write and reads the object back (its data or spec, whether the write happened). */
const writeAndLook =
  (path: string, method: string, body: unknown, look: string, contentType?: string) =>
  async (w: World): Promise<unknown> => {
    const r = await w.raw("admin", method, path, body, contentType);
    return { answer: withMessage(r), after: fields(look)(await w.raw("admin", "GET", path)) };
  };
/** A fieldsV1 tree as its sorted paths. */
const fieldList = (v: unknown, prefix = ""): string[] =>
  isRecord(v)
    ? Object.keys(v)
        .sort()
        .flatMap((k) => [`${prefix}${k}`, ...fieldList(v[k], `${prefix}${k}/`)])
    : [];
/** Digits replaced: resourceVersions differ between the two servers. */
const withoutNumbers = (s: string): string => s.replace(/\d+/g, "N");
/**
 * A read of `rv-cm` (`/…` its path after the ConfigMaps, `?…` its query) at a resourceVersion a million past
 * the server's: the answer and how long it took, in whole seconds (kube's watch cache waits 3 s).
 */
const futureRead =
  (path: (rv: number) => string) =>
  async (w: World): Promise<unknown> => {
    const now = await w.raw("admin", "GET", `${CMS}/rv-cm`);
    const rv = Number(get(now.body, "metadata.resourceVersion")) + 1_000_000;
    const started = Date.now();
    const r = await w.raw("admin", "GET", `${CMS}${path(rv)}`);
    return { answer: withoutNumbers(withMessage(r)), waited: Math.round((Date.now() - started) / 1000) };
  };
const scaleAndVersionProbes: Probe[] = [
  ask("scale: setup a MachineSet", "admin", "POST", EDGE_SETS, edgeSet("edge-ms"), code),
  ask("scale: setup a Probe", "admin", "POST", PROBES, pr("edge-p", { replicas: 2 }), code),
  probe("scale: PUT naming another object", scaleCase(EDGE_SETS, "edge-ms", "PUT", scaleBody("other"))),
  probe("scale: PUT naming another object (Probe)", scaleCase(PROBES, "edge-p", "PUT", scaleBody("other"))),
  probe("scale: PUT without spec", scaleCase(EDGE_SETS, "edge-ms", "PUT", scaleBody("edge-ms", {}))),
  probe("scale: PUT without spec (Probe)", scaleCase(PROBES, "edge-p", "PUT", scaleBody("edge-p", {}))),
  probe(
    "scale: PUT with an empty spec",
    scaleCase(EDGE_SETS, "edge-ms", "PUT", scaleBody("edge-ms", { spec: {} })),
  ),
  probe(
    "scale: merge patch of replicas null",
    scaleCase(EDGE_SETS, "edge-ms", "PATCH", { spec: { replicas: null } }, MERGE),
  ),
  probe(
    "scale: merge patch of replicas null (Probe)",
    scaleCase(PROBES, "edge-p", "PATCH", { spec: { replicas: null } }, MERGE),
  ),
  probe(
    "scale: JSON patch removing spec",
    scaleCase(
      EDGE_SETS,
      "edge-ms",
      "PATCH",
      [{ op: "remove", path: "/spec" }],
      "application/json-patch+json",
    ),
  ),
  probe(
    "scale: PUT with replicas a string",
    scaleCase(EDGE_SETS, "edge-ms", "PUT", scaleBody("edge-ms", { spec: { replicas: "3" } })),
  ),
  probe(
    "scale: PUT with replicas 1.5",
    scaleCase(EDGE_SETS, "edge-ms", "PUT", scaleBody("edge-ms", { spec: { replicas: 1.5 } })),
  ),
  probe(
    "scale: PUT with replicas 4294967296",
    scaleCase(EDGE_SETS, "edge-ms", "PUT", scaleBody("edge-ms", { spec: { replicas: 4294967296 } })),
  ),
  probe(
    "scale: PUT with replicas 2147483648",
    scaleCase(EDGE_SETS, "edge-ms", "PUT", scaleBody("edge-ms", { spec: { replicas: 2147483648 } })),
  ),
  probe(
    "scale: merge patch with replicas a string",
    scaleCase(EDGE_SETS, "edge-ms", "PATCH", { spec: { replicas: "3" } }, MERGE),
  ),
  probe(
    "scale: merge patch with replicas 1.5",
    scaleCase(EDGE_SETS, "edge-ms", "PATCH", { spec: { replicas: 1.5 } }, MERGE),
  ),
  probe(
    "scale: PUT of kind Deployment",
    scaleCase(EDGE_SETS, "edge-ms", "PUT", {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "edge-ms", namespace: NS },
      spec: { replicas: 3 },
    }),
  ),
  probe(
    "scale: PUT without apiVersion and kind",
    scaleCase(EDGE_SETS, "edge-ms", "PUT", {
      metadata: { name: "edge-ms", namespace: NS },
      spec: { replicas: 3 },
    }),
  ),
  probe(
    "scale: PUT of an autoscaling/v2 Scale",
    scaleCase(EDGE_SETS, "edge-ms", "PUT", { ...scaleBody("edge-ms"), apiVersion: "autoscaling/v2" }),
  ),
  probe(
    "scale: merge patch setting the kind",
    scaleCase(EDGE_SETS, "edge-ms", "PATCH", { kind: "Deployment", spec: { replicas: 3 } }, MERGE),
  ),
  probe(
    "scale: server-side apply",
    scaleCase(EDGE_SETS, "edge-ms", "PATCH", scaleBody("edge-ms"), APPLY, "?fieldManager=edge"),
  ),
  probe(
    "scale: server-side apply (Probe)",
    scaleCase(PROBES, "edge-p", "PATCH", scaleBody("edge-p"), APPLY, "?fieldManager=edge"),
  ),
  probe(
    "scale: server-side apply with force",
    scaleCase(EDGE_SETS, "edge-ms", "PATCH", scaleBody("edge-ms"), APPLY, "?fieldManager=edge&force=true"),
  ),
  probe(
    "scale: server-side apply again by its manager",
    scaleCase(
      EDGE_SETS,
      "edge-ms",
      "PATCH",
      scaleBody("edge-ms", { spec: { replicas: 4 } }),
      APPLY,
      "?fieldManager=edge",
    ),
  ),
  probe(
    "scale: PUT without a name",
    scaleCase(EDGE_SETS, "edge-ms", "PUT", { ...scaleBody("edge-ms"), metadata: { namespace: NS } }),
  ),
  probe(
    "scale: PUT naming another namespace",
    scaleCase(EDGE_SETS, "edge-ms", "PUT", {
      ...scaleBody("edge-ms"),
      metadata: { name: "edge-ms", namespace: "other" },
    }),
  ),
  probe(
    "scale: PUT with replicas null",
    scaleCase(EDGE_SETS, "edge-ms", "PUT", scaleBody("edge-ms", { spec: { replicas: null } })),
  ),
  probe(
    "scale: merge patch naming another object",
    scaleCase(EDGE_SETS, "edge-ms", "PATCH", { metadata: { name: "other" }, spec: { replicas: 3 } }, MERGE),
  ),
  probe(
    "scale: PUT with spec a string",
    scaleCase(EDGE_SETS, "edge-ms", "PUT", scaleBody("edge-ms", { spec: "3" })),
  ),
  probe(
    "scale: merge patch with status.selector a number",
    scaleCase(EDGE_SETS, "edge-ms", "PATCH", { status: { selector: 1 } }, MERGE),
  ),
  ask(
    "scale: setup a Probe without replicas",
    "admin",
    "POST",
    PROBES,
    pr("edge-none", { size: "small" }),
    code,
  ),
  ask(
    "scale: GET of an object without replicas",
    "admin",
    "GET",
    `${PROBES}/edge-none/scale`,
    undefined,
    scaleView,
  ),
  ask(
    "scale: merge patch of labels on an object without replicas",
    "admin",
    "PATCH",
    `${PROBES}/edge-none/scale`,
    { metadata: { labels: { a: "b" } } },
    scaleView,
    MERGE,
  ),
  ask(
    "scale: merge patch of replicas on an object without replicas",
    "admin",
    "PATCH",
    `${PROBES}/edge-none/scale`,
    { spec: { replicas: 1 } },
    scaleView,
    MERGE,
  ),
  probe("scale: managedFields after a PUT scale", async (w) => {
    await w.raw("admin", "PATCH", `${EDGE_SETS}/edge-ms`, { spec: { replicas: 2 } }, MERGE);
    await w.raw(
      "admin",
      "PUT",
      `${EDGE_SETS}/edge-ms/scale?fieldManager=scaler`,
      scaleBody("edge-ms", { spec: { replicas: 5 } }),
    );
    const r = await w.raw("admin", "GET", `${EDGE_SETS}/edge-ms`);
    const entries = get(r.body, "metadata.managedFields");
    // Sorted: kube orders Update entries by their time to the second, and the two writes may fall in one
    // second on one server and in two on the other.
    return Array.isArray(entries)
      ? entries
          .map((e: Record<string, unknown>) =>
            [e.manager, e.operation, e.apiVersion, e.subresource ?? "", ...fieldList(e.fieldsV1)].join(" "),
          )
          .sort()
      : entries;
  }),
  ask("rv: setup a ConfigMap", "admin", "POST", CMS, cm("rv-cm", { data: { a: "1" } }), code),
  ask(
    "rv: setup a Machine",
    "admin",
    "POST",
    RV_MACHINES,
    {
      apiVersion: "machine.openshift.io/v1beta1",
      kind: "Machine",
      metadata: { name: "rv-m" },
      spec: { providerSpec: { value: { a: "b" } } },
    },
    code,
  ),
  probe(
    "rv: PUT of a ConfigMap with resourceVersion 0",
    writeAndLook(
      `${CMS}/rv-cm`,
      "PUT",
      cm("rv-cm", { data: { a: "2" } }, { resourceVersion: "0" }),
      "data.a",
    ),
  ),
  probe(
    "rv: merge patch of a ConfigMap with resourceVersion 0",
    writeAndLook(
      `${CMS}/rv-cm`,
      "PATCH",
      { metadata: { resourceVersion: "0" }, data: { a: "3" } },
      "data.a",
      MERGE,
    ),
  ),
  probe(
    "rv: PUT of a ConfigMap with resourceVersion abc",
    writeAndLook(
      `${CMS}/rv-cm`,
      "PUT",
      cm("rv-cm", { data: { a: "4" } }, { resourceVersion: "abc" }),
      "data.a",
    ),
  ),
  probe(
    "rv: merge patch of a ConfigMap with resourceVersion abc",
    writeAndLook(
      `${CMS}/rv-cm`,
      "PATCH",
      { metadata: { resourceVersion: "abc" }, data: { a: "5" } },
      "data.a",
      MERGE,
    ),
  ),
  probe(
    "rv: PUT of a Machine with resourceVersion 0",
    writeAndLook(
      `${RV_MACHINES}/rv-m`,
      "PUT",
      {
        apiVersion: "machine.openshift.io/v1beta1",
        kind: "Machine",
        metadata: { name: "rv-m", resourceVersion: "0", labels: { put: "1" } },
        spec: { providerSpec: { value: { a: "b" } } },
      },
      "metadata.labels",
    ),
  ),
  probe(
    "rv: merge patch of a Machine with resourceVersion 0",
    writeAndLook(
      `${RV_MACHINES}/rv-m`,
      "PATCH",
      { metadata: { resourceVersion: "0", labels: { patch: "1" } } },
      "metadata.labels",
      MERGE,
    ),
  ),
  probe(
    "rv: merge patch of a Machine with resourceVersion abc",
    writeAndLook(
      `${RV_MACHINES}/rv-m`,
      "PATCH",
      { metadata: { resourceVersion: "abc", labels: { patch: "2" } } },
      "metadata.labels",
      MERGE,
    ),
  ),
  probe(
    "rv: PUT scale with resourceVersion abc",
    scaleCase(EDGE_SETS, "edge-ms", "PUT", {
      ...scaleBody("edge-ms"),
      metadata: { name: "edge-ms", namespace: NS, resourceVersion: "abc" },
    }),
  ),
  probe(
    "rv: PUT scale with resourceVersion 0",
    scaleCase(EDGE_SETS, "edge-ms", "PUT", {
      ...scaleBody("edge-ms"),
      metadata: { name: "edge-ms", namespace: NS, resourceVersion: "0" },
    }),
  ),
  probe(
    "rv: merge patch of scale with resourceVersion abc",
    scaleCase(
      EDGE_SETS,
      "edge-ms",
      "PATCH",
      { metadata: { resourceVersion: "abc" }, spec: { replicas: 3 } },
      MERGE,
    ),
  ),
  probe(
    "rv: merge patch of scale with resourceVersion 0",
    scaleCase(
      EDGE_SETS,
      "edge-ms",
      "PATCH",
      { metadata: { resourceVersion: "0" }, spec: { replicas: 3 } },
      MERGE,
    ),
  ),
  probe(
    "rv: merge patch of a Machine removing resourceVersion",
    writeAndLook(
      `${RV_MACHINES}/rv-m`,
      "PATCH",
      { metadata: { resourceVersion: null, labels: { patch: "3" } } },
      "metadata.labels",
      MERGE,
    ),
  ),
  probe(
    "rv: PUT of a ConfigMap with a resourceVersion out of range",
    writeAndLook(
      `${CMS}/rv-cm`,
      "PUT",
      cm("rv-cm", { data: { a: "6" } }, { resourceVersion: "99999999999999999999" }),
      "data.a",
    ),
  ),
  probe(
    "rv: a list with a future resourceVersion and a limit",
    futureRead((rv) => `?resourceVersion=${rv}&limit=1`),
  ),
  ask(
    "rv: GET with resourceVersion=abc",
    "admin",
    "GET",
    `${CMS}/rv-cm?resourceVersion=abc`,
    undefined,
    withMessage,
  ),
  ask(
    "rv: GET with resourceVersion=0",
    "admin",
    "GET",
    `${CMS}/rv-cm?resourceVersion=0`,
    undefined,
    fields("data.a"),
  ),
  ask(
    "rv: GET scale with resourceVersion=abc",
    "admin",
    "GET",
    `${EDGE_SETS}/edge-ms/scale?resourceVersion=abc`,
    undefined,
    withMessage,
  ),
  probe(
    "rv: GET with a resourceVersion from the future",
    futureRead((rv) => `/rv-cm?resourceVersion=${rv}`),
  ),
  probe(
    "rv: a list with a resourceVersion from the future",
    futureRead((rv) => `?resourceVersion=${rv}`),
  ),
];

/**
 * DeleteOptions as kube reads them: from the body when there is one (the query is then not read at all), else
 * from the query; validated together (backlog item 5). A curl that "dry-runs" with a body deletes for real.
 */
const deleteAndLook =
  (name: string, query: string, body: unknown) =>
  async (w: World): Promise<unknown> => {
    await w.raw("admin", "POST", CMS, cm(name));
    const r = await w.raw("admin", "DELETE", `${CMS}/${name}${query}`, body);
    const after = await w.raw("admin", "GET", `${CMS}/${name}`);
    return {
      code: code(r),
      kind: get(r.body, "kind") ?? null,
      finalizers: get(r.body, "metadata.finalizers") ?? null,
      causes: statusOf(r),
      after: code(after),
      deleting: get(after.body, "metadata.deletionTimestamp") !== undefined,
    };
  };
const DELETE_OPTIONS = { apiVersion: "v1", kind: "DeleteOptions" };
const deleteOptionProbes: Probe[] = [
  probe(
    "delopts: ?dryRun=All with a DeleteOptions body (the body's options win)",
    deleteAndLook("delopts-dry", "?dryRun=All", DELETE_OPTIONS),
  ),
  probe(
    "delopts: ?dryRun=All with an empty object body",
    deleteAndLook("delopts-dry-empty", "?dryRun=All", {}),
  ),
  probe(
    "delopts: ?propagationPolicy=Foreground with a body",
    deleteAndLook("delopts-fg", "?propagationPolicy=Foreground", DELETE_OPTIONS),
  ),
  probe(
    "delopts: ?gracePeriodSeconds=abc with a body",
    deleteAndLook("delopts-grace", "?gracePeriodSeconds=abc", DELETE_OPTIONS),
  ),
  probe(
    "delopts: ?dryRun=Some with a body",
    deleteAndLook("delopts-dry-some", "?dryRun=Some", DELETE_OPTIONS),
  ),
  probe(
    "delopts: dryRun in the body",
    deleteAndLook("delopts-body-dry", "", { ...DELETE_OPTIONS, dryRun: ["All"] }),
  ),
  probe(
    "delopts: an unknown dryRun value in the body",
    deleteAndLook("delopts-body-dry-some", "", { ...DELETE_OPTIONS, dryRun: ["Some"] }),
  ),
  probe(
    "delopts: orphanDependents with a propagationPolicy",
    deleteAndLook("delopts-both", "", {
      ...DELETE_OPTIONS,
      orphanDependents: true,
      propagationPolicy: "Background",
    }),
  ),
  probe(
    "delopts: an unknown propagationPolicy in the body",
    deleteAndLook("delopts-body-policy", "", { ...DELETE_OPTIONS, propagationPolicy: "Sometimes" }),
  ),
  probe(
    "delopts: a body of another kind with ?dryRun=All",
    deleteAndLook("delopts-other-kind", "?dryRun=All", { apiVersion: "v1", kind: "ConfigMap" }),
  ),
  probe(
    "delopts: gracePeriodSeconds a string in the body",
    deleteAndLook("delopts-body-grace", "", { ...DELETE_OPTIONS, gracePeriodSeconds: "abc" }),
  ),
  ...(
    [
      ["meta-v1", { apiVersion: "meta.k8s.io/v1", kind: "DeleteOptions" }],
      ["meta-v1beta1", { apiVersion: "meta.k8s.io/v1beta1", kind: "DeleteOptions" }],
      ["apps-v1", { apiVersion: "apps/v1", kind: "DeleteOptions" }],
      ["no-version", { kind: "DeleteOptions" }],
      ["no-kind", { apiVersion: "v1" }],
      ["kind-only", { kind: "ConfigMap" }],
      ["null", null],
      ["list", []],
      ["version-number", { apiVersion: 1 }],
      ["grace-fraction", { gracePeriodSeconds: 1.5 }],
      ["grace-null", { gracePeriodSeconds: null, dryRun: ["All"] }],
      ["dryrun-string", { dryRun: "All" }],
      ["orphan-string", { orphanDependents: "true" }],
      ["uid-number", { preconditions: { uid: 1 } }],
      ["case", { DryRun: ["All"] }],
      ["unknown-field", { bogus: 1, dryRun: ["All"] }],
    ] as const
  ).map(([label, body]) => probe(`delopts: body ${label}`, deleteAndLook(`delopts-b-${label}`, "", body))),
  probe("delopts: a body that is not JSON", async (w) => {
    await w.raw("admin", "POST", CMS, cm("delopts-text"));
    const r = await w.raw("admin", "DELETE", `${CMS}/delopts-text?dryRun=All`, Buffer.from("not json"));
    return { code: code(r), after: code(await w.raw("admin", "GET", `${CMS}/delopts-text`)) };
  }),
  probe(
    "delopts: dry-run Foreground answers the object with its finalizer",
    deleteAndLook("delopts-dry-fg", "?dryRun=All&propagationPolicy=Foreground", undefined),
  ),
  probe(
    "delopts: dry-run Orphan answers the object with its finalizer",
    deleteAndLook("delopts-dry-orphan", "?dryRun=All&propagationPolicy=Orphan", undefined),
  ),
  probe("delopts: a Foreground delete of a terminating object", async (w) => {
    await w.raw("admin", "POST", CMS, cm("delopts-term", {}, { finalizers: ["example.com/hold"] }));
    await w.raw("admin", "DELETE", `${CMS}/delopts-term`);
    const r = await w.raw("admin", "DELETE", `${CMS}/delopts-term?propagationPolicy=Foreground`);
    const finalizers = get(r.body, "metadata.finalizers");
    await w.raw(
      "admin",
      "PATCH",
      `${CMS}/delopts-term`,
      { metadata: { finalizers: null } },
      "application/merge-patch+json",
    );
    return { code: code(r), finalizers: finalizers ?? null };
  }),
  probe("delopts: deletecollection with an unknown propagationPolicy", async (w) => {
    await w.raw("admin", "POST", CMS, cm("delopts-coll", {}, { labels: { set: "delopts" } }));
    const r = await w.raw("admin", "DELETE", `${CMS}?labelSelector=set%3Ddelopts&propagationPolicy=Bogus`);
    return { status: statusOf(r), after: code(await w.raw("admin", "GET", `${CMS}/delopts-coll`)) };
  }),
  probe("delopts: deletecollection with ?dryRun=All and a body", async (w) => {
    await w.raw("admin", "POST", CMS, cm("delopts-coll-dry", {}, { labels: { set: "delopts-dry" } }));
    const r = await w.raw(
      "admin",
      "DELETE",
      `${CMS}?labelSelector=set%3Ddelopts-dry&dryRun=All`,
      DELETE_OPTIONS,
    );
    return { code: code(r), after: code(await w.raw("admin", "GET", `${CMS}/delopts-coll-dry`)) };
  }),
];

/** Create, update and patch options kube validates before anything else (backlog item 8). */
const writeOptionProbes: Probe[] = [
  probe("opts: force=true on a merge patch", async (w) => {
    await w.raw("admin", "POST", CMS, cm("opts-force"));
    const r = await w.raw(
      "admin",
      "PATCH",
      `${CMS}/opts-force?force=true`,
      { data: { a: "1" } },
      "application/merge-patch+json",
    );
    return { status: statusOf(r), after: fields("data")(await w.raw("admin", "GET", `${CMS}/opts-force`)) };
  }),
  ask(
    "opts: force=false on a merge patch",
    "admin",
    "PATCH",
    `${CMS}/opts-force?force=false`,
    { data: { b: "1" } },
    statusOf,
    "application/merge-patch+json",
  ),
  ask(
    "opts: a fieldManager of 129 characters on create",
    "admin",
    "POST",
    `${CMS}?fieldManager=${"m".repeat(129)}`,
    cm("opts-long"),
    statusOf,
  ),
  ask(
    "opts: a fieldManager of 128 characters on create",
    "admin",
    "POST",
    `${CMS}?fieldManager=${"m".repeat(128)}`,
    cm("opts-128"),
    statusOf,
  ),
  ask(
    "opts: a fieldManager with a control character",
    "admin",
    "POST",
    `${CMS}?fieldManager=a%01b`,
    cm("opts-ctl"),
    statusOf,
  ),
  ask(
    "opts: a fieldManager with a space and unicode",
    "admin",
    "POST",
    `${CMS}?fieldManager=a%20%C3%A9`,
    cm("opts-space"),
    statusOf,
  ),
  ask(
    "opts: a fieldManager of 129 characters on delete",
    "admin",
    "DELETE",
    `${CMS}/opts-128?fieldManager=${"m".repeat(129)}`,
    undefined,
    statusOf,
  ),
  ask(
    "opts: a create without apiVersion",
    "admin",
    "POST",
    CMS,
    { kind: "ConfigMap", metadata: { name: "opts-nov" } },
    statusOf,
  ),
  ask(
    "opts: a create without kind",
    "admin",
    "POST",
    CMS,
    { apiVersion: "v1", metadata: { name: "opts-nok" } },
    statusOf,
  ),
  ask(
    "opts: a custom resource create without kind",
    "admin",
    "POST",
    PROBES,
    { apiVersion: `${GROUP}/v1`, metadata: { name: "opts-crk" } },
    statusOf,
  ),
  ask(
    "opts: a custom resource create without apiVersion",
    "admin",
    "POST",
    PROBES,
    { kind: "Probe", metadata: { name: "opts-crv" } },
    statusOf,
  ),
  ask(
    "opts: a custom resource create with an empty kind",
    "admin",
    "POST",
    PROBES,
    { apiVersion: `${GROUP}/v1`, kind: "", metadata: { name: "opts-cre" } },
    statusOf,
  ),
  ask(
    "opts: a custom resource update without kind",
    "admin",
    "PUT",
    `${PROBES}/p1`,
    { apiVersion: `${GROUP}/v1`, metadata: { name: "p1" }, spec: {} },
    statusOf,
  ),
  ask(
    "opts: a custom resource merge patch removing kind",
    "admin",
    "PATCH",
    `${PROBES}/p1`,
    { kind: null },
    statusOf,
    "application/merge-patch+json",
  ),
  ask(
    "opts: an update without apiVersion and kind",
    "admin",
    "PUT",
    `${CMS}/opts-force`,
    { metadata: { name: "opts-force" }, data: {} },
    statusOf,
  ),
];

/** Unknown fields under metadata, by kind and fieldValidation (backlog item 2). */
/** Code, causes, warnings, and a refusal's message unless it quotes the object (its uid differs per server). */
const strictView = (r: Reply): unknown => ({
  ...(statusOf(r) as object),
  message: r.status >= 400 && !withMessage(r).includes('Invalid value: "{') ? withMessage(r) : undefined,
  warnings: r.warnings,
});
const strictProbes: Probe[] = [
  ...(["Strict", "Warn", "Ignore"] as const).flatMap((mode) => [
    ask(
      `strict: a ConfigMap with metadata.lables, fieldValidation=${mode}`,
      "admin",
      "POST",
      `${CMS}?fieldValidation=${mode}`,
      {
        ...cm(`strict-cm-${mode.toLowerCase()}`),
        metadata: { name: `strict-cm-${mode.toLowerCase()}`, lables: { a: "b" } },
      },
      strictView,
    ),
    ask(
      `strict: a custom resource with metadata.lables, fieldValidation=${mode}`,
      "admin",
      "POST",
      `${PROBES}?fieldValidation=${mode}`,
      pr(`strict-cr-${mode.toLowerCase()}`, {}, { lables: { a: "b" } }),
      strictView,
    ),
  ]),
  ask(
    "strict: a MAPI Machine with metadata.lables and an unknown spec field, Strict",
    "admin",
    "POST",
    `/apis/machine.openshift.io/v1beta1/namespaces/${NS}/machines?fieldValidation=Strict`,
    {
      apiVersion: "machine.openshift.io/v1beta1",
      kind: "Machine",
      metadata: { name: "strict-m", lables: { a: "b" }, annotations: { x: "y" } },
      spec: { bogus: 1 },
    },
    strictView,
  ),
  ask(
    "strict: a ConfigMap with an unknown field inside an ownerReference, Strict",
    "admin",
    "POST",
    `${CMS}?fieldValidation=Strict`,
    {
      ...cm("strict-owner"),
      metadata: {
        name: "strict-owner",
        ownerReferences: [
          {
            apiVersion: "v1",
            kind: "ConfigMap",
            name: "x",
            uid: "00000000-0000-0000-0000-000000000001",
            bogus: 1,
          },
        ],
      },
    },
    strictView,
  ),
  probe("strict: a merge patch adding metadata.lables, Strict", async (w) => {
    await w.raw("admin", "POST", CMS, cm("strict-patch"));
    const r = await w.raw(
      "admin",
      "PATCH",
      `${CMS}/strict-patch?fieldValidation=Strict`,
      { metadata: { lables: { a: "b" } } },
      "application/merge-patch+json",
    );
    return strictView(r);
  }),
  ask(
    "strict: a merge patch adding metadata.lables, default validation",
    "admin",
    "PATCH",
    `${CMS}/strict-patch`,
    { metadata: { lables: { a: "b" } } },
    strictView,
    "application/merge-patch+json",
  ),
];

/** Identity and immutable fields by patch or update (backlog item 4). */
const IMMUTABLE_CHANGES: { label: string; patch: unknown; type?: string }[] = [
  {
    label: "merge patch of metadata.uid",
    patch: { metadata: { uid: "00000000-0000-0000-0000-000000000009" } },
  },
  { label: "merge patch of metadata.namespace", patch: { metadata: { namespace: "default" } } },
  { label: "merge patch of kind", patch: { kind: "Secret" } },
  { label: "merge patch of apiVersion", patch: { apiVersion: "v2" } },
  { label: "merge patch of kind null", patch: { kind: null } },
  {
    label: "merge patch of metadata.deletionTimestamp",
    patch: { metadata: { deletionTimestamp: "2026-01-01T00:00:00Z" } },
  },
  {
    label: "merge patch of metadata.creationTimestamp",
    patch: { metadata: { creationTimestamp: "2020-01-01T00:00:00Z" } },
  },
  { label: "merge patch of metadata.generation", patch: { metadata: { generation: 7 } } },
  {
    label: "JSON patch replacing metadata.uid",
    patch: [{ op: "replace", path: "/metadata/uid", value: "00000000-0000-0000-0000-000000000009" }],
    type: "application/json-patch+json",
  },
];
const immutableProbes: Probe[] = [
  ask("immutable: setup a ConfigMap", "admin", "POST", CMS, cm("immutable"), code),
  ...IMMUTABLE_CHANGES.map(({ label, patch, type }) =>
    probe(`immutable: ${label}`, async (w) => {
      const before = await w.raw("admin", "GET", `${CMS}/immutable`);
      const r = await w.raw(
        "admin",
        "PATCH",
        `${CMS}/immutable`,
        patch,
        type ?? "application/merge-patch+json",
      );
      const after = await w.raw("admin", "GET", `${CMS}/immutable`);
      const same = (p: string) => get(before.body, p) === get(after.body, p);
      return {
        ...(strictView(r) as object),
        uidKept: same("metadata.uid"),
        creationKept: same("metadata.creationTimestamp"),
        deleting: get(after.body, "metadata.deletionTimestamp") !== undefined,
      };
    }),
  ),
  probe(
    "immutable: a custom resource's uid, kind and deletionGracePeriodSeconds by merge patch",
    async (w) => {
      await w.raw("admin", "POST", PROBES, pr("immutable-cr"));
      const patch = (body: unknown) =>
        w
          .raw("admin", "PATCH", `${PROBES}/immutable-cr`, body, "application/merge-patch+json")
          .then(strictView);
      return {
        uid: await patch({ metadata: { uid: "00000000-0000-0000-0000-000000000009" } }),
        kind: await patch({ kind: "Other" }),
        grace: await patch({ metadata: { deletionGracePeriodSeconds: 30 } }),
        sameUid: await patch({ metadata: { labels: { a: "b" } } }),
      };
    },
  ),
  ask(
    "immutable: a ConfigMap created with both garbage-collector finalizers",
    "admin",
    "POST",
    CMS,
    cm("gc-both", {}, { finalizers: ["orphan", "foregroundDeletion"] }),
    strictView,
  ),
  probe("immutable: PUT with a deletionTimestamp", async (w) => {
    const current = await w.raw("admin", "GET", `${CMS}/immutable`);
    const body = current.body as Record<string, unknown>;
    const r = await w.raw("admin", "PUT", `${CMS}/immutable`, {
      ...body,
      metadata: { ...(body.metadata as object), deletionTimestamp: "2026-01-01T00:00:00Z" },
    });
    const after = await w.raw("admin", "GET", `${CMS}/immutable`);
    return { status: statusOf(r), deleting: get(after.body, "metadata.deletionTimestamp") !== undefined };
  }),
];

/** Answer codes a client branches on (backlog item 14) and server-side apply's own checks (items 3 and 8). */
const CODE_MACHINES = `/apis/machine.openshift.io/v1beta1/namespaces/${NS}/machines`;
const codeMachine = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: "machine.openshift.io/v1beta1",
  kind: "Machine",
  metadata: { name },
  spec: { providerSpec: { value: { a: "b" } } },
  ...extra,
});
const JSON_PATCH = "application/json-patch+json";
const codeProbes: Probe[] = [
  ask("codes: setup a Machine", "admin", "POST", CODE_MACHINES, codeMachine("codes-m"), code),
  ask(
    "codes: a custom resource created with another kind",
    "admin",
    "POST",
    CODE_MACHINES,
    { ...codeMachine("codes-k"), kind: "MachineSet" },
    statusOf,
  ),
  ask(
    "codes: a custom resource whose metadata is a string",
    "admin",
    "POST",
    CODE_MACHINES,
    { ...codeMachine("x"), metadata: "x" },
    statusOf,
  ),
  ask(
    "codes: a custom resource whose name is a number",
    "admin",
    "POST",
    CODE_MACHINES,
    { ...codeMachine("x"), metadata: { name: 5 } },
    statusOf,
  ),
  ask(
    "codes: a ConfigMap whose name is a number",
    "admin",
    "POST",
    CMS,
    { apiVersion: "v1", kind: "ConfigMap", metadata: { name: 5 } },
    statusOf,
  ),
  ask("codes: a body of JSON null", "admin", "POST", CMS, null, statusOf),
  ask(
    "codes: PUT status of a missing custom resource",
    "admin",
    "PUT",
    `${CODE_MACHINES}/nope/status`,
    { ...codeMachine("nope"), metadata: { name: "nope", resourceVersion: "1" } },
    statusOf,
  ),
  ask(
    "codes: a JSON patch with an unknown op",
    "admin",
    "PATCH",
    `${CODE_MACHINES}/codes-m`,
    [{ op: "frob", path: "/spec" }],
    statusOf,
    JSON_PATCH,
  ),
  ask(
    "codes: a JSON patch moving from a missing path",
    "admin",
    "PATCH",
    `${CODE_MACHINES}/codes-m`,
    [{ op: "move", from: "/spec/nope", path: "/spec/x" }],
    statusOf,
    JSON_PATCH,
  ),
  ask(
    "codes: a JSON patch whose path has no leading slash",
    "admin",
    "PATCH",
    `${CODE_MACHINES}/codes-m`,
    [{ op: "add", path: "metadata/labels", value: { a: "b" } }],
    statusOf,
    JSON_PATCH,
  ),
  ask(
    "codes: a JSON patch add without a value",
    "admin",
    "PATCH",
    `${CODE_MACHINES}/codes-m`,
    [{ op: "add", path: "/metadata/labels" }],
    statusOf,
    JSON_PATCH,
  ),
  ask(
    "codes: a JSON patch test that fails",
    "admin",
    "PATCH",
    `${CODE_MACHINES}/codes-m`,
    [{ op: "test", path: "/metadata/name", value: "other" }],
    statusOf,
    JSON_PATCH,
  ),
  ask(
    "codes: a JSON patch that is an object",
    "admin",
    "PATCH",
    `${CODE_MACHINES}/codes-m`,
    { op: "add", path: "/x", value: 1 },
    statusOf,
    JSON_PATCH,
  ),
  ask(
    "apply: a field the schema does not declare",
    "admin",
    "PATCH",
    `${CODE_MACHINES}/codes-apply?fieldManager=probe`,
    codeMachine("codes-apply", { spec: { bogus: 1 } }),
    statusOf,
    APPLY,
  ),
  ask(
    "apply: with metadata.managedFields",
    "admin",
    "PATCH",
    `${CODE_MACHINES}/codes-apply2?fieldManager=probe`,
    {
      ...codeMachine("codes-apply2"),
      metadata: { name: "codes-apply2", managedFields: [{ manager: "x", operation: "Apply" }] },
    },
    statusOf,
    APPLY,
  ),
  ask(
    "apply: without apiVersion",
    "admin",
    "PATCH",
    `${CODE_MACHINES}/codes-apply3?fieldManager=probe`,
    { kind: "Machine", metadata: { name: "codes-apply3" } },
    statusOf,
    APPLY,
  ),
  ask(
    "apply: without kind",
    "admin",
    "PATCH",
    `${CODE_MACHINES}/codes-apply4?fieldManager=probe`,
    { apiVersion: "machine.openshift.io/v1beta1", metadata: { name: "codes-apply4" } },
    statusOf,
    APPLY,
  ),
  ask(
    "apply: of another kind",
    "admin",
    "PATCH",
    `${CODE_MACHINES}/codes-apply5?fieldManager=probe`,
    { ...codeMachine("codes-apply5"), kind: "MachineSet" },
    statusOf,
    APPLY,
  ),
  ask(
    "apply: a ConfigMap without apiVersion",
    "admin",
    "PATCH",
    `${CMS}/codes-apply6?fieldManager=probe`,
    { kind: "ConfigMap", metadata: { name: "codes-apply6" } },
    statusOf,
    APPLY,
  ),
];

/**
 * Metadata and data of the wrong JSON type (decision 125): kube-apiserver refuses them (400 when the body cannot
 * be decoded, 422 when a patch produces them); storing them would leave objects no typed client can read.
 */
const TYPED_MACHINES = `/apis/machine.openshift.io/v1beta1/namespaces/${NS}/machines`;
const typedMachine = (name: string, metadata: Record<string, unknown> = {}) => ({
  apiVersion: "machine.openshift.io/v1beta1",
  kind: "Machine",
  metadata: { name, ...metadata },
  spec: { providerSpec: { value: { a: "b" } } },
});
const typeProbes: Probe[] = [
  ask(
    "types: setup a Machine",
    "admin",
    "POST",
    TYPED_MACHINES,
    typedMachine("types-m", { labels: { keep: "1" } }),
  ),
  ask(
    "types: a Machine whose labels are a list",
    "admin",
    "POST",
    TYPED_MACHINES,
    typedMachine("types-l", { labels: ["a"] }),
    code,
  ),
  ask(
    "types: a Machine whose annotations are a string",
    "admin",
    "POST",
    TYPED_MACHINES,
    typedMachine("types-a", { annotations: "a" }),
    code,
  ),
  ask(
    "types: a Machine with a label value that is a number",
    "admin",
    "POST",
    TYPED_MACHINES,
    typedMachine("types-n", { labels: { a: 1 } }),
    code,
  ),
  probe("types: a merge patch setting labels to a string", async (w) => {
    const r = await w.raw(
      "admin",
      "PATCH",
      `${TYPED_MACHINES}/types-m`,
      { metadata: { labels: "x" } },
      "application/merge-patch+json",
    );
    return {
      code: code(r),
      after: fields("metadata.labels")(await w.raw("admin", "GET", `${TYPED_MACHINES}/types-m`)),
    };
  }),
  probe("types: a JSON patch removing metadata", async (w) => {
    const r = await w.raw(
      "admin",
      "PATCH",
      `${TYPED_MACHINES}/types-m`,
      [{ op: "remove", path: "/metadata" }],
      "application/json-patch+json",
    );
    return {
      code: code(r),
      after: fields("metadata.labels")(await w.raw("admin", "GET", `${TYPED_MACHINES}/types-m`)),
    };
  }),
  probe("types: a ConfigMap whose data value is a number", async (w) => {
    const r = await w.raw("admin", "POST", CMS, cm("types-num", { data: { a: 1 } }));
    return { code: code(r), after: code(await w.raw("admin", "GET", `${CMS}/types-num`)) };
  }),
];

/** Raw JSON text as a body (duplicate keys cannot be written as an object). */
const text = (t: string): Uint8Array => Buffer.from(t);
/** A thousand repeated keys and a thousand unknown fields, as JSON members. */
const thousand = {
  repeated: Array.from({ length: 1000 }, (_, i) => `"k${i}":"1","k${i}":"2"`).join(","),
  unknown: Array.from({ length: 1000 }, (_, i) => `"bogus${i}":1`).join(","),
};
/** How many warnings came and which first and last; how long a refusal's message is and how it starts and ends. */
const manyView = (r: Reply): unknown => {
  const message = isRecord(r.body) && r.body.kind === "Status" ? String(r.body.message) : "";
  return {
    code: code(r),
    warnings: r.warnings.length,
    first: r.warnings[0],
    last: r.warnings[r.warnings.length - 1],
    messageLength: message.length,
    messageStart: message.slice(0, 160),
    messageEnd: message.slice(-80),
  };
};
/** manyView with the number of causes a refusal names, and its first and last. */
const causesView = (r: Reply): unknown => {
  const details = isRecord(r.body) && isRecord(r.body.details) ? r.body.details : {};
  const causes = Array.isArray(details.causes) ? details.causes : [];
  return {
    ...(manyView(r) as object),
    causes: causes.length,
    firstCause: causes[0],
    lastCause: causes.at(-1),
  };
};
/** strictView with a refusal's message, the patched object it quotes left out. */
const strictMessageView = (r: Reply): unknown => ({
  ...(strictView(r) as object),
  full: withMessage(r).replace(/Invalid value: "(?:[^"\\]|\\.)*"/, "Invalid value: …"),
});
const decodeProbes: Probe[] = [
  ask("decode: setup a ConfigMap", "admin", "POST", CMS, cm("decode-cm", { data: { a: "1" } }), code),
  ask("decode: setup a Probe", "admin", "POST", PROBES, pr("decode-p", { replicas: 1 }), code),
  ask("decode: setup a Machine", "admin", "POST", TYPED_MACHINES, typedMachine("decode-m"), code),
  ask(
    "decode: PUT of a ConfigMap without metadata.name",
    "admin",
    "PUT",
    `${CMS}/decode-cm`,
    { apiVersion: "v1", kind: "ConfigMap", metadata: {}, data: { a: "2" } },
    withMessage,
  ),
  ask(
    "decode: PUT of a ConfigMap without metadata",
    "admin",
    "PUT",
    `${CMS}/decode-cm`,
    { apiVersion: "v1", kind: "ConfigMap", data: { a: "2" } },
    withMessage,
  ),
  ask(
    "decode: PUT of a Probe without metadata.name",
    "admin",
    "PUT",
    `${PROBES}/decode-p`,
    { apiVersion: `${GROUP}/v1`, kind: "Probe", metadata: {}, spec: { replicas: 2 } },
    withMessage,
  ),
  ask(
    "decode: PUT of a Machine without metadata.name",
    "admin",
    "PUT",
    `${TYPED_MACHINES}/decode-m`,
    { ...typedMachine("x"), metadata: {} },
    withMessage,
  ),
  ...(["Strict", "Warn", "Ignore"] as const).flatMap((mode) => [
    probe(
      `decode: a Scale PUT with an unknown field, fieldValidation=${mode}`,
      scaleCase(
        EDGE_SETS,
        "edge-ms",
        "PUT",
        scaleBody("edge-ms", { spec: { replicas: 3, bogus: 1 }, extra: 1 }),
        undefined,
        `?fieldValidation=${mode}`,
      ),
    ),
    probe(`decode: a Scale PUT, reply warnings, fieldValidation=${mode}`, async (w) => {
      const r = await w.raw(
        "admin",
        "PUT",
        `${EDGE_SETS}/edge-ms/scale?fieldValidation=${mode}`,
        scaleBody("edge-ms", { spec: { replicas: 3, bogus: 1 }, extra: 1 }),
      );
      return strictView(r);
    }),
    probe(`decode: a Scale merge patch with an unknown field, fieldValidation=${mode}`, async (w) => {
      const r = await w.raw(
        "admin",
        "PATCH",
        `${EDGE_SETS}/edge-ms/scale?fieldValidation=${mode}`,
        { spec: { replicas: 4, bogus: 1 }, extra: 1 },
        MERGE,
      );
      return {
        ...(strictView(r) as object),
        full: withMessage(r).replace(/Invalid value: "(?:[^"\\]|\\.)*"/, "…"),
      };
    }),
    probe(`decode: a Scale JSON patch adding an unknown field, fieldValidation=${mode}`, async (w) => {
      const r = await w.raw(
        "admin",
        "PATCH",
        `${EDGE_SETS}/edge-ms/scale?fieldValidation=${mode}`,
        [{ op: "add", path: "/extra", value: 1 }],
        "application/json-patch+json",
      );
      return {
        ...(strictView(r) as object),
        full: withMessage(r).replace(/Invalid value: "(?:[^"\\]|\\.)*"/, "…"),
      };
    }),
    probe(
      `decode: a Scale PUT of a missing object with an unknown field, fieldValidation=${mode}`,
      async (w) => {
        const r = await w.raw(
          "admin",
          "PUT",
          `${EDGE_SETS}/decode-none/scale?fieldValidation=${mode}`,
          scaleBody("decode-none", { spec: { replicas: 3 }, extra: 1 }),
        );
        return strictView(r);
      },
    ),
    ask(
      `decode: a ConfigMap with a duplicate data key, fieldValidation=${mode}`,
      "admin",
      "POST",
      `${CMS}?fieldValidation=${mode}`,
      text(
        `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"decode-dup-${mode.toLowerCase()}"},"data":{"a":"1","a":"2"}}`,
      ),
      strictView,
    ),
    ask(
      `decode: a Probe with a duplicate spec key, fieldValidation=${mode}`,
      "admin",
      "POST",
      `${PROBES}?fieldValidation=${mode}`,
      text(
        `{"apiVersion":"${GROUP}/v1","kind":"Probe","metadata":{"name":"decode-dup-${mode.toLowerCase()}"},"spec":{"replicas":1,"replicas":2}}`,
      ),
      strictView,
    ),
    ask(
      `decode: a Machine with duplicate metadata, fieldValidation=${mode}`,
      "admin",
      "POST",
      `${TYPED_MACHINES}?fieldValidation=${mode}`,
      text(
        `{"apiVersion":"machine.openshift.io/v1beta1","kind":"Machine","metadata":{"name":"decode-dup-${mode.toLowerCase()}"},"metadata":{"name":"decode-dup2-${mode.toLowerCase()}"},"spec":{}}`,
      ),
      strictView,
    ),
  ]),
  ...(["Strict", "Warn"] as const).flatMap((mode) => [
    ask(
      `decode: a ConfigMap with a duplicate key in an ownerReference, fieldValidation=${mode}`,
      "admin",
      "POST",
      `${CMS}?fieldValidation=${mode}`,
      text(
        `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"decode-dupo-${mode.toLowerCase()}","ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"x","uid":"00000000-0000-0000-0000-000000000001"},{"apiVersion":"v1","kind":"ConfigMap","name":"y","name":"z","uid":"00000000-0000-0000-0000-000000000002"}]}}`,
      ),
      strictView,
    ),
    ask(
      `decode: a ConfigMap with a duplicate and an unknown field, fieldValidation=${mode}`,
      "admin",
      "POST",
      `${CMS}?fieldValidation=${mode}`,
      text(
        `{"apiVersion":"v1","kind":"ConfigMap","bogus":1,"metadata":{"name":"decode-dupu-${mode.toLowerCase()}","lables":{}},"data":{"a":"1","b":"1","a":"2"},"data":{"c":"3"}}`,
      ),
      strictView,
    ),
    ask(
      `decode: a Probe with a duplicate key in a list element and in metadata, fieldValidation=${mode}`,
      "admin",
      "POST",
      `${PROBES}?fieldValidation=${mode}`,
      text(
        `{"apiVersion":"${GROUP}/v1","kind":"Probe","metadata":{"name":"decode-dupl-${mode.toLowerCase()}","labels":{"a":"1","a":"2"}},"spec":{"replicas":1,"bogus":1,"entries":[{"name":"a","name":"b"}]}}`,
      ),
      strictView,
    ),
    ask(
      `decode: a merge patch with a duplicate key, fieldValidation=${mode}`,
      "admin",
      "PATCH",
      `${CMS}/decode-cm?fieldValidation=${mode}`,
      text(`{"data":{"a":"5","a":"6"}}`),
      strictMessageView,
      "application/merge-patch+json",
    ),
    ask(
      `decode: a JSON patch with a duplicate key, fieldValidation=${mode}`,
      "admin",
      "PATCH",
      `${CMS}/decode-cm?fieldValidation=${mode}`,
      text(`[{"op":"add","op":"replace","path":"/data/a","value":"7"}]`),
      strictMessageView,
      "application/json-patch+json",
    ),
    ask(
      `decode: a PUT with a duplicate key, fieldValidation=${mode}`,
      "admin",
      "PUT",
      `${CMS}/decode-cm?fieldValidation=${mode}`,
      text(
        `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"decode-cm","name":"decode-cm"},"data":{"a":"8"}}`,
      ),
      strictView,
    ),
  ]),
  ...(["Warn", "Strict"] as const).flatMap((mode) => [
    ask(
      `decode: 1,000 repeated keys and 1,000 unknown fields, fieldValidation=${mode}`,
      "admin",
      "POST",
      `${CMS}?fieldValidation=${mode}`,
      text(
        `{"apiVersion":"v1","kind":"ConfigMap",${thousand.unknown},"metadata":{"name":"decode-many-${mode.toLowerCase()}"},"data":{${thousand.repeated}}}`,
      ),
      manyView,
    ),
    ask(
      `decode: a Probe with 1,000 repeated labels and 1,000 unknown fields, fieldValidation=${mode}`,
      "admin",
      "POST",
      `${PROBES}?fieldValidation=${mode}`,
      text(
        `{"apiVersion":"${GROUP}/v1","kind":"Probe","metadata":{"name":"decode-many-${mode.toLowerCase()}","labels":{${thousand.repeated}}},"spec":{"replicas":1,${thousand.unknown}}}`,
      ),
      manyView,
    ),
  ]),
  // Validation errors by the thousand: the answer's count of causes and the shape of its message. (At
  // 150,000 kube-apiserver 1.33 answers 504 after its 60-second timeout; test/apiserver/many-causes.test.ts.)
  ask(
    "decode: a Probe with 1,000 numbers in a list of strings",
    "admin",
    "POST",
    PROBES,
    pr("decode-items", { atomic: new Array(1000).fill(1) }),
    causesView,
  ),
  ask(
    "decode: a ConfigMap with 1,000 invalid label keys",
    "admin",
    "POST",
    CMS,
    cm(
      "decode-labels",
      {},
      { labels: Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`-${i}`, "v"])) },
    ),
    // kube walks the labels in Go's map order, which differs run to run: which cause comes first cannot match.
    (r) => {
      const { code, causes, messageLength } = causesView(r) as Record<string, unknown>;
      return { code, causes, messageLength };
    },
  ),
  // YAML bodies: kubectl sends JSON, but any client may send YAML, and the yaml library's composer recurses.
  ask(
    "decode: a YAML ConfigMap",
    "admin",
    "POST",
    CMS,
    text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: decode-yaml\ndata:\n  a: '1'\n"),
    fields("data.a"),
    "application/yaml",
  ),
  // A body of several YAML documents (conformance backlog item 13): which one is created, and whether what
  // follows the first is read at all.
  probe("decode: a YAML body of two ConfigMaps", async (w) => {
    const created = await w.raw(
      "admin",
      "POST",
      CMS,
      text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml-docs-first\ndata:\n  a: '1'\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml-docs-second\n",
      ),
      "application/yaml",
    );
    const first = await w.raw("admin", "GET", `${CMS}/yaml-docs-first`);
    const second = await w.raw("admin", "GET", `${CMS}/yaml-docs-second`);
    return [fields("metadata.name", "data.a")(created), code(first), code(second)];
  }),
  ask(
    "decode: a YAML body whose second document is not YAML",
    "admin",
    "POST",
    CMS,
    text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml-docs-broken\n---\na: [\n  b: {\n: : :\n"),
    fields("metadata.name"),
    "application/yaml",
  ),
  ask(
    "decode: a YAML body that starts with a document marker and an empty document",
    "admin",
    "POST",
    CMS,
    text("---\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml-docs-empty-first\n"),
    code,
    "application/yaml",
  ),
  ask(
    "decode: a YAML body of a ConfigMap, a document end marker and what is not YAML",
    "admin",
    "POST",
    CMS,
    text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml-docs-end-marker\n...\n]]]\n"),
    fields("metadata.name"),
    "application/yaml",
  ),
  ask(
    "decode: a YAML body of a ConfigMap, what is not YAML, then a second document",
    "admin",
    "POST",
    CMS,
    text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml-docs-stray\n]]]\n---\na: 1\n"),
    code,
    "application/yaml",
  ),
  ask(
    "decode: a YAML body of a comment, then a ConfigMap",
    "admin",
    "POST",
    CMS,
    text("# a comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml-docs-comment-first\n"),
    fields("metadata.name"),
    "application/yaml",
  ),
  ask(
    "decode: a YAML apply patch of two documents",
    "admin",
    "PATCH",
    `${CMS}/yaml-docs-apply?fieldManager=yaml-probe`,
    text(
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml-docs-apply\ndata:\n  a: '1'\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml-docs-apply\ndata:\n  a: '2'\n",
    ),
    fields("metadata.name", "data.a"),
    "application/apply-patch+yaml",
  ),
  ask(
    "decode: a YAML ConfigMap nested 20,000 levels",
    "admin",
    "POST",
    CMS,
    text(
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: decode-yaml-deep\ndata:\n  a: ${"[".repeat(20_000)}\n`,
    ),
    code,
    "application/yaml",
  ),
  ask(
    "decode: a YAML apply patch nested 20,000 levels",
    "admin",
    "PATCH",
    `${CMS}/decode-cm?fieldManager=yaml-probe`,
    text(
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: decode-cm\ndata:\n  a: ${"[".repeat(20_000)}\n`,
    ),
    code,
    "application/apply-patch+yaml",
  ),
  // A JSON patch's bounds: its operations, and what its copies add (each copy of a map into itself doubles it).
  ask(
    "decode: a JSON patch of 10,001 operations",
    "admin",
    "PATCH",
    `${CMS}/decode-cm`,
    Array.from({ length: 10_001 }, () => ({ op: "test", path: "/metadata/name", value: "decode-cm" })),
    withMessage,
    "application/json-patch+json",
  ),
  ...[10, 11, 12, 13].map((k) =>
    probe(`decode: a JSON patch whose ${k} copies double the annotations each`, async (w) => {
      const name = `decode-copies-${k}`;
      await w.raw("admin", "POST", CMS, cm(name, {}, { annotations: { a: "x".repeat(1000) } }));
      const ops = Array.from({ length: k }, (_, i) => ({
        op: "copy",
        from: "/metadata/annotations",
        path: `/metadata/annotations/c${i}`,
      }));
      const r = await w.raw("admin", "PATCH", `${CMS}/${name}`, ops, "application/json-patch+json");
      // The refusal of the patched object quotes it whole, keys in Go's order: not compared.
      return withMessage(r).replace(/Invalid value: "(?:[^"\\]|\\.)*"/, "Invalid value: …");
    }),
  ),
  // How a typed decode names the field it could not read (Go's encoding/json: the struct, then the path).
  ...(
    [
      ["its name a number", { name: 5 }, {}],
      ["its annotations a string", { name: "decode-ann", annotations: "x" }, {}],
      ["its labels holding a number", { name: "decode-lab", labels: { a: 1 } }, {}],
      ["a data value a number", { name: "decode-data" }, { data: { a: 1 } }],
    ] as const
  ).map(([what, metadata, extra]) =>
    ask(
      `decode: a ConfigMap with ${what}`,
      "admin",
      "POST",
      CMS,
      { apiVersion: "v1", kind: "ConfigMap", metadata, ...extra },
      withMessage,
    ),
  ),
  probe("decode: a core Event read through events.k8s.io", async (w) => {
    const c = await w.raw("admin", "POST", CORE_EVENTS, coreEvent({ name: "decode-ev" }));
    const r = await w.raw("admin", "GET", `${NEW_EVENTS}/decode-ev`);
    return { create: code(c), read: fields("reason", "note", "regarding.name")(r) };
  }),
  probe("decode: an events.k8s.io Event read through the core group", async (w) => {
    const c = await w.raw("admin", "POST", NEW_EVENTS, newEvent("decode-ev2"));
    const r = await w.raw("admin", "GET", `${CORE_EVENTS}/decode-ev2`);
    return { create: code(c), read: fields("reason", "message", "involvedObject.name")(r) };
  }),
];

// ---- content negotiation: the Accept header (backlog item 13) ----

const PARTIAL = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
const PARTIAL_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
const TABLE = "application/json;as=Table;g=meta.k8s.io;v=v1";

/** What a client reads of a negotiated answer: its kind, the keys it has, its items' and a Status' message. */
const negotiated = (r: Reply): unknown => {
  const body = isRecord(r.body) ? r.body : {};
  const items = Array.isArray(body.items) ? (body.items as Record<string, unknown>[]) : undefined;
  const shape = (o: Record<string, unknown>) =>
    `${String(o.apiVersion)} ${String(o.kind)} ${Object.keys(o).sort().join(",")}`;
  return {
    code: code(r),
    ...(r.status >= 400 ? { message: String(body.message ?? "") } : { shape: shape(body) }),
    ...(items ? { items: [...new Set(items.map(shape))].sort() } : {}),
    ...(r.status < 400 && isRecord(body.metadata) ? { metadata: Object.keys(body.metadata).sort() } : {}),
  };
};

const accepting = (name: string, path: string, accept: string, method = "GET", body?: unknown): Probe => ({
  name,
  run: async (w) => negotiated(await w.raw("admin", method, path, body, undefined, { accept })),
});

const NEGOTIATED_CMS = `${CMS}?labelSelector=negotiated`;
const NEGOTIATED_PROBES = `${PROBES}?labelSelector=negotiated`;

/** The events of a watch of `list` with `accept` while `object` is merge-patched: type, kind and keys of each. */
const watchedAs = async (w: World, accept: string, list: string, object: string, patch: unknown) => {
  const listed = await w.raw("admin", "GET", list);
  const rv = (listed.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
  const events = await w.watch(
    "admin",
    `${list}&watch=1&resourceVersion=${rv}&timeoutSeconds=2`,
    async () => {
      await w.raw("admin", "PATCH", object, patch, "application/merge-patch+json");
    },
    { accept },
  );
  const keys = (o: Record<string, unknown>) => Object.keys(o).sort().join(",");
  return events.map(
    (e) => `${e.type} ${String(e.object.apiVersion)} ${String(e.object.kind)} ${keys(e.object)}`,
  );
};

const negotiationProbes: Probe[] = [
  probe("accept: the objects the negotiation probes read", async (w) => [
    code(
      await w.raw(
        "admin",
        "POST",
        CMS,
        cm("negotiated", { data: { a: "1" } }, { labels: { negotiated: "yes" } }),
      ),
    ),
    code(
      await w.raw(
        "admin",
        "POST",
        PROBES,
        pr("negotiated", { size: "small" }, { labels: { negotiated: "yes" } }),
      ),
    ),
  ]),
  accepting("accept: a ConfigMap as PartialObjectMetadata", `${CMS}/negotiated`, PARTIAL),
  accepting("accept: ConfigMaps as PartialObjectMetadataList", NEGOTIATED_CMS, PARTIAL_LIST),
  accepting("accept: a custom resource as PartialObjectMetadata", `${PROBES}/negotiated`, PARTIAL),
  accepting("accept: custom resources as PartialObjectMetadataList", NEGOTIATED_PROBES, PARTIAL_LIST),
  accepting(
    "accept: PartialObjectMetadata of v1beta1",
    `${CMS}/negotiated`,
    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1",
  ),
  accepting("accept: a list as PartialObjectMetadata (not a list kind)", NEGOTIATED_CMS, PARTIAL),
  accepting("accept: one object as PartialObjectMetadataList", `${CMS}/negotiated`, PARTIAL_LIST),
  accepting(
    "accept: PartialObjectMetadata first, JSON after it",
    `${PROBES}/negotiated`,
    `${PARTIAL},application/json`,
  ),
  accepting(
    "accept: PartialObjectMetadata in protobuf first (client-go's metadata client), JSON after it",
    NEGOTIATED_PROBES,
    `application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,${PARTIAL_LIST}`,
  ),
  accepting("accept: text/html", `${CMS}/negotiated`, "text/html"),
  accepting("accept: text/html on a list", NEGOTIATED_PROBES, "text/html"),
  accepting("accept: text/html, then application/json", `${CMS}/negotiated`, "text/html, application/json"),
  accepting("accept: */*", `${PROBES}/negotiated`, "*/*"),
  accepting("accept: application/*", `${PROBES}/negotiated`, "application/*"),
  accepting(
    "accept: protobuf only, for a custom resource",
    `${PROBES}/negotiated`,
    "application/vnd.kubernetes.protobuf",
  ),
  accepting(
    "accept: a Table of a version meta.k8s.io does not have",
    `${CMS}/negotiated`,
    "application/json;as=Table;g=meta.k8s.io;v=v9",
  ),
  accepting(
    "accept: a Table of another group",
    NEGOTIATED_CMS,
    "application/json;as=Table;g=example.com;v=v1",
  ),
  accepting("accept: an unknown as= kind", `${CMS}/negotiated`, "application/json;as=Deployment;g=apps;v=v1"),
  accepting(
    "accept: a Table of v1beta1",
    NEGOTIATED_PROBES,
    "application/json;as=Table;g=meta.k8s.io;v=v1beta1",
  ),
  accepting("accept: a ConfigMap Table (its columns)", NEGOTIATED_CMS, TABLE),
  probe("accept: the columns of a ConfigMap Table", async (w) => {
    const r = await w.raw("admin", "GET", NEGOTIATED_CMS, undefined, undefined, { accept: TABLE });
    const body = isRecord(r.body) ? r.body : {};
    const columns = Array.isArray(body.columnDefinitions) ? body.columnDefinitions : [];
    const rows = Array.isArray(body.rows) ? body.rows : [];
    return {
      code: code(r),
      columns: columns.map((c: Record<string, unknown>) => `${c.name} ${c.type} ${c.format ?? ""}`.trim()),
      cells: rows.map((row: Record<string, unknown>) =>
        Array.isArray(row.cells) ? row.cells.slice(0, 2) : null,
      ),
    };
  }),
  accepting("accept: a create answered as text/html", CMS, "text/html", "POST", cm("negotiated-html")),
  ask(
    "accept: … and the object it refused to answer for",
    "admin",
    "GET",
    `${CMS}/negotiated-html`,
    undefined,
    code,
  ),
  accepting(
    "accept: a create answered as PartialObjectMetadata",
    PROBES,
    PARTIAL,
    "POST",
    pr("negotiated-partial", {}, { labels: { negotiated: "yes" } }),
  ),
  probe("accept: a merge patch answered as PartialObjectMetadata", async (w) =>
    negotiated(
      await w.raw(
        "admin",
        "PATCH",
        `${CMS}/negotiated`,
        { data: { c: "3" } },
        "application/merge-patch+json",
        {
          accept: PARTIAL,
        },
      ),
    ),
  ),
  probe("accept: a watch of PartialObjectMetadata", (w) =>
    watchedAs(w, PARTIAL, NEGOTIATED_CMS, `${CMS}/negotiated`, { data: { b: "2" } }),
  ),
  probe("accept: a watch of PartialObjectMetadataList", (w) =>
    watchedAs(w, PARTIAL_LIST, NEGOTIATED_PROBES, `${PROBES}/negotiated`, { spec: { size: "large" } }),
  ),
  accepting(
    "accept: application/* on a built-in (its route matches types exactly)",
    `${CMS}/negotiated`,
    "application/*",
  ),
  accepting("accept: custom resources as one PartialObjectMetadata", NEGOTIATED_PROBES, PARTIAL),
  accepting("accept: a custom resource as PartialObjectMetadataList", `${PROBES}/negotiated`, PARTIAL_LIST),
  accepting("accept: v=v1 without as=", `${CMS}/negotiated`, "application/json;v=v1"),
  accepting("accept: quality before order", `${PROBES}/negotiated`, `application/json;q=0.5, ${PARTIAL}`),
  accepting(
    "accept: a create answered as PartialObjectMetadataList (created, then refused)",
    PROBES,
    PARTIAL_LIST,
    "POST",
    pr("negotiated-list", {}, { labels: { negotiated: "yes" } }),
  ),
  ask("accept: … the object it created", "admin", "GET", `${PROBES}/negotiated-list`, undefined, code),
  accepting(
    "accept: a delete answered as PartialObjectMetadata",
    `${PROBES}/negotiated-list`,
    PARTIAL,
    "DELETE",
  ),
  accepting("accept: a missing object as PartialObjectMetadataList (404 first)", `${CMS}/nope`, PARTIAL_LIST),
  ...(
    [
      ["Secrets", "/api/v1/namespaces/default/secrets"],
      ["Namespaces", "/api/v1/namespaces?fieldSelector=metadata.name%3Ddefault"],
      ["Leases", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"],
      ["custom resources", NEGOTIATED_PROBES],
    ] as const
  ).map(([what, path]) =>
    probe(`accept: the columns of a Table of ${what}`, async (w) => {
      const r = await w.raw("admin", "GET", path, undefined, undefined, { accept: TABLE });
      const body = isRecord(r.body) ? r.body : {};
      const columns = Array.isArray(body.columnDefinitions) ? body.columnDefinitions : [];
      return {
        code: code(r),
        columns: columns.map((c: Record<string, unknown>) => `${c.name} ${c.type} ${c.format ?? ""}`.trim()),
      };
    }),
  ),
  probe("accept: a watch as text/html", async (w) =>
    negotiated(
      await w.raw("admin", "GET", `${NEGOTIATED_CMS}&watch=1&timeoutSeconds=1`, undefined, undefined, {
        accept: "text/html",
      }),
    ),
  ),
];

// ---- Events of both groups in one store (backlog item 17, decision 157) ----

const EVENTS_NS = "conformance-events";
const GROUP_CORE = `/api/v1/namespaces/${EVENTS_NS}/events`;
const GROUP_NEW = `/apis/events.k8s.io/v1/namespaces/${EVENTS_NS}/events`;

/** Two Events, one through each group, in a namespace of their own (lists and tables see only them). */
const eventGroupsSetUp = async (w: World): Promise<void> => {
  await w.raw("admin", "POST", "/api/v1/namespaces", {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: EVENTS_NS },
  });
  for (const [path, body] of [
    [
      GROUP_CORE,
      {
        ...coreEvent({ name: "groups-old" }),
        involvedObject: { kind: "ConfigMap", namespace: EVENTS_NS, name: "c", uid: "u1" },
        count: 3,
        firstTimestamp: "2026-12-05T10:00:00Z",
        source: { component: "old-recorder", host: "node-1" },
      },
    ],
    [
      GROUP_NEW,
      {
        ...newEvent("groups-new"),
        regarding: { kind: "Machine", namespace: EVENTS_NS, name: "m", fieldPath: "spec" },
        series: { count: 2, lastObservedTime: "2026-12-05T10:01:00.000000Z" },
      },
    ],
  ] as const)
    if (!(await w.raw("admin", "GET", `${path}/${body.metadata.name}`)).status.toString().startsWith("2"))
      await w.raw("admin", "POST", path, body);
};

const selecting = (label: string, path: string, selector: string): Probe =>
  probe(`event groups: ${label}`, async (w) => {
    await eventGroupsSetUp(w);
    const r = await w.raw("admin", "GET", `${path}?fieldSelector=${encodeURIComponent(selector)}`);
    return r.status === 200 ? names(r) : withMessage(r);
  });

/** The Events table without its ages (Last Seen, First Seen: the servers' clocks differ by the run's time). */
const eventTable = (r: Reply): unknown => {
  const body = isRecord(r.body) ? r.body : {};
  const columns = Array.isArray(body.columnDefinitions) ? body.columnDefinitions : [];
  const rows = Array.isArray(body.rows) ? body.rows : [];
  return {
    code: code(r),
    columns: columns.map((c: Record<string, unknown>) => `${c.name} ${c.type} ${c.format} ${c.priority}`),
    cells: rows.map((row: Record<string, unknown>) =>
      Array.isArray(row.cells) ? row.cells.filter((_, i) => i !== 0 && i !== 7) : null,
    ),
  };
};

const eventGroupProbes: Probe[] = [
  probe("event groups: a core Event read whole through events.k8s.io", async (w) => {
    await eventGroupsSetUp(w);
    const r = await w.raw("admin", "GET", `${GROUP_NEW}/groups-old`);
    const { metadata: _, ...rest } = isRecord(r.body) ? r.body : {};
    return { code: code(r), object: rest };
  }),
  probe("event groups: an events.k8s.io Event read whole through the core group", async (w) => {
    await eventGroupsSetUp(w);
    const r = await w.raw("admin", "GET", `${GROUP_CORE}/groups-new`);
    const { metadata: _, ...rest } = isRecord(r.body) ? r.body : {};
    return { code: code(r), object: rest };
  }),
  probe("event groups: both listed through each group", async (w) => {
    await eventGroupsSetUp(w);
    return [names(await w.raw("admin", "GET", GROUP_CORE)), names(await w.raw("admin", "GET", GROUP_NEW))];
  }),
  selecting("events.k8s.io selects by regarding.name", GROUP_NEW, "regarding.name=m"),
  selecting("events.k8s.io selects by regarding.uid and reason", GROUP_NEW, "regarding.uid=u1,reason=Test"),
  selecting(
    "events.k8s.io selects by reportingController",
    GROUP_NEW,
    "reportingController=example.com/probe",
  ),
  selecting("events.k8s.io refuses involvedObject.name", GROUP_NEW, "involvedObject.name=m"),
  selecting("events.k8s.io refuses source", GROUP_NEW, "source=old-recorder"),
  selecting("core selects by source: the component", GROUP_CORE, "source=old-recorder"),
  selecting("core selects by source: else the reporting component", GROUP_CORE, "source=example.com/probe"),
  selecting("core selects by reportingComponent", GROUP_CORE, "reportingComponent=example.com/probe"),
  selecting("core refuses regarding.name", GROUP_CORE, "regarding.name=m"),
  probe(
    "event groups: a core write and an events.k8s.io delete, watched through events.k8s.io",
    async (w) => {
      await eventGroupsSetUp(w);
      const list = await w.raw("admin", "GET", GROUP_NEW);
      const rv = (list.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
      const events = await w.watch(
        "admin",
        `${GROUP_NEW}?watch=1&resourceVersion=${rv}&fieldSelector=metadata.name%3Dgroups-watched&timeoutSeconds=2`,
        async () => {
          await w.raw("admin", "POST", GROUP_CORE, {
            ...coreEvent({ name: "groups-watched" }),
            involvedObject: { kind: "ConfigMap", namespace: EVENTS_NS, name: "c" },
          });
          await w.raw("admin", "DELETE", `${GROUP_NEW}/groups-watched`);
        },
      );
      return events.map((e) => `${e.type} ${String(e.object.apiVersion)} ${String(e.object.note)}`);
    },
  ),
  probe("event groups: a write through each group drops the other group's managers", async (w) => {
    await eventGroupsSetUp(w);
    const managers = (r: Reply): unknown =>
      r.status >= 400
        ? withMessage(r)
        : ((get(r.body, "metadata.managedFields") as Record<string, unknown>[] | undefined) ?? []).map(
            (e) => `${e.manager} ${e.operation} ${e.apiVersion}`,
          );
    const created = await w.raw("admin", "POST", `${GROUP_NEW}?fieldManager=a`, newEvent("groups-managed"));
    const core = await w.raw(
      "admin",
      "PATCH",
      `${GROUP_CORE}/groups-managed?fieldManager=b`,
      { message: "changed" },
      "application/merge-patch+json",
    );
    const back = await w.raw(
      "admin",
      "PATCH",
      `${GROUP_NEW}/groups-managed?fieldManager=c`,
      { series: { count: 2, lastObservedTime: "2026-12-05T10:09:00.000000Z" } },
      "application/merge-patch+json",
    );
    await w.raw("admin", "DELETE", `${GROUP_CORE}/groups-managed`);
    return [managers(created), managers(core), managers(back)];
  }),
  probe("event groups: a core field name written through events.k8s.io", async (w) => {
    await eventGroupsSetUp(w);
    const body = newEvent("groups-smuggled", {
      regarding: { kind: "ConfigMap", namespace: EVENTS_NS, name: "c" },
      message: "m".repeat(2048),
      bogus: 1,
    });
    const strict = await w.raw("admin", "POST", `${GROUP_NEW}?fieldValidation=Strict`, body);
    const created = await w.raw("admin", "POST", GROUP_NEW, body);
    const read = await w.raw("admin", "GET", `${GROUP_CORE}/groups-smuggled`);
    await w.raw("admin", "DELETE", `${GROUP_CORE}/groups-smuggled`);
    return {
      strict: withMessage(strict),
      created: code(created),
      warnings: created.warnings,
      message: get(read.body, "message") ?? null,
      bogus: get(read.body, "bogus") ?? null,
    };
  }),
  // Backlog item 19: a built-in's unknown fields at any depth, found before its defaults rebuild any of it.
  probe("typed decoding: a Lease's nested unknown fields, warned in the body's order", async (w) => {
    await eventGroupsSetUp(w);
    const r = await w.raw("admin", "POST", `/apis/coordination.k8s.io/v1/namespaces/${EVENTS_NS}/leases`, {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: "typed-nested" },
      spec: { zz: 1, holderIdentity: "a", bogus: { x: 1 } },
      top: 1,
    });
    return { code: code(r), warnings: r.warnings, spec: get(r.body, "spec") ?? null };
  }),
  ask(
    "typed decoding: an Event's nested unknown fields under Strict",
    "admin",
    "POST",
    `${GROUP_CORE}?fieldValidation=Strict`,
    {
      ...coreEvent({ name: "typed-nested" }),
      involvedObject: { kind: "ConfigMap", namespace: EVENTS_NS, name: "c", bogus: 1 },
      source: { component: "x", extra: 2 },
      series: { count: 2, lastObservedTime: "2026-12-05T10:00:00.000000Z", more: 3 },
      related: { kind: "Pod", what: 4 },
    },
    withMessage,
  ),
  ask(
    "typed decoding: a Namespace's nested unknown fields under Strict, in a condition too",
    "admin",
    "POST",
    "/api/v1/namespaces?fieldValidation=Strict",
    {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "typed-nested-ns" },
      spec: { finalizers: [], x: 1 },
      status: { phase: "Active", y: 2, conditions: [{ type: "A", status: "True", z: 3 }] },
    },
    withMessage,
  ),
  probe("event groups: an events.k8s.io update of a core Event's note", async (w) => {
    await eventGroupsSetUp(w);
    return withMessage(
      await w.raw(
        "admin",
        "PATCH",
        `${GROUP_NEW}/groups-old${DRY}`,
        { note: "rewritten" },
        "application/merge-patch+json",
      ),
    );
  }),
  ...[
    ["core", GROUP_CORE],
    ["events.k8s.io", GROUP_NEW],
  ].map(([group, path]) =>
    probe(`event groups: the Events table through ${group}`, async (w) => {
      await eventGroupsSetUp(w);
      return eventTable(await w.raw("admin", "GET", path!, undefined, undefined, { accept: TABLE }));
    }),
  ),
];

export const PROBE_LIST: Probe[] = [
  ...pathProbes,
  ...notFoundProbes,
  ...createProbes,
  ...protobufProbes,
  ...protobufKindProbes,
  ...secretProbes,
  ...namespaceProbes,
  ...updateProbes,
  ...schemaProbes,
  ...fieldValidationProbes,
  ...listProbes,
  ...watchProbes,
  ...deletionProbes,
  ...ssaProbes,
  ...scaleProbes,
  ...rbacProbes,
  ...escalationProbes,
  ...reviewProbes,
  ...managedFieldsProbes,
  ...impersonationProbes,
  ...gcProbes,
  ...gcCoordinateProbes,
  ...watchDetailProbes,
  ...matchConditionProbes,
  ...builtinProbes,
  ...queryParameterProbes,
  ...scaleAndVersionProbes,
  ...deleteOptionProbes,
  ...writeOptionProbes,
  ...strictProbes,
  ...immutableProbes,
  ...codeProbes,
  ...typeProbes,
  ...decodeProbes,
  ...eventGroupProbes,
  ...negotiationProbes,
  // Last: at 9,997 levels the real server stores a Machine it cannot read back, and every later list of
  // Machines there would fail.
  ...builtin2Probes,
  ...deepProbes,
];
