/**
 * What clients ask before they touch objects: `/version` (1.32, so the kubectl dispatcher runs its
 * built-in 1.32.4), legacy discovery (`/api`, `/apis`, `/api/v1`, `/apis/<g>[/<v>]`) and the OpenAPI v3
 * documents kubectl reads to decide that the server validates fields itself (a PATCH operation carrying
 * `fieldValidation` per kind). Pure functions of the registry.
 */
import type { Registry } from "./registry.js";
import type { ResourceInfo } from "./types.js";

export const VERSION_INFO = {
  major: "1",
  minor: "32",
  gitVersion: "v1.32.0",
  gitCommit: "0000000000000000000000000000000000000000",
  gitTreeState: "clean",
  buildDate: "2025-01-01T00:00:00Z",
  goVersion: "go1.23.0",
  compiler: "gc",
  platform: "linux/amd64",
};

const VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

export const apiVersions = (): unknown => ({
  kind: "APIVersions",
  versions: ["v1"],
  serverAddressByClientCIDRs: [],
});

const groupEntry = (g: { name: string; versions: string[] }): unknown => ({
  name: g.name,
  versions: g.versions.map((v) => ({ groupVersion: `${g.name}/${v}`, version: v })),
  preferredVersion: { groupVersion: `${g.name}/${g.versions[0]}`, version: g.versions[0] },
});

export const apiGroupList = (registry: Registry): unknown => ({
  kind: "APIGroupList",
  apiVersion: "v1",
  groups: registry.groups().map(groupEntry),
});

export const apiGroup = (registry: Registry, group: string): unknown | undefined => {
  const g = registry.groups().find((x) => x.name === group);
  return g ? { kind: "APIGroup", apiVersion: "v1", ...(groupEntry(g) as object) } : undefined;
};

const served = (registry: Registry, group: string, version: string): ResourceInfo[] =>
  registry.all().filter((r) => r.group === group && r.versions.includes(version));

export const apiResourceList = (registry: Registry, group: string, version: string): unknown | undefined => {
  const types = served(registry, group, version);
  if (types.length === 0) return undefined;
  const resources: unknown[] = [];
  for (const r of types) {
    resources.push({
      name: r.plural,
      singularName: r.singular,
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: r.createOnly ? ["create"] : VERBS,
      ...(r.shortNames.length > 0 ? { shortNames: r.shortNames } : {}),
      ...(r.categories.length > 0 ? { categories: r.categories } : {}),
    });
    if (r.statusSubresource)
      resources.push({
        name: `${r.plural}/status`,
        singularName: "",
        namespaced: r.namespaced,
        kind: r.kind,
        verbs: ["get", "patch", "update"],
      });
    if (r.scale)
      resources.push({
        name: `${r.plural}/scale`,
        singularName: "",
        namespaced: r.namespaced,
        group: "autoscaling",
        version: "v1",
        kind: "Scale",
        verbs: ["get", "patch", "update"],
      });
  }
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: group ? `${group}/${version}` : version,
    resources,
  };
};

const gvPath = (group: string, version: string): string =>
  group ? `apis/${group}/${version}` : `api/${version}`;

export const openApiRoot = (registry: Registry): unknown => {
  const paths: Record<string, unknown> = {};
  const gvs = new Set<string>();
  for (const r of registry.all()) for (const v of r.versions) gvs.add(gvPath(r.group, v));
  for (const p of [...gvs].sort()) paths[p] = { serverRelativeURL: `/openapi/v3/${p}` };
  return { paths };
};

const patchOperation = (r: ResourceInfo, version: string): unknown => {
  const content: Record<string, unknown> = {
    "application/json-patch+json": { schema: { type: "object" } },
    "application/merge-patch+json": { schema: { type: "object" } },
    "application/apply-patch+yaml": { schema: { type: "object" } },
  };
  if (r.builtIn) content["application/strategic-merge-patch+json"] = { schema: { type: "object" } };
  return {
    "x-kubernetes-group-version-kind": { group: r.group, version, kind: r.kind },
    parameters: [
      { name: "fieldValidation", in: "query", schema: { type: "string", uniqueItems: true } },
      { name: "fieldManager", in: "query", schema: { type: "string", uniqueItems: true } },
      { name: "dryRun", in: "query", schema: { type: "string", uniqueItems: true } },
      { name: "force", in: "query", schema: { type: "boolean", uniqueItems: true } },
    ],
    requestBody: { content, required: true },
    responses: { "200": { description: "OK" } },
  };
};

/** The per group-version document: one path per kind with its PATCH operation. */
export const openApiGroupVersion = (
  registry: Registry,
  group: string,
  version: string,
): unknown | undefined => {
  const types = served(registry, group, version);
  if (types.length === 0) return undefined;
  const paths: Record<string, unknown> = {};
  // Schemas are left out on purpose: kubectl only needs the PATCH operations to trust server-side
  // validation, and a schema it misreads would make it validate client-side.
  const schemas: Record<string, unknown> = {};
  const base = group ? `/apis/${group}/${version}` : `/api/${version}`;
  for (const r of types) {
    const item = r.namespaced
      ? `${base}/namespaces/{namespace}/${r.plural}/{name}`
      : `${base}/${r.plural}/{name}`;
    paths[item] = { patch: patchOperation(r, version) };
  }
  return {
    openapi: "3.0.0",
    info: { title: "Kubernetes", version: "v1.32.0" },
    paths,
    components: { schemas },
  };
};
