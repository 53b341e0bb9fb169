/**
 * Server-side printing (`Accept: …;as=Table;g=meta.k8s.io`): the Table kubectl prints for `get`, with
 * Name, the CRD's additionalPrinterColumns (or kube's defaults) and Age rendered as kube's HumanDuration;
 * Events as kube's own Event printer fills them, through either group.
 * Pure functions; `now` is passed in.
 */
import { isRecord, type KubeObject } from "../kube/object.js";
import { eventRow, eventsV1EventToCore } from "./event-versions.js";
import type { MetaVersion } from "./negotiation.js";
import type { PrinterColumn, ResourceInfo } from "./types.js";

/** Kubernetes `duration.HumanDuration`. */
const humanDuration = (ms: number): string => {
  const s = Math.max(0, Math.floor(ms / 1000));
  const m = Math.floor(s / 60);
  const h = Math.floor(s / 3600);
  const d = Math.floor(s / 86400);
  const y = Math.floor(d / 365);
  if (s < 120) return `${s}s`;
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (h < 3) return `${m}m`;
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  if (h < 48) return `${h}h`;
  if (d < 8) return h % 24 === 0 ? `${d}d` : `${d}d${h % 24}h`;
  if (y < 2) return `${d}d`;
  if (y < 8) return d % 365 === 0 ? `${y}y` : `${y}y${d % 365}d`;
  return `${y}y`;
};

/** A small JSONPath subset: `.a.b`, `.a[0]`, `.a[?(@.type=="Ready")].status`. */
export const evalJsonPath = (o: unknown, path: string): unknown => {
  const tokens =
    path
      .replace(/^\{?\.?/, "")
      .replace(/\}$/, "")
      .match(/[^.[\]]+|\[[^\]]*\]/g) ?? [];
  let cur: unknown = o;
  for (const t of tokens) {
    if (cur === undefined || cur === null) return undefined;
    const filter = /^\[\?\(@\.([\w.-]+)\s*==\s*["']([^"']*)["']\)\]$/.exec(t);
    if (filter) {
      cur = Array.isArray(cur)
        ? cur.find((i) => String(evalJsonPath(i, filter[1]!)) === filter[2])
        : undefined;
    } else if (/^\[\d+\]$/.test(t)) {
      cur = Array.isArray(cur) ? cur[Number(t.slice(1, -1))] : undefined;
    } else if (/^\[\*\]$/.test(t)) {
    } else cur = isRecord(cur) ? cur[t.replace(/^\['?|'?\]$/g, "").replace(/\\(.)/g, "$1")] : undefined;
  }
  return cur;
};

