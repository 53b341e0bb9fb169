/** The platform registry (SPEC §5 "one module per platform behind a registry"). */
import { describe, expect, it } from "vitest";
import type { PlatformConverter } from "../../../src/sync/conversion/index.js";
import { awsPlatform, PLATFORMS, platformFor } from "../../../src/sync/conversion/index.js";
import { infrastructure } from "./builders.js";

describe("platform registry", () => {
  it("AWS resolves to the AWS module with the cluster name, region and IP family (IPv4 when unset)", () => {
    const lookup = platformFor(infrastructure());
    expect(lookup.ok && lookup.platform).toBe(awsPlatform);
    expect(lookup.ok && lookup.infrastructure).toEqual({
      clusterName: "demo-x7k2p",
      platform: "AWS",
      region: "us-east-1",
      ipFamily: "IPv4",
    });
    const dual = platformFor(infrastructure({ ipFamily: "DualStackIPv6Primary" }));
    expect(dual.ok && dual.infrastructure.ipFamily).toBe("DualStackIPv6Primary");
  });
  it("unknown platform → an error naming it and the supported ones", () => {
    const lookup = platformFor(infrastructure({ platform: "GCP" }));
    expect(lookup.ok ? [] : lookup.errors.map((e) => e.message)).toEqual([
      'unsupported platform "GCP": supported platforms are AWS',
    ]);
  });
  it("missing Infrastructure → an error saying so", () => {
    const lookup = platformFor(undefined);
    expect(lookup.ok ? [] : lookup.errors).toEqual([
      { path: "Infrastructure/cluster", value: null, message: "the Infrastructure object is required" },
    ]);
  });
  it("a new platform is one more entry", () => {
    const openstack: PlatformConverter = { ...awsPlatform, platform: "OpenStack", regionOf: () => "" };
    const lookup = platformFor(infrastructure({ platform: "OpenStack" }), [...PLATFORMS, openstack]);
    expect(lookup.ok && lookup.platform.platform).toBe("OpenStack");
  });
});
