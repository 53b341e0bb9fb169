/**
 * Reading collections: the objects a label and field selector choose (one storage read when the field
 * selector names the object), in etcd's `namespace/name` order, and lists served in pages — `limit` and
 * `continue` as kube serves them, every page of one list from the snapshot its first page took. Watches
 * (watch.ts) select their initial objects here too.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { jsonText } from "../json-text.js";
import type { KubeObject } from "../kube/object.js";
import { listOptionCauses } from "./builtin-validation.js";
import { checkTransform, partialObjectMetadata, type Rendering } from "./negotiation.js";
import { integerParameter } from "./query.js";
import { awaitResourceVersion } from "./resource-version.js";
import { asVersion, gvOf } from "./rest/index.js";
import {
  nameFromFieldSelector,
  type Predicate,
  parseFieldSelector,
  parseLabelSelector,
} from "./selectors.js";
import { ApiError, badRequest, invalid } from "./status.js";
import type { Storage } from "./storage.js";
import { tableFor } from "./table.js";
import type { ResourceInfo } from "./types.js";
import { resourceKey } from "./types.js";
import { includeOf, send } from "./wire.js";

/** A GET of a collection (list or watch): the resource, the version it is read through, the query. */
export interface CollectionRequest {
  req: IncomingMessage;
  res: ServerResponse;
  type: ResourceInfo;
  version: string;
  /** undefined: every namespace. */
  namespace: string | undefined;
  q: URLSearchParams;
  /** The answer's negotiated form. */
  rendering: Rendering;
}

/**
 * A list in its negotiated form: a Table, PartialObjectMetadataList, or the list itself (a list cannot be
 * answered as one PartialObjectMetadata: 406). Items are serialised one by one by the caller of the plain form.
 */
export const listAnswer = (
  type: ResourceInfo,
  version: string,
  metadata: Record<string, unknown>,
  items: readonly KubeObject[],
  rendering: Rendering,
  q: URLSearchParams,
  now: number,
): Record<string, unknown> => {
  checkTransform(rendering, type, true);
  const versioned = items.map((o) => asVersion(type, version, o));
  if (rendering.as === "Table")
    return {
      ...tableFor(type, versioned, {
        resourceVersion: String(metadata.resourceVersion ?? ""),
        include: includeOf(q),
        now,
        version: rendering.version,
      }),
      metadata,
    };
  if (rendering.as === "PartialObjectMetadataList")
    return {
      kind: "PartialObjectMetadataList",
      apiVersion: `meta.k8s.io/${rendering.version}`,
      metadata,
      items: versioned.map((o) => partialObjectMetadata(o, rendering.version)),
    };
  return { kind: type.listKind, apiVersion: gvOf(type, version), metadata, items: versioned };
};

interface ListSnapshot {
  items: KubeObject[];
  rv: string;
  takenAt: number;
  /**
   * With a selector: the last object of the unfiltered range. kube pages over etcd keys and filters each
   * page, so a page is followed by another (maybe empty) while keys remain after its last item, selected or
   * not, and it cannot count what remains.
   */
  lastUnfiltered?: KubeObject;
}
const SNAPSHOT_TTL_MS = 5 * 60_000;
const MAX_SNAPSHOTS = 64;

const encodeContinue = (c: { id: number; offset: number; rv: string }): string =>
  Buffer.from(JSON.stringify({ v: "meta.k8s.io/v1", rv: Number(c.rv), id: c.id, offset: c.offset })).toString(
    "base64url",
  );
const decodeContinue = (token: string): { id: number; offset: number } | undefined => {
  try {
    const v = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as Record<string, unknown>;
    return typeof v.id === "number" && typeof v.offset === "number"
      ? { id: v.id, offset: v.offset }
      : undefined;
  } catch {
    return undefined;
  }
};

/** `namespace/name` order, as etcd returns keys. */
export const byNamespaceName = (a: KubeObject, b: KubeObject): number => {
  const na = a.metadata?.namespace ?? "";
  const nb = b.metadata?.namespace ?? "";
  if (na !== nb) return na < nb ? -1 : 1;
  const ma = a.metadata?.name ?? "";
  const mb = b.metadata?.name ?? "";
  return ma < mb ? -1 : ma > mb ? 1 : 0;
};

/** Selection and paged lists over storage; holds the snapshots that open paginated lists read from. */
export class Collections {
  private readonly snapshots = new Map<number, ListSnapshot>();
  private nextSnapshotId = 1;

  constructor(private readonly deps: { storage: Storage; clock: () => number }) {}

  /** The label and field selectors of a query as one predicate; undefined when it has none. */
  predicates(type: ResourceInfo, q: URLSearchParams): Predicate | undefined {
    const labels = q.get("labelSelector") ?? undefined;
    const fields = q.get("fieldSelector") ?? undefined;
    if (!labels && !fields) return undefined;
    const l = parseLabelSelector(labels);
    if (typeof l === "string") throw badRequest(`unable to parse requirement: ${l}`);
    const f = parseFieldSelector(fields, type.group, type.kind);
    if (typeof f === "string") throw badRequest(f);
    return (o) => l(o) && f(o);
  }

  select(type: ResourceInfo, namespace: string | undefined, q: URLSearchParams): KubeObject[] {
    const match = this.predicates(type, q);
    const name = nameFromFieldSelector(q.get("fieldSelector") ?? undefined);
    const key = resourceKey(type);
    let objects: KubeObject[];
    if (name !== undefined && namespace !== undefined) {
      const o = this.deps.storage.get(key, namespace, name);
      objects = o ? [o] : [];
    } else objects = this.deps.storage.list(key, namespace);
    return match ? objects.filter(match) : objects;
  }

