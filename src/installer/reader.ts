/**
 * What the installer reads (SPEC §6), as pure functions over objects the shell fetched: the platform from
 * `Infrastructure/cluster`, the transport ConfigMaps of the core provider and of that platform's
 * infrastructure provider, and the images and variables of the images ConfigMap. Anything missing,
 * ambiguous or malformed becomes a problem with a message for the admin — never a guess — because a
 * selection with a problem must not prune anything.
 */
import type { KubeObject } from "../kube/object.js";
import { getPath, isRecord, labelsOf, nameOf, namespaceOf } from "../kube/object.js";
import {
  COMPONENTS_KEY,
  CORE_PROVIDER_NAME,
  PLATFORM_PROVIDERS,
  type ProviderType,
  TRANSPORT_LABELS,
} from "./model.js";
import type { ProviderSource } from "./render.js";

export type PlatformResult = { ok: true; platform: string } | { ok: false; reason: string };

/** `Infrastructure .status.platformStatus.type` (falling back to the older `.status.platform`). */
export function platformOf(infrastructure: KubeObject | undefined): PlatformResult {
  if (!infrastructure)
    return { ok: false, reason: "Infrastructure cluster not found: cannot tell which platform this is" };
  const type = getPath(infrastructure, ["status", "platformStatus", "type"]);
  const legacy = getPath(infrastructure, ["status", "platform"]);
  const platform = typeof type === "string" && type ? type : typeof legacy === "string" ? legacy : "";
  return platform
    ? { ok: true, platform }
    : { ok: false, reason: "Infrastructure cluster has no status.platformStatus.type yet" };
}

export interface WantedProvider {
  name: string;
  type: ProviderType;
}

export type Selection =
  | { kind: "infrastructureUnreadable"; reason: string }
  | { kind: "unsupportedPlatform"; platform: string }
  | {
      kind: "selected";
      platform: string;
      wanted: WantedProvider[];
      /** The sources found and readable, core first. */
      sources: ProviderSource[];
      /** Missing, ambiguous or unreadable transport ConfigMaps: any problem forbids pruning. */
      problems: string[];
    };

const describeWanted = (w: WantedProvider, namespace: string): string =>
  `${w.type} provider ${w.name} (ConfigMap in ${namespace} labelled ${TRANSPORT_LABELS.name}=${w.name}, ${TRANSPORT_LABELS.type}=${w.type})`;

/** Reads one transport ConfigMap into a source, or says what is wrong with it. */
function sourceOf(
  configMap: KubeObject,
): { ok: true; source: ProviderSource } | { ok: false; problem: string } {
  const labels = labelsOf(configMap);
  const where = `ConfigMap ${namespaceOf(configMap)}/${nameOf(configMap)}`;
  const type = labels[TRANSPORT_LABELS.type];
  const name = labels[TRANSPORT_LABELS.name];
  const version = labels[TRANSPORT_LABELS.version];
  if (type !== "core" && type !== "infrastructure")
    return { ok: false, problem: `${where}: label ${TRANSPORT_LABELS.type} must be core or infrastructure` };
  if (!name) return { ok: false, problem: `${where}: label ${TRANSPORT_LABELS.name} is missing` };
  if (!version) return { ok: false, problem: `${where}: label ${TRANSPORT_LABELS.version} is missing` };
  const components = isRecord(configMap.data) ? configMap.data[COMPONENTS_KEY] : undefined;
  if (typeof components !== "string" || components.trim() === "")
    return { ok: false, problem: `${where}: data key "${COMPONENTS_KEY}" is missing or empty` };
  return {
    ok: true,
    source: { name, type, version, configMap: `${namespaceOf(configMap)}/${nameOf(configMap)}`, components },
  };
}

/**
 * The core provider and the infrastructure provider of this platform, from the transport ConfigMaps of
 * the CAPI namespace. Exactly one ConfigMap per wanted provider; two are ambiguous (an upgrade replaces the
 * ConfigMap, it does not add a second one).
 */
export function selectProviders(
  infrastructure: KubeObject | undefined,
  configMaps: readonly KubeObject[],
  namespace: string,
): Selection {
  const platform = platformOf(infrastructure);
  if (!platform.ok) return { kind: "infrastructureUnreadable", reason: platform.reason };
  const infraName = PLATFORM_PROVIDERS[platform.platform];
  if (!infraName) return { kind: "unsupportedPlatform", platform: platform.platform };
  const wanted: WantedProvider[] = [
    { name: CORE_PROVIDER_NAME, type: "core" },
    { name: infraName, type: "infrastructure" },
  ];
  const sources: ProviderSource[] = [];
  const problems: string[] = [];
  for (const w of wanted) {
    const matching = configMaps
      .filter((c) => namespaceOf(c) === namespace)
      .filter((c) => {
        const l = labelsOf(c);
        return l[TRANSPORT_LABELS.name] === w.name && l[TRANSPORT_LABELS.type] === w.type;
      })
      .sort((a, b) => nameOf(a).localeCompare(nameOf(b)));
    if (matching.length === 0) {
      problems.push(`no transport ConfigMap for the ${describeWanted(w, namespace)}`);
      continue;
    }
    if (matching.length > 1) {
      problems.push(
        `${matching.length} transport ConfigMaps for the ${w.type} provider ${w.name} (${matching.map(nameOf).join(", ")}): keep exactly one`,
      );
      continue;
    }
    const read = sourceOf(matching[0]!);
    if (read.ok) sources.push(read.source);
    else problems.push(read.problem);
  }
  return { kind: "selected", platform: platform.platform, wanted, sources, problems };
}

const VARIABLE_KEY = /^[A-Z_][A-Z0-9_]*$/;

/**
 * The images ConfigMap holds both maps: keys named like variables (`UPPER_SNAKE`) are `${VAR}` values,
 * every other key is a provider label value (`cluster-api`, `infrastructure-aws`) mapped to the image
 * that replaces the placeholder. Absent ConfigMap: both empty (a provider using either then fails to render,
 * naming what is missing).
 */
export function imagesAndVariables(configMap: KubeObject | undefined): {
  images: Record<string, string>;
  variables: Record<string, string>;
} {
  const images: Record<string, string> = {};
  const variables: Record<string, string> = {};
  const data = isRecord(configMap?.data) ? configMap.data : {};
  for (const [k, v] of Object.entries(data)) {
    if (typeof v !== "string") continue;
    if (VARIABLE_KEY.test(k)) variables[k] = v;
    else images[k] = v.trim();
  }
  return { images, variables };
}
