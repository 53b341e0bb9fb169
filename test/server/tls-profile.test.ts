/**
 * The TLS security profiles of SPEC §2.1 as Node options: OpenShift's cipher lists and minimum versions per
 * profile, Intermediate when the profile is absent or unknown, Custom lists kept (with TLS 1.3 always on, as
 * Go serves it), and no static-RSA or CBC suite under Intermediate.
 */
import { createSecureContext } from "node:tls";
import { describe, expect, it } from "vitest";
import { profileSpec, TLS_PROFILES, tlsOptionsFor } from "../../src/server/tls-profile.js";

describe("tlsOptionsFor", () => {
  it("absent, empty or unknown profiles are Intermediate: TLS ≥ 1.2, TLS 1.3 suites and ECDHE/DHE AEAD suites only", () => {
    const intermediate = tlsOptionsFor({ type: "Intermediate" });
    for (const profile of [undefined, {}, { type: "Bogus" as never }])
      expect(tlsOptionsFor(profile)).toEqual(intermediate);
    expect(intermediate.minVersion).toBe("TLSv1.2");
    const suites = String(intermediate.ciphers).split(":");
    for (const suite of suites)
      expect(suite).toMatch(/^(TLS_|ECDHE-(RSA|ECDSA)-|DHE-RSA-)[A-Z0-9-_]*(GCM|POLY1305)/);
    expect(suites).not.toContain("AES128-SHA");
    expect(intermediate.ecdhCurve).toBe("X25519:P-256:P-384");
  });

  it("Old, Modern and Custom follow OpenShift's definitions", () => {
    expect(tlsOptionsFor({ type: "Modern" })).toMatchObject({
      minVersion: "TLSv1.3",
      ciphers: "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256",
    });
    const old = tlsOptionsFor({ type: "Old" });
    expect(old.minVersion).toBe("TLSv1");
    expect(String(old.ciphers).split(":")).toContain("AES128-SHA");
    expect(profileSpec({ type: "Old" })).toBe(TLS_PROFILES.Old);
    expect(
      tlsOptionsFor({
        type: "Custom",
        custom: { ciphers: ["ECDHE-RSA-AES256-GCM-SHA384"], minTLSVersion: "VersionTLS12" },
      }),
    ).toMatchObject({
      minVersion: "TLSv1.2",
      ciphers:
        "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:ECDHE-RSA-AES256-GCM-SHA384",
    });
    expect(profileSpec({ type: "Custom", custom: { ciphers: [] } })).toEqual({
      ciphers: TLS_PROFILES.Intermediate.ciphers,
      minTLSVersion: "VersionTLS12",
    });
  });

  it("every profile's options make a secure context", () => {
    for (const type of ["Old", "Intermediate", "Modern"] as const)
      expect(() => createSecureContext(tlsOptionsFor({ type }))).not.toThrow();
  });
});
