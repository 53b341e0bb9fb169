/**
 * Issue 11 item 1 at full scale: ≥ 100,000 generated hostile AdmissionReviews through `inject` against the
 * real policy engine, the 7 MiB edges, and a sample over real HTTPS (TLS, keep-alive connections). Zero 5xx,
 * every answer a valid AdmissionReview or a 400/413 naming the problem, and RSS flat across the run.
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import pino from "pino";
import { Registry } from "prom-client";
import { afterAll, describe, expect, it } from "vitest";
import { buildServer } from "../src/server/app.js";
import { createCertificateAuthority, issueServingCertificate } from "../src/server/certs.js";
import { startWebhookServer } from "../src/server/serve.js";
import { fixtureText } from "../test/server/helpers.js";
import {
  hostileBody,
  hostileContentType,
  hostilePath,
  limitBodies,
  problemWith,
  realDecide,
} from "./hostile.js";
import { PARAMS } from "./params.js";
import { recordFigures } from "./report.js";

const deps = () => ({
  decide: realDecide(),
  // Every decision's line is built (and dropped): a line that cannot be built is a hostile input's way in.
  logger: pino({ level: "debug" }, { write: () => {} }),
  registry: new Registry(),
  readiness: () => ({ ready: true }),
});
const MB = 1024 * 1024;
const dir = mkdtempSync(join(tmpdir(), "reliability-hostile-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("item 1: hostile input", () => {
  it(`${PARAMS.hostileRuns} generated reviews through inject: no 5xx, no crash, RSS flat`, async () => {
    const app = buildServer(deps());
    const problems: string[] = [];
    const statuses: Record<number, number> = {};
    const rss: number[] = [];
    const chunk = Math.max(1_000, Math.ceil(PARAMS.hostileRuns / 20));
    const started = performance.now();
    let sent = 0;
    for (let offset = 0; offset < PARAMS.hostileRuns; offset += chunk) {
      const size = Math.min(chunk, PARAMS.hostileRuns - offset);
      await fc.assert(
        fc.asyncProperty(hostilePath, hostileBody, hostileContentType, async (path, body, type) => {
          const res = await app.inject({
            method: "POST",
            url: path,
            payload: body,
            headers: { "content-type": type },
          });
          sent++;
          statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
          const problem = problemWith({ status: res.statusCode, body: res.body }, body);
          if (problem && problems.length < 20) problems.push(problem);
        }),
        { numRuns: size, seed: 1_000 + offset },
      );
      globalThis.gc?.();
      rss.push(process.memoryUsage().rss / MB);
    }
    // The 7 MiB edges run after the RSS series: 40 bodies of 7 MiB are allocation, not a leak.
    const { atLimit, overLimit } = limitBodies(fixtureText("mapi-machine-update-instance-type"));
    for (let i = 0; i < 20; i++) {
      for (const body of [atLimit, overLimit]) {
        const res = await app.inject({
          method: "POST",
          url: "/validate",
          payload: body,
          headers: { "content-type": "application/json" },
        });
        sent++;
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
        const problem = problemWith({ status: res.statusCode, body: res.body }, body);
        if (problem) problems.push(problem);
        expect(res.statusCode).toBe(body === atLimit ? 200 : 413);
      }
    }
    await app.close();
    // Warm-up (JIT, fast-check's caches) is the first fifth; "flat" is judged after it.
    const warm = rss[Math.floor(rss.length / 5)] ?? rss[0]!;
    const end = rss.at(-1)!;
    recordFigures("1-hostile-inject", {
      requests: sent,
      statuses,
      failures: problems.length,
      seconds: Math.round((performance.now() - started) / 100) / 10,
      rssMbAfterWarmup: Math.round(warm),
      rssMbEnd: Math.round(end),
      rssMbMax: Math.round(Math.max(...rss)),
      rssSeriesMb: rss.map(Math.round),
    });
    expect(problems).toEqual([]);
    expect(statuses[200] ?? 0).toBeGreaterThan(PARAMS.hostileRuns / 50);
    expect(end - warm).toBeLessThan(100);
  });

  it(`${PARAMS.hostileHttpsRuns} of them over real HTTPS: no 5xx, no dropped connection`, async () => {
    const ca = createCertificateAuthority("reliability CA");
    const serving = issueServingCertificate(ca, ["localhost", "127.0.0.1"]);
    const certFile = join(dir, "tls.crt");
    const keyFile = join(dir, "tls.key");
    writeFileSync(certFile, serving.certPem);
    writeFileSync(keyFile, serving.keyPem);
    const server = await startWebhookServer({
      host: "127.0.0.1",
      port: 0,
      certFile,
      keyFile,
      shutdownDelayMs: 0,
      deps: deps(),
    });
    const agent = new Agent({ keepAlive: true, maxSockets: 8, ca: ca.certPem });
    const post = (path: string, body: string, type: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpsRequest(
          new URL(path, server.url),
          { method: "POST", agent, headers: { "content-type": type } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("end", () =>
              resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
            );
            res.on("error", reject);
          },
        );
        req.on("error", reject);
        req.end(body);
      });
    const problems: string[] = [];
    const statuses: Record<number, number> = {};
    const started = performance.now();
    const samples = fc.sample(fc.tuple(hostilePath, hostileBody, hostileContentType), {
      numRuns: PARAMS.hostileHttpsRuns,
      seed: 7,
    });
    const { atLimit, overLimit } = limitBodies(fixtureText("mapi-machine-update-instance-type"));
    samples.push(["/validate", atLimit, "application/json"], ["/validate", overLimit, "application/json"]);
    for (let i = 0; i < samples.length; i += 8) {
      await Promise.all(
        samples.slice(i, i + 8).map(async ([path, body, type]) => {
          try {
            const answer = await post(path, body, type);
            statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
            const problem = problemWith(answer, body);
            if (problem) problems.push(problem);
          } catch (err) {
            problems.push(`transport: ${(err as Error).message}`);
          }
        }),
      );
    }
    agent.destroy();
    await server.close();
    recordFigures("1-hostile-https", {
      requests: samples.length,
      statuses,
      failures: problems.length,
      seconds: Math.round((performance.now() - started) / 100) / 10,
    });
    expect(problems.slice(0, 10)).toEqual([]);
  });
});
