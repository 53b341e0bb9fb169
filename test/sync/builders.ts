/**
 * Test support for the sync planner: builders for real-shaped MAPI/CAPI/AWS objects, a fake converter whose
 * failures and warnings tests control, and a small in-memory world that executes a plan's writes with the
 * API server's guards (resourceVersion with chaining, JSON Patch tests, delete preconditions, finalizers and
 * deletionTimestamp) so tests can drive reconciles to a fixed point.
 */
import jsonpatch from "fast-json-patch";
import type { ResourceType } from "../../src/kube/kinds.js";
import {
  ANNOTATIONS,
  CAPI_API_VERSION,
  FINALIZERS,
  INFRA_API_VERSION,
  KINDS,
  LABELS,
  MAPI_API_VERSION,
  PAUSED_BY_VALUE,
} from "../../src/kube/kinds.js";
import type { Condition, KubeObject, OwnerReference } from "../../src/kube/object.js";
import {
  canonicalJson,
  finalizersOf,
  getPath,
  isRecord,
  nameOf,
  namespaceOf,
} from "../../src/kube/object.js";
import type { ObjectStore } from "../../src/policies/types.js";
import type {
  MachineSetSnapshot,
  MachineSnapshot,
  SyncConverter,
  SyncDeps,
} from "../../src/sync/snapshot.js";
import { readMachineSetSnapshot, readMachineSnapshot } from "../../src/sync/snapshot.js";
import type { SyncWrite } from "../../src/sync/writes.js";

export const MAPI_NS = "openshift-machine-api";
export const CAPI_NS = "openshift-cluster-api";
export const CLUSTER_NAME = "ci-abc12";
export const NOW = new Date("2026-11-30T10:00:00Z");
export const EARLIER = "2026-11-30T09:00:00Z";
export const LATER = "2026-11-30T09:30:00Z";

let uidCounter = 0;
export const uid = (prefix: string): string => `${prefix}-${(++uidCounter).toString(16).padStart(8, "0")}`;

