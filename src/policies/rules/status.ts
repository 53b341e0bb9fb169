/**
 * `status-owned-by-controllers` (SPEC §2.3): through the `status` subresource of MAPI Machines and
 * MachineSets nobody but the controllers may change the authority fields or the `Synchronized`/`Paused`
 * conditions — they are the handover's record of what is in force. This is the only rule that judges the
 * `status` subresource; other status fields (phase, addresses, …) stay editable.
 */
import { CONDITIONS } from "../../kube/kinds.js";
import { getPath, isRecord, type KubeObject } from "../../kube/object.js";
import { listPaths, sameJson } from "../compare.js";
import { describeSubject, mapiResource, matches, subjectFor } from "../subject.js";
import { allow, deny, type Rule } from "../verdict.js";

const OWNED_FIELDS = ["authoritativeAPI", "synchronizedAPI", "synchronizedGeneration"] as const;
const OWNED_CONDITIONS = [CONDITIONS.synchronized, CONDITIONS.paused] as const;

/** The raw condition entries of one type (all of them: a duplicate entry is a change too). */
const conditionEntries = (o: KubeObject | null, type: string): unknown[] => {
  const list = getPath(o, ["status", "conditions"]);
  return Array.isArray(list) ? list.filter((c) => isRecord(c) && c.type === type) : [];
};

export const statusOwnedByControllers: Rule = {
  id: "status-owned-by-controllers",
  webhook: "validate",
  reads: [],
  appliesTo: (request, ctx) =>
    matches(request, ctx.subject, { operations: ["UPDATE"], api: "mapi", subResources: ["status"] }),
  check: (request, ctx) => {
    const subject = subjectFor(ctx);
    const paths: string[] = [];
    for (const field of OWNED_FIELDS)
      if (
        !sameJson(getPath(request.oldObject, ["status", field]), getPath(request.object, ["status", field]))
      )
        paths.push(`status.${field}`);
    for (const type of OWNED_CONDITIONS)
      if (!sameJson(conditionEntries(request.oldObject, type), conditionEntries(request.object, type)))
        paths.push(`status.conditions[type=${type}]`);
    if (paths.length === 0) return allow();
    return deny(
      403,
      `${describeSubject(subject)}: ${listPaths(paths)} changed: these status fields are written only by the migration and sync controllers.`,
      paths,
      `To change authority set spec.authoritativeAPI instead: oc edit ${mapiResource(subject.kind)}/${subject.name} -n ${subject.namespace}`,
    );
  },
};
