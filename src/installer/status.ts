/**
 * The installer's report as a ClusterOperator status (SPEC §6), computed purely from the previous status,
 * the outcome of one run and the time: `Available`, `Progressing`, `Degraded` in OpenShift's meaning, with
 * messages naming the failing objects, Degraded only once failures have lasted `degradedAfterMs`, the
 * provider versions, and in `status.extension` the revisions and kinds applied (the next run searches those
 * kinds for objects to prune). Messages carry no timestamps, so an unchanged situation is an unchanged
 * status and costs no write.
 */
import type { Condition, KubeObject } from "../kube/object.js";
import { canonicalJson, conditionOf, conditionsOf, getPath, isRecord, setCondition } from "../kube/object.js";
import type { KindRef } from "./apply.js";
import { describeRef, type ObjectRef } from "./model.js";

export interface ProviderSummary {
  /** clusterctl's provider label value (`cluster-api`, `infrastructure-aws`). */
  label: string;
  version: string;
  revision: string;
  configMap: string;
}

export type RunReport =
  | { kind: "unsupportedPlatform"; platform: string }
  | {
      kind: "failed";
      failures: string[];
      /** Providers that did render (their revisions are not yet installed). */
      appliedKinds: KindRef[];
    }
  | {
      kind: "installed";
      providers: ProviderSummary[];
      leftForManualRemoval: ObjectRef[];
      appliedKinds: KindRef[];
    };

const REASONS = Object.freeze({
  asExpected: "AsExpected",
  unsupportedPlatform: "UnsupportedPlatform",
  installFailed: "InstallFailed",
  notInstalled: "NotInstalled",
});

export interface StatusInput {
  /** The ClusterOperator as last read (undefined when it does not exist yet). */
  previous: KubeObject | undefined;
  report: RunReport;
  now: number;
  /** When the current run of failures began (undefined when the last run did not fail). */
  failingSinceMs: number | undefined;
  degradedAfterMs: number;
  namespace: string;
}

/** At most this many failures are spelled out; the rest are counted. */
const MAX_LISTED = 5;
/**
 * Characters of one condition message, and of one failure in it. A person reads the message (`oc get
 * clusteroperator`, the console), and the whole ClusterOperator must fit in what etcd stores (1.5 MiB an
 * object): a transport ConfigMap with 30,000 refused containers once made a 3.4 MB status whose write failed,
 * so the ClusterOperator kept saying Available and never went Degraded. Five failures fit in one message.
 */
const MAX_MESSAGE_CHARS = 4096;
const MAX_FAILURE_CHARS = 700;

/**
 * `text` cut to at most `max` characters by leaving out its middle, saying how much: the start names the
 * object and the bound, the end a count (`; and 29995 more`). Never between the halves of a surrogate pair.
 */
const cut = (text: string, max: number): string => {
  if (text.length <= max) return text;
  const room = max - ` … (${text.length} characters left out) … `.length;
  let headEnd = Math.max(0, Math.ceil((room * 3) / 4));
  let tailStart = text.length - Math.max(0, room - headEnd);
  if (/[\uD800-\uDBFF]/.test(text.charAt(headEnd - 1))) headEnd--;
  if (/[\uDC00-\uDFFF]/.test(text.charAt(tailStart))) tailStart++;
  return `${text.slice(0, headEnd)} … (${tailStart - headEnd} characters left out) … ${text.slice(tailStart)}`;
};

const listFailures = (failures: readonly string[]): string => {
  const shown = failures
    .slice(0, MAX_LISTED)
    .map((f) => cut(f, MAX_FAILURE_CHARS))
    .join("; ");
  const more = failures.length - MAX_LISTED;
  return more > 0 ? `${shown}; and ${more} more` : shown;
};

/** Kinds applied by earlier runs, recorded in `status.extension.appliedKinds`. */
export function previousKinds(clusterOperator: KubeObject | undefined): KindRef[] {
  const list = getPath(clusterOperator, ["status", "extension", "appliedKinds"]);
  return Array.isArray(list)
    ? list
        .filter(isRecord)
        .filter((k) => typeof k.apiVersion === "string" && typeof k.kind === "string")
        .map((k) => ({ apiVersion: k.apiVersion as string, kind: k.kind as string }))
    : [];
}

