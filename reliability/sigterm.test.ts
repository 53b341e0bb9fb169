/**
 * Issue 11 item 3 (SPEC §7): SIGTERM to the product process while autocannon (a separate process) loads
 * `/validate`. /readyz turns false first, every request sent during the shutdown delay is answered (zero
 * failed requests), and the process exits 0 once the delay is over and in-flight requests are drained.
 * The load is sized to end inside the delay, as kube-apiserver stops sending once the endpoint is removed.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fixtureText } from "../test/server/helpers.js";
import { probe, runAutocannon, writeBody } from "./load.js";
import { PARAMS } from "./params.js";
import { type Product, startProduct, tlsArgs } from "./product.js";
import { recordFigures } from "./report.js";

const dir = mkdtempSync(join(tmpdir(), "reliability-sigterm-"));
let product: Product | undefined;
afterAll(() => {
  if (product && product.child.exitCode === null) product.child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

describe("item 3: SIGTERM under load", () => {
  it("readyz false first, zero failed requests during the delay, exit 0 after the drain", async () => {
    const loadSeconds = PARAMS.loadSeconds;
    const sigtermAfterMs = 2_000;
    // The delay covers the whole load plus a margin for autocannon's own start-up (a separate process, slow on
    // a busy machine): what a preStop sleep + endpoint removal give kube before it stops sending.
    const shutdownDelay = loadSeconds + 5;
    product = await startProduct(
      [
        "--api-port",
        "0",
        "--webhook-port",
        "0",
        "--webhook-host",
        "127.0.0.1",
        "--state-dir",
        join(dir, "state"),
        ...tlsArgs(dir),
        "--shutdown-delay",
        String(shutdownDelay),
        "--no-controllers",
      ],
      dir,
    );
    const caFile = join(dir, "certs", "ca.crt");
    const ca = readFileSync(caFile, "utf8");
    expect((await probe(product.webhookUrl, "/readyz", ca)).status).toBe(200);

    const load = runAutocannon({
      url: `${product.webhookUrl}/validate`,
      bodyFile: writeBody(dir, "review.json", fixtureText("capi-machine-create")),
      caFile,
      connections: PARAMS.loadConnections,
      seconds: loadSeconds,
    });
    await new Promise((r) => setTimeout(r, sigtermAfterMs));
    const sigtermAt = performance.now();
    product.child.kill("SIGTERM");

    // Readiness probes on new connections until the listener closes: the first answer must already be false.
    const readyz: number[] = [];
    let readyzFalseAt: number | undefined;
    while (product.child.exitCode === null) {
      try {
        const { status } = await probe(product.webhookUrl, "/readyz", ca);
        readyz.push(status);
        if (status === 503) readyzFalseAt ??= performance.now();
      } catch {
        break; // the listener closed: the delay is over
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    const result = await load.done;
    const exit = await Promise.race([
      product.exited,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error("the product did not exit")), (shutdownDelay + 30) * 1000),
      ),
    ]);
    recordFigures("3-sigterm", {
      connections: PARAMS.loadConnections,
      ...result,
      shutdownDelaySeconds: shutdownDelay,
      readyzProbes: readyz.length,
      secondsToReadyzFalse: readyzFalseAt === undefined ? null : Math.round(readyzFalseAt - sigtermAt) / 1000,
      secondsToExit: Math.round(exit.at - sigtermAt) / 1000,
      exitCode: exit.code,
    });
    expect(readyz.length).toBeGreaterThan(0);
    expect(readyz.every((s) => s === 503)).toBe(true);
    expect(result).toMatchObject({ errors: 0, timeouts: 0, non2xx: 0 });
    expect(result.requests).toBeGreaterThan(0);
    expect(exit).toMatchObject({ code: 0, signal: null });
  });
});
