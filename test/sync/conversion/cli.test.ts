/**
 * The `convert` CLI in-process: flag parsing (bad usage → exit 2 naming the flag), document handling
 * (several documents, List kinds, pairing CAPI objects with their infra objects) and output/exit codes,
 * with in-memory streams and files.
 */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { getPath } from "../../../src/kube/object.js";
import { parseConvertFlags, runConvert } from "../../../src/sync/conversion/cli.js";
import { convertDocuments } from "../../../src/sync/conversion/documents.js";
import { awsMachine, capiMachine, infrastructure, mapiMachine, providerSpec } from "./builders.js";
import {
  openstackInfrastructure,
  openstackMapiMachine,
  openstackProviderSpec,
} from "./openstack-builders.js";
import { powervsInfrastructure, powervsMapiMachine, powervsProviderSpec } from "./powervs-builders.js";

const INFRA_YAML = `apiVersion: config.openshift.io/v1
kind: Infrastructure
metadata: {name: cluster}
status:
  infrastructureName: demo-x7k2p
  platformStatus: {type: AWS, aws: {region: us-east-1}}
`;

const collect = () => {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on("data", (c: Buffer) => chunks.push(c.toString()));
  return { stream, text: () => chunks.join("") };
};

const run = async (argv: string[], files: Record<string, string>, stdinText = "") => {
  const stdout = collect();
  const stderr = collect();
  const stdin = new PassThrough();
  stdin.end(stdinText);
  const code = await runConvert(argv, {
    stdin,
    stdout: stdout.stream,
    stderr: stderr.stream,
    readFile: async (path) => {
      const text = files[path];
      if (text === undefined) throw new Error(`ENOENT: no such file or directory, open '${path}'`);
      return text;
    },
  });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
};

const yamlOf = (o: unknown) => JSON.stringify(o);

describe("convert CLI: flags", () => {
  it.each([
    [[], "flag --to is required (capi or mapi)"],
    [["--to", "xapi"], 'flag --to must be capi or mapi, not "xapi"'],
    [["--to", "capi"], "flag --infrastructure is required (the Infrastructure cluster object)"],
    [["--to", "capi", "--infrastructure", "i.yaml"], "flag -f is required (a file, or - for stdin)"],
    [
      ["--to", "capi", "--infrastructure", "i.yaml", "-f", "a", "-o", "xml"],
      'flag -o must be yaml or json, not "xml"',
    ],
    [["--to", "capi", "--infrastructure"], "flag --infrastructure needs a value"],
    [["--to", "capi", "--bogus"], "unknown flag --bogus"],
    [["--to", "capi", "--to", "mapi"], "flag --to given twice"],
    [["--to", "capi", "--infrastructure", "i", "-f", "-", "-f", "-"], "flag -f - (stdin) may be given once"],
    [
      ["--to", "capi", "--infrastructure", "-", "-f", "-"],
      "stdin may be given once: --infrastructure - and -f - would both read it",
    ],
    [["stray"], 'unexpected argument "stray"'],
    [
      ["--to", "capi", "--infrastructure", "i", "-f", "a", "--capi-namespace", "Bad_NS!"],
      'flag --capi-namespace must be a DNS-1123 label, not "Bad_NS!"',
    ],
    [
      ["--to", "mapi", "--infrastructure", "i", "-f", "a", "--mapi-namespace", "x".repeat(64)],
      `flag --mapi-namespace must be at most 63 characters, not "${"x".repeat(64)}"`,
    ],
  ])("%j → %s", (argv, message) => {
    expect(parseConvertFlags(argv)).toEqual({ kind: "error", message });
  });
  it("a short flag's value may follow `=`, as kubectl's `-o=json` (pflag): the same as -o json and -ojson", () => {
    for (const argv of [
      ["-o=json", "-f=a"],
      ["-ojson", "-fa"],
      ["-o", "json", "-f", "a"],
    ])
      expect(parseConvertFlags(["--to=capi", "--infrastructure=i.yaml", ...argv])).toMatchObject({
        kind: "run",
        flags: { files: ["a"], output: "json" },
      });
    // Only the first `=` is the separator: a value may hold one (`-f==x` is the file "=x").
    expect(parseConvertFlags(["--to=capi", "--infrastructure=i.yaml", "-f==x"])).toMatchObject({
      flags: { files: ["=x"] },
    });
  });
  it("accepts --flag=value, repeated -f and -o json", () => {
    expect(
      parseConvertFlags(["--to=mapi", "--infrastructure=i.yaml", "-f", "a", "--filename", "b", "-o", "json"]),
    ).toEqual({
      kind: "run",
      flags: {
        to: "mapi",
        infrastructure: "i.yaml",
        files: ["a", "b"],
        output: "json",
        capiNamespace: "openshift-cluster-api",
        mapiNamespace: "openshift-machine-api",
      },
    });
  });
  it("bad usage exits 2 with the message and the usage on stderr", async () => {
    const result = await run(["--to", "capi"], {});
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: flag --infrastructure is required/);
    expect(result.stderr).toContain("Usage: convert");
    expect(result.stdout).toBe("");
  });
  // Found by an audit (2026-12-08): the second read of stdin found it empty, and the run said "nothing to convert".
  it("bad usage exits 2: stdin may be given once, --infrastructure - and -f - together included", async () => {
    const result = await run(
      ["--to", "capi", "--infrastructure", "-", "-f", "-"],
      {},
      "kind: Infrastructure\n",
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^error: stdin may be given once: --infrastructure - and -f - would both read it\n/,
    );
    expect(result.stdout).toBe("");
  });
  it("--help prints the usage and exits 0", async () => {
    const result = await run(["--help"], {});
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("--to capi|mapi");
  });
});

