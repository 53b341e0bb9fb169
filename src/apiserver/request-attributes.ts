/**
 * A request's URL as kube's RequestInfo reads it — group, version, namespace, resource, name, subresource,
 * and whether it is a watch — and the authorizer's attributes (rbac.ts) derived from the URL alone, so that
 * a refused request is answered 403 before anything else is looked at. Pure; used by http.ts and by the
 * tests' fault proxy in front of a real server.
 */
import type { NonResourceAttributes, ResourceAttributes } from "./rbac.js";
import { nameFromFieldSelector } from "./selectors.js";
import type { UserInfo } from "./types.js";

export interface ResourcePath {
  group: string;
  version: string;
  namespace: string | undefined;
  resource: string;
  name: string | undefined;
  subresource: string | undefined;
  watchPath: boolean;
}

/** `/api/v1/...` and `/apis/<g>/<v>/...` → the parts of a resource request, or undefined for other paths. */
export const parseResourcePath = (path: string): ResourcePath | undefined => {
  const segs = path
    .split("/")
    .filter((s) => s !== "")
    .map((s) => (s.includes("%") ? decodeURIComponent(s) : s));
  let group: string;
  let version: string;
  let rest: string[];
  if (segs[0] === "api" && segs.length >= 3) {
    group = "";
    version = segs[1]!;
    rest = segs.slice(2);
  } else if (segs[0] === "apis" && segs.length >= 4) {
    group = segs[1]!;
    version = segs[2]!;
    rest = segs.slice(3);
  } else return undefined;
  let watchPath = false;
  if (rest[0] === "watch") {
    watchPath = true;
    rest = rest.slice(1);
  }
  let namespace: string | undefined;
  if (
    rest[0] === "namespaces" &&
    rest.length >= 3 &&
    !(rest.length === 3 && ["status", "finalize"].includes(rest[2]!))
  ) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  if (rest.length === 0 || rest.length > 3) return undefined;
  return { group, version, namespace, resource: rest[0]!, name: rest[1], subresource: rest[2], watchPath };
};

/** The authorizer's verb for a request, as kube-apiserver names it (also used by the tests' fault proxy). */
export const verbOf = (method: string, p: ResourcePath, watch: boolean): string => {
  switch (method) {
    case "GET":
      return p.name ? "get" : watch ? "watch" : "list";
    case "POST":
      return "create";
    case "PUT":
      return "update";
    case "PATCH":
      return "patch";
    case "DELETE":
      return p.name ? "delete" : "deletecollection";
    default:
      return method.toLowerCase();
  }
};

/** kube's `IsValidPathSegmentName`: what a field selector may name for the authorizer. */
const validPathSegment = (name: string): boolean =>
  name !== "." && name !== ".." && !name.includes("/") && !name.includes("%");

/**
 * The authorizer's view of a resource request, as kube's RequestInfo derives it from the URL alone: a
 * `/namespaces/<name>` path is in that namespace (so is a Namespace itself); a list or watch names the
 * object its `metadata.name` field selector requires; a `/watch/` path is a watch whatever it names.
 */
export const resourceAttributes = (
  user: UserInfo,
  method: string,
  p: ResourcePath,
  q: URLSearchParams,
  watch: boolean,
): ResourceAttributes => {
  const verb = p.watchPath ? "watch" : verbOf(method, p, watch);
  const selected =
    !p.watchPath && (verb === "list" || verb === "watch")
      ? nameFromFieldSelector(q.get("fieldSelector") ?? undefined)
      : undefined;
  return {
    user,
    verb,
    resourceRequest: true,
    apiGroup: p.group,
    resource: p.resource,
    subresource: p.subresource ?? "",
    namespace: p.namespace ?? (p.resource === "namespaces" && p.name ? p.name : ""),
    name: p.name ?? (selected !== undefined && validPathSegment(selected) ? selected : ""),
  };
};

/** Any other path: the verb is the lower-cased HTTP method, as kube names it. */
export const nonResourceAttributes = (
  user: UserInfo,
  method: string,
  path: string,
): NonResourceAttributes => ({
  user,
  verb: method.toLowerCase(),
  resourceRequest: false,
  path,
});
