/**
 * SPEC §6 "A transport ConfigMap is untrusted input" on the real control plane (SPEC §8.1): the installer
 * runs as its own ServiceAccount under the RBAC manifests/installer ships, and kube-apiserver enforces
 * RBAC's escalation prevention. Two lines of defence, each shown on its own. First, the installer's bounds:
 * a transport ConfigMap carrying a ClusterRoleBinding to cluster-admin applies nothing of its provider,
 * names the document on the ClusterOperator (Progressing at once, Degraded after five minutes), and never
 * even asks the server. Second, with those checks out of the way — the installer's own identity sending
 * escalating RBAC itself — the server refuses with 403, because the installer holds neither `escalate` nor
 * `bind`, only the ceiling. Last, the ceiling binding removed: the installer's apply of an ordinary provider
 * ClusterRole is refused too, the proof that the ceiling, and nothing broader, is what lets it grant.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseAllDocuments, stringify } from "yaml";
import { CEILING_NAME } from "../../src/installer/ceiling.js";
import { DEMO_AWS_COMPONENTS, DEMO_CORE_COMPONENTS } from "../../src/installer/demo-providers.js";
import { FIELD_MANAGER, PROVIDER_LABEL } from "../../src/installer/model.js";
import { ForbiddenError } from "../../src/kube/errors.js";
import { KINDS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { conditionOf, getPath, nameOf } from "../../src/kube/object.js";
import { type Bed, INSTALLER_USER, imagesConfigMap, NS, startBed, TYPES, transport } from "./harness.js";

const ESCALATION = /is attempting to grant RBAC permissions not currently held/;

let bed: Bed;
beforeAll(async () => {
  bed = await startBed();
  await bed.setPlatform("AWS");
  await bed.putConfigMap(imagesConfigMap());
  await bed.putConfigMap(transport("cluster-api", "core", "v1.10.0", DEMO_CORE_COMPONENTS));
  await bed.putConfigMap(transport("aws", "infrastructure", "v2.9.0", DEMO_AWS_COMPONENTS));
  await bed.start();
});
afterAll(async () => {
  await bed?.stop();
});

const binding = (name: string, role: string): KubeObject => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRoleBinding",
  metadata: { name },
  roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
  subjects: [{ kind: "ServiceAccount", name: "capa-controller-manager", namespace: NS }],
});

/** What the installer wrote, by identity and resourceVersion. */
const snapshot = async (): Promise<string[]> => {
  const out: string[] = [];
  for (const [plural, type] of Object.entries(TYPES))
    for (const o of await bed.list(type))
      if (o.metadata?.labels?.[PROVIDER_LABEL] !== undefined)
        out.push(`${plural} ${o.metadata?.namespace ?? ""}/${nameOf(o)} ${o.metadata?.resourceVersion}`);
  return out.sort();
};

const capaContainers = async (): Promise<unknown> =>
  getPath(await bed.get(TYPES.deployments, NS, "capa-controller-manager"), [
    "spec",
    "template",
    "spec",
    "containers",
  ]);

/** The installer's requests the server refused with 403, by `verb resource`. */
const refusedByServer = (): string[] =>
  Object.keys(bed.cluster.counters().failures)
    .filter((k) => k.endsWith(` ${INSTALLER_USER} 403`))
    .map((k) => k.split(" ").slice(0, 2).join(" "));

/** The AWS components packed as pack-provider packs them, with `extra` appended as it would refuse to. */
const awsTransport = (version: string, components: string, extra: KubeObject): KubeObject => {
  const configMap = transport("aws", "infrastructure", version, components);
  const packed = String((configMap.data as Record<string, string>).components);
  configMap.data = { components: `${packed}---\n${stringify(extra)}` };
  return configMap;
};
const documentsOf = (text: string): number =>
  parseAllDocuments(text).filter((d) => d.contents !== null).length;

const forbidden = async (request: Promise<unknown>): Promise<ForbiddenError> => {
  const e = await request.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ForbiddenError);
  return e as ForbiddenError;
};

