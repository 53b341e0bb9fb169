/**
 * SPEC §6 "A transport ConfigMap is untrusted input", end to end against the local API server: after a
 * sound install, a corpus of malicious transport and images ConfigMaps — escalating bindings, wildcard
 * roles, the product's deny configuration with no webhooks, a pod under the product's ServiceAccount, a
 * takeover of an existing object, an image reference carrying injected documents, an alias bomb, components
 * over a ConfigMap's size — each applies nothing of the bad provider (its otherwise changed Deployment stays
 * as it was), prunes nothing, and reports the document on the ClusterOperator: Progressing at once, Degraded
 * once failures have lasted five minutes. A `${VAR}` value carrying `\n---\n` stays one string.
 */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: clusterctl's ${VAR} syntax is what one test is about
import { afterEach, describe, expect, it, vi } from "vitest";
import { parseAllDocuments, stringify } from "yaml";
import {
  DEMO_AWS_COMPONENTS,
  DEMO_CORE_COMPONENTS,
  DEMO_IMAGES,
} from "../../src/installer/demo-providers.js";
import { PROVIDER_LABEL } from "../../src/installer/model.js";
import { KINDS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { conditionOf, getPath, nameOf } from "../../src/kube/object.js";
import { type Bed, imagesConfigMap, NS, PLACEHOLDER, startBed, TYPES, transport } from "./harness.js";

const beds: Bed[] = [];
afterEach(async () => {
  for (const b of beds.splice(0)) await b.stop();
});

const AWS_CM = `${NS}/capi-provider-infrastructure-aws`;

/** Every object the installer could have written or deleted, by identity and resourceVersion. */
const snapshot = async (bed: Bed): Promise<string[]> => {
  const out: string[] = [];
  for (const [plural, type] of Object.entries(TYPES))
    for (const o of await bed.list(type))
      if (o.metadata?.labels?.[PROVIDER_LABEL] !== undefined || nameOf(o) === "admin-notes")
        out.push(`${plural} ${o.metadata?.namespace ?? ""}/${nameOf(o)} ${o.metadata?.resourceVersion}`);
  return out.sort();
};

// The packed AWS components as an upgrade would change them (a new flag on the manager), so anything of the
// bad provider that got applied would show on the Deployment.
const CHANGED_AWS = (
  transport(
    "aws",
    "infrastructure",
    "v2.9.1",
    DEMO_AWS_COMPONENTS.replace("--leader-elect", "--leader-elect=true"),
  ).data as Record<string, string>
).components!;
const AWS_DOCUMENTS = parseAllDocuments(CHANGED_AWS).filter((d) => d.contents !== null).length;
const withDocument = (object: KubeObject) => `${CHANGED_AWS}---\n${stringify(object)}`;
const capaArgs = async (bed: Bed): Promise<unknown> =>
  getPath(await bed.get(TYPES.deployments, NS, "capa-controller-manager"), [
    "spec",
    "template",
    "spec",
    "containers",
  ]);

interface Case {
  what: string;
  aws?: string;
  images?: Record<string, string>;
  /** Text the failure must contain: the document and the bound. */
  named: string;
  /** An object that must not exist afterwards: [type, namespace, name]. */
  absent?: [keyof typeof TYPES, string, string];
  /** The API server refuses to store the transport ConfigMap at all (`named` is its message). */
  refusedByServer?: boolean;
}

const binding = (name: string, role: string): KubeObject => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRoleBinding",
  metadata: { name },
  roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
  subjects: [{ kind: "ServiceAccount", name: "capa-controller-manager", namespace: NS }],
});
/** A Deployment of the demo CAPA image whose pods run as `serviceAccountName` and carry `labels`. */
const podsOf = (name: string, serviceAccountName: string, labels: Record<string, string>): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name },
  spec: {
    selector: { matchLabels: { app: labels.app } },
    template: {
      metadata: { labels },
      spec: { serviceAccountName, containers: [{ name: "c", image: DEMO_IMAGES["infrastructure-aws"] }] },
    },
  },
});
const ALIAS_BOMB = [
  "apiVersion: v1",
  "kind: ConfigMap",
  "metadata: {name: lol}",
  "data:",
  '  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  "  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]",
  "  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]",
  "  d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]",
  "  e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]",
  "",
].join("\n");

