/**
 * Shared test helpers for the admission server: fake dependencies (a scripted `decide`, a log capture, a
 * fresh metrics registry), fixture loading, AdmissionReview builders, and the client for the real TLS
 * listeners (supertest over an agent that makes one new handshake per request and records it). No rules
 * live here; the engine is always a fake, because the server must behave the same whatever it says.
 */
import { readFileSync } from "node:fs";
import { Agent, type AgentOptions, type RequestOptions } from "node:https";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import type { TLSSocket } from "node:tls";
import pino from "pino";
import { Registry } from "prom-client";
import supertest from "supertest";
import type { AdmissionRequest, Decision, WebhookName } from "../../src/policies/types.js";
import type { ServerDeps, WebhookApp } from "../../src/server/app.js";

export const FIXTURES = join(import.meta.dirname, "..", "fixtures");

/** The own property at `path` of a parsed body (each step an own property, never one from a prototype). */
export const fieldAt = (value: unknown, path: readonly string[]): PropertyDescriptor | undefined => {
  let at: unknown = value;
  for (const key of path.slice(0, -1)) at = Object.getOwnPropertyDescriptor(at, key)?.value;
  return Object.getOwnPropertyDescriptor(at, path[path.length - 1] as string);
};

export type FixtureName =
  | "mapi-machine-update-instance-type"
  | "capi-machine-create"
  | "capi-machineset-delete"
  | "mapi-machineset-scale-update";

export const FIXTURE_NAMES: readonly FixtureName[] = [
  "mapi-machine-update-instance-type",
  "capi-machine-create",
  "capi-machineset-delete",
  "mapi-machineset-scale-update",
];

export interface Review {
  apiVersion: string;
  kind: string;
  request: AdmissionRequest & Record<string, unknown>;
}

export const fixtureText = (name: FixtureName): string =>
  readFileSync(join(FIXTURES, `${name}.json`), "utf8");
export const fixture = (name: FixtureName): Review => JSON.parse(fixtureText(name)) as Review;

export const allow = (extra: Partial<Decision> = {}): Decision => ({
  allowed: true,
  rule: "none",
  warnings: [],
  ...extra,
});
export const deny = (message: string, extra: Partial<Decision> = {}): Decision => ({
  allowed: false,
  rule: "mapi-frozen",
  status: { code: 403, reason: "Forbidden", message },
  warnings: [],
  ...extra,
});

/** A pino logger whose lines are kept, parsed, for assertions on the decision log. */
export function captureLogger(level: pino.Level = "info"): {
  logger: pino.Logger;
  lines: () => Record<string, unknown>[];
} {
  const raw: string[] = [];
  const logger = pino({ level }, { write: (line: string) => void raw.push(line) });
  return { logger, lines: () => raw.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

export interface FakeDeps extends ServerDeps {
  calls: Array<{ webhook: WebhookName; request: AdmissionRequest }>;
  lines: () => Record<string, unknown>[];
}

export function fakeDeps(
  decide: (webhook: WebhookName, request: AdmissionRequest) => Decision = () => allow(),
  overrides: Partial<ServerDeps> = {},
): FakeDeps {
  const { logger, lines } = captureLogger("debug");
  const calls: FakeDeps["calls"] = [];
  return {
    decide: (webhook, request) => {
      calls.push({ webhook, request });
      return decide(webhook, request);
    },
    logger,
    registry: new Registry(),
    readiness: () => ({ ready: true }),
    calls,
    lines,
    ...overrides,
  };
}

/** What one TLS handshake negotiated, as the client saw it. */
export interface Handshake {
  fingerprint256: string;
  protocol: string | null;
  alpn: string | false | null;
  cipher: string;
}

/**
 * An HTTPS agent that opens a new connection for every request — a full handshake, no session resumed, so a
 * reloaded certificate or a changed TLS profile shows on the next request — trusts only the given CA, and
 * records what each handshake negotiated.
 */
export class HandshakeAgent extends Agent {
  readonly handshakes: Handshake[] = [];

  constructor(ca: string, tls: AgentOptions = {}) {
    super({ ca, keepAlive: false, maxCachedSessions: 0, ...tls });
  }

  override createConnection(
    options: RequestOptions,
    callback?: (err: Error | null, stream: Duplex) => void,
  ): Duplex | null | undefined {
    const socket = super.createConnection(options, callback) as TLSSocket;
    socket.once("secureConnect", () => {
      this.handshakes.push({
        fingerprint256: socket.getPeerCertificate().fingerprint256,
        protocol: socket.getProtocol(),
        alpn: socket.alpnProtocol,
        cipher: socket.getCipher().name,
      });
    });
    return socket;
  }
}

/**
 * supertest against a real TLS listener at `url` (what `startWebhookServer`/`startMetricsServer` return),
 * each request on a new connection of one `HandshakeAgent` trusting only `ca`; `handshake()` is the last
 * one. `post` sends `body` byte for byte with the given content-type ("" sends none).
 */
export function overTls(url: string, ca: string, tls: AgentOptions = {}) {
  const agent = new HandshakeAgent(ca, tls);
  return {
    agent,
    get: (path: string) => supertest(url).get(path).agent(agent),
    head: (path: string) => supertest(url).head(path).agent(agent),
    post: (path: string, body: string, contentType = "application/json") => {
      const test = supertest(url).post(path).agent(agent);
      // A string goes out as it is under a content-type set here; with none, a Buffer (which superagent
      // would otherwise serialize, or label as a form) is the only way to send a body without one.
      return contentType ? test.set("content-type", contentType).send(body) : test.send(Buffer.from(body));
    },
    handshake: (): Handshake | undefined => agent.handshakes.at(-1),
  };
}

/** POSTs review text to `/validate` of `app`, as kube-apiserver sends it. */
export const postValidate = (app: WebhookApp, payload: string) =>
  app.inject({ method: "POST", url: "/validate", headers: { "content-type": "application/json" }, payload });
