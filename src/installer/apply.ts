/**
 * The installer's imperative shell for writing (SPEC §6): applies rendered providers in phases — CRDs, then
 * wait until each is Established, then everything but Deployments, then Deployments — with server-side apply
 * under the field manager `machine-api-migration-installer`, skipping every object whose live state already
 * carries the rendered hash and every rendered field (so an unchanged input makes zero writes), then prunes.
 * It never takes over an existing object that lacks the provider's label (the bound the renderer cannot
 * check without the cluster): every object of a provider is read before any is written, so a provider that
 * would take one over writes nothing; and each write carries the resourceVersion it was decided on, so the
 * forced apply never lands on an object that changed hands in between.
 * Pruning is the dangerous half and is guarded here: it runs only when the caller allows it (every
 * selected ConfigMap read, parsed and non-empty) and only after every object applied; it deletes only
 * objects carrying a selected provider's label AND managed by our field manager, never
 * CustomResourceDefinitions, Namespaces or admission configurations, which it reports instead, and never the
 * product's own objects or the installer's input ConfigMaps.
 */
import type { Logger } from "pino";
import type { KubeClient } from "../kube/client.js";
import { getOrAbsent } from "../kube/client.js";
import type { Clock } from "../kube/clock.js";
import { sleep } from "../kube/clock.js";
import type { ResourceResolver } from "../kube/discovery.js";
import { ConflictError, NotFoundError } from "../kube/errors.js";
import type { ResourceType } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import { annotationsOf, conditionOf, isDeleting, isRecord, labelsOf, nameOf } from "../kube/object.js";
import {
  describeRef,
  FIELD_MANAGER,
  groupOf,
  HASH_ANNOTATION,
  identityOf,
  isNeverPruned,
  isProductName,
  type ObjectRef,
  PROVIDER_LABEL,
  PRUNE_SEARCH_KINDS,
  refOf,
  TRANSPORT_LABELS,
} from "./model.js";
import type { RenderedObject, RenderedProvider } from "./render.js";
import { PHASES } from "./render.js";

export interface ApplyDeps {
  client: KubeClient;
  resolver: ResourceResolver;
  clock: Clock;
  logger: Logger;
  signal?: AbortSignal;
  /** How long a CRD may take to become Established. Default 60 s. */
  establishedTimeoutMs?: number;
  establishedPollMs?: number;
}

export type PrunePermission =
  | { allowed: true /** provider label values whose objects may be pruned */; labels: readonly string[] }
  | { allowed: false; reason: string };

export interface ApplyOptions {
  namespace: string;
  prune: PrunePermission;
  /** Name of the images ConfigMap: an input of the installer, never pruned (nor is any transport ConfigMap). */
  imagesConfigMap: string;
  /** Kinds applied by earlier runs (from the ClusterOperator), searched for objects to prune. */
  previousKinds?: readonly KindRef[];
}

export interface KindRef {
  apiVersion: string;
  kind: string;
}

export interface ApplyFailure {
  ref?: ObjectRef;
  provider?: string;
  message: string;
}

export interface ApplyOutcome {
  /** Objects written, in the order they were written. */
  written: ObjectRef[];
  unchanged: number;
  failures: ApplyFailure[];
  pruned: ObjectRef[];
  /** Objects that left the manifests but are of a kind never pruned: for an admin to remove. */
  leftForManualRemoval: ObjectRef[];
  /** Why pruning did not run, when it did not. */
  pruneHeld?: string;
  /** Kinds of every rendered object (the next run searches them for objects to prune). */
  appliedKinds: KindRef[];
}

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** True when every field of `desired` has the same value in `live` (arrays: same length, element-wise). */
export function isSubsetOf(desired: unknown, live: unknown): boolean {
  if (Array.isArray(desired))
    return (
      Array.isArray(live) && live.length === desired.length && desired.every((d, i) => isSubsetOf(d, live[i]))
    );
  if (isRecord(desired))
    return (
      isRecord(live) && Object.entries(desired).every(([k, v]) => v === undefined || isSubsetOf(v, live[k]))
    );
  return desired === live;
}

/** The live object already is what we would apply: our hash is on it and every rendered field matches. */
const upToDate = (rendered: RenderedObject, live: KubeObject | undefined): boolean =>
  live !== undefined &&
  annotationsOf(live)[HASH_ANNOTATION] === rendered.hash &&
  isSubsetOf(rendered.object, live);

/**
 * SPEC §6: an existing object that does not carry this provider's label is someone else's (an admin's,
 * the platform's, another provider's, or ours but handed over by relabelling): never applied over.
 */
function takeoverOf(
  provider: RenderedProvider,
  rendered: RenderedObject,
  live: KubeObject | undefined,
): string | undefined {
  if (!live) return undefined;
  const label = labelsOf(live)[PROVIDER_LABEL];
  if (label === provider.label) return undefined;
  return `${rendered.source}: outside bound no-takeover: ${describeRef(rendered.ref)} exists and its label ${PROVIDER_LABEL} is ${label === undefined ? "absent" : JSON.stringify(label)}, not "${provider.label}": the installer never takes over an object it did not install (delete the object, or label it if this provider should own it)`;
}

