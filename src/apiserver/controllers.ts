/**
 * The controllers kube-controller-manager and the apiextensions server run beside storage, so that
 * deletion behaves as in a real cluster: the garbage collector (background, foreground and orphan
 * propagation over ownerReferences), the namespace controller (empties a terminating namespace, then
 * removes it) and the CRD finalizer (removes a deleted CRD's objects, then the CRD and its type). They
 * write through the same REST write path as API requests, with their own identities, so admission sees
 * them as it would in a cluster; they act inside the server, so no authorization is asked of them (in a
 * cluster their roles allow everything they do).
 */
import type pino from "pino";
import type { KubeObject, OwnerReference } from "../kube/object.js";
import type { Registry } from "./registry.js";
import {
  CRD_CLEANUP_FINALIZER,
  CRD_KEY,
  FOREGROUND_FINALIZER,
  NAMESPACE_KEY,
  ORPHAN_FINALIZER,
  type RequestContext,
  type Rest,
} from "./rest/index.js";
import { ApiError } from "./status.js";
import type { ObjectRef, Storage } from "./storage.js";
import type { ResourceInfo, StoreEvent, UserInfo } from "./types.js";
import { resourceKey } from "./types.js";

const GC_USER: UserInfo = {
  username: "system:serviceaccount:kube-system:generic-garbage-collector",
  groups: ["system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"],
};
const NAMESPACE_CONTROLLER_USER: UserInfo = {
  username: "system:serviceaccount:kube-system:namespace-controller",
  groups: ["system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"],
};
const CRD_CONTROLLER_USER: UserInfo = {
  username: "system:apiserver",
  groups: ["system:masters", "system:authenticated"],
};

type Task =
  | { kind: "owner"; ref: ObjectRef }
  | { kind: "dependent"; ref: ObjectRef }
  | { kind: "namespace"; name: string }
  | { kind: "crd"; name: string };

const taskId = (t: Task): string =>
  t.kind === "owner" || t.kind === "dependent"
    ? `${t.kind}\u0000${t.ref.key}\u0000${t.ref.namespace}\u0000${t.ref.name}`
    : `${t.kind}\u0000${t.name}`;

const refOf = (key: string, o: KubeObject): ObjectRef => ({
  key,
  namespace: o.metadata?.namespace ?? "",
  name: o.metadata?.name ?? "",
});

const isDeleting = (o: KubeObject | undefined): boolean => typeof o?.metadata?.deletionTimestamp === "string";

/** The propagation kube's collector deletes a dependent with: what its own finalizers ask, else Background. */
const ownPolicy = (o: KubeObject): string => {
  const finalizers = o.metadata?.finalizers ?? [];
  return finalizers.includes(ORPHAN_FINALIZER)
    ? "Orphan"
    : finalizers.includes(FOREGROUND_FINALIZER)
      ? "Foreground"
      : "Background";
};

export interface ControllerDeps {
  storage: Storage;
  registry: Registry;
  rest: Rest;
  logger?: pino.Logger;
  clock?: () => number;
  /** Base delay for retrying a task whose write failed (admission denial, conflict). */
  retryDelayMs?: number;
}

export class Controllers {
  private readonly queue = new Map<string, Task>();
  private readonly attempts = new Map<string, number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private running = false;
  private stopped = false;
  private idleWaiters: Array<() => void> = [];
  /** Dependent uid + owner uid pairs already reported as OwnerRefInvalidNamespace. */
  private readonly reported = new Set<string>();

  constructor(private readonly deps: ControllerDeps) {
    deps.storage.onEvent((e) => this.observe(e));
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.queue.clear();
  }

