/**
 * The cluster's TLS security profile (SPEC §2.1: `apiservers.config.openshift.io/cluster
 * .spec.tlsSecurityProfile`, absent → Intermediate) as Node TLS options for every listener. The profiles'
 * cipher lists and minimum versions are OpenShift's own (openshift/api `TLSProfiles`, OpenSSL names); the
 * groups are Mozilla's for each profile, which OpenShift's follow. Reading the APIServer object and applying
 * a change belong to the caller (serve.ts applies options; the composition root watches). Pure functions.
 *
 * The `DHE-*` suites OpenShift lists are kept as listed but are never negotiated: no DH parameters are
 * configured, as OpenShift's Go components (crypto/tls has no DHE) never negotiate them either. So under
 * Intermediate TLS 1.2 offers only ECDHE with AEAD ciphers; no static-RSA suite (`AES128-SHA`) is accepted.
 */
import type { SecureContextOptions } from "node:tls";

export type TlsProfileType = "Old" | "Intermediate" | "Modern" | "Custom";
export type TlsProtocolVersion = "VersionTLS10" | "VersionTLS11" | "VersionTLS12" | "VersionTLS13";

/** The API's `TLSSecurityProfile`: a type, and for Custom its ciphers and minimum version. */
export interface TlsSecurityProfile {
  type?: TlsProfileType;
  custom?: { ciphers?: string[]; minTLSVersion?: TlsProtocolVersion };
}

export interface TlsProfileSpec {
  readonly ciphers: readonly string[];
  readonly minTLSVersion: TlsProtocolVersion;
}

const TLS13_SUITES = ["TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"];

const INTERMEDIATE_TLS12 = [
  "ECDHE-ECDSA-AES128-GCM-SHA256",
  "ECDHE-RSA-AES128-GCM-SHA256",
  "ECDHE-ECDSA-AES256-GCM-SHA384",
  "ECDHE-RSA-AES256-GCM-SHA384",
  "ECDHE-ECDSA-CHACHA20-POLY1305",
  "ECDHE-RSA-CHACHA20-POLY1305",
  "DHE-RSA-AES128-GCM-SHA256",
  "DHE-RSA-AES256-GCM-SHA384",
];

export const TLS_PROFILES: Readonly<Record<Exclude<TlsProfileType, "Custom">, TlsProfileSpec>> =
  Object.freeze({
    Old: {
      ciphers: [
        ...TLS13_SUITES,
        ...INTERMEDIATE_TLS12,
        "DHE-RSA-CHACHA20-POLY1305",
        "ECDHE-ECDSA-AES128-SHA256",
        "ECDHE-RSA-AES128-SHA256",
        "ECDHE-ECDSA-AES128-SHA",
        "ECDHE-RSA-AES128-SHA",
        "ECDHE-ECDSA-AES256-SHA384",
        "ECDHE-RSA-AES256-SHA384",
        "ECDHE-ECDSA-AES256-SHA",
        "ECDHE-RSA-AES256-SHA",
        "DHE-RSA-AES128-SHA256",
        "DHE-RSA-AES256-SHA256",
        "AES128-GCM-SHA256",
        "AES256-GCM-SHA384",
        "AES128-SHA256",
        "AES256-SHA256",
        "AES128-SHA",
        "AES256-SHA",
        "DES-CBC3-SHA",
      ],
      minTLSVersion: "VersionTLS10",
    },
    Intermediate: { ciphers: [...TLS13_SUITES, ...INTERMEDIATE_TLS12], minTLSVersion: "VersionTLS12" },
    Modern: { ciphers: TLS13_SUITES, minTLSVersion: "VersionTLS13" },
  });

const NODE_VERSION: Readonly<Record<TlsProtocolVersion, "TLSv1" | "TLSv1.1" | "TLSv1.2" | "TLSv1.3">> = {
  VersionTLS10: "TLSv1",
  VersionTLS11: "TLSv1.1",
  VersionTLS12: "TLSv1.2",
  VersionTLS13: "TLSv1.3",
};

/** Mozilla's groups: Old adds secp521r1 to the X25519, P-256, P-384 of Intermediate and Modern. */
const GROUPS = "X25519:P-256:P-384";
const OLD_GROUPS = "X25519:P-256:P-384:P-521";

/** The profile in force: Custom with its own lists, else a named one; absent or unknown → Intermediate. */
export function profileSpec(profile: TlsSecurityProfile | undefined): TlsProfileSpec {
  const type = profile?.type;
  if (type === "Custom") {
    const ciphers = profile?.custom?.ciphers?.filter((c) => typeof c === "string" && c.length > 0) ?? [];
    const min = profile?.custom?.minTLSVersion;
    // A Custom profile without ciphers would leave nothing to negotiate: Intermediate's are used instead.
    return {
      ciphers: ciphers.length > 0 ? ciphers : TLS_PROFILES.Intermediate.ciphers,
      minTLSVersion: min && min in NODE_VERSION ? min : "VersionTLS12",
    };
  }
  return type === "Old" || type === "Modern" ? TLS_PROFILES[type] : TLS_PROFILES.Intermediate;
}

/** Node TLS options for a profile, for `https.createServer` and `setSecureContext` alike. */
export function tlsOptionsFor(
  profile: TlsSecurityProfile | undefined,
): Pick<SecureContextOptions, "minVersion" | "ciphers" | "ecdhCurve" | "honorCipherOrder"> {
  const spec = profileSpec(profile);
  const old = spec.minTLSVersion === "VersionTLS10" || spec.minTLSVersion === "VersionTLS11";
  // Go, which the rest of OpenShift serves with, always offers its TLS 1.3 suites, whatever a Custom list
  // names; Node would turn TLS 1.3 off for a list without any.
  const tls13 = spec.ciphers.some((c) => c.startsWith("TLS_")) ? [] : TLS13_SUITES;
  return {
    minVersion: NODE_VERSION[spec.minTLSVersion],
    // OpenSSL's default security level refuses TLS 1.0/1.1 and SHA-1 suites that the Old profile allows.
    ciphers: [...tls13, ...spec.ciphers].join(":") + (old ? ":@SECLEVEL=0" : ""),
    ecdhCurve: profile?.type === "Old" ? OLD_GROUPS : GROUPS,
    honorCipherOrder: true,
  };
}
