/**
 * Where the product's log lines go. pino's default stdout stream hands every line to the libuv thread pool
 * as its own asynchronous write; at one line per admission decision and per controller write that dispatch
 * cost more CPU than building the lines (issue 10's profiles). Lines are instead gathered up to
 * LOG_BUFFER_BYTES and written at least every LOG_FLUSH_MS, and synchronously at exit (pino registers the
 * flush), so a line reaches `kubectl logs` at most LOG_FLUSH_MS late — klog, for comparison, flushes every 5 s.
 */
import pino from "pino";

export const LOG_BUFFER_BYTES = 4096;
export const LOG_FLUSH_MS = 100;

/** The buffered destination for `dest` (a file descriptor or path; stdout by default). */
export function logDestination(dest: number | string = 1) {
  return pino.destination({ dest, minLength: LOG_BUFFER_BYTES, periodicFlush: LOG_FLUSH_MS });
}
