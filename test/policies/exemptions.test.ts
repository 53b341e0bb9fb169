/**
 * SPEC §2.2: the platform controllers a webhook outage must never block — control-plane-machine-set-operator
 * and the cluster autoscaler — are among the default `controllerUsers` of src/config.ts, which is what the
 * policy engine exempts (defence in depth beside the webhook configurations' matchConditions, whose list
 * test/manifests checks against the same defaults). Each row is a request the engine refuses to an admin:
 * the exempt identity gets it allowed, by the engine's `controller-user` decision, on every webhook.
 */
import { describe, expect, it } from "vitest";
import { SETTINGS as CONFIG_SETTINGS } from "../../src/config.js";
import { decide, NON_RULE_DECISIONS } from "../../src/policies/engine.js";
import type { AdmissionRequest, WebhookName } from "../../src/policies/types.js";
import {
  ADMIN,
  capiMachineSet,
  context,
  deleteRequest,
  edit,
  mapiMachine,
  mapiMachineSet,
  SET_B,
  scaleRequest,
  twinWorld,
  updateRequest,
} from "./builders.js";

const CPMS_OPERATOR = "system:serviceaccount:openshift-machine-api:control-plane-machine-set-operator";
const AUTOSCALER = "system:serviceaccount:openshift-machine-api:cluster-autoscaler";

const migratedSet = mapiMachineSet({ name: SET_B, status: "ClusterAPI", replicas: 2 });
const master = edit(mapiMachine({ name: "master-0", status: "ClusterAPI" }), (m) => {
  m.metadata.ownerReferences = [
    {
      apiVersion: "machine.openshift.io/v1",
      kind: "ControlPlaneMachineSet",
      name: "cluster",
      uid: "uid-cpms",
      controller: true,
    },
  ];
});
const mirrorSet = capiMachineSet({ paused: "marked" });
const objects = [...twinWorld("AWS"), master];

interface Row {
  name: string;
  webhook: WebhookName;
  request: AdmissionRequest;
}

const rows: Row[] = [
  {
    name: "mapi-frozen: scaling a ClusterAPI MAPI MachineSet through `scale`",
    webhook: "validate",
    request: scaleRequest(migratedSet, 2, 3),
  },
  {
    name: "mapi-frozen: changing spec.replicas of a ClusterAPI MAPI MachineSet",
    webhook: "validate",
    request: updateRequest(
      migratedSet,
      edit(migratedSet, (s) => {
        s.spec.replicas = 1;
      }),
    ),
  },
  {
    name: "mapi-frozen: editing the providerSpec of a ClusterAPI (non-authoritative) MAPI Machine",
    webhook: "validate",
    request: updateRequest(
      master,
      edit(master, (m) => {
        m.spec.providerSpec.value.instanceType = "m6i.2xlarge";
      }),
    ),
  },
  {
    name: "delete-authoritative-via-mirror: deleting a paused CAPI mirror without confirm-delete",
    webhook: "validate-guard",
    request: deleteRequest(mirrorSet),
  },
];

describe("SPEC §2.2 exemptions: control-plane-machine-set-operator and the cluster autoscaler", () => {
  const ctx = context(objects, { settings: { controllerUsers: CONFIG_SETTINGS.controllerUsers.default } });

  it("both identities are default controllerUsers", () => {
    expect(CONFIG_SETTINGS.controllerUsers.default).toEqual(
      expect.arrayContaining([CPMS_OPERATOR, AUTOSCALER]),
    );
  });

  for (const row of rows) {
    it(`${row.name}: refused to an admin (the row is a real refusal)`, () => {
      const d = decide(row.webhook, { ...row.request, userInfo: ADMIN }, ctx);
      expect(d.allowed).toBe(false);
    });
    for (const username of [CPMS_OPERATOR, AUTOSCALER]) {
      it(`${row.name}: allowed to ${username.split(":").at(-1)} (rule ${NON_RULE_DECISIONS.controllerUser})`, () => {
        const request = { ...row.request, userInfo: { username, groups: ["system:serviceaccounts"] } };
        expect(decide(row.webhook, request, ctx)).toMatchObject({
          allowed: true,
          rule: NON_RULE_DECISIONS.controllerUser,
        });
      });
    }
  }

  it("the groups of an exempt service account exempt nobody else", () => {
    const request = {
      ...scaleRequest(migratedSet, 2, 3),
      userInfo: { username: "alice", groups: ["system:serviceaccounts:openshift-machine-api"] },
    };
    expect(decide("validate", request, ctx).allowed).toBe(false);
  });
});
