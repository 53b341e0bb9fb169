/**
 * Protobuf request bodies (issue 22): the decoder against bodies kubectl itself sent (captured from
 * kubectl v1.32 pointed at a recording HTTP server) and against bodies built with @bufbuild/protobuf's
 * BinaryWriter for the nested ObjectMeta fields kubectl's generators leave empty; and the media-type rules
 * of wire.ts (protobuf only for the built-ins decoded, 415 for custom resources as on a real server).
 */
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { describe, expect, it } from "vitest";
import { decodeEnvelope, decodeObject, PROTOBUF_MAGIC } from "../../src/apiserver/protobuf/decode.js";
import { ApiError } from "../../src/apiserver/status.js";
import { decodeBody, PROTOBUF_MEDIA_TYPE } from "../../src/apiserver/wire.js";

const hex = (h: string): Buffer => Buffer.from(h, "hex");

/** `kubectl create configmap x -n default --from-literal=a=b --from-literal=c=d` */
const KUBECTL_CONFIGMAP = hex(
  "6b3873000a0f0a0276311209436f6e6669674d6170122a0a180a017812001a0764656661756c7422002a0032003800420012060a016112016212060a01631201641a002200",
);
/** `kubectl create secret generic s -n default --from-literal=k=v --type=Opaque` */
const KUBECTL_SECRET = hex(
  "6b3873000a0c0a0276311206536563726574122a0a180a017312001a0764656661756c7422002a0032003800420012060a016b1201761a064f70617175651a002200",
);
/** `kubectl create secret docker-registry d -n default --docker-server=r --docker-username=u --docker-password=p` */
const KUBECTL_DOCKER_SECRET = hex(
  "6b3873000a0c0a0276311206536563726574128e010a180a016412001a0764656661756c7422002a0032003800420012520a112e646f636b6572636f6e6669676a736f6e123d7b226175746873223a7b2272223a7b22757365726e616d65223a2275222c2270617373776f7264223a2270222c2261757468223a2264547077227d7d7d1a1e6b756265726e657465732e696f2f646f636b6572636f6e6669676a736f6e1a002200",
);
/** `kubectl create namespace n2` */
const KUBECTL_NAMESPACE = hex(
  "6b3873000a0f0a02763112094e616d657370616365121a0a120a026e3212001a0022002a0032003800420012001a020a001a002200",
);

/** A message built field by field; `fn` writes the fields. */
const message = (fn: (w: BinaryWriter) => void): Uint8Array => {
  const w = new BinaryWriter();
  fn(w);
  return w.finish();
};
const mapEntry = (w: BinaryWriter, no: number, key: string, value: string | Uint8Array): void => {
  const entry = message((e) => {
    e.tag(1, WireType.LengthDelimited).string(key);
    if (typeof value === "string") e.tag(2, WireType.LengthDelimited).string(value);
    else e.tag(2, WireType.LengthDelimited).bytes(value);
  });
  w.tag(no, WireType.LengthDelimited).bytes(entry);
};
const envelope = (apiVersion: string, kind: string, raw: Uint8Array, contentEncoding = ""): Buffer => {
  const unknown = message((w) => {
    w.tag(1, WireType.LengthDelimited).bytes(
      message((t) => {
        t.tag(1, WireType.LengthDelimited).string(apiVersion);
        t.tag(2, WireType.LengthDelimited).string(kind);
      }),
    );
    w.tag(2, WireType.LengthDelimited).bytes(raw);
    w.tag(3, WireType.LengthDelimited).string(contentEncoding);
    w.tag(4, WireType.LengthDelimited).string("");
  });
  return Buffer.concat([PROTOBUF_MAGIC, unknown]);
};
const time = (seconds: number, nanos = 0): Uint8Array =>
  message((t) => {
    t.tag(1, WireType.Varint).int64(seconds);
    if (nanos) t.tag(2, WireType.Varint).int32(nanos);
  });

