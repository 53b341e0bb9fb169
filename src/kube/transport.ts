/**
 * The one way the runtime talks HTTP to an API server: requests whose auth and TLS come from a client-node
 * `KubeConfig` (`applyToHTTPSOptions`), JSON in and out, non-2xx answers turned into the typed errors of
 * errors.ts, and newline-delimited JSON streams for watches. Requests go through undici's kept-alive pool,
 * which costs ~40 % less CPU per request than node:https (decision 107); watches, and every request behind a
 * proxy or to a server URL with credentials in it, through node:http(s). Owning this layer (instead of
 * client-node's generated APIs and informer) is what lets us set patch content types, watch parameters,
 * timeouts and stream handling exactly. URL building for a `ResourceType` lives here too.
 */
import { createHash } from "node:crypto";
import http from "node:http";
import https from "node:https";
import { StringDecoder } from "node:string_decoder";
import { createSecureContext } from "node:tls";
import type { KubeConfig } from "@kubernetes/client-node";
import { type Dispatcher, Agent as Pools, errors as undiciErrors } from "undici";
import { errorFromStatus, TransportError } from "./errors.js";
import type { ResourceType } from "./kinds.js";
import type { RestClientResponse } from "./metrics.js";
import { retryWaitMs } from "./retry-after.js";

export type Query = Record<string, string | number | boolean | undefined>;

export interface KubeRequest {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  query?: Query;
  body?: unknown;
  /** Defaults to application/json when there is a body. */
  contentType?: string;
  /**
   * Gives up (TransportError) when no complete answer arrived in time, and bounds the `Retry-After` waits in
   * all (`DEFAULT_RETRY_BUDGET_MS` without it). Streams ignore it.
   */
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * How the answer's JSON text (a stream's, each line) becomes a value; `JSON.parse` when absent. The
   * informer's and the product client's cut managedFields first (managed-fields-text.ts).
   */
  parse?: (text: string) => unknown;
}

/** A newline-delimited JSON stream (a watch). Iterating yields parsed lines; `close` ends it from our side. */
export interface JsonStream extends AsyncIterable<unknown> {
  close(): void;
}

export interface Transport {
  request(req: KubeRequest): Promise<unknown>;
  stream(req: KubeRequest): Promise<JsonStream>;
}

/** `/api/v1/...` or `/apis/<group>/<version>/...` for a type, optionally a namespace, a name and a subresource. */
export function resourcePath(
  type: ResourceType,
  namespace?: string,
  name?: string,
  subresource?: string,
): string {
  const base = type.group ? `/apis/${type.group}/${type.version}` : `/api/${type.version}`;
  const ns = type.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : "";
  const n = name !== undefined ? `/${encodeURIComponent(name)}` : "";
  const sub = subresource && name !== undefined ? `/${subresource}` : "";
  return `${base}${ns}/${type.plural}${n}${sub}`;
}

/** What `onResponse` is told of an answer (either client's): its status and its `Date` header, if one. */
const responseOf = (req: KubeRequest, host: string, code: number, date: unknown): RestClientResponse => ({
  method: req.method,
  code: String(code),
  host,
  date: typeof date === "string" ? date : undefined,
});

const withQuery = (path: string, query: Query | undefined): string => {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.set(k, String(v));
  const q = params.toString();
  return q ? `${path}?${q}` : path;
};

const DEFAULT_TIMEOUT_MS = 30_000;
/**
 * How long a request without its own `timeoutMs` waits out `Retry-After` in all (decision 162's "never longer
 * than its own timeout", with the default timeout): ten waits of 10 s would park a controller's worker, or a
 * Lease renewal, for 100 s.
 */
export const DEFAULT_RETRY_BUDGET_MS = DEFAULT_TIMEOUT_MS;
/** How long resolved credentials and TLS material are reused before client-node is asked again. */
const AUTH_TTL_MS = 10_000;

