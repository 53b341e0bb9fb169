/**
 * The shapes of the built-in kinds that decide field ownership (managed-fields.ts), read off k8s.io/api
 * v0.33's types. Data, not logic: a row per built-in kind this server stores or answers.
 *
 * What kube-apiserver's field manager compares a create with: the kind's Go type as `New()` makes it,
 * converted to JSON. A map (or null) already there is not *added* by the create, so it is not a member of
 * the creator's field set (managed-fields.ts); its fields still are. Only the nodes that decide membership
 * are listed — maps, nulls and zero values a client commonly sends — read off k8s.io/api v0.33's types
 * (a non-pointer struct is never omitted, `omitempty` or not). Custom resources are `Unstructured`: empty.
 */

import { splitApiVersion } from "../kube/discovery.js";
import type { ListTypes } from "./managed-fields.js";

type Empty = Readonly<Record<string, unknown>>;

const META = { metadata: {} };
const POD_TEMPLATE = { metadata: {}, spec: { containers: null } };
const ROLE_REF = { apiGroup: "", kind: "", name: "" };
const REVIEW = { ...META, spec: {} };

/** `group/Kind` (core kinds: `/Kind`) → the JSON of its `New()`. */
const EMPTY_OBJECTS: Readonly<Record<string, Empty>> = {
  "/ConfigMap": META,
  "/Secret": META,
  "/ServiceAccount": META,
  "/Endpoints": META,
  "/Namespace": { ...META, spec: {}, status: {} },
  "/Event": {
    ...META,
    involvedObject: {},
    source: {},
    firstTimestamp: null,
    lastTimestamp: null,
    eventTime: null,
    reportingComponent: "",
    reportingInstance: "",
  },
  "/Service": { ...META, spec: {}, status: { loadBalancer: {} } },
  "/Pod": { ...META, spec: { containers: null }, status: {} },
  "/Node": {
    ...META,
    spec: {},
    status: { daemonEndpoints: { kubeletEndpoint: { Port: 0 } }, nodeInfo: {} },
  },
  "apps/Deployment": {
    ...META,
    spec: { selector: null, template: POD_TEMPLATE, strategy: {} },
    status: {},
  },
  "apps/ReplicaSet": { ...META, spec: { selector: null, template: POD_TEMPLATE }, status: { replicas: 0 } },
  "apps/StatefulSet": {
    ...META,
    spec: { selector: null, template: POD_TEMPLATE, serviceName: "", updateStrategy: {} },
    status: { replicas: 0, availableReplicas: 0 },
  },
  "apps/DaemonSet": {
    ...META,
    spec: { selector: null, template: POD_TEMPLATE, updateStrategy: {} },
    status: { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 },
  },
  "coordination.k8s.io/Lease": { ...META, spec: {} },
  "events.k8s.io/Event": {
    ...META,
    eventTime: null,
    regarding: {},
    deprecatedSource: {},
    deprecatedFirstTimestamp: null,
    deprecatedLastTimestamp: null,
  },
  "admissionregistration.k8s.io/MutatingWebhookConfiguration": META,
  "admissionregistration.k8s.io/ValidatingWebhookConfiguration": META,
  "apiextensions.k8s.io/CustomResourceDefinition": {
    ...META,
    spec: { group: "", names: { plural: "", kind: "" }, scope: "", versions: null },
    status: { acceptedNames: { plural: "", kind: "" }, storedVersions: null },
  },
  "rbac.authorization.k8s.io/ClusterRole": { ...META, rules: null },
  "rbac.authorization.k8s.io/Role": { ...META, rules: null },
  "rbac.authorization.k8s.io/ClusterRoleBinding": { ...META, roleRef: ROLE_REF },
  "rbac.authorization.k8s.io/RoleBinding": { ...META, roleRef: ROLE_REF },
  "policy/PodDisruptionBudget": {
    ...META,
    spec: {},
    status: { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 },
  },
  "scheduling.k8s.io/PriorityClass": { ...META, value: 0 },
  "networking.k8s.io/NetworkPolicy": { ...META, spec: { podSelector: {} } },
  "authentication.k8s.io/TokenReview": { ...REVIEW, status: { user: {} } },
  "authentication.k8s.io/SelfSubjectReview": { ...META, status: { userInfo: {} } },
  "authorization.k8s.io/SubjectAccessReview": { ...REVIEW, status: { allowed: false } },
  "authorization.k8s.io/SelfSubjectAccessReview": { ...REVIEW, status: { allowed: false } },
  "authorization.k8s.io/SelfSubjectRulesReview": {
    ...REVIEW,
    status: { resourceRules: null, nonResourceRules: null, incomplete: false },
  },
};

const NOTHING: Empty = {};

/** The object a create of `obj`'s kind is compared with (custom and unknown kinds: nothing). */
export const emptyObjectOf = (obj: { apiVersion?: unknown; kind?: unknown }): Empty => {
  if (typeof obj.apiVersion !== "string" || typeof obj.kind !== "string") return NOTHING;
  return EMPTY_OBJECTS[`${splitApiVersion(obj.apiVersion).group}/${obj.kind}`] ?? NOTHING;
};

