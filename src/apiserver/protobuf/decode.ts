/**
 * Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`) to the JSON objects the rest
 * of the server handles: the envelope (the `k8s\0` magic, then a runtime.Unknown whose typeMeta names the
 * kind and whose raw bytes are the object's message) and the messages of schema.ts and generated.ts, read with
 * @bufbuild/protobuf's wire reader. The JSON is what the real server would show for the same object: Go's
 * omitempty zero values dropped, bytes in base64, times as RFC 3339 seconds. No HTTP here; wire.ts decides
 * when a body is protobuf and which kinds may be.
 */
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import { GENERATED } from "./generated.js";
import { type FieldSpec, type FieldType, MESSAGES, type MessageSchema, TOP_LEVEL } from "./schema.js";

/** Every message the decoder knows: the hand-written tables and those generated from Kubernetes' sources. */
const ALL_MESSAGES: Readonly<Record<string, MessageSchema>> = { ...GENERATED.messages, ...MESSAGES };
const ALL_TOP_LEVEL: Readonly<Record<string, string>> = { ...GENERATED.topLevel, ...TOP_LEVEL };

/** The four bytes every Kubernetes protobuf body starts with. */
export const PROTOBUF_MAGIC = Uint8Array.of(0x6b, 0x38, 0x73, 0x00);

export class ProtobufDecodeError extends Error {}

/** The envelope: which kind the raw bytes hold. */
export interface Envelope {
  readonly apiVersion: string;
  readonly kind: string;
  readonly raw: Uint8Array;
  readonly contentEncoding: string;
}

export const decodeEnvelope = (body: Uint8Array): Envelope => {
  if (body.length < PROTOBUF_MAGIC.length || PROTOBUF_MAGIC.some((b, i) => body[i] !== b)) {
    throw new ProtobufDecodeError(
      "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]",
    );
  }
  const unknown = decodeMessage("Unknown", body.subarray(PROTOBUF_MAGIC.length));
  const typeMeta = (unknown.typeMeta ?? {}) as { apiVersion?: string; kind?: string };
  return {
    apiVersion: typeMeta.apiVersion ?? "",
    kind: typeMeta.kind ?? "",
    raw: rawBytes(unknown.raw),
    contentEncoding: typeof unknown.contentEncoding === "string" ? unknown.contentEncoding : "",
  };
};

/** The message a top-level kind is decoded as, or undefined when the server does not decode it. */
const messageFor = (apiVersion: string, kind: string): string | undefined =>
  ALL_TOP_LEVEL[`${apiVersion}/${kind}`];

/** A whole body: envelope and object, with apiVersion and kind from the envelope as the real server sets them. */
export const decodeObject = (body: Uint8Array): Record<string, unknown> => {
  const envelope = decodeEnvelope(body);
  if (envelope.contentEncoding !== "") {
    throw new ProtobufDecodeError(`unsupported content encoding ${JSON.stringify(envelope.contentEncoding)}`);
  }
  const message = messageFor(envelope.apiVersion, envelope.kind);
  if (message === undefined) {
    throw new ProtobufDecodeError(
      `no kind ${JSON.stringify(envelope.kind)} is registered for version ${JSON.stringify(envelope.apiVersion)}`,
    );
  }
  return { apiVersion: envelope.apiVersion, kind: envelope.kind, ...decodeMessage(message, envelope.raw) };
};

// The raw bytes of an Unknown were decoded as base64 text for JSON; the envelope wants them back.
const rawBytes = (v: unknown): Uint8Array =>
  typeof v === "string" ? Buffer.from(v, "base64") : new Uint8Array();

const MAX_DEPTH = 32;

const decodeMessage = (name: string, bytes: Uint8Array, depth = 0): Record<string, unknown> => {
  if (depth > MAX_DEPTH) throw new ProtobufDecodeError("message nested too deeply");
  const schema: Readonly<Record<number, FieldSpec>> | undefined = ALL_MESSAGES[name];
  if (!schema) throw new ProtobufDecodeError(`no message ${name}`);
  const reader = new BinaryReader(bytes);
  const out: Record<string, unknown> = {};
  try {
    while (reader.pos < reader.len) {
      const [fieldNo, wireType] = reader.tag();
      const spec = schema[fieldNo];
      if (spec === undefined) {
        reader.skip(wireType, fieldNo);
        continue;
      }
      const value = readValue(reader, spec.type, spec.name, wireType, depth);
      // Maps and repeated fields grow in place: a body may hold many entries.
      if (spec.inline) {
        // An embedded Go struct (`json:",inline"`): its fields are this object's own in JSON.
        Object.assign(out, value as Record<string, unknown>);
      } else if (spec.type.kind === "map" || spec.type.kind === "messageMap") {
        const [k, v] = value as [string, unknown];
        if (!isMap(out[spec.name])) out[spec.name] = {};
        (out[spec.name] as Record<string, unknown>)[k] = v;
      } else if (spec.repeated) {
        if (!Array.isArray(out[spec.name])) out[spec.name] = [];
        (out[spec.name] as unknown[]).push(value);
      } else {
        out[spec.name] = value;
      }
    }
  } catch (e) {
    if (e instanceof ProtobufDecodeError) throw e;
    throw new ProtobufDecodeError(`unable to decode ${name}: ${(e as Error).message}`);
  }
  for (const spec of Object.values(schema)) {
    if (!spec.keepZero && !spec.repeated && spec.name in out && isZero(out[spec.name])) delete out[spec.name];
  }
  return out;
};

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;

