/**
 * The event recorder: core/v1 Events with a reason and a message on the objects the product acts on,
 * aggregated like kubectl users expect — a repeat of the same (object uid, type, reason, message) bumps
 * `count` and `lastTimestamp` of the Event already sent instead of creating another. What was sent is
 * remembered in a small LRU; after a restart (or eviction) a repeat starts a new Event. Each Event names the
 * reporting pod (`reportingInstance`). Writes per (object, reason) are rate limited like client-go's
 * EventCorrelator spam filter (SPEC §7): a burst, then one write per refill interval; a repeat held back is
 * still counted, and the next write carries the whole count. The limiter is a pure function of its state and
 * `now` (`takeToken`). Recording never throws: an Event is a courtesy, and a failed one must not fail a
 * reconcile.
 */
import type { Logger } from "pino";
import { childLogger } from "../logging.js";
import type { KubeClient } from "./client.js";
import type { Clock } from "./clock.js";
import { NotFoundError } from "./errors.js";
import { KINDS } from "./kinds.js";
import type { KubeObject } from "./object.js";
import { nameOf, namespaceOf } from "./object.js";

export type EventType = "Normal" | "Warning";

/** A token bucket's settings: `burst` writes at once, then one more per `refillEveryMs`. */
export interface EventRateLimit {
  burst: number;
  refillEveryMs: number;
}

/** client-go's EventSourceObjectSpamFilter defaults: a burst of 25, then one Event every 5 minutes. */
export const DEFAULT_EVENT_RATE_LIMIT: EventRateLimit = Object.freeze({ burst: 25, refillEveryMs: 300_000 });

export interface TokenBucket {
  /** Tokens left (fractional while refilling). */
  tokens: number;
  /** When `tokens` was last computed (ms since the epoch). */
  at: number;
}

/**
 * Refills `bucket` for the time since it was last used and takes one token if a whole one is there. A new key
 * (`undefined`) starts full. A clock that went backwards refills nothing.
 */
export function takeToken(
  bucket: TokenBucket | undefined,
  now: number,
  limit: EventRateLimit,
): { allowed: boolean; bucket: TokenBucket } {
  const start = bucket ?? { tokens: limit.burst, at: now };
  const elapsed = Math.max(0, now - start.at);
  const refilled = Math.min(limit.burst, start.tokens + elapsed / limit.refillEveryMs);
  const at = Math.max(now, start.at);
  if (refilled >= 1) return { allowed: true, bucket: { tokens: refilled - 1, at } };
  return { allowed: false, bucket: { tokens: refilled, at } };
}

export interface EventRecorderOptions {
  client: KubeClient;
  /** `source.component` and `reportingComponent`, e.g. "machine-api-migration". */
  component: string;
  /** `reportingInstance`: the pod that reports (its name); omitted from Events when not given. */
  reportingInstance?: string;
  clock: Clock;
  logger: Logger;
  /** Namespace for events about cluster-scoped objects. */
  defaultNamespace?: string;
  cacheSize?: number;
  /** Writes per (object, reason); client-go's defaults when not given. */
  rateLimit?: EventRateLimit;
}

export interface EventRecorder {
  /** Records (or aggregates) one Event; resolves when the API call settled. */
  record(object: KubeObject, type: EventType, reason: string, message: string): Promise<void>;
}

interface Sent {
  namespace: string;
  name: string;
  /** Occurrences recorded, including repeats the limiter held back (the next write carries them). */
  count: number;
}

/** Kubernetes caps an Event message at 1 KiB; longer ones are refused. */
const MAX_MESSAGE = 1024;

const involvedObjectOf = (o: KubeObject) => ({
  apiVersion: o.apiVersion,
  kind: o.kind,
  name: nameOf(o),
  ...(namespaceOf(o) ? { namespace: namespaceOf(o) } : {}),
  uid: o.metadata?.uid,
  resourceVersion: o.metadata?.resourceVersion,
});

