/** The platform registry (SPEC §5 "one module per platform behind a registry"). */
import { describe, expect, it } from "vitest";
import type { PlatformConverter } from "../../../src/sync/conversion/index.js";
import {
  awsPlatform,
  DEFAULT_PLATFORM,
  PLATFORMS,
  platformFor,
  platformNamed,
  platformOfInfraKind,
  servedPlatform,
} from "../../../src/sync/conversion/index.js";
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
      'unsupported platform "GCP": supported platforms are AWS, OpenStack, PowerVS',
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

describe("the platform a process serves (decision 87)", () => {
  it("each platform by its Infrastructure type and by each of its infrastructure kinds", () => {
    for (const p of PLATFORMS) {
      expect(platformNamed(p.platform)).toBe(p);
      for (const t of [p.infraMachine, p.infraMachineTemplate, p.infraCluster])
        expect(platformOfInfraKind(t.kind)).toBe(p);
    }
    expect(PLATFORMS.map((p) => p.platform)).toEqual(["AWS", "OpenStack", "PowerVS"]);
    expect(platformOfInfraKind("Machine")).toBeUndefined();
    expect(platformNamed("GCP")).toBeUndefined();
  });
  it("servedPlatform: the Infrastructure's platform, or AWS when it names none the product supports", () => {
    expect(servedPlatform(infrastructure({ platform: "OpenStack" })).platform).toBe("OpenStack");
    expect(servedPlatform(infrastructure()).platform).toBe("AWS");
    expect(servedPlatform(infrastructure({ platform: "GCP" }))).toBe(DEFAULT_PLATFORM);
    expect(servedPlatform(undefined)).toBe(DEFAULT_PLATFORM);
  });
  it("every platform names its InfraMachine finalizer, and no two platforms share a kind", () => {
    expect(PLATFORMS.map((p) => p.infraMachineFinalizer)).toEqual([
      "awsmachine.infrastructure.cluster.x-k8s.io",
      "openstackmachine.infrastructure.cluster.x-k8s.io",
      "ibmpowervsmachine.infrastructure.cluster.x-k8s.io",
    ]);
    const kinds = PLATFORMS.flatMap((p) =>
      [p.infraMachine, p.infraMachineTemplate, p.infraCluster].map((t) => t.kind),
    );
    expect(new Set(kinds).size).toBe(kinds.length);
  });
});
