/**
 * SPEC §0.1 "these checks hold for the life of the process": the pure predicates as tables
 * (`platformControllersRunning`, `supportChanged`, `isDeletionWrite`), the live guard (`createPlatformGuard`:
 * one GET per call, stops the controllers once, fails closed on a failed read), the plan executor stopping
 * before a deletion write the guard refuses, and `watchSupport` reporting a changed gate/CRD answer (driven
 * by fake timers; nothing waits on the wall clock).
 */
import pino from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { KubeClient } from "../src/kube/client.js";
import { NotFoundError, ServerError } from "../src/kube/errors.js";
import type { ResourceType } from "../src/kube/kinds.js";
import type { KubeObject } from "../src/kube/object.js";
import { DEFAULT_PLATFORM, platformNamed } from "../src/platforms/registry.js";
import {
  createPlatformGuard,
  FEATURE_GATE,
  platformControllersRunning,
  readServedPlatform,
  type Support,
  supportChanged,
  watchSupport,
} from "../src/supported.js";
import { executeWrites, isDeletionWrite } from "../src/sync/execute.js";
import type { SyncWrite } from "../src/sync/writes.js";
import {
  annotateWrite,
  deleteWrite,
  removeFinalizersWrite,
  removeOwnerReferenceWrite,
  setReplicasWrite,
} from "../src/sync/writes.js";
import { featureGate, mapiCrd, platformDeployment } from "./support/supported.js";

const quiet = pino({ level: "silent" });

describe("§0.1 platformControllersRunning: absent or scaled to zero is the only clear answer", () => {
  const rows: [string, KubeObject | undefined, boolean][] = [
    ["absent", undefined, false],
    ["scaled to zero", platformDeployment(0), false],
    ["one replica", platformDeployment(1), true],
    ["replicas unset (the API's default, 1)", platformDeployment(undefined), true],
    ["three replicas", platformDeployment(3), true],
    ["running, but without the migration container", platformDeployment(1, "cluster-capi-operator"), false],
  ];
  for (const [name, d, running] of rows)
    it(`${name} → ${running ? "running" : "clear"}`, () => {
      expect(platformControllersRunning(d)).toBe(running);
    });
});

describe("§0.1 supportChanged: only the FeatureGate/CRD answer makes the process exit", () => {
  const support = (enforcing: boolean, controllers: boolean): Support => ({
    enforcing,
    controllers,
    reasons: [],
  });
  const rows: [string, Support, Support, boolean][] = [
    ["supported, still supported", support(true, true), support(true, true), false],
    ["supported → the gate or a CRD lost the fields", support(true, true), support(false, false), true],
    ["unsupported → supported (the gate was enabled)", support(false, false), support(true, true), true],
    [
      "the platform's controllers started: not an exit, the guard's business",
      support(true, true),
      support(true, false),
      false,
    ],
    ["the platform's controllers stopped", support(true, false), support(true, true), false],
  ];
  for (const [name, started, now, changed] of rows)
    it(`${name} → ${changed ? "exit" : "stay"}`, () => {
      expect(supportChanged(started, now)).toBe(changed);
    });
});

const object = (kind: string, extra: Partial<NonNullable<KubeObject["metadata"]>> = {}): KubeObject => ({
  apiVersion: kind === "MachineSet" ? "cluster.x-k8s.io/v1beta2" : "machine.openshift.io/v1beta1",
  kind,
  metadata: {
    name: "m",
    namespace: "openshift-machine-api",
    uid: `uid-${kind}`,
    resourceVersion: "5",
    ...extra,
  },
  spec: { replicas: 2 },
});
const withFinalizer = object("Machine", { finalizers: ["sync.machine.openshift.io/finalizer"] });
const withOwner = object("Machine", {
  ownerReferences: [
    { apiVersion: "machine.openshift.io/v1beta1", kind: "MachineSet", name: "s", uid: "uid-s" },
  ],
});

describe("§0.1 isDeletionWrite: the writes the live guard precedes", () => {
  const rows: [string, SyncWrite | undefined, boolean][] = [
    ["delete", deleteWrite(object("Machine")), true],
    [
      "finalizer release",
      removeFinalizersWrite(withFinalizer, ["sync.machine.openshift.io/finalizer"]),
      true,
    ],
    ["orphaning (owner reference removed)", removeOwnerReferenceWrite(withOwner, "uid-s"), true],
    [
      "delete mark",
      annotateWrite(object("Machine"), { "cluster.x-k8s.io/delete-machine": "" }, "deleteMark"),
      false,
    ],
    ["replicas carry", setReplicasWrite(object("MachineSet"), 3), false],
  ];
  for (const [name, write, deletion] of rows)
    it(`${name} → ${deletion ? "guarded" : "not a deletion write"}`, () => {
      expect(write).toBeDefined();
      expect(isDeletionWrite(write as SyncWrite)).toBe(deletion);
    });
});