/** A bounded map that forgets the least recently used key. */
function lru<V>(capacity: number) {
  const map = new Map<string, V>();
  return {
    get: (key: string): V | undefined => map.get(key),
    set(key: string, value: V): void {
      map.delete(key);
      map.set(key, value);
      while (map.size > capacity) map.delete(map.keys().next().value!);
    },
  };
}

export function createEventRecorder(options: EventRecorderOptions): EventRecorder {
  const { client, clock, component } = options;
  const capacity = options.cacheSize ?? 512;
  const limit = options.rateLimit ?? DEFAULT_EVENT_RATE_LIMIT;
  const sent = lru<Sent>(capacity);
  // One bucket per (object, reason), kept for more keys than Events: forgetting a bucket refills it.
  const buckets = lru<TokenBucket>(capacity * 4);
  // Records of one Event are serialised, so a tight loop of repeats aggregates instead of racing to create.
  const inFlight = new Map<string, Promise<void>>();
  const logger = childLogger(options.logger, "events");

  const create = async (
    object: KubeObject,
    type: EventType,
    reason: string,
    message: string,
    now: string,
  ): Promise<Sent> => {
    const namespace = namespaceOf(object) || options.defaultNamespace || "default";
    const name = `${nameOf(object)}.${clock.now().toString(16)}${Math.floor(Math.random() * 0xffff).toString(16)}`;
    await client.create(KINDS.event, {
      metadata: { name, namespace },
      involvedObject: involvedObjectOf(object),
      reason,
      message,
      type,
      source: { component },
      reportingComponent: component,
      ...(options.reportingInstance ? { reportingInstance: options.reportingInstance } : {}),
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    });
    return { namespace, name, count: 1 };
  };

  const recordOne = async (
    key: string,
    object: KubeObject,
    type: EventType,
    reason: string,
    message: string,
  ): Promise<void> => {
    const at = clock.now();
    const now = new Date(at).toISOString().replace(/\.\d+Z$/, "Z");
    const bucketKey = [object.metadata?.uid ?? `${namespaceOf(object)}/${nameOf(object)}`, reason].join(
      "\u0000",
    );
    const previous = sent.get(key);
    const token = takeToken(buckets.get(bucketKey), at, limit);
    buckets.set(bucketKey, token.bucket);
    if (!token.allowed) {
      // Held back: a repeat is counted now and written with the next write; a new message is dropped.
      if (previous) sent.set(key, { ...previous, count: previous.count + 1 });
      logger.debug({ reason }, "event rate limited");
      return;
    }
    try {
      if (previous) {
        const count = previous.count + 1;
        try {
          await client.patch(KINDS.event, previous.namespace, previous.name, {
            type: "merge",
            body: { count, lastTimestamp: now },
          });
          sent.set(key, { ...previous, count });
          return;
        } catch (e) {
          // The Event expired (TTL) or was deleted: start a new one.
          if (!(e instanceof NotFoundError)) throw e;
        }
      }
      sent.set(key, await create(object, type, reason, message, now));
    } catch (e) {
      logger.warn({ reason, err: e instanceof Error ? e.message : String(e) }, "could not record event");
    }
  };

  return {
    record(object, type, reason, rawMessage) {
      const message =
        rawMessage.length > MAX_MESSAGE ? `${rawMessage.slice(0, MAX_MESSAGE - 3)}...` : rawMessage;
      const key = [
        object.metadata?.uid ?? `${namespaceOf(object)}/${nameOf(object)}`,
        type,
        reason,
        message,
      ].join("\u0000");
      const next = (inFlight.get(key) ?? Promise.resolve()).then(() =>
        recordOne(key, object, type, reason, message),
      );
      inFlight.set(key, next);
      void next.then(() => {
        if (inFlight.get(key) === next) inFlight.delete(key);
      });
      return next;
    },
  };
}
