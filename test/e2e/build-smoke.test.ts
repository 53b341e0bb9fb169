/**
 * The compiled output runs under plain `node`, as the image runs it (`node dist/cli.js`): vitest and tsx
 * resolve modules more kindly than node does (a named import from fast-json-patch passes under vitest and
 * crashes in node), so this builds with `npm run build` and exercises the mutating path — which produces its
 * JSON Patch with fast-json-patch — through the compiled modules.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);

beforeAll(async () => {
  await run("npm", ["run", "build"], { timeout: 170_000 });
}, 180_000);

describe("built output under plain node", () => {
  it("`node dist/cli.js --help` lists the subcommands", async () => {
    const { stdout } = await run(process.execPath, ["dist/cli.js", "--help"]);
    expect(stdout).toContain("usage: machine-api-migration");
    expect(stdout).toContain("convert");
  });

  it("the compiled policy engine answers a CAPI Machine CREATE with the pause patch (pause-new-capi)", async () => {
    const script = `
      import { readFileSync } from "node:fs";
      import { decodeAdmissionReview } from "./dist/server/admission-review.js";
      import { decide } from "./dist/policies/engine.js";
      import { memoryStore } from "./dist/policies/memory-store.js";
      import { clusterView } from "./dist/policies/view.js";
      const review = JSON.parse(readFileSync("test/fixtures/capi-machine-create.json", "utf8"));
      const decoded = decodeAdmissionReview(review);
      if (!decoded.ok) throw new Error(decoded.error);
      const ns = { mapiNamespace: "openshift-machine-api", capiNamespace: "openshift-cluster-api" };
      const twin = { apiVersion: "machine.openshift.io/v1beta1", kind: "Machine",
        metadata: { name: decoded.request.name ?? decoded.request.object.metadata.name, namespace: ns.mapiNamespace },
        spec: { authoritativeAPI: "MachineAPI" }, status: { authoritativeAPI: "MachineAPI" } };
      const view = clusterView(memoryStore([twin]), ns);
      const settings = { ...ns, controllerUsers: [], requireDeleteConfirmation: true, cacheStaleAfterMs: 30000 };
      const d = decide("mutate", decoded.request, { view, settings, checkConvertible: () => [], enforcing: true });
      console.log(JSON.stringify(d));
    `;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script]);
    const decision = JSON.parse(stdout);
    expect(decision.rule).toBe("pause-new-capi");
    expect(decision.patch).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ op: "add", path: expect.stringContaining("/metadata/annotations") }),
      ]),
    );
  });
});
