/**
 * The pause rules: `unpause-twin` (SPEC §2.3) refuses removing a pause the product put on a CAPI twin, from
 * the request alone so a stale cache cannot open the door; `pause-new-capi` (SPEC §2.4, mutating) pauses a
 * CAPI object created while its MAPI twin holds authority, adopting a pause that is already there by
 * adding the product's marker. The mutation edits a draft; the engine turns it into a JSON Patch.
 */
import { ANNOTATIONS, AUTHORITY, CAPI_GROUP, LABELS, PAUSED_BY_VALUE } from "../../kube/kinds.js";
import { annotationsOf, isRecord, type KubeObject, nameOf, ownerReferencesOf } from "../../kube/object.js";
import { isPausedWithMarker } from "../../protocol/pause.js";
import { annotationPath } from "../keys.js";
import {
  authoritativeTwinOfCreate,
  classifyObject,
  describe,
  groupOfApiVersion,
  mapiTypeFor,
  matches,
  requestNamespace,
  setAuthorityCommand,
  twinReadsFor,
} from "../subject.js";
import { allow, deny, mutate, type Rule } from "../verdict.js";

/**
 * The MAPI object a paused CAPI object mirrors, worked out from the object alone (the rule must not
 * depend on the cache): same name for Machines and MachineSets, the owner CAPI Machine for InfraMachines,
 * the template label for templates.
 */
function mapiCounterpart(o: KubeObject | undefined): { kind: string; name: string } | undefined {
  const role = classifyObject(o);
  if (!role) return undefined;
  switch (role.role) {
    case "machine":
    case "machineSet":
      return { kind: role.role === "machine" ? "Machine" : "MachineSet", name: nameOf(o) };
    case "infraMachine": {
      const owner = ownerReferencesOf(o).find(
        (ref) => ref.kind === "Machine" && groupOfApiVersion(ref.apiVersion) === CAPI_GROUP,
      );
      return { kind: "Machine", name: typeof owner?.name === "string" ? owner.name : nameOf(o) };
    }
    case "infraTemplate": {
      const name = templateSetName(o);
      return name ? { kind: "MachineSet", name } : undefined;
    }
  }
}
const templateSetName = (o: KubeObject | undefined): string | undefined => {
  const labels = isRecord(o?.metadata?.labels) ? o.metadata.labels : {};
  const v = labels[LABELS.templateMachineSet];
  return typeof v === "string" && v ? v : undefined;
};

export const unpauseTwin: Rule = {
  id: "unpause-twin",
  webhook: "validate",
  reads: [],
  appliesTo: (request, ctx) =>
    request.operation === "UPDATE" &&
    !request.subResource &&
    requestNamespace(request) === ctx.settings.capiNamespace,
  check: (request, ctx) => {
    const before = request.oldObject ?? undefined;
    if (!isPausedWithMarker(before)) return allow();
    const after = annotationsOf(request.object ?? undefined);
    const paths = [
      ...(Object.hasOwn(after, ANNOTATIONS.paused) ? [] : [annotationPath(ANNOTATIONS.paused)]),
      ...(after[ANNOTATIONS.pausedBy] === PAUSED_BY_VALUE ? [] : [annotationPath(ANNOTATIONS.pausedBy)]),
    ];
    if (paths.length === 0) return allow();
    const mapi = mapiCounterpart(before);
    const ns = ctx.settings.mapiNamespace;
    const copyOf = mapi
      ? `the paused copy of ${describe("mapi", mapi.kind, ns, mapi.name)}`
      : "paused by machine-api-migration";
    const hint = mapi
      ? `To make the Cluster API copy authoritative, migrate the MAPI ${mapi.kind}: ${setAuthorityCommand(mapi.kind, ns, mapi.name, AUTHORITY.clusterAPI)}`
      : "To make the Cluster API copy authoritative, migrate its MAPI twin by setting spec.authoritativeAPI=ClusterAPI.";
    return deny(
      403,
      `unpausing is refused: this is ${copyOf}; only the handover unpauses it (${paths.map((p) => `${p} removed`).join(", ")}).`,
      paths,
      hint,
    );
  },
};

export const pauseNewCapi: Rule = {
  id: "pause-new-capi",
  webhook: "mutate",
  reads: twinReadsFor,
  appliesTo: (request, ctx) => matches(request, ctx.subject, { operations: ["CREATE"], api: "capi" }),
  check: (request, ctx) => {
    const twin = authoritativeTwinOfCreate(request, ctx);
    if (!twin || isPausedWithMarker(request.object ?? undefined)) return allow();
    const { mapi, status } = twin;
    const mapiWords = describe("mapi", mapiTypeFor(request).kind, ctx.settings.mapiNamespace, nameOf(mapi));
    const why = status === AUTHORITY.migrating ? "is being migrated" : "is authoritative";
    return mutate((draft) => {
      if (!isRecord(draft.metadata)) draft.metadata = {};
      const annotations = isRecord(draft.metadata.annotations) ? draft.metadata.annotations : {};
      if (typeof annotations[ANNOTATIONS.paused] !== "string") annotations[ANNOTATIONS.paused] = "";
      annotations[ANNOTATIONS.pausedBy] = PAUSED_BY_VALUE;
      draft.metadata.annotations = annotations;
    }, `paused: ${mapiWords} ${why}`);
  },
};
