/**
 * The per-kind details of a handover as data (SPEC §3.1): which objects acknowledge a stop for each
 * authority, which CAPI objects carry the pause, which controller finalizers an authority's side needs to
 * take over (step 8) and which of them hold the instance (step 9 removes those), and how "provisioned
 * enough to hand over" is judged. Machines and MachineSets share one planner; everything that differs
 * between them is in this table.
 */
import type { StableAuthority } from "../kube/kinds.js";
import { FINALIZERS } from "../kube/kinds.js";
import type { KubeObject } from "../kube/object.js";
import { getPath } from "../kube/object.js";
import { PLATFORMS } from "../platforms/registry.js";
import type { Acknowledger } from "../protocol/pause.js";
import { ACKNOWLEDGERS } from "../protocol/pause.js";
import type { HandoverKind, Role } from "./snapshot.js";
import { phaseOf } from "./snapshot.js";

export type { Acknowledger } from "../protocol/pause.js";

/**
 * Stands for "the InfraMachine finalizer of whatever platform the InfraMachine belongs to"; resolved
 * through `INFRA_MACHINE_FINALIZERS` by the InfraMachine's kind.
 */
const PLATFORM_INFRA_MACHINE_FINALIZER = "<platform InfraMachine finalizer>";

/** Controller finalizers one authority's controllers keep on one object of its side. */
export interface FinalizerHolder {
  role: Role;
  finalizers: readonly string[];
}

/** A reason an object is not provisioned enough to hand over, or undefined when it is. */
export type ProvisioningCheck = (object: KubeObject | undefined) => string | undefined;

export interface HandoverKindDetails {
  kind: HandoverKind;
  /**
   * Objects acknowledging that this authority's controllers stopped (Paused=True) or act (False); the table
   * is src/protocol's, which the sync's step-6 check reads too.
   */
  acknowledgers: Readonly<Record<StableAuthority, readonly Acknowledger[]>>;
  /** CAPI objects that carry the pause annotation (templates have no controller). */
  pauseTargets: readonly Role[];
  /**
   * SPEC §4.6 "a roll-back never unpauses a deleting CAPI MachineSet": pause targets that keep the product's
   * pause once they are deleting, wherever ClusterAPI's pauses are lifted (a roll-back to ClusterAPI, steps 3
   * and 11). A deleted, unpaused CAPI MachineSet deletes every Machine it selects whatever the propagation
   * policy, and admission lets an orphaning delete of a paused one through; so the product removes these
   * finalizers instead — Cluster API's own, which its paused controller never removes — and the garbage
   * collector carries out the policy the user chose. A deleting CAPI Machine or InfraMachine is a request for
   * that one Machine, which the unpaused Cluster API side performs (§3.5): none for Machines.
   */
  releasedWhileDeleting: readonly FinalizerHolder[];
  /**
   * Step 8: the controller finalizers an authority's side needs before it takes over (one already there
   * counts, as Cluster API's own usually is). A superset of `holdingFinalizers`.
   */
  takeOverFinalizers: Readonly<Record<StableAuthority, readonly FinalizerHolder[]>>;
  /**
   * The finalizers by which an authority's controllers hold the instance: step 9 removes the old
   * authority's, "step 9 has begun" (§3.5) means one of them is gone, and a roll-back removes the target's.
   * Cluster API's own Machine and MachineSet finalizers are not among them: its controllers add them before
   * they check the pause, so they stay on paused objects (harmless: a paused controller does nothing, even
   * on delete) until §4.6 removes them in a deletion; removing them would only make Cluster API add them back.
   */
  holdingFinalizers: Readonly<Record<StableAuthority, readonly FinalizerHolder[]>>;
  /** Step 4: the object whose state decides, and the check, when leaving each authority. */
  provisioning: Readonly<Record<StableAuthority, { role: Role; check: ProvisioningCheck } | undefined>>;
}

