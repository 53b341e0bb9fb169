/**
 * Test instrumentation: request counters (by verb, resource and user) and seeded fault injection — a
 * fraction of matching requests answered 409/429/500 or carried out with their reply lost, added latency,
 * and watch streams cut after a random interval. The PRNG is seeded so a failing run can be replayed; settings change at runtime.
 * The answers an injected fault gives (`injected`, `loseReply`) are here too; http.ts decides when.
 */
import type { ServerResponse } from "node:http";
import { ApiError, internalError } from "./status.js";

export interface FaultMatch {
  verbs?: readonly string[];
  /** `group/resource[/subresource]`, e.g. `machine.openshift.io/machines` or `/configmaps`. */
  resources?: readonly string[];
  /** Resources (as `resources` spells them) this match never takes, whatever else it says. */
  exceptResources?: readonly string[];
  users?: readonly string[];
}

export interface FaultOptions {
  rate409?: number;
  rate429?: number;
  rate500?: number;
  /**
   * Requests carried out whose reply is lost: the connection is cut after the server applied them, so the
   * client sees an error for a write that happened (SPEC §3.5: a lost reply can commit; §10).
   */
  rateLostReply?: number;
  latencyMs?: number;
  /** Mean interval after which a watch stream is cut (uniform in [0.5, 1.5] × this). */
  dropWatchesEveryMs?: number;
  seed?: number;
  match?: FaultMatch;
}

export interface RequestInfo {
  verb: string;
  resource: string;
  user: string;
}

export type FaultDecision =
  | { kind: "none" }
  | { kind: "error"; code: 409 | 429 | 500 }
  | { kind: "lostReply" };

