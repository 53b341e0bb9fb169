/**
 * Shared test helpers for the admission server: fake dependencies (a scripted `decide`, a log capture, a
 * fresh metrics registry), fixture loading and AdmissionReview builders. No rules live here; the engine is
 * always a fake, because the server must behave the same whatever the engine says.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { Registry } from "prom-client";
import type { AdmissionRequest, Decision, WebhookName } from "../../src/policies/types.js";
import type { ServerDeps } from "../../src/server/app.js";

export const FIXTURES = join(import.meta.dirname, "..", "fixtures");

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
  const { logger, lines } = captureLogger();
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
