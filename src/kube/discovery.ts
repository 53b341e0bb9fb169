/**
 * Resolves an `apiVersion` + `kind` (as found in `spec.infrastructureRef` and template references) to a
 * `ResourceType` with its plural and scope, so an informer can be started at run time for a kind first
 * referenced then (SPEC §4.1 dynamic watches). Kinds of SPEC §0 resolve locally; others through the API
 * server's discovery document, remembered per group/version.
 */
import { NotFoundError } from "./errors.js";
import type { ResourceType } from "./kinds.js";
import { KINDS } from "./kinds.js";
import { DNS_LABEL, DNS_SUBDOMAIN, isRecord } from "./object.js";
import type { Transport } from "./transport.js";

export interface ResourceResolver {
  /** The type serving `kind` in `apiVersion`; NotFoundError when the server does not serve it. */
  resolve(apiVersion: string, kind: string): Promise<ResourceType>;
}

export const splitApiVersion = (apiVersion: string): { group: string; version: string } => {
  const slash = apiVersion.indexOf("/");
  return slash < 0
    ? { group: "", version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
};

/**
 * Whether an API server could serve `group`/`version`: the core group or an RFC 1123 subdomain, and an RFC 1123
 * label. The apiVersion comes from objects users write (`infrastructureRef`, template references), and the
 * discovery path is built from it: one with `/`, `..`, `?` or spaces would name another resource.
 */
export const servableGroupVersion = (group: string, version: string): boolean =>
  servableGroup(group) && version.length <= 63 && DNS_LABEL.test(version);

/** Whether an API server could serve `group`: the core group ("") or an RFC 1123 subdomain. */
export const servableGroup = (group: string): boolean =>
  group === "" || (group.length <= 253 && DNS_SUBDOMAIN.test(group));

export function createResourceResolver(
  transport: Transport,
  known: readonly ResourceType[] = Object.values(KINDS),
): ResourceResolver {
  const documents = new Map<string, Promise<ResourceType[]>>();

  const discover = (group: string, version: string): Promise<ResourceType[]> => {
    const key = `${group}/${version}`;
    let doc = documents.get(key);
    if (!doc) {
      doc = transport
        .request({ method: "GET", path: group ? `/apis/${group}/${version}` : `/api/${version}` })
        .then((list) =>
          (isRecord(list) && Array.isArray(list.resources) ? list.resources : [])
            .filter(isRecord)
            .filter((r) => typeof r.name === "string" && !r.name.includes("/") && typeof r.kind === "string")
            .map((r) =>
              Object.freeze({
                group,
                version,
                kind: r.kind as string,
                plural: r.name as string,
                namespaced: r.namespaced === true,
              }),
            ),
        );
      // A failed lookup is not remembered: the CRD may be installed a moment later.
      doc.catch(() => documents.delete(key));
      documents.set(key, doc);
    }
    return doc;
  };

  return {
    async resolve(apiVersion, kind) {
      const { group, version } = splitApiVersion(apiVersion);
      const local = known.find((t) => t.group === group && t.version === version && t.kind === kind);
      if (local) return local;
      const found = servableGroupVersion(group, version)
        ? (await discover(group, version)).find((t) => t.kind === kind)
        : undefined;
      if (!found) {
        documents.delete(`${group}/${version}`);
        throw new NotFoundError(404, "NotFound", `the server does not serve kind ${kind} in ${apiVersion}`);
      }
      return found;
    },
  };
}
