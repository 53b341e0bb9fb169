/**
 * The platform registry: which module converts providerSpecs for the platform named by the Infrastructure
 * object (`status.platformStatus.type`). Adding a platform is one new folder under src/platforms/ and one
 * line here (decision 54); admission, the sync, the handover and the stand-ins all find a platform's kinds
 * here (decision 87). Also reads
 * the few Infrastructure fields every converter needs, reporting what is missing as field errors.
 */
import { getPath, type KubeObject } from "../kube/object.js";
import type { InfrastructureInfo, PlatformConverter } from "../sync/conversion/platform.js";
import type { FieldError } from "../sync/conversion/types.js";
import { awsPlatform } from "./aws/index.js";
import { openstackPlatform } from "./openstack/index.js";
import { powervsPlatform } from "./powervs/index.js";

export type { PlatformConverter } from "../sync/conversion/platform.js";

/** The platforms the product supports end to end: conversion, sync, handover, admission and providers. */
export const PLATFORMS: readonly PlatformConverter[] = Object.freeze([
  awsPlatform,
  openstackPlatform,
  powervsPlatform,
]);

/**
 * The platform a process serves when the Infrastructure object names none the product knows (or none at
 * all, as in local mode before a seed): AWS, the platform the product began with (decision 87).
 */
export const DEFAULT_PLATFORM: PlatformConverter = awsPlatform;

/** The platform whose Infrastructure `status.platformStatus.type` is `type`, if the product supports it. */
export const platformNamed = (type: unknown): PlatformConverter | undefined =>
  PLATFORMS.find((p) => p.platform === type);

/** The platform one of whose infrastructure kinds (InfraMachine, template, InfraCluster) is `kind`. */
export const platformOfInfraKind = (kind: string): PlatformConverter | undefined =>
  PLATFORMS.find(
    (p) =>
      p.infraMachine.kind === kind || p.infraMachineTemplate.kind === kind || p.infraCluster.kind === kind,
  );

/** The platform of an Infrastructure object, or the default when it names none the product supports. */
export const servedPlatform = (infrastructure: KubeObject | undefined): PlatformConverter =>
  platformNamed(getPath(infrastructure, ["status", "platformStatus", "type"])) ?? DEFAULT_PLATFORM;

export type PlatformLookup =
  | { ok: true; platform: PlatformConverter; infrastructure: InfrastructureInfo }
  | { ok: false; errors: FieldError[] };

const supported = (platforms: readonly PlatformConverter[]) => platforms.map((p) => p.platform).join(", ");

/** Resolves the platform module and the Infrastructure facts, or explains why conversion cannot start. */
export const platformFor = (
  infrastructure: KubeObject | undefined,
  platforms: readonly PlatformConverter[] = PLATFORMS,
): PlatformLookup => {
  if (infrastructure === undefined)
    return {
      ok: false,
      errors: [
        { path: "Infrastructure/cluster", value: null, message: "the Infrastructure object is required" },
      ],
    };
  const errors: FieldError[] = [];
  const type = getPath(infrastructure, ["status", "platformStatus", "type"]);
  const platform = platforms.find((p) => p.platform === type);
  if (platform === undefined)
    errors.push({
      path: "Infrastructure.status.platformStatus.type",
      value: type ?? null,
      message: `unsupported platform ${JSON.stringify(type ?? "")}: supported platforms are ${supported(platforms)}`,
    });
  const clusterName = getPath(infrastructure, ["status", "infrastructureName"]);
  if (typeof clusterName !== "string" || clusterName === "")
    errors.push({
      path: "Infrastructure.status.infrastructureName",
      value: clusterName ?? null,
      message: "infrastructureName (the CAPI cluster name) must be set",
    });
  if (platform === undefined || errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    platform,
    infrastructure: {
      clusterName: clusterName as string,
      platform: platform.platform,
      region: platform.regionOf(infrastructure),
      ipFamily: platform.ipFamilyOf(infrastructure),
    },
  };
};