  async list(request: CollectionRequest): Promise<void> {
    const { res, type, version, namespace, q } = request;
    const causes = listOptionCauses(q);
    if (causes.length > 0) throw invalid("meta.k8s.io", "ListOptions", "", causes);
    const notOlderThan = this.notOlderThan(q);
    if (notOlderThan !== undefined) await awaitResourceVersion(this.deps.storage, notOlderThan);
    const page = this.page(type, namespace, q);
    const metadata = {
      resourceVersion: page.rv,
      ...(page.continueToken ? { continue: page.continueToken } : {}),
      ...(page.remaining !== undefined ? { remainingItemCount: page.remaining } : {}),
    };
    if (request.rendering.as !== "object") {
      send(
        res,
        200,
        jsonText(listAnswer(type, version, metadata, page.items, request.rendering, q, this.deps.clock())),
      );
      return;
    }
    const head = JSON.stringify({ kind: type.listKind, apiVersion: gvOf(type, version), metadata });
    // Items are serialised one by one into the list so that no list-sized intermediate object is built.
    const parts = page.items.map((o) => jsonText(asVersion(type, version, o)));
    send(res, 200, `${head.slice(0, -1)},"items":[${parts.join(",")}]}`);
  }

  /**
   * The resourceVersion a list is served "not older than" from kube's watch cache (which waits for one it has
   * not reached): `resourceVersionMatch=NotOlderThan`, or a non-zero resourceVersion without a match, a
   * continue token or a limit (with a limit it is read exactly, from etcd). None for what `page` refuses.
   */
  private notOlderThan(q: URLSearchParams): bigint | undefined {
    const rv = q.get("resourceVersion") ?? "";
    const match = q.get("resourceVersionMatch") ?? "";
    if (!/^\d+$/.test(rv) || BigInt(rv) === 0n) return undefined;
    if (match === "NotOlderThan") return BigInt(rv);
    const limited = (integerParameter(q, "limit") ?? 0) > 0;
    return match === "" && !q.get("continue") && !limited ? BigInt(rv) : undefined;
  }

  /**
   * `limit`/`continue` as kube serves them: every page of one list comes from the snapshot taken by the
   * first page (same resourceVersion), so a client that pages sees one consistent state. Snapshots hold
   * references, not copies, and expire like etcd compaction does (410 Expired for a stale token).
   */
  private page(
    type: ResourceInfo,
    namespace: string | undefined,
    q: URLSearchParams,
  ): { items: KubeObject[]; rv: string; continueToken?: string; remaining?: number } {
    const limit = Math.max(0, integerParameter(q, "limit") ?? 0);
    const token = q.get("continue");
    const rv = q.get("resourceVersion");
    // A continue token carries the revision it lists at.
    if (token && rv && rv !== "0")
      throw badRequest("specifying resource version is not allowed when using continue");
    if (rv && !/^\d+$/.test(rv)) throw badRequest(`invalid resource version "${rv}"`);
    // An exact read of a revision etcd has not reached yet fails in etcd itself (an internal error); a
    // resourceVersion with a limit and no match is an exact read too (kube's legacy rule).
    const exact =
      q.get("resourceVersionMatch") === "Exact" ||
      (!q.get("resourceVersionMatch") && rv !== "0" && !token && limit > 0);
    if (rv && exact && Number(rv) > this.deps.storage.currentRv())
      throw new ApiError(500, "", "etcdserver: mvcc: required revision is a future revision");
    let snapshot: ListSnapshot;
    let offset = 0;
    if (token) {
      const decoded = decodeContinue(token);
      // A token this server never made is a 400, as kube answers one it cannot decode; an expired one 410.
      if (!decoded)
        throw badRequest(
          "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
        );
      const found = this.snapshots.get(decoded.id);
      if (!found || this.deps.clock() - found.takenAt > SNAPSHOT_TTL_MS)
        throw new ApiError(
          410,
          "Expired",
          "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
        );
      snapshot = found;
      offset = decoded.offset;
    } else {
      const selected = this.predicates(type, q) !== undefined;
      const all = selected && limit > 0 ? this.select(type, namespace, new URLSearchParams()) : undefined;
      snapshot = {
        items: this.select(type, namespace, q).sort(byNamespaceName),
        rv: String(this.deps.storage.currentRv()),
        takenAt: this.deps.clock(),
        ...(all && all.length > 0
          ? { lastUnfiltered: all.reduce((a, b) => (byNamespaceName(a, b) >= 0 ? a : b)) }
          : {}),
      };
    }
    const end = offset + limit;
    const lastReturned = snapshot.items[Math.min(end, snapshot.items.length) - 1];
    const keysAfterPage =
      snapshot.lastUnfiltered !== undefined &&
      end >= snapshot.items.length &&
      offset < snapshot.items.length &&
      lastReturned !== undefined &&
      byNamespaceName(lastReturned, snapshot.lastUnfiltered) < 0;
    if (limit === 0 || (end >= snapshot.items.length && !keysAfterPage))
      return { items: offset === 0 ? snapshot.items : snapshot.items.slice(offset), rv: snapshot.rv };
    const id = token ? decodeContinue(token)!.id : this.nextSnapshotId++;
    if (!token) {
      this.snapshots.set(id, snapshot);
      for (const oldest of this.snapshots.keys()) {
        if (this.snapshots.size <= MAX_SNAPSHOTS) break;
        this.snapshots.delete(oldest);
      }
    }
    return {
      items: snapshot.items.slice(offset, end),
      rv: snapshot.rv,
      continueToken: encodeContinue({ id, offset: end, rv: snapshot.rv }),
      ...(snapshot.lastUnfiltered === undefined ? { remaining: snapshot.items.length - end } : {}),
    };
  }
}