/** A client whose GET answers `answer()` and counts its calls; any write fails the test. */
const fakeClient = (answer: () => KubeObject | Error) => {
  const gets: string[] = [];
  const client = {
    async get(type: ResourceType, namespace: string, name: string) {
      gets.push(`${type.plural} ${namespace}/${name}`);
      const a = answer();
      if (a instanceof Error) throw a;
      return a;
    },
  } as unknown as KubeClient;
  return { client, gets };
};

describe("§0.1 createPlatformGuard: one live GET per gate", () => {
  it("absent → clear, with exactly one GET of the platform's Deployment; nothing stopped", async () => {
    const { client, gets } = fakeClient(() => new NotFoundError(404, "NotFound", "not found"));
    const onRunning = vi.fn();
    const guard = createPlatformGuard({ client, logger: quiet, onRunning });
    expect(await guard.clear("handover step startMigration")).toBe(true);
    expect(gets).toEqual(["deployments openshift-cluster-api/capi-controllers"]);
    expect(onRunning).not.toHaveBeenCalled();
    expect(guard.tripped()).toBe(false);
  });

  it("scaled above zero → refused, the controllers stopped once, with the reason naming what was not written", async () => {
    const { client, gets } = fakeClient(() => platformDeployment(1));
    const onRunning = vi.fn();
    const guard = createPlatformGuard({ client, logger: quiet, onRunning });
    expect(await guard.clear("handover step startMigration of Machine m")).toBe(false);
    expect(await guard.clear("deletion write delete of Machine x")).toBe(false);
    expect(gets).toHaveLength(2);
    expect(onRunning).toHaveBeenCalledTimes(1);
    expect(onRunning.mock.calls[0]?.[0]).toBe(
      "Deployment openshift-cluster-api/capi-controllers runs the platform's own migration controllers (container machine-api-migration): handover step startMigration of Machine m not written; the product's controllers stop (admission keeps serving)",
    );
    expect(guard.tripped()).toBe(true);
  });

  it("a failed read is not an answer: it throws (the reconcile backs off) and stops nothing", async () => {
    const { client } = fakeClient(() => new ServerError(503, "ServiceUnavailable", "etcd"));
    const onRunning = vi.fn();
    const guard = createPlatformGuard({ client, logger: quiet, onRunning });
    await expect(guard.clear("controller start")).rejects.toThrow();
    expect(onRunning).not.toHaveBeenCalled();
  });
});

describe("§0.1 executeWrites: the guard before a plan's first deletion write", () => {
  const recording = () => {
    const sent: string[] = [];
    const client = {
      async patch(_t: ResourceType, _ns: string, name: string) {
        sent.push(`patch ${name}`);
        return { metadata: { uid: "u", resourceVersion: "6" } };
      },
      async delete(_t: ResourceType, _ns: string, name: string) {
        sent.push(`delete ${name}`);
        return {};
      },
    } as unknown as KubeClient;
    const typeOf = async (): Promise<ResourceType> => ({
      group: "machine.openshift.io",
      version: "v1beta1",
      kind: "Machine",
      plural: "machines",
      namespaced: true,
    });
    return { client, typeOf, sent };
  };
  const mark = annotateWrite(object("Machine"), { "cluster.x-k8s.io/delete-machine": "" }, "deleteMark");
  const plan: SyncWrite[] = [mark, deleteWrite(object("Machine")), deleteWrite(object("Machine"))];

  it("refused: the writes before it are made, nothing from the deletion write on", async () => {
    const { client, typeOf, sent } = recording();
    const clear = vi.fn(async () => false);
    const outcome = await executeWrites({ client, typeOf, platformGuard: { clear } }, plan);
    expect(outcome).toMatchObject({ kind: "aborted", index: 1 });
    expect(sent).toEqual(["patch m"]);
    expect(clear).toHaveBeenCalledTimes(1);
  });

  it("clear: one read for the whole plan, every write made", async () => {
    const { client, typeOf, sent } = recording();
    const clear = vi.fn(async () => true);
    const outcome = await executeWrites({ client, typeOf, platformGuard: { clear } }, plan);
    expect(outcome.kind).toBe("done");
    expect(sent).toEqual(["patch m", "delete m", "delete m"]);
    expect(clear).toHaveBeenCalledTimes(1);
  });

  it("a plan without a deletion write reads nothing", async () => {
    const { client, typeOf } = recording();
    const clear = vi.fn(async () => false);
    expect((await executeWrites({ client, typeOf, platformGuard: { clear } }, [mark])).kind).toBe("done");
    expect(clear).not.toHaveBeenCalled();
  });
});

