/** Label selectors' `>` and `<` (kube's Gt/Lt): integer comparison; non-integer labels never match. */
import { describe, expect, it } from "vitest";
import { parseLabelSelector } from "../../src/apiserver/selectors.js";

const labelled = (labels: Record<string, string>) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "x", labels },
});

describe("label selectors with Gt and Lt", () => {
  it("idx>1 and idx<2 compare as integers", () => {
    const gt = parseLabelSelector("idx>1");
    const lt = parseLabelSelector("idx<2");
    if (typeof gt === "string" || typeof lt === "string") throw new Error("unparsed");
    expect(["0", "1", "2", "10"].filter((v) => gt(labelled({ idx: v })))).toEqual(["2", "10"]);
    expect(["0", "1", "2", "10"].filter((v) => lt(labelled({ idx: v })))).toEqual(["0", "1"]);
  });

  it("a label that is missing or not an integer never matches", () => {
    const gt = parseLabelSelector("idx>1");
    if (typeof gt === "string") throw new Error("unparsed");
    expect(gt(labelled({}))).toBe(false);
    expect(gt(labelled({ idx: "many" }))).toBe(false);
  });

  it("a value that is not an integer is refused", () => {
    expect(parseLabelSelector("idx>one")).toMatch(/value must be an integer/);
  });
});