describe("protobuf bodies kubectl's generator commands send", () => {
  it("create configmap: name, namespace and data; empty and zero ObjectMeta fields dropped", () => {
    expect(decodeObject(KUBECTL_CONFIGMAP)).toEqual({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "x", namespace: "default" },
      data: { a: "b", c: "d" },
    });
  });

  it("create secret generic: data as base64 (bytes in JSON) and the type", () => {
    expect(decodeObject(KUBECTL_SECRET)).toEqual({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "s", namespace: "default" },
      data: { k: Buffer.from("v").toString("base64") },
      type: "Opaque",
    });
  });

  it("create secret docker-registry: a dotted key and a JSON value survive byte for byte", () => {
    const o = decodeObject(KUBECTL_DOCKER_SECRET) as { data: Record<string, string>; type: string };
    expect(o.type).toBe("kubernetes.io/dockerconfigjson");
    expect(JSON.parse(Buffer.from(o.data[".dockerconfigjson"]!, "base64").toString())).toEqual({
      auths: { r: { username: "u", password: "p", auth: Buffer.from("u:p").toString("base64") } },
    });
  });

  it("create namespace: an empty spec and status are kept as the real server shows them", () => {
    expect(decodeObject(KUBECTL_NAMESPACE)).toEqual({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "n2" },
      spec: {},
      status: {},
    });
  });
});

describe("ObjectMeta and the kinds' other fields, from the generated.proto field numbers", () => {
  const ownerReference = message((o) => {
    o.tag(1, WireType.LengthDelimited).string("Machine");
    o.tag(3, WireType.LengthDelimited).string("owner");
    o.tag(4, WireType.LengthDelimited).string("1234");
    o.tag(5, WireType.LengthDelimited).string("cluster.x-k8s.io/v1beta2");
    o.tag(6, WireType.Varint).bool(true);
    o.tag(7, WireType.Varint).bool(false);
  });
  const managedField = message((m) => {
    m.tag(1, WireType.LengthDelimited).string("kubectl");
    m.tag(2, WireType.LengthDelimited).string("Update");
    m.tag(3, WireType.LengthDelimited).string("v1");
    m.tag(4, WireType.LengthDelimited).bytes(time(1_700_000_000, 999));
    m.tag(6, WireType.LengthDelimited).string("FieldsV1");
    m.tag(7, WireType.LengthDelimited).bytes(
      message((f) => f.tag(1, WireType.LengthDelimited).bytes(Buffer.from('{"f:data":{"f:a":{}}}'))),
    );
  });
  const metadata = message((m) => {
    m.tag(1, WireType.LengthDelimited).string("full");
    m.tag(2, WireType.LengthDelimited).string("full-");
    m.tag(3, WireType.LengthDelimited).string("ns");
    m.tag(7, WireType.Varint).int64(3);
    m.tag(9, WireType.LengthDelimited).bytes(time(1_700_000_000));
    m.tag(10, WireType.Varint).int64(0);
    mapEntry(m, 11, "app", "web");
    mapEntry(m, 11, "tier", "");
    mapEntry(m, 12, "note", "a b");
    m.tag(13, WireType.LengthDelimited).bytes(ownerReference);
    m.tag(14, WireType.LengthDelimited).string("example.com/a");
    m.tag(14, WireType.LengthDelimited).string("example.com/b");
    m.tag(17, WireType.LengthDelimited).bytes(managedField);
    // A field this server does not know (protobuf skips it).
    m.tag(99, WireType.Varint).uint32(7);
  });

  it("every ObjectMeta field a client can send; zero-valued pointers kept, unknown fields skipped", () => {
    const raw = message((c) => {
      c.tag(1, WireType.LengthDelimited).bytes(metadata);
      mapEntry(c, 3, "blob", Uint8Array.of(0, 255));
      c.tag(4, WireType.Varint).bool(false);
    });
    expect(decodeObject(envelope("v1", "ConfigMap", raw))).toEqual({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "full",
        generateName: "full-",
        namespace: "ns",
        generation: 3,
        deletionTimestamp: "2023-11-14T22:13:20Z",
        deletionGracePeriodSeconds: 0,
        labels: { app: "web", tier: "" },
        annotations: { note: "a b" },
        ownerReferences: [
          {
            apiVersion: "cluster.x-k8s.io/v1beta2",
            kind: "Machine",
            name: "owner",
            uid: "1234",
            controller: true,
            blockOwnerDeletion: false,
          },
        ],
        finalizers: ["example.com/a", "example.com/b"],
        managedFields: [
          {
            manager: "kubectl",
            operation: "Update",
            apiVersion: "v1",
            time: "2023-11-14T22:13:20Z",
            fieldsType: "FieldsV1",
            fieldsV1: { "f:data": { "f:a": {} } },
          },
        ],
      },
      binaryData: { blob: Buffer.from([0, 255]).toString("base64") },
      immutable: false,
    });
  });

  it("a Namespace's spec finalizers and status conditions", () => {
    const raw = message((n) => {
      n.tag(1, WireType.LengthDelimited).bytes(
        message((m) => m.tag(1, WireType.LengthDelimited).string("n")),
      );
      n.tag(2, WireType.LengthDelimited).bytes(
        message((s) => s.tag(1, WireType.LengthDelimited).string("kubernetes")),
      );
      n.tag(3, WireType.LengthDelimited).bytes(
        message((s) => {
          s.tag(1, WireType.LengthDelimited).string("Active");
          s.tag(2, WireType.LengthDelimited).bytes(
            message((c) => {
              c.tag(1, WireType.LengthDelimited).string("NamespaceDeletionContentFailure");
              c.tag(2, WireType.LengthDelimited).string("False");
              c.tag(5, WireType.LengthDelimited).string("");
            }),
          );
        }),
      );
    });
    expect(decodeObject(envelope("v1", "Namespace", raw))).toEqual({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "n" },
      spec: { finalizers: ["kubernetes"] },
      status: { phase: "Active", conditions: [{ type: "NamespaceDeletionContentFailure", status: "False" }] },
    });
  });

  it("Secret stringData and immutable", () => {
    const raw = message((s) => {
      mapEntry(s, 4, "password", "hunter2");
      s.tag(5, WireType.Varint).bool(true);
    });
    expect(decodeObject(envelope("v1", "Secret", raw))).toEqual({
      apiVersion: "v1",
      kind: "Secret",
      stringData: { password: "hunter2" },
      immutable: true,
    });
  });
});