/** The platform's InfraMachine finalizer by InfraMachine kind. A kind missing here cannot be handed over. */
export const INFRA_MACHINE_FINALIZERS: Readonly<Record<string, string>> = Object.freeze(
  Object.fromEntries(PLATFORMS.map((p) => [p.infraMachine.kind, p.infraMachineFinalizer])),
);

/** MAPI phases in which the instance exists with a providerID (SPEC §3.1 step 4). */
const MAPI_HANDOVER_PHASES: readonly string[] = ["Provisioned", "Running", "Failed"];

const mapiMachineProvisioned: ProvisioningCheck = (machine) => {
  const phase = phaseOf(machine);
  return MAPI_HANDOVER_PHASES.includes(phase)
    ? undefined
    : `status.phase is ${phase === "" ? "empty" : `"${phase}"`} (needs Provisioned, Running or Failed)`;
};

/** Step 4 leaving ClusterAPI, and admission's `migration-twin-not-ready`: the CAPI Machine has its instance. */
export const capiMachineProvisioned: ProvisioningCheck = (machine) => {
  if (machine === undefined) return "it does not exist";
  if (getPath(machine, ["status", "initialization", "infrastructureProvisioned"]) === true) return undefined;
  if (phaseOf(machine) === "Failed") return undefined;
  return "status.initialization.infrastructureProvisioned is not true";
};

export const HANDOVER_KINDS: Readonly<Record<HandoverKind, HandoverKindDetails>> = Object.freeze({
  Machine: {
    kind: "Machine",
    acknowledgers: ACKNOWLEDGERS.Machine,
    // CAPA reconciles an AWSMachine by its own annotation, not its Machine's: both must be paused (§1).
    pauseTargets: ["capi", "infraMachine"],
    releasedWhileDeleting: [],
    takeOverFinalizers: {
      MachineAPI: [{ role: "mapi", finalizers: [FINALIZERS.mapiMachine] }],
      ClusterAPI: [
        { role: "capi", finalizers: [FINALIZERS.capiMachine] },
        { role: "infraMachine", finalizers: [PLATFORM_INFRA_MACHINE_FINALIZER] },
      ],
    },
    holdingFinalizers: {
      MachineAPI: [{ role: "mapi", finalizers: [FINALIZERS.mapiMachine] }],
      ClusterAPI: [{ role: "infraMachine", finalizers: [PLATFORM_INFRA_MACHINE_FINALIZER] }],
    },
    provisioning: {
      MachineAPI: { role: "mapi", check: mapiMachineProvisioned },
      ClusterAPI: { role: "capi", check: capiMachineProvisioned },
    },
  },
  MachineSet: {
    kind: "MachineSet",
    acknowledgers: ACKNOWLEDGERS.MachineSet,
    pauseTargets: ["capi"],
    releasedWhileDeleting: [{ role: "capi", finalizers: [FINALIZERS.capiMachineSet] }],
    // MAPI MachineSets carry no controller finalizer, and a MachineSet holds no instance itself: steps 8–9
    // of a MachineSet move nothing but Cluster API's own, which stays (so a delete always rolls back, §3.5).
    takeOverFinalizers: {
      MachineAPI: [],
      ClusterAPI: [{ role: "capi", finalizers: [FINALIZERS.capiMachineSet] }],
    },
    holdingFinalizers: { MachineAPI: [], ClusterAPI: [] },
    provisioning: { MachineAPI: undefined, ClusterAPI: undefined },
  },
});

/**
 * The concrete finalizer names of a holder, or undefined when the platform InfraMachine finalizer is
 * needed and the InfraMachine's kind is unknown.
 */
export const resolveFinalizers = (
  holder: FinalizerHolder,
  object: KubeObject | undefined,
): string[] | undefined => {
  const out: string[] = [];
  for (const f of holder.finalizers) {
    if (f !== PLATFORM_INFRA_MACHINE_FINALIZER) {
      out.push(f);
      continue;
    }
    const kind = typeof object?.kind === "string" ? object.kind : "";
    const platform = INFRA_MACHINE_FINALIZERS[kind];
    if (platform === undefined) return undefined;
    out.push(platform);
  }
  return out;
};
