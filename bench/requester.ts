/**
 * Bench child: the client side of the client section. Sends GETs for one MAPI Machine to bench/answer.ts,
 * `concurrency` at a time, either as the product does (its transport and client: kubeconfig credentials, the
 * kept-alive undici pool of decision 107, managedFields cut from the answer before it is parsed) or as a bare
 * Node client would (`https.request` on a kept-alive agent, the answer `JSON.parse`d whole), and reports this
 * process's CPU (user + system) per answered request. argv: <server URL> <CA file>.
 */
import { readFile } from "node:fs/promises";
import https from "node:https";
import { KubeConfig } from "@kubernetes/client-node";
import { createKubeClient } from "../src/kube/client.js";
import { KINDS } from "../src/kube/kinds.js";
import { kubeConfigTransport, resourcePath } from "../src/kube/transport.js";
import { serveParent } from "./ipc.js";
import { NAMESPACES, reviewedMachine } from "./population.js";

const [url, caFile] = process.argv.slice(2);
if (!url || !caFile) throw new Error("usage: requester.ts <server URL> <CA file>");
const ca = await readFile(caFile, "utf8");
const name = reviewedMachine().metadata?.name as string;

const kubeConfig = new KubeConfig();
kubeConfig.loadFromOptions({
  clusters: [{ name: "bench", server: url, caData: Buffer.from(ca).toString("base64") }],
  users: [{ name: "bench", token: "bench-token" }],
  contexts: [{ name: "bench", cluster: "bench", user: "bench" }],
  currentContext: "bench",
});
const client = createKubeClient(kubeConfigTransport(kubeConfig), { dropManagedFields: true });
const product = (): Promise<unknown> => client.get(KINDS.mapiMachine, NAMESPACES.mapiNamespace, name);

const agent = new https.Agent({ keepAlive: true, ca });
const { hostname, port } = new URL(url);
const path = resourcePath(KINDS.mapiMachine, NAMESPACES.mapiNamespace, name);
const bare = (): Promise<unknown> =>
  new Promise((resolve, reject) => {
    const req = https.request(
      {
        hostname,
        port,
        path,
        agent,
        headers: { Accept: "application/json", Authorization: "Bearer bench-token" },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString("utf8"))));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end();
  });

/** The answer is the Machine asked for: with its managedFields from the bare client, without from the product's. */
const check = (client: "product" | "bare", answer: unknown): void => {
  const metadata = (answer as { metadata?: { name?: unknown; managedFields?: unknown } }).metadata;
  if (metadata?.name !== name || (client === "bare") !== Array.isArray(metadata.managedFields))
    throw new Error(`the ${client} client's answer is not the Machine ${name} as that client reads it`);
};

/** CPU µs per request of `requests` GETs, `concurrency` in flight; every answer is checked. */
async function run(client: "product" | "bare", requests: number, concurrency: number): Promise<number> {
  const get = client === "bare" ? bare : product;
  let sent = 0;
  const worker = async (): Promise<void> => {
    while (sent < requests) {
      sent++;
      check(client, await get());
    }
  };
  const before = process.cpuUsage();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / requests;
}

serveParent(
  { pid: process.pid },
  {
    run: ({ client, requests, concurrency }) =>
      run(client === "bare" ? "bare" : "product", Number(requests), Number(concurrency)),
  },
  async () => {
    agent.destroy();
  },
);
