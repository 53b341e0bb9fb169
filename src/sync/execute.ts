/**
 * Executes a sync plan's writes against the API server (SPEC §4, §7 write discipline), in order, stopping
 * at the first failure. What a write sends is decided by the planner (writes.ts); this file only turns each
 * `SyncWrite` into its one request, chains resourceVersions when a plan writes one object more than once,
 * and sorts a failure into "stale read" (ConflictError, thrown: the runtime requeues with backoff),
 * "refused by the API server" (returned, so the controller can report it on the MAPI object) or anything
 * else (thrown). It reads nothing from the cache and decides nothing about what to write.
 */
import type { Operation } from "fast-json-patch";
import { type KubeClient, withSignal } from "../kube/client.js";
import { ConflictError, InvalidError, KubeApiError } from "../kube/errors.js";
import type { ResourceType } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import { isRecord, nameOf, namespaceOf } from "../kube/object.js";
import type { GuardedPatch } from "../kube/write.js";
import { mergePatchAt, sendGuardedPatch } from "../kube/write.js";
import type { SyncWrite } from "./writes.js";
import { SYNC_FIELD_MANAGER } from "./writes.js";

export interface ExecuteDeps {
  client: KubeClient;
  /** The resource type serving `kind` in `apiVersion` (discovery for infrastructure kinds). */
  typeOf(apiVersion: string, kind: string): Promise<ResourceType>;
  /** Checked before every write: a controller that lost leadership stops before its next write. */
  signal?: AbortSignal;
  /**
   * SPEC §0.1: the live read that the platform's own migration controllers are absent or at zero, made once
   * per plan before its first deletion write (a delete, a finalizer or owner reference released); false →
   * the plan stops there, as if aborted (src/supported.ts `createPlatformGuard`).
   */
  platformGuard?: { clear(what: string): Promise<boolean> };
}

/** The writes of a deletion (§4.6, §3.5): the delete itself and the releases that let it finish. */
export const isDeletionWrite = (w: SyncWrite): boolean =>
  w.kind === "delete" || w.kind === "removeFinalizer" || w.kind === "removeOwnerReference";

export type ExecuteOutcome =
  | { kind: "done"; written: number; resourceVersions: ReadonlyMap<string, string> }
  /** The API server refused `write` (admission webhook, validation, authorization): not a stale read. */
  | {
      kind: "refused";
      write: SyncWrite;
      index: number;
      message: string;
      error: KubeApiError;
      resourceVersions: ReadonlyMap<string, string>;
    }
  /** The controller stopped (signal aborted) before `index`; nothing after it was sent. */
  | { kind: "aborted"; index: number; resourceVersions: ReadonlyMap<string, string> };

/** Codes with which an API server refuses a request on its merits (admission, schema, RBAC). */
const REFUSAL_CODES: readonly number[] = [400, 403, 422];

const targetUid = (w: SyncWrite): string => (w.kind === "create" ? "" : (w.target.uid ?? ""));

/** The uid whose chained resourceVersion a test op on `/metadata/resourceVersion` must carry. */
const withChainedTests = (ops: readonly Operation[], rv: string): Operation[] =>
  ops.map((op) => (op.op === "test" && op.path === "/metadata/resourceVersion" ? { ...op, value: rv } : op));

/**
 * Pure: `write` as it must be sent when an earlier write of the same plan to the same object returned
 * `rv` (writes.ts "chaining"). Sound because that earlier write was itself guarded by what was read.
 */
export const chainResourceVersion = (write: SyncWrite, rv: string | undefined): SyncWrite => {
  if (rv === undefined) return write;
  switch (write.kind) {
    case "create":
      return write;
    case "apply":
      return {
        ...write,
        resourceVersion: rv,
        body: { ...write.body, metadata: { ...(write.body.metadata ?? {}), resourceVersion: rv } },
      };
    case "applyStatus":
    case "annotate":
    case "pause":
    case "unpause":
      return { ...write, resourceVersion: rv };
    case "addFinalizer":
    case "removeFinalizer":
    case "removeOwnerReference":
    case "setReplicas":
      return { ...write, resourceVersion: rv, patch: withChainedTests(write.patch, rv) };
    case "delete":
      return { ...write, preconditions: { ...write.preconditions, resourceVersion: rv } };
    default:
      return assertNever(write);
  }
};

const isJsonPatch = (w: SyncWrite): boolean =>
  w.kind === "addFinalizer" ||
  w.kind === "removeFinalizer" ||
  w.kind === "removeOwnerReference" ||
  w.kind === "setReplicas";

/**
 * Pure: what a failed write means. kube answers a failed JSON Patch `test` with 422 and no causes; for the
 * plan's guarded patches that is "what was read is stale", the same as a 409.
 */
