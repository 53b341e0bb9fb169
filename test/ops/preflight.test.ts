/**
 * `preflightReport` and its rendering as table tests: each row names the SPEC rule or handover
 * precondition (SPEC §2.3, §3.1 step 4) that would refuse a migration now, over steady snapshots built
 * by the planner's test builders; one case runs the real converter on the demo seed's objects.
 */
import { describe, expect, it } from "vitest";
import type { FieldError } from "../../src/kube/field-error.js";
import { CONDITIONS } from "../../src/kube/kinds.js";
import type { KubeObject } from "../../src/kube/object.js";
import { awsProviderSpec, infrastructure, mapiMachine } from "../../src/local/seed.js";
import type { HandoverSnapshot } from "../../src/migration/snapshot.js";
import type { PreflightReport } from "../../src/ops/preflight.js";
import { preflightReport, renderJson, renderTable, summaryLine } from "../../src/ops/preflight.js";
import { memoryStore } from "../../src/policies/memory-store.js";
import type { ConvertibilityCheck } from "../../src/policies/types.js";
import type { Support } from "../../src/supported.js";
import {
  CAPI_NS,
  edit,
  MAPI_NS,
  markDeleting,
  putCondition,
  stableSnapshot,
  T0,
} from "../migration/world.js";
import { terminalControls } from "./terminal-controls.js";

const NS = { mapiNamespace: MAPI_NS, capiNamespace: CAPI_NS };
const SUPPORTED: Support = { enforcing: true, controllers: true, reasons: [] };
const converts: ConvertibilityCheck = () => [];

const objectsOf = (s: HandoverSnapshot): KubeObject[] => [
  ...[s.mapi, s.capi, s.infraMachine].filter((o): o is KubeObject => o !== undefined),
  ...(s.members?.mapi ?? []),
  ...(s.members?.capi ?? []),
];

const reportOf = (
  snapshots: HandoverSnapshot[],
  options: { check?: ConvertibilityCheck; support?: Support; extra?: KubeObject[] } = {},
): PreflightReport =>
  preflightReport({
    store: memoryStore([...snapshots.flatMap(objectsOf), ...(options.extra ?? [])]),
    namespaces: NS,
    support: options.support ?? SUPPORTED,
    checkConvertible: options.check ?? converts,
  });

const machine = (authority: "MachineAPI" | "ClusterAPI" = "MachineAPI", name = "worker-a") =>
  stableSnapshot("Machine", authority, name);

