/**
 * Where the product's log lines go. pino's default stdout stream hands every line to the libuv thread pool
 * as its own asynchronous write; at one line per admission decision and per controller write that dispatch
 * cost more CPU than building the lines (issue 10's profiles). Lines are instead gathered up to
 * LOG_BUFFER_BYTES and written at least every LOG_FLUSH_MS, and at exit, so a line reaches `kubectl logs` at
 * most LOG_FLUSH_MS late — klog, for comparison, flushes every 5 s. A batch is joined once and written with
 * one synchronous write, as Node writes stdout to a pipe on Linux: sonic-boom's own `minLength` buffer
 * measured and appended to one growing string on every line, and handing each batch to the thread pool cost
 * the event loop more than the write itself (issue 25: with `isoTimeBySecond` below, a denial's line went
 * from 20 to 9 µs under load; decision 75).
 *
 * And what they look like (SPEC §7): one JSON object per line with no key repeated, the level as a word, an
 * RFC 3339 time and `logger` naming the component. The name is not a child binding (pino appends a child's
 * bindings to its parent's, so a second `logger` would be a second key) but a property of the logger object
 * that a mixin writes once per line: `childLogger` names a component after its parent (`controllers` →
 * `controllers.machine-sync`), and plain `child({...})` loggers keep their parent's name. On a terminal (a
 * person running `npm start`) the same lines are printed as `HH:MM:SS.mmm LEVEL logger: msg key=value…`.
 */
import pino, { type Bindings, type ChildLoggerOptions, type DestinationStream, type Logger } from "pino";

export const LOG_BUFFER_BYTES = 4096;
const LOG_FLUSH_MS = 100;

/** A pino destination that batches lines; `flushSync` and `end` write what is gathered first. */
export interface BufferedDestination extends DestinationStream {
  write(line: string): boolean;
  /** Hands the gathered lines to the file now; `done` once they are written (pino's `logger.flush`). */
  flush(done?: (err?: Error) => void): void;
  /** Writes everything gathered, and waits for it: at exit, and for tests. */
  flushSync(): void;
  /** Writes what is gathered and closes the file; later lines are dropped. */
  end(): void;
}

/** The buffered destination for `dest` (a file descriptor or path; stdout by default). */
export function logDestination(dest: number | string = 1): BufferedDestination {
  // sonic-boom, synchronous and without minLength, writes each batch it is given at once (retrying a full
  // non-blocking pipe); a broken pipe stops logging rather than throwing (pino's handling).
  const file = pino.destination({ dest, sync: true });
  let lines: string[] = [];
  let chars = 0;
  let timer: NodeJS.Timeout | undefined;
  let ended = false;
  const handOver = (): void => {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (lines.length === 0) return;
    const batch = lines.length === 1 ? (lines[0] as string) : lines.join("");
    lines = [];
    chars = 0;
    file.write(batch);
  };
  const flushSync = (): void => {
    handOver();
    try {
      file.flushSync();
    } catch {
      // A file already closed: there is nowhere to write to, as with pino's own exit flush.
    }
  };
  // The process may exit before the next periodic flush: what is gathered is written on the way out.
  process.once("exit", flushSync);
  return {
    write(line: string): boolean {
      if (ended) return false;
      lines.push(line);
      chars += line.length;
      if (chars >= LOG_BUFFER_BYTES) handOver();
      else if (timer === undefined) timer = setTimeout(handOver, LOG_FLUSH_MS).unref();
      return true;
    },
    flush(done?: (err?: Error) => void): void {
      handOver();
      if (done) file.flush(done);
    },
    flushSync,
    end(): void {
      if (ended) return;
      handOver();
      ended = true;
      process.removeListener("exit", flushSync);
      file.end();
    },
  };
}

/** The name of the process's root logger: the lines of the composition root itself. */
const ROOT_LOGGER = "machine-api-migration";