type Meta = NonNullable<KubeObject["metadata"]>;
export interface Opts {
  meta?: Partial<Meta>;
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

const make = (apiVersion: string, kind: string, namespace: string, name: string, o: Opts): KubeObject => ({
  apiVersion,
  kind,
  metadata: {
    name,
    namespace,
    uid: uid(kind.toLowerCase()),
    resourceVersion: "1",
    generation: 1,
    creationTimestamp: "2026-11-01T00:00:00Z",
    ...(o.meta ?? {}),
  },
  spec: o.spec ?? {},
  ...(o.status ? { status: o.status } : {}),
});

export const condition = (
  type: string,
  status: string,
  lastTransitionTime = EARLIER,
  reason = "Reason",
): Condition => ({
  type,
  status,
  reason,
  lastTransitionTime,
});

export const providerSpec = (instanceType = "m6i.xlarge", extra: Record<string, unknown> = {}) => ({
  value: {
    apiVersion: "machine.openshift.io/v1beta1",
    kind: "AWSMachineProviderConfig",
    ami: { id: "ami-0123456789abcdef0" },
    instanceType,
    placement: { region: "us-east-1", availabilityZone: "us-east-1a" },
    subnet: { filters: [{ name: "tag:Name", values: [`${CLUSTER_NAME}-private-us-east-1a`] }] },
    ...extra,
  },
});

export const mapiMachine = (
  name: string,
  o: Opts & { authority?: string; status?: Record<string, unknown> } = {},
) =>
  make(MAPI_API_VERSION, "Machine", MAPI_NS, name, {
    ...o,
    meta: {
      labels: { "machine.openshift.io/cluster-api-cluster": CLUSTER_NAME },
      ...(o.meta ?? {}),
    },
    spec: { authoritativeAPI: o.authority ?? "MachineAPI", providerSpec: providerSpec(), ...(o.spec ?? {}) },
    status: {
      authoritativeAPI: o.authority ?? "MachineAPI",
      synchronizedAPI: o.authority === "Migrating" ? "MachineAPI" : (o.authority ?? "MachineAPI"),
      phase: "Running",
      ...(o.status ?? {}),
    },
  });

export const pausedAnnotations = { [ANNOTATIONS.paused]: "", [ANNOTATIONS.pausedBy]: PAUSED_BY_VALUE };

export const capiMachine = (name: string, o: Opts = {}) =>
  make(CAPI_API_VERSION, "Machine", CAPI_NS, name, {
    ...o,
    meta: { annotations: { ...pausedAnnotations }, finalizers: [FINALIZERS.sync], ...(o.meta ?? {}) },
    spec: {
      clusterName: CLUSTER_NAME,
      infrastructureRef: { apiGroup: "infrastructure.cluster.x-k8s.io", kind: "AWSMachine", name },
      ...(o.spec ?? {}),
    },
  });

export const awsMachine = (name: string, o: Opts & { pausedCondition?: string } = {}) =>
  make(INFRA_API_VERSION, "AWSMachine", CAPI_NS, name, {
    ...o,
    meta: { annotations: { ...pausedAnnotations }, finalizers: [FINALIZERS.sync], ...(o.meta ?? {}) },
    spec: { instanceType: "m6i.xlarge", ami: { id: "ami-0123456789abcdef0" }, ...(o.spec ?? {}) },
    status: { conditions: [condition("Paused", o.pausedCondition ?? "True")], ...(o.status ?? {}) },
  });

export const infrastructure = (): KubeObject => ({
  apiVersion: "config.openshift.io/v1",
  kind: "Infrastructure",
  metadata: { name: "cluster", uid: "infra-uid", resourceVersion: "1" },
  spec: {},
  status: {
    infrastructureName: CLUSTER_NAME,
    platformStatus: { type: "AWS", aws: { region: "us-east-1" } },
  },
});

export const capiCluster = (): KubeObject =>
  make(CAPI_API_VERSION, "Cluster", CAPI_NS, CLUSTER_NAME, { meta: { uid: "cluster-uid" } });

export const mapiMachineSet = (name: string, o: Opts & { authority?: string } = {}) =>
  make(MAPI_API_VERSION, "MachineSet", MAPI_NS, name, {
    ...o,
    spec: {
      authoritativeAPI: o.authority ?? "MachineAPI",
      replicas: 2,
      selector: { matchLabels: { "machine.openshift.io/cluster-api-machineset": name } },
      template: {
        metadata: { labels: { "machine.openshift.io/cluster-api-machineset": name } },
        spec: { authoritativeAPI: o.authority ?? "MachineAPI", providerSpec: providerSpec() },
      },
      ...(o.spec ?? {}),
    },
    status: {
      authoritativeAPI: o.authority ?? "MachineAPI",
      synchronizedAPI: o.authority === "Migrating" ? "MachineAPI" : (o.authority ?? "MachineAPI"),
      replicas: 2,
      ...(o.status ?? {}),
    },
  });

export const templateNameFor = (setName: string, instanceType: string): string =>
  `${setName}-${Buffer.from(instanceType).toString("hex").slice(0, 8).padEnd(8, "0")}`;

export const capiMachineSet = (name: string, o: Opts & { template?: string } = {}) =>
  make(CAPI_API_VERSION, "MachineSet", CAPI_NS, name, {
    ...o,
    meta: { annotations: { ...pausedAnnotations }, finalizers: [FINALIZERS.sync], ...(o.meta ?? {}) },
    spec: {
      clusterName: CLUSTER_NAME,
      replicas: 2,
      template: {
        spec: {
          clusterName: CLUSTER_NAME,
          infrastructureRef: {
            apiGroup: "infrastructure.cluster.x-k8s.io",
            kind: "AWSMachineTemplate",
            name: o.template ?? templateNameFor(name, "m6i.xlarge"),
          },
        },
      },
      ...(o.spec ?? {}),
    },
  });

export const awsMachineTemplate = (
  name: string,
  o: Opts & { setName?: string; instanceType?: string } = {},
) =>
  make(INFRA_API_VERSION, "AWSMachineTemplate", CAPI_NS, name, {
    ...o,
    meta: {
      ...(o.setName ? { labels: { [LABELS.templateMachineSet]: o.setName } } : {}),
      ...(o.meta ?? {}),
    },
    spec: {
      template: {
        spec: { instanceType: o.instanceType ?? "m6i.xlarge", ami: { id: "ami-0123456789abcdef0" } },
      },
    },
  });

export const ownerRef = (owner: KubeObject, controller = true): OwnerReference => ({
  apiVersion: owner.apiVersion ?? "",
  kind: owner.kind ?? "",
  name: nameOf(owner),
  uid: owner.metadata?.uid ?? "",
  ...(controller ? { controller: true } : {}),
  blockOwnerDeletion: true,
});

// ----------------------------------------------------------------------------------------- fake converter

const value = (mapi: KubeObject, path: string[]) => getPath(mapi, path);

/**
 * A converter shaped like src/sync/conversion's: deterministic, lossless on the fields tests use. A
 * providerSpec with `deviceIndex: 1` fails; one with `warn: "<text>"` converts with that warning.
 */
export const fakeConverter = (): SyncConverter => {
  const toInfraSpec = (ps: unknown) => ({
    instanceType: getPath(ps, ["instanceType"]),
    ami: { id: getPath(ps, ["ami", "id"]) },
  });
  const toProviderSpec = (infraSpec: unknown) =>
    providerSpec(String(getPath(infraSpec, ["instanceType"]))).value;
  const check = (ps: unknown, path: string) => {
    const errors =
      getPath(ps, ["deviceIndex"]) !== undefined && getPath(ps, ["deviceIndex"]) !== 0
        ? [
            {
              path: `${path}.deviceIndex`,
              value: getPath(ps, ["deviceIndex"]),
              message: "deviceIndex must be 0 or unset",
            },
          ]
        : [];
    const warn = getPath(ps, ["warn"]);
    return { errors, warnings: typeof warn === "string" ? [warn] : [] };
  };
  const mark = (o: KubeObject, from: string, to: string): Record<string, string> => {
    const v = o.metadata?.annotations?.[from];
    return v !== undefined ? { [to]: v } : {};
  };
  const marksToCapi = (o: KubeObject) =>
    mark(o, "machine.openshift.io/delete-machine", "cluster.x-k8s.io/delete-machine");
  const marksToMapi = (o: KubeObject) =>
    mark(o, "cluster.x-k8s.io/delete-machine", "machine.openshift.io/delete-machine");
  return {
    mapiMachineToCapi(mapi, _infra, opts) {
      const ps = value(mapi, ["spec", "providerSpec", "value"]);
      const { errors, warnings } = check(ps, "spec.providerSpec.value");
      if (errors.length > 0) return { ok: false, errors };
      const name = nameOf(mapi);
      const providerID = value(mapi, ["spec", "providerID"]);
      return {
        ok: true,
        warnings,
        value: {
          machine: {
            apiVersion: CAPI_API_VERSION,
            kind: "Machine",
            metadata: {
              name,
              namespace: opts.capiNamespace,
              labels: { [LABELS.capiClusterName]: CLUSTER_NAME },
              annotations: marksToCapi(mapi),
            },
            spec: {
              clusterName: CLUSTER_NAME,
              infrastructureRef: { apiGroup: "infrastructure.cluster.x-k8s.io", kind: "AWSMachine", name },
              ...(typeof providerID === "string" ? { providerID } : {}),
            },
          },
          infraMachine: {
            apiVersion: INFRA_API_VERSION,
            kind: "AWSMachine",
            metadata: {
              name,
              namespace: opts.capiNamespace,
              labels: { [LABELS.capiClusterName]: CLUSTER_NAME },
            },
            spec: toInfraSpec(ps),
          },
        },
      };
    },
    mapiMachineSetToCapi(mapi, _infra, opts) {
      const ps = value(mapi, ["spec", "template", "spec", "providerSpec", "value"]);
      const { errors, warnings } = check(ps, "spec.template.spec.providerSpec.value");
      if (errors.length > 0) return { ok: false, errors };
      const name = nameOf(mapi);
      const infraSpec = toInfraSpec(ps);
      const templateName = templateNameFor(name, String(infraSpec.instanceType));
      return {
        ok: true,
        warnings,
        value: {
          machineSet: {
            apiVersion: CAPI_API_VERSION,
            kind: "MachineSet",
            metadata: {
              name,
              namespace: opts.capiNamespace,
              labels: { [LABELS.capiClusterName]: CLUSTER_NAME },
            },
            spec: {
              clusterName: CLUSTER_NAME,
              replicas: value(mapi, ["spec", "replicas"]),
              template: {
                spec: {
                  clusterName: CLUSTER_NAME,
                  infrastructureRef: {
                    apiGroup: "infrastructure.cluster.x-k8s.io",
                    kind: "AWSMachineTemplate",
                    name: templateName,
                  },
                },
              },
            },
          },
          infraTemplate: {
            apiVersion: INFRA_API_VERSION,
            kind: "AWSMachineTemplate",
            metadata: { name: templateName, namespace: opts.capiNamespace },
            spec: { template: { spec: infraSpec } },
          },
        },
      };
    },
    capiMachineToMapi(capi, infraMachine, _infra, opts) {
      const providerID = value(capi, ["spec", "providerID"]);
      return {
        ok: true,
        warnings: [],
        value: {
          machine: {
            apiVersion: MAPI_API_VERSION,
            kind: "Machine",
            metadata: {
              name: nameOf(capi),
              namespace: opts.mapiNamespace,
              labels: { "machine.openshift.io/cluster-api-cluster": CLUSTER_NAME },
              annotations: marksToMapi(capi),
            },
            spec: {
              authoritativeAPI: "MachineAPI",
              providerSpec: { value: toProviderSpec(infraMachine.spec) },
              ...(typeof providerID === "string" ? { providerID } : {}),
            },
          },
        },
      };
    },
    capiMachineSetToMapi(capi, infraTemplate, _infra, opts) {
      return {
        ok: true,
        warnings: [],
        value: {
          machineSet: {
            apiVersion: MAPI_API_VERSION,
            kind: "MachineSet",
            metadata: { name: nameOf(capi), namespace: opts.mapiNamespace },
            spec: {
              replicas: value(capi, ["spec", "replicas"]),
              selector: { matchLabels: { "machine.openshift.io/cluster-api-machineset": nameOf(capi) } },
              template: {
                metadata: { labels: { "machine.openshift.io/cluster-api-machineset": nameOf(capi) } },
                spec: {
                  authoritativeAPI: "MachineAPI",
                  providerSpec: {
                    value: toProviderSpec(getPath(infraTemplate, ["spec", "template", "spec"])),
                  },
                },
              },
            },
          },
        },
      };
    },
    mapiMachineStatusToCapi(mapi) {
      const phase = value(mapi, ["status", "phase"]);
      return {
        ok: true,
        warnings: [],
        value: {
          machineStatus: {
            phase,
            conditions: [
              { type: "Ready", status: phase === "Running" ? "True" : "False", reason: String(phase) },
              // A converter must never produce Paused; the sync must drop it anyway.
              { type: "Paused", status: "False", reason: "NotPaused" },
            ],
          },
          infraMachineStatus: { ready: phase === "Running" },
        },
      };
    },
    capiMachineStatusToMapi(capi) {
      const phase = value(capi, ["status", "phase"]);
      return { ok: true, warnings: [], value: { status: typeof phase === "string" ? { phase } : {} } };
    },
    mapiMachineSetStatusToCapi(mapi) {
      return {
        ok: true,
        warnings: [],
        value: { status: { replicas: value(mapi, ["status", "replicas"]) ?? 0 } },
      };
    },
    capiMachineSetStatusToMapi(capi) {
      return {
        ok: true,
        warnings: [],
        value: { status: { replicas: value(capi, ["status", "replicas"]) ?? 0 } },
      };
    },
  };
};

export const deps = (converter: SyncConverter = fakeConverter()): SyncDeps => ({
  converter,
  settings: { mapiNamespace: MAPI_NS, capiNamespace: CAPI_NS },
});

// ------------------------------------------------------------------------------------------- in-memory world

const TYPES: ResourceType[] = Object.values(KINDS);
const typeKey = (apiVersion: string | undefined, kind: string | undefined): string => `${apiVersion}|${kind}`;

/** Objects by type and namespace/name, with an executor that enforces the API server's write guards. */
export class World implements ObjectStore {
  private readonly objects = new Map<string, KubeObject>();
  private rv = 100;
  storageBeingRemoved: boolean | undefined = false;
  /** The shell's live "went with its Cluster" read (SPEC §4.6), as the planner is handed it. */
  clusterCascade: boolean | undefined = false;
  /** Every write executed, in order (for step-by-step assertions). */
  readonly log: SyncWrite[] = [];

