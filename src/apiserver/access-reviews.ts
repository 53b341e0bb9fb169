/**
 * The access-review APIs, as kube-apiserver 1.33 answers them (pkg/registry/authorization and
 * authentication): create-only kinds whose create is a question — SelfSubjectAccessReview (`kubectl auth
 * can-i`), SubjectAccessReview (the metrics endpoints' authorizer, SPEC §2.1), SelfSubjectRulesReview
 * (`kubectl auth can-i --list`), SelfSubjectReview (`kubectl auth whoami`) and TokenReview. Nothing is
 * stored; the answer is the request with its status. Decisions come from the server's own authorizer
 * (rbac.ts) and its own token table, so an answer here is what the same request would get. Pure: the
 * request and the deps in, the answer out (or an ApiError); http.ts routes POSTs here.
 */
import { isRecord } from "../kube/object.js";
import { appendAll } from "../lists.js";
import {
  type Attributes,
  type Authorizer,
  aggregateErrors,
  FULL_AUTHORITY,
  type PolicyRule,
  type PolicyView,
  rulesFor,
  stringsOf,
} from "./rbac.js";
import { badRequest, invalid } from "./status.js";
import type { StatusCause, UserInfo } from "./types.js";

export interface ReviewDeps {
  authorize: Authorizer;
  policy: PolicyView;
  /** The user a bearer token names, as the server's authenticator finds it. */
  authenticate(token: string): UserInfo | undefined;
  /** The server's time as metadata carries it (RFC 3339 seconds). */
  now(): string;
  /** What a TokenReview without audiences is checked against: the server's API audiences. */
  apiAudiences: readonly string[];
}

/** The server's API audiences: its ServiceAccount token issuer, as kube-apiserver defaults them. */
export const API_AUDIENCES: readonly string[] = ["https://kubernetes.default.svc"];

const AUTHZ = "authorization.k8s.io";
const AUTHN = "authentication.k8s.io";

/** The review kinds this server serves, as the registry lists them (create is their only verb). */
export const REVIEW_KINDS = [
  { group: AUTHZ, kind: "SelfSubjectAccessReview", plural: "selfsubjectaccessreviews" },
  { group: AUTHZ, kind: "SubjectAccessReview", plural: "subjectaccessreviews" },
  { group: AUTHZ, kind: "SelfSubjectRulesReview", plural: "selfsubjectrulesreviews" },
  { group: AUTHN, kind: "SelfSubjectReview", plural: "selfsubjectreviews" },
  { group: AUTHN, kind: "TokenReview", plural: "tokenreviews" },
] as const;

type Json = Record<string, unknown>;

const record = (v: unknown): Json | undefined => (isRecord(v) ? v : undefined);
const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** Go's omitempty: the fields with a value. */
const compact = (o: Json): Json =>
  Object.fromEntries(
    Object.entries(o).filter(
      ([, v]) =>
        v !== undefined &&
        v !== "" &&
        !(Array.isArray(v) && v.length === 0) &&
        !(isRecord(v) && Object.keys(v).length === 0),
    ),
  );

const selectorAttributes = (v: unknown): Json | undefined => {
  const s = record(v);
  if (!s) return undefined;
  const requirements = Array.isArray(s.requirements)
    ? s.requirements.map((r) =>
        compact({
          key: str(record(r)?.key),
          operator: str(record(r)?.operator),
          values: stringsOf(record(r)?.values),
        }),
      )
    : [];
  return compact({ rawSelector: str(s.rawSelector), requirements });
};

/** spec.resourceAttributes as kube decodes it (typed: unknown fields dropped, empty strings omitted). */
const resourceAttributes = (v: unknown): Json | undefined => {
  const a = record(v);
  if (!a) return undefined;
  const out = compact({
    namespace: str(a.namespace),
    verb: str(a.verb),
    group: str(a.group),
    version: str(a.version),
    resource: str(a.resource),
    subresource: str(a.subresource),
    name: str(a.name),
  });
  const fieldSelector = selectorAttributes(a.fieldSelector);
  const labelSelector = selectorAttributes(a.labelSelector);
  return { ...out, ...(fieldSelector ? { fieldSelector } : {}), ...(labelSelector ? { labelSelector } : {}) };
};

