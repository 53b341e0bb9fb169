/**
 * The simulated cloud's instance ledger (SPEC §1.1): every instance the stand-ins create or terminate, with
 * the Machine it belongs to, so a test can prove the product's first duty after any scenario — no instance
 * created twice for one Machine, none left without a Machine, none terminated that a user did not delete.
 * It is also the "cloud API" of the stand-ins: a provider finds a live instance it created for a Machine
 * before creating one, so a retried reconcile never creates twice. On AWS each actuator finds only its own
 * (by tag): MAO never finds CAPA's instance or vice versa, which is exactly how two active controllers
 * double-create in a real cluster. On OpenStack both find a server by the Machine's name (`findLiveNamed`).
 * Ids and providerIDs take the form of the cloud an instance is created in (clouds.ts); the ledger itself
 * is the same for every platform, and so are its invariants.
 *
 * With `requireRecordedDeletes` it also answers SPEC §3.2 I6's question for every termination: which user
 * request does it descend from (a delete of the Machine or its twin, a cascading delete of its MachineSet, a
 * person's scale-down of that set as the set controller carried it out, or — for the ClusterAPI side only —
 * a delete of the CAPI Cluster)? Tests record their requests (`userRequested`), the set controllers record
 * what they create and which member a scale-down chose (`memberCreated`, `memberDeleted`).
 *
 * Instances are keyed by Machine *name*: twins share a name, so a MAPI Machine and its CAPI twin (and its
 * InfraMachine) refer to one instance after a handover. A name can be re-used, though (a Machine deleted and
 * created again): a request by name covers only instances created before the name's next recorded `Create`,
 * so a delete of the old Machine never excuses terminating the new one's instance. This file holds state
 * per ledger object, never per module; it does no Kubernetes I/O.
 */
import type { Logger } from "pino";
import type { SimulatedCloud } from "./clouds.js";
import { AWS_CLOUD, instanceIdOfProviderID } from "./clouds.js";

export { awsProviderID, instanceIdOfProviderID } from "./clouds.js";

/** Which controller created (or, for `existing`, first saw) an instance. */
export type InstanceSide = "MachineAPI" | "ClusterAPI" | "existing";

export interface InstanceRecord {
  instanceId: string;
  providerID: string;
  /** The Machine name (shared by MAPI Machine, CAPI Machine and its InfraMachine). */
  machineName: string;
  side: InstanceSide;
  /** Ledger sequence number of the create (or adoption) event. */
  createdSeq: number;
  terminatedSeq?: number;
  terminatedBy?: Exclude<InstanceSide, "existing">;
  /** The object the terminate was for, as `Kind namespace/name`, and whether it was being deleted. */
  terminatedFor?: { object: string; deleting: boolean };
}

/**
 * A user's request a termination may descend from (SPEC §3.2 I6), as the test that makes it records it —
 * before it sends the request, withdrawn if the server refuses it.
 * - `Machine`: a delete of the Machine `name` or of its twin.
 * - `MachineSet`: a delete of a MachineSet copy; `cascades` says whether the user's choice reaches its
 *   members (not `--cascade=orphan`, or a copy that orphans under the SPEC §4.6 rows: the non-authoritative
 *   MAPI copy of a ClusterAPI set), `members` the Machines the test saw in it (the set controllers' own
 *   creations are added by `memberCreated`).
 * - `Cluster`: a delete of the CAPI Cluster: a request for the ClusterAPI side of the Machines that existed
 *   then, and of the members its CAPI MachineSets `sets` create while they go with it (a scale-up racing the
 *   delete), never for a MachineAPI instance (SPEC §4.6).
 * - `Scale`: a person lowering a MachineSet's replicas from `from` to `to`: a request for `from - to`
 *   members, each chosen by the set controller (`memberDeleted`).
 * - `Create`: a person creating a Machine (either API) under `name` again, after a Machine of that name was
 *   deleted: not a request for any termination, but a boundary — every request made before it that reaches
 *   Machines by name (a delete of the Machine or its twin, a Cluster's or a set's members) is a request for
 *   the old Machine, and no longer covers an instance created after it (the new Machine's). Recorded before
 *   the create is sent, withdrawn if the server refuses it (409 while the old one is still deleting).
 */