describe("preflight rows (SPEC §2.3 migration rules, §3.1 step 4)", () => {
  it("a steady, synchronised, provisioned Machine could migrate to the other API", () => {
    const report = reportOf([machine("MachineAPI"), machine("ClusterAPI", "worker-b")]);
    expect(report.rows.map((r) => [r.name, r.verdict, r.target, r.blockers])).toEqual([
      ["worker-a", "ready", "ClusterAPI", []],
      ["worker-b", "ready", "MachineAPI", []],
    ]);
    expect(report.rows[0]).toMatchObject({
      kind: "Machine",
      namespace: MAPI_NS,
      specAuthority: "MachineAPI",
      statusAuthority: "MachineAPI",
      synchronized: { status: "True", reason: "ResourceSynchronized" },
    });
    expect(report.ok).toBe(true);
    expect(summaryLine(report)).toBe("2 objects: 2 could migrate now, 0 blocked");
  });

  const cases: Array<{ name: string; snapshot: HandoverSnapshot; rule: string; text: RegExp }> = [
    {
      name: "migration-machine-busy: a Provisioning Machine",
      snapshot: edit(machine(), "mapi", (o) => {
        o.status = { ...o.status, phase: "Provisioning" };
      }),
      rule: "migration-machine-busy",
      text: /still provisioning \(status\.phase=Provisioning\)/,
    },
    {
      name: "migration-machine-busy: a Machine being deleted",
      snapshot: edit(machine(), "mapi", (o) => markDeleting(o, T0)),
      rule: "migration-machine-busy",
      text: /it is being deleted/,
    },
    {
      name: "migration-twin-not-ready: the CAPI twin has not provisioned its infrastructure",
      snapshot: edit(machine("ClusterAPI"), "capi", (o) => {
        o.status = { ...o.status, initialization: { infrastructureProvisioned: false } };
      }),
      rule: "migration-twin-not-ready",
      text: /has not provisioned its infrastructure/,
    },
    {
      name: "migration-unsupported-owner: a control-plane Machine",
      snapshot: edit(machine(), "mapi", (o) => {
        o.metadata = {
          ...o.metadata,
          ownerReferences: [
            {
              apiVersion: "machine.openshift.io/v1",
              kind: "ControlPlaneMachineSet",
              name: "cluster",
              uid: "u",
            },
          ],
        };
      }),
      rule: "migration-unsupported-owner",
      text: /owned by ControlPlaneMachineSet\/cluster/,
    },
    {
      name: "handover WaitingForSync: Synchronized is not True",
      snapshot: edit(machine(), "mapi", (o) =>
        putCondition(o, { type: "Synchronized", status: "False", reason: "ConversionFailed", message: "x" }),
      ),
      rule: "WaitingForSync",
      text: /Synchronized is False \(ConversionFailed: x\); the migration waits for a successful sync/,
    },
    {
      name: "handover WaitingForSync: a MAPI Machine without its CAPI twin",
      snapshot: (() => {
        const s = machine();
        delete s.capi;
        delete s.infraMachine;
        return s;
      })(),
      rule: "WaitingForSync",
      text: /has no CAPI Machine twin yet; the sync creates it/,
    },
    {
      name: "handover WaitingForSync: a MachineSet member without a matching twin",
      snapshot: (() => {
        const s = stableSnapshot("MachineSet", "MachineAPI", "set-a");
        s.members = { mapi: s.members!.mapi, capi: s.members!.capi.slice(1) };
        return s;
      })(),
      rule: "WaitingForSync",
      text: /member MAPI Machine openshift-machine-api\/set-a-1 has no CAPI twin yet; handing over now would make CAPI MachineSet openshift-cluster-api\/set-a create an extra instance/,
    },
  ];

  it.each(cases)("$name", ({ snapshot, rule, text }) => {
    const report = reportOf([snapshot]);
    const row = report.rows.find((r) => r.name === (snapshot.mapi?.metadata?.name ?? ""));
    expect(row?.verdict).toBe("blocked");
    const blocker = row?.blockers.find((b) => b.rule === rule);
    expect(blocker?.message).toMatch(text);
    expect(report.ok).toBe(false);
  });

  it("says a Provisioning Machine is busy once, not again as WaitingForProvisioning", () => {
    const snapshot = edit(machine(), "mapi", (o) => {
      o.status = { ...o.status, phase: "Provisioning" };
    });
    const rules = reportOf([snapshot]).rows[0]!.blockers.map((b) => b.rule);
    expect(rules).toContain("migration-machine-busy");
    expect(rules).not.toContain("WaitingForProvisioning");
  });

  it("an InfraMachine being deleted is the handover's refusal (no admission rule speaks for it)", () => {
    const snapshot = edit(machine(), "infraMachine", (o) => markDeleting(o, T0));
    const blockers = reportOf([snapshot]).rows[0]!.blockers;
    expect(blockers).toEqual([
      {
        source: "handover",
        rule: "MigrationBlocked",
        message: "AWSMachine openshift-cluster-api/worker-a is being deleted; a migration cannot start",
      },
    ]);
  });

  it("migration-unconvertible: lists every field error Kubernetes-style", () => {
    const errors: FieldError[] = [
      { path: "spec.providerSpec.value.deviceIndex", value: 1, message: "deviceIndex must be 0 or unset" },
      { path: "spec.providerSpec.value.foo", value: "x", message: "unknown" },
    ];
    const report = reportOf([machine()], { check: () => errors });
    const blocker = report.rows[0]!.blockers.find((b) => b.rule === "migration-unconvertible");
    expect(blocker).toMatchObject({
      source: "admission",
      fieldErrors: [
        "spec.providerSpec.value.deviceIndex: Invalid value: 1: deviceIndex must be 0 or unset",
        'spec.providerSpec.value.foo: Invalid value: "x": unknown',
      ],
    });
  });

  it("migration-unconvertible with the real converter: deviceIndex 1 on a demo Machine", () => {
    const mapi = mapiMachine(NS, "worker-d", "a");
    mapi.spec = {
      ...mapi.spec,
      providerSpec: { value: { ...awsProviderSpec("us-east-1a"), deviceIndex: 1 } },
    };
    mapi.status = { authoritativeAPI: "MachineAPI", synchronizedAPI: "MachineAPI", phase: "Running" };
    const report = preflightReport({
      store: memoryStore([mapi, infrastructure()]),
      namespaces: NS,
      support: SUPPORTED,
    });
    const blocker = report.rows[0]!.blockers.find((b) => b.rule === "migration-unconvertible");
    expect(blocker?.source === "admission" && blocker.fieldErrors).toContain(
      "spec.providerSpec.value.deviceIndex: Invalid value: 1: deviceIndex must be 0 or unset",
    );
  });

  it("a Machine in the middle of a handover is reported as migrating, never as ready", () => {
    const s = edit(machine(), "mapi", (o) => {
      o.status = { ...o.status, authoritativeAPI: "Migrating", synchronizedAPI: "MachineAPI" };
      o.spec = { ...o.spec, authoritativeAPI: "ClusterAPI" };
    });
    const report = reportOf([s, machine("MachineAPI", "worker-b")]);
    expect(report.rows[0]).toMatchObject({
      verdict: "migrating",
      target: "ClusterAPI",
      blockers: [{ source: "state", rule: "Migrating" }],
    });
    expect(report.ok).toBe(false);
    expect(summaryLine(report)).toBe("2 objects: 1 could migrate now, 0 blocked, 1 migrating");
  });

  it("SPEC §0.1: an unsupported cluster fails preflight even when every object could migrate", () => {
    const support: Support = {
      enforcing: false,
      controllers: false,
      reasons: [
        "FeatureGate/cluster does not report MachineAPIMigration enabled: the MAPI CRDs carry no authority fields",
      ],
    };
    const report = reportOf([machine()], { support });
    expect(report.ok).toBe(false);
    expect(report.support.ok).toBe(false);
    const table = renderTable(report);
    expect(table).toContain(
      "supported cluster: NO\n    FeatureGate/cluster does not report MachineAPIMigration enabled",
    );
    expect(table).toContain("1 object: 1 could migrate now, 0 blocked (cluster not supported, see above)");
  });
});

