/**
 * Issue 11 item 7 (SPEC §2.2 identities, §2.3): the most privileged humans — `system:masters`,
 * `system:cluster-admins` — are refused on non-authoritative objects exactly like anyone else, through the
 * main resource and the `status` and `scale` subresources; only the configured controller identities are
 * exempt, by exact username; and labels or annotations that claim an identity change nothing. The real
 * engine over an in-memory view.
 */
import { describe, expect, it } from "vitest";
import { decide } from "../../src/policies/engine.js";
import type { AdmissionRequest, UserInfo } from "../../src/policies/types.js";
import {
  ADMIN,
  capiMachine,
  capiMachineSet,
  context,
  deleteRequest,
  edit,
  MASTERS,
  mapiMachine,
  mapiMachineSet,
  PRODUCT_USER,
  SETTINGS,
  scaleRequest,
  statusRequest,
  updateRequest,
} from "../policies/builders.js";

// MAPI is not authoritative for worker-a (status ClusterAPI), CAPI is not for the `workers` set (MachineAPI).
const mapiWorker = mapiMachine({ name: "worker-a", status: "ClusterAPI" });
const capiWorker = capiMachine({ name: "worker-a" });
const mapiSet = mapiMachineSet({ name: "workers", status: "MachineAPI" });
const capiSet = capiMachineSet({ name: "workers" });
const world = [mapiWorker, capiWorker, mapiSet, capiSet];
const ctx = context(world);

const as = (request: AdmissionRequest, userInfo: UserInfo): AdmissionRequest => ({ ...request, userInfo });

/** The refused writes: each on an object whose API is not authoritative. */
const refused: Array<[string, AdmissionRequest]> = [
  [
    "spec change of a non-authoritative MAPI Machine",
    updateRequest(
      mapiWorker,
      edit(mapiWorker, (m) => {
        m.spec.providerSpec.value.instanceType = "m6i.4xlarge";
      }),
    ),
  ],
  [
    "spec change of a non-authoritative CAPI MachineSet",
    updateRequest(
      capiSet,
      edit(capiSet, (m) => {
        m.spec.template.spec.bootstrap.dataSecretName = "other-user-data";
      }),
    ),
  ],
  [
    "status subresource: flipping status.authoritativeAPI of a MAPI Machine",
    statusRequest(
      mapiWorker,
      edit(mapiWorker, (m) => {
        m.status.authoritativeAPI = "MachineAPI";
      }),
    ),
  ],
  ["scale subresource of a non-authoritative CAPI MachineSet", scaleRequest(capiSet, 1, 5)],
];

const humans: Array<[string, UserInfo]> = [
  ["system:masters", MASTERS],
  ["system:cluster-admins", ADMIN],
  [
    "both groups and an admin-looking name",
    { username: "system:admin", groups: [...(MASTERS.groups ?? []), ...(ADMIN.groups ?? [])] },
  ],
  // A name one character off a controller identity is not that identity.
  [
    "a near-miss of the product's service account",
    { username: `${PRODUCT_USER} `, groups: ["system:masters"] },
  ],
  ["the product's service account name as a group", { username: "eve", groups: [PRODUCT_USER] }],
];

describe("identity: privileged humans are refused on non-authoritative objects (item 7)", () => {
  for (const [what, request] of refused) {
    for (const [who, user] of humans) {
      it(`${who}: ${what} is denied`, () => {
        const decision = decide("validate", as(request, user), ctx);
        expect(decision.allowed).toBe(false);
        expect(decision.status?.code).toBe(403);
        expect(decision.status?.message).toContain("(rule ");
      });
    }
  }
});

describe("identity: only the configured controller identities are exempt (SPEC §2.2)", () => {
  for (const username of SETTINGS.controllerUsers) {
    for (const [what, request] of refused) {
      it(`${username}: ${what} is allowed`, () => {
        const decision = decide("validate", as(request, { username, groups: [] }), ctx);
        expect(decision).toMatchObject({ allowed: true });
      });
    }
  }

  it("an identity is exempt only while configured: the same user is refused once removed", () => {
    const without = context(world, { settings: { controllerUsers: [] } });
    for (const [, request] of refused) {
      expect(decide("validate", as(request, { username: PRODUCT_USER, groups: [] }), without).allowed).toBe(
        false,
      );
    }
  });
});

describe("identity: labels and annotations cannot impersonate (item 7)", () => {
  const claims = {
    "machine-api-migration/user": PRODUCT_USER,
    "openshift.io/requester": PRODUCT_USER,
    "kubernetes.io/service-account.name": "machine-api-migration",
    "machine.openshift.io/exclude-node-draining": "",
  };
  const dressed = edit(mapiWorker, (m) => {
    m.spec.providerSpec.value.instanceType = "m6i.4xlarge";
    m.metadata.labels = { ...m.metadata.labels, ...claims };
    m.metadata.annotations = { ...m.metadata.annotations, ...claims };
  });
  for (const [who, user] of humans) {
    it(`${who}: an object carrying identity-like labels and annotations is still denied`, () => {
      const decision = decide("validate", as(updateRequest(mapiWorker, dressed), user), ctx);
      expect(decision.allowed).toBe(false);
    });
  }

  it("DELETE of the non-authoritative MAPI Machine by system:masters is judged like any user's", () => {
    const asMasters = decide("validate", as(deleteRequest(mapiWorker), MASTERS), ctx);
    const asNobody = decide(
      "validate",
      as(deleteRequest(mapiWorker), { username: "nobody", groups: [] }),
      ctx,
    );
    expect({ allowed: asMasters.allowed, rule: asMasters.rule }).toEqual({
      allowed: asNobody.allowed,
      rule: asNobody.rule,
    });
  });
});