/** When failures began according to a status written earlier (an installer restarted mid-failure). */
export function failingSinceOf(clusterOperator: KubeObject | undefined): number | undefined {
  const progressing = conditionOf(clusterOperator, "Progressing");
  if (progressing?.status !== "True" || progressing.reason !== REASONS.installFailed) return undefined;
  const at = Date.parse(String(progressing.lastTransitionTime ?? ""));
  return Number.isNaN(at) ? undefined : at;
}

const mergeKinds = (a: readonly KindRef[], b: readonly KindRef[]): KindRef[] => {
  const out = new Map<string, KindRef>();
  for (const k of [...a, ...b]) out.set(`${k.apiVersion}/${k.kind}`, k);
  return [...out.values()].sort((x, y) =>
    `${x.apiVersion}/${x.kind}`.localeCompare(`${y.apiVersion}/${y.kind}`),
  );
};

/** The status the ClusterOperator should have; `changed` false means no write is needed. */
export function clusterOperatorStatus(input: StatusInput): {
  status: Record<string, unknown>;
  changed: boolean;
} {
  const { previous, report } = input;
  const now = new Date(input.now);
  const previousStatus = isRecord(previous?.status) ? previous.status : {};
  const previousExtension = isRecord(previousStatus.extension) ? previousStatus.extension : {};
  let conditions: readonly Condition[] = conditionsOf(previous);
  const set = (type: string, status: "True" | "False", reason: string, message: string): void => {
    conditions = setCondition(
      conditions,
      { type, status, reason, message: cut(message, MAX_MESSAGE_CHARS) },
      now,
    );
  };
  let status: Record<string, unknown>;

  switch (report.kind) {
    case "unsupportedPlatform": {
      const message = `Platform ${report.platform} has no Cluster API infrastructure provider in this installer; nothing is installed.`;
      set("Available", "True", REASONS.unsupportedPlatform, message);
      set("Progressing", "False", REASONS.unsupportedPlatform, message);
      set("Degraded", "False", REASONS.asExpected, "");
      status = { ...previousStatus, conditions, extension: { ...previousExtension, providers: [] } };
      break;
    }
    case "installed": {
      const installed = report.providers
        .map((p) => `${p.label} ${p.version} (revision ${p.revision})`)
        .join(", ");
      const leftovers =
        report.leftForManualRemoval.length > 0
          ? ` Left the provider manifests but never deleted automatically (remove by hand once nothing uses them): ${report.leftForManualRemoval.map(describeRef).join(", ")}.`
          : "";
      set("Available", "True", REASONS.asExpected, `Installed ${installed}.${leftovers}`);
      set("Progressing", "False", REASONS.asExpected, "All provider components are applied.");
      set("Degraded", "False", REASONS.asExpected, "");
      status = {
        ...previousStatus,
        conditions,
        versions: report.providers.map((p) => ({ name: p.label, version: p.version })),
        relatedObjects: [
          { group: "", resource: "namespaces", name: input.namespace },
          ...report.providers.map((p) => ({
            group: "",
            resource: "configmaps",
            namespace: p.configMap.split("/")[0] ?? input.namespace,
            name: p.configMap.split("/")[1] ?? p.configMap,
          })),
        ],
        extension: {
          ...previousExtension,
          providers: report.providers.map((p) => ({ ...p })),
          appliedKinds: mergeKinds(previousKinds(previous), report.appliedKinds),
        },
      };
      break;
    }
    case "failed": {
      const failures = listFailures(report.failures);
      set(
        "Progressing",
        "True",
        REASONS.installFailed,
        `Installing provider components failed, retrying: ${failures}`,
      );
      const failingFor = input.now - (input.failingSinceMs ?? input.now);
      if (failingFor >= input.degradedAfterMs)
        set(
          "Degraded",
          "True",
          REASONS.installFailed,
          `Provider components cannot be installed: ${failures}`,
        );
      else set("Degraded", "False", REASONS.asExpected, "");
      // Components installed earlier keep running: Available stays what it was, once it has been True.
      if (conditionOf({ status: { conditions: [...conditions] } }, "Available")?.status !== "True")
        set(
          "Available",
          "False",
          REASONS.notInstalled,
          "Cluster API provider components are not installed yet; see Progressing.",
        );
      status = {
        ...previousStatus,
        conditions,
        extension: {
          ...previousExtension,
          appliedKinds: mergeKinds(previousKinds(previous), report.appliedKinds),
        },
      };
      break;
    }
  }
  return { status, changed: canonicalJson(status) !== canonicalJson(previousStatus) };
}
