/**
 * Load and probes for the serving campaigns (items 2, 3): autocannon in its own process (so the load
 * generator never shares an event loop with the server under test), and a probe that opens a new TLS
 * connection per request to see which certificate a fresh handshake gets.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { join } from "node:path";
import type { TLSSocket } from "node:tls";

const AUTOCANNON = join(import.meta.dirname, "..", "node_modules", ".bin", "autocannon");

export interface LoadResult {
  requests: number;
  ok2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Requests per second (mean) and latency p99 in ms, for the report. */
  rps: number;
  p99Ms: number;
}

export interface LoadOptions {
  url: string;
  /** A file holding the JSON body to POST. */
  bodyFile: string;
  caFile: string;
  connections: number;
  seconds: number;
}

/** Runs autocannon as a child process until its duration ends; resolves with its figures. */
export function runAutocannon(options: LoadOptions): { done: Promise<LoadResult> } {
  const child = spawn(
    AUTOCANNON,
    [
      "--json",
      "-c",
      String(options.connections),
      "-d",
      String(options.seconds),
      "-m",
      "POST",
      "-H",
      "content-type=application/json",
      "-i",
      options.bodyFile,
      options.url,
    ],
    // autocannon has no CA flag; Node's extra-CA variable makes it trust the test CA and nothing else new.
    { env: { ...process.env, NODE_EXTRA_CA_CERTS: options.caFile }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  const done = new Promise<LoadResult>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      const line = stdout.trim().split("\n").at(-1) ?? "";
      try {
        const r = JSON.parse(line) as {
          requests: { total: number; mean: number };
          latency: { p99: number };
          errors: number;
          timeouts: number;
          non2xx: number;
          "2xx": number;
        };
        resolve({
          requests: r.requests.total,
          ok2xx: r["2xx"],
          non2xx: r.non2xx,
          errors: r.errors,
          timeouts: r.timeouts,
          rps: Math.round(r.requests.mean),
          p99Ms: r.latency.p99,
        });
      } catch {
        reject(new Error(`autocannon exited ${code}: ${stderr.slice(-500)} ${stdout.slice(-500)}`));
      }
    });
  });
  return { done };
}

export const writeBody = (dir: string, name: string, body: string): string => {
  const file = join(dir, name);
  writeFileSync(file, body);
  return file;
};

export interface ProbeAnswer {
  status: number;
  fingerprint256: string;
}

/** One request on a new connection (a new TLS handshake), trusting only `ca`. */
export const probe = (url: string, path: string, ca: string, body?: string): Promise<ProbeAnswer> =>
  new Promise((resolve, reject) => {
    const req = httpsRequest(
      new URL(path, url),
      {
        method: body ? "POST" : "GET",
        ca,
        agent: false,
        headers: body ? { "content-type": "application/json" } : {},
      },
      (res) => {
        const socket = res.socket as TLSSocket;
        const fingerprint256 = socket.getPeerCertificate().fingerprint256;
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0, fingerprint256 }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
