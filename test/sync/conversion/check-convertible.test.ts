/** Rule `migration-unconvertible` (SPEC §2.3) backed by the converters: `checkConvertible`. */
import { describe, expect, it } from "vitest";
import { checkConvertible, templateName } from "../../../src/sync/conversion/index.js";
import {
  awsMachine,
  awsMachineSpec,
  awsMachineTemplate,
  capiMachine,
  capiMachineSet,
  infrastructure,
  mapiMachine,
  mapiMachineSet,
  memoryView,
  providerSpec,
} from "./builders.js";

describe("migration-unconvertible: checkConvertible", () => {
  it("target ClusterAPI: a convertible Machine → no errors", () => {
    const mapi = mapiMachine();
    expect(checkConvertible(mapi, "ClusterAPI", memoryView([infrastructure(), mapi]))).toEqual([]);
  });
  it("target ClusterAPI: lists every failing field path", () => {
    const mapi = mapiMachine({ value: providerSpec({ deviceIndex: 1, ami: { arn: "x" } }) });
    expect(
      checkConvertible(mapi, "ClusterAPI", memoryView([infrastructure(), mapi])).map((e) => e.path),
    ).toEqual(["spec.providerSpec.value.ami.arn", "spec.providerSpec.value.deviceIndex"]);
  });
  it("target ClusterAPI: MachineSets are converted as MachineSets", () => {
    const ms = mapiMachineSet({ value: providerSpec({ loadBalancers: [{ name: "lb", type: "classic" }] }) });
    expect(checkConvertible(ms, "ClusterAPI", memoryView([infrastructure(), ms])).map((e) => e.path)).toEqual(
      ["spec.template.spec.providerSpec.value.loadBalancers"],
    );
  });
  it("missing Infrastructure → one error saying so", () => {
    expect(checkConvertible(mapiMachine(), "ClusterAPI", memoryView([]))).toEqual([
      {
        path: "Infrastructure/cluster",
        value: null,
        message: 'the Infrastructure object "cluster" is not in the cache; cannot convert',
      },
    ]);
  });
  it("target MachineAPI: converts the CAPI twin and its AWSMachine back", () => {
    const mapi = mapiMachine();
    const view = memoryView([infrastructure(), mapi, capiMachine(), awsMachine()]);
    expect(checkConvertible(mapi, "MachineAPI", view)).toEqual([]);
    const bad = memoryView([
      infrastructure(),
      mapi,
      capiMachine(),
      awsMachine({ spec: awsMachineSpec({ networkInterfaces: ["eni"] }) }),
    ]);
    expect(checkConvertible(mapi, "MachineAPI", bad).map((e) => e.path)).toEqual([
      "AWSMachine.spec.networkInterfaces",
    ]);
  });
  it("target MachineAPI: MachineSet twin with its AWSMachineTemplate", () => {
    const ms = mapiMachineSet();
    const name = templateName("workers", awsMachineSpec());
    const view = memoryView([infrastructure(), ms, capiMachineSet(name), awsMachineTemplate(name)]);
    expect(checkConvertible(ms, "MachineAPI", view)).toEqual([]);
  });
  it("target MachineAPI: missing twin → one error saying so", () => {
    const mapi = mapiMachine();
    expect(checkConvertible(mapi, "MachineAPI", memoryView([infrastructure(), mapi]))).toEqual([
      {
        path: "metadata.name",
        value: null,
        message: "no Cluster API Machine mirrors this one yet; it cannot be converted back to Machine API",
      },
    ]);
  });
  it("target MachineAPI: missing AWSMachine → error naming it", () => {
    const mapi = mapiMachine();
    expect(
      checkConvertible(mapi, "MachineAPI", memoryView([infrastructure(), mapi, capiMachine()])).map(
        (e) => e.message,
      ),
    ).toEqual(["the AWSMachine is required to convert"]);
  });
});
