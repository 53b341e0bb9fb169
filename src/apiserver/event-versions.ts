/**
 * Core (`v1`) and `events.k8s.io/v1` Events are one resource in kube-apiserver: one store, holding core
 * Events, read and written through either group and converted on the way (k8s.io/kubernetes
 * pkg/apis/events/v1/conversion.go). The two shapes differ only in top-level names, so a conversion is a
 * rename — plus Go's JSON of each type, which drops a field's zero value in one shape (`omitempty`) and writes
 * it in the other. Pure data and functions; storage.ts applies them where an Event is read or stored through
 * `events.k8s.io`.
 */
import { isRecord, type KubeObject } from "../kube/object.js";
import { emptyObjectOf } from "./builtin-shapes.js";
import { resourceKey } from "./types.js";

/** Where Events are stored (core's bucket), and the key events.k8s.io reads them through. */
export const CORE_EVENTS_KEY = resourceKey({ group: "", plural: "events" });
export const EVENTS_V1_KEY = resourceKey({ group: "events.k8s.io", plural: "events" });

/** Core name → events.k8s.io name, for the fields the two shapes name differently. */
const RENAMED: ReadonlyArray<readonly [core: string, events: string]> = [
  ["involvedObject", "regarding"],
  ["message", "note"],
  ["source", "deprecatedSource"],
  ["firstTimestamp", "deprecatedFirstTimestamp"],
  ["lastTimestamp", "deprecatedLastTimestamp"],
  ["count", "deprecatedCount"],
  ["reportingComponent", "reportingController"],
];
const TO_EVENTS = new Map(RENAMED.map(([c, e]) => [c, e]));
const TO_CORE = new Map(RENAMED.map(([c, e]) => [e, c]));

/** The string and integer fields each shape writes with `omitempty`: left out when "" or 0. */
const OMITTED_WHEN_EMPTY = {
  core: new Set(["reason", "message", "count", "type", "action"]),
  events: new Set([
    "reportingController",
    "reportingInstance",
    "action",
    "reason",
    "note",
    "type",
    "deprecatedCount",
  ]),
} as const;

/**
 * `o` in the other shape. A key of `o` that is already a name of the target shape's renamed fields (a core
 * `message` beside an events.k8s.io `note`) is not a field of `o`'s shape: it is left out rather than let
 * overwrite the converted field (the write path drops unknown fields before this, as kube's typed decoding
 * does; the conversion does not rely on it). Keys are copied as data: `__proto__` is a key like any other.
 */
const convert = (
  o: KubeObject,
  apiVersion: string,
  names: ReadonlyMap<string, string>,
  omitted: ReadonlySet<string>,
): KubeObject => {
  const targets = new Set(names.values());
  const fields: Array<[string, unknown]> = [
    ["apiVersion", apiVersion],
    ["kind", "Event"],
  ];
  for (const [k, v] of Object.entries(o)) {
    if (k === "apiVersion" || k === "kind" || targets.has(k)) continue;
    const name = names.get(k) ?? k;
    if (omitted.has(name) && (v === "" || v === 0)) continue;
    fields.push([name, v]);
  }
  const out = Object.fromEntries(fields) as KubeObject;
  // What Go writes of the target type's zero value whatever the source said: its structs, times and
  // non-omitempty strings (builtin-shapes.ts has the type's JSON as `New()` makes it).
  for (const [k, zero] of Object.entries(emptyObjectOf(out)))
    if (k !== "metadata" && !Object.hasOwn(out, k)) out[k] = isRecord(zero) ? {} : zero;
  return out;
};

/** A stored (core) Event as `events.k8s.io/v1` reads it. */
export const coreEventToEventsV1 = (o: KubeObject): KubeObject =>
  convert(o, "events.k8s.io/v1", TO_EVENTS, OMITTED_WHEN_EMPTY.events);

/** An `events.k8s.io/v1` Event as the store keeps it (core). */
export const eventsV1EventToCore = (o: KubeObject): KubeObject =>
  convert(o, "v1", TO_CORE, OMITTED_WHEN_EMPTY.core);

/** Fields a field selector may name on Events, by group (kube's field label conversions). */
export const EVENT_SELECTABLE_FIELDS: Readonly<Record<"" | "events.k8s.io", readonly string[]>> = {
  "": [
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
  ],
  "events.k8s.io": [
    "regarding.kind",
    "regarding.namespace",
    "regarding.name",
    "regarding.uid",
    "regarding.apiVersion",
    "regarding.resourceVersion",
    "regarding.fieldPath",
    "reason",
    "reportingController",
    "type",
  ],
};

const text = (v: unknown): string => (typeof v === "string" ? v : "");

/**
 * A core Event's `source` field label: its source's component, or (an Event from the new API, which has
 * none) its reporting component — kube's ToSelectableFields.
 */
export const eventSourceLabel = (o: KubeObject): string =>
  text(isRecord(o.source) ? o.source.component : undefined) || text(o.reportingComponent);

/** The cells kube's Event printer fills from a core Event, times left as instants (the table ages them). */
export interface EventRow {
  lastSeen: string | undefined;
  type: string;
  reason: string;
  object: string;
  subobject: string;
  source: string;
  message: string;
  firstSeen: string | undefined;
  count: number;
  name: string;
}

const instant = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/**
 * kube's printEvent (pkg/printers/internalversion): first seen is `firstTimestamp`, else `eventTime`; last
 * seen is the series' last observation, else `lastTimestamp`, else first seen; the count is the series',
 * else `count`, else 1 (the new API's singletons carry none); the object is `kind/name` in lower case; the
 * source is the component (or reporting controller) and host (or reporting instance), comma-separated.
 */
export const eventRow = (o: KubeObject): EventRow => {
  const involved = isRecord(o.involvedObject) ? o.involvedObject : {};
  const source = isRecord(o.source) ? o.source : {};
  const series = isRecord(o.series) ? o.series : undefined;
  const firstSeen = instant(o.firstTimestamp) ?? instant(o.eventTime);
  const lastSeen = series ? instant(series.lastObservedTime) : (instant(o.lastTimestamp) ?? firstSeen);
  const count = series ? Number(series.count) || 0 : Number(o.count) || 1;
  const kind = text(involved.kind).toLowerCase();
  const name = text(involved.name);
  const component = text(source.component) || text(o.reportingComponent);
  const host = text(source.host) || text(o.reportingInstance);
  return {
    lastSeen,
    type: text(o.type),
    reason: text(o.reason),
    object: name === "" ? kind : `${kind}/${name}`,
    subobject: text(involved.fieldPath),
    source: host === "" ? component : `${component}, ${host}`,
    message: text(o.message).trim(),
    firstSeen,
    count,
    name: text(o.metadata?.name),
  };
};