/**
 * What pruning never deletes whatever it carries (SPEC §6): the product's own objects (its Deployment,
 * ServiceAccount, Secrets — every one named `machine-api-migration…`) and the installer's inputs, the transport
 * and images ConfigMaps. The renderer refuses those names and labels already; this guard is for a label and a
 * managedFields entry put on them some other way.
 */
const isProductOrInput = (o: KubeObject, imagesConfigMap: string): boolean => {
  if (isProductName(nameOf(o))) return true;
  if (groupOf(String(o.apiVersion)) !== "" || o.kind !== "ConfigMap") return false;
  return nameOf(o) === imagesConfigMap || TRANSPORT_LABELS.name in labelsOf(o);
};

const managedByUs = (o: KubeObject): boolean =>
  Array.isArray(o.metadata?.managedFields) &&
  o.metadata.managedFields.some((f) => isRecord(f) && f.manager === FIELD_MANAGER);

const established = (crd: KubeObject | undefined): boolean =>
  conditionOf(crd, "Established")?.status === "True";

const uniqueKinds = (kinds: readonly KindRef[]): KindRef[] => {
  const byGroupKind = new Map<string, KindRef>();
  for (const k of kinds) {
    const key = `${groupOf(k.apiVersion)}/${k.kind}`;
    if (!byGroupKind.has(key)) byGroupKind.set(key, { apiVersion: k.apiVersion, kind: k.kind });
  }
  return [...byGroupKind.values()];
};

export async function applyProviders(
  providers: readonly RenderedProvider[],
  options: ApplyOptions,
  deps: ApplyDeps,
): Promise<ApplyOutcome> {
  const { client, resolver, logger } = deps;
  const outcome: ApplyOutcome = {
    written: [],
    unchanged: 0,
    failures: [],
    pruned: [],
    leftForManualRemoval: [],
    appliedKinds: uniqueKinds(providers.flatMap((p) => p.objects.map((o) => o.ref))),
  };
  const fail = (message: string, ref?: ObjectRef, provider?: string): void => {
    outcome.failures.push({ message, ...(ref ? { ref } : {}), ...(provider ? { provider } : {}) });
    logger.warn({ object: ref ? describeRef(ref) : undefined, provider }, message);
  };
  // A provider whose phase failed goes no further: its Deployments never start without their RBAC or CRDs.
  const blocked = new Set<string>();

  const applyOne = async (
    provider: RenderedProvider,
    rendered: RenderedObject,
  ): Promise<KubeObject | undefined> => {
    const { ref } = rendered;
    const what = `${describeRef(ref)} (provider ${provider.label})`;
    // One retry: a controller's status write between our read and our write is a conflict, not a failure.
    for (let attempt = 1; ; attempt++)
      try {
        const type = await resolveFresh(resolver, ref);
        const live = await getIfExists(client, type, ref);
        const takeover = takeoverOf(provider, rendered, live);
        if (takeover) {
          fail(takeover, ref, provider.label);
          return undefined;
        }
        if (live && isDeleting(live)) {
          fail(`${what} is being deleted; it is applied again once it is gone`, ref, provider.label);
          return undefined;
        }
        if (upToDate(rendered, live)) {
          outcome.unchanged++;
          return live;
        }
        const version = live?.metadata?.resourceVersion;
        const body: KubeObject = version
          ? { ...rendered.object, metadata: { ...rendered.object.metadata, resourceVersion: version } }
          : rendered.object;
        const applied = await client.patch(type, ref.namespace ?? "", ref.name, {
          type: "apply",
          body,
          fieldManager: FIELD_MANAGER,
          force: true,
        });
        outcome.written.push(ref);
        logger.info({ object: describeRef(ref), provider: provider.label }, live ? "updated" : "created");
        return applied;
      } catch (e) {
        if (e instanceof ConflictError && attempt < 2) continue;
        fail(`${what}: ${errorText(e)}`, ref, provider.label);
        return undefined;
      }
  };

  // Every object of every provider is read before anything is written: a provider that would take over an
  // object that is not its own writes nothing at all.
  for (const provider of providers)
    for (const rendered of provider.objects) {
      if (deps.signal?.aborted) return outcome;
      try {
        const live = await getIfExists(client, await resolveFresh(resolver, rendered.ref), rendered.ref);
        const takeover = takeoverOf(provider, rendered, live);
        if (takeover) {
          fail(takeover, rendered.ref, provider.label);
          blocked.add(provider.label);
        }
      } catch (e) {
        fail(
          `${describeRef(rendered.ref)} (provider ${provider.label}): ${errorText(e)}`,
          rendered.ref,
          provider.label,
        );
        blocked.add(provider.label);
      }
    }

  for (const phase of PHASES) {
    const crds: { provider: RenderedProvider; ref: ObjectRef; live: KubeObject | undefined }[] = [];
    for (const provider of providers) {
      if (blocked.has(provider.label)) continue;
      for (const rendered of provider.objects.filter((o) => o.phase === phase)) {
        if (deps.signal?.aborted) return outcome;
        const live = await applyOne(provider, rendered);
        if (!live) blocked.add(provider.label);
        else if (phase === "crds") crds.push({ provider, ref: rendered.ref, live });
      }
    }
    if (phase === "crds")
      for (const crd of crds)
        if (!(await waitEstablished(crd.ref, crd.live, deps))) {
          if (deps.signal?.aborted) return outcome;
          blocked.add(crd.provider.label);
          fail(
            `${describeRef(crd.ref)} (provider ${crd.provider.label}) is not Established after ${(deps.establishedTimeoutMs ?? 60_000) / 1000} s`,
            crd.ref,
            crd.provider.label,
          );
        }
  }

  if (!options.prune.allowed) outcome.pruneHeld = options.prune.reason;
  else if (outcome.failures.length > 0)
    outcome.pruneHeld = "not every object applied; nothing is pruned until a complete apply";
  else if (providers.length === 0 || providers.some((p) => p.objects.length === 0))
    outcome.pruneHeld = "the desired set is empty";
  else await prune(providers, options, options.prune.labels, outcome, deps);
  return outcome;
}

