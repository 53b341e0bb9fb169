/**
 * Development PKI with node-forge: a self-signed CA and serving certificates it signs. Used by
 * `npm run certs`, by local mode (webhook and embedded API server) and by tests. Never used in a cluster,
 * where service-ca or cert-manager issues the serving certificate.
 */
import { generateKeyPairSync } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import forge from "node-forge";

export interface KeyPair {
  certPem: string;
  keyPem: string;
}

export interface CertificateAuthority extends KeyPair {}

/**
 * A serial number as forge writes it (hex of the DER INTEGER's content): positive and minimal, so the first
 * byte is 0x01–0x7f. A leading 0x00 before a byte below 0x80 is not minimal DER, and OpenSSL 3 refuses the
 * certificate ("illegal padding").
 */
export const serialFromBytes = (bytes: Uint8Array): string => {
  const fixed = Uint8Array.from(bytes);
  fixed[0] = fixed[0]! & 0x7f || 0x01;
  return Buffer.from(fixed).toString("hex");
};

const randomSerial = (): string => serialFromBytes(Buffer.from(forge.random.getBytesSync(16), "binary"));

/** RSA keys from Node's native crypto (forge's pure-JS generation is ~20x slower), handed to forge as PEM. */
const rsaKeys = (): { publicKey: forge.pki.rsa.PublicKey; privateKey: forge.pki.rsa.PrivateKey } => {
  const { publicKey, privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  return {
    publicKey: forge.pki.publicKeyFromPem(publicKey),
    privateKey: forge.pki.privateKeyFromPem(privateKey),
  };
};

const validity = (cert: forge.pki.Certificate, days: number, now: Date): void => {
  cert.validity.notBefore = new Date(now.getTime() - 60_000);
  cert.validity.notAfter = new Date(now.getTime() + days * 86_400_000);
};

export function createCertificateAuthority(
  commonName = "machine-api-migration dev CA",
  now = new Date(),
): CertificateAuthority {
  const keys = rsaKeys();
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = randomSerial();
  validity(cert, 3650, now);
  const attrs = [{ name: "commonName", value: commonName }];
  cert.setSubject(attrs);
  cert.setIssuer(attrs);
  cert.setExtensions([
    { name: "basicConstraints", cA: true, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: "subjectKeyIdentifier" },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: forge.pki.privateKeyToPem(keys.privateKey) };
}

const IP = /^(\d{1,3}\.){3}\d{1,3}$|:/;

/** A serving certificate for `sans` (DNS names and IP addresses), signed by `ca`. */
export function issueServingCertificate(
  ca: CertificateAuthority,
  sans: readonly string[],
  now = new Date(),
  days = 365,
): KeyPair {
  if (sans.length === 0) throw new Error("a serving certificate needs at least one subject alternative name");
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  const caKey = forge.pki.privateKeyFromPem(ca.keyPem);
  const keys = rsaKeys();
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = randomSerial();
  validity(cert, days, now);
  cert.setSubject([{ name: "commonName", value: sans[0]! }]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: "basicConstraints", cA: false },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "extKeyUsage", serverAuth: true },
    {
      name: "subjectAltName",
      altNames: sans.map((s) => (IP.test(s) ? { type: 7, ip: s } : { type: 2, value: s })),
    },
  ]);
  cert.sign(caKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: forge.pki.privateKeyToPem(keys.privateKey) };
}

/** The SANs the webhook's serving certificate needs (SPEC §9): service DNS names plus loopback. */
export const webhookSans = (service: string, namespace: string): string[] => [
  `${service}.${namespace}.svc`,
  `${service}.${namespace}.svc.cluster.local`,
  "localhost",
  "127.0.0.1",
];

export interface CertFiles {
  caFile: string;
  certFile: string;
  keyFile: string;
}

const certFilesIn = (dir: string): CertFiles => ({
  caFile: join(dir, "ca.crt"),
  certFile: join(dir, "tls.crt"),
  keyFile: join(dir, "tls.key"),
});

/**
 * Writes a CA (kept as ca.crt/ca.key so later certificates chain to it) and a serving certificate into
 * `dir`. An existing CA in `dir` is reused, so a caBundle already handed out stays valid.
 */
export async function writeDevelopmentCertificates(
  dir: string,
  sans: readonly string[],
): Promise<CertFiles & { ca: CertificateAuthority }> {
  await mkdir(dir, { recursive: true });
  const files = certFilesIn(dir);
  const caKeyFile = join(dir, "ca.key");
  let ca: CertificateAuthority;
  try {
    ca = { certPem: await readFile(files.caFile, "utf8"), keyPem: await readFile(caKeyFile, "utf8") };
    forge.pki.certificateFromPem(ca.certPem);
  } catch {
    ca = createCertificateAuthority();
    await writeFile(files.caFile, ca.certPem);
    await writeFile(caKeyFile, ca.keyPem, { mode: 0o600 });
  }
  const serving = issueServingCertificate(ca, sans);
  await writeFile(files.keyFile, serving.keyPem, { mode: 0o600 });
  await writeFile(files.certFile, serving.certPem);
  return { ...files, ca };
}

/** `npm run certs [-- --dir D --service S --namespace N]`: writes the development certificates. */
export async function runCertsCommand(args: readonly string[]): Promise<number> {
  const opts: Record<string, string> = {
    dir: "certs",
    service: "machine-api-migration",
    namespace: "openshift-cluster-api",
  };
  for (let i = 0; i < args.length; i++) {
    const flag = args[i]!.replace(/^--/, "");
    const value = args[i + 1];
    if (!(flag in opts) || value === undefined) {
      process.stderr.write(`usage: certs [--dir D] [--service S] [--namespace N] (bad flag ${args[i]})\n`);
      return 2;
    }
    opts[flag] = value;
    i++;
  }
  const files = await writeDevelopmentCertificates(opts.dir!, webhookSans(opts.service!, opts.namespace!));
  process.stdout.write(`wrote ${files.caFile}, ${files.certFile}, ${files.keyFile}\n`);
  return 0;
}