const CORPUS: Case[] = [
  {
    what: "an escalating binding",
    aws: withDocument(binding("pwn", "cluster-admin")),
    named: `document ${AWS_DOCUMENTS + 1} (ClusterRoleBinding pwn): outside bound own-roles`,
    absent: ["clusterrolebindings", "", "pwn"],
  },
  {
    what: "a wildcard role",
    aws: withDocument({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "pwn" },
      rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }],
    }),
    named: `document ${AWS_DOCUMENTS + 1} (ClusterRole pwn): outside bound rbac-ceiling`,
    absent: ["clusterroles", "", "pwn"],
  },
  {
    what: "the product's deny configuration with no webhooks",
    aws: withDocument({
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: "machine-api-migration-deny" },
      webhooks: [],
    }),
    named: `document ${AWS_DOCUMENTS + 1} (ValidatingWebhookConfiguration machine-api-migration-deny): outside bound product-objects`,
    absent: ["validatingwebhookconfigurations", "", "machine-api-migration-deny"],
  },
  {
    what: "a Deployment under the product's ServiceAccount",
    aws: withDocument(podsOf("capa-helper", "machine-api-migration", { app: "helper" })),
    named: `document ${AWS_DOCUMENTS + 1} (Deployment capa-helper): outside bound own-service-accounts`,
    absent: ["deployments", NS, "capa-helper"],
  },
  {
    what: "a Deployment whose pods carry the product's label, so its Service would send them admission reviews",
    aws: withDocument(
      podsOf("capa-impostor", "capa-controller-manager", {
        app: "impostor",
        "app.kubernetes.io/name": "machine-api-migration",
        "app.kubernetes.io/component": "controller",
      }),
    ),
    named: `document ${AWS_DOCUMENTS + 1} (Deployment capa-impostor): outside bound product-objects: the pod carries label app.kubernetes.io/name=machine-api-migration`,
    absent: ["deployments", NS, "capa-impostor"],
  },
  {
    what: "a takeover of an existing object",
    aws: withDocument({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "admin-notes" },
      data: { note: "mine now" },
    }),
    named: `document ${AWS_DOCUMENTS + 1} (ConfigMap admin-notes): outside bound no-takeover`,
  },
  {
    what: "an image reference carrying injected documents",
    aws: CHANGED_AWS,
    images: {
      "infrastructure-aws": `${DEMO_IMAGES["infrastructure-aws"]}\n---\n${stringify(binding("injected", "cluster-admin"))}`,
    },
    named:
      'outside bound images: the images ConfigMap\'s value for "infrastructure-aws" is not a valid image reference',
    absent: ["clusterrolebindings", "", "injected"],
  },
  {
    // The API server refuses a ConfigMap over 1 MiB itself (kube's validation, and the local server's since
    // the conformance suite), so such components never reach the installer; its own bound is tested pure.
    what: "components larger than a ConfigMap",
    aws: `${CHANGED_AWS}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: padding}\ndata: {blob: "${"x".repeat(1024 * 1024)}"}\n`,
    named: "Too long: may not be more than 1048576 bytes",
    refusedByServer: true,
    absent: ["configmaps", NS, "padding"],
  },
  {
    what: "an alias bomb",
    aws: `${CHANGED_AWS}---\n${ALIAS_BOMB}`,
    named: `${AWS_CM}: outside bound yaml: YAML document ${AWS_DOCUMENTS + 1} line`,
  },
];

async function installedBed(): Promise<Bed> {
  const bed = await startBed();
  beds.push(bed);
  await bed.setPlatform("AWS");
  await bed.admin.client.create(KINDS.configMap, imagesConfigMap());
  await bed.admin.client.create(
    KINDS.configMap,
    transport("cluster-api", "core", "v1.10.0", DEMO_CORE_COMPONENTS),
  );
  await bed.admin.client.create(
    KINDS.configMap,
    transport("aws", "infrastructure", "v2.9.0", DEMO_AWS_COMPONENTS),
  );
  await bed.admin.client.create(KINDS.configMap, {
    metadata: { name: "admin-notes", namespace: NS },
    data: { note: "the admin's" },
  });
  await bed.start();
  expect(bed.runs.at(-1)?.report.kind).toBe("installed");
  return bed;
}

