/**
 * The wire format of the server's answers and request bodies: JSON responses with kube's headers (Warning
 * headers quoted and latin1-safe, Status bodies for errors), bodies read with a size limit and decoded from
 * JSON, YAML or (built-ins kubectl's generators send) protobuf, patch types from their media types, Table negotiation, and the serialized form of stored
 * objects a watch event already made. No routing and no object semantics.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { KUBE_MAX_DEPTH, openingPast } from "../json-depth.js";
import { jsonText } from "../json-text.js";
import type { KubeObject } from "../kube/object.js";
import { DEFAULT_YAML_BOUNDS, parseYaml as parseBoundedYaml, type YamlBounds } from "../yaml.js";
import { decodeObject, ProtobufDecodeError } from "./protobuf/decode.js";
import type { PatchType } from "./rest/index.js";
import { ApiError, badRequest, unsupportedMediaType } from "./status.js";
import type { IncludeObject } from "./table.js";
import type { ResourceInfo } from "./types.js";

export const notFoundPath = (): ApiError =>
  new ApiError(404, "NotFound", "the server could not find the requested resource");

/**
 * Warning header values: quoted, escaped, and latin1-safe (Node refuses header chars above U+00FF). Only texts
 * recordedWarnings kept come here: none holds a control character (a newline included).
 */
const warningHeader = (text: string): string =>
  `299 - "${Buffer.from(text.replace(/\\/g, "\\\\").replace(/"/g, '\\"'), "utf8").toString("latin1")}"`;

/** Runes over which the warnings of one answer are cut, and the runes each is cut to then (kube's recorder). */
const WARNING_RUNES_TOTAL = 4096;
const WARNING_RUNES_EACH = 256;

/** Unicode code points of a string (what Go counts as runes). */
const runeCount = (text: string): number => {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
};

const cutToRunes = (text: string, runes: number): string =>
  runeCount(text) <= runes ? text : [...text].slice(0, runes).join("");

/** A control character (C0, DEL, C1: Go's unicode.IsControl): kube cannot write such a text as a header. */
const CONTROL = /\p{Cc}/u;

/**
 * The warnings of one answer as kube-apiserver's recorder keeps them (k8s.io/apiserver, filters/warning.go),
 * in order: each text once; while they fit in 4,096 runes in all, whole; the first that does not fit cuts
 * every one so far to 256 runes, and from then on each is cut, and none is added once the budget is spent.
 * A text holding a control character is left out (its NewWarningHeader refuses it; a newline too). A body
 * with thousands of unknown or repeated fields, or a chatty webhook, gets headers a client can read.
 */
export const recordedWarnings = (texts: readonly string[]): string[] => {
  const seen = new Set<string>();
  const ordered: string[] = [];
  let out: string[] = [];
  let written = 0;
  let truncating = false;
  for (const text of texts) {
    if (truncating && written >= WARNING_RUNES_TOTAL) break;
    if (text.length === 0 || seen.has(text)) continue;
    seen.add(text);
    ordered.push(text);
    const kept = truncating ? cutToRunes(text, WARNING_RUNES_EACH) : text;
    if (CONTROL.test(kept)) continue;
    const runes = runeCount(kept);
    if (truncating || written + runes <= WARNING_RUNES_TOTAL) {
      written += runes;
      out.push(kept);
      continue;
    }
    truncating = true;
    out = ordered.map((t) => cutToRunes(t, WARNING_RUNES_EACH)).filter((t) => !CONTROL.test(t));
    written = out.reduce((sum, t) => sum + runeCount(t), 0);
  }
  return out;
};

export const statusJson = (e: ApiError): string => JSON.stringify(e.toStatus());

export const send = (
  res: ServerResponse,
  code: number,
  body: string,
  warnings: readonly string[] = [],
  extra: Record<string, string> = {},
): void => {
  if (res.headersSent) {
    res.end();
    return;
  }
  const headers: Record<string, string | string[]> = {
    "Content-Type": "application/json",
    "Cache-Control": "no-cache, private",
    ...extra,
  };
  const recorded = warnings.length > 0 ? recordedWarnings(warnings) : [];
  if (recorded.length > 0) headers.Warning = recorded.map(warningHeader);
  res.writeHead(code, headers);
  res.end(body);
};

export const readBodyBytes = (req: IncomingMessage, limit: number): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        reject(new ApiError(413, "RequestEntityTooLarge", "Request entity too large: limit is " + limit));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });

export const readBody = async (req: IncomingMessage, limit: number): Promise<string> =>
  (await readBodyBytes(req, limit)).toString("utf8");

/** kube's `summarizeData`: a body that starts as an object shown as text, any other as hex, 30 bytes at most. */
const summarize = (body: Buffer): string => {
  if (body.length === 0) return "<empty>";
  const head = body.subarray(0, 30);
  const shown = body[0] === 0x7b ? head.toString("utf8") : head.toString("hex");
  return body.length > 30 ? `${shown} ...` : shown;
};