const nonResourceAttributes = (v: unknown): Json | undefined => {
  const a = record(v);
  return a ? compact({ path: str(a.path), verb: str(a.verb) }) : undefined;
};

const invalidValue = (field: string, value: string, detail: string): StatusCause => ({
  reason: "FieldValueInvalid",
  message: `Invalid value: ${value}: ${detail}`,
  field,
});

/** Go's `%#v` of the internal NonResourceAttributes a field error shows. */
const goNonResource = (a: Json | undefined): string =>
  a
    ? `authorization.NonResourceAttributes{Path:${JSON.stringify(str(a.path))}, Verb:${JSON.stringify(str(a.verb))}}`
    : '"null"';

/** The attributes both access reviews share, checked as kube's ValidateSubjectAccessReviewSpec does. */
const attributeCauses = (resource: Json | undefined, nonResource: Json | undefined): StatusCause[] => {
  const causes: StatusCause[] = [];
  if (resource && nonResource)
    causes.push(
      invalidValue(
        "spec.nonResourceAttributes",
        goNonResource(nonResource),
        "cannot be specified in combination with resourceAttributes",
      ),
    );
  if (!resource && !nonResource)
    causes.push(
      invalidValue(
        "spec.resourceAttributes",
        goNonResource(nonResource),
        "exactly one of nonResourceAttributes or resourceAttributes must be specified",
      ),
    );
  for (const which of ["fieldSelector", "labelSelector"] as const) {
    const s = record(resource?.[which]);
    if (!s) continue;
    const path = `spec.resourceAttributes.${which}`;
    const raw = str(s.rawSelector);
    const reqs = Array.isArray(s.requirements) ? s.requirements : [];
    if (raw && reqs.length > 0)
      causes.push(
        invalidValue(
          `${path}.rawSelector`,
          JSON.stringify(raw),
          "may not specified at the same time as requirements",
        ),
      );
    if (!raw && reqs.length === 0)
      causes.push({
        reason: "FieldValueRequired",
        message: `Required value: when ${path} is specified, requirements or rawSelector is required`,
        field: `${path}.requirements`,
      });
  }
  return causes;
};

/** metadata must be empty (managedFields aside): kube compares it with a zero ObjectMeta. */
const metadataCauses = (body: Json): StatusCause[] => {
  const m = { ...(record(body.metadata) ?? {}) };
  delete m.managedFields;
  // kube prints the whole Go ObjectMeta as the value; the JSON given stands in for it here.
  return Object.keys(compact(m)).length > 0
    ? [invalidValue("metadata", JSON.stringify(m), "must be empty")]
    : [];
};

/** kube's ResourceAttributesFrom / NonResourceAttributesFrom: the question the authorizer is asked. */
const attributesOf = (
  user: UserInfo,
  resource: Json | undefined,
  nonResource: Json | undefined,
): Attributes =>
  resource
    ? {
        user,
        verb: str(resource.verb),
        resourceRequest: true,
        apiGroup: str(resource.group),
        resource: str(resource.resource),
        subresource: str(resource.subresource),
        namespace: str(resource.namespace),
        name: str(resource.name),
      }
    : { user, verb: str(nonResource?.verb), resourceRequest: false, path: str(nonResource?.path) };

/** The status an authorizer's decision gives (RBAC never denies: `denied` is for deny-capable webhooks). */
const decided = (deps: ReviewDeps, attributes: Attributes): Json => {
  const decision = deps.authorize(attributes);
  return { allowed: decision.allowed, ...(decision.reason ? { reason: decision.reason } : {}) };
};

const EMPTY_META = { creationTimestamp: null };