describe("installer: untrusted transport and images ConfigMaps (SPEC §6)", () => {
  it("each malicious ConfigMap applies nothing of its provider, prunes nothing, and names the document; Degraded after 5 minutes", async () => {
    const bed = await installedBed();
    const before = await snapshot(bed);
    const args = await capaArgs(bed);
    for (const c of CORPUS) {
      const runs = bed.runs.length;
      // pack-provider refuses what the installer must also refuse, so the ConfigMap is written by hand.
      const configMap = transport("aws", "infrastructure", "v2.9.1", PLACEHOLDER);
      configMap.data = { components: c.aws ?? CHANGED_AWS };
      if (c.refusedByServer) {
        await expect(bed.putConfigMap(configMap), c.what).rejects.toThrow(c.named);
        expect(await snapshot(bed), c.what).toEqual(before);
        continue;
      }
      // The bad half first (the images when the case is about them, else the components): at no moment may
      // good images meet good components, which the installer would rightly apply.
      const images = imagesConfigMap(c.images);
      for (const write of c.images ? [images, configMap] : [configMap, images]) await bed.putConfigMap(write);
      const run = await bed.nextRun(
        runs,
        (r) => r.report.kind === "failed" && r.report.failures.some((f) => f.includes(c.named)),
      );
      expect(run.outcome?.written, c.what).toEqual([]);
      expect(run.outcome?.pruned, c.what).toEqual([]);
      expect(await snapshot(bed), c.what).toEqual(before);
      expect(await capaArgs(bed), c.what).toEqual(args);
      if (c.absent)
        expect(await bed.get(TYPES[c.absent[0]], c.absent[1], c.absent[2]), c.what).toBeUndefined();
      const progressing = conditionOf(await bed.clusterOperator(), "Progressing");
      expect(progressing, c.what).toMatchObject({ status: "True", reason: "InstallFailed" });
      expect(progressing?.message, c.what).toContain(c.named);
    }
    expect((await bed.get(TYPES.configmaps, NS, "admin-notes"))?.data).toEqual({ note: "the admin's" });

    const last = CORPUS.at(-1)!;
    await vi.waitFor(
      async () => {
        await bed.clock.advance(30_000);
        expect(conditionOf(await bed.clusterOperator(), "Degraded")?.status).toBe("True");
      },
      { timeout: 15_000, interval: 50 },
    );
    const degraded = conditionOf(await bed.clusterOperator(), "Degraded");
    expect(degraded?.reason).toBe("InstallFailed");
    expect(degraded?.message).toContain(last.named);
    // Components installed earlier keep running.
    expect(conditionOf(await bed.clusterOperator(), "Available")?.status).toBe("True");
    expect(await snapshot(bed)).toEqual(before);
  });

  it("a ConfigMap breaking one bound 30,000 times is reported: a bounded status naming the count, then Degraded", async () => {
    // Such a ConfigMap once made a 3.4 MB status write that failed: Available stayed True, never Degraded.
    const bed = await installedBed();
    const containers = 30_000;
    const configMap = transport("aws", "infrastructure", "v2.9.1", PLACEHOLDER);
    configMap.data = {
      components: [
        "apiVersion: apps/v1",
        "kind: Deployment",
        "metadata: {name: capa-controller-manager}",
        "spec:",
        "  template:",
        "    spec:",
        "      serviceAccountName: capa-controller-manager",
        "      containers:",
        ...Array.from({ length: containers }, () => "      - {image: q}"),
      ].join("\n"),
    };
    const runs = bed.runs.length;
    await bed.putConfigMap(configMap);
    const run = await bed.nextRun(runs, (r) => r.report.kind === "failed");
    expect(run.statusWritten).toBe(true);
    const progressing = conditionOf(await bed.clusterOperator(), "Progressing");
    expect(progressing).toMatchObject({ status: "True", reason: "InstallFailed" });
    expect(progressing?.message).toContain(
      `${AWS_CM}, document 1 (Deployment capa-controller-manager): outside bound images: container "(unnamed)" runs image q`,
    );
    expect(progressing?.message).toContain(`; and ${containers - 5} more`);
    expect(progressing?.message?.length).toBeLessThanOrEqual(4096);
    await vi.waitFor(
      async () => {
        // A run of this provider takes a second or two; a minute a step reaches the five minutes in a few.
        await bed.clock.advance(60_000);
        expect(conditionOf(await bed.clusterOperator(), "Degraded")?.status).toBe("True");
      },
      { timeout: 45_000, interval: 50 },
    );
    expect(conditionOf(await bed.clusterOperator(), "Degraded")?.message).toContain(
      `; and ${containers - 5} more`,
    );
  });

  it("a ${VAR} value carrying `\\n---\\n` and a whole document stays one string: nothing is injected", async () => {
    const bed = await installedBed();
    const injected = `0\n---\n${stringify(binding("injected", "cluster-admin"))}`;
    const runs = bed.runs.length;
    await bed.putConfigMap(imagesConfigMap({ CAPA_LOGLEVEL: injected }));
    const run = await bed.nextRun(runs, (r) => (r.outcome?.written.length ?? 0) > 0);
    expect(run.report.kind).toBe("installed");
    expect(run.outcome?.written.map((r) => `${r.kind} ${r.name}`)).toEqual([
      "Deployment capa-controller-manager",
    ]);
    expect(await bed.get(TYPES.clusterrolebindings, "", "injected")).toBeUndefined();
    const containers = (await capaArgs(bed)) as { args: string[] }[];
    expect(containers[0]?.args).toContain(`--v=${injected}`);
  });
});