export interface TransportOptions {
  /** Told of every request's answer (its status) or failure (`<error>`): the REST client metric (SPEC §7). */
  onResponse?: (response: RestClientResponse) => void;
  /** Waits out a server's `Retry-After` (decision 162); rejects when `signal` aborts. Tests pass their own. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/**
 * A timer that an abort ends early, rejecting. Not clock.ts's `sleep`: `systemClock`'s timers are unref'd (a
 * pending retry must not keep a finished process alive), but a command waiting out a 429 has nothing else
 * keeping it alive, and would exit mid-request.
 */
const sleepFor = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error("aborted"));
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new Error("aborted"));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });

/** A transport for the current context of `kubeConfig`. */
export function kubeConfigTransport(
  kubeConfig: KubeConfig,
  transportOptions: TransportOptions = {},
): Transport {
  const { onResponse, sleep = sleepFor } = transportOptions;
  // client-node builds a fresh agent per call (a TLS handshake per request); we keep one kept-alive client per
  // distinct TLS material instead, so rotated client certificates still get a new one. The material goes in as
  // one secure context, not as `ca`/`cert`/`key` options: Node's https agent names its connection pools from
  // the options, pasting those PEMs into a key of several KB that it rebuilds and hashes a few times per
  // request (tens of µs each request). Each material has a node:https agent (watches) and an undici pool
  // (requests), sharing the context.
  const clients = new Map<string, Kept>();
  const keptFor = (options: https.RequestOptions, plain: boolean): Kept | undefined => {
    if (kubeConfig.getCurrentCluster()?.proxyUrl) return undefined; // keep client-node's proxy agent
    const material = [
      plain,
      options.ca,
      options.cert,
      options.key,
      options.rejectUnauthorized,
      options.servername,
    ];
    const id = createHash("sha256")
      .update(JSON.stringify(material.map((m) => (Buffer.isBuffer(m) ? m.toString("base64") : m))))
      .digest("hex");
    let kept = clients.get(id);
    if (!kept) {
      kept = plain ? keptPlain() : keptTls(options);
      clients.set(id, kept);
    }
    return kept;
  };

  // client-node re-reads certificate and token files, decodes inline data and builds an agent on every
  // `applyToHTTPSOptions` call: that and the agent lookup are done once per AUTH_TTL_MS instead (client-go
  // likewise re-reads a token file at most once a minute). A 401 drops the cached material at once, so a
  // rotated token or certificate is picked up on the next request.
  let resolved: { server: string; at: number; connection: Connection } | undefined;
  const connectionFor = async (server: string, parsed: ParsedServer): Promise<Connection> => {
    const now = performance.now();
    if (resolved && resolved.server === server && now - resolved.at < AUTH_TTL_MS) return resolved.connection;
    const applied: https.RequestOptions = { headers: {} };
    await kubeConfig.applyToHTTPSOptions(applied);
    // client-node's fresh per-call agent is replaced by a kept-alive one holding the TLS material, which then
    // stays off each request (a proxy's agent is kept, with the material on the request as client-node put it).
    const kept = keptFor(applied, parsed.plain);
    const { ca: _ca, cert: _cert, key: _key, ...rest } = applied;
    const connection: Connection = kept
      ? {
          options: { ...rest, agent: kept.agent },
          // undici takes no user info from the URL: such a server's requests keep Node's client, which sends it.
          ...(parsed.target.auth === undefined ? { pool: kept.pool } : {}),
        }
      : { options: applied };
    resolved = { server, at: now, connection };
    return connection;
  };

  // The server URL is parsed once, not twice per request (two URL objects per request and Node's conversion of
  // one into request options; decision 102). A request's path goes out as the caller built it: no URL parser
  // resolves its `..` segments or moves what follows a `?` into the query.
  let parsedServer: { text: string; server: ParsedServer } | undefined;
  const serverOf = (text: string): ParsedServer => {
    if (parsedServer?.text !== text) parsedServer = { text, server: parseServer(text) };
    return parsedServer.server;
  };

  /** What every request needs, whichever client sends it: the server, its credentials, the path and body. */
  const prepare = async (req: KubeRequest): Promise<Prepared> => {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new TransportError(0, "", "kubeconfig has no current cluster");
    const server = serverOf(cluster.server);
    const connection = await connectionFor(cluster.server, server);
    const payload = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body));
    const headers: Record<string, string> = {
      ...(connection.options.headers as Record<string, string>),
      Accept: "application/json",
    };
    if (payload) headers["Content-Type"] = req.contentType ?? "application/json";
    return {
      req,
      server,
      connection,
      path: withQuery(server.pathPrefix + req.path, req.query),
      payload,
      headers,
    };
  };

  /** A request through Node's client: a watch's, or any request without an undici pool (see `connectionFor`). */
  const open = (p: Prepared): Promise<{ res: http.IncomingMessage; abort: () => void }> => {
    const { req, server } = p;
    const lib = server.plain ? http : https;
    const headers: http.OutgoingHttpHeaders = { ...p.headers };
    if (p.payload) headers["Content-Length"] = String(p.payload.length);
    const options: https.RequestOptions = {
      ...server.target,
      ...p.connection.options,
      path: p.path,
      method: req.method,
      headers,
    };
    return new Promise((resolve, reject) => {
      let answered = false;
      let r: http.ClientRequest;
      try {
        r = lib.request(options, (res) => {
          answered = true;
          onResponse?.(responseOf(req, server.host, res.statusCode ?? 0, res.headers.date));
          resolve({ res, abort: () => r.destroy() });
        });
      } catch (e) {
        // Node refuses a path with characters a request line cannot carry (ERR_UNESCAPED_CHARACTERS).
        reject(new TransportError(0, "", `${req.method} ${req.path}: ${(e as Error).message}`));
        return;
      }
      r.on("error", (e) => {
        if (!answered) onResponse?.({ method: req.method, code: "<error>", host: server.host });
        reject(new TransportError(0, "", `${req.method} ${req.path}: ${e.message}`));
      });
      if (req.signal) {
        const signal = req.signal;
        if (signal.aborted) r.destroy(new Error("aborted"));
        const onAbort = (): void => void r.destroy(new Error("aborted"));
        signal.addEventListener("abort", onAbort, { once: true });
        // An informer's pages share one signal for a whole relist: the listener goes with its request.
        r.once("close", () => signal.removeEventListener("abort", onAbort));
      }
      if (req.timeoutMs !== undefined || !isStreamRequest(req)) {
        r.setTimeout(req.timeoutMs ?? DEFAULT_TIMEOUT_MS, () => r.destroy(new Error("timed out")));
      }
      r.end(p.payload);
    });
  };

  // The answer's bytes through the stream's events: an async iterator over the response costs a promise and a
  // few objects per chunk (decision 102). An answer cut short (the connection closed, a timeout or an abort
  // destroyed it) is an error, never a truncated text.
  const readAll = (res: http.IncomingMessage): Promise<string> =>
    new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let ended = false;
      res.on("data", (c: Buffer) => void chunks.push(c));
      res.once("end", () => {
        ended = true;
        resolve(chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8"));
      });
      res.once("error", reject);
      res.once("close", () => {
        if (!ended) reject(res.errored ?? new Error("the connection closed before the answer was complete"));
      });
    });

  const failed = (req: KubeRequest, e: unknown): TransportError =>
    new TransportError(0, "", `${req.method} ${req.path}: ${errorText(e)}`);

  /** A request's status and text through Node's client. */
  const viaNode = async (p: Prepared): Promise<Answer> => {
    const { res } = await open(p);
    try {
      return {
        code: res.statusCode ?? 0,
        text: await readAll(res),
        retryAfter: headerText(res.headers["retry-after"]),
      };
    } catch (e) {
      throw failed(p.req, e);
    }
  };

  /**
   * A request's status and text through undici's pool. Its timeouts are Node's socket timeout split in two:
   * no headers, or no byte of the body, for `timeoutMs`. A refused path was never sent: it is not counted.
   */
  const viaPool = async (p: Prepared, pool: Dispatcher): Promise<Answer> => {
    const { req, server } = p;
    const timeout = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    let answer: Dispatcher.ResponseData;
    try {
      answer = await pool.request({
        origin: server.origin,
        path: p.path,
        method: req.method,
        headers: p.headers,
        body: p.payload ?? null,
        signal: req.signal ?? null,
        // The connection stays open after a DELETE with its options in the body: undici would close it (a
        // server may leave a body it does not expect unread), but kube-apiserver reads that one.
        reset: false,
        headersTimeout: timeout,
        bodyTimeout: timeout,
      });
    } catch (e) {
      if (!(e instanceof undiciErrors.InvalidArgumentError))
        onResponse?.({ method: req.method, code: "<error>", host: server.host });
      throw failed(req, e);
    }
    onResponse?.(responseOf(req, server.host, answer.statusCode, answer.headers.date));
    try {
      return {
        code: answer.statusCode,
        text: await answer.body.text(),
        retryAfter: headerText(answer.headers["retry-after"]),
      };
    } catch (e) {
      throw failed(req, e);
    }
  };

  return {
    async request(req) {
      const p = await prepare(req);
      let answer: Answer;
      // A server that asks for the request again (429 or a GET's 5xx, with Retry-After) gets it again after
      // the wait it names, as client-go does — never waiting longer in all than the request's own timeout (the
      // default one when it has none).
      const budget = req.timeoutMs ?? DEFAULT_RETRY_BUDGET_MS;
      for (let retries = 0, waited = 0; ; retries++) {
        answer = p.connection.pool ? await viaPool(p, p.connection.pool) : await viaNode(p);
        const wait = retryWaitMs(req.method, answer.code, answer.retryAfter, retries);
        if (wait === undefined || waited + wait > budget) break;
        waited += wait;
        try {
          await sleep(wait, req.signal);
        } catch (e) {
          throw failed(req, e);
        }
      }
      const { code, text } = answer;
      if (code === 401) resolved = undefined;
      if (code < 200 || code >= 300) throw errorFromStatus(code, text);
      if (text.length === 0) return undefined;
      try {
        return (req.parse ?? JSON.parse)(text);
      } catch {
        throw new TransportError(code, "", `${req.method} ${req.path}: answer is not JSON`);
      }
    },
    async stream(req) {
      const { res, abort } = await open(await prepare(req));
      const code = res.statusCode ?? 0;
      if (code === 401) resolved = undefined;
      if (code < 200 || code >= 300) throw errorFromStatus(code, await readAll(res).catch(() => ""));
      return {
        close: abort,
        [Symbol.asyncIterator]: () => jsonLines(res, req.parse)[Symbol.asyncIterator](),
      };
    },
  };
}