export const classifyFailure = (w: SyncWrite, e: unknown): "conflict" | "refused" | "other" => {
  if (e instanceof ConflictError) return "conflict";
  if (isJsonPatch(w) && e instanceof InvalidError && e.causes.length === 0) return "conflict";
  if (e instanceof KubeApiError && REFUSAL_CODES.includes(e.code)) return "refused";
  return "other";
};

const describeTarget = (w: SyncWrite): string =>
  w.kind === "create"
    ? `${w.object.kind} ${namespaceOf(w.object)}/${nameOf(w.object)}`
    : `${w.target.kind} ${w.target.namespace}/${w.target.name}`;

const annotationsPatch = (
  resourceVersion: string,
  annotations: Record<string, string | null>,
): GuardedPatch => ({ type: "merge", body: mergePatchAt(resourceVersion, { metadata: { annotations } }) });

/** The one request that carries out `w`; merge and JSON patches are kube/write.ts's guarded patches. */
const sendOne = async (deps: ExecuteDeps, w: SyncWrite): Promise<unknown> => {
  const { client } = deps;
  if (w.kind === "create") {
    const type = await deps.typeOf(w.object.apiVersion ?? "", w.object.kind ?? "");
    return client.create(type, w.object, { fieldManager: SYNC_FIELD_MANAGER });
  }
  const type = await deps.typeOf(w.target.apiVersion, w.target.kind);
  const send = (patch: GuardedPatch) => sendGuardedPatch(client, type, w.target, patch, SYNC_FIELD_MANAGER);
  switch (w.kind) {
    case "apply":
      return client.patch(type, w.target.namespace, w.target.name, {
        type: "apply",
        body: w.body,
        fieldManager: w.fieldManager,
        force: true,
      });
    case "applyStatus":
      return send({
        type: "merge",
        body: mergePatchAt(w.resourceVersion, { status: w.status }),
        subresource: "status",
      });
    case "annotate":
    case "pause":
      return send(annotationsPatch(w.resourceVersion, w.annotations));
    case "unpause":
      return send(
        annotationsPatch(w.resourceVersion, Object.fromEntries(w.annotations.map((k) => [k, null]))),
      );
    case "addFinalizer":
    case "removeFinalizer":
    case "removeOwnerReference":
    case "setReplicas":
      return send({ type: "json", body: w.patch });
    case "delete":
      return client.delete(type, w.target.namespace, w.target.name, {
        preconditions: w.preconditions,
        ...(w.propagationPolicy ? { propagationPolicy: w.propagationPolicy } : {}),
      });
    default:
      return assertNever(w);
  }
};

/** Runs `writes` in order; see the file comment for what is thrown and what is returned. */
export async function executeWrites(
  given: ExecuteDeps,
  writes: readonly SyncWrite[],
): Promise<ExecuteOutcome> {
  // The controller's signal ends each request and its Retry-After waits when the controller stops (decision 198).
  const deps = given.signal ? { ...given, client: withSignal(given.client, given.signal) } : given;
  // uid → the resourceVersion our own previous write to that object returned.
  const resourceVersions = new Map<string, string>();
  let platformCleared = false;
  for (const [index, planned] of writes.entries()) {
    if (deps.signal?.aborted) return { kind: "aborted", index, resourceVersions };
    if (deps.platformGuard && !platformCleared && isDeletionWrite(planned)) {
      if (!(await deps.platformGuard.clear(`deletion write ${planned.kind} of ${describeTarget(planned)}`)))
        return { kind: "aborted", index, resourceVersions };
      platformCleared = true;
    }
    const uid = targetUid(planned);
    const write = chainResourceVersion(planned, uid ? resourceVersions.get(uid) : undefined);
    let answer: unknown;
    try {
      answer = await sendOne(deps, write);
    } catch (e) {
      const failure = classifyFailure(write, e);
      if (failure === "refused" && e instanceof KubeApiError)
        return { kind: "refused", write, index, message: e.message, error: e, resourceVersions };
      if (failure === "conflict" && !(e instanceof ConflictError)) {
        const message = e instanceof Error ? e.message : String(e);
        throw new ConflictError(
          409,
          "Conflict",
          `${describeTarget(write)} changed since it was read: ${message}`,
        );
      }
      throw e;
    }
    // A delete answers with the object while finalizers hold it, or a Status once it is gone.
    const meta =
      isRecord(answer) && isRecord(answer.metadata) ? (answer.metadata as KubeObject["metadata"]) : undefined;
    if (meta?.uid && typeof meta.resourceVersion === "string" && meta.resourceVersion)
      resourceVersions.set(meta.uid, meta.resourceVersion);
  }
  return { kind: "done", written: writes.length, resourceVersions };
}

const assertNever = (x: never): never => {
  throw new Error(`unknown sync write ${JSON.stringify(x)}`);
};
