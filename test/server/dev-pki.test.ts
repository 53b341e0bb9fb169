import { X509Certificate } from "node:crypto";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { webhookSans, writeDevelopmentCertificates } from "../../src/server/certs.js";

describe("development PKI (SPEC §9 certs)", () => {
  it("issues a serving certificate for the service DNS names and loopback, signed by a reusable CA", async () => {
    const dir = await mkdtemp(join(tmpdir(), "mam-certs-"));
    const first = await writeDevelopmentCertificates(
      dir,
      webhookSans("machine-api-migration", "openshift-cluster-api"),
    );
    const ca = new X509Certificate(await readFile(first.caFile));
    const serving = new X509Certificate(await readFile(first.certFile));
    expect(serving.verify(ca.publicKey)).toBe(true);
    expect(serving.subjectAltName).toContain("DNS:machine-api-migration.openshift-cluster-api.svc");
    expect(serving.subjectAltName).toContain(
      "DNS:machine-api-migration.openshift-cluster-api.svc.cluster.local",
    );
    expect(serving.subjectAltName).toContain("DNS:localhost");
    expect(serving.subjectAltName).toContain("IP Address:127.0.0.1");
    expect(ca.ca).toBe(true);
    expect(serving.ca).toBe(false);

    const second = await writeDevelopmentCertificates(dir, ["localhost"]);
    expect(new X509Certificate(await readFile(second.caFile)).fingerprint256).toBe(ca.fingerprint256);
    const reissued = new X509Certificate(await readFile(second.certFile));
    expect(reissued.serialNumber).not.toBe(serving.serialNumber);
    expect(reissued.verify(ca.publicKey)).toBe(true);
  });
});
