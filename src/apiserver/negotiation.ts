/**
 * The answer's form from the request's `Accept` header, as kube-apiserver 1.33 chooses it (backlog item 13):
 * first go-restful's route check for the built-ins it serves (a media type the route produces, parameters
 * ignored, or a 406 naming what it produces), then the apiserver's negotiation for every resource (clauses by
 * quality; `as`/`g`/`v` ask for a Table, PartialObjectMetadata or PartialObjectMetadataList of meta.k8s.io v1
 * or v1beta1; a custom resource's own form only as JSON or YAML), then the transform of the object (a list
 * asked for as one object, or the reverse: 406 naming Go's type). Pure functions; errors are ApiErrors.
 *
 * This server writes no protobuf: a clause kube would answer in protobuf is passed over for a later one it
 * can answer, and answered in JSON when none follows (a client asking for protobuf alone gets JSON, as
 * before; the differences are listed in test/cluster/conformance.cluster.test.ts).
 */
import type { KubeObject } from "../kube/object.js";
import { ApiError } from "./status.js";
import { memoByString } from "./string-memo.js";
import type { ResourceInfo } from "./types.js";

export type MetaVersion = "v1" | "v1beta1";

/** What an answer is rendered as: the object(s) themselves, or one of meta.k8s.io's views of them. */
export type Rendering =
  | { readonly as: "object" }
  | {
      readonly as: "Table" | "PartialObjectMetadata" | "PartialObjectMetadataList";
      readonly version: MetaVersion;
    };

export const AS_OBJECT: Rendering = Object.freeze({ as: "object" });

const JSON_TYPE = "application/json";
const YAML_TYPE = "application/yaml";
const PROTOBUF_TYPE = "application/vnd.kubernetes.protobuf";
/** kube's serializers, in its order (the 406's list). */
const SERIALIZERS = [JSON_TYPE, YAML_TYPE, PROTOBUF_TYPE] as const;
/** What a built-in's list route produces besides: the watch streams it serves with `?watch=1`. */
const STREAMS = [`${JSON_TYPE};stream=watch`, `${PROTOBUF_TYPE};stream=watch`] as const;

interface Clause {
  readonly type: string;
  readonly subType: string;
  readonly params: ReadonlyMap<string, string>;
  readonly q: number;
}

/** goautoneg's ParseAccept: clauses by quality, then the specific before the wildcard (a stable sort). */
export const parseAccept = (header: string): Clause[] => {
  const clauses: Clause[] = [];
  for (const part of header.split(",")) {
    const [mediaRange = "", ...rawParams] = part.split(";");
    const [type = "", subType] = mediaRange.trim().split("/");
    if (type === "") continue;
    const params = new Map<string, string>();
    let q = 1;
    for (const p of rawParams) {
      const eq = p.indexOf("=");
      const key = (eq < 0 ? p : p.slice(0, eq)).trim();
      const value = eq < 0 ? "" : p.slice(eq + 1).trim();
      if (key === "q") q = Number.parseFloat(value) || 0;
      else if (key !== "") params.set(key, value);
    }
    clauses.push({ type: type.trim(), subType: (subType ?? "*").trim(), params, q });
  }
  const rank = (c: Clause): [number, number, number] => [
    -c.q,
    c.type === "*" ? 1 : 0,
    c.subType === "*" ? 1 : 0,
  ];
  return clauses
    .map((c, i) => ({ c, i, r: rank(c) }))
    .sort((a, b) => a.r[0] - b.r[0] || a.r[1] - b.r[1] || a.r[2] - b.r[2] || a.i - b.i)
    .map(({ c }) => c);
};

/**
 * go-restful's check of a built-in's route (`matchesAccept`): some media type of the header, its parameters
 * cut, is `*` + `/` + `*` or one the route produces exactly. Otherwise its 406, naming what the route produces.
 */
const routeCheck = (accept: string, produces: readonly string[]): void => {
  for (const part of accept.split(",")) {
    const semicolon = part.indexOf(";");
    const mediaType = (semicolon < 0 ? part : part.slice(0, semicolon)).trim();
    if (mediaType === "*/*" || produces.includes(mediaType)) return;
  }
  throw new ApiError(
    406,
    "NotAcceptable",
    `406: Not Acceptable\n\nAvailable representations: ${produces.join(", ")}`,
  );
};

export const notAcceptable = (): ApiError =>
  new ApiError(
    406,
    "NotAcceptable",
    `only the following media types are accepted: ${SERIALIZERS.join(", ")}`,
  );

/** The request's endpoint as negotiation sees it. */
export interface Endpoint {
  /** A built-in: served by go-restful's routes (a custom resource is served by the CRD handler). */
  readonly builtIn: boolean;
  /** The collection's GET (list or watch), whose route produces the watch streams too. */
  readonly collection: boolean;
}

