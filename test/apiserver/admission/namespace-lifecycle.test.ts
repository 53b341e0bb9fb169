/**
 * `NamespaceLifecycle` (SPEC §8) as kube-apiserver's plugin decides, with its answers as kube-apiserver 1.33
 * gave them on the real control plane: no content created in a missing (404) or terminating (403 with the
 * `NamespaceTerminating` cause) namespace, the immortal namespaces never deleted, everything else allowed.
 */
import { describe, expect, it } from "vitest";
import {
  checkNamespaceLifecycle,
  type LifecycleRequest,
} from "../../../src/apiserver/admission/namespace-lifecycle.js";
import type { KubeObject } from "../../../src/kube/object.js";

const active: KubeObject = {
  apiVersion: "v1",
  kind: "Namespace",
  metadata: { name: "ns" },
  status: { phase: "Active" },
};
const terminating: KubeObject = {
  apiVersion: "v1",
  kind: "Namespace",
  metadata: { name: "doomed", deletionTimestamp: "2026-12-01T00:00:00Z" },
  status: { phase: "Terminating" },
};
const configMap = (
  operation: LifecycleRequest["operation"],
  namespace: string,
  name = "x",
): LifecycleRequest => ({
  operation,
  group: "",
  resource: "configmaps",
  namespace,
  name,
});
const namespaceRequest = (operation: LifecycleRequest["operation"], name: string): LifecycleRequest => ({
  operation,
  group: "",
  resource: "namespaces",
  namespace: "",
  name,
});

describe("NamespaceLifecycle", () => {
  const allowed: Array<[string, LifecycleRequest, KubeObject | undefined]> = [
    ["a create in an active namespace", configMap("CREATE", "ns"), active],
    [
      "an update in a terminating namespace (finalizers must stay removable)",
      configMap("UPDATE", "doomed"),
      terminating,
    ],
    ["a delete in a terminating namespace", configMap("DELETE", "doomed"), terminating],
    ["a delete in a missing namespace", configMap("DELETE", "gone"), undefined],
    [
      "a cluster-scoped kind",
      { operation: "CREATE", group: "", resource: "nodes", namespace: "", name: "n" },
      undefined,
    ],
    ["creating a namespace", namespaceRequest("CREATE", "new"), undefined],
    ["deleting an ordinary namespace", namespaceRequest("DELETE", "kube-node-lease"), undefined],
  ];
  it.each(allowed)("allows %s", (_what, request, ns) => {
    expect(checkNamespaceLifecycle(request, ns)).toBeUndefined();
  });

  it("refuses a create in a missing namespace with 404, as the namespace's own NotFound", () => {
    expect(checkNamespaceLifecycle(configMap("CREATE", "no-such"), undefined)?.toStatus()).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'namespaces "no-such" not found',
      reason: "NotFound",
      details: { name: "no-such", kind: "namespaces" },
      code: 404,
    });
  });

  it("refuses a create in a terminating namespace with 403 and the NamespaceTerminating cause", () => {
    expect(checkNamespaceLifecycle(configMap("CREATE", "doomed"), terminating)?.toStatus()).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message:
        'configmaps "x" is forbidden: unable to create new content in namespace doomed because it is being terminated',
      reason: "Forbidden",
      details: {
        name: "x",
        kind: "configmaps",
        causes: [
          {
            reason: "NamespaceTerminating",
            message: "namespace doomed is being terminated",
            field: "metadata.namespace",
          },
        ],
      },
      code: 403,
    });
  });

  it.each(["default", "kube-system", "kube-public"])(
    "refuses to delete the immortal namespace %s",
    (name) => {
      expect(checkNamespaceLifecycle(namespaceRequest("DELETE", name), undefined)?.toStatus()).toMatchObject({
        code: 403,
        reason: "Forbidden",
        message: `namespaces "${name}" is forbidden: this namespace may not be deleted`,
        details: { name, kind: "namespaces" },
      });
    },
  );
});
