/**
 * The dynamic watches of SPEC §4.1: InfraMachines and InfraMachineTemplates may be of any kind a CAPI
 * object references. The first time a reconcile meets a reference to a kind it does not watch yet, the
 * kind is resolved through discovery (the group's preferred version, then the plural), its informer is
 * started in the shared cache and handed to the controller to watch, and the reconcile waits for it to
 * sync before reading. Also the synchronous resolver the snapshot readers use for kinds already watched.
 * State lives per instance (one per controller), never per module.
 */
import type { Cache } from "../../kube/cache.js";
import type { Clock } from "../../kube/clock.js";
import { createResourceResolver } from "../../kube/discovery.js";
import type { Informer } from "../../kube/informer.js";
import type { ResourceType } from "../../kube/kinds.js";
import type { Transport } from "../../kube/transport.js";
import type { InfrastructureRef, InfraTypeResolver } from "../snapshot.js";

export interface InfraTypes {
  /** For snapshot reads: the type of a kind already watched; undefined for one not resolved yet. */
  readonly resolve: InfraTypeResolver;
  /**
   * The type `ref` names, its informer started (in the CAPI namespace), handed to `onInformer` once and
   * synced. Rejects (NotFoundError) when the API server does not serve the kind.
   */
  ensure(ref: InfrastructureRef): Promise<ResourceType>;
  /** The same resolution for any apiVersion + kind (the targets of a plan's writes). */
  typeOf(apiVersion: string, kind: string): Promise<ResourceType>;
}

export interface InfraTypesOptions {
  cache: Cache;
  transport: Transport;
  /** Where InfraMachines and templates live (the CAPI namespace). */
  namespace: string;
  /** Watched from the start (the platform's own kinds), so the common case needs no discovery. */
  initial: readonly ResourceType[];
  onInformer(informer: Informer): void;
  clock: Clock;
  /**
   * How long a reconcile waits for a new kind's informer to sync before it fails (and backs off) instead:
   * an informer that cannot list (RBAC, a CRD being removed) must not hold a worker forever. Default 30 s.
   */
  syncTimeoutMs?: number;
}

const groupKind = (group: string, kind: string): string => `${kind}.${group}`;

/** `informer.synced`, or a rejection after `ms` on `clock`. */
const syncedWithin = async (informer: Informer, clock: Clock, ms: number): Promise<void> => {
  let timer: { cancel(): void } | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = clock.setTimeout(
      () => reject(new Error(`the informer for ${informer.type.kind} has not synced after ${ms} ms`)),
      ms,
    );
  });
  try {
    await Promise.race([informer.synced, timeout]);
  } finally {
    timer?.cancel();
  }
};

export function createInfraTypes(options: InfraTypesOptions): InfraTypes {
  const { cache, transport, namespace, clock } = options;
  const syncTimeoutMs = options.syncTimeoutMs ?? 30_000;
  const resolver = createResourceResolver(transport);
  const watched = new Map<string, ResourceType>();
  const pending = new Map<string, Promise<ResourceType>>();
  const watch = (type: ResourceType): Informer => {
    const informer = cache.informerFor(type, namespace);
    watched.set(groupKind(type.group, type.kind), type);
    options.onInformer(informer);
    return informer;
  };
  for (const type of options.initial) watch(type);

  return {
    resolve: (ref) => watched.get(groupKind(ref.apiGroup, ref.kind)),
    ensure(ref) {
      const key = groupKind(ref.apiGroup, ref.kind);
      const have = watched.get(key);
      if (have)
        return syncedWithin(cache.informerFor(have, namespace), clock, syncTimeoutMs).then(() => have);
      let p = pending.get(key);
      if (!p) {
        p = (async () => {
          const version = await resolver.preferredVersion(ref.apiGroup);
          const type = await resolver.resolve(`${ref.apiGroup}/${version}`, ref.kind);
          await syncedWithin(watch(type), clock, syncTimeoutMs);
          return type;
        })();
        // A failure is not remembered: the CRD may be installed a moment later.
        p.finally(() => pending.delete(key)).catch(() => undefined);
        pending.set(key, p);
      }
      return p;
    },
    typeOf: (apiVersion, kind) => resolver.resolve(apiVersion, kind),
  };
}
