/**
 * The production converter handed to the sync planner: src/sync/conversion's public functions behind the
 * `SyncConverter` interface of snapshot.ts. Kept as its own small module so the planner depends only on the
 * interface (tests inject fakes that fail or warn on demand) and the composition root picks this one.
 * Also `memoisingConverter`, the composition root's wrapper that converts each cached object once instead
 * of on every reconcile (the conversions themselves stay pure; the memo is edge state the root owns).
 */
import { isRecord, type KubeObject } from "../kube/object.js";
import {
  capiMachineSetStatusToMapi,
  capiMachineSetToMapi,
  capiMachineStatusToMapi,
  capiMachineStatusToMapiUnstamped,
  capiMachineToMapi,
  mapiMachineSetStatusToCapi,
  mapiMachineSetToCapi,
  mapiMachineStatusToCapi,
  mapiMachineStatusToCapiUnstamped,
  mapiMachineToCapi,
  stampNow,
} from "./conversion/index.js";
import type { SyncConverter } from "./snapshot.js";

export const conversionConverter: SyncConverter = Object.freeze({
  mapiMachineToCapi,
  mapiMachineSetToCapi,
  capiMachineToMapi,
  capiMachineSetToMapi,
  mapiMachineStatusToCapi,
  capiMachineStatusToMapi,
  mapiMachineStatusToCapiUnstamped,
  capiMachineStatusToMapiUnstamped,
  mapiMachineSetStatusToCapi,
  capiMachineSetStatusToMapi,
});

/**
 * Freezes `value` and every object and array below it that is not frozen yet. A result shares no object with
 * its inputs: the conversions build what they return and copy what they keep (status mirroring's kept
 * conditions, `keptConditions` in conversion/stamp.ts; addresses), so this walks the result alone — not the
 * inputs as well, to tell their objects apart, which cost more than the conversions themselves on every miss
 * of the memo (decision 99). Were some input shape to make a result share an object anyway, that object would
 * be frozen with it: the cache replaces an object on every change and never edits one in place, so that changes
 * no value anyone reads. An explicit stack: a user's providerSpec can nest ~10,000 levels (kube-apiserver's
 * limit), deeper than the JavaScript stack. Arrays by index and objects by `for…in` (the walked values are
 * JSON values and the conversions' plain literals, so `for…in` sees exactly their own keys), without the array
 * `Object.values` allocates per node.
 */
const freezeAll = (value: unknown): void => {
  if (typeof value !== "object" || value === null) return;
  const pending: object[] = [value];
  while (pending.length > 0) {
    const v = pending.pop() as object;
    if (Object.isFrozen(v)) continue;
    Object.freeze(v);
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const child: unknown = v[i];
        if (typeof child === "object" && child !== null) pending.push(child);
      }
      continue;
    }
    const record = v as Record<string, unknown>;
    for (const key in record) {
      const child = record[key];
      if (typeof child === "object" && child !== null) pending.push(child);
    }
  }
};

/** Stands for an absent optional object input in a key (a WeakMap key must be an object). */
const ABSENT: object = Object.freeze({});

interface MemoNode<R> {
  readonly next: WeakMap<object, MemoNode<R>>;
  /** The latest result at this node, with the scalar inputs it was computed for. */
  entry?: { scalars: string; result: R };
}

/**
 * `convert` remembered per identity of its object inputs (a chain of WeakMaps: an object the cache replaced
 * takes its results with it) and the exact value of its scalar inputs. Sound because the informer cache
 * replaces an object on every change instead of editing it, the conversion is pure in exactly the inputs the
 * key names, and the result handed out is deeply frozen, so no caller can change what the next one gets.
 */
const memoise = <R>(
  convert: () => R,
  objects: readonly (object | undefined)[],
  scalars: string,
  root: MemoNode<R>,
): R => {
  let node = root;
  for (const o of objects) {
    const key = o ?? ABSENT;
    let child = node.next.get(key);
    if (!child) {
      child = { next: new WeakMap() };
      node.next.set(key, child);
    }
    node = child;
  }
  if (node.entry?.scalars === scalars) return node.entry.result;
  const result = convert();
  freezeAll(result);
  node.entry = { scalars, result };
  return result;
};

const newRoot = <R>(): MemoNode<R> => ({ next: new WeakMap() });

/**
 * A value as one key of the chain: an object itself, an absent value as `ABSENT`; `undefined` for a scalar
 * where an object belongs (no API server sends one, but a key must not mistake it for another).
 */