  constructor(objects: KubeObject[] = []) {
    for (const o of objects) this.put(o);
  }

  private key(
    apiVersion: string | undefined,
    kind: string | undefined,
    namespace: string,
    name: string,
  ): string {
    return `${typeKey(apiVersion, kind)}|${namespace}/${name}`;
  }
  put(o: KubeObject): void {
    this.objects.set(this.key(o.apiVersion, o.kind, namespaceOf(o), nameOf(o)), structuredClone(o));
  }
  find(apiVersion: string, kind: string, namespace: string, name: string): KubeObject | undefined {
    return this.objects.get(this.key(apiVersion, kind, namespace, name));
  }
  /** An object gone without the sync's doing (another controller removed it). */
  remove(apiVersion: string, kind: string, namespace: string, name: string): void {
    this.objects.delete(this.key(apiVersion, kind, namespace, name));
  }
  all(): KubeObject[] {
    return [...this.objects.values()];
  }
  get(type: ResourceType, namespace: string, name: string): KubeObject | undefined {
    const apiVersion = type.group ? `${type.group}/${type.version}` : type.version;
    const o = this.find(apiVersion, type.kind, namespace, name);
    return o ? structuredClone(o) : undefined;
  }
  list(type: ResourceType, namespace?: string): readonly KubeObject[] {
    const apiVersion = type.group ? `${type.group}/${type.version}` : type.version;
    return this.all()
      .filter((o) => o.apiVersion === apiVersion && o.kind === type.kind)
      .filter((o) => namespace === undefined || namespaceOf(o) === namespace)
      .map((o) => structuredClone(o));
  }
  freshness() {
    return { synced: true, disconnectedForMs: 0 };
  }

