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
    (!m.users || m.users.includes(r.user)));

export class FaultInjector {
  private options: FaultOptions = {};
  private random: () => number = seededRandom(1);

  constructor(initial?: FaultOptions) {
    if (initial) this.set(initial);
  }

  set(options: FaultOptions): void {
    this.options = { ...options };
    this.random = seededRandom(options.seed ?? 1);
  }
  clear(): void {
    this.options = {};
  }
  current(): Readonly<FaultOptions> {
    return this.options;
  }

  /** Whether to fail this request, decided by one draw per configured rate. */
  decide(r: RequestInfo): FaultDecision {
    const o = this.options;
    if (!matchesFault(o.match, r)) return { kind: "none" };
    const x = this.random();
    const r409 = o.rate409 ?? 0;
    const r429 = o.rate429 ?? 0;
    const r500 = o.rate500 ?? 0;
    if (x < r409) return { kind: "error", code: 409 };
    if (x < r409 + r429) return { kind: "error", code: 429 };
    if (x < r409 + r429 + r500) return { kind: "error", code: 500 };
    if (x < r409 + r429 + r500 + (o.rateLostReply ?? 0)) return { kind: "lostReply" };
    return { kind: "none" };
  }

  latencyFor(r: RequestInfo): number {
    return matchesFault(this.options.match, r) ? (this.options.latencyMs ?? 0) : 0;
  }

  /** Milliseconds until this watch is cut, or undefined to leave it alone. */
  watchDropAfter(r: RequestInfo): number | undefined {
    const every = this.options.dropWatchesEveryMs;
    if (!every || !matchesFault(this.options.match, r)) return undefined;
    return Math.round(every * (0.5 + this.random()));
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

export class RequestCounters {
  private total = 0;
  private readonly byVerb = new Map<string, number>();
  private readonly byResource = new Map<string, number>();
  private readonly byUser = new Map<string, number>();
  private readonly byKey = new Map<string, number>();
  private readonly failures = new Map<string, number>();

  /** Counts a request that was answered with an error status (409 conflicts, admission refusals, …). */
  failed(r: RequestInfo, code: number): void {
    const k = `${r.verb} ${r.resource} ${r.user} ${code}`;
    this.failures.set(k, (this.failures.get(k) ?? 0) + 1);
  }

  record(r: RequestInfo): void {
    this.total++;
    const bump = (m: Map<string, number>, k: string): void => {
      m.set(k, (m.get(k) ?? 0) + 1);
    };
    bump(this.byVerb, r.verb);
    bump(this.byResource, r.resource);
    bump(this.byUser, r.user);
    bump(this.byKey, `${r.verb} ${r.resource} ${r.user}`);
  }

  snapshot(): CounterSnapshot {
    return {
      total: this.total,
      byVerb: Object.fromEntries(this.byVerb),
      byResource: Object.fromEntries(this.byResource),
      byUser: Object.fromEntries(this.byUser),
      byKey: Object.fromEntries(this.byKey),
      failures: Object.fromEntries(this.failures),
    };
  }

  reset(): void {
    this.total = 0;
    this.byVerb.clear();
    this.byResource.clear();
    this.byUser.clear();
    this.byKey.clear();
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
