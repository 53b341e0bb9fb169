/**
 * Local mode is set up as a cluster is (SPEC §8, issue 22): the local API server authorizes every request
 * with the RBAC local mode stores — the product's manifests/base RBAC and the installer's exactly as
 * shipped, the stand-ins' controllers' roles, and `admin` a cluster admin through OpenShift's
 * `cluster-admins` binding — so a missing rule of the product fails here with the 403 a cluster answers
 * (the twin creates under OwnerReferencesPermissionEnforcement are test/integration/shipped-rbac.test.ts, which
 * runs on both backends).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import type { KubeClient } from "../../src/kube/client.js";
import { ForbiddenError } from "../../src/kube/errors.js";
import { KINDS, type ResourceType } from "../../src/kube/kinds.js";
import { isRecord } from "../../src/kube/object.js";
import { type LocalCluster, startLocalCluster } from "../../src/local/cluster.js";
import { inNamespaces, localRbac, PROVIDERS_RBAC, RBAC_TYPES, rbacObjectsIn } from "../../src/local/rbac.js";
import { createCertificateAuthority } from "../../src/server/certs.js";
import { silentLogger } from "../kube/fakes.js";

const MAPI_NS = "openshift-machine-api";
const CAPI_NS = "openshift-cluster-api";
const ns = { mapiNamespace: MAPI_NS, capiNamespace: CAPI_NS };
const SECRETS: ResourceType = {
  group: "",
  version: "v1",
  kind: "Secret",
  plural: "secrets",
  namespaced: true,
};

let stateDir = "";
let local: LocalCluster;
let admin: KubeClient;
let product: KubeClient;

const refusalOf = async (p: Promise<unknown>): Promise<ForbiddenError> => {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(ForbiddenError);
  return e as ForbiddenError;
};

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), "local-rbac-"));
  local = await startLocalCluster({
    host: "127.0.0.1",
    port: 0,
    stateDir,
    ...ns,
    controllerUsers: [],
    webhookCaPem: createCertificateAuthority("unused webhook CA").certPem,
    logger: silentLogger(),
  });
  admin = local.clientAs("admin");
  product = local.clientAs("controller");
});

afterAll(async () => {
  await local?.stop();
  await rm(stateDir, { recursive: true, force: true });
});

describe("who may do what in local mode", () => {
  it("the product's identity may not list Secrets cluster-wide (issue 22), in kube's words", async () => {
    const e = await refusalOf(product.list(SECRETS));
    expect(e.message).toBe(
      'secrets is forbidden: User "system:serviceaccount:openshift-cluster-api:machine-api-migration" cannot list resource "secrets" in API group "" at the cluster scope',
    );
  });

  it("admin (kube:admin, group system:cluster-admins, not system:masters) is a cluster admin", async () => {
    const user = local.users.find((u) => u.context === "admin")!;
    expect(user).toMatchObject({
      username: "kube:admin",
      groups: ["system:cluster-admins", "system:authenticated"],
    });
    await expect(admin.list(SECRETS)).resolves.toBeDefined();
    const binding = await admin.get(RBAC_TYPES.ClusterRoleBinding!, "", "cluster-admins");
    expect(binding).toMatchObject({
      roleRef: { kind: "ClusterRole", name: "cluster-admin" },
      subjects: [{ kind: "Group", name: "system:cluster-admins" }],
    });
  });

  it("the product's and the installer's RBAC are stored exactly as shipped", async () => {
    for (const path of ["manifests/base/rbac.yaml", "manifests/installer/installer.yaml"])
      for (const shipped of await rbacObjectsIn(path)) {
        const type = RBAC_TYPES[String(shipped.kind)]!;
        const stored = await admin.get(
          type,
          shipped.metadata?.namespace ?? "",
          String(shipped.metadata?.name),
        );
        for (const field of ["rules", "roleRef", "subjects"])
          expect({ [field]: stored[field] }).toEqual({ [field]: shipped[field] });
      }
  });

  it("each stand-in holds its controller's roles, and nothing beyond them", async () => {
    await expect(
      local.clientAs("mao").list(KINDS.mapiMachine, { namespace: MAPI_NS }),
    ).resolves.toBeDefined();
    await expect(
      local.clientAs("capi").list(KINDS.capiMachine, { namespace: CAPI_NS }),
    ).resolves.toBeDefined();
    await expect(
      local.clientAs("capa").list(KINDS.awsMachine, { namespace: CAPI_NS }),
    ).resolves.toBeDefined();
    const e = await refusalOf(local.clientAs("capa").list(SECRETS, { namespace: "kube-system" }));
    expect(e.message).toBe(
      'secrets is forbidden: User "system:serviceaccount:openshift-cluster-api:capa-controller-manager" cannot list resource "secrets" in API group "" in the namespace "kube-system"',
    );
  });

  it("capo (CAPO's manager, the OpenStack demo) holds CAPA's rights on the OpenStack kinds only", async () => {
    const capo = local.clientAs("capo");
    expect(local.users.find((u) => u.context === "capo")?.username).toBe(
      "system:serviceaccount:openshift-cluster-api:capo-manager",
    );
    for (const type of [KINDS.openStackMachine, KINDS.openStackMachineTemplate, KINDS.openStackCluster])
      await expect(capo.list(type, { namespace: CAPI_NS })).resolves.toBeDefined();
    await expect(capo.list(KINDS.capiMachine, { namespace: CAPI_NS })).resolves.toBeDefined();
    const e = await refusalOf(capo.list(KINDS.awsMachine, { namespace: CAPI_NS }));
    expect(e.message).toBe(
      'awsmachines.infrastructure.cluster.x-k8s.io is forbidden: User "system:serviceaccount:openshift-cluster-api:capo-manager" cannot list resource "awsmachines" in API group "infrastructure.cluster.x-k8s.io" in the namespace "openshift-cluster-api"',
    );
    await refusalOf(capo.list(SECRETS, { namespace: CAPI_NS }));
  });

  it("capibm (CAPIBM's manager, the PowerVS demo) holds CAPO's rights on the PowerVS kinds only", async () => {
    const capibm = local.clientAs("capibm");
    expect(local.users.find((u) => u.context === "capibm")?.username).toBe(
      "system:serviceaccount:openshift-cluster-api:capi-ibmcloud-manager",
    );
    for (const type of [KINDS.ibmPowerVSMachine, KINDS.ibmPowerVSMachineTemplate, KINDS.ibmPowerVSCluster])
      await expect(capibm.list(type, { namespace: CAPI_NS })).resolves.toBeDefined();
    await expect(capibm.list(KINDS.capiMachine, { namespace: CAPI_NS })).resolves.toBeDefined();
    const e = await refusalOf(capibm.list(KINDS.openStackMachine, { namespace: CAPI_NS }));
    expect(e.message).toBe(
      'openstackmachines.infrastructure.cluster.x-k8s.io is forbidden: User "system:serviceaccount:openshift-cluster-api:capi-ibmcloud-manager" cannot list resource "openstackmachines" in API group "infrastructure.cluster.x-k8s.io" in the namespace "openshift-cluster-api"',
    );
    await refusalOf(capibm.list(KINDS.awsMachine, { namespace: CAPI_NS }));
    await refusalOf(capibm.list(SECRETS, { namespace: CAPI_NS }));
    // The role mirrors capo's, kind for kind.
    const rules = async (name: string) =>
      JSON.stringify((await admin.get(RBAC_TYPES.ClusterRole!, "", name)).rules)
        .replaceAll("ibmpowervs", "KIND")
        .replaceAll("openstack", "KIND");
    expect(await rules("simulated-capibm-manager")).toBe(await rules("simulated-capo-manager"));
  });

  it("the installer may write ClusterRoles but not read Secrets outside its namespace", async () => {
    const installer = local.clientAs("installer");
    await expect(installer.list(RBAC_TYPES.ClusterRole!)).resolves.toBeDefined();
    await refusalOf(installer.list(SECRETS, { namespace: "kube-system" }));
    await expect(installer.list(SECRETS, { namespace: CAPI_NS })).resolves.toBeDefined();
  });

  // The installer holds neither `escalate` nor `bind` (manifests/installer): kube-apiserver's escalation
  // prevention is what keeps a transport ConfigMap's roles within what it holds, and local mode keeps it too.
  it("the installer may not grant, nor bind, what it does not hold (RBAC escalation prevention)", async () => {
    const installer = local.clientAs("installer");
    const clusterRole = (name: string, rules: unknown[]) => ({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name },
      rules,
    });
    const grant = await refusalOf(
      installer.create(
        RBAC_TYPES.ClusterRole!,
        clusterRole("escalating", [{ apiGroups: [""], resources: ["secrets"], verbs: ["list", "get"] }]),
      ),
    );
    expect(grant.message).toContain(
      'clusterroles.rbac.authorization.k8s.io "escalating" is forbidden: user "system:serviceaccount:openshift-cluster-api:machine-api-migration-installer"',
    );
    expect(grant.message).toContain(
      'is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["list" "get"]}',
    );
    const bind = await refusalOf(
      installer.create(RBAC_TYPES.ClusterRoleBinding!, {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        metadata: { name: "escalating" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
        subjects: [{ kind: "ServiceAccount", name: "machine-api-migration-installer", namespace: CAPI_NS }],
      }),
    );
    expect(bind.message).toContain("is attempting to grant RBAC permissions not currently held");
    // Within what it holds, both are written.
    const held = [{ apiGroups: ["cluster.x-k8s.io"], resources: ["machines"], verbs: ["get", "list"] }];
    await expect(installer.create(RBAC_TYPES.ClusterRole!, clusterRole("held", held))).resolves.toBeDefined();
    await expect(admin.get(RBAC_TYPES.ClusterRole!, "", "escalating")).rejects.toThrow(/not found/);
  });
});

describe("the shipped RBAC in other namespaces (--mapi-namespace, --capi-namespace)", () => {
  it("every string naming a shipped namespace is renamed, nothing else; the defaults change nothing", async () => {
    const objects = await localRbac(ns);
    const other = { mapiNamespace: "m", capiNamespace: "c" };
    const renamed = objects.map((o) => inNamespaces(o, other));
    expect(objects.map((o) => inNamespaces(o, ns))).toEqual(objects);
    const text = JSON.stringify(renamed);
    expect(text).not.toContain('"openshift-machine-api"');
    expect(text).not.toContain('"openshift-cluster-api"');
    const role = renamed.find(
      (o) => o.kind === "ClusterRole" && o.metadata?.name === "machine-api-migration",
    )!;
    const namespaces = (role.rules as Array<Record<string, unknown>>).find((r) =>
      (r.resources as string[]).includes("namespaces"),
    );
    expect(namespaces?.resourceNames).toEqual(["m", "c"]);
  });

  it("writes ServiceAccounts first, then roles, then bindings (an order the API accepts)", async () => {
    const kinds = (await localRbac(ns)).map((o) => String(o.kind));
    const rank = ["ServiceAccount", "ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding"];
    expect(kinds).toEqual([...kinds].sort((a, b) => rank.indexOf(a) - rank.indexOf(b)));
    // Every document of the stand-ins' file is a kind local mode writes (none is silently left out).
    const text = await readFile(PROVIDERS_RBAC, "utf8");
    expect(parseAllDocuments(text).filter((d) => isRecord(d.toJS()))).toHaveLength(
      (await rbacObjectsIn(PROVIDERS_RBAC)).length,
    );
  });
});
