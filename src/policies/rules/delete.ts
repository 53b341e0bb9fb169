/**
 * The DELETE rules of SPEC §2.3, on the warn webhook (failurePolicy Ignore, so they only ever add safety):
 * deleting a non-authoritative MAPI MachineSet orphans its Machines and must not cascade in the foreground
 * (`delete-nonauthoritative-parent`); deleting the CAPI mirror of an authoritative MAPI object also deletes
 * the MAPI object, so it warns and, with `requireDeleteConfirmation`, needs the `confirm-delete` annotation
 * (`delete-authoritative-via-mirror`). DELETE requests carry the object in `oldObject`.
 */
import { ANNOTATIONS, AUTHORITY, CAPI_GROUP, KINDS, MAPI_GROUP } from "../../kube/kinds.js";
import { annotationsOf, type KubeObject, nameOf, ownerReferencesOf } from "../../kube/object.js";
import { annotationPath } from "../keys.js";
import {
  capiResource,
  describe,
  describeSubject,
  groupOfApiVersion,
  mapiResource,
  mapiTypeFor,
  matches,
  statusAuthorityOf,
  subjectFor,
  subjectObject,
} from "../subject.js";
import type { ClusterView } from "../types.js";
import { allow, deny, type Rule, warn } from "../verdict.js";

/** Machines of `group` in `namespace` whose ownerReferences name the MachineSet `setName` of that group. */
function ownedMachines(view: ClusterView, group: string, namespace: string, setName: string): KubeObject[] {
  const type = group === MAPI_GROUP ? KINDS.mapiMachine : KINDS.capiMachine;
  return view
    .list(type, namespace)
    .filter((m) =>
      ownerReferencesOf(m).some(
        (ref) =>
          ref.kind === "MachineSet" && ref.name === setName && groupOfApiVersion(ref.apiVersion) === group,
      ),
    );
}

const machinesPhrase = (n: number): string => `${n} Machine${n === 1 ? "" : "s"}`;

export const deleteNonauthoritativeParent: Rule = {
  id: "delete-nonauthoritative-parent",
  webhook: "validate-warn",
  reads: [KINDS.capiMachineSet, KINDS.capiMachine],
  appliesTo: (request, ctx) =>
    matches(request, ctx.settings, { operations: ["DELETE"], api: "mapi", roles: ["machineSet"] }),
  check: (request, ctx) => {
    const subject = subjectFor(request, ctx.settings);
    if (statusAuthorityOf(request.oldObject ?? undefined) !== AUTHORITY.clusterAPI) return allow();
    const capiNs = ctx.settings.capiNamespace;
    const capiSet = ctx.view.twinOf(subjectObject(subject, request));
    const count = ownedMachines(ctx.view, CAPI_GROUP, capiNs, subject.name).length;
    const survivors = `${describe("capi", "MachineSet", capiNs, subject.name)} and its ${machinesPhrase(count)} keep running`;
    const policy = request.options?.propagationPolicy;
    if (policy === "Foreground")
      return deny(
        403,
        `Deleting ${describeSubject(subject)} with propagationPolicy=Foreground is refused: it is not authoritative (status.authoritativeAPI=ClusterAPI) and the garbage collector would delete its Machines before they can be orphaned.`,
        ["propagationPolicy"],
        `Delete it with the default propagation or orphan its Machines: oc delete ${mapiResource(subject.kind)}/${subject.name} -n ${subject.namespace} --cascade=orphan`,
      );
    return capiSet ? warn(survivors) : allow();
  },
};

export const deleteAuthoritativeViaMirror: Rule = {
  id: "delete-authoritative-via-mirror",
  webhook: "validate-warn",
  reads: (request) => [mapiTypeFor(request), KINDS.mapiMachine],
  appliesTo: (request, ctx) =>
    matches(request, ctx.settings, { operations: ["DELETE"], api: "capi", roles: ["machine", "machineSet"] }),
  check: (request, ctx) => {
    const subject = subjectFor(request, ctx.settings);
    const mapi = ctx.view.twinOf(subjectObject(subject, request));
    if (statusAuthorityOf(mapi) !== AUTHORITY.machineAPI) return allow();
    const mapiNs = ctx.settings.mapiNamespace;
    const mapiName = nameOf(mapi);
    const members =
      subject.kind === "MachineSet"
        ? ` (and its ${machinesPhrase(ownedMachines(ctx.view, MAPI_GROUP, mapiNs, mapiName).length)})`
        : "";
    const also = `also deletes the authoritative ${describe("mapi", subject.kind, mapiNs, mapiName)}${members}`;
    const confirmed = annotationsOf(request.oldObject ?? undefined)[ANNOTATIONS.confirmDelete] === "true";
    if (!ctx.settings.requireDeleteConfirmation || confirmed) return warn(`this ${also}`);
    return deny(
      403,
      `Deleting ${describeSubject(subject)} ${also}, which the Machine API controllers run (status.authoritativeAPI=MachineAPI); it needs confirmation.`,
      [annotationPath(ANNOTATIONS.confirmDelete)],
      `To delete both, confirm first: oc annotate ${capiResource(subject.kind)}/${subject.name} -n ${subject.namespace} ${ANNOTATIONS.confirmDelete}=true, then delete again — or delete the authoritative copy: oc delete ${mapiResource(subject.kind)}/${mapiName} -n ${mapiNs}`,
    );
  },
};