describe("installer on the real control plane: a ClusterRoleBinding to cluster-admin (SPEC §6)", () => {
  it("runs as its own ServiceAccount under the shipped RBAC and installs the demo providers", async () => {
    expect(bed.cluster.backend).toBe("real");
    expect(bed.runs.at(-1)?.report.kind).toBe("installed");
    // Every write came from its ServiceAccount's token, and the server refused none of them.
    expect(bed.installerWrites()).toBeGreaterThan(0);
    expect(refusedByServer()).toEqual([]);
  });

  it("in a transport ConfigMap: nothing of the provider applied, the document named, Progressing then Degraded", async () => {
    const before = await snapshot();
    const containers = await capaContainers();
    // An upgrade's change to the manager, so anything of the provider that got applied would show.
    const changed = DEMO_AWS_COMPONENTS.replace("--leader-elect", "--leader-elect=true");
    const configMap = awsTransport("v2.9.1", changed, binding("pwn", "cluster-admin"));
    const documents = documentsOf(String((configMap.data as Record<string, string>).components));
    const named = `ConfigMap ${NS}/capi-provider-infrastructure-aws, document ${documents} (ClusterRoleBinding pwn): outside bound own-roles`;
    const runs = bed.runs.length;
    await bed.putConfigMap(configMap);
    const run = await bed.nextRun(
      runs,
      (r) => r.report.kind === "failed" && r.report.failures.some((f) => f.includes(named)),
    );
    expect(run.outcome?.written).toEqual([]);
    expect(run.outcome?.pruned).toEqual([]);
    expect(await bed.get(TYPES.clusterrolebindings, "", "pwn")).toBeUndefined();
    expect(await snapshot()).toEqual(before);
    expect(await capaContainers()).toEqual(containers);
    // The installer's own check stopped it: the server was never asked for anything it refused.
    expect(refusedByServer()).toEqual([]);
    const progressing = conditionOf(await bed.clusterOperator(), "Progressing");
    expect(progressing).toMatchObject({ status: "True", reason: "InstallFailed" });
    expect(progressing?.message).toContain(named);
    expect(conditionOf(await bed.clusterOperator(), "Degraded")?.status).toBe("False");

    await vi.waitFor(
      async () => {
        await bed.clock.advance(30_000);
        expect(conditionOf(await bed.clusterOperator(), "Degraded")?.status).toBe("True");
      },
      { timeout: 30_000, interval: 50 },
    );
    const co = await bed.clusterOperator();
    expect(conditionOf(co, "Degraded")).toMatchObject({ status: "True", reason: "InstallFailed" });
    expect(conditionOf(co, "Degraded")?.message).toContain(named);
    // What was installed before keeps running.
    expect(conditionOf(co, "Available")?.status).toBe("True");
    expect(await snapshot()).toEqual(before);
  });

  it("sent by the installer's identity itself, past its own checks: the server refuses it (403)", async () => {
    const { client } = bed.installer;
    const pwn = binding("pwn", "cluster-admin");
    const created = await forbidden(client.create(TYPES.clusterrolebindings, pwn));
    expect(created.message).toMatch(ESCALATION);
    // The installer's own write path: server-side apply, forced, under its field manager.
    const applied = await forbidden(
      client.patch(TYPES.clusterrolebindings, "", "pwn", {
        type: "apply",
        body: pwn,
        fieldManager: FIELD_MANAGER,
        force: true,
      }),
    );
    expect(applied.message).toMatch(ESCALATION);
    expect(await bed.get(TYPES.clusterrolebindings, "", "pwn")).toBeUndefined();
  });

  it("nor can its identity widen a role it may update: a provider's, or its own ceiling", async () => {
    const { client } = bed.installer;
    const secretsEverywhere = { apiGroups: [""], resources: ["secrets"], verbs: ["get", "list"] };
    for (const name of ["capa-manager-role", CEILING_NAME]) {
      const live = await client.get(TYPES.clusterroles, "", name);
      const widened = { ...live, rules: [...(live.rules as unknown[]), secretsEverywhere] };
      const e = await forbidden(client.update(TYPES.clusterroles, widened));
      expect(e.message, name).toMatch(ESCALATION);
    }
    // Nor join an existing binding to cluster-admin (OpenShift's cluster admins, here kube:admin's).
    const admins = await client.get(TYPES.clusterrolebindings, "", "cluster-admins");
    const joined = {
      ...admins,
      subjects: [
        ...(admins.subjects as unknown[]),
        { kind: "ServiceAccount", name: "machine-api-migration-installer", namespace: NS },
      ],
    };
    expect((await forbidden(client.update(TYPES.clusterrolebindings, joined))).message).toMatch(ESCALATION);
  });
});

describe("the ceiling binding is what lets the installer grant (the negative control)", () => {
  it("without it, the installer's apply of an ordinary provider ClusterRole is refused and named", async () => {
    await bed.admin.client.delete(TYPES.clusterrolebindings, "", CEILING_NAME);
    // RBAC changes reach the authorizer through its informer: wait until the installer has lost the ceiling.
    await vi.waitFor(
      async () => {
        await expect(bed.installer.client.list(KINDS.awsCluster, { namespace: NS })).rejects.toBeInstanceOf(
          ForbiddenError,
        );
      },
      { timeout: 15_000, interval: 100 },
    );
    // Within the ceiling (the installer's own checks pass it), so only the server can refuse it.
    const components = DEMO_AWS_COMPONENTS.replace(
      'resources: ["*"]\n  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]',
      'resources: ["*"]\n  verbs: ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"]',
    );
    expect(components).not.toBe(DEMO_AWS_COMPONENTS);
    const runs = bed.runs.length;
    await bed.putConfigMap(transport("aws", "infrastructure", "v2.9.2", components));
    const failure = (r: (typeof bed.runs)[number]) =>
      r.report.kind === "failed"
        ? r.report.failures.find((f) =>
            f.startsWith("ClusterRole capa-manager-role (provider infrastructure-aws):"),
          )
        : undefined;
    const run = await bed.nextRun(runs, (r) => failure(r) !== undefined);
    expect(failure(run)).toMatch(ESCALATION);
    expect(refusedByServer()).toContain("patch rbac.authorization.k8s.io/clusterroles");
    const role = await bed.get(TYPES.clusterroles, "", "capa-manager-role");
    expect(JSON.stringify(role?.rules)).not.toContain("deletecollection");
    expect(conditionOf(await bed.clusterOperator(), "Progressing")?.message).toContain(
      "ClusterRole capa-manager-role (provider infrastructure-aws):",
    );
  });
});
