/**
 * `npm start -- --seed demo-<platform>` as an admin on each platform beside AWS meets it (issue 23): the
 * product in local mode serves the Infrastructure's platform — the stand-ins for MAO, Cluster API and the
 * platform's provider provision the seeded Machines, the sync gives each a CAPI Machine and an InfraMachine
 * of the provider's kind, and the real kubectl and `migrate` CLI hand every MachineSet and Machine to
 * ClusterAPI and back. The simulated cloud's ledger shows the same three instances throughout: none created
 * twice, leaked or terminated.
 */
import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DemoPlatformType, demoSeed, platformConverterOf } from "../../src/local/seed.js";
import { resourceOf } from "../../src/policies/subject.js";
import { mapiObjects, settled } from "./fleet.js";
import { getFromWebhook, type Product, runCli, runKubectl, startProduct } from "./helpers.js";

const MAPI_NS = "openshift-machine-api";
const CAPI_NS = "openshift-cluster-api";
const PAUSED_BY = "machine-api-migration.openshift.io/paused-by";

/** Each platform's seed, and an InfraMachine field its providerSpec cannot hold (its unsupported-fields rule). */
const PLATFORM_CASES: readonly {
  platform: DemoPlatformType;
  seed: string;
  rule: string;
  unsupported: Record<string, unknown>;
  providerID: RegExp;
}[] = [
  {
    platform: "OpenStack",
    seed: "demo-openstack",
    rule: "openstack-unsupported-fields",
    unsupported: { flavorID: "5f3a" },
    providerID: /^openstack:\/\/\/[0-9a-f-]{36}$/,
  },
  {
    platform: "PowerVS",
    seed: "demo-powervs",
    rule: "powervs-unsupported-fields",
    unsupported: { imageRef: { name: "rhcos-image" } },
    providerID: /^ibmpowervs:\/\/[a-z]+\/[a-z0-9]+\/[0-9a-f-]{36}\/[0-9a-f-]{36}$/,
  },
];

