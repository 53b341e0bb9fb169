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

/** Whether an API server could serve `group`: the core group ("") or an RFC 1123 subdomain. */
const servableGroup = (group: string): boolean =>
  group === "" || (group.length <= 253 && DNS_SUBDOMAIN.test(group));

/**
 * Whether an API server could serve `group`/`version`: a servable group and an RFC 1123 label. Groups and
 * versions come from objects users write (`infrastructureRef`, template references), and the discovery paths
 * are built from them: one with `/`, `..`, `?` or spaces would name another resource, so it is never asked.
 */
const servableGroupVersion = (group: string, version: string): boolean =>
  servableGroup(group) && version.length <= 63 && DNS_LABEL.test(version);

/** The resolver `createResourceResolver` builds: also a group's preferred version, through discovery. */
export interface DiscoveryResolver extends ResourceResolver {
  /**
   * The version discovery prefers for `group` (a v1beta2 reference names only the group), remembered; a group
   * whose known kinds agree on one version is not asked. NotFound, without a request, for a group no API server
   * could serve.
   */
  preferredVersion(group: string): Promise<string>;
}

export function createResourceResolver(
  transport: Transport,
  known: readonly ResourceType[] = Object.values(KINDS),
): DiscoveryResolver {
  const documents = new Map<string, Promise<ResourceType[]>>();
  // A group whose known kinds disagree on the version (the infrastructure group: CAPA v1beta2, CAPO v1beta1)
  // is asked of discovery like any other.
  const preferredVersions = new Map<string, string>(
    known
      .filter((t) => known.every((u) => u.group !== t.group || u.version === t.version))
      .map((t) => [t.group, t.version]),
  );

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
    async preferredVersion(group) {
      const remembered = preferredVersions.get(group);
      if (remembered) return remembered;
      if (!servableGroup(group))
        throw new NotFoundError(
          404,
          "NotFound",
          `the server does not serve API group ${JSON.stringify(group)}`,
        );
      const doc = await transport.request({ method: "GET", path: `/apis/${group}` });
      const preferred =
        isRecord(doc) && isRecord(doc.preferredVersion) ? doc.preferredVersion.version : undefined;
      if (typeof preferred !== "string" || preferred === "")
        throw new Error(`discovery for API group ${group} names no preferred version`);
      preferredVersions.set(group, preferred);
      return preferred;
    },
  };
}
