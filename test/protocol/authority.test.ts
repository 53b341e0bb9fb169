/**
 * The authority fields of SPEC §1 as src/protocol reads them for every controller: what "unset" means, and
 * what each accessor makes of it.
 */
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../src/kube/object.js";
import {
  isStableAuthority,
  opposite,
  specAuthority,
  specAuthorityAsWritten,
  statusAuthority,
  statusAuthorityReading,
  synchronizedAPI,
  synchronizedGeneration,
} from "../../src/protocol/authority.js";

const withSpec = (v: unknown): KubeObject =>
  v === "(missing)" ? { spec: {} } : { spec: { authoritativeAPI: v } };
const withStatus = (field: string, v: unknown): KubeObject =>
  v === "(missing)" ? { status: {} } : { status: { [field]: v } };

describe("§1 spec.authoritativeAPI: the CRD defaults an unset value to MachineAPI", () => {
  it.each([
    ["missing", "(missing)", "MachineAPI", "MachineAPI"],
    ["null (the API server prunes it)", null, "MachineAPI", "MachineAPI"],
    ['"" (the enum refuses it on a write)', "", "MachineAPI", "MachineAPI"],
    ["MachineAPI", "MachineAPI", "MachineAPI", "MachineAPI"],
    ["ClusterAPI", "ClusterAPI", "ClusterAPI", "ClusterAPI"],
    ["Migrating is not a spec value", "Migrating", undefined, "Migrating"],
    ["a value outside the enum", "clusterapi", undefined, "clusterapi"],
    ["a non-string", 5, undefined, 5],
  ])("%s: specAuthority %s → %s, as written → %s", (_name, value, stable, written) => {
    expect(specAuthority(withSpec(value))).toBe(stable);
    expect(specAuthorityAsWritten(withSpec(value))).toBe(written);
  });

  it("an absent object reads as the CRD default too", () => {
    expect(specAuthority(undefined)).toBe("MachineAPI");
  });
});

describe("§1 status.authoritativeAPI: unset until machine-api-operator copies spec", () => {
  it.each([
    ["missing", "(missing)", undefined, "absent"],
    ["null", null, undefined, "absent"],
    ['""', "", undefined, "absent"],
    ["MachineAPI", "MachineAPI", "MachineAPI", "MachineAPI"],
    ["ClusterAPI", "ClusterAPI", "ClusterAPI", "ClusterAPI"],
    ["Migrating", "Migrating", "Migrating", "Migrating"],
    ["a value outside the enum", "Paused", undefined, "invalid"],
    ["a non-string", true, undefined, "invalid"],
  ])("%s: statusAuthority → %s, reading → %s", (_name, value, status, reading) => {
    const o = withStatus("authoritativeAPI", value);
    expect(statusAuthority(o)).toBe(status);
    expect(statusAuthorityReading(o)).toBe(reading);
  });

  it("an absent object has no status authority", () => {
    expect(statusAuthority(undefined)).toBeUndefined();
    expect(statusAuthorityReading(undefined)).toBe("absent");
  });
});

describe("§1 status.synchronizedAPI and synchronizedGeneration", () => {
  it.each([
    ["MachineAPI", "MachineAPI"],
    ["ClusterAPI", "ClusterAPI"],
    ["Migrating", undefined],
    ["(missing)", undefined],
    ["", undefined],
  ])("synchronizedAPI %s → %s", (value, expected) => {
    expect(synchronizedAPI(withStatus("synchronizedAPI", value))).toBe(expected);
  });

  it.each([
    [3, 3],
    ["(missing)", 0],
    ["3", 0],
  ])("synchronizedGeneration %s → %s", (value, expected) => {
    expect(synchronizedGeneration(withStatus("synchronizedGeneration", value))).toBe(expected);
  });
});

describe("stable authorities", () => {
  it("only MachineAPI and ClusterAPI are stable, and each is the other's opposite", () => {
    expect(["MachineAPI", "ClusterAPI", "Migrating", "", undefined].map(isStableAuthority)).toEqual([
      true,
      true,
      false,
      false,
      false,
    ]);
    expect(opposite("MachineAPI")).toBe("ClusterAPI");
    expect(opposite("ClusterAPI")).toBe("MachineAPI");
  });
});