describe("§0.1 watchSupport: a changed FeatureGate/CRD answer is reported", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const cluster = (state: { gate: boolean; platform: number }) =>
    ({
      async get(type: ResourceType, _ns: string, name: string) {
        if (type.kind === "FeatureGate") return featureGate(state.gate ? [FEATURE_GATE] : []);
        if (type.kind === "CustomResourceDefinition") return mapiCrd(name);
        if (state.platform > 0) return platformDeployment(state.platform);
        throw new NotFoundError(404, "NotFound", "not found");
      },
    }) as unknown as KubeClient;
  const supported: Support = { enforcing: true, controllers: true, reasons: [] };
  /** watchSupport on `state`'s cluster, started supported, reading once a second. */
  const watchEverySecond = (
    state: { gate: boolean; platform: number },
    callbacks: Pick<Parameters<typeof watchSupport>[0], "onChange" | "onPlatformControllers">,
  ) =>
    watchSupport({
      client: cluster(state),
      started: supported,
      intervalMs: 1_000,
      logger: quiet,
      ...callbacks,
    });

  it("the gate is turned off: onChange once, then no more reads", async () => {
    vi.useFakeTimers();
    const state = { gate: true, platform: 0 };
    const onChange = vi.fn();
    const watch = watchEverySecond(state, { onChange });
    await vi.advanceTimersByTimeAsync(3_000);
    expect(onChange).not.toHaveBeenCalled();
    state.gate = false;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(onChange).toHaveBeenCalledTimes(1);
    expect(onChange.mock.calls[0]?.[0]).toMatchObject({ enforcing: false });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(onChange).toHaveBeenCalledTimes(1);
    watch.stop();
  });

  it("the platform's controllers are scaled up: no exit, onPlatformControllers instead", async () => {
    vi.useFakeTimers();
    const state = { gate: true, platform: 0 };
    const onChange = vi.fn();
    const onPlatformControllers = vi.fn();
    const watch = watchEverySecond(state, { onChange, onPlatformControllers });
    state.platform = 2;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(onChange).not.toHaveBeenCalled();
    expect(onPlatformControllers).toHaveBeenCalled();
    watch.stop();
  });
});

describe("decision 87 readServedPlatform: one GET of the Infrastructure picks the kinds the process serves", () => {
  const infra = (type: string) => ({ status: { platformStatus: { type } } });
  it.each(["AWS", "OpenStack", "PowerVS"])("%s → that platform, no reason given", async (type) => {
    const { client, gets } = fakeClient(() => infra(type));
    const served = await readServedPlatform(client);
    expect(served).toEqual({ platform: platformNamed(type) });
    expect(gets).toEqual(["infrastructures /cluster"]);
  });
  it("an unsupported platform → AWS's kinds, and the reason names the platform and the supported ones", async () => {
    const { client } = fakeClient(() => infra("GCP"));
    expect(await readServedPlatform(client)).toEqual({
      platform: DEFAULT_PLATFORM,
      reason:
        'Infrastructure cluster names platform "GCP", which the product does not support (AWS, OpenStack, PowerVS): serving AWS\'s kinds',
    });
  });
  it("no Infrastructure → AWS's kinds, saying so", async () => {
    const { client } = fakeClient(() => new NotFoundError(404, "NotFound", "not found"));
    expect(await readServedPlatform(client)).toEqual({
      platform: DEFAULT_PLATFORM,
      reason: "Infrastructure cluster does not exist: serving AWS's kinds",
    });
  });
  it("any other error is thrown: nothing is guessed from a failed read", async () => {
    const { client } = fakeClient(() => new ServerError(500, "InternalError", "boom"));
    await expect(readServedPlatform(client)).rejects.toThrow("boom");
  });
});