const accessReview = (
  deps: ReviewDeps,
  kind: "SelfSubjectAccessReview" | "SubjectAccessReview",
  body: Json,
  user: UserInfo,
): Json => {
  const spec = record(body.spec) ?? {};
  const resource = resourceAttributes(spec.resourceAttributes);
  const nonResource = nonResourceAttributes(spec.nonResourceAttributes);
  const subject =
    kind === "SubjectAccessReview"
      ? {
          user: str(spec.user),
          groups: stringsOf(spec.groups),
          uid: str(spec.uid),
          extra: record(spec.extra) ?? {},
        }
      : undefined;
  const causes = attributeCauses(resource, nonResource);
  if (subject && subject.user === "" && subject.groups.length === 0)
    causes.push(invalidValue("spec.user", '""', "at least one of user or group must be specified"));
  appendAll(causes, metadataCauses(body));
  // kube names the kind from the decoded internal object, whose TypeMeta is empty: the details carry none.
  if (causes.length > 0) throw invalid(AUTHZ, "", "", causes);
  const asked: UserInfo = subject
    ? { username: subject.user, groups: subject.groups, ...(subject.uid ? { uid: subject.uid } : {}) }
    : user;
  const echoed = compact({
    resourceAttributes: resource,
    nonResourceAttributes: nonResource,
    ...(subject
      ? { user: subject.user, groups: subject.groups, uid: subject.uid, extra: subject.extra }
      : {}),
  });
  return {
    kind,
    apiVersion: `${AUTHZ}/v1`,
    metadata: EMPTY_META,
    spec: echoed,
    status: decided(deps, attributesOf(asked, resource, nonResource)),
  };
};

/** kube's RBAC `RulesFor` as the rules review shows it: resource rules and non-resource rules apart. */
const rulesReview = (deps: ReviewDeps, body: Json, user: UserInfo): Json => {
  const namespace = str(record(body.spec)?.namespace);
  if (!namespace) throw badRequest("no namespace on request");
  const masters = user.groups.includes("system:masters");
  // The rules review asks the authorizer's resolver, whose listers word a missing role their way.
  const held = rulesFor(deps.policy, user, namespace, "lister");
  // kube's privileged-group authorizer lists every permission for system:masters, ahead of RBAC's rules.
  const all: PolicyRule[] = [...(masters ? FULL_AUTHORITY : []), ...held.rules];
  const resourceRules = all
    .filter((r) => r.resources.length > 0)
    .map((r) =>
      compact({
        verbs: [...r.verbs],
        apiGroups: [...r.apiGroups],
        resources: [...r.resources],
        resourceNames: [...r.resourceNames],
      }),
    );
  const nonResourceRules = all
    .filter((r) => r.nonResourceURLs.length > 0)
    .map((r) => ({ verbs: [...r.verbs], nonResourceURLs: [...r.nonResourceURLs] }));
  return {
    kind: "SelfSubjectRulesReview",
    apiVersion: `${AUTHZ}/v1`,
    metadata: EMPTY_META,
    spec: {},
    status: {
      resourceRules,
      nonResourceRules,
      incomplete: false,
      ...(held.errors.length > 0 ? { evaluationError: aggregateErrors(held.errors) } : {}),
    },
  };
};

const userInfoOf = (u: UserInfo): Json =>
  compact({ username: u.username, uid: u.uid ?? "", groups: [...u.groups] });

const tokenReview = (deps: ReviewDeps, body: Json): Json => {
  const spec = record(body.spec) ?? {};
  const token = str(spec.token);
  if (!token) throw badRequest("token is required for TokenReview in authentication");
  const audiences = stringsOf(spec.audiences);
  const user = deps.authenticate(token);
  const status: Json = user
    ? {
        authenticated: true,
        user: userInfoOf(user),
        audiences: [...(audiences.length > 0 ? audiences : deps.apiAudiences)],
      }
    : { user: {}, error: "invalid bearer token" };
  return {
    kind: "TokenReview",
    apiVersion: `${AUTHN}/v1`,
    metadata: EMPTY_META,
    spec: compact({ token, audiences }),
    status,
  };
};

/**
 * The answer to a POST of a review kind by `user` (namespace "" for these cluster-scoped kinds), or the
 * ApiError kube answers.
 */
export const answerReview = (deps: ReviewDeps, kind: string, body: unknown, user: UserInfo): Json => {
  const b = record(body) ?? {};
  switch (kind) {
    case "SelfSubjectAccessReview":
    case "SubjectAccessReview":
      return accessReview(deps, kind, b, user);
    case "SelfSubjectRulesReview":
      return rulesReview(deps, b, user);
    case "SelfSubjectReview":
      return {
        kind: "SelfSubjectReview",
        apiVersion: `${AUTHN}/v1`,
        metadata: { creationTimestamp: deps.now() },
        status: { userInfo: userInfoOf(user) },
      };
    case "TokenReview":
      return tokenReview(deps, b);
    default:
      throw badRequest(`not a review kind: ${kind}`);
  }
};
