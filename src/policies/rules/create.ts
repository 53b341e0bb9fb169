/**
 * The create rules of SPEC §2.3: a CAPI object created while its MAPI twin holds authority must be
 * paused (`capi-create-paused`, the backstop of the mutating `pause-new-capi`) — an infrastructure object
 * while any MAPI object it may mirror does (by its name, owners, template label or the CAPI copy that
 * references it: view.ts), so no owner or label it is created with can choose its judge; an unpaused CAPI
 * twin may be created for a ClusterAPI-authoritative MAPI object only once the MAPI controllers acknowledged
 * the pause (`capi-create-twin-paused`); a MAPI object created next to an existing CAPI twin must leave
 * authority with it (`mapi-create-twin`).
 */
import { ANNOTATIONS, AUTHORITY, CONDITIONS } from "../../kube/kinds.js";
import { conditionOf, nameOf } from "../../kube/object.js";
import { specAuthorityAsWritten, statusAuthority } from "../../protocol/authority.js";
import { isPaused } from "../../protocol/pause.js";
import { annotationPath } from "../keys.js";
import {
  authoritativeTwinOfCreate,
  capiResource,
  capiTypeFor,
  describe,
  describeSubject,
  mapiResource,
  mapiTypeFor,
  matches,
  subjectFor,
  subjectObject,
  twinReadsFor,
} from "../subject.js";
import { allow, deny, type Rule } from "../verdict.js";

export const capiCreatePaused: Rule = {
  id: "capi-create-paused",
  webhook: "validate",
  reads: twinReadsFor,
  appliesTo: (request, ctx) => matches(request, ctx.subject, { operations: ["CREATE"], api: "capi" }),
  check: (request, ctx) => {
    const twin = authoritativeTwinOfCreate(request, ctx);
    if (!twin || isPaused(request.object ?? undefined)) return allow();
    const { mapi, status } = twin;
    const mapiKind = mapiTypeFor(request).kind;
    const mapiWords = describe("mapi", mapiKind, ctx.settings.mapiNamespace, nameOf(mapi));
    const subject = subjectFor(ctx);
    const state =
      status === undefined ? "no status.authoritativeAPI yet" : `status.authoritativeAPI=${status}`;
    const path = annotationPath(ANNOTATIONS.paused);
    return deny(
      403,
      `${describeSubject(subject)} must be created paused while ${mapiWords} holds authority (${state}): ${path} is missing.`,
      [path],
      `Add the annotation ${ANNOTATIONS.paused}: "" (the mutating webhook normally adds it; check that machine-api-migration-mutate is running), or migrate the MAPI ${mapiKind} to Cluster API first.`,
    );
  },
};

export const capiCreateTwinPaused: Rule = {
  id: "capi-create-twin-paused",
  webhook: "validate",
  reads: (request) => [mapiTypeFor(request)],
  appliesTo: (request, ctx) =>
    matches(request, ctx.subject, { operations: ["CREATE"], api: "capi", roles: ["machine", "machineSet"] }),
  check: (request, ctx) => {
    const subject = subjectFor(ctx);
    const mapi = ctx.view.twinOf(subjectObject(subject, request));
    if (statusAuthority(mapi) !== AUTHORITY.clusterAPI) return allow();
    const paused = conditionOf(mapi, CONDITIONS.paused);
    if (paused?.status === "True") return allow();
    const mapiNs = ctx.settings.mapiNamespace;
    const mapiName = nameOf(mapi);
    const seen = paused ? `Paused=${paused.status}` : "no Paused condition";
    return deny(
      403,
      `${describeSubject(subject)} cannot be created yet: its twin ${describe("mapi", subject.kind, mapiNs, mapiName)} has status.authoritativeAPI=ClusterAPI but reports ${seen}, so the Machine API controllers may still act on it.`,
      ["status.conditions[type=Paused]"],
      `Retry once oc get ${mapiResource(subject.kind)}/${mapiName} -n ${mapiNs} -o jsonpath='{.status.conditions[?(@.type=="Paused")].status}' prints True.`,
    );
  },
};

export const mapiCreateTwin: Rule = {
  id: "mapi-create-twin",
  webhook: "validate",
  reads: (request) => [capiTypeFor(request)],
  appliesTo: (request, ctx) => matches(request, ctx.subject, { operations: ["CREATE"], api: "mapi" }),
  check: (request, ctx) => {
    const subject = subjectFor(ctx);
    const capi = ctx.view.twinOf(subjectObject(subject, request));
    if (!capi) return allow();
    const authority = specAuthorityAsWritten(request.object ?? undefined);
    if (authority === AUTHORITY.clusterAPI) return allow();
    const capiWords = describe("capi", subject.kind, ctx.settings.capiNamespace, nameOf(capi));
    const deletedAt = capi.metadata?.deletionTimestamp;
    if (deletedAt)
      // An earlier object's twin on its way out (decision 180): the name is free once it is gone.
      return deny(
        403,
        `${describeSubject(subject)} cannot be created with spec.authoritativeAPI=${String(authority)} yet: ${capiWords} of that name is still being deleted (since ${deletedAt}).`,
        ["spec.authoritativeAPI"],
        `Create it once that copy is gone: oc wait --for=delete ${capiResource(subject.kind)}/${nameOf(capi)} -n ${ctx.settings.capiNamespace}; until then it may still hold an instance.`,
      );
    return deny(
      403,
      `${describeSubject(subject)} cannot be created with spec.authoritativeAPI=${String(authority)}: ${capiWords} already exists and would be a second copy acting on the same machines.`,
      ["spec.authoritativeAPI"],
      `Write spec.authoritativeAPI: ClusterAPI explicitly (an omitted value defaults to MachineAPI) so the existing copy stays authoritative; inspect it with oc get ${capiResource(subject.kind)}/${nameOf(capi)} -n ${ctx.settings.capiNamespace} -o yaml.`,
    );
  },
};