export type UserRequest =
  | { kind: "Machine"; name: string }
  | { kind: "MachineSet"; name: string; cascades: boolean; members?: readonly string[] }
  | { kind: "Cluster"; name: string; members: readonly string[]; sets?: readonly string[] }
  | { kind: "Scale"; machineSet: string; from: number; to: number }
  | { kind: "Create"; name: string };

export type LedgerEvent =
  | { seq: number; type: "created"; instanceId: string; machineName: string; side: InstanceSide }
  | { seq: number; type: "existing"; instanceId: string; machineName: string }
  | { seq: number; type: "terminated"; instanceId: string; machineName: string; by: InstanceSide }
  | { seq: number; type: "deletionRequested"; machineName: string; why: string }
  | { seq: number; type: "userRequest"; id: number; request: UserRequest; why: string }
  | { seq: number; type: "withdrawn"; id: number }
  | { seq: number; type: "memberCreated"; machineSet: string; machineName: string }
  | {
      seq: number;
      type: "memberDeleted";
      machineSet: string;
      machineName: string;
      reason: "scaleDown" | "setDeleting";
      /** For a scale-down: whether a person's scale request still had a member to remove. */
      requested: boolean;
    };

export interface LedgerSnapshot {
  instances: InstanceRecord[];
  events: LedgerEvent[];
  /** Machine names whose deletion a user (or a user's scale-down) requested. */
  deletionsRequested: string[];
}

/** What exists now, for `violations`: the names of every MAPI and CAPI Machine (either twin keeps an instance). */
export interface ExistingMachines {
  mapi: Iterable<string>;
  capi: Iterable<string>;
  /**
   * `currentSeq()` when the listing began: an instance created after it may belong to a Machine created after
   * its list was read (a set's new member), so only instances created before it are judged leaked.
   */
  listedFrom?: number;
}

export interface InstanceLedger {
  /** A live instance `side` created for `machineName` (the actuator's lookup by tag), if any. */
  findLive(machineName: string, side: Exclude<InstanceSide, "existing">): InstanceRecord | undefined;
  /** A live instance of `machineName`, whoever created or adopted it (a lookup by server name), if any. */
  findLiveNamed(machineName: string): InstanceRecord | undefined;
  /** Creates an instance in `zone` for `machineName`, in `cloud`'s id and providerID form (default AWS). */
  created(input: {
    machineName: string;
    side: Exclude<InstanceSide, "existing">;
    zone: string;
    cloud?: SimulatedCloud;
  }): InstanceRecord;
  /**
   * Adopts an instance the ledger did not create (seeded objects that already carry a providerID). Does
   * nothing when the instance is already known, live or terminated.
   */
  recordExisting(input: { machineName: string; providerID: string }): void;
  /**
   * Terminates `instanceId` (idempotent, as EC2's TerminateInstances and Nova's server delete are) on behalf
   * of `object`, which the caller reports as being deleted or not. An unknown id is adopted first, then
   * terminated.
   */
  terminated(input: {
    instanceId: string;
    machineName: string;
    by: Exclude<InstanceSide, "existing">;
    object: string;
    deleting: boolean;
  }): void;
  /** A user (directly, or by scaling a MachineSet down) asked for `machineName` to go. */
  deletionRequested(machineName: string, why: string): void;
  /** A user's request (recorded before it is sent); returns its id for `withdrawn`. */
  userRequested(request: UserRequest, why?: string): number;
  /** The server refused request `id`: nothing descends from it. */
  withdrawn(id: number): void;
  /** MachineSet `machineSet` (either copy: twins share names) created Machine `machineName` (the set's tag). */
  memberCreated(machineSet: string, machineName: string): void;
  /**
   * A MachineSet controller deleted its member `machineName`: to scale down (descends from a person's
   * `Scale` request while one has members left to remove) or because the set is being deleted (descends
   * from a cascading `MachineSet` request).
   */
  memberDeleted(input: {
    machineSet: string;
    machineName: string;
    reason: "scaleDown" | "setDeleting";
  }): void;
  /** The user request a termination descends from, in words; undefined when none (I6 with recorded deletes). */
  descentOf(instanceId: string): string | undefined;
  /** Is `instanceId` known and not terminated? */
  isLive(instanceId: string): boolean;
  /** The sequence number of the last event recorded (0 before any). */
  currentSeq(): number;
  snapshot(): LedgerSnapshot;
  /** Every broken promise of SPEC's first duty, one sentence each; empty when none. */
  violations(existing: ExistingMachines): string[];
}

