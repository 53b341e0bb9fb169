/**
 * SPEC §6 "a transport ConfigMap is untrusted input", on the real control plane (SPEC §8.1): a provider whose
 * Role writes the CAPI namespace's Secrets — within the installer's ceiling, so a transport ConfigMap's writer
 * can ship one — could create a Secret of type `kubernetes.io/service-account-token` naming the installer's
 * ServiceAccount; kube-controller-manager's token controller fills it in, and the provider then acts as the
 * installer, which writes webhook configurations and ClusterRoles (cluster-admin in two steps). First the hole
 * as it was, shown end to end; then manifests/installer's ValidatingAdmissionPolicy (decision 197) refusing
 * the same create, while the provider's ordinary Secrets are still its to write.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments, parse as parseYaml, stringify } from "yaml";
import { NAMESPACE_CEILING, policyRulesOf, uncovered } from "../../src/installer/ceiling.js";
import { connect } from "../../src/kube/config.js";
import { ForbiddenError, type KubeApiError } from "../../src/kube/errors.js";
import type { ResourceType } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { getPath } from "../../src/kube/object.js";
import { startTestCluster, type TestCluster } from "../cluster/backend.js";
import { INSTALLER_USER, NS, TYPES } from "./harness.js";

const RBAC = "rbac.authorization.k8s.io";
const type = (group: string, kind: string, plural: string, namespaced: boolean): ResourceType => ({
  group,
  version: "v1",
  kind,
  plural,
  namespaced,
});
const SECRETS = type("", "Secret", "secrets", true);
const { roles: ROLES, rolebindings: ROLE_BINDINGS } = TYPES;
const POLICIES = type(
  "admissionregistration.k8s.io",
  "ValidatingAdmissionPolicy",
  "validatingadmissionpolicies",
  false,
);
const POLICY_BINDINGS = type(
  "admissionregistration.k8s.io",
  "ValidatingAdmissionPolicyBinding",
  "validatingadmissionpolicybindings",
  false,
);
const SELF_SUBJECT_REVIEWS = type("authentication.k8s.io", "SelfSubjectReview", "selfsubjectreviews", false);
const PROVIDER = "capa-controller-manager";

let dir: string;
let cluster: TestCluster;

/** A provider's Role on the namespace's Secrets, as a transport ConfigMap may ship it. */
const secretsRole: KubeObject = {
  apiVersion: `${RBAC}/v1`,
  kind: "Role",
  metadata: { name: "capa-secrets", namespace: NS },
  rules: [
    {
      apiGroups: [""],
      resources: ["secrets"],
      verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
    },
  ],
} as KubeObject;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "token-secrets-"));
  cluster = await startTestCluster({
    stateDir: dir,
    mapiNamespace: "openshift-machine-api",
    capiNamespace: NS,
    controllerUsers: [],
    webhookCaPem: "",
    logger: pino({ level: "silent" }),
  });
  const admin = cluster.clientAs("admin");
  await admin.create(ROLES, secretsRole);
  await admin.create(ROLE_BINDINGS, {
    apiVersion: `${RBAC}/v1`,
    kind: "RoleBinding",
    metadata: { name: "capa-secrets", namespace: NS },
    roleRef: { apiGroup: RBAC, kind: "Role", name: "capa-secrets" },
    subjects: [{ kind: "ServiceAccount", name: PROVIDER, namespace: NS }],
  } as KubeObject);
}, 300_000);

afterAll(async () => {
  await cluster?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const tokenSecret = (name: string): KubeObject =>
  ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name,
      namespace: NS,
      annotations: { "kubernetes.io/service-account.name": "machine-api-migration-installer" },
    },
    type: "kubernetes.io/service-account-token",
  }) as KubeObject;

/** Who the API server takes `token`'s bearer for. */
async function whoIs(token: string): Promise<unknown> {
  const config = parseYaml(cluster.kubeconfigFor("capa")) as { users: { user: Record<string, unknown> }[] };
  for (const u of config.users) u.user = { token };
  const { client } = connect({ kubeconfigText: stringify(config) });
  const review = await client.create(SELF_SUBJECT_REVIEWS, {
    apiVersion: "authentication.k8s.io/v1",
    kind: "SelfSubjectReview",
  } as KubeObject);
  return getPath(review, ["status", "userInfo", "username"]);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("SPEC §6: a provider that may write the CAPI namespace's Secrets", () => {
  it("holds a Role the installer's ceiling covers", () => {
    const rules = policyRulesOf(secretsRole.rules);
    expect(rules.ok).toBe(true);
    expect(uncovered(NAMESPACE_CEILING, rules.ok ? rules.rules : [])).toEqual([]);
  });

  it("without the policy, gets the installer's token from a Secret it creates (the hole decision 197 closes)", async () => {
    const provider = cluster.clientAs("capa");
    await provider.create(SECRETS, tokenSecret("minted"));
    let token: string | undefined;
    for (let i = 0; i < 100 && token === undefined; i++) {
      const data = getPath(await provider.get(SECRETS, NS, "minted"), ["data", "token"]);
      if (typeof data === "string") token = Buffer.from(data, "base64").toString();
      else await sleep(100);
    }
    expect(token).toBeDefined();
    expect(await whoIs(token as string)).toBe(INSTALLER_USER);
    await cluster.clientAs("admin").delete(SECRETS, NS, "minted");
  });

  it("with manifests/installer's ValidatingAdmissionPolicy, is refused that Secret (403, saying why) and keeps its ordinary ones", async () => {
    const admin = cluster.clientAs("admin");
    const text = await readFile(
      join(__dirname, "../../manifests/installer/token-secrets-policy.yaml"),
      "utf8",
    );
    const [policy, binding] = parseAllDocuments(text).map((d) => d.toJSON() as KubeObject);
    await admin.create(POLICIES, policy as KubeObject);
    await admin.create(POLICY_BINDINGS, binding as KubeObject);
    const provider = cluster.clientAs("capa");
    // The API server loads a new policy through its own informer: the first creates may still pass.
    let refused: unknown;
    for (let i = 0; i < 100 && refused === undefined; i++) {
      try {
        await provider.create(SECRETS, tokenSecret(`minted-${i}`));
        await admin.delete(SECRETS, NS, `minted-${i}`);
        await sleep(100);
      } catch (e) {
        refused = e;
      }
    }
    expect(refused).toBeInstanceOf(ForbiddenError);
    expect((refused as KubeApiError).message).toMatch(
      /machine-api-migration-no-token-secrets.*may not create or change a Secret of type kubernetes.io\/service-account-token/s,
    );
    // Its own Secrets, and the same Secret from an admin, are untouched by the policy.
    await provider.create(SECRETS, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "capa-bootstrap", namespace: NS },
      type: "Opaque",
      stringData: { value: "x" },
    } as KubeObject);
    await admin.create(SECRETS, tokenSecret("by-an-admin"));
  });
});