/**
 * Resolves a kind, asking discovery once more when it is unknown: a CRD applied moments ago in this run
 * serves kinds a discovery document fetched before it did not list (the resolver drops such a document).
 */
async function resolveFresh(resolver: ResourceResolver, ref: KindRef): Promise<ResourceType> {
  try {
    return await resolver.resolve(ref.apiVersion, ref.kind);
  } catch (e) {
    if (!(e instanceof NotFoundError)) throw e;
    return resolver.resolve(ref.apiVersion, ref.kind);
  }
}

async function getIfExists(
  client: KubeClient,
  type: ResourceType,
  ref: ObjectRef,
): Promise<KubeObject | undefined> {
  return getOrAbsent(client, type, ref.namespace ?? "", ref.name);
}

async function waitEstablished(
  ref: ObjectRef,
  first: KubeObject | undefined,
  deps: ApplyDeps,
): Promise<boolean> {
  if (established(first)) return true;
  const type = await deps.resolver.resolve(ref.apiVersion, ref.kind);
  const deadline = deps.clock.now() + (deps.establishedTimeoutMs ?? 60_000);
  while (deps.clock.now() < deadline) {
    if (!(await sleep(deps.clock, deps.establishedPollMs ?? 500, deps.signal))) return false;
    const live = await getIfExists(deps.client, type, ref).catch(() => undefined);
    if (established(live)) return true;
  }
  return false;
}

async function prune(
  providers: readonly RenderedProvider[],
  options: ApplyOptions,
  labels: readonly string[],
  outcome: ApplyOutcome,
  deps: ApplyDeps,
): Promise<void> {
  const desired = new Set(providers.flatMap((p) => p.objects.map((o) => identityOf(o.ref))));
  const kinds = uniqueKinds([
    ...PRUNE_SEARCH_KINDS,
    ...outcome.appliedKinds,
    ...(options.previousKinds ?? []),
  ]);
  const selector = `${PROVIDER_LABEL} in (${[...labels].sort().join(",")})`;
  for (const kind of kinds) {
    let type: ResourceType;
    try {
      type = await deps.resolver.resolve(kind.apiVersion, kind.kind);
    } catch (e) {
      if (e instanceof NotFoundError) continue; // nothing of a kind the server does not serve
      outcome.failures.push({
        message: `cannot look up ${kind.kind} in ${kind.apiVersion} to prune: ${errorText(e)}`,
      });
      continue;
    }
    let items: KubeObject[];
    try {
      items = (
        await deps.client.list(type, {
          ...(type.namespaced ? { namespace: options.namespace } : {}),
          labelSelector: selector,
        })
      ).items;
    } catch (e) {
      outcome.failures.push({ message: `cannot list ${type.plural} to prune: ${errorText(e)}` });
      continue;
    }
    for (const item of items) {
      const ref = refOf(item);
      if (desired.has(identityOf(ref)) || !managedByUs(item) || isDeleting(item)) continue;
      if (isProductOrInput(item, options.imagesConfigMap)) {
        deps.logger.warn(
          { object: describeRef(ref) },
          "not pruned: the product's own object or an installer input carries a provider label",
        );
        continue;
      }
      if (isNeverPruned(ref)) {
        outcome.leftForManualRemoval.push(ref);
        continue;
      }
      if (deps.signal?.aborted) return;
      try {
        await deps.client.delete(type, ref.namespace ?? "", ref.name, {
          preconditions: {
            ...(item.metadata?.uid ? { uid: item.metadata.uid } : {}),
            ...(item.metadata?.resourceVersion ? { resourceVersion: item.metadata.resourceVersion } : {}),
          },
          propagationPolicy: "Background",
        });
        outcome.pruned.push(ref);
        deps.logger.info({ object: describeRef(ref) }, "pruned: left the provider manifests");
      } catch (e) {
        if (e instanceof NotFoundError) continue;
        outcome.failures.push({ ref, message: `cannot prune ${describeRef(ref)}: ${errorText(e)}` });
      }
    }
  }
}
