/**
 * Bench child: the server side of the client section — an HTTPS server (the bench's certificate, HTTP/1.1,
 * keep-alive) that answers every request with the same MAPI Machine, as an API server serves one: the bench
 * fleet's reviewed Machine with the managedFields of its three writers (the admin's create, the MAO's and the
 * product's status), built with the local API server's own field sets. It does nothing else, so what the
 * section measures is the client's side. argv: <cert dir>.
 */
import { readFile } from "node:fs/promises";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { fieldPaths, toFieldsV1 } from "../src/apiserver/managed-fields.js";
import type { KubeObject } from "../src/kube/object.js";
import { serveParent } from "./ipc.js";
import { reviewedMachine } from "./population.js";

const [certDir] = process.argv.slice(2);
if (!certDir) throw new Error("usage: answer.ts <cert dir>");

/** The reviewed Machine as served: server fields and the managedFields of each of its writers. */
function servedMachine(): KubeObject {
  const m = reviewedMachine();
  const entry = (manager: string, fields: unknown, subresource?: string) => ({
    manager,
    operation: "Update",
    apiVersion: "machine.openshift.io/v1beta1",
    time: "2026-12-04T10:00:00Z",
    fieldsType: "FieldsV1",
    fieldsV1: toFieldsV1(fieldPaths(fields)),
    ...(subresource ? { subresource } : {}),
  });
  return {
    ...m,
    metadata: {
      ...m.metadata,
      uid: "0b3f9c4e-6c1d-4a57-9d3e-2f7a1c9e8b40",
      resourceVersion: "123456",
      generation: 2,
      creationTimestamp: "2026-12-04T10:00:00Z",
      managedFields: [
        entry("kubectl-create", { metadata: { labels: m.metadata?.labels }, spec: m.spec }),
        entry("machine-api-operator", { status: m.status }, "status"),
        entry(
          "machine-api-migration",
          { status: { authoritativeAPI: null, synchronizedAPI: null } },
          "status",
        ),
      ],
    },
  };
}

const body = JSON.stringify(servedMachine());
const server = https.createServer(
  {
    cert: await readFile(join(certDir, "tls.crt")),
    key: await readFile(join(certDir, "tls.key")),
    minVersion: "TLSv1.2",
    keepAliveTimeout: 60_000,
  },
  (req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) });
      res.end(body);
    });
  },
);
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const { port } = server.address() as AddressInfo;
serveParent(
  { url: `https://127.0.0.1:${port}`, bytes: Buffer.byteLength(body), pid: process.pid },
  {},
  () => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  },
);
