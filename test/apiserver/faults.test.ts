/**
 * Test instrumentation (SPEC §8): request counters by verb, resource and user; seeded fault injection of
 * 409/429/500 answers, latency and watch drops, targeted by a matcher and changeable at runtime; plus the
 * selector parser the list and watch paths rely on.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FaultInjector, seededRandom } from "../../src/apiserver/faults.js";
import type { ApiServer } from "../../src/apiserver/index.js";
import { parseFieldSelector, parseLabelSelector } from "../../src/apiserver/selectors.js";
import type { KubeObject } from "../../src/kube/object.js";
import { allowAll, call, configMap, grant, namespace, start, USER_TOKEN, watch } from "./helpers.js";

describe("selectors", () => {
  const o = (labels: Record<string, string>): KubeObject => ({
    metadata: { name: "n", namespace: "x", labels },
  });
  it.each([
    ["a=b", { a: "b" }, true],
    ["a==b", { a: "c" }, false],
    ["a!=b", {}, true],
    ["a in (b, c)", { a: "c" }, true],
    ["a notin (b)", {}, true],
    ["a", { a: "" }, true],
    ["!a", { a: "x" }, false],
    ["a=b,c", { a: "b" }, false],
  ])("label selector %s on %j → %s", (sel, labels, want) => {
    const p = parseLabelSelector(sel);
    expect(typeof p).toBe("function");
    expect((p as (x: KubeObject) => boolean)(o(labels))).toBe(want);
  });
  it("field selectors support metadata.name/namespace everywhere and involvedObject.* on events only", () => {
    const p = parseFieldSelector("metadata.name=n,metadata.namespace!=y", "", "ConfigMap") as (
      x: KubeObject,
    ) => boolean;
    expect(p(o({}))).toBe(true);
    expect(typeof parseFieldSelector("involvedObject.name=n", "", "ConfigMap")).toBe("string");
    const e = parseFieldSelector("involvedObject.kind=Machine,involvedObject.name=m1", "", "Event") as (
      x: KubeObject,
    ) => boolean;
    expect(e({ involvedObject: { kind: "Machine", name: "m1" } })).toBe(true);
  });
});

describe("fault injection", () => {
  it("is reproducible for a seed and honours the matcher", () => {
    const draws = (seed: number): string[] => {
      const f = new FaultInjector({
        rate409: 0.2,
        rate429: 0.2,
        rate500: 0.2,
        seed,
        match: { verbs: ["create"] },
      });
      return Array.from({ length: 20 }, () =>
        f.decide({ verb: "create", resource: "/configmaps", user: "u" }),
      ).map((d) => (d.kind === "error" ? String(d.code) : "-"));
    };
    expect(draws(7)).toEqual(draws(7));
    expect(new Set(draws(7))).toEqual(new Set(["409", "429", "500", "-"]));
    const lost = new FaultInjector({ rateLostReply: 1, match: { verbs: ["create"] } });
    expect(lost.decide({ verb: "create", resource: "/configmaps", user: "u" }).kind).toBe("lostReply");
    expect(lost.decide({ verb: "get", resource: "/configmaps", user: "u" }).kind).toBe("none");
    const f = new FaultInjector({ rate500: 1, match: { users: ["bot"] } });
    expect(f.decide({ verb: "get", resource: "/x", user: "human" }).kind).toBe("none");
    expect(f.decide({ verb: "get", resource: "/x", user: "bot" }).kind).toBe("error");
    expect(seededRandom(1)()).toBe(seededRandom(1)());
  });

  it("holds layers, each with its own match, rates and seed: a request meets every layer that matches it", () => {
    const write = { verb: "patch", resource: "machine.openshift.io/machines", user: "product" };
    const read = { verb: "get", resource: "machine.openshift.io/machines", user: "product" };
    const lease = { verb: "update", resource: "coordination.k8s.io/leases", user: "product" };
    const f = new FaultInjector([
      { rate500: 1, match: { verbs: ["patch"] } },
      { rate429: 1, match: { users: ["product"], exceptResources: ["coordination.k8s.io/leases"] } },
    ]);
    // The first layer that matches and draws a fault answers; the next is met when the first draws none.
    expect(f.decide(write)).toEqual({ kind: "error", code: 500 });
    expect(f.decide(read)).toEqual({ kind: "error", code: 429 });
    expect(f.decide(lease)).toEqual({ kind: "none" });
    const some = new FaultInjector([
      { rate500: 0.5, seed: 3, match: { verbs: ["patch"] } },
      { rate429: 1, match: { users: ["product"] } },
    ]);
    const codes = Array.from({ length: 40 }, () => some.decide(write)).map((d) =>
      d.kind === "error" ? d.code : 0,
    );
    expect(new Set(codes)).toEqual(new Set([500, 429]));
    // A layer's draws are its own: the second layer does not move the first one's schedule.
    const alone = new FaultInjector({ rate500: 0.5, seed: 3, match: { verbs: ["patch"] } });
    const first = Array.from({ length: 40 }, () => alone.decide(write)).map((d) =>
      d.kind === "error" ? 500 : 0,
    );
    expect(codes.map((c) => (c === 500 ? 500 : 0))).toEqual(first);
    // Latency adds up over the layers that match; a watch is cut by the first layer that cuts watches.
    const slow = new FaultInjector([{ latencyMs: 5 }, { latencyMs: 7, match: { verbs: ["get"] } }]);
    expect(slow.latencyFor(read)).toBe(12);
    expect(slow.latencyFor(write)).toBe(5);
    const drops = new FaultInjector([{ rate429: 1 }, { dropWatchesEveryMs: 100 }]);
    expect(drops.watchDropAfter({ verb: "watch", resource: "/x", user: "u" })).toBeGreaterThanOrEqual(50);
    expect(
      new FaultInjector({ rate429: 1 }).watchDropAfter({ verb: "watch", resource: "/x", user: "u" }),
    ).toBe(undefined);
  });

  describe("over HTTP", () => {
    let s: ApiServer;
    beforeAll(async () => {
      s = await start({ admission: allowAll });
      await call(s, "POST", "/api/v1/namespaces", namespace("f"));
      await grant(s, "alice", "f", [
        { apiGroups: [""], resources: ["configmaps"], verbs: ["create", "list"] },
      ]);
    });
    afterAll(() => s.stop());

    it("answers 429 with Retry-After, 409 and 500 for matching requests only, and clears", async () => {
      s.faults.set({ rate429: 1, match: { users: ["alice"], verbs: ["create"] } });
      const limited = await call(s, "POST", "/api/v1/namespaces/f/configmaps", configMap("x", "f"), {
        token: USER_TOKEN,
      });
      expect(limited.status).toBe(429);
      expect(limited.headers["retry-after"]).toBe("1");
      expect(limited.body).toMatchObject({ reason: "TooManyRequests", details: { retryAfterSeconds: 1 } });
      expect((await call(s, "POST", "/api/v1/namespaces/f/configmaps", configMap("y", "f"))).status).toBe(
        201,
      );
      s.faults.set({ rate409: 1, match: { resources: ["/configmaps"] } });
      expect((await call(s, "GET", "/api/v1/namespaces/f/configmaps/y")).body.reason).toBe("Conflict");
      s.faults.set({ rate500: 1 });
      expect((await call(s, "GET", "/api/v1/namespaces/f")).status).toBe(500);
      s.faults.clear();
      expect((await call(s, "GET", "/api/v1/namespaces/f")).status).toBe(200);
    });

    it("a lost reply (SPEC §10): the write is carried out, and the connection is cut before any answer", async () => {
      s.faults.set({ rateLostReply: 1, match: { verbs: ["create"] } });
      const answered = await call(s, "POST", "/api/v1/namespaces/f/configmaps", configMap("lost", "f")).then(
        (r) => r.status,
        (e: unknown) => (e instanceof Error ? e.message : String(e)),
      );
      s.faults.clear();
      expect(answered).toMatch(/socket hang up|ECONNRESET/);
      expect((await call(s, "GET", "/api/v1/namespaces/f/configmaps/lost")).status).toBe(200);
    });

    it("cuts watch streams after a random interval", async () => {
      s.faults.set({ dropWatchesEveryMs: 50, seed: 3 });
      const w = await watch(s, "/api/v1/namespaces/f/configmaps?watch=true");
      await w.ended;
      s.faults.clear();
      expect(w.status).toBe(200);
    });

    it("counts requests by verb, resource and user; reset clears", async () => {
      s.counters.reset();
      await call(s, "GET", "/api/v1/namespaces/f/configmaps", undefined, { token: USER_TOKEN });
      await call(s, "POST", "/api/v1/namespaces/f/configmaps", configMap("z", "f"));
      await call(
        s,
        "PATCH",
        "/api/v1/namespaces/f/configmaps/z/status",
        {},
        { contentType: "application/merge-patch+json" },
      );
      const snap = s.counters.snapshot();
      expect(snap.byKey).toEqual({
        "list /configmaps alice": 1,
        "create /configmaps kube:admin": 1,
        "patch /configmaps/status kube:admin": 1,
      });
      expect(snap.byVerb).toEqual({ list: 1, create: 1, patch: 1 });
      expect(snap.byUser).toEqual({ alice: 1, "kube:admin": 2 });
      // configmaps have no status subresource: that patch was answered 404, and is counted as refused.
      expect(snap.failures).toEqual({ "patch /configmaps/status kube:admin 404": 1 });
      s.counters.reset();
      expect(s.counters.snapshot().total).toBe(0);
      expect(s.counters.snapshot().failures).toEqual({});
    });
  });
});