const partKey = (v: unknown): object | undefined =>
  v === undefined ? ABSENT : typeof v === "object" && v !== null ? v : undefined;

/** Scalars as one string: each absent or its JSON, joined by NUL (JSON text escapes every control character). */
const scalarsKey = (values: readonly unknown[]): string =>
  values.map((v) => (v === undefined ? "" : `=${JSON.stringify(v)}`)).join("\u0000");

/**
 * What a Machine's spec conversion reads of its source object, and all it is handed (`specViewOf`): the type,
 * the name, the labels, the annotations and the spec (decision 165). Status, finalizers, owners, the
 * resourceVersion — what the events that wake the sync mostly change — are not in it, so the memo below keys a
 * conversion by these parts and an object whose other fields alone changed converts from memory. The informer
 * cache keeps a part the same object while its JSON stays identical (kube/store.ts `shareUnchanged`).
 */
interface SpecView {
  /** Object parts, by identity: spec, labels, annotations (an InfraMachine's: its spec). */
  readonly parts: readonly object[];
  /** Scalars, by value: apiVersion, kind, name. */
  readonly scalars: readonly unknown[];
  /** The source reduced to these parts: what the conversion is given. */
  view(): KubeObject;
}

/**
 * The view of `o` (with its labels and annotations, or, for an InfraMachine, without), or undefined when a part
 * the chain keys by identity is not an object (never from kube).
 */
const specViewOf = (o: KubeObject, withLabels: boolean): SpecView | undefined => {
  const metadata = o.metadata;
  if (metadata !== undefined && !isRecord(metadata)) return undefined;
  const spec = partKey(o.spec);
  const labels = withLabels ? partKey(metadata?.labels) : undefined;
  const annotations = withLabels ? partKey(metadata?.annotations) : undefined;
  if (!spec || (withLabels && (!labels || !annotations))) return undefined;
  const name = metadata?.name;
  return {
    parts: labels && annotations ? [spec, labels, annotations] : [spec],
    scalars: [o.apiVersion, o.kind, metadata === undefined, name],
    view: () => {
      const view: KubeObject = {};
      if (o.apiVersion !== undefined) view.apiVersion = o.apiVersion;
      if (o.kind !== undefined) view.kind = o.kind;
      if (metadata !== undefined) {
        const meta: Record<string, unknown> = {};
        if (name !== undefined) meta.name = name;
        if (withLabels && metadata.labels !== undefined) meta.labels = metadata.labels;
        if (withLabels && metadata.annotations !== undefined) meta.annotations = metadata.annotations;
        view.metadata = meta;
      }
      if (o.spec !== undefined) view.spec = o.spec;
      return view;
    },
  };
};

type Result<K extends keyof SyncConverter> = ReturnType<NonNullable<SyncConverter[K]>>;

/**
 * `inner` with its conversions remembered per input objects, for the composition root to hand the sync
 * controllers. Every reconcile re-plans from the same cached objects (most events are status echoes that
 * leave the converted side alone), so most conversions are repeats. A Machine's spec conversions are
 * remembered per part they read (`specViewOf`), so a new version of the object whose other fields alone changed
 * converts from memory too. Status mirroring of Machines takes
 * `now`, which differs on every reconcile: what is remembered is its unstamped part (no clock, see
 * conversion/stamp.ts), and `now` is stamped onto each call's result, only where a condition's status
 * changed; without the unstamped functions it is passed through. Results are frozen (a stamped result's
 * copied path aside, which is new on every call); the planner never edits a converter result (desired.ts
 * copies what it changes).
 */
