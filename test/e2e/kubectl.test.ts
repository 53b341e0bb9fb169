/**
 * The real kubectl (/usr/bin/kubectl, its 1.32.4 dispatcher build) against the local API server with a
 * simple CRD installed: get (table, json, selectors), apply (client-side and --server-side), patch
 * (merge, json, status subresource, strategic for built-ins, 415 for CRDs), edit through KUBE_EDITOR,
 * delete (incl. waiting on finalizers) and get -w. Each server start gets its own HOME and cache dir.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiServer } from "../../src/apiserver/index.js";
import { start } from "../apiserver/helpers.js";
import { type Result, runKubectl, spawnKubectl } from "./helpers.js";

let server: ApiServer;
let dir: string;
let kubeconfig: string;

const kubectl = (args: string[], extraEnv: Record<string, string> = {}): Promise<Result> =>
  runKubectl(dir, kubeconfig, ["-n", "demo", ...args], extraEnv);

const file = async (name: string, text: string): Promise<string> => {
  const p = join(dir, name);
  await writeFile(p, text);
  return p;
};

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Size, type: string, jsonPath: .spec.size}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: string, enum: [small, large]}
              count: {type: integer}
          status:
            type: object
            properties:
              phase: {type: string}
`;

const widgetYaml = (name: string, size: string, labels = "app: demo"): string => `apiVersion: example.com/v1
kind: Widget
metadata:
  name: ${name}
  labels: {${labels}}
spec:
  size: ${size}
`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "kubectl-e2e-"));
  server = await start();
  kubeconfig = await file("kubeconfig", server.kubeconfig("kube:admin"));
  // `kubectl create namespace` sends protobuf (test/e2e/kubectl-protobuf.test.ts covers it); apply sends JSON.
  const ns = await kubectl([
    "apply",
    "-f",
    await file("ns.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: demo\n"),
  ]);
  expect(ns.stdout).toContain("namespace/demo created");
  const crd = await kubectl(["apply", "-f", await file("crd.yaml", CRD)]);
  expect(crd.stdout).toContain("customresourcedefinition.apiextensions.k8s.io/widgets.example.com created");
}, 60_000);

afterAll(async () => {
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("kubectl against the local API server", () => {
  it("waits for the CRD to be Established", async () => {
    const r = await kubectl([
      "wait",
      "--for=condition=Established",
      "crd/widgets.example.com",
      "--timeout=10s",
    ]);
    expect(r.stdout).toContain("condition met");
  });

  it("apply creates, reports unchanged, then configures", async () => {
    const f = await file("w1.yaml", widgetYaml("w1", "small"));
    expect((await kubectl(["apply", "-f", f])).stdout).toContain("widget.example.com/w1 created");
    expect((await kubectl(["apply", "-f", f])).stdout).toContain("widget.example.com/w1 unchanged");
    const f2 = await file("w1b.yaml", widgetYaml("w1", "large"));
    expect((await kubectl(["apply", "-f", f2])).stdout).toContain("widget.example.com/w1 configured");
    const got = JSON.parse((await kubectl(["get", "widget", "w1", "-o", "json"])).stdout);
    expect(got.spec.size).toBe("large");
    expect(got.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]).toContain('"large"');
  });

  it("get prints the Table with printer columns, label selectors filter, short names resolve", async () => {
    await kubectl(["apply", "-f", await file("w2.yaml", widgetYaml("w2", "small", "app: other"))]);
    const table = await kubectl(["get", "widgets"]);
    expect(table.stdout).toMatch(/NAME\s+SIZE\s+AGE/);
    expect(table.stdout).toMatch(/w1\s+large\s+\d+s/);
    const selected = await kubectl(["get", "wd", "-l", "app=other", "-o", "name"]);
    expect(selected.stdout.trim()).toBe("widget.example.com/w2");
    const yaml = await kubectl(["get", "widget", "w2", "-o", "yaml"]);
    expect(yaml.stdout).toContain("size: small");
    const all = await kubectl(["get", "widgets", "-A", "--show-labels", "--sort-by=.metadata.name"]);
    expect(all.stdout).toMatch(/NAMESPACE\s+NAME\s+SIZE\s+AGE\s+LABELS/);
    expect(all.stdout).toMatch(/demo\s+w1\s+large\s+\S+\s+app=demo/);
    const missing = await kubectl(["get", "widget", "nope"]);
    expect(missing.stderr).toContain('Error from server (NotFound): widgets.example.com "nope" not found');
  });

  it("apply --server-side creates and updates with field managers", async () => {
    const f = await file("w3.yaml", widgetYaml("w3", "small"));
    expect((await kubectl(["apply", "--server-side", "-f", f])).stdout).toContain(
      "widget.example.com/w3 serverside-applied",
    );
    const f2 = await file("w3b.yaml", widgetYaml("w3", "large"));
    expect((await kubectl(["apply", "--server-side", "-f", f2])).stdout).toContain("serverside-applied");
    const got = JSON.parse(
      (await kubectl(["get", "widget", "w3", "-o", "json", "--show-managed-fields"])).stdout,
    );
    expect(got.spec.size).toBe("large");
    expect(got.metadata.managedFields.map((m: { manager: string }) => m.manager)).toContain("kubectl");
  });

  it("patch: merge, json, status subresource, no-op, and 415 for strategic merge on a CRD kind", async () => {
    const merge = await kubectl(["patch", "widget", "w2", "--type=merge", "-p", '{"spec":{"count":3}}']);
    expect(merge.stdout).toContain("widget.example.com/w2 patched");
    const noop = await kubectl(["patch", "widget", "w2", "--type=merge", "-p", '{"spec":{"count":3}}']);
    expect(noop.stdout).toContain("widget.example.com/w2 patched (no change)");
    const json = await kubectl([
      "patch",
      "widget",
      "w2",
      "--type=json",
      "-p",
      '[{"op":"replace","path":"/spec/count","value":4}]',
    ]);
    expect(json.stdout).toContain("patched");
    const status = await kubectl([
      "patch",
      "widget",
      "w2",
      "--subresource=status",
      "--type=merge",
      "-p",
      '{"status":{"phase":"Ready"}}',
    ]);
    expect(status.stdout).toContain("patched");
    const got = JSON.parse((await kubectl(["get", "widget", "w2", "-o", "json"])).stdout);
    expect(got.spec.count).toBe(4);
    expect(got.status.phase).toBe("Ready");
    const strategic = await kubectl(["patch", "widget", "w2", "-p", '{"spec":{"count":5}}']);
    expect(strategic.stderr).toContain("application/strategic-merge-patch+json is not supported");
    const invalid = await kubectl([
      "patch",
      "widget",
      "w2",
      "--type=merge",
      "-p",
      '{"spec":{"size":"huge"}}',
    ]);
    expect(invalid.stderr).toContain('Unsupported value: "huge"');
  });

  it("strategic merge for built-in kinds: ConfigMap apply and default patch", async () => {
    const cm = (v: string): string =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: "${v}"\n`;
    expect((await kubectl(["apply", "-f", await file("cm1.yaml", cm("1"))])).stdout).toContain(
      "configmap/settings created",
    );
    expect((await kubectl(["apply", "-f", await file("cm2.yaml", cm("2"))])).stdout).toContain(
      "configmap/settings configured",
    );
    expect((await kubectl(["patch", "cm", "settings", "-p", '{"data":{"b":"x"}}'])).stdout).toContain(
      "configmap/settings patched",
    );
    const got = JSON.parse((await kubectl(["get", "cm", "settings", "-o", "json"])).stdout);
    expect(got.data).toEqual({ a: "2", b: "x" });
  });

  it("edit through KUBE_EDITOR sends a merge patch", async () => {
    const editor = await file("editor.sh", `#!/bin/sh\nsed -i 's/size: small/size: large/' "$1"\n`);
    await import("node:fs/promises").then((fs) => fs.chmod(editor, 0o755));
    const r = await kubectl(["edit", "widget", "w2"], { KUBE_EDITOR: editor, EDITOR: editor });
    expect(r.stdout).toContain("widget.example.com/w2 edited");
    const got = JSON.parse((await kubectl(["get", "widget", "w2", "-o", "json"])).stdout);
    expect(got.spec.size).toBe("large");
  });

  it("get -w -o json streams the current object and then changes", async () => {
    const child = spawnKubectl(dir, kubeconfig, ["-n", "demo", "get", "widget", "w1", "-w", "-o", "json"]);
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
    });
    const until = async (pred: () => boolean): Promise<void> => {
      for (let i = 0; i < 200 && !pred(); i++) await new Promise((r) => setTimeout(r, 50));
    };
    await until(() => out.includes('"name": "w1"'));
    await kubectl(["label", "widget", "w1", "watched=yes"]);
    await until(() => out.includes('"watched": "yes"'));
    child.kill();
    expect(out).toContain('"watched": "yes"');
  });

  it("get -w prints Table rows for the list and then for each change", async () => {
    const child = spawnKubectl(dir, kubeconfig, ["-n", "demo", "get", "widgets", "-w"]);
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
    });
    const until = async (pred: () => boolean): Promise<void> => {
      for (let i = 0; i < 200 && !pred(); i++) await new Promise((r) => setTimeout(r, 50));
    };
    await until(() => /w1\s+large/.test(out));
    await kubectl(["patch", "widget", "w1", "--type=merge", "-p", '{"spec":{"size":"small"}}']);
    await until(() => /w1\s+small/.test(out));
    child.kill();
    expect(out.match(/NAME\s+SIZE\s+AGE/g)).toHaveLength(1);
    expect(out).toMatch(/w1\s+small/);
    await kubectl(["patch", "widget", "w1", "--type=merge", "-p", '{"spec":{"size":"large"}}']);
  });

  it("delete waits for finalizers, then the object is gone", async () => {
    await kubectl([
      "patch",
      "widget",
      "w3",
      "--type=merge",
      "-p",
      '{"metadata":{"finalizers":["example.com/hold"]}}',
    ]);
    const pending = kubectl(["delete", "widget", "w3", "--timeout=15s"]);
    for (let i = 0; i < 100; i++) {
      const got = JSON.parse((await kubectl(["get", "widget", "w3", "-o", "json"])).stdout || "{}");
      if (got.metadata?.deletionTimestamp) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const added = await kubectl([
      "patch",
      "widget",
      "w3",
      "--type=merge",
      "-p",
      '{"metadata":{"finalizers":["example.com/hold","x/y"]}}',
    ]);
    expect(added.stderr).toContain("no new finalizers can be added if the object is being deleted");
    await kubectl([
      "patch",
      "widget",
      "w3",
      "--type=json",
      "-p",
      '[{"op":"remove","path":"/metadata/finalizers"}]',
    ]);
    const r = await pending;
    expect(r.stdout).toContain('widget.example.com "w3" deleted');
    expect((await kubectl(["get", "widget", "w3"])).stderr).toContain("NotFound");
  });

  it("delete -l deletes what the selector matches", async () => {
    const r = await kubectl(["delete", "widgets", "-l", "app=other"]);
    expect(r.stdout).toContain('widget.example.com "w2" deleted');
    expect((await kubectl(["get", "widgets", "-o", "name"])).stdout.trim()).toBe("widget.example.com/w1");
  });

  it("get events prints kube's Event columns, and an events.k8s.io Event shows in both groups (decision 157)", async () => {
    const recorded = await kubectl([
      "create",
      "-f",
      await file(
        "event.yaml",
        `apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: w1-reconciled}
eventTime: "2026-12-05T10:00:00.000000Z"
regarding: {apiVersion: example.com/v1, kind: Widget, namespace: demo, name: w1}
reportingController: example.com/widgets
reportingInstance: widgets-1
action: Reconcile
reason: Reconciled
type: Normal
note: widget w1 reconciled
`,
      ),
    ]);
    expect(recorded.stdout).toContain("event.events.k8s.io/w1-reconciled created");
    const table = await kubectl(["get", "events", "--field-selector", "involvedObject.name=w1"]);
    expect(table.code).toBe(0);
    const [header, row] = table.stdout.trim().split("\n");
    expect(header!.split(/\s{2,}/)).toEqual(["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]);
    expect(row!.split(/\s{2,}/).slice(1)).toEqual([
      "Normal",
      "Reconciled",
      "widget/w1",
      "widget w1 reconciled",
    ]);
    const wide = await kubectl(["get", "events.events.k8s.io", "-o", "wide"]);
    expect(wide.stdout.split("\n")[0]!.split(/\s{2,}/)).toEqual([
      "LAST SEEN",
      "TYPE",
      "REASON",
      "OBJECT",
      "SUBOBJECT",
      "SOURCE",
      "MESSAGE",
      "FIRST SEEN",
      "COUNT",
      "NAME",
    ]);
    expect(wide.stdout).toContain("example.com/widgets, widgets-1");
    await kubectl(["delete", "events.events.k8s.io", "w1-reconciled"]);
  });

  it("deleting the CRD removes its objects and its type", async () => {
    const r = await kubectl(["delete", "crd", "widgets.example.com", "--timeout=15s"]);
    expect(r.stdout).toContain('customresourcedefinition.apiextensions.k8s.io "widgets.example.com" deleted');
    expect(server.store.list({ group: "example.com", plural: "widgets" })).toEqual([]);
  });
});