const SELECTOR = ["spec.selector"]; // metav1.LabelSelector is +structType=atomic

/**
 * The fields of a built-in kind whose struct is `+structType=atomic` (owned whole: RoleRef, ObjectReference,
 * LabelSelector). Its lists stay atomic here (this server does not model their list types).
 */
const ATOMIC_MAPS: Readonly<Record<string, readonly string[]>> = {
  "/Event": ["involvedObject", "related"],
  "events.k8s.io/Event": ["regarding", "related"],
  "apps/Deployment": SELECTOR,
  "apps/ReplicaSet": SELECTOR,
  "apps/StatefulSet": SELECTOR,
  "apps/DaemonSet": SELECTOR,
  "policy/PodDisruptionBudget": SELECTOR,
  "networking.k8s.io/NetworkPolicy": ["spec.podSelector"],
  "rbac.authorization.k8s.io/ClusterRoleBinding": ["roleRef"],
  "rbac.authorization.k8s.io/RoleBinding": ["roleRef"],
};

const ATOMIC = { type: "atomic" } as const;

/** The field types of a built-in kind (`group/Kind`, core kinds `/Kind`): its atomic structs. */
export const builtinFieldTypes = (group: string, kind: string): ListTypes | undefined => {
  const atomic = ATOMIC_MAPS[`${group}/${kind}`];
  if (!atomic) return undefined;
  return (path) => (atomic.includes(path) ? ATOMIC : undefined);
};

/**
 * A field of a built-in's Go type as its typed decoding knows it: a scalar, or a map or list kept whole (`true`),
 * a struct (its fields), or a list of structs (`[fields]`).
 */
export type TypedField = true | TypedStruct | readonly [TypedStruct];
export interface TypedStruct {
  readonly [field: string]: TypedField;
}

const LEAF = true;
const leaves = (...names: string[]): TypedStruct => Object.fromEntries(names.map((n) => [n, LEAF]));
/** apiVersion, kind and metadata (ObjectMeta's own fields are checked by object-meta.ts). */
const TYPED_META = leaves("apiVersion", "kind", "metadata");
const OBJECT_REFERENCE = leaves(
  "kind",
  "namespace",
  "name",
  "uid",
  "apiVersion",
  "resourceVersion",
  "fieldPath",
);
const EVENT_SOURCE = leaves("component", "host");
const EVENT_SERIES = leaves("count", "lastObservedTime");

/**
 * The built-ins whose unknown fields kube's typed decoding drops (and reports as fieldValidation says), at any
 * depth: `group/Kind` → their Go types' fields, read off k8s.io/api v0.33 (decision 157; conformance backlog
 * item 19). Kinds not listed keep what they are given.
 */
export const TYPED_FIELDS: Readonly<Record<string, TypedStruct>> = {
  "/ConfigMap": { ...TYPED_META, ...leaves("data", "binaryData", "immutable") },
  "/Secret": { ...TYPED_META, ...leaves("data", "stringData", "type", "immutable") },
  "/Namespace": {
    ...TYPED_META,
    spec: leaves("finalizers"),
    status: {
      phase: LEAF,
      conditions: [leaves("type", "status", "lastTransitionTime", "reason", "message")],
    },
  },
  "/ServiceAccount": {
    ...TYPED_META,
    secrets: [OBJECT_REFERENCE],
    imagePullSecrets: [leaves("name")],
    automountServiceAccountToken: LEAF,
  },
  "coordination.k8s.io/Lease": {
    ...TYPED_META,
    spec: leaves(
      "holderIdentity",
      "leaseDurationSeconds",
      "acquireTime",
      "renewTime",
      "leaseTransitions",
      "strategy",
      "preferredHolder",
    ),
  },
  // Both Event groups: a field of one shape is an unknown field of the other.
  "/Event": {
    ...TYPED_META,
    involvedObject: OBJECT_REFERENCE,
    source: EVENT_SOURCE,
    series: EVENT_SERIES,
    related: OBJECT_REFERENCE,
    ...leaves(
      "reason",
      "message",
      "firstTimestamp",
      "lastTimestamp",
      "count",
      "type",
      "eventTime",
      "action",
      "reportingComponent",
      "reportingInstance",
    ),
  },
  "events.k8s.io/Event": {
    ...TYPED_META,
    series: EVENT_SERIES,
    regarding: OBJECT_REFERENCE,
    related: OBJECT_REFERENCE,
    deprecatedSource: EVENT_SOURCE,
    ...leaves(
      "eventTime",
      "reportingController",
      "reportingInstance",
      "action",
      "reason",
      "note",
      "type",
      "deprecatedFirstTimestamp",
      "deprecatedLastTimestamp",
      "deprecatedCount",
    ),
  },
};
