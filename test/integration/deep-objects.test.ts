/**
 * Objects as deep as kube-apiserver stores them (issue 20, SPEC §2.1 "prototype keys are data" and linear
 * decisions, §5): kube-apiserver decodes an object up to 10,000 levels, managedFields included, so a Machine
 * whose providerSpec.value nests ~9,990 deep is stored — created here with kubectl, as an admin would. Where
 * JavaScript's own `JSON.stringify` and `structuredClone` overflow the stack near 5,000, the product must
 * still decide every review of it through the real webhook, name the field it cannot convert in a bounded
 * message, and keep syncing everything else. One level more and kube-apiserver refuses the object itself.
 *
 * Both backends (the local server stores such objects as kube does since issue 22's deep-object probes).
 * Between 9,997 and 10,000 levels kube stores a Machine whose managedFields pass its limit and cannot read
 * it back; with the product installed its review cannot be marshalled and the Fail-policy webhook keeps it
 * out (a listed conformance difference: the local server stores it).
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONDITIONS, KINDS } from "../../src/kube/kinds.js";
import { conditionOf, getPath } from "../../src/kube/object.js";
import { mapiMachine } from "../../src/local/seed.js";
import { MAX_OBJECT_VALUES } from "../../src/server/review-census.js";
import { runKubectl } from "../e2e/helpers.js";
import { type Harness, MAPI_NS, ns, startHarness } from "./harness.js";

let h: Harness;
let home: string;
/**
 * A Machine 10,000 levels deep through kubectl, the API server and the webhook (or through the product's sync):
 * seconds, more under load.
 */
const DEEP_KUBECTL_MS = 120_000;
const DEEP_TEST_MS = 300_000;

beforeAll(async () => {
  h = await startHarness({ name: "deep-objects" });
  home = await mkdtemp(join(tmpdir(), "deep-objects-"));
}, 300_000);

afterAll(async () => {
  await h?.stop();
});

/**
 * A MAPI Machine as JSON text whose providerSpec.value.crafted nests so that the whole object is `depth`
 * levels deep (the object is level 1; crafted's own object is level 5). Text, because JSON.stringify of
 * such a value overflows the stack.
 */
const deepMachineText = (name: string, depth: number): string => {
  const m = mapiMachine(ns, name, "a");
  (m.spec as { providerSpec: { value: Record<string, unknown> } }).providerSpec.value.crafted = "@deep";
  const levels = depth - 4;
  return JSON.stringify(m).replace('"@deep"', `${'{"n":'.repeat(levels - 1)}{}${"}".repeat(levels - 1)}`);
};

const kubectl = (...args: string[]) => runKubectl(home, h.cluster.kubeconfigPath, args, {}, DEEP_KUBECTL_MS);

const createWithKubectl = async (name: string, depth: number) => {
  const file = join(home, `${name}.json`);
  await writeFile(file, deepMachineText(name, depth));
  return kubectl("create", "-f", file, "-o", "name");
};

/** The deepest Machine kube-apiserver v1.33 stores and reads back: managedFields mirror its path 4 levels deeper. */
const DEEPEST = 9_996;

describe("SPEC §2.1, §5: a Machine nested as deep as kube-apiserver stores it", () => {
  it(
    "is admitted, reported Synchronized=False naming the field in a bounded message, and the product syncs on",
    async () => {
      const created = await createWithKubectl("deep-m", DEEPEST);
      expect(created.stderr).toBe("");
      expect(created.stdout.trim()).toBe("machine.machine.openshift.io/deep-m");

      // The product reads, converts and writes status for it, each a decode of 10,000 levels: on a loaded machine
      // (CI's real control plane beside other work) that passed the default 15 s once.
      const condition = await h.waitFor(
        "deep-m's Synchronized condition",
        async () => {
          const o = await h.admin.get(KINDS.mapiMachine, MAPI_NS, "deep-m");
          return conditionOf(o, CONDITIONS.synchronized);
        },
        DEEP_KUBECTL_MS,
      );
      expect(condition).toMatchObject({ status: "False", reason: "FailedToConvertMAPIMachineToCAPI" });
      expect(condition.message).toMatch(
        /^spec\.providerSpec\.value\.crafted: Invalid value: \{"n":\{"n":.*…: /,
      );
      expect(condition.message?.length).toBeLessThan(500);

      // Everything else still syncs: a plain Machine created afterwards reaches steady MachineAPI.
      const w = h.watch("Machine", "after-deep");
      await h.admin.create(KINDS.mapiMachine, mapiMachine(ns, "after-deep", "a"));
      await h.steady(w, "MachineAPI");
    },
    DEEP_TEST_MS,
  );

  it(
    "every review of it is decided by the webhook: a label edit is admitted, a flip to ClusterAPI refused with the field named",
    async () => {
      const labelled = await kubectl(
        "label",
        "machines.machine.openshift.io",
        "-n",
        MAPI_NS,
        "deep-m",
        "team=a",
      );
      expect(labelled.stderr).toBe("");
      expect(labelled.code).toBe(0);

      await h.waitFor("MAO's deep-m Running", async () => {
        const o = await h.admin.get(KINDS.mapiMachine, MAPI_NS, "deep-m");
        return getPath(o, ["status", "phase"]) === "Running" || undefined;
      });
      const flipped = await kubectl(
        "patch",
        "machines.machine.openshift.io",
        "-n",
        MAPI_NS,
        "deep-m",
        "--type=merge",
        "-p",
        '{"spec":{"authoritativeAPI":"ClusterAPI"}}',
      );
      expect(flipped.code).toBe(1);
      expect(flipped.stderr).toContain("cannot migrate to ClusterAPI");
      expect(flipped.stderr).toContain("(rule migration-unconvertible)");
      expect(flipped.stderr).toContain("spec.providerSpec.value.crafted: Invalid value: ");
      expect(flipped.stderr.length).toBeLessThan(2_000);
    },
    DEEP_TEST_MS,
  );

  it("past kube's decoder limit (10,000 levels) the API server itself refuses the object", async () => {
    const file = join(home, "deeper-m.json");
    await writeFile(file, deepMachineText("deeper-m", 10_001));
    // --raw: kubectl's own decoder would refuse the file before sending it.
    const refused = await kubectl(
      "create",
      "--raw",
      `/apis/machine.openshift.io/v1beta1/namespaces/${MAPI_NS}/machines`,
      "-f",
      file,
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("exceeded max depth");
    const got = await kubectl("get", "machines.machine.openshift.io", "-n", MAPI_NS, "deeper-m");
    expect(got.stderr).toContain("NotFound");
  });

  it("a Machine holding more values than a decision may build is refused at create, saying so (decision 89)", async () => {
    const m = mapiMachine(ns, "dense-m", "a");
    (m.spec as { providerSpec: { value: Record<string, unknown> } }).providerSpec.value.crafted = Array.from(
      { length: MAX_OBJECT_VALUES },
      () => ({}),
    );
    const file = join(home, "dense-m.json");
    await writeFile(file, JSON.stringify(m));
    const refused = await kubectl("create", "-f", file);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /Machine openshift-machine-api\/dense-m is too large to decide: it holds [\d,]+ JSON values, more than the [\d,]+ machine-api-migration decides/,
    );
    expect(refused.stderr).toContain("(rule object-too-complex)");
    const got = await kubectl("get", "machines.machine.openshift.io", "-n", MAPI_NS, "dense-m");
    expect(got.stderr).toContain("NotFound");
  });
});