describe("renderTable / renderJson", () => {
  it("one line per object with its reasons indented beneath, then the summary line", () => {
    const busy = edit(machine("MachineAPI", "worker-b"), "mapi", (o) => {
      o.status = { ...o.status, phase: "Provisioning" };
    });
    const report = reportOf([machine("MachineAPI", "worker-a"), busy, machine("ClusterAPI", "worker-c")]);
    const lines = renderTable(report).trimEnd().split("\n");
    expect(lines[0]).toMatch(/^supported cluster: yes/);
    expect(lines[2]).toMatch(/^KIND\s+NAME\s+SPEC\s+STATUS\s+SYNCHRONIZED\s+MIGRATION$/);
    expect(lines[3]).toMatch(
      /^Machine\s+openshift-machine-api\/worker-a\s+MachineAPI\s+MachineAPI\s+True \(ResourceSynchronized\)\s+could migrate to ClusterAPI$/,
    );
    expect(lines[4]).toMatch(/^Machine\s+openshift-machine-api\/worker-b\s+.*blocked \(to ClusterAPI\)$/);
    expect(lines[5]).toMatch(
      /^ {4}admission migration-machine-busy: MAPI Machine openshift-machine-api\/worker-b cannot migrate/,
    );
    expect(lines.at(-3)).toMatch(/could migrate to MachineAPI$/);
    expect(lines.at(-2)).toBe("");
    expect(lines.at(-1)).toBe("3 objects: 2 could migrate now, 1 blocked");
  });

  it("what others wrote (a condition's reason, a refusal's message) reaches the terminal escaped, each on its own line (decision 155)", () => {
    const ESC = String.fromCharCode(0x1b);
    const hostile = edit(machine("MachineAPI", "worker-a"), "mapi", (o) => {
      o.status = { ...o.status, phase: "Provisioning" };
      putCondition(o, {
        type: CONDITIONS.synchronized,
        status: "True",
        reason: `Ok${ESC}]0;owned${String.fromCharCode(7)}`,
      });
    });
    const report = reportOf([hostile]);
    const [row] = report.rows;
    row!.blockers.push({
      source: "handover",
      rule: "MigrationBlocked",
      message: `a\rb\ncould migrate${ESC}[K`,
    });
    const table = renderTable(report);
    expect(terminalControls(table)).toEqual([]);
    expect(table).toContain("True (Ok^[]0;owned\\x07)");
    expect(table).toContain("    handover MigrationBlocked: a\\rb\\ncould migrate^[[K\n");
    // JSON is data: the same text, as JSON writes it.
    expect(JSON.parse(renderJson(report)).rows[0].synchronized.reason).toBe(
      `Ok${ESC}]0;owned${String.fromCharCode(7)}`,
    );
  });

  it("JSON carries the same report", () => {
    const report = reportOf([machine()]);
    expect(JSON.parse(renderJson(report))).toEqual(JSON.parse(JSON.stringify(report)));
  });
});