/**
 * A custom resource's body without `kind`: kube decodes custom resources as unstructured objects, which need it
 * (built-in kinds take theirs from the endpoint), and answers with the body it could not place.
 */
export const missingKind = (kind: string, body: Buffer): ApiError =>
  badRequest(
    `the object provided is unrecognized (must be of type ${kind}): Object 'Kind' is missing in '${body.toString("utf8")}' (${summarize(body)})`,
  );

/** kube's `transformDecodeError` for a body whose kind could not be read (handlers/rest.go). */
const unrecognized = (kind: string, problem: string, body: Buffer): ApiError =>
  badRequest(
    `the object provided is unrecognized (must be of type ${kind}): couldn't get version/kind; ${problem} (${summarize(body)})`,
  );

export const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`);
  }
};

/**
 * A YAML body is read by the bounded reader (src/yaml.ts): the yaml library's composer recurses, and 20,000
 * nested `[` in a 20 KB body ended the local server's process outright (decision 136). 500 levels stays
 * under the composer's reach (near 800); kube's reader goes deeper, but kubectl and client-go send JSON.
 * Like kube's, it reads a body's first document and leaves the rest unread (decision 161).
 */
const YAML_BODY_BOUNDS: YamlBounds = {
  ...DEFAULT_YAML_BOUNDS,
  maxDocuments: 1,
  pastMaxDocuments: "unread",
  maxDepth: 500,
};

const parseYaml = (text: string): unknown => {
  const parsed = parseBoundedYaml(text, YAML_BODY_BOUNDS);
  if (!parsed.ok) throw badRequest(`error decoding YAML: ${parsed.problem.message}`);
  return parsed.values[0] ?? null;
};

/**
 * PATCH bodies: YAML for apply patches, JSON for the others. JSON is YAML too, and an apply body that is JSON
 * (what client-go and the product send) is read as JSON: the YAML parser recurses, and kube applies JSON
 * nested to its decoder's 10,000 levels.
 */
export const decodePatchBody = (type: PatchType, text: string): unknown => {
  if (type !== "apply") return parseJson(text);
  if (/^\s*[{[]/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      // Not JSON after all: YAML in flow style.
    }
  }
  return parseYaml(text);
};

export const PROTOBUF_MEDIA_TYPE = "application/vnd.kubernetes.protobuf";

/**
 * POST/PUT bodies: JSON or YAML as kube accepts, and protobuf for the built-in kinds decoded in protobuf/
 * (those kubectl's generator commands send). Custom resources have no protobuf form: the real server
 * answers 415 and lists only JSON and YAML for them.
 */
export const decodeBody = (
  contentType: string | undefined,
  body: Buffer,
  type: Pick<ResourceInfo, "builtIn" | "kind">,
): unknown => {
  const ct = (contentType ?? "application/json").split(";")[0]!.trim();
  if (ct === "application/json" || ct === "") {
    const text = body.toString("utf8");
    const tooDeep = openingPast(text, KUBE_MAX_DEPTH);
    if (tooDeep >= 0)
      throw unrecognized(
        type.kind,
        `json parse error: invalid character '${text[tooDeep]}' exceeded max depth`,
        body,
      );
    return parseJson(text);
  }
  if (ct === "application/yaml") return parseYaml(body.toString("utf8"));
  if (ct === PROTOBUF_MEDIA_TYPE && type.builtIn) {
    try {
      return decodeObject(body);
    } catch (e) {
      if (e instanceof ProtobufDecodeError) throw badRequest(e.message);
      throw e;
    }
  }
  throw unsupportedMediaType(
    `the body of the request was in an unknown format - accepted media types include: ${
      type.builtIn
        ? `application/json, application/yaml, ${PROTOBUF_MEDIA_TYPE}`
        : "application/json, application/yaml"
    }`,
  );
};

export const patchTypeOf = (contentType: string | undefined): PatchType => {
  const ct = (contentType ?? "").split(";")[0]!.trim();
  switch (ct) {
    case "application/merge-patch+json":
      return "merge";
    case "application/json-patch+json":
      return "json";
    case "application/strategic-merge-patch+json":
      return "strategic";
    case "application/apply-patch+yaml":
      return "apply";
    default:
      throw unsupportedMediaType(
        `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json`,
      );
  }
};

export const includeOf = (q: URLSearchParams): IncludeObject => {
  const v = q.get("includeObject");
  return v === "Object" || v === "None" ? v : "Metadata";
};

/**
 * The JSON a watch event already made of a stored object, so the write's own response (sent right after
 * its event went out) does not serialize the object again. Stored objects are never changed in place —
 * the events' own `json` relies on that too.
 */
export class SerializedObjects {
  private readonly json = new WeakMap<KubeObject, string>();

  of(o: KubeObject): string {
    return this.json.get(o) ?? jsonText(o);
  }

  remember(o: KubeObject, json: string): void {
    this.json.set(o, json);
  }
}