  /** Resolves when no task is queued or running (tests use it instead of sleeping). */
  idle(): Promise<void> {
    if (!this.running && this.queue.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private observe(e: StoreEvent): void {
    const o = e.object;
    const ref = refOf(e.key, o);
    if (e.key === NAMESPACE_KEY && isDeleting(o) && e.type !== "DELETED")
      this.enqueue({ kind: "namespace", name: ref.name });
    if (e.key === CRD_KEY && isDeleting(o) && e.type !== "DELETED")
      this.enqueue({ kind: "crd", name: ref.name });
    const finalizers = o.metadata?.finalizers ?? [];
    if (
      e.type !== "DELETED" &&
      isDeleting(o) &&
      (finalizers.includes(ORPHAN_FINALIZER) || finalizers.includes(FOREGROUND_FINALIZER))
    )
      this.enqueue({ kind: "owner", ref });
    if (e.type === "DELETED" && o.metadata?.uid)
      for (const dep of this.deps.storage.dependentsOf(o.metadata.uid))
        this.enqueue({ kind: "dependent", ref: dep });
    const owners = o.metadata?.ownerReferences ?? [];
    if (e.type !== "DELETED" && owners.length > 0) this.enqueue({ kind: "dependent", ref });
    if (e.type === "DELETED" || isDeleting(o)) {
      // An owner waiting in foreground deletion re-checks when a dependent goes.
      for (const owner of owners) {
        const ownerRef = this.deps.storage.byUidRef(owner.uid);
        if (ownerRef) this.enqueue({ kind: "owner", ref: ownerRef });
      }
    }
    if (e.type === "DELETED") {
      const ns = o.metadata?.namespace;
      if (ns && isDeleting(this.deps.storage.get(NAMESPACE_KEY, "", ns)))
        this.enqueue({ kind: "namespace", name: ns });
      const crd = this.deps.registry.byKey(e.key)?.crd?.crd;
      if (crd?.metadata?.name) this.enqueue({ kind: "crd", name: crd.metadata.name });
    }
  }

  private enqueue(t: Task): void {
    if (this.stopped) return;
    this.queue.set(taskId(t), t);
    if (!this.running) {
      this.running = true;
      setImmediate(() => void this.drain());
    }
  }

  private async drain(): Promise<void> {
    while (this.queue.size > 0 && !this.stopped) {
      const [id, task] = this.queue.entries().next().value as [string, Task];
      this.queue.delete(id);
      try {
        await this.run(task);
        this.attempts.delete(id);
      } catch (e) {
        this.retry(id, task, e);
      }
    }
    this.running = false;
    if (this.queue.size === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  private retry(id: string, task: Task, e: unknown): void {
    if (e instanceof ApiError && e.code === 404) return;
    const n = (this.attempts.get(id) ?? 0) + 1;
    this.attempts.set(id, n);
    this.deps.logger?.warn(
      { task: id.replaceAll("\u0000", "/"), attempt: n, err: String(e) },
      "controller task failed; retrying",
    );
    if (n > 20 || this.stopped) return;
    const timer = setTimeout(
      () => {
        this.timers.delete(timer);
        this.enqueue(task);
      },
      Math.min((this.deps.retryDelayMs ?? 50) * 2 ** (n - 1), 5_000),
    );
    this.timers.add(timer);
  }

  private ctx(user: UserInfo, skipAdmission = false): RequestContext {
    return {
      user,
      dryRun: false,
      warnings: [],
      userAgent: "kube-controller-manager/v1.32.0",
      fieldValidation: "Ignore",
      internal: true,
      ...(skipAdmission ? { skipAdmission } : {}),
    };
  }

  private resolve(ref: ObjectRef): { res: ResourceInfo; object: KubeObject } | undefined {
    const res = this.deps.registry.byKey(ref.key);
    const object = this.deps.storage.get(ref.key, ref.namespace, ref.name);
    return res && object ? { res, object } : undefined;
  }

  private async update(
    ctx: RequestContext,
    res: ResourceInfo,
    old: KubeObject,
    next: KubeObject,
  ): Promise<void> {
    await this.deps.rest.applyUpdate({
      ctx,
      res,
      version: res.storageVersion,
      old,
      candidate: next,
      precondition: old.metadata?.resourceVersion,
    });
  }

  private async deleteObject(
    ctx: RequestContext,
    res: ResourceInfo,
    o: KubeObject,
    policy: string,
  ): Promise<void> {
    if (isDeleting(o)) return;
    await this.deps.rest.delete({
      ctx,
      res,
      version: res.storageVersion,
      namespace: o.metadata?.namespace ?? "",
      name: o.metadata?.name ?? "",
      options: { propagationPolicy: policy, preconditions: { uid: o.metadata?.uid ?? "" } },
    });
  }

  private async run(task: Task): Promise<void> {
    switch (task.kind) {
      case "owner":
        return this.owner(task.ref);
      case "dependent":
        return this.dependent(task.ref);
      case "namespace":
        return this.namespace(task.name);
      case "crd":
        return this.crd(task.name);
    }
  }

  /** An owner being deleted with the orphan or foregroundDeletion finalizer. */
  private async owner(ref: ObjectRef): Promise<void> {
    const found = this.resolve(ref);
    if (!found || !isDeleting(found.object)) return;
    const { object } = found;
    const uid = object.metadata?.uid ?? "";
    const finalizers = object.metadata?.finalizers ?? [];
    const gc = this.ctx(GC_USER);
    const dependents = this.deps.storage
      .dependentsOf(uid)
      .map((r) => this.resolve(r))
      .filter((d): d is { res: ResourceInfo; object: KubeObject } => d !== undefined);
    if (finalizers.includes(ORPHAN_FINALIZER)) {
      for (const d of dependents) {
        const refs = (d.object.metadata?.ownerReferences ?? []).filter((o) => o.uid !== uid);
        const m = { ...d.object.metadata };
        if (refs.length > 0) m.ownerReferences = refs;
        else delete m.ownerReferences;
        await this.update(gc, d.res, d.object, { ...d.object, metadata: m });
      }
      await this.removeFinalizer(gc, ref, ORPHAN_FINALIZER);
      return;
    }
    if (finalizers.includes(FOREGROUND_FINALIZER)) {
      let blocking = 0;
      for (const d of dependents) {
        const refs = d.object.metadata?.ownerReferences ?? [];
        const namespace = d.object.metadata?.namespace ?? "";
        // kube: a dependent that also has a solid owner (live, not itself waiting in the foreground) is
        // not deleted; it only loses its references to waiting and vanished owners.
        const solid = refs.filter((o) => {
          if (o.uid === uid) return false;
          const live = this.ownerObject(o, d.res, namespace);
          return (
            live !== undefined &&
            !(isDeleting(live) && (live.metadata?.finalizers ?? []).includes(FOREGROUND_FINALIZER))
          );
        });
        if (solid.length > 0 && !isDeleting(d.object)) {
          const keep = refs.filter(
            (o) => o.uid !== uid && this.ownerObject(o, d.res, namespace) !== undefined,
          );
          await this.update(gc, d.res, d.object, {
            ...d.object,
            metadata: { ...d.object.metadata, ownerReferences: keep },
          });
          continue;
        }
        const block = refs.some((o) => o.uid === uid && o.blockOwnerDeletion === true);
        if (block) blocking++;
        // kube: a dependent with dependents of its own goes in the foreground too (blocking or not); one
        // without, by its own finalizers.
        const hasDependents = this.deps.storage.dependentsOf(d.object.metadata?.uid ?? "").length > 0;
        await this.deleteObject(gc, d.res, d.object, hasDependents ? "Foreground" : ownPolicy(d.object));
      }
      if (blocking === 0) await this.removeFinalizer(gc, ref, FOREGROUND_FINALIZER);
    }
  }

  private async removeFinalizer(ctx: RequestContext, ref: ObjectRef, finalizer: string): Promise<void> {
    const found = this.resolve(ref);
    if (!found) return;
    const { res, object } = found;
    const finalizers = (object.metadata?.finalizers ?? []).filter((f) => f !== finalizer);
    await this.update(ctx, res, object, { ...object, metadata: { ...object.metadata, finalizers } });
  }

  /**
   * A dependent whose owners may be gone: delete it when all are, drop dangling references otherwise. As
   * kube's collector, an owner is found by its coordinates — the kind's resource, the dependent's namespace
   * (a cluster-scoped kind: none) and the name — and must carry the reference's uid; a namespaced owner in
   * another namespace is absent (with an OwnerRefInvalidNamespace event), and a cluster-scoped dependent
   * naming a namespaced kind cannot be resolved at all: it is left alone, with that event in `default`.
   * A reference to a kind the server does not serve cannot be checked either (kube's collector finds no REST
   * mapping and retries): the dependent is left alone, as it is, whatever else holds that uid.
   */
  private async dependent(ref: ObjectRef): Promise<void> {
    const found = this.resolve(ref);
    if (!found || isDeleting(found.object)) return;
    const { res, object } = found;
    const owners = object.metadata?.ownerReferences ?? [];
    if (owners.length === 0) return;
    const namespace = object.metadata?.namespace ?? "";
    const states = owners.map((o) => ({ ref: o, state: this.ownerState(o, res, namespace) }));
    if (states.some((s) => s.state === "unserved")) return;
    const unresolvable = states.find((s) => s.state === "unresolvable");
    if (unresolvable) {
      await this.invalidNamespaceEvent(res, object, unresolvable.ref);
      return;
    }
    for (const s of states) if (s.state === "elsewhere") await this.invalidNamespaceEvent(res, object, s.ref);
    const exists = (s: (typeof states)[number]): boolean => s.state === "exists";
    if (states.every(exists)) return;
    const gc = this.ctx(GC_USER);
    if (!states.some(exists)) {
      await this.deleteObject(gc, res, object, ownPolicy(object));
      return;
    }
    const keep = states.filter(exists).map((s) => s.ref);
    await this.update(gc, res, object, {
      ...object,
      metadata: { ...object.metadata, ownerReferences: keep },
    });
  }

  /** The live owner an ownerReference of a dependent (of type `res`, in `namespace`) names, if any. */
  private ownerObject(o: OwnerReference, res: ResourceInfo, namespace: string): KubeObject | undefined {
    const slash = o.apiVersion.indexOf("/");
    const ownerRes = this.deps.registry.byGroupKind(slash < 0 ? "" : o.apiVersion.slice(0, slash), o.kind);
    let live: KubeObject | undefined;
    if (!ownerRes) {
      const r = this.deps.storage.byUidRef(o.uid);
      live = r ? this.deps.storage.get(r.key, r.namespace, r.name) : undefined;
    } else if (!ownerRes.namespaced || res.namespaced)
      live = this.deps.storage.get(resourceKey(ownerRes), ownerRes.namespaced ? namespace : "", o.name);
    return live?.metadata?.uid === o.uid ? live : undefined;
  }

  /** Where an ownerReference of a dependent (of type `res`, in `namespace`) leads. */
  private ownerState(
    o: OwnerReference,
    res: ResourceInfo,
    namespace: string,
  ): "exists" | "absent" | "elsewhere" | "unresolvable" | "unserved" {
    const slash = o.apiVersion.indexOf("/");
    const group = slash < 0 ? "" : o.apiVersion.slice(0, slash);
    const ownerRes = this.deps.registry.byGroupKind(group, o.kind);
    if (!ownerRes) return "unserved";
    if (ownerRes.namespaced && !res.namespaced) return "unresolvable";
    if (this.ownerObject(o, res, namespace)) return "exists";
    const byUid = this.deps.storage.byUidRef(o.uid);
    return ownerRes.namespaced && byUid && byUid.namespace !== namespace ? "elsewhere" : "absent";
  }

  /** kube's graph builder reports a reference to a namespaced owner the dependent cannot have, once. */
  private async invalidNamespaceEvent(
    res: ResourceInfo,
    dependent: KubeObject,
    o: OwnerReference,
  ): Promise<void> {
    const namespace = dependent.metadata?.namespace ?? "";
    const id = `${dependent.metadata?.uid}\u0000${o.uid}`;
    if (this.reported.has(id)) return;
    this.reported.add(id);
    const eventsRes = this.deps.registry.byKey("/events");
    if (!eventsRes) return;
    const now = new Date((this.deps.clock ?? Date.now)());
    const time = now.toISOString().replace(/\.\d{3}Z$/, "Z");
    const name = dependent.metadata?.name ?? "";
    // Best effort, as kube's event recorder: a refused event never holds the collector up.
    await this.deps.rest
      .create({
        ctx: this.ctx(GC_USER),
        res: eventsRes,
        version: "v1",
        namespace: namespace || "default",
        body: {
          apiVersion: "v1",
          kind: "Event",
          metadata: {
            name: `${name}.${(now.getTime() * 1_000_000).toString(16)}`,
            namespace: namespace || "default",
          },
          involvedObject: {
            kind: res.kind,
            apiVersion: res.group ? `${res.group}/${res.storageVersion}` : res.storageVersion,
            ...(namespace ? { namespace } : {}),
            name,
            uid: dependent.metadata?.uid,
          },
          reason: "OwnerRefInvalidNamespace",
          message: `ownerRef [${o.apiVersion}/${o.kind}, namespace: ${namespace}, name: ${o.name}, uid: ${o.uid}] does not exist in namespace ${JSON.stringify(namespace)}`,
          source: { component: "garbage-collector-controller" },
          firstTimestamp: time,
          lastTimestamp: time,
          count: 1,
          type: "Warning",
          reportingComponent: "",
          reportingInstance: "",
        },
      })
      .catch((e: unknown) => this.deps.logger?.warn({ err: String(e) }, "could not record an event"));
  }

  private async namespace(name: string): Promise<void> {
    const ns = this.deps.storage.get(NAMESPACE_KEY, "", name);
    if (!ns || !isDeleting(ns)) return;
    const ctx = this.ctx(NAMESPACE_CONTROLLER_USER);
    let remaining = 0;
    for (const key of this.deps.storage.keysWithObjectsIn(name)) {
      const res = this.deps.registry.byKey(key);
      if (!res) continue;
      for (const o of this.deps.storage.list(key, name)) {
        remaining++;
        await this.deleteObject(ctx, res, o, "Background");
      }
    }
    if (remaining > 0) return;
    const live = this.deps.storage.get(NAMESPACE_KEY, "", name);
    if (live && isDeleting(live)) this.deps.rest.finalizeNamespace(live);
  }

  private async crd(name: string): Promise<void> {
    const crd = this.deps.storage.get(CRD_KEY, "", name);
    if (!crd || !isDeleting(crd) || !(crd.metadata?.finalizers ?? []).includes(CRD_CLEANUP_FINALIZER)) return;
    const spec = crd.spec ?? {};
    const names = (spec.names ?? {}) as Record<string, unknown>;
    const key = resourceKey({ group: String(spec.group ?? ""), plural: String(names.plural ?? "") });
    const res = this.deps.registry.byKey(key);
    // kube removes the instances straight from storage (no webhooks), honouring their finalizers.
    const ctx = this.ctx(CRD_CONTROLLER_USER, true);
    const crdRes = this.deps.registry.byKey(CRD_KEY)!;
    const conditions = Array.isArray(crd.status?.conditions)
      ? (crd.status.conditions as Array<Record<string, unknown>>)
      : [];
    if (!conditions.some((c) => c.type === "Terminating")) {
      const terminating = {
        type: "Terminating",
        status: "True",
        lastTransitionTime: new Date((this.deps.clock ?? Date.now)()).toISOString().replace(/\.\d{3}Z$/, "Z"),
        reason: "InstanceDeletionInProgress",
        message: "CustomResource deletion is in progress",
      };
      const next = { ...crd, status: { ...crd.status, conditions: [...conditions, terminating] } };
      await this.deps.rest.applyUpdate({
        ctx,
        res: crdRes,
        version: "v1",
        old: crd,
        candidate: next,
        subresource: "status",
        precondition: crd.metadata?.resourceVersion,
      });
      return;
    }
    if (res) {
      const objects = this.deps.storage.list(key);
      for (const o of objects) await this.deleteObject(ctx, res, o, "Background");
      if (this.deps.storage.count(key) > 0) return;
    }
    await this.removeFinalizer(ctx, refOf(CRD_KEY, crd), CRD_CLEANUP_FINALIZER);
  }
}
