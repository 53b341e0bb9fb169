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
