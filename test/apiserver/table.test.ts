import { describe, expect, it } from "vitest";
import { evalJsonPath } from "../../src/apiserver/table.js";

describe("printer-column JSONPath (as kube evaluates additionalPrinterColumns)", () => {
  const machine = {
    metadata: { labels: { "machine.openshift.io/instance-type": "m6i.xlarge" } },
    status: { conditions: [{ type: "Ready", status: "True" }], addresses: ["a", "b"] },
  };
  it.each([
    [".metadata.labels['machine\\.openshift\\.io/instance-type']", "m6i.xlarge"],
    ['.status.conditions[?(@.type=="Ready")].status', "True"],
    [".status.addresses[1]", "b"],
    [".spec.missing", undefined],
  ])("%s", (path, want) => {
    expect(evalJsonPath(machine, path)).toBe(want);
  });
});

describe("built-in tables", () => {
  it("core Events show Last Seen, Type, Reason, Object and Message, as kube-apiserver's table does", async () => {
    const { columnsFor } = await import("../../src/apiserver/table.js");
    const cols = columnsFor({ group: "", plural: "events", printerColumns: [] } as never).map((c) => c.name);
    expect(cols).toEqual(["Last Seen", "Type", "Reason", "Object", "Message"]);
  });
});