/** The kept-alive clients of one TLS material: Node's agent for watches, undici's pool for requests. */
interface Kept {
  agent: http.Agent;
  pool: Dispatcher;
}

/**
 * How long an idle pooled connection is kept, unless the server's `Keep-Alive` says less: long enough that a
 * controller's requests a few seconds apart reuse one (undici's default is 4 s; Node's agent has none).
 */
const KEEP_ALIVE_MS = 60_000;

const keptPlain = (): Kept => ({
  agent: new http.Agent({ keepAlive: true }),
  pool: new Pools({ keepAliveTimeout: KEEP_ALIVE_MS }),
});

const keptTls = (options: https.RequestOptions): Kept => {
  const secureContext = createSecureContext({
    ...(options.ca !== undefined ? { ca: options.ca } : {}),
    ...(options.cert !== undefined ? { cert: options.cert } : {}),
    ...(options.key !== undefined ? { key: options.key } : {}),
  });
  const verify = {
    ...(options.rejectUnauthorized !== undefined ? { rejectUnauthorized: options.rejectUnauthorized } : {}),
    ...(options.servername !== undefined ? { servername: options.servername } : {}),
  };
  return {
    agent: new https.Agent({ keepAlive: true, secureContext, ...verify }),
    pool: new Pools({ keepAliveTimeout: KEEP_ALIVE_MS, connect: { secureContext, ...verify } }),
  };
};

