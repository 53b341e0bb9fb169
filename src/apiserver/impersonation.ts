/**
 * User impersonation (`kubectl --as`, `--as-group`, `--as-uid`), as kube-apiserver's impersonation filter
 * decides it (apiserver/pkg/endpoints/filters/impersonation.go): each `Impersonate-*` header is a request the
 * caller must be allowed — `impersonate` on `users`, `groups`, `serviceaccounts` (a `system:serviceaccount:`
 * name, in its namespace), `uids` or `userextras/<key>` — and the request then runs as the user they name.
 * Without this a `--as` request ran as its caller. Pure: the headers, the caller and the authorizer in; the
 * user to act as, or the refusal, out. http.ts calls it between authentication and authorization.
 */
import { type Authorizer, type ResourceAttributes, refusal } from "./rbac.js";
import type { UserInfo } from "./types.js";

type Headers = Readonly<Record<string, string | string[] | undefined>>;

/** kube answers a malformed impersonation with a plain-text 500 (responsewriters.InternalError), not a Status. */
export class ImpersonationHeadersError extends Error {}

const all = (v: string | string[] | undefined): string[] =>
  v === undefined ? [] : (Array.isArray(v) ? v : [v]).filter((s) => s !== "");

const SA_PREFIX = "system:serviceaccount:";
const EXTRA_PREFIX = "impersonate-extra-";

/** kube's serviceaccount.SplitUsername: `system:serviceaccount:<ns>:<name>`, both parts non-empty, no more colons. */
const serviceAccountOf = (username: string): { namespace: string; name: string } | undefined => {
  if (!username.startsWith(SA_PREFIX)) return undefined;
  const parts = username.slice(SA_PREFIX.length).split(":");
  return parts.length === 2 && parts[0] && parts[1] ? { namespace: parts[0], name: parts[1] } : undefined;
};

/**
 * The user a request acts as: its caller, or whom its `Impersonate-*` headers name when the caller may
 * impersonate each of them. Throws kube's 403 (the first one refused), or ImpersonationHeadersError
 * (groups, extras or a uid without a user).
 */
export const impersonatedUser = (headers: Headers, caller: UserInfo, authorize: Authorizer): UserInfo => {
  const requestedUser = all(headers["impersonate-user"])[0] ?? "";
  const requestedGroups = all(headers["impersonate-group"]);
  const requestedUid = all(headers["impersonate-uid"])[0] ?? "";
  const extras = Object.entries(headers)
    .filter(([k]) => k.startsWith(EXTRA_PREFIX))
    .flatMap(([k, v]) =>
      all(v).map((value) => ({ key: decodeURIComponent(k.slice(EXTRA_PREFIX.length)), value })),
    );
  if (!requestedUser) {
    if (requestedGroups.length > 0 || extras.length > 0 || requestedUid)
      throw new ImpersonationHeadersError(
        "requested impersonation of groups, extras or a uid without impersonating a user",
      );
    return caller;
  }
  const check = (a: Omit<ResourceAttributes, "user" | "verb" | "resourceRequest">): void => {
    const attributes: ResourceAttributes = { user: caller, verb: "impersonate", resourceRequest: true, ...a };
    const decision = authorize(attributes);
    if (!decision.allowed) throw refusal(attributes, decision.reason);
  };
  const base = { subresource: "", namespace: "", name: "" };
  let groups: string[] = [];
  const sa = serviceAccountOf(requestedUser);
  if (sa) {
    check({ ...base, apiGroup: "", resource: "serviceaccounts", namespace: sa.namespace, name: sa.name });
    if (requestedGroups.length === 0)
      groups = ["system:serviceaccounts", `system:serviceaccounts:${sa.namespace}`];
  } else check({ ...base, apiGroup: "", resource: "users", name: requestedUser });
  for (const g of requestedGroups) {
    check({ ...base, apiGroup: "", resource: "groups", name: g });
    groups.push(g);
  }
  for (const { key, value } of extras)
    check({
      ...base,
      apiGroup: "authentication.k8s.io",
      resource: "userextras",
      subresource: key,
      name: value,
    });
  if (requestedUid)
    check({ ...base, apiGroup: "authentication.k8s.io", resource: "uids", name: requestedUid });
  // A non-anonymous user is authenticated unless the groups given say otherwise.
  if (
    requestedUser !== "system:anonymous" &&
    !groups.includes("system:authenticated") &&
    !groups.includes("system:unauthenticated")
  )
    groups.push("system:authenticated");
  return { username: requestedUser, groups, ...(requestedUid ? { uid: requestedUid } : {}) };
};
