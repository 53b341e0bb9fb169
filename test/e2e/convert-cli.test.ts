/**
 * The `convert` CLI end to end: spawns the product CLI (`npx tsx src/cli.ts convert ...`) on the
 * fixture files under test/fixtures/convert and asserts stdout YAML, stderr and exit codes — a success,
 * a file with several field errors, stdin with a List, and the way back to MAPI.
 */
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const FIXTURES = "test/fixtures/convert";
const INFRA = `${FIXTURES}/infrastructure.yaml`;

const convert = (
  args: string[],
  stdin = "",
): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn("npx", ["tsx", "src/cli.ts", "convert", ...args], { cwd: ROOT });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });

const docsOf = (yaml: string) => parseAllDocuments(yaml).map((d) => d.toJS());
const ids = (docs: { apiVersion: string; kind: string; metadata: { name: string; namespace: string } }[]) =>
  docs.map((d) => `${d.apiVersion} ${d.kind} ${d.metadata.namespace}/${d.metadata.name}`);

describe("convert CLI (e2e)", () => {
  it("--to capi on a MAPI file: exit 0, CAPI objects + infra objects on stdout, nothing on stderr", async () => {
    const result = await convert([
      "--to",
      "capi",
      "--infrastructure",
      INFRA,
      "-f",
      `${FIXTURES}/mapi-machines.yaml`,
    ]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const docs = docsOf(result.stdout);
    expect(ids(docs)).toEqual([
      "cluster.x-k8s.io/v1beta2 Machine openshift-cluster-api/demo-x7k2p-worker-us-east-1a-abcde",
      "infrastructure.cluster.x-k8s.io/v1beta2 AWSMachine openshift-cluster-api/demo-x7k2p-worker-us-east-1a-abcde",
      "cluster.x-k8s.io/v1beta2 MachineSet openshift-cluster-api/demo-x7k2p-worker-us-east-1a",
      `infrastructure.cluster.x-k8s.io/v1beta2 AWSMachineTemplate openshift-cluster-api/${docs[3]?.metadata.name}`,
    ]);
    expect(docs[3]?.metadata.name).toMatch(/^demo-x7k2p-worker-us-east-1a-[0-9a-f]{8}$/);
    expect(docs[1]?.spec).toMatchObject({ instanceID: "i-0abc123def4567890", hostAffinity: "default" });
    // The committed CAPI fixture is exactly this output, so the way back below starts from real output.
    const fixture = await readFile(`${ROOT}${FIXTURES}/capi-machines.yaml`, "utf8");
    expect(docsOf(fixture)).toEqual(docs);
  });

  it("a failing file: exit 1, every field error on stderr prefixed by kind/name, the good Machine still printed", async () => {
    const result = await convert([
      "--to",
      "capi",
      "--infrastructure",
      INFRA,
      "-f",
      `${FIXTURES}/failing.yaml`,
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      [
        'Machine/bad-worker: spec.taints: Invalid value: [{"key":"dedicated","value":"gpu","effect":"NoSchedule"}]: taints are not currently supported',
        'Machine/bad-worker: spec.providerSpec.value.ami.arn: Invalid value: "arn:aws:ec2:us-east-1::image/ami-0123456789abcdef0": unable to convert AMI ARN reference. Not supported in CAPI',
        "Machine/bad-worker: spec.providerSpec.value.deviceIndex: Invalid value: 1: deviceIndex must be 0 or unset",
        'Machine/bad-worker: spec.providerSpec.value.placement.region: Invalid value: "eu-west-1": placement.region should match infrastructure status value "us-east-1"',
        'Machine/bad-worker: spec.providerSpec.value.loadBalancers: Invalid value: [{"name":"demo-x7k2p-int","type":"network"}]: loadBalancers are not supported for non-control plane machines',
        "error: 1 object(s) failed to convert",
        "",
      ].join("\n"),
    );
    expect(ids(docsOf(result.stdout))).toEqual([
      "cluster.x-k8s.io/v1beta2 Machine openshift-cluster-api/good-worker",
      "infrastructure.cluster.x-k8s.io/v1beta2 AWSMachine openshift-cluster-api/good-worker",
    ]);
  });

  it("-f - reads a List from stdin; -o json prints JSON", async () => {
    const list = await readFile(`${ROOT}${FIXTURES}/machines-list.json`, "utf8");
    const result = await convert(["--to", "capi", "--infrastructure", INFRA, "-f", "-", "-o", "json"], list);
    expect([result.code, result.stderr]).toEqual([0, ""]);
    const output = JSON.parse(result.stdout);
    expect(output.kind).toBe("List");
    expect(output.items.map((o: { kind: string }) => o.kind)).toEqual(["Machine", "AWSMachine"]);
    expect(output.items[1].spec.instanceMetadataOptions.httpTokens).toBe("required");
    expect(output.items[0].spec.failureDomain).toBe("us-east-1c");
  });

  it("--to mapi on the CAPI fixture gives back the MAPI content (minus server-only fields)", async () => {
    const result = await convert([
      "--to",
      "mapi",
      "--infrastructure",
      INFRA,
      "-f",
      `${FIXTURES}/capi-machines.yaml`,
    ]);
    expect([result.code, result.stderr]).toEqual([0, ""]);
    const docs = docsOf(result.stdout);
    expect(ids(docs)).toEqual([
      "machine.openshift.io/v1beta1 Machine openshift-machine-api/demo-x7k2p-worker-us-east-1a-abcde",
      "machine.openshift.io/v1beta1 MachineSet openshift-machine-api/demo-x7k2p-worker-us-east-1a",
    ]);
    expect(docs[0]?.metadata.labels).toEqual({
      "machine.openshift.io/cluster-api-cluster": "demo-x7k2p",
      "machine.openshift.io/cluster-api-machineset": "demo-x7k2p-worker-us-east-1a",
      "machine.openshift.io/cluster-api-machine-role": "worker",
      "machine.openshift.io/cluster-api-machine-type": "worker",
      "machine.openshift.io/instance-type": "m6i.xlarge",
      "machine.openshift.io/region": "us-east-1",
      "machine.openshift.io/zone": "us-east-1a",
    });
    expect(docs[0]?.spec.lifecycleHooks).toEqual({
      preDrain: [{ name: "etcd-quorum", owner: "etcd-operator" }],
    });
    expect(docs[1]?.spec.template.spec.providerSpec.value.subnet).toEqual({ id: "subnet-0a1b2c3d" });
  });

  it("bad usage exits 2 naming the flag", async () => {
    const result = await convert(["--to", "capi", "-f", `${FIXTURES}/mapi-machines.yaml`]);
    expect(result.code).toBe(2);
    expect(result.stderr.split("\n")[0]).toBe(
      "error: flag --infrastructure is required (the Infrastructure cluster object)",
    );
  });
});
