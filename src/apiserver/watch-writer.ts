/**
 * The write side of one watch stream: the events queued for a stream within one turn of the event loop go
 * to the socket as one write — one TLS record and one syscall instead of one per event, which is what a
 * burst of updates fanned out to many watchers costs otherwise. Order is kept; `end()` sends what is queued
 * before ending; a watcher that stopped reading is cut, as kube-apiserver does, rather than buffered without
 * bound. What goes into the stream (events, bookmarks, timeouts) lives in watch.ts.
 */

/** The part of a ServerResponse a watch writes through. */
export interface WatchResponse {
  readonly writableLength: number;
  readonly writableEnded: boolean;
  readonly destroyed: boolean;
  write(text: string): unknown;
  end(): unknown;
}

export interface WatchWriter {
  /** Queues one serialized event (or bookmark) for this turn's write. */
  write(text: string): void;
  /** Sends what is queued, then ends the stream. */
  end(): void;
  /** Drops what is queued (the stream closed). */
  discard(): void;
}

export interface WatchWriterOptions {
  /** Bytes buffered (in the response and queued here) above which the watcher is cut. */
  maxBacklog: number;
  /** Called once when the watcher is cut for not reading. */
  onStalled?: () => void;
  /** Runs the flush after the current turn; setImmediate unless a test pins it. */
  defer?: (flush: () => void) => { cancel: () => void };
}

const nextTurn = (flush: () => void): { cancel: () => void } => {
  const handle = setImmediate(flush);
  return { cancel: () => clearImmediate(handle) };
};

export function createWatchWriter(res: WatchResponse, opts: WatchWriterOptions): WatchWriter {
  const defer = opts.defer ?? nextTurn;
  let queued: string[] = [];
  let queuedLength = 0;
  let scheduled: { cancel: () => void } | undefined;
  const closed = (): boolean => res.writableEnded || res.destroyed;

  const flush = (): void => {
    scheduled = undefined;
    if (queued.length === 0) return;
    const text = queued.length === 1 ? queued[0]! : queued.join("");
    queued = [];
    queuedLength = 0;
    if (!closed()) res.write(text);
  };

  const end = (): void => {
    scheduled?.cancel();
    flush();
    if (!closed()) res.end();
  };

  return {
    write(text) {
      if (closed()) return;
      if (res.writableLength + queuedLength > opts.maxBacklog) {
        opts.onStalled?.();
        end();
        return;
      }
      queued.push(text);
      queuedLength += text.length;
      scheduled ??= defer(flush);
    },
    end,
    discard() {
      scheduled?.cancel();
      scheduled = undefined;
      queued = [];
      queuedLength = 0;
    },
  };
}