export const memoisingConverter = (inner: SyncConverter): SyncConverter => {
  const machinesToCapi = newRoot<Result<"mapiMachineToCapi">>();
  const machineSetsToCapi = newRoot<Result<"mapiMachineSetToCapi">>();
  const machinesToMapi = newRoot<Result<"capiMachineToMapi">>();
  const machinesToCapiByParts = newRoot<Result<"mapiMachineToCapi">>();
  const machinesToMapiByParts = newRoot<Result<"capiMachineToMapi">>();
  const machineSetsToMapi = newRoot<Result<"capiMachineSetToMapi">>();
  const machineStatusesToCapi = newRoot<Result<"mapiMachineStatusToCapiUnstamped">>();
  const machineStatusesToMapi = newRoot<Result<"capiMachineStatusToMapiUnstamped">>();
  const machineSetStatusesToCapi = newRoot<Result<"mapiMachineSetStatusToCapi">>();
  const machineSetStatusesToMapi = newRoot<Result<"capiMachineSetStatusToMapi">>();
  const { mapiMachineStatusToCapiUnstamped: statusToCapi, capiMachineStatusToMapiUnstamped: statusToMapi } =
    inner;
  const memoising: SyncConverter = {
    mapiMachineToCapi: (mapi, infrastructure, opts) => {
      const source = specViewOf(mapi, true);
      if (!source)
        return memoise(
          () => inner.mapiMachineToCapi(mapi, infrastructure, { capiNamespace: opts.capiNamespace }),
          [mapi, infrastructure],
          opts.capiNamespace,
          machinesToCapi,
        );
      return memoise(
        () => inner.mapiMachineToCapi(source.view(), infrastructure, { capiNamespace: opts.capiNamespace }),
        [...source.parts, infrastructure],
        scalarsKey([...source.scalars, opts.capiNamespace]),
        machinesToCapiByParts,
      );
    },
    mapiMachineSetToCapi: (mapi, infrastructure, opts) =>
      memoise(
        () => inner.mapiMachineSetToCapi(mapi, infrastructure, { capiNamespace: opts.capiNamespace }),
        [mapi, infrastructure],
        opts.capiNamespace,
        machineSetsToCapi,
      ),
    capiMachineToMapi: (capi, infraMachine, infrastructure, opts) => {
      // Built on a miss only: a hit allocates nothing but the key.
      const reverse = () => ({
        mapiNamespace: opts.mapiNamespace,
        ...(opts.infraCluster ? { infraCluster: opts.infraCluster } : {}),
      });
      const source = specViewOf(capi, true);
      // (The interface names an InfraMachine; the plain conversion also answers for none, as before.)
      const infra = infraMachine === undefined ? undefined : specViewOf(infraMachine, false);
      if (!source || !infra)
        return memoise(
          () => inner.capiMachineToMapi(capi, infraMachine, infrastructure, reverse()),
          [capi, infraMachine, infrastructure, opts.infraCluster],
          opts.mapiNamespace,
          machinesToMapi,
        );
      return memoise(
        () => inner.capiMachineToMapi(source.view(), infra.view(), infrastructure, reverse()),
        [...source.parts, ...infra.parts, infrastructure, opts.infraCluster],
        scalarsKey([...source.scalars, ...infra.scalars, opts.mapiNamespace]),
        machinesToMapiByParts,
      );
    },
    capiMachineSetToMapi: (capi, infraTemplate, infrastructure, opts) =>
      memoise(
        () =>
          inner.capiMachineSetToMapi(capi, infraTemplate, infrastructure, {
            mapiNamespace: opts.mapiNamespace,
          }),
        [capi, infraTemplate, infrastructure],
        opts.mapiNamespace,
        machineSetsToMapi,
      ),
    mapiMachineStatusToCapi: (mapi, infrastructure, opts) => {
      if (!statusToCapi) return inner.mapiMachineStatusToCapi(mapi, infrastructure, opts);
      const capiMachine = opts.capiMachine;
      const open = memoise(
        () => statusToCapi(mapi, infrastructure, capiMachine ? { capiMachine } : {}),
        [mapi, infrastructure, capiMachine],
        "",
        machineStatusesToCapi,
      );
      return stampNow(open, opts.now);
    },
    capiMachineStatusToMapi: (capi, infraMachine, infrastructure, opts) => {
      if (!statusToMapi) return inner.capiMachineStatusToMapi(capi, infraMachine, infrastructure, opts);
      const mapiMachine = opts.mapiMachine;
      const open = memoise(
        () => statusToMapi(capi, infraMachine, infrastructure, mapiMachine ? { mapiMachine } : {}),
        [capi, infraMachine, infrastructure, mapiMachine],
        "",
        machineStatusesToMapi,
      );
      return stampNow(open, opts.now);
    },
    mapiMachineSetStatusToCapi: (mapi, infrastructure) =>
      memoise(
        () => inner.mapiMachineSetStatusToCapi(mapi, infrastructure),
        [mapi, infrastructure],
        "",
        machineSetStatusesToCapi,
      ),
    capiMachineSetStatusToMapi: (capi) =>
      memoise(() => inner.capiMachineSetStatusToMapi(capi), [capi], "", machineSetStatusesToMapi),
  };
  return Object.freeze(memoising);
};
