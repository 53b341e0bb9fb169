/**
 * `npm run bench` (issue 10): runs the selected sections, writes `bench/results/<timestamp>.json` and prints
 * a table with each figure as a ratio against a baseline measured in the same run, and whether each target
 * of PERFORMANCE.md is met. Everything it starts (API server, product, baseline, providers, autocannon) is a
 * child process it stops before exiting.
 */

import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { webhookSans, writeDevelopmentCertificates } from "../src/server/certs.js";
import { runClient } from "./client.js";
import { runHandover, runScale } from "./handover.js";
import { productNodeFlags } from "./image.js";
import { parseOptions } from "./options.js";
import { NAMESPACES } from "./population.js";
import { evaluateTargets, renderTable } from "./report.js";
import { runStatic } from "./static.js";

const RESULTS = fileURLToPath(new URL("./results/", import.meta.url));

async function main(argv: readonly string[]): Promise<number> {
  const o = parseOptions(argv);
  const started = new Date();
  const log = (line: string): void => {
    process.stderr.write(`[bench +${Math.round((Date.now() - started.getTime()) / 1000)}s] ${line}\n`);
  };
  const dir = await mkdtemp(join(tmpdir(), "mam-bench-"));
  try {
    const certDir = join(dir, "certs");
    const certs = await writeDevelopmentCertificates(
      certDir,
      webhookSans("machine-api-migration", NAMESPACES.capiNamespace),
    );
    const ws = { dir, certDir, caFile: certs.caFile };
    const want = new Set(o.only);
    const sections: Record<string, unknown> = {};
    if (want.has("admission") || want.has("decision") || want.has("memory"))
      Object.assign(sections, await runStatic(ws, o, log));
    if (want.has("client")) sections.client = await runClient(ws, o, log);
    if (want.has("handover")) sections.handover = await runHandover(ws, o, log);
    if (want.has("scale")) sections.scale = await runScale(ws, o, log);
    const result = {
      date: started.toISOString(),
      durationS: Math.round((Date.now() - started.getTime()) / 1000),
      host: {
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model,
        memoryBytes: totalmem(),
        node: process.version,
        // V8 and Node flags every bench process inherits (a heap setting changes the figures).
        ...(process.env.NODE_OPTIONS ? { nodeOptions: process.env.NODE_OPTIONS } : {}),
        // The product's own, as the image runs it (bench/image.ts) or as --product-semi-space set them.
        productNodeFlags: productNodeFlags(o),
      },
      options: o,
      sections,
      targets: evaluateTargets(sections),
    };
    const outDir = o.outDir ?? RESULTS;
    await mkdir(outDir, { recursive: true });
    const file = join(
      outDir,
      `${started.toISOString().replace(/[:.]/g, "-")}${o.quick ? "-quick" : ""}.json`,
    );
    await writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
    const { node, nodeOptions, productNodeFlags: flags } = result.host;
    const runtime = `Node ${node}${nodeOptions ? ` (NODE_OPTIONS=${nodeOptions})` : ""}; the product with ${flags.length > 0 ? flags.join(" ") : "V8's own heap sizing"}`;
    process.stdout.write(`${runtime}\n${renderTable(result.sections, result.targets)}\nresults: ${file}\n`);
    return 0;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`bench failed: ${e instanceof Error ? e.stack : String(e)}\n`);
    process.exit(1);
  },
);