describe("malformed or unsupported protobuf bodies", () => {
  it("a body without the k8s magic is refused", () => {
    expect(() => decodeEnvelope(Buffer.from('{"kind":"ConfigMap"}'))).toThrow(
      /expected prefix \[107 56 115 0\]/,
    );
  });

  it("a kind this server does not decode is refused with its name", () => {
    expect(() => decodeObject(envelope("coordination.k8s.io/v1", "Lease", new Uint8Array()))).toThrow(
      /no kind "Lease" is registered for version "coordination.k8s.io\/v1"/,
    );
  });

  it("a field with the wrong wire type is refused, not misread", () => {
    const raw = message((c) => c.tag(2, WireType.Varint).uint32(1));
    expect(() => decodeObject(envelope("v1", "ConfigMap", raw))).toThrow(
      /field data: wire type 0, expected 2/,
    );
  });

  it("a truncated body is refused", () => {
    expect(() => decodeObject(KUBECTL_CONFIGMAP.subarray(0, KUBECTL_CONFIGMAP.length - 5))).toThrow(
      /unable to decode/,
    );
  });

  it("a gzip content encoding is refused", () => {
    expect(() => decodeObject(envelope("v1", "ConfigMap", new Uint8Array(), "gzip"))).toThrow(
      /unsupported content encoding "gzip"/,
    );
  });
});

describe("decodeBody: which media types a resource accepts", () => {
  const refusal = (f: () => unknown): ApiError => {
    try {
      f();
    } catch (e) {
      if (e instanceof ApiError) return e;
      throw e;
    }
    throw new Error("accepted");
  };

  it("a built-in decodes protobuf", () => {
    expect(
      decodeBody(PROTOBUF_MEDIA_TYPE, KUBECTL_CONFIGMAP, { builtIn: true, kind: "ConfigMap" }),
    ).toMatchObject({
      kind: "ConfigMap",
      data: { a: "b", c: "d" },
    });
  });

  it("a custom resource refuses protobuf with 415, listing JSON and YAML only", () => {
    const e = refusal(() =>
      decodeBody(PROTOBUF_MEDIA_TYPE, KUBECTL_CONFIGMAP, { builtIn: false, kind: "Machine" }),
    );
    expect(e.toStatus()).toMatchObject({
      code: 415,
      reason: "UnsupportedMediaType",
      message:
        "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml",
    });
  });

  it("a malformed protobuf body is a 400", () => {
    const e = refusal(() =>
      decodeBody(PROTOBUF_MEDIA_TYPE, Buffer.from("nope"), { builtIn: true, kind: "ConfigMap" }),
    );
    expect(e.toStatus()).toMatchObject({ code: 400, reason: "BadRequest" });
  });

  it("JSON and YAML are decoded as before", () => {
    expect(
      decodeBody("application/json", Buffer.from('{"a":1}'), { builtIn: false, kind: "Machine" }),
    ).toEqual({ a: 1 });
    expect(
      decodeBody("application/yaml", Buffer.from("a: 1\n"), { builtIn: false, kind: "Machine" }),
    ).toEqual({ a: 1 });
  });
});