const isZero = (v: unknown): boolean => v === "" || v === 0 || v === false || v === undefined || v === null;

const readValue = (
  reader: BinaryReader,
  t: FieldType,
  name: string,
  wireType: WireType,
  depth: number,
): unknown => {
  const expect = (expected: WireType): void => {
    if (wireType !== expected)
      throw new ProtobufDecodeError(`field ${name}: wire type ${wireType}, expected ${expected}`);
  };
  switch (t.kind) {
    case "string":
      expect(WireType.LengthDelimited);
      return reader.string();
    case "bytes":
      expect(WireType.LengthDelimited);
      return Buffer.from(reader.bytes()).toString("base64");
    case "json": {
      expect(WireType.LengthDelimited);
      const text = Buffer.from(reader.bytes()).toString("utf8");
      try {
        return JSON.parse(text);
      } catch {
        throw new ProtobufDecodeError(`field ${name}: not JSON`);
      }
    }
    case "bool":
      expect(WireType.Varint);
      return reader.bool();
    case "int32":
      expect(WireType.Varint);
      return reader.int32();
    case "int64":
      expect(WireType.Varint);
      return Number(reader.int64());
    case "double":
      expect(WireType.Bit64);
      return reader.double();
    case "time":
      expect(WireType.LengthDelimited);
      return readTime(reader.bytes());
    case "quantity": {
      // api/resource Quantity: `string string = 1`.
      expect(WireType.LengthDelimited);
      const inner = new BinaryReader(reader.bytes());
      let text = "";
      while (inner.pos < inner.len) {
        const [no, wt] = inner.tag();
        if (no === 1 && wt === WireType.LengthDelimited) text = inner.string();
        else inner.skip(wt, no);
      }
      return text;
    }
    case "message": {
      expect(WireType.LengthDelimited);
      const inner = decodeMessage(t.message, reader.bytes(), depth + 1);
      // FieldsV1 is its raw JSON in the JSON form.
      return t.message === "FieldsV1" ? (inner.Raw ?? {}) : inner;
    }
    case "intOrString": {
      expect(WireType.LengthDelimited);
      const inner = new BinaryReader(reader.bytes());
      let type = 0;
      let intVal = 0;
      let strVal = "";
      while (inner.pos < inner.len) {
        const [no, wt] = inner.tag();
        if (no === 1 && wt === WireType.Varint) type = Number(inner.int64());
        else if (no === 2 && wt === WireType.Varint) intVal = inner.int32();
        else if (no === 3 && wt === WireType.LengthDelimited) strVal = inner.string();
        else inner.skip(wt, no);
      }
      return type === 1 ? strVal : intVal;
    }
    case "map":
    case "messageMap": {
      expect(WireType.LengthDelimited);
      const entry = new BinaryReader(reader.bytes());
      let key = "";
      let value: unknown = t.kind === "map" ? "" : {};
      while (entry.pos < entry.len) {
        const [no, wt] = entry.tag();
        if (no === 1 && wt === WireType.LengthDelimited) key = entry.string();
        else if (no === 2 && t.kind === "messageMap") value = readValue(entry, t.value, name, wt, depth + 1);
        else if (no === 2 && wt === WireType.LengthDelimited)
          value = t.value === "string" ? entry.string() : Buffer.from(entry.bytes()).toString("base64");
        else entry.skip(wt, no);
      }
      return [key, value];
    }
  }
};

/** meta/v1 Time: the real server keeps whole seconds only (its Unmarshal drops nanos); empty is the zero time. */
const readTime = (bytes: Uint8Array): string | null => {
  if (bytes.length === 0) return null;
  const reader = new BinaryReader(bytes);
  let seconds = 0;
  while (reader.pos < reader.len) {
    const [no, wt] = reader.tag();
    if (no === 1 && wt === WireType.Varint) seconds = Number(reader.int64());
    else reader.skip(wt, no);
  }
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
};
