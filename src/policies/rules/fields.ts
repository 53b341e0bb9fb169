/**
 * Field rules of SPEC §2.3: fields the other API cannot represent (`capi-unsupported-fields`, and one
 * `<platform>-unsupported-fields` per platform of the registry: `aws-unsupported-fields`,
 * `openstack-unsupported-fields`, `powervs-unsupported-fields`) and the value set of `spec.authoritativeAPI`
 * (`authority-enum`). They answer 422 Invalid. On UPDATE only a field the request sets or changes is refused,
 * so an object that already carries one (created before the product, or outside its reach) can still have
 * finalizers removed.
 */

import { boundedJson } from "../../json-text.js";
import { FIELD_VALUE_MAX_CHARS } from "../../kube/field-error.js";
import { AUTHORITY } from "../../kube/kinds.js";
import { getPath, isRecord, type KubeObject } from "../../kube/object.js";
import { AWS_PLATFORM, AWS_UNSUPPORTED_FIELDS } from "../../platforms/aws/data.js";
import { OPENSTACK_PLATFORM, OPENSTACK_UNSUPPORTED_FIELDS } from "../../platforms/openstack/data.js";
import { POWERVS_PLATFORM, POWERVS_UNSUPPORTED_FIELDS } from "../../platforms/powervs/data.js";
import { PLATFORMS, type PlatformConverter } from "../../platforms/registry.js";
import { isStableAuthority } from "../../protocol/authority.js";
import { listPaths, sameJson } from "../compare.js";
import { pathOf } from "../diff.js";
import {
  capiResource,
  describeSubject,
  matches,
  pluralOfKind,
  resourceOf,
  type Subject,
  type SubjectFilter,
  subjectFor,
} from "../subject.js";
import type { AdmissionRequest } from "../types.js";
import { allow, deny, type Rule } from "../verdict.js";

/** A value counts as set when it says something: not absent, empty, false or zero. */
const isSet = (v: unknown): boolean => {
  if (v === undefined || v === null || v === "" || v === false || v === 0) return false;
  if (Array.isArray(v)) return v.length > 0;
  if (isRecord(v)) return Object.keys(v).length > 0;
  return true;
};

/**
 * Present at all (SPEC §2.3 `aws-unsupported-fields` and every platform's like it: an empty object `{}`,
 * `false` and `0` included — the converters refuse any value there). `null` is not: the API server prunes
 * it from the stored object.
 */
const isPresent = (v: unknown): boolean => v !== undefined && v !== null;

/** Paths (under `base`) of `fields` that the request sets: present now, and new or changed on UPDATE. */
function setFields(
  request: AdmissionRequest,
  base: readonly string[],
  fields: readonly string[],
  counts: (v: unknown) => boolean = isSet,
): string[] {
  const before: KubeObject | undefined =
    request.operation === "UPDATE" ? (request.oldObject ?? undefined) : undefined;
  const out: string[] = [];
  for (const field of fields) {
    const path = [...base, ...field.split(".")];
    const now = getPath(request.object, path);
    if (counts(now) && !sameJson(now, getPath(before, path))) out.push(pathOf(path));
  }
  return out;
}

const specBase = (subject: Subject): string[] =>
  subject.role === "machineSet" || subject.role === "infraTemplate" ? ["spec", "template", "spec"] : ["spec"];

const editHint = (subject: Subject, resource: string, why: string): string =>
  `Remove ${why} from the manifest (or oc edit ${resource}/${subject.name} -n ${subject.namespace}); the Machine API copy could not be kept in sync otherwise.`;

const CAPI_UNSUPPORTED = ["version", "readinessGates"] as const;

/**
 * A rule refusing fields the other API cannot represent (SPEC §2.3): `fields` under the subject's spec,
 * set as `counts` says (default: set and not empty), on CREATE and UPDATE of the objects `target` matches;
 * `what` names the side that has no place for them.
 */
const unsupportedFieldsRule = (o: {
  id: string;
  target: Omit<SubjectFilter, "operations" | "api">;
  fields: readonly string[];
  counts?: (v: unknown) => boolean;
  what: string;
  resource: (subject: Subject) => string;
}): Rule => ({
  id: o.id,
  webhook: "validate",
  reads: [],
  appliesTo: (request, ctx) =>
    matches(request, ctx.subject, { operations: ["CREATE", "UPDATE"], api: "capi", ...o.target }),
  check: (request, ctx) => {
    const subject = subjectFor(ctx);
    const paths = setFields(request, specBase(subject), o.fields, o.counts);
    if (paths.length === 0) return allow();
    return deny(
      422,
      `${describeSubject(subject)}: ${listPaths(paths)}: Forbidden: ${o.what} cannot represent ${paths.length === 1 ? "this field" : "these fields"}.`,
      paths,
      editHint(subject, o.resource(subject), paths.length === 1 ? "it" : "them"),
    );
  },
});