/** The logger's name (what its lines carry as `logger`) and the prefix its named children extend ("" at the root). */
const NAME = Symbol("logger name");
const PREFIX = Symbol("logger name prefix");
type Named = Logger & { [NAME]?: string; [PREFIX]?: string };

/** Where the process's log lines go: a terminal (a person running `npm start`) or not; `stream` for tests. */
export interface LogOutput {
  tty: boolean;
  /** Default: standard output (buffered when not a terminal). */
  stream?: DestinationStream;
}

/**
 * The process's root logger. JSON lines go to the buffered destination; on a terminal, lines are formatted
 * for a person and written to standard output synchronously (a person reads them, so there is nothing to save).
 */
export function createLogger(level: pino.LevelWithSilent, output: LogOutput): Logger {
  const stream = output.tty
    ? humanReadable(output.stream ?? pino.destination({ dest: 1, sync: true }))
    : (output.stream ?? logDestination());
  const log: Named = pino(
    {
      level,
      base: null,
      timestamp: isoTimeBySecond(),
      formatters: { level: (label) => ({ level: label }) },
      mixin: (_object, _level, logger) => ({ logger: (logger as Named)[NAME] ?? ROOT_LOGGER }),
    },
    stream,
  );
  log[NAME] = ROOT_LOGGER;
  log[PREFIX] = "";
  return log;
}

/**
 * pino's `isoTime` (`,"time":"<RFC 3339 with milliseconds>"`) without formatting a Date for every line: the
 * part up to the second is formatted once a second and the milliseconds are appended (formatting cost ~2 µs
 * a line under load in issue 25's profile).
 */
export function isoTimeBySecond(clock: () => number = () => Date.now()): () => string {
  let second = Number.NaN;
  let head = "";
  return () => {
    const ms = clock();
    const s = Math.floor(ms / 1000);
    if (s !== second) {
      second = s;
      // `….000Z` without its last four characters: the same for every year format toISOString writes.
      head = `,"time":"${new Date(s * 1000).toISOString().slice(0, -4)}`;
    }
    const milliseconds = ms - s * 1000;
    return `${head}${milliseconds < 10 ? "00" : milliseconds < 100 ? "0" : ""}${milliseconds}Z"`;
  };
}

/**
 * A child of `parent` for the component `name`: its lines carry `logger` = the parent's name dotted with
 * `name` (just `name` under the root), never a second `logger` key; `bindings` are added as with `child`.
 */
export function childLogger(
  parent: Logger,
  name: string,
  bindings: Bindings = {},
  options?: ChildLoggerOptions,
): Logger {
  const child: Named = options ? parent.child(bindings, options) : parent.child(bindings);
  const prefix = (parent as Named)[PREFIX];
  const full = prefix ? `${prefix}.${name}` : name;
  child[NAME] = full;
  child[PREFIX] = full;
  return child;
}

/** `value` as it appears after `key=` on a terminal line: bare when unambiguous, else as JSON. */
function fieldValue(value: unknown): string {
  if (typeof value === "string" && /^[^\s"=]+$/.test(value)) return value;
  return JSON.stringify(value) ?? String(value);
}

/** One JSON log line as a person reads it: `HH:MM:SS.mmm LEVEL logger: msg key=value…` (UTC time). */
export function formatLine(line: string): string {
  let object: Record<string, unknown>;
  try {
    object = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.replace(/\n$/, "");
  }
  const { time, level, logger, msg, ...fields } = object;
  const clock = typeof time === "string" ? time.slice(11, 23) : String(time);
  const head = `${clock} ${String(level).toUpperCase().padEnd(5)} ${String(logger ?? ROOT_LOGGER)}:`;
  const parts = [head];
  if (msg !== undefined) parts.push(String(msg));
  for (const [key, value] of Object.entries(fields)) parts.push(`${key}=${fieldValue(value)}`);
  return parts.join(" ");
}

function humanReadable(target: DestinationStream): DestinationStream {
  return { write: (line: string) => target.write(`${formatLine(line)}\n`) };
}
