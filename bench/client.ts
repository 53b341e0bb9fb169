/**
 * The client section: what one GET costs the product's side of a request — its transport and client, as every
 * controller read and informer list goes through them — against a bare Node HTTPS client in the same run, on
 * the same answer from the same server (bench/answer.ts, its own process). The product's live reads are a
 * third of its requests in a handover and every request of its controllers is one of these; the server's CPU
 * is not counted. Runs alternate A-B-B-A after a warm-up of each.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { productNodeFlags } from "./image.js";
import { startChild } from "./ipc.js";
import type { BenchOptions } from "./options.js";
import type { Workspace } from "./static.js";
import { median, ratio, round } from "./stats.js";

const HERE = fileURLToPath(new URL(".", import.meta.url));
/**
 * Requests in flight: the sync and migration controllers' four workers each of decision 29, kept at eight when
 * decision 109 doubled the workers so the section's figures stay comparable across runs.
 */
const CONCURRENCY = 8;
const ROUNDS = 4;

export interface ClientRow {
  answerBytes: number;
  concurrency: number;
  requestsPerRound: number;
  /** CPU (user + system) of the client's process per answered request, µs: median of the rounds. */
  productUsPerRequest: number;
  bareUsPerRequest: number;
  /** product / bare. */
  ratio: number;
  samples: { product: number[]; bare: number[] };
}

export async function runClient(
  ws: Workspace,
  o: BenchOptions,
  log: (line: string) => void,
): Promise<ClientRow> {
  const answer = await startChild(join(HERE, "answer.ts"), [ws.certDir]);
  try {
    const { url, bytes } = answer.ready as { url: string; bytes: number };
    // The client runs with the product's own V8 flags (the image's), whichever client it measures.
    const requester = await startChild(join(HERE, "requester.ts"), [url, ws.caFile], {
      execArgv: productNodeFlags(o),
    });
    try {
      const run = async (client: "product" | "bare", requests: number): Promise<number> =>
        (await requester.ask("run", { client, requests, concurrency: CONCURRENCY })) as number;
      log(`client: ${o.clientRequests} GETs per round, ${CONCURRENCY} in flight, ${ROUNDS} rounds of each`);
      await run("product", Math.ceil(o.clientRequests / 4));
      await run("bare", Math.ceil(o.clientRequests / 4));
      const samples = { product: [] as number[], bare: [] as number[] };
      for (let i = 0; i < ROUNDS; i++) {
        const order = i % 2 === 0 ? (["product", "bare"] as const) : (["bare", "product"] as const);
        for (const client of order) samples[client].push(round(await run(client, o.clientRequests), 1));
      }
      const productUs = median(samples.product);
      const bareUs = median(samples.bare);
      return {
        answerBytes: bytes,
        concurrency: CONCURRENCY,
        requestsPerRound: o.clientRequests,
        productUsPerRequest: productUs,
        bareUsPerRequest: bareUs,
        ratio: ratio(productUs, bareUs),
        samples,
      };
    } finally {
      await requester.stop();
    }
  } finally {
    await answer.stop();
  }
}