describe("convert CLI: documents", () => {
  it("several documents and List kinds are all converted, in order", () => {
    const result = convertDocuments(
      [
        mapiMachine({ name: "a" }),
        { apiVersion: "v1", kind: "List", items: [mapiMachine({ name: "b" })] },
        null,
      ],
      infrastructure(),
      { to: "capi", capiNamespace: "openshift-cluster-api", mapiNamespace: "openshift-machine-api" },
    );
    expect(result.objects.map((o) => `${o.kind}/${o.metadata?.name}`)).toEqual([
      "Machine/a",
      "AWSMachine/a",
      "Machine/b",
      "AWSMachine/b",
    ]);
    expect(result.failed).toBe(0);
  });
  it("--to capi skips other kinds with a warning", () => {
    const result = convertDocuments(
      [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" } }],
      infrastructure(),
      {
        to: "capi",
        capiNamespace: "c",
        mapiNamespace: "m",
      },
    );
    expect(result.warnings).toEqual([
      "ConfigMap/x: skipped: not a machine.openshift.io/v1beta1 Machine or MachineSet",
    ]);
  });
  it("--to mapi pairs each CAPI Machine with the AWSMachine it references", () => {
    const result = convertDocuments(
      [awsMachine({ name: "w" }), capiMachine({ name: "w" })],
      infrastructure(),
      {
        to: "mapi",
        capiNamespace: "c",
        mapiNamespace: "openshift-machine-api",
      },
    );
    expect(result.errors).toEqual([]);
    expect(result.objects.map((o) => `${o.apiVersion} ${o.kind}/${o.metadata?.name}`)).toEqual([
      "machine.openshift.io/v1beta1 Machine/w",
    ]);
  });
  it("--to mapi hands the AWSCluster to control plane Machines for their load balancers", () => {
    const awsCluster = {
      apiVersion: "infrastructure.cluster.x-k8s.io/v1beta2",
      kind: "AWSCluster",
      metadata: { name: "demo-x7k2p", namespace: "openshift-cluster-api" },
      spec: { controlPlaneLoadBalancer: { name: "demo-x7k2p-int", loadBalancerType: "nlb" } },
    };
    const master = capiMachine({
      name: "m0",
      labels: { "node-role.kubernetes.io/master": "", "cluster.x-k8s.io/control-plane": "" },
    });
    const result = convertDocuments([awsCluster, master, awsMachine({ name: "m0" })], infrastructure(), {
      to: "mapi",
      capiNamespace: "c",
      mapiNamespace: "m",
    });
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
    expect(getPath(result.objects[0], ["spec", "providerSpec", "value", "loadBalancers"])).toEqual([
      { name: "demo-x7k2p-int", type: "network" },
    ]);
  });
  it("--to mapi without the AWSMachine → that Machine fails", () => {
    const result = convertDocuments([capiMachine({ name: "w" })], infrastructure(), {
      to: "mapi",
      capiNamespace: "c",
      mapiNamespace: "m",
    });
    expect(result.failed).toBe(1);
    expect(result.errors).toEqual([
      'Machine/w: spec.infrastructureRef: Invalid value: {"apiGroup":"infrastructure.cluster.x-k8s.io","kind":"AWSMachine","name":"w"}: the AWSMachine is required to convert',
    ]);
  });
  it("an unsupported platform is one error for the run", () => {
    const result = convertDocuments([mapiMachine()], infrastructure({ platform: "Azure" }), {
      to: "capi",
      capiNamespace: "c",
      mapiNamespace: "m",
    });
    expect(result.errors).toEqual([
      'Infrastructure/cluster: Infrastructure.status.platformStatus.type: Invalid value: "Azure": unsupported platform "Azure": supported platforms are AWS, OpenStack, PowerVS',
    ]);
  });
});

describe("convert CLI: run", () => {
  it("prints converted objects as multi-document YAML and exits 0", async () => {
    const result = await run(["--to", "capi", "--infrastructure", "infra.yaml", "-f", "m.yaml"], {
      "infra.yaml": INFRA_YAML,
      "m.yaml": yamlOf(mapiMachine({ name: "w1" })),
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    const docs = parseAllDocuments(result.stdout).map((d) => d.toJS());
    expect(docs.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual(["Machine/w1", "AWSMachine/w1"]);
  });
  it("-o json prints a List for several objects", async () => {
    const result = await run(
      ["--to", "capi", "--infrastructure", "infra.yaml", "-f", "m.yaml", "-o", "json"],
      {
        "infra.yaml": INFRA_YAML,
        "m.yaml": yamlOf(mapiMachine({ name: "w1" })),
      },
    );
    expect(JSON.parse(result.stdout)).toMatchObject({
      apiVersion: "v1",
      kind: "List",
      items: [{ kind: "Machine" }, { kind: "AWSMachine" }],
    });
  });
  it("a failing object: exit 1, every field error on stderr prefixed by kind/name, the others still printed", async () => {
    const bad = mapiMachine({
      name: "bad",
      value: providerSpec({ deviceIndex: 1, networkInterfaceType: "X" }),
    });
    const result = await run(
      ["--to", "capi", "--infrastructure", "infra.yaml", "-f", "-"],
      { "infra.yaml": INFRA_YAML },
      [yamlOf(mapiMachine({ name: "good" })), yamlOf(bad)].join("\n---\n"),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      [
        "Machine/bad: spec.providerSpec.value.deviceIndex: Invalid value: 1: deviceIndex must be 0 or unset",
        'Machine/bad: spec.providerSpec.value.networkInterfaceType: Invalid value: "X": networkInterfaceType must be ENA, EFA or empty',
        "error: 1 object(s) failed to convert",
        "",
      ].join("\n"),
    );
    expect(parseAllDocuments(result.stdout).map((d) => d.toJS().metadata.name)).toEqual(["good", "good"]);
  });
  it("warnings go to stderr with a Warning: prefix, exit stays 0", async () => {
    const lossy = mapiMachine({
      name: "w",
      value: providerSpec({ blockDevices: [{ ebs: { volumeSize: 100, deleteOnTermination: false } }] }),
    });
    const result = await run(["--to", "capi", "--infrastructure", "infra.yaml", "-f", "m.yaml"], {
      "infra.yaml": INFRA_YAML,
      "m.yaml": yamlOf(lossy),
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(
      /^Warning: Machine\/w: spec\.providerSpec\.value\.blockDevices\[0\]\.ebs\.deleteOnTermination: /,
    );
  });
  it("unreadable files and invalid YAML exit 1 naming the file", async () => {
    expect((await run(["--to", "capi", "--infrastructure", "nope.yaml", "-f", "m.yaml"], {})).stderr).toBe(
      "error: --infrastructure: cannot read nope.yaml: ENOENT: no such file or directory, open 'nope.yaml'\n",
    );
    const invalid = await run(["--to", "capi", "--infrastructure", "infra.yaml", "-f", "m.yaml"], {
      "infra.yaml": INFRA_YAML,
      "m.yaml": "a: [1\n",
    });
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/^error: m\.yaml: invalid YAML: YAML document 1 line 2: /);
  });
  it("an alias to no anchor is invalid YAML: exit 1 naming the file and the alias, never a stack trace", async () => {
    const dangling = "apiVersion: machine.openshift.io/v1beta1\nkind: Machine\nmetadata:\n  name: *nothere\n";
    for (const [argv, files] of [
      [["-f", "m.yaml"], { "infra.yaml": INFRA_YAML, "m.yaml": dangling }],
      [["-f", "m.yaml"], { "infra.yaml": `${INFRA_YAML}\n---\n${dangling}`, "m.yaml": dangling }],
    ] as const) {
      const result = await run(["--to", "capi", "--infrastructure", "infra.yaml", ...argv], { ...files });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        /^error: (--infrastructure: )?(infra|m)\.yaml: .*alias \*nothere refers to no anchor before it\n$/,
      );
    }
    const stdin = await run(
      ["--to", "capi", "--infrastructure", "infra.yaml", "-f", "-"],
      { "infra.yaml": INFRA_YAML },
      dangling,
    );
    expect(stdin.code).toBe(1);
    expect(stdin.stderr).toMatch(/^error: <stdin>: .*alias \*nothere refers to no anchor before it\n$/);
  });
  it("YAML beyond the shared bounds (an alias bomb) exits 2 naming the file and the bound", async () => {
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]",
      "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]",
      "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]",
      "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]",
      "",
    ].join("\n");
    const result = await run(["--to", "capi", "--infrastructure", "infra.yaml", "-f", "m.yaml"], {
      "infra.yaml": INFRA_YAML,
      "m.yaml": bomb,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: m\.yaml: YAML document 1 .*bound/);
  });
  it("an infrastructure file without an Infrastructure object exits 1", async () => {
    const result = await run(["--to", "capi", "--infrastructure", "infra.yaml", "-f", "m.yaml"], {
      "infra.yaml": "kind: ConfigMap\n",
      "m.yaml": "",
    });
    expect([result.code, result.stderr]).toEqual([
      1,
      "error: --infrastructure: infra.yaml holds no Infrastructure object\n",
    ]);
  });
  it("nothing to convert exits 1", async () => {
    const result = await run(["--to", "capi", "--infrastructure", "infra.yaml", "-f", "m.yaml"], {
      "infra.yaml": INFRA_YAML,
      "m.yaml": "",
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      "error: nothing to convert: no Machine API Machines or MachineSets in the input\n",
    );
  });
  it("values carrying DEL, C1 or bidirectional controls are printed escaped in double quotes, and parse back the same", async () => {
    // An annotation copied from the cluster (`oc get machine -o yaml`): ESC [ (CSI) as its C1 form, a
    // right-to-left override that reorders what a terminal shows, and DEL.
    const hostile = "safe\u009b2J\u202eevil\u007f";
    const result = await run(["--to", "capi", "--infrastructure", "infra.yaml", "-f", "m.yaml"], {
      "infra.yaml": INFRA_YAML,
      "m.yaml": yamlOf(mapiMachine({ name: "w1", annotations: { "example.com/note": hostile } })),
    });
    expect(result.code).toBe(0);
    expect(result.stdout).not.toMatch(/[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(result.stdout).toContain('"safe\\x9B2J\\u202Eevil\\x7F"');
    const machine = parse(result.stdout.split("---\n")[0] ?? "");
    expect(machine.metadata.annotations["example.com/note"]).toBe(hostile);
  });

  it("the YAML printed parses back to the converted objects", async () => {
    const result = await run(["--to", "capi", "--infrastructure", "infra.yaml", "-f", "m.yaml"], {
      "infra.yaml": INFRA_YAML,
      "m.yaml": yamlOf(mapiMachine({ name: "w1" })),
    });
    const first = parse(result.stdout.split("---\n")[0] ?? "");
    expect(first.spec.infrastructureRef).toEqual({
      apiGroup: "infrastructure.cluster.x-k8s.io",
      kind: "AWSMachine",
      name: "w1",
    });
  });
});

const PLATFORM_CASES = [
  {
    platform: "OpenStack",
    infrastructure: openstackInfrastructure(),
    machine: () => openstackMapiMachine(openstackProviderSpec()),
    infraMachine: "infrastructure.cluster.x-k8s.io/v1beta1 OpenStackMachine",
    providerConfig: "OpenstackProviderSpec",
  },
  {
    platform: "PowerVS",
    infrastructure: powervsInfrastructure(),
    machine: () => powervsMapiMachine(powervsProviderSpec()),
    infraMachine: "infrastructure.cluster.x-k8s.io/v1beta2 IBMPowerVSMachine",
    providerConfig: "PowerVSMachineProviderConfig",
  },
];

describe.each(PLATFORM_CASES)(
  "convert on $platform (issue 23): the Infrastructure names the platform",
  ({ infrastructure: infra, machine, infraMachine, providerConfig }) => {
    it("--to capi writes the CAPI Machine and the provider's InfraMachine", async () => {
      const result = await run(["--to", "capi", "--infrastructure", "infra.yaml", "-f", "m.yaml"], {
        "infra.yaml": yamlOf(infra),
        "m.yaml": yamlOf(machine()),
      });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      const kinds = parseAllDocuments(result.stdout).map((d) => {
        const o = d.toJS() as { apiVersion: string; kind: string };
        return `${o.apiVersion} ${o.kind}`;
      });
      expect(kinds).toEqual(["cluster.x-k8s.io/v1beta2 Machine", infraMachine]);
    });
    it("--to mapi pairs each CAPI Machine with the InfraMachine it references, at the provider's version", () => {
      const namespaces = { capiNamespace: "openshift-cluster-api", mapiNamespace: "openshift-machine-api" };
      const toCapi = convertDocuments([machine()], infra, { to: "capi", ...namespaces });
      expect(toCapi.errors).toEqual([]);
      const back = convertDocuments(toCapi.objects, infra, { to: "mapi", ...namespaces });
      expect(back.errors).toEqual([]);
      expect(back.objects.map((o) => `${o.apiVersion} ${o.kind}`)).toEqual([
        "machine.openshift.io/v1beta1 Machine",
      ]);
      expect(getPath(back.objects[0], ["spec", "providerSpec", "value", "kind"])).toBe(providerConfig);
    });
  },
);
