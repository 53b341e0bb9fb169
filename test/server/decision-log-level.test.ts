/**
 * SPEC §7 Logs: the admission decision line is at debug level for allowed requests and at info for denials —
 * at the default level an admin's log shows the refusals, not a line for every controller-free write.
 */
import type pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { Decision, WebhookName } from "../../src/policies/types.js";
import { buildServer, type WebhookApp } from "../../src/server/app.js";
import { allow, captureLogger, deny, fakeDeps, fixture } from "./helpers.js";

const DEBUG = 20;
const INFO = 30;

const apps: WebhookApp[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

async function decisionLines(
  webhook: WebhookName,
  decision: Decision,
  level: pino.Level,
): Promise<Record<string, unknown>[]> {
  const { logger, lines } = captureLogger(level);
  const app = buildServer(fakeDeps(() => decision, { logger }));
  apps.push(app);
  const res = await app.inject({
    method: "POST",
    url: `/${webhook}`,
    payload: JSON.stringify(fixture("capi-machine-create")),
    headers: { "content-type": "application/json" },
  });
  expect(res.statusCode).toBe(200);
  expect(res.json().response.allowed).toBe(decision.allowed);
  return lines().filter((l) => l.msg === "admission decision");
}

describe("the admission decision's log level (SPEC §7)", () => {
  it.each<[string, WebhookName, Decision, number]>([
    ["an allowed request is logged at debug", "validate", allow(), DEBUG],
    [
      "an allowed request with warnings is logged at debug",
      "validate-guard",
      allow({ warnings: ["heads up"] }),
      DEBUG,
    ],
    ["a denial is logged at info", "validate", deny("frozen", { rule: "mapi-frozen" }), INFO],
    [
      "a denial on the guard webhook is logged at info",
      "validate-guard",
      deny("confirm", { rule: "cluster-delete-guard" }),
      INFO,
    ],
  ])("%s", async (_name, webhook, decision, level) => {
    const lines = await decisionLines(webhook, decision, "debug");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level, allowed: decision.allowed, rule: decision.rule, webhook });
  });

  it("at the default level (info) an allowed request writes no decision line, a denial writes one", async () => {
    expect(await decisionLines("validate", allow(), "info")).toEqual([]);
    const denied = await decisionLines("validate", deny("frozen", { rule: "mapi-frozen" }), "info");
    expect(denied.map((l) => [l.level, l.allowed, l.rule])).toEqual([[INFO, false, "mapi-frozen"]]);
  });
});