const AGE: PrinterColumn = { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" };
/** A built-in's Age: kube's printers declare it a string, already rendered as a duration. */
const BUILTIN_AGE: PrinterColumn = { name: "Age", type: "string", jsonPath: ".metadata.creationTimestamp" };
/** A column whose cell is computed, not read at a path (ConfigMap and Secret's Data: how many keys). */
const KEYS_OF_DATA = "#keys(.data,.binaryData)";

export const columnsFor = (res: ResourceInfo): PrinterColumn[] => {
  if (res.printerColumns.length > 0) return [...res.printerColumns];
  if (res.group === "" && res.plural === "namespaces")
    return [{ name: "Status", type: "string", jsonPath: ".status.phase" }, BUILTIN_AGE];
  // kube's printers for the built-ins `kubectl get` shows most here.
  if (res.group === "" && res.plural === "configmaps")
    return [{ name: "Data", type: "string", jsonPath: KEYS_OF_DATA }, BUILTIN_AGE];
  if (res.group === "" && res.plural === "secrets")
    return [
      { name: "Type", type: "string", jsonPath: ".type" },
      { name: "Data", type: "string", jsonPath: KEYS_OF_DATA },
      BUILTIN_AGE,
    ];
  if (res.group === "coordination.k8s.io" && res.plural === "leases")
    return [{ name: "Holder", type: "string", jsonPath: ".spec.holderIdentity" }, BUILTIN_AGE];
  return [res.builtIn ? BUILTIN_AGE : AGE];
};

const keysOf = (v: unknown): number => (isRecord(v) ? Object.keys(v).length : 0);

const cell = (col: PrinterColumn, o: KubeObject, now: number): unknown => {
  if (col.jsonPath === KEYS_OF_DATA) return keysOf(o.data) + keysOf(o.binaryData);
  const v = evalJsonPath(o, col.jsonPath);
  if (v === undefined || v === null) return null;
  if (col.type === "date" || col === BUILTIN_AGE) {
    const t = Date.parse(String(v));
    return Number.isNaN(t) ? String(v) : humanDuration(now - t);
  }
  if (col.type === "integer" || col.type === "number" || col.type === "boolean") return v;
  return typeof v === "string" ? v : JSON.stringify(v);
};

export type IncludeObject = "None" | "Metadata" | "Object";

const rowObject = (o: KubeObject, include: IncludeObject): unknown => {
  if (include === "Object") return o;
  const m = o.metadata ?? {};
  const { managedFields: _f, ...rest } = m;
  return { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: rest };
};

/** How a Table is rendered: besides the objects, what the request asked for and the server's time. */
export interface TableOptions {
  /** The list's (or the one object's) resourceVersion, for the Table's metadata. */
  resourceVersion: string | undefined;
  include: IncludeObject;
  now: number;
  /** False for every watch event after the first: kube sends the column definitions once. */
  withColumns?: boolean;
  /** meta.k8s.io's version the client asked for (v1 when it did not say). */
  version?: MetaVersion;
}

const NAME_COLUMN = {
  name: "Name",
  type: "string",
  format: "name",
  description: "Name must be unique within a namespace.",
};

const definition = (c: PrinterColumn) => ({
  name: c.name,
  type: c.type,
  format: c.format ?? "",
  description: c.description ?? "",
  priority: c.priority ?? 0,
});

/** kube's Event printer's columns, for both groups: the wide ones (kubectl's `-o wide`) at priority 1. */
const EVENT_COLUMNS = [
  { name: "Last Seen", priority: 0 },
  { name: "Type", priority: 0 },
  { name: "Reason", priority: 0 },
  { name: "Object", priority: 0 },
  { name: "Subobject", priority: 1 },
  { name: "Source", priority: 1 },
  { name: "Message", priority: 0 },
  { name: "First Seen", priority: 1 },
  { name: "Count", priority: 1 },
  { ...NAME_COLUMN, priority: 1 },
].map((c) => ({ type: "string", format: "", description: "", ...c }));

const isEvents = (res: ResourceInfo): boolean =>
  res.plural === "events" && (res.group === "" || res.group === "events.k8s.io");

/** An Event's cells, from its core shape whichever group it is read through. */
const eventCells = (res: ResourceInfo, o: KubeObject, now: number): unknown[] => {
  const e = eventRow(res.group === "" ? o : eventsV1EventToCore(o));
  const age = (t: string | undefined): string => {
    const ms = t === undefined ? Number.NaN : Date.parse(t);
    return Number.isNaN(ms) ? "<unknown>" : humanDuration(now - ms);
  };
  return [
    age(e.lastSeen),
    e.type,
    e.reason,
    e.object,
    e.subobject,
    e.source,
    e.message,
    age(e.firstSeen),
    e.count,
    e.name,
  ];
};

export const tableFor = (
  res: ResourceInfo,
  objects: readonly KubeObject[],
  options: TableOptions,
): Record<string, unknown> => {
  const { resourceVersion, include, now, withColumns = true, version = "v1" } = options;
  const events = isEvents(res);
  const cols = events ? [] : columnsFor(res);
  const columnDefinitions = events
    ? EVENT_COLUMNS
    : [{ ...NAME_COLUMN, priority: 0 }, ...cols.map(definition)];
  return {
    kind: "Table",
    apiVersion: `meta.k8s.io/${version}`,
    metadata: resourceVersion ? { resourceVersion } : {},
    columnDefinitions: withColumns ? columnDefinitions : [],
    rows: objects.map((o) => ({
      cells: events ? eventCells(res, o, now) : [o.metadata?.name ?? "", ...cols.map((c) => cell(c, o, now))],
      ...(include === "None" ? {} : { object: rowObject(o, include) }),
    })),
  };
};