/**
 * `NegotiateOutputMediaType` with the endpoint's restrictions: the first clause (by quality) a serializer
 * matches whose parameters the endpoint allows. An empty header is JSON. A client sends the same header on
 * every request: each endpoint form remembers its answers per header (string-memo.ts; a 406 is not kept).
 */
export const negotiate = (accept: string | undefined, endpoint: Endpoint): Rendering => {
  if (accept === undefined || accept.trim() === "") return AS_OBJECT;
  return NEGOTIATORS[endpoint.builtIn ? 1 : 0][endpoint.collection ? 1 : 0](accept);
};

const negotiateAccept = (accept: string, endpoint: Endpoint): Rendering => {
  if (endpoint.builtIn) routeCheck(accept, endpoint.collection ? [...SERIALIZERS, ...STREAMS] : SERIALIZERS);
  let inProtobuf: Rendering | undefined;
  for (const clause of parseAccept(accept)) {
    for (const serializer of SERIALIZERS) {
      const [type, subType] = serializer.split("/") as [string, string];
      const matches =
        (clause.type === type && (clause.subType === subType || clause.subType === "*")) ||
        (clause.type === "*" && clause.subType === "*");
      if (!matches) continue;
      const rendering = renderingOf(clause.params, serializer, endpoint);
      if (rendering === undefined) continue;
      if (serializer !== PROTOBUF_TYPE) return rendering;
      inProtobuf ??= rendering;
      break; // kube would answer this clause in protobuf: look for a later one this server can write
    }
  }
  if (inProtobuf) return inProtobuf;
  throw notAcceptable();
};

const negotiator = (builtIn: boolean, collection: boolean) =>
  memoByString((accept) => negotiateAccept(accept, { builtIn, collection }));
/** `negotiateAccept` of each endpoint form, by [builtIn][collection]. */
const NEGOTIATORS = [
  [negotiator(false, false), negotiator(false, true)],
  [negotiator(true, false), negotiator(true, true)],
] as const;

/** `acceptMediaTypeOptions` and `AllowsMediaTypeTransform`: what a clause's parameters ask of a serializer. */
const renderingOf = (
  params: ReadonlyMap<string, string>,
  serializer: (typeof SERIALIZERS)[number],
  endpoint: Endpoint,
): Rendering | undefined => {
  const stream = params.get("stream");
  if (stream && (serializer === YAML_TYPE || stream !== "watch")) return undefined;
  const converts = params.has("as") || params.has("g") || params.has("v");
  if (!converts)
    // A custom resource's standard serializers are JSON and YAML only.
    return endpoint.builtIn || serializer !== PROTOBUF_TYPE ? AS_OBJECT : undefined;
  const version = params.get("v");
  if (params.get("g") !== "meta.k8s.io" || (version !== "v1" && version !== "v1beta1")) return undefined;
  switch (params.get("as")) {
    case "Table":
      return serializer === PROTOBUF_TYPE ? undefined : { as: "Table", version };
    case "PartialObjectMetadata":
      return { as: "PartialObjectMetadata", version };
    case "PartialObjectMetadataList":
      return { as: "PartialObjectMetadataList", version };
    default:
      return undefined;
  }
};

/** The Go type kube names in a transform's 406: the internal type of a built-in, unstructured for the rest. */
const goType = (type: ResourceInfo, list: boolean): string => {
  const suffix = list ? "List" : "";
  if (!type.builtIn) return `*unstructured.Unstructured${suffix}`;
  const pkg = type.group === "" || type.group === "events.k8s.io" ? "core" : type.group.split(".")[0];
  return `*${pkg}.${type.kind}${suffix}`;
};

/**
 * The rendering's check of what it transforms (`asPartialObjectMetadata[List]`): a list cannot be answered
 * as one PartialObjectMetadata, nor one object as a list (a 406 naming Go's type; for a custom resource the
 * 500 kube's unstructured accessor gives first). Tables take either.
 */
export const checkTransform = (rendering: Rendering, type: ResourceInfo, list: boolean): void => {
  if (rendering.as === "PartialObjectMetadata" && list)
    throw new ApiError(
      406,
      "NotAcceptable",
      `you requested PartialObjectMetadata, but the requested object is a list (${goType(type, true)})`,
    );
  // A custom resource read as a list fails earlier there, in the unstructured list accessor: a 500.
  if (rendering.as === "PartialObjectMetadataList" && !list && !type.builtIn)
    throw new ApiError(500, "", "content is not a list");
  if (rendering.as === "PartialObjectMetadataList" && !list)
    throw new ApiError(
      406,
      "NotAcceptable",
      `you requested PartialObjectMetadataList, but the requested object is not a list (${goType(type, false)})`,
    );
};

/** An object as meta.k8s.io's PartialObjectMetadata: its whole metadata, nothing else. */
export const partialObjectMetadata = (o: KubeObject, version: MetaVersion): KubeObject => ({
  kind: "PartialObjectMetadata",
  apiVersion: `meta.k8s.io/${version}`,
  metadata: o.metadata ?? {},
});