  machineSnapshot(name: string): MachineSnapshot {
    return readMachineSnapshot(this, name, {
      mapiNamespace: MAPI_NS,
      capiNamespace: CAPI_NS,
      storageBeingRemoved: this.storageBeingRemoved,
      clusterCascade: this.clusterCascade,
    });
  }
  machineSetSnapshot(name: string): MachineSetSnapshot {
    return readMachineSetSnapshot(this, name, {
      mapiNamespace: MAPI_NS,
      capiNamespace: CAPI_NS,
      storageBeingRemoved: this.storageBeingRemoved,
      clusterCascade: this.clusterCascade,
    });
  }

  private nextRv(): string {
    this.rv += 1;
    return String(this.rv);
  }

  private target(ref: { apiVersion: string; kind: string; namespace: string; name: string }): KubeObject {
    const o = this.find(ref.apiVersion, ref.kind, ref.namespace, ref.name);
    if (!o) throw new Error(`404 ${ref.kind} ${ref.namespace}/${ref.name}`);
    return o;
  }

  private store(o: KubeObject, specChanged: boolean): void {
    const meta = o.metadata ?? {};
    meta.resourceVersion = this.nextRv();
    if (specChanged) meta.generation = (meta.generation ?? 1) + 1;
    o.metadata = meta;
    if (meta.deletionTimestamp && finalizersOf(o).length === 0) {
      this.objects.delete(this.key(o.apiVersion, o.kind, namespaceOf(o), nameOf(o)));
    } else {
      this.put(o);
    }
  }

