/**
 * The supported-cluster checks of SPEC §0.1: `assessSupport` as a table over its inputs (feature gate, the
 * MAPI CRDs' migration fields, the platform's own migration controllers), `supportEvent`'s reason, and
 * `reportSupport` recording it on the product's Deployment — best effort, never throwing.
 */
import pino from "pino";
import { describe, expect, it } from "vitest";
import type { KubeClient } from "../src/kube/client.js";
import { KubeApiError, NotFoundError } from "../src/kube/errors.js";
import type { EventRecorder } from "../src/kube/events.js";
import type { KubeObject } from "../src/kube/object.js";
import {
  assessSupport,
  FEATURE_GATE,
  missingMigrationFields,
  PRODUCT_DEPLOYMENT,
  reportSupport,
  type SupportInputs,
  supportEvent,
} from "../src/supported.js";
import { featureGate, mapiCrd, platformDeployment } from "./support/supported.js";

const supported: SupportInputs = {
  featureGate: featureGate([FEATURE_GATE]),
  machineCrd: mapiCrd("machines.machine.openshift.io"),
  machineSetCrd: mapiCrd("machinesets.machine.openshift.io"),
  platformControllers: undefined,
};

describe("assessSupport (SPEC §0.1)", () => {
  const cases: Array<{
    name: string;
    inputs: Partial<SupportInputs>;
    enforcing: boolean;
    controllers: boolean;
    reason?: RegExp;
  }> = [
    {
      name: "supported: gate on, fields present, no platform controllers",
      inputs: {},
      enforcing: true,
      controllers: true,
    },
    {
      name: "feature gate missing → no authority: every rule allows, no controllers",
      inputs: { featureGate: undefined },
      enforcing: false,
      controllers: false,
      reason: /^FeatureGate\/cluster does not report MachineAPIMigration enabled/,
    },
    {
      name: "feature gate present but another gate enabled",
      inputs: { featureGate: featureGate(["SomethingElse"]) },
      enforcing: false,
      controllers: false,
      reason: /MachineAPIMigration enabled/,
    },
    {
      name: "Machine CRD not installed",
      inputs: { machineCrd: undefined },
      enforcing: false,
      controllers: false,
      reason: /^CRD machines\.machine\.openshift\.io is not installed$/,
    },
    {
      name: "MachineSet CRD lacks a migration field",
      inputs: { machineSetCrd: mapiCrd("machinesets.machine.openshift.io", ["status.synchronizedAPI"]) },
      enforcing: false,
      controllers: false,
      reason: /^CRD machinesets\.machine\.openshift\.io lacks the migration fields status\.synchronizedAPI$/,
    },
    {
      name: "platform migration controllers running → admission enforces, no controllers",
      inputs: { platformControllers: platformDeployment(1) },
      enforcing: true,
      controllers: false,
      reason: /capi-controllers runs the platform's own migration controllers/,
    },
    {
      name: "platform Deployment scaled to 0 does not count",
      inputs: { platformControllers: platformDeployment(0) },
      enforcing: true,
      controllers: true,
    },
    {
      name: "platform Deployment without the migration container does not count",
      inputs: { platformControllers: platformDeployment(1, "manager") },
      enforcing: true,
      controllers: true,
    },
  ];
  it.each(cases)("$name", ({ inputs, enforcing, controllers, reason }) => {
    const support = assessSupport({ ...supported, ...inputs });
    expect(support.enforcing).toBe(enforcing);
    expect(support.controllers).toBe(controllers);
    if (reason) {
      expect(support.reasons).toHaveLength(1);
      expect(support.reasons[0]).toMatch(reason);
    } else expect(support.reasons).toEqual([]);
  });

  it("reports every unmet check, one reason each", () => {
    const support = assessSupport({
      featureGate: undefined,
      machineCrd: undefined,
      machineSetCrd: mapiCrd("machinesets.machine.openshift.io", ["spec.authoritativeAPI"]),
      platformControllers: platformDeployment(2),
    });
    expect(support).toMatchObject({ enforcing: false, controllers: false });
    expect(support.reasons).toHaveLength(4);
  });

  it("missingMigrationFields lists the absent paths of the served v1beta1 schema", () => {
    expect(
      missingMigrationFields(mapiCrd("x", ["spec.authoritativeAPI", "status.synchronizedGeneration"])),
    ).toEqual(["spec.authoritativeAPI", "status.synchronizedGeneration"]);
    expect(missingMigrationFields(undefined)).toHaveLength(4);
  });
});

describe("supportEvent", () => {
  it("says nothing on a supported cluster", () => {
    expect(supportEvent(assessSupport(supported))).toBeUndefined();
  });
  it("UnsupportedCluster when admission cannot enforce", () => {
    const event = supportEvent(assessSupport({ ...supported, featureGate: undefined }));
    expect(event).toMatchObject({ type: "Warning", reason: "UnsupportedCluster" });
    expect(event?.message).toMatch(
      /^every admission rule allows and no controller starts: FeatureGate\/cluster/,
    );
  });
  it("PlatformMigrationControllersRunning when only the controllers are off", () => {
    const event = supportEvent(assessSupport({ ...supported, platformControllers: platformDeployment(1) }));
    expect(event).toMatchObject({ type: "Warning", reason: "PlatformMigrationControllersRunning" });
  });
});

describe("reportSupport", () => {
  const deployment: KubeObject = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: PRODUCT_DEPLOYMENT, namespace: "openshift-cluster-api", uid: "u1" },
  };
  const setup = (get: KubeClient["get"]) => {
    const recorded: Array<{ object: KubeObject; type: string; reason: string; message: string }> = [];
    const events: EventRecorder = {
      record: async (object, type, reason, message) => {
        recorded.push({ object, type, reason, message });
      },
    };
    const asked: string[] = [];
    const client = {
      get: async (...args: Parameters<KubeClient["get"]>) => {
        asked.push(`${args[0].plural} ${args[1]}/${args[2]}`);
        return get(...args);
      },
    } as unknown as KubeClient;
    const deps = { client, events, namespace: "openshift-cluster-api", logger: pino({ level: "silent" }) };
    return { deps, recorded, asked };
  };
  const unsupported = assessSupport({ ...supported, featureGate: undefined });

  it("records the Warning on the product's Deployment in the CAPI namespace", async () => {
    const { deps, recorded, asked } = setup(async () => deployment);
    await reportSupport(deps, unsupported);
    expect(asked).toEqual([`deployments openshift-cluster-api/${PRODUCT_DEPLOYMENT}`]);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ object: deployment, type: "Warning", reason: "UnsupportedCluster" });
  });

  it("records nothing (and reads nothing) on a supported cluster", async () => {
    const { deps, recorded, asked } = setup(async () => deployment);
    await reportSupport(deps, assessSupport(supported));
    expect(asked).toEqual([]);
    expect(recorded).toEqual([]);
  });

  it("is never fatal: a missing Deployment or a failed read records nothing and resolves", async () => {
    const missing = setup(async () => {
      throw new NotFoundError(404, "NotFound", "not found");
    });
    await expect(reportSupport(missing.deps, unsupported)).resolves.toBeUndefined();
    expect(missing.recorded).toEqual([]);
    const forbidden = setup(async () => {
      throw new KubeApiError(403, "Forbidden", "forbidden");
    });
    await expect(reportSupport(forbidden.deps, unsupported)).resolves.toBeUndefined();
    expect(forbidden.recorded).toEqual([]);
  });
});
