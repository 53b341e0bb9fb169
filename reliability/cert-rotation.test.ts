/**
 * Issue 11 item 2 (SPEC §2.1, §9): the serving certificate files are replaced several times while autocannon
 * (a separate process) loads `/validate` over kept-alive connections and a probe opens a new connection per
 * request. Zero failed requests on either; after each replacement new handshakes present the new certificate.
 */
import { X509Certificate } from "node:crypto";
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { Registry } from "prom-client";
import { afterAll, describe, expect, it } from "vitest";
import { createCertificateAuthority, issueServingCertificate, type KeyPair } from "../src/server/certs.js";
import { startWebhookServer } from "../src/server/serve.js";
import { fixtureText } from "../test/server/helpers.js";
import { realDecide } from "./hostile.js";
import { probe, runAutocannon, writeBody } from "./load.js";
import { PARAMS } from "./params.js";
import { recordFigures } from "./report.js";

const dir = mkdtempSync(join(tmpdir(), "reliability-certs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("item 2: certificate rotation under load", () => {
  it(`${PARAMS.certRotations} rotations while autocannon runs: zero failures, new handshakes see each new certificate`, async () => {
    const ca = createCertificateAuthority("rotation CA");
    const pairs: KeyPair[] = Array.from({ length: PARAMS.certRotations + 1 }, () =>
      issueServingCertificate(ca, ["localhost", "127.0.0.1"]),
    );
    const fingerprint = (p: KeyPair) => new X509Certificate(p.certPem).fingerprint256;
    const caFile = writeBody(dir, "ca.crt", ca.certPem);
    const certFile = join(dir, "tls.crt");
    const keyFile = join(dir, "tls.key");
    // Replaced the way a Secret volume update lands: new files renamed over the old ones, key then cert.
    const install = (p: KeyPair) => {
      writeFileSync(`${keyFile}.new`, p.keyPem);
      writeFileSync(`${certFile}.new`, p.certPem);
      renameSync(`${keyFile}.new`, keyFile);
      renameSync(`${certFile}.new`, certFile);
    };
    install(pairs[0]!);
    const server = await startWebhookServer({
      host: "127.0.0.1",
      port: 0,
      certFile,
      keyFile,
      shutdownDelayMs: 0,
      deps: {
        decide: realDecide(),
        logger: pino({ level: "silent" }),
        registry: new Registry(),
        readiness: () => ({ ready: true }),
      },
      certificatePollIntervalMs: 500,
      certificateDebounceMs: 50,
    });
    const body = fixtureText("mapi-machine-update-instance-type");
    const load = runAutocannon({
      url: `${server.url}/validate`,
      bodyFile: writeBody(dir, "review.json", body),
      caFile,
      connections: PARAMS.loadConnections,
      seconds: PARAMS.loadSeconds + PARAMS.certRotations * 2,
    });
    const probeFailures: string[] = [];
    let probes = 0;
    const switchSeconds: number[] = [];
    /** Probes on new connections until one presents `want`; every probe must succeed meanwhile. */
    const probeUntil = async (want: string): Promise<void> => {
      for (let i = 0; i < 2_000; i++) {
        try {
          const answer = await probe(server.url, "/validate", ca.certPem, body);
          probes++;
          if (answer.status !== 200) probeFailures.push(`status ${answer.status}`);
          if (answer.fingerprint256 === want) return;
        } catch (err) {
          probeFailures.push((err as Error).message);
        }
      }
      throw new Error("the new certificate never appeared on a new handshake");
    };
    await probeUntil(fingerprint(pairs[0]!));
    for (let i = 1; i < pairs.length; i++) {
      await new Promise((r) => setTimeout(r, 1_000));
      const replacedAt = performance.now();
      install(pairs[i]!);
      await probeUntil(fingerprint(pairs[i]!));
      switchSeconds.push(Math.round(performance.now() - replacedAt) / 1000);
    }
    const result = await load.done;
    await server.close();
    recordFigures("2-cert-rotation", {
      rotations: PARAMS.certRotations,
      connections: PARAMS.loadConnections,
      ...result,
      probes,
      probeFailures: probeFailures.length,
      secondsToNewCertOnNewHandshake: switchSeconds,
    });
    expect(probeFailures).toEqual([]);
    expect(result).toMatchObject({ errors: 0, timeouts: 0, non2xx: 0 });
    expect(result.requests).toBeGreaterThan(0);
    expect(server.certificateFingerprint()).toBe(fingerprint(pairs.at(-1)!));
  });
});