describe.each(PLATFORM_CASES)(
  "npm start -- --seed $seed (local mode on $platform)",
  ({ platform, seed, rule, unsupported, providerID }) => {
    const p = platformConverterOf(platform);
    const infraResource = resourceOf(p.infraMachine.plural, p.infraMachine.group);
    const demo = demoSeed({ mapiNamespace: MAPI_NS, capiNamespace: CAPI_NS }, platform);
    const sets = demo.machineSets.map((s) => `MachineSet/${s.metadata?.name}`);
    const machineNames = demo.machines.map((m) => String(m.machine.metadata?.name)).sort();
    const standalone = String(
      demo.machines.find((m) => m.ownerSetName === undefined)?.machine.metadata?.name,
    );
    const members = machineNames.filter((n) => n !== standalone);
    const everyAt = (authority: string) =>
      Object.fromEntries(
        [...sets, ...machineNames.map((n) => `Machine/${n}`)].map((k) => [k, `${authority}/${authority}`]),
      );

    let product: Product;
    const kubectl = (args: string[]) => runKubectl(product.dir, product.kubeconfig, args);
    const migrate = (...rest: string[]) =>
      runCli(["migrate", "--kubeconfig", product.kubeconfig, ...rest], {
        home: product.dir,
        timeoutMs: 120_000,
      });
    const ledger = async () => {
      const l = (await getFromWebhook(product, "/debug/instances")) as {
        instances: Array<{ instanceId: string; machineName: string; terminatedSeq?: number }>;
      };
      return l.instances
        .map((i) => ({ id: i.instanceId, machine: i.machineName, terminated: i.terminatedSeq }))
        .sort((a, b) => a.machine.localeCompare(b.machine));
    };
    const authorities = async (): Promise<Record<string, string>> =>
      Object.fromEntries(
        (await mapiObjects(product)).map((o) => [
          `${o.kind}/${o.metadata.name}`,
          `${o.spec.authoritativeAPI}/${o.status?.authoritativeAPI}`,
        ]),
      );
    const infraMachines = async () => {
      const r = await kubectl(["get", infraResource, "-n", CAPI_NS, "-o", "json"]);
      expect(r.stderr).toBe("");
      return JSON.parse(r.stdout).items as Array<{
        apiVersion: string;
        metadata: { name: string; annotations?: Record<string, string>; finalizers?: string[] };
        spec: { providerID?: string };
      }>;
    };

    beforeAll(async () => {
      product = await startProduct(platform.toLowerCase(), ["--seed", seed]);
      await settled(product, 5);
    }, 120_000);

    afterAll(async () => {
      if (product?.child.exitCode === null) product.child.kill("SIGKILL");
      if (product?.dir) await rm(product.dir, { recursive: true, force: true });
    });

    it("the stand-ins provision instances and the sync mirrors each Machine with the provider's InfraMachine", async () => {
      const table = (await kubectl(["get", "machines.machine.openshift.io", "-n", MAPI_NS])).stdout;
      expect(table.match(/Running/g)).toHaveLength(3);

      const infra = await infraMachines();
      expect(infra.map((m) => m.metadata.name).sort()).toEqual(machineNames);
      expect(new Set(infra.map((m) => m.apiVersion))).toEqual(
        new Set([`${p.infraMachine.group}/${p.infraMachine.version}`]),
      );
      const byName = Object.fromEntries(infra.map((m) => [m.metadata.name, m]));
      // The ClusterAPI-authoritative Machine's InfraMachine is the provider's: unpaused, with its finalizer.
      expect(byName[standalone]?.metadata.annotations?.["cluster.x-k8s.io/paused"]).toBeUndefined();
      expect(byName[standalone]?.metadata.finalizers).toContain(p.infraMachineFinalizer);
      // The MachineAPI-authoritative Machines' mirrors are paused by the product and carry no provider finalizer.
      for (const name of members) {
        expect(byName[name]?.metadata.annotations?.[PAUSED_BY]).toBe("machine-api-migration");
        expect(byName[name]?.metadata.finalizers ?? []).not.toContain(p.infraMachineFinalizer);
        expect(byName[name]?.spec.providerID).toMatch(providerID);
      }
      const templates = await kubectl([
        "get",
        resourceOf(p.infraMachineTemplate.plural, p.infraMachineTemplate.group),
        "-n",
        CAPI_NS,
        "-o",
        "name",
      ]);
      expect(templates.stdout.trim().split("\n")).toHaveLength(2);

      const live = (await ledger()).filter((i) => i.terminated === undefined);
      expect(live.map((i) => i.machine)).toEqual(machineNames);
    });

    it(`an InfraMachine field the providerSpec cannot hold is refused, naming ${rule}`, async () => {
      const r = await kubectl([
        "patch",
        `${infraResource}/${standalone}`,
        "-n",
        CAPI_NS,
        "--type=merge",
        "-p",
        JSON.stringify({ spec: unsupported }),
      ]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(rule);
      expect(r.stderr).toContain(Object.keys(unsupported)[0]);
    });

    it("migrate --to ClusterAPI, then --to MachineAPI: every object handed over both ways on the same instances", async () => {
      const before = await ledger();
      expect(before.filter((i) => i.terminated === undefined)).toHaveLength(3);

      const there = await migrate("--to", "ClusterAPI", "--max-in-flight", "2");
      expect(there.stderr).toBe("");
      expect(there.code).toBe(0);
      expect(await authorities()).toEqual(everyAt("ClusterAPI"));
      // The provider now runs every instance: each InfraMachine is unpaused and holds its finalizer.
      for (const m of await infraMachines()) {
        expect(m.metadata.annotations?.["cluster.x-k8s.io/paused"]).toBeUndefined();
        expect(m.metadata.finalizers).toContain(p.infraMachineFinalizer);
      }
      expect(await ledger()).toEqual(before);

      const back = await migrate("--to", "MachineAPI", "--max-in-flight", "2");
      expect(back.stderr).toBe("");
      expect(back.code).toBe(0);
      expect(await authorities()).toEqual(everyAt("MachineAPI"));
      for (const m of await infraMachines()) {
        expect(m.metadata.annotations?.[PAUSED_BY]).toBe("machine-api-migration");
        expect(m.metadata.finalizers ?? []).not.toContain(p.infraMachineFinalizer);
      }
      expect(await ledger()).toEqual(before);
    }, 240_000);
  },
);