/** A server's resolved credentials: Node's request options (their headers too), and the pool when there is one. */
interface Connection {
  options: https.RequestOptions;
  /** Absent behind a proxy (client-node's agent) and for a server URL with user info. */
  pool?: Dispatcher;
}

interface Prepared {
  req: KubeRequest;
  server: ParsedServer;
  connection: Connection;
  /** The server's path prefix, the request's path and its query. */
  path: string;
  payload: Buffer | undefined;
  /** The credentials' headers, Accept, and Content-Type with a body. */
  headers: Record<string, string>;
}

interface Answer {
  code: number;
  text: string;
  /** The answer's `Retry-After` header, if it has one. */
  retryAfter: string | undefined;
}

/** A header's value as one text: undefined when absent, the first when repeated. */
const headerText = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value[0] : value;

/** An error's message as the transport words it, either client's: undici's timeouts and aborts as Node's were. */
const errorText = (e: unknown): string => {
  if (e instanceof undiciErrors.HeadersTimeoutError || e instanceof undiciErrors.BodyTimeoutError)
    return "timed out";
  if (e instanceof undiciErrors.RequestAbortedError || (e as Error)?.name === "AbortError") return "aborted";
  return (e as Error)?.message ?? String(e);
};

interface ParsedServer {
  plain: boolean;
  /** `scheme://host[:port]`: where undici's pool connects. */
  origin: string;
  /** `host[:port]` as the URL spells it (the REST client metric's label). */
  host: string;
  /** The server URL's path without its trailing slash, put before every request's path. */
  pathPrefix: string;
  /** What `http.request` would take from the URL: scheme, host name (IPv6 without brackets), port, user info. */
  target: Pick<https.RequestOptions, "protocol" | "hostname" | "port" | "auth">;
}