export const capiUnsupportedFields: Rule = unsupportedFieldsRule({
  id: "capi-unsupported-fields",
  target: { roles: ["machine", "machineSet"] },
  fields: CAPI_UNSUPPORTED,
  what: "Machine API",
  resource: (subject) => capiResource(subject.kind),
});

/** AWSMachine fields the MAPI providerSpec has no place for (SPEC §2.3): the AWS platform's one list. */
export const AWS_UNSUPPORTED = AWS_UNSUPPORTED_FIELDS;

/**
 * Each platform's InfraMachine spec fields the MAPI providerSpec has no place for (dotted, relative to the
 * spec), by the platform's Infrastructure type, with the id of the rule that refuses them — the id the
 * platform's converter names in its own refusals (src/platforms/<name>/index.ts `unsupportedRule`).
 */
export const UNSUPPORTED_FIELDS_BY_PLATFORM: ReadonlyMap<
  string,
  { readonly id: string; readonly fields: readonly string[] }
> = new Map([
  [AWS_PLATFORM, { id: "aws-unsupported-fields", fields: AWS_UNSUPPORTED }],
  [OPENSTACK_PLATFORM, { id: "openstack-unsupported-fields", fields: OPENSTACK_UNSUPPORTED_FIELDS }],
  [POWERVS_PLATFORM, { id: "powervs-unsupported-fields", fields: POWERVS_UNSUPPORTED_FIELDS }],
]);

/**
 * SPEC §2.3 `aws-unsupported-fields` and its like on every platform (§0, §5.5): the platform's fields on its
 * InfraMachine and InfraMachineTemplate (whose spec is under `spec.template.spec`), the kinds as the registry
 * names them. Present means present, as the converters refuse any value there.
 */
const platformUnsupportedFieldsRule = (
  platform: PlatformConverter,
  o: { readonly id: string; readonly fields: readonly string[] },
): Rule =>
  unsupportedFieldsRule({
    id: o.id,
    target: { kinds: [platform.infraMachine.kind, platform.infraMachineTemplate.kind] },
    fields: o.fields,
    counts: isPresent,
    what: "the Machine API providerSpec",
    resource: (subject) => resourceOf(pluralOfKind(subject.kind), subject.group),
  });

/** One `<platform>-unsupported-fields` rule per platform of the registry, in the registry's order. */
export const platformUnsupportedFields: readonly Rule[] = Object.freeze(
  PLATFORMS.flatMap((platform) => {
    const unsupported = UNSUPPORTED_FIELDS_BY_PLATFORM.get(platform.platform);
    return unsupported ? [platformUnsupportedFieldsRule(platform, unsupported)] : [];
  }),
);

export const authorityEnum: Rule = {
  id: "authority-enum",
  webhook: "validate",
  reads: [],
  appliesTo: (request, ctx) =>
    matches(request, ctx.subject, { operations: ["CREATE", "UPDATE"], api: "mapi" }),
  check: (request, ctx) => {
    const subject = subjectFor(ctx);
    const fields = subject.role === "machineSet" ? [["spec"], ["spec", "template", "spec"]] : [["spec"]];
    const before = request.operation === "UPDATE" ? (request.oldObject ?? undefined) : undefined;
    const bad: { path: string; value: unknown }[] = [];
    for (const base of fields) {
      const path = [...base, "authoritativeAPI"];
      const value = getPath(request.object, path);
      if (value === undefined || value === null || isStableAuthority(value)) continue;
      if (before && sameJson(value, getPath(before, path))) continue;
      bad.push({ path: pathOf(path), value });
    }
    if (bad.length === 0) return allow();
    const detail = bad
      .map(
        (b) =>
          `${b.path}: Unsupported value: ${boundedJson(b.value, FIELD_VALUE_MAX_CHARS)}: supported values: "${AUTHORITY.machineAPI}", "${AUTHORITY.clusterAPI}"`,
      )
      .join("; ");
    return deny(
      422,
      `${describeSubject(subject)}: ${detail}.`,
      bad.map((b) => b.path),
      `Use ${AUTHORITY.machineAPI} or ${AUTHORITY.clusterAPI}; Migrating is a status value only the migration controller writes.`,
    );
  },
};
