/**
 * The objects the supported-cluster checks of SPEC §0.1 read (src/supported.ts), as a cluster serves them:
 * the FeatureGate, the MAPI CRDs with or without the migration fields, and the platform's own migration
 * controllers' Deployment.
 */
import type { KubeObject } from "../../src/kube/object.js";

/** FeatureGate/cluster reporting `enabled` gates enabled in one version. */
export const featureGate = (enabled: readonly string[], version = "4.20.0"): KubeObject => ({
  apiVersion: "config.openshift.io/v1",
  kind: "FeatureGate",
  metadata: { name: "cluster" },
  status: { featureGates: [{ version, enabled: enabled.map((name) => ({ name })), disabled: [] }] },
});

const FIELDS = {
  spec: ["authoritativeAPI"],
  status: ["authoritativeAPI", "synchronizedGeneration", "synchronizedAPI"],
};

/** A MAPI CRD whose served v1beta1 schema has the migration fields, but for those named in `without`. */
export const mapiCrd = (name: string, without: readonly string[] = []): KubeObject => {
  const props = (section: "spec" | "status") =>
    Object.fromEntries(
      FIELDS[section].filter((f) => !without.includes(`${section}.${f}`)).map((f) => [f, { type: "string" }]),
    );
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name },
    spec: {
      versions: [
        {
          name: "v1beta1",
          served: true,
          schema: {
            openAPIV3Schema: {
              properties: { spec: { properties: props("spec") }, status: { properties: props("status") } },
            },
          },
        },
      ],
    },
  };
};

/**
 * The platform's migration controllers' Deployment, with `replicas` (unset when undefined: the API's default,
 * 1) and the containers `manager` and `container`.
 */
export const platformDeployment = (
  replicas: number | undefined,
  container = "machine-api-migration",
): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "capi-controllers", namespace: "openshift-cluster-api" },
  spec: {
    ...(replicas === undefined ? {} : { replicas }),
    template: { spec: { containers: [{ name: "manager" }, { name: container }] } },
  },
});