/** A kubeconfig's `server` as request options, as Node's `urlToHttpOptions` would give them. */
function parseServer(text: string): ParsedServer {
  const url = new URL(text);
  const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const auth =
    url.username || url.password
      ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`
      : undefined;
  return {
    plain: url.protocol === "http:",
    origin: url.origin,
    host: url.host,
    pathPrefix: url.pathname.replace(/\/$/, ""),
    target: {
      protocol: url.protocol,
      hostname,
      ...(url.port !== "" ? { port: Number(url.port) } : {}),
      ...(auth !== undefined ? { auth } : {}),
    },
  };
}

const isStreamRequest = (req: KubeRequest): boolean =>
  req.query?.watch === true || req.query?.watch === "true";

/**
 * Splits a byte stream into JSON values, one per line; a line that is not JSON ends the stream with an error.
 * Bytes are decoded as a stream, so a character whose bytes two chunks share arrives whole (decoded chunk by
 * chunk, an annotation's `é` became two U+FFFD in the cache, and the sync would mirror them); only each new
 * chunk is searched for a newline, and a line's pieces are joined once it ends — a long line is not rescanned
 * per chunk (decision 137).
 */
export async function* jsonLines(
  source: AsyncIterable<Buffer | string>,
  parse: (text: string) => unknown = JSON.parse,
): AsyncGenerator<unknown> {
  const decoder = new StringDecoder("utf8");
  let pieces: string[] = [];
  const line = (): string => {
    const text = pieces.join("").trim();
    pieces = [];
    return text;
  };
  try {
    for await (const chunk of source) {
      const text = typeof chunk === "string" ? chunk : decoder.write(chunk);
      let start = 0;
      for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", start)) {
        pieces.push(text.slice(start, nl));
        start = nl + 1;
        const complete = line();
        if (complete) yield parse(complete);
      }
      if (start < text.length) pieces.push(text.slice(start));
    }
    pieces.push(decoder.end());
  } catch (e) {
    throw new TransportError(0, "", `watch stream broke: ${(e as Error).message}`);
  }
  const rest = line();
  if (rest) yield parse(rest);
}
