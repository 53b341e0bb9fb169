/**
 * The development PKI's certificates must be DER that OpenSSL 3 accepts: a serial number is a positive
 * INTEGER in its minimal encoding. A serial whose first byte was 0x00 followed by a byte below 0x80 was not
 * minimal, and Node refused such a certificate ("asn1 encoding routines::illegal padding") about once in 32.
 */
import { createSecureContext } from "node:tls";
import { describe, expect, it } from "vitest";
import {
  createCertificateAuthority,
  issueServingCertificate,
  serialFromBytes,
} from "../../src/server/certs.js";

const minimalPositive = (hex: string): boolean => {
  const first = Number.parseInt(hex.slice(0, 2), 16);
  return hex.length % 2 === 0 && first !== 0 && first < 0x80;
};

describe("serial numbers: positive INTEGERs in their minimal DER encoding", () => {
  it.each([
    ["a leading zero byte followed by a small byte", [0x00, 0x12, 0x34]],
    ["a leading zero byte followed by a large byte", [0x00, 0x92, 0x34]],
    ["a leading byte with the sign bit set", [0xff, 0x00, 0x01]],
    ["an ordinary leading byte", [0x42, 0x00, 0x01]],
    ["all zero", [0x00, 0x00, 0x00]],
  ])("%s", (_, bytes) => {
    const hex = serialFromBytes(Uint8Array.from(bytes));
    expect(minimalPositive(hex), hex).toBe(true);
    expect(hex).toHaveLength(bytes.length * 2);
  });

  it("100 generated CAs and serving certificates all load into a TLS context", { timeout: 120_000 }, () => {
    for (let i = 0; i < 50; i++) {
      const ca = createCertificateAuthority(`test CA ${i}`);
      const serving = issueServingCertificate(ca, ["127.0.0.1"]);
      expect(() =>
        createSecureContext({ cert: serving.certPem, key: serving.keyPem, ca: ca.certPem }),
      ).not.toThrow();
      expect(() => createSecureContext({ cert: ca.certPem, key: ca.keyPem })).not.toThrow();
    }
  });
});
