/**
 * The event recorder: core/v1 Events with a reason and a message on the objects the product acts on,
 * aggregated like kubectl users expect — a repeat of the same (object uid, type, reason, message) bumps
 * `count` and `lastTimestamp` of the Event already sent instead of creating another. What was sent is
 * remembered in a small LRU; after a restart (or eviction) a repeat starts a new Event. Recording never
 * throws: an Event is a courtesy, and a failed one must not fail a reconcile.
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

export interface EventRecorderOptions {
  client: KubeClient;
  /** `source.component` and `reportingComponent`, e.g. "machine-api-migration". */
  component: string;
  clock: Clock;
  logger: Logger;
  /** Namespace for events about cluster-scoped objects. */
  defaultNamespace?: string;
  cacheSize?: number;
}

export interface EventRecorder {
  /** Records (or aggregates) one Event; resolves when the API call settled. */
  record(object: KubeObject, type: EventType, reason: string, message: string): Promise<void>;
}

interface Sent {
  namespace: string;
  name: string;
  count: number;
}

/** Kubernetes caps an Event message at 1 KiB; longer ones are refused. */
const MAX_MESSAGE = 1024;

export const involvedObjectOf = (o: KubeObject) => ({
  apiVersion: o.apiVersion,
  kind: o.kind,
  name: nameOf(o),
  ...(namespaceOf(o) ? { namespace: namespaceOf(o) } : {}),
  uid: o.metadata?.uid,
  resourceVersion: o.metadata?.resourceVersion,
});

export function createEventRecorder(options: EventRecorderOptions): EventRecorder {
  const { client, clock, component } = options;
  const capacity = options.cacheSize ?? 512;
  const sent = new Map<string, Sent>();
  const logger = childLogger(options.logger, "events");

  const remember = (key: string, value: Sent): void => {
    sent.delete(key);
    sent.set(key, value);
    while (sent.size > capacity) sent.delete(sent.keys().next().value!);
  };

  const create = async (
    object: KubeObject,
    type: EventType,
    reason: string,
    message: string,
    now: string,
  ) => {
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
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    });
    return { namespace, name, count: 1 };
  };

  return {
    async record(object, type, reason, rawMessage) {
      const message =
        rawMessage.length > MAX_MESSAGE ? `${rawMessage.slice(0, MAX_MESSAGE - 3)}...` : rawMessage;
      const key = [
        object.metadata?.uid ?? `${namespaceOf(object)}/${nameOf(object)}`,
        type,
        reason,
        message,
      ].join("\u0000");
      const now = new Date(clock.now()).toISOString().replace(/\.\d+Z$/, "Z");
      try {
        const previous = sent.get(key);
        if (previous) {
          const count = previous.count + 1;
          try {
            await client.patch(KINDS.event, previous.namespace, previous.name, {
              type: "merge",
              body: { count, lastTimestamp: now },
            });
            remember(key, { ...previous, count });
            return;
          } catch (e) {
            // The Event expired (TTL) or was deleted: start a new one.
            if (!(e instanceof NotFoundError)) throw e;
          }
        }
        remember(key, await create(object, type, reason, message, now));
      } catch (e) {
        logger.warn({ reason, err: e instanceof Error ? e.message : String(e) }, "could not record event");
      }
    },
  };
}