  /** Executes a plan's writes in order with the guards of SPEC §7; throws (like a 409/404) on a failed guard. */
  execute(writes: readonly SyncWrite[]): void {
    const written = new Map<string, string>(); // uid → resourceVersion the previous write returned
    const checkRv = (o: KubeObject, read: string) => {
      const expected = written.get(o.metadata?.uid ?? "") ?? read;
      if (o.metadata?.resourceVersion !== expected) {
        throw new Error(`409 ${o.kind} ${nameOf(o)}: resourceVersion ${read} is stale`);
      }
    };
    for (const w of writes) {
      this.log.push(w);
      switch (w.kind) {
        case "create": {
          const o = structuredClone(w.object);
          if (this.find(o.apiVersion ?? "", o.kind ?? "", namespaceOf(o), nameOf(o)))
            throw new Error("409 AlreadyExists");
          o.metadata = { ...(o.metadata ?? {}), uid: uid(`${o.kind?.toLowerCase()}`), generation: 1 };
          this.store(o, false);
          break;
        }
        case "apply": {
          const o = this.target(w.target);
          checkRv(o, w.resourceVersion);
          const body = w.body;
          const meta = o.metadata ?? {};
          meta.labels = { ...(meta.labels ?? {}), ...(body.metadata?.labels ?? {}) };
          meta.annotations = { ...(meta.annotations ?? {}), ...(body.metadata?.annotations ?? {}) };
          const refs = [...(meta.ownerReferences ?? [])];
          for (const r of body.metadata?.ownerReferences ?? []) {
            const i = refs.findIndex((x) => x.uid === r.uid);
            if (i >= 0) refs[i] = r;
            else refs.push(r);
          }
          if (refs.length > 0) meta.ownerReferences = refs;
          const before = canonicalJson(o.spec);
          if (body.spec) o.spec = deepMerge(o.spec ?? {}, body.spec);
          this.store(o, canonicalJson(o.spec) !== before);
          written.set(meta.uid ?? "", meta.resourceVersion ?? "");
          break;
        }
        case "applyStatus": {
          const o = this.target(w.target);
          checkRv(o, w.resourceVersion);
          o.status = { ...(isRecord(o.status) ? o.status : {}), ...w.status };
          this.store(o, false);
          written.set(o.metadata?.uid ?? "", o.metadata?.resourceVersion ?? "");
          break;
        }
        case "annotate":
        case "pause": {
          const o = this.target(w.target);
          checkRv(o, w.resourceVersion);
          // A JSON merge patch: a null value removes the key (how a withdrawn delete mark is carried, §4.4).
          const annotations: Record<string, string> = { ...(o.metadata?.annotations ?? {}) };
          for (const [k, v] of Object.entries(w.annotations)) {
            if (v === null) delete annotations[k];
            else annotations[k] = v;
          }
          o.metadata = { ...(o.metadata ?? {}), annotations };
          this.store(o, false);
          written.set(o.metadata?.uid ?? "", o.metadata?.resourceVersion ?? "");
          break;
        }
        case "unpause": {
          const o = this.target(w.target);
          checkRv(o, w.resourceVersion);
          const annotations: Record<string, string> = { ...(o.metadata?.annotations ?? {}) };
          for (const k of w.annotations) delete annotations[k];
          o.metadata = { ...(o.metadata ?? {}), annotations };
          this.store(o, false);
          written.set(o.metadata?.uid ?? "", o.metadata?.resourceVersion ?? "");
          break;
        }
        case "addFinalizer":
        case "removeFinalizer":
        case "removeOwnerReference":
        case "setReplicas": {
          const o = this.target(w.target);
          if (w.kind === "addFinalizer" && o.metadata?.deletionTimestamp)
            throw new Error("422 new finalizer on deleting object");
          const result = jsonpatch.applyPatch(structuredClone(o), w.patch, true, false)
            .newDocument as KubeObject;
          this.store(result, w.kind === "setReplicas");
          written.set(result.metadata?.uid ?? "", result.metadata?.resourceVersion ?? "");
          break;
        }
        case "delete": {
          const o = this.target(w.target);
          if (
            o.metadata?.uid !== w.preconditions.uid ||
            o.metadata?.resourceVersion !== w.preconditions.resourceVersion
          ) {
            throw new Error(`409 delete precondition failed for ${o.kind} ${nameOf(o)}`);
          }
          if (!o.metadata?.deletionTimestamp) {
            o.metadata = { ...(o.metadata ?? {}), deletionTimestamp: NOW.toISOString() };
            this.store(o, true);
          }
          break;
        }
        default: {
          const never: never = w;
          throw new Error(`unknown write ${JSON.stringify(never)}`);
        }
      }
    }
  }

  /** Another controller's change (a provider removing its finalizer, acknowledging a pause …). */
  mutate(
    apiVersion: string,
    kind: string,
    namespace: string,
    name: string,
    change: (o: KubeObject) => void,
  ): void {
    const o = this.find(apiVersion, kind, namespace, name);
    if (!o) throw new Error(`no ${kind} ${name}`);
    change(o);
    this.store(o, false);
  }
}

const deepMerge = (base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> => {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isRecord(v) && isRecord(b) ? deepMerge(b, v) : structuredClone(v);
  }
  return out;
};

export const removeFinalizer = (o: KubeObject, f: string): void => {
  if (o.metadata) o.metadata.finalizers = finalizersOf(o).filter((x) => x !== f);
};

export { TYPES };

/** When the tests' deletes were asked for. */
export const DELETED_AT = "2026-11-30T09:59:00Z";

/** The object as the API server shows it once a delete was asked for (finalizers still hold it). */
export const deleting = (o: KubeObject): KubeObject => ({
  ...o,
  metadata: { ...o.metadata, deletionTimestamp: DELETED_AT },
});