/** mulberry32: small, fast, good enough for test fault schedules. */
export const seededRandom = (seed: number): (() => number) => {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

const matchesFault = (m: FaultMatch | undefined, r: RequestInfo): boolean =>
  !m ||
  ((!m.verbs || m.verbs.includes(r.verb)) &&
    (!m.resources || m.resources.includes(r.resource)) &&
    !m.exceptResources?.includes(r.resource) &&
    (!m.users || m.users.includes(r.user)));

/** One layer's answer to a request, decided by one draw of its own PRNG over its rates. */
const drawFault = (o: FaultOptions, random: () => number): FaultDecision => {
  const x = random();
  const r409 = o.rate409 ?? 0;
  const r429 = o.rate429 ?? 0;
  const r500 = o.rate500 ?? 0;
  if (x < r409) return { kind: "error", code: 409 };
  if (x < r409 + r429) return { kind: "error", code: 429 };
  if (x < r409 + r429 + r500) return { kind: "error", code: 500 };
  if (x < r409 + r429 + r500 + (o.rateLostReply ?? 0)) return { kind: "lostReply" };
  return { kind: "none" };
};

interface Layer {
  options: FaultOptions;
  random: () => number;
}

/**
 * The faults in force: one set of options, or several layers, each with its own match, rates and seed (a
 * campaign's standing 429s beside a command's error faults). A request meets the layers in order: the first
 * that matches it and draws a fault answers; latency adds up over the layers that match; a watch is cut by the
 * first matching layer that cuts watches. A layer's draws are its own, so adding one moves no other's schedule.
 */
export class FaultInjector {
  private layers: Layer[] = [];

  constructor(initial?: FaultOptions | readonly FaultOptions[]) {
    if (initial) this.set(initial);
  }

  set(options: FaultOptions | readonly FaultOptions[]): void {
    const all: readonly FaultOptions[] = Array.isArray(options) ? options : [options as FaultOptions];
    this.layers = all.map((o) => ({ options: { ...o }, random: seededRandom(o.seed ?? 1) }));
  }
  clear(): void {
    this.layers = [];
  }
  /** The layers in force, in order (none when cleared). */
  current(): readonly Readonly<FaultOptions>[] {
    return this.layers.map((l) => l.options);
  }

  /** Whether to fail this request. */
  decide(r: RequestInfo): FaultDecision {
    for (const layer of this.layers) {
      if (!matchesFault(layer.options.match, r)) continue;
      const decision = drawFault(layer.options, layer.random);
      if (decision.kind !== "none") return decision;
    }
    return { kind: "none" };
  }

  latencyFor(r: RequestInfo): number {
    let ms = 0;
    for (const { options } of this.layers) if (matchesFault(options.match, r)) ms += options.latencyMs ?? 0;
    return ms;
  }

  /** Milliseconds until this watch is cut, or undefined to leave it alone. */
  watchDropAfter(r: RequestInfo): number | undefined {
    for (const { options, random } of this.layers) {
      const every = options.dropWatchesEveryMs;
      if (every && matchesFault(options.match, r)) return Math.round(every * (0.5 + random()));
    }
    return undefined;
  }
}

export interface CounterSnapshot {
  total: number;
  byVerb: Record<string, number>;
  byResource: Record<string, number>;
  byUser: Record<string, number>;
  /** `verb resource user` → count, for precise assertions. */
  byKey: Record<string, number>;
  /** `verb resource user code` → count of the requests of `byKey` answered with an error status. */
  failures: Record<string, number>;
}

/** A count per key, kept in `m`. */
const bump = (m: Map<string, number>, k: string, by = 1): void => {
  m.set(k, (m.get(k) ?? 0) + by);
};

export class RequestCounters {
  private total = 0;
  /**
   * verb → resource → user → count: every request counted with three lookups and no string built (it runs on
   * every request the local server answers); the snapshot derives each view from it.
   */
  private readonly counts = new Map<string, Map<string, Map<string, number>>>();
  private readonly failures = new Map<string, number>();

  /** Counts a request that was answered with an error status (409 conflicts, admission refusals, …). */
  failed(r: RequestInfo, code: number): void {
    bump(this.failures, `${r.verb} ${r.resource} ${r.user} ${code}`);
  }

  record(r: RequestInfo): void {
    this.total++;
    let byResource = this.counts.get(r.verb);
    if (!byResource) {
      byResource = new Map();
      this.counts.set(r.verb, byResource);
    }
    let byUser = byResource.get(r.resource);
    if (!byUser) {
      byUser = new Map();
      byResource.set(r.resource, byUser);
    }
    bump(byUser, r.user);
  }

  snapshot(): CounterSnapshot {
    const byVerb = new Map<string, number>();
    const byResource = new Map<string, number>();
    const byUser = new Map<string, number>();
    const byKey = new Map<string, number>();
    for (const [verb, resources] of this.counts)
      for (const [resource, users] of resources)
        for (const [user, n] of users) {
          bump(byVerb, verb, n);
          bump(byResource, resource, n);
          bump(byUser, user, n);
          byKey.set(`${verb} ${resource} ${user}`, n);
        }
    return {
      total: this.total,
      byVerb: Object.fromEntries(byVerb),
      byResource: Object.fromEntries(byResource),
      byUser: Object.fromEntries(byUser),
      byKey: Object.fromEntries(byKey),
      failures: Object.fromEntries(this.failures),
    };
  }

  reset(): void {
    this.total = 0;
    this.counts.clear();
    this.failures.clear();
  }
}

/**
 * An injected lost reply: the request is carried out as usual, but nothing of the answer is written — the
 * connection is cut when the handler ends it, as when a reply is lost on the way back.
 */
export const loseReply = (res: ServerResponse): void => {
  const cut = (): ServerResponse => {
    res.socket?.destroy();
    return res;
  };
  Object.assign(res, { writeHead: () => res, write: () => true, end: cut, flushHeaders: () => undefined });
};

/** The error an injected fault answers with (also used by the tests' fault proxy in front of a real server). */
export const injected = (code: 409 | 429 | 500): ApiError => {
  if (code === 409)
    return new ApiError(
      409,
      "Conflict",
      "Operation cannot be fulfilled: injected conflict (fault injection)",
    );
  if (code === 429)
    return new ApiError(
      429,
      "TooManyRequests",
      "the server has received too many requests and has asked us to try again later",
      { retryAfterSeconds: 1 },
      { "Retry-After": "1" },
    );
  return internalError("injected failure (fault injection)");
};
