/**
 * Bench child: the baseline admission server — bare Fastify over HTTPS with the same certificate, TLS and
 * HTTP/1.1 settings as the product, that parses the same JSON body and allows. What the product adds on top
 * of this (decoding, the policy engine, metrics, logging, the response schema) is what item 1 measures.
 * argv: <cert dir>.
 */
import { readFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import Fastify from "fastify";
import { serveParent } from "./ipc.js";

const [certDir] = process.argv.slice(2);
if (!certDir) throw new Error("usage: bare.ts <cert dir>");
const app = Fastify({
  https: {
    cert: await readFile(join(certDir, "tls.crt")),
    key: await readFile(join(certDir, "tls.key")),
    minVersion: "TLSv1.2",
    ALPNProtocols: ["http/1.1"],
  },
  logger: false,
  bodyLimit: 7 * 1024 * 1024,
});
app.post("/validate", (req, reply) => {
  const uid = (req.body as { request?: { uid?: unknown } } | undefined)?.request?.uid;
  void reply.send({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    response: { uid, allowed: true },
  });
});
await app.listen({ host: "127.0.0.1", port: 0 });
const port = (app.server.address() as AddressInfo).port;
serveParent({ url: `https://127.0.0.1:${port}`, pid: process.pid }, {}, () => app.close());
