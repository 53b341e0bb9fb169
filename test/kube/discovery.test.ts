/** Resolving apiVersion + kind to a ResourceType for dynamic watches, locally or through discovery. */
import { describe, expect, it } from "vitest";
import { createResourceResolver, splitApiVersion } from "../../src/kube/discovery.js";
import { NotFoundError } from "../../src/kube/errors.js";
import { KINDS } from "../../src/kube/kinds.js";
import type { KubeRequest, Transport } from "../../src/kube/transport.js";

const discoveryTransport = () => {
  const paths: string[] = [];
  const transport: Transport = {
    async request(req: KubeRequest) {
      paths.push(req.path);
      if (req.path === "/apis/infrastructure.cluster.x-k8s.io/v1beta2")
        return {
          kind: "APIResourceList",
          resources: [
            { name: "awsmachinetemplates", kind: "AWSMachineTemplate", namespaced: true },
            { name: "gcpmachinetemplates", kind: "GCPMachineTemplate", namespaced: true },
            { name: "gcpmachinetemplates/status", kind: "GCPMachineTemplate", namespaced: true },
          ],
        };
      throw new NotFoundError(404, "NotFound", "the server could not find the requested resource");
    },
    stream: async () => {
      throw new Error("unused");
    },
  };
  return { transport, paths };
};

describe("resource resolver (dynamic watches, SPEC §4.1)", () => {
  it("resolves SPEC §0 kinds without asking the server", async () => {
    const { transport, paths } = discoveryTransport();
    const r = createResourceResolver(transport);
    expect(await r.resolve("infrastructure.cluster.x-k8s.io/v1beta2", "AWSMachineTemplate")).toBe(
      KINDS.awsMachineTemplate,
    );
    expect(paths).toEqual([]);
  });

  it("resolves other kinds through discovery, once per group/version", async () => {
    const { transport, paths } = discoveryTransport();
    const r = createResourceResolver(transport);
    const t = await r.resolve("infrastructure.cluster.x-k8s.io/v1beta2", "GCPMachineTemplate");
    expect(t).toEqual({
      group: "infrastructure.cluster.x-k8s.io",
      version: "v1beta2",
      kind: "GCPMachineTemplate",
      plural: "gcpmachinetemplates",
      namespaced: true,
    });
    await r.resolve("infrastructure.cluster.x-k8s.io/v1beta2", "GCPMachineTemplate");
    expect(paths).toEqual(["/apis/infrastructure.cluster.x-k8s.io/v1beta2"]);
  });

  it("an unknown kind or group is NotFound, and is asked again next time", async () => {
    const { transport, paths } = discoveryTransport();
    const r = createResourceResolver(transport);
    await expect(r.resolve("infrastructure.cluster.x-k8s.io/v1beta2", "Nope")).rejects.toBeInstanceOf(
      NotFoundError,
    );
    await expect(r.resolve("example.com/v1", "Thing")).rejects.toBeInstanceOf(NotFoundError);
    await expect(r.resolve("example.com/v1", "Thing")).rejects.toBeInstanceOf(NotFoundError);
    expect(paths.filter((p) => p === "/apis/example.com/v1")).toHaveLength(2);
  });

  it.each([
    "../../api/v1/namespaces/openshift-cluster-api/secrets/x",
    "example.com/v1/../../../api/v1/secrets",
    "Example.com/v1",
    "example.com/v1?watch=true",
    "example.com/",
    "a b/v1",
  ])(
    "an apiVersion no API server could serve (%s) is NotFound without a request: a path built from it would name another resource",
    async (apiVersion) => {
      const { transport, paths } = discoveryTransport();
      const r = createResourceResolver(transport);
      const refused = r.resolve(apiVersion, "Thing");
      await expect(refused).rejects.toBeInstanceOf(NotFoundError);
      await expect(refused).rejects.toThrow(`the server does not serve kind Thing in ${apiVersion}`);
      expect(paths).toEqual([]);
    },
  );

  it.each([
    ["v1", { group: "", version: "v1" }],
    ["cluster.x-k8s.io/v1beta2", { group: "cluster.x-k8s.io", version: "v1beta2" }],
  ])("splits %s", (apiVersion, expected) => expect(splitApiVersion(apiVersion)).toEqual(expected));
});
