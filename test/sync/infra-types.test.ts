/**
 * The dynamic watches' discovery (SPEC §4.1): the API group a CAPI object's `infrastructureRef` names is
 * user-written, and the discovery path is built from it.
 */
import { describe, expect, it } from "vitest";
import type { Cache } from "../../src/kube/cache.js";
import { systemClock } from "../../src/kube/clock.js";
import { NotFoundError } from "../../src/kube/errors.js";
import type { KubeRequest, Transport } from "../../src/kube/transport.js";
import { createInfraTypes } from "../../src/sync/shell/infra-types.js";

const recordingTransport = () => {
  const paths: string[] = [];
  const transport: Transport = {
    async request(req: KubeRequest) {
      paths.push(req.path);
      throw new NotFoundError(404, "NotFound", "the server could not find the requested resource");
    },
    stream: async () => {
      throw new Error("unused");
    },
  };
  return { transport, paths };
};

/** Dynamic watches over a transport that records every path; the cache is never reached (nothing gets watched). */
const infraTypes = () => {
  const { transport, paths } = recordingTransport();
  const infra = createInfraTypes({
    cache: {} as Cache,
    transport,
    namespace: "openshift-cluster-api",
    initial: [],
    onInformer: () => {},
    clock: systemClock,
  });
  return { infra, paths };
};

describe("infrastructureRef discovery (SPEC §4.1 dynamic watches)", () => {
  it.each(["../api/v1/namespaces/openshift-cluster-api/secrets", "Example.COM", "a b", "x?watch=true"])(
    "an API group no server could serve (%j) is NotFound without a request",
    async (apiGroup) => {
      const { infra, paths } = infraTypes();
      const refused = infra.ensure({ apiGroup, kind: "EvilMachine", name: "m" });
      await expect(refused).rejects.toBeInstanceOf(NotFoundError);
      await expect(refused).rejects.toThrow(
        `the server does not serve API group ${JSON.stringify(apiGroup)}`,
      );
      expect(paths).toEqual([]);
    },
  );

  it("a servable group is asked about through discovery", async () => {
    const { infra, paths } = infraTypes();
    await expect(infra.ensure({ apiGroup: "example.com", kind: "Thing", name: "m" })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    expect(paths).toEqual(["/apis/example.com"]);
  });
});