export interface LedgerOptions {
  logger?: Logger;
  /**
   * When true, a terminate counts as user-requested only if it descends from a recorded user request made
   * before it (`descentOf`; `deletionRequested` counts as a delete of that Machine) — tests that record
   * every user request. When false (default), the deletionTimestamp on the object
   * the terminate was for is taken as the request: every deletion in a simulation starts with someone
   * deleting a Machine, a MachineSet or an owner, so a terminate for a non-deleting object is the violation.
   */
  requireRecordedDeletes?: boolean;
  /** Source of the instance-id prefix (default Math.random): ids need only be distinct, not secret. */
  random?: () => number;
}

export function createInstanceLedger(options: LedgerOptions = {}): InstanceLedger {
  const random = options.random ?? Math.random;
  const byId = new Map<string, InstanceRecord>();
  const events: LedgerEvent[] = [];
  const requested = new Set<string>();
  let seq = 0;
  interface Recorded {
    id: number;
    seq: number;
    request: UserRequest;
    withdrawn: boolean;
  }
  const requests: Recorded[] = [];
  /** Machine name → its recorded `Create` requests (a name's re-uses), so a descent looks up only its own. */
  const creates = new Map<string, Recorded[]>();
  /** Set name → Machines the set controllers created under it. */
  const members = new Map<string, Set<string>>();
  /** Machine name → the seq of each scale-down choice a person's request covered. */
  const scaledDown = new Map<string, number[]>();
  /** Set name → members removed by scale-downs so far (consumes the Scale requests' budget). */
  const scaleUsed = new Map<string, number>();
  const legacy = new Map<string, number[]>();
  const push = <K, V>(m: Map<K, V[]>, k: K, v: V): void => {
    m.set(k, [...(m.get(k) ?? []), v]);
  };
  const live = (r: Recorded, before: number): boolean => !r.withdrawn && r.seq < before;
  const scaleBudget = (set: string): number =>
    requests
      .filter((r) => !r.withdrawn && r.request.kind === "Scale" && r.request.machineSet === set)
      .reduce((n, r) => (r.request.kind === "Scale" ? n + Math.max(0, r.request.from - r.request.to) : n), 0);
  const isMember = (set: string, machine: string, request: UserRequest): boolean =>
    (members.get(set)?.has(machine) ?? false) ||
    (request.kind === "MachineSet" && (request.members ?? []).includes(machine));

  /**
   * Whether a user created a Machine named `machine` anew after `since` and before `created` (an instance's
   * create): a request of `since` for that name was for the old Machine, not the one `created` belongs to.
   */
  const renewed = (machine: string, since: number, created: number): boolean =>
    (creates.get(machine) ?? []).some((r) => !r.withdrawn && r.seq > since && r.seq < created);
  /**
   * Why a termination of `machine` by `by` at `at`, of an instance created at `created`, was asked for, or
   * undefined (SPEC §3.2 I6). A request by name covers only the instances of the Machine it was made for:
   * none created after the name was re-used (`Create`).
   */
  const descent = (
    machine: string,
    by: InstanceSide | undefined,
    at: number,
    created: number,
  ): string | undefined => {
    if ((legacy.get(machine) ?? []).some((s) => s < at && !renewed(machine, s, created)))
      return `deletion of Machine ${machine} requested`;
    for (const r of requests) {
      if (!live(r, at) || renewed(machine, r.seq, created)) continue;
      const q = r.request;
      if (q.kind === "Machine" && q.name === machine)
        return `user request ${r.id}: delete Machine ${machine}`;
      if (
        q.kind === "Cluster" &&
        by === "ClusterAPI" &&
        (q.members.includes(machine) || (q.sets ?? []).some((set) => members.get(set)?.has(machine)))
      )
        return `user request ${r.id}: delete Cluster ${q.name}`;
      if (q.kind === "MachineSet" && q.cascades && isMember(q.name, machine, q))
        return `user request ${r.id}: cascading delete of MachineSet ${q.name}`;
    }
    if ((scaledDown.get(machine) ?? []).some((s) => s < at && !renewed(machine, s, created)))
      return `a person's scale-down chose ${machine}`;
    return undefined;
  };
  // A random 32-bit prefix keeps ids distinct across ledgers, a counter within one (clouds.ts shapes them).
  const prefix = Math.floor(random() * 0xffffffff)
    .toString(16)
    .padStart(8, "0");
  let counter = 0;
  const nextId = (cloud: SimulatedCloud): string => cloud.instanceId(prefix, counter++);

  const log = (event: LedgerEvent, extra: Record<string, unknown> = {}): void => {
    events.push(event);
    options.logger?.info({ instanceEvent: event.type, ...event, ...extra }, `instance ${event.type}`);
  };

  const adopt = (machineName: string, instanceId: string, providerID: string): InstanceRecord => {
    const record: InstanceRecord = {
      instanceId,
      providerID,
      machineName,
      side: "existing",
      createdSeq: ++seq,
    };
    byId.set(instanceId, record);
    log({ seq: record.createdSeq, type: "existing", instanceId, machineName });
    return record;
  };

  const ledger: InstanceLedger = {
    findLive(machineName, side) {
      for (const r of byId.values())
        if (r.machineName === machineName && r.side === side && r.terminatedSeq === undefined) return r;
      return undefined;
    },
    findLiveNamed(machineName) {
      for (const r of byId.values())
        if (r.machineName === machineName && r.terminatedSeq === undefined) return r;
      return undefined;
    },
    created({ machineName, side, zone, cloud = AWS_CLOUD }) {
      const instanceId = nextId(cloud);
      const record: InstanceRecord = {
        instanceId,
        providerID: cloud.providerID(zone, instanceId),
        machineName,
        side,
        createdSeq: ++seq,
      };
      byId.set(instanceId, record);
      log(
        { seq: record.createdSeq, type: "created", instanceId, machineName, side },
        { providerID: record.providerID },
      );
      return record;
    },
    recordExisting({ machineName, providerID }) {
      const instanceId = instanceIdOfProviderID(providerID);
      if (instanceId === undefined || byId.has(instanceId)) return;
      adopt(machineName, instanceId, providerID);
    },
    terminated({ instanceId, machineName, by, object, deleting }) {
      const record = byId.get(instanceId) ?? adopt(machineName, instanceId, "");
      if (record.terminatedSeq !== undefined) return;
      record.terminatedSeq = ++seq;
      record.terminatedBy = by;
      record.terminatedFor = { object, deleting };
      log({ seq: record.terminatedSeq, type: "terminated", instanceId, machineName, by }, { object });
    },
    deletionRequested(machineName, why) {
      requested.add(machineName);
      push(legacy, machineName, ++seq);
      log({ seq, type: "deletionRequested", machineName, why });
    },
    userRequested(request, why = "") {
      const r: Recorded = { id: requests.length + 1, seq: ++seq, request, withdrawn: false };
      requests.push(r);
      if (request.kind === "Machine") requested.add(request.name);
      if (request.kind === "Create") push(creates, request.name, r);
      log({ seq: r.seq, type: "userRequest", id: r.id, request, why });
      return r.id;
    },
    withdrawn(id) {
      const r = requests.find((x) => x.id === id);
      if (!r || r.withdrawn) return;
      r.withdrawn = true;
      log({ seq: ++seq, type: "withdrawn", id });
    },
    memberCreated(machineSet, machineName) {
      const set = members.get(machineSet) ?? new Set<string>();
      set.add(machineName);
      members.set(machineSet, set);
      log({ seq: ++seq, type: "memberCreated", machineSet, machineName });
    },
    memberDeleted({ machineSet, machineName, reason }) {
      const set = members.get(machineSet) ?? new Set<string>();
      set.add(machineName);
      members.set(machineSet, set);
      requested.add(machineName);
      let covered = false;
      if (reason === "scaleDown") {
        const used = scaleUsed.get(machineSet) ?? 0;
        // A retried delete of the same victim is one removal, not two.
        covered = scaledDown.has(machineName) || used < scaleBudget(machineSet);
        if (covered && !scaledDown.has(machineName)) {
          scaleUsed.set(machineSet, used + 1);
          push(scaledDown, machineName, seq + 1);
        }
      }
      log({ seq: ++seq, type: "memberDeleted", machineSet, machineName, reason, requested: covered });
    },
    descentOf(instanceId) {
      const r = byId.get(instanceId);
      if (!r || r.terminatedSeq === undefined) return undefined;
      return descent(r.machineName, r.terminatedBy, r.terminatedSeq, r.createdSeq);
    },
    currentSeq: () => seq,
    isLive: (instanceId) => {
      const r = byId.get(instanceId);
      return r !== undefined && r.terminatedSeq === undefined;
    },
    snapshot: () => ({
      instances: [...byId.values()].map((r) => ({
        ...r,
        ...(r.terminatedFor ? { terminatedFor: { ...r.terminatedFor } } : {}),
      })),
      events: events.map((e) => ({ ...e })),
      deletionsRequested: [...requested],
    }),
    violations(existing) {
      const names = new Set([...existing.mapi, ...existing.capi]);
      const out: string[] = [];
      const records = [...byId.values()].sort((a, b) => a.createdSeq - b.createdSeq);
      // Created twice: two instances of one Machine alive at the same time.
      const byMachine = new Map<string, InstanceRecord[]>();
      for (const r of records) byMachine.set(r.machineName, [...(byMachine.get(r.machineName) ?? []), r]);
      for (const [machine, list] of byMachine)
        for (let i = 0; i < list.length; i++)
          for (let j = i + 1; j < list.length; j++) {
            const a = list[i]!;
            const b = list[j]!;
            if (a.terminatedSeq === undefined || a.terminatedSeq > b.createdSeq)
              out.push(
                `Machine ${machine}: instance ${b.instanceId} (${b.side}) was created while ${a.instanceId} (${a.side}) was still running: created twice`,
              );
          }
      for (const r of records) {
        const listedBefore = existing.listedFrom === undefined || r.createdSeq <= existing.listedFrom;
        if (r.terminatedSeq === undefined && listedBefore && !names.has(r.machineName))
          out.push(
            `instance ${r.instanceId} (${r.side}) is running but neither Machine ${r.machineName} nor its twin exists: leaked`,
          );
        if (r.terminatedSeq !== undefined) {
          const what = r.terminatedFor?.object ?? r.machineName;
          if (!r.terminatedFor?.deleting)
            out.push(
              `instance ${r.instanceId} was terminated by ${r.terminatedBy} for ${what}, which was not being deleted`,
            );
          else if (
            options.requireRecordedDeletes &&
            descent(r.machineName, r.terminatedBy, r.terminatedSeq, r.createdSeq) === undefined
          )
            out.push(
              `instance ${r.instanceId} was terminated by ${r.terminatedBy} for ${what}, but no user deleted Machine ${r.machineName} or its twin`,
            );
        }
      }
      return out;
    },
  };
  return ledger;
}
