/**
 * What the bench puts in the cluster and sends to the webhook, as pure data: the realistic MAPI Machine UPDATE
 * review of test/fixtures (an instance-type change on a CAPI-authoritative Machine, ~7.5 KB) and a population
 * of N such Machines with their CAPI and AWSMachine twins, made by the product's own converter so the cache
 * holds exactly what the sync controller would have written.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type KubeObject, nameOf } from "../src/kube/object.js";
import { capiCluster, infrastructure } from "../src/local/seed.js";
import { mapiMachineToCapi } from "../src/sync/conversion/machine.js";

export const NAMESPACES = Object.freeze({
  mapiNamespace: "openshift-machine-api",
  capiNamespace: "openshift-cluster-api",
});

const FIXTURES = fileURLToPath(new URL("../test/fixtures/", import.meta.url));

/** The raw AdmissionReview body (bytes as kube would send them) of one fixture file. */
export const reviewBody = (file = "mapi-machine-update-instance-type.json"): string =>
  JSON.stringify(JSON.parse(readFileSync(`${FIXTURES}${file}`, "utf8")));

const SERVER_FIELDS = ["uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"];

const withoutServerFields = (o: KubeObject): KubeObject => {
  const metadata = { ...(o.metadata ?? {}) } as Record<string, unknown>;
  for (const f of SERVER_FIELDS) delete metadata[f];
  return { ...o, metadata } as KubeObject;
};

/** The review's own Machine (its `oldObject`), the template every populated Machine is copied from. */
export function reviewedMachine(): KubeObject {
  const review = JSON.parse(reviewBody()) as { request: { oldObject: KubeObject } };
  return withoutServerFields(review.request.oldObject);
}

/** Name of the i-th populated Machine; index 0 is the reviewed Machine itself, so its twins are cached. */
export const machineName = (i: number, base: string): string => (i === 0 ? base : `${base}-${i}`);

/**
 * Infrastructure, the CAPI Cluster objects and `n` Machines each with its CAPI Machine and AWSMachine twin,
 * in creation order. Throws if the product's converter refuses the template (the bench would be meaningless).
 */
export function population(n: number): KubeObject[] {
  const infra = infrastructure();
  const template = reviewedMachine();
  const base = template.metadata?.name ?? "worker";
  const objects: KubeObject[] = [infra, ...capiCluster(NAMESPACES)];
  for (let i = 0; i < n; i++) {
    const name = machineName(i, base);
    const mapi = { ...template, metadata: { ...template.metadata, name } } as KubeObject;
    const twins = mapiMachineToCapi(mapi, infra, { capiNamespace: NAMESPACES.capiNamespace });
    if (!twins.ok) throw new Error(`bench population: conversion refused ${name}: ${JSON.stringify(twins)}`);
    objects.push(mapi, twins.value.machine, twins.value.infraMachine);
  }
  return objects;
}

/**
 * The heaviest review the rules see: the same Machine asked to move from MachineAPI to ClusterAPI (every
 * migration rule runs: twin lookup, label and field comparison, the conversion check) by a cluster admin.
 */
export function migrationReviewBody(): string {
  const review = JSON.parse(reviewBody()) as {
    request: { object: KubeObject; oldObject: KubeObject; uid: string };
  };
  const toMachineApi = (o: KubeObject): KubeObject => ({
    ...o,
    status: {
      ...(o.status as Record<string, unknown>),
      authoritativeAPI: "MachineAPI",
      synchronizedAPI: "MachineAPI",
    },
  });
  const old = toMachineApi(review.request.oldObject);
  old.spec = { ...(old.spec as Record<string, unknown>), authoritativeAPI: "MachineAPI" };
  const next = toMachineApi(review.request.oldObject);
  next.spec = { ...(next.spec as Record<string, unknown>), authoritativeAPI: "ClusterAPI" };
  review.request.oldObject = old;
  review.request.object = next;
  return JSON.stringify(review);
}

/**
 * An InfraMachine review: a cluster admin adds a label to the AWSMachine of the reviewed Machine (index 0 of the
 * population, so it is cached with its twins). The rules find its MAPI twin through every CAPI Machine that
 * references it (SPEC §2.3), so this is the review whose decision depends on how the view finds those.
 */
export function infraMachineReviewBody(): string {
  const review = JSON.parse(reviewBody()) as {
    request: { oldObject: KubeObject; userInfo: unknown; uid: string };
  };
  const [, , awsMachine] = population(1).slice(-3);
  if (awsMachine?.kind !== "AWSMachine") throw new Error("bench population: no AWSMachine for the review");
  const old = { ...awsMachine, metadata: { ...awsMachine.metadata, resourceVersion: "1", uid: "aws-uid-0" } };
  const next = {
    ...old,
    metadata: { ...old.metadata, labels: { ...(old.metadata?.labels ?? {}), team: "storage" } },
  };
  return JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: review.request.uid,
      kind: { group: "infrastructure.cluster.x-k8s.io", version: "v1beta2", kind: "AWSMachine" },
      resource: { group: "infrastructure.cluster.x-k8s.io", version: "v1beta2", resource: "awsmachines" },
      requestKind: { group: "infrastructure.cluster.x-k8s.io", version: "v1beta2", kind: "AWSMachine" },
      requestResource: {
        group: "infrastructure.cluster.x-k8s.io",
        version: "v1beta2",
        resource: "awsmachines",
      },
      name: nameOf(old),
      namespace: NAMESPACES.capiNamespace,
      operation: "UPDATE",
      userInfo: review.request.userInfo,
      object: next,
      oldObject: old,
      options: { apiVersion: "meta.k8s.io/v1", kind: "UpdateOptions" },
      dryRun: false,
    },
  });
}
