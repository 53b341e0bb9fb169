/**
 * One HTTPS call to one webhook: POST an admission.k8s.io/v1 AdmissionReview to its URL (with kube's
 * `?timeout=Ns`), verify the server against the caBundle (via the webhook's agent), enforce the timeout, and
 * check the answer's shape and uid. Errors are returned as text in kube's wording, never thrown.
 */
import { request as httpsRequest } from "node:https";
import { jsonText } from "../../json-text.js";
import { isRecord } from "../../kube/object.js";
import type { CompiledWebhook } from "./configuration.js";

export interface WebhookResponse {
  allowed: boolean;
  status?: { code?: number; reason?: string; message?: string };
  patch?: string;
  patchType?: string;
  warnings: string[];
}

export type CallResult = { ok: true; response: WebhookResponse } | { ok: false; error: string };

/** Resolves `clientConfig.service` to a base URL (`https://host:port`) and the TLS server name to verify. */
export type ServiceResolver = (service: {
  namespace: string;
  name: string;
  port: number;
}) => { baseUrl: string; serverName?: string } | undefined;

const MAX_RESPONSE_BYTES = 3 * 1024 * 1024;

function targetOf(
  w: CompiledWebhook,
  resolve: ServiceResolver | undefined,
): { url: URL; serverName?: string } | { error: string } {
  if (w.url) {
    try {
      return { url: new URL(w.url) };
    } catch {
      return { error: `invalid webhook URL ${JSON.stringify(w.url)}` };
    }
  }
  if (w.service) {
    const resolved = resolve?.(w.service);
    if (!resolved) return { error: `unable to resolve service ${w.service.namespace}/${w.service.name}` };
    const url = new URL(w.service.path ?? "/", resolved.baseUrl);
    // Like kube, the certificate must be valid for the service's DNS name, whatever address we dial.
    return { url, serverName: resolved.serverName ?? `${w.service.name}.${w.service.namespace}.svc` };
  }
  return { error: "webhook has neither clientConfig.url nor clientConfig.service" };
}

/** Posts `review` and returns the parsed, checked response. `uid` is the request uid to verify against. */
export function callWebhook(
  w: CompiledWebhook,
  review: unknown,
  uid: string,
  resolve: ServiceResolver | undefined,
): Promise<CallResult> {
  const target = targetOf(w, resolve);
  if ("error" in target) return Promise.resolve({ ok: false, error: target.error });
  const url = target.url;
  url.searchParams.set("timeout", `${w.timeoutSeconds}s`);
  const display = `Post ${JSON.stringify(url.toString())}`;
  const body = Buffer.from(jsonText(review));
  return new Promise((resolvePromise) => {
    let settled = false;
    const finish = (r: CallResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolvePromise(r);
    };
    const req = httpsRequest(
      url,
      {
        method: "POST",
        agent: w.agent,
        headers: {
          "content-type": "application/json",
          accept: "application/json",
          "content-length": body.length,
        },
        ...(target.serverName ? { servername: target.serverName } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > MAX_RESPONSE_BYTES) {
            req.destroy();
            finish({ ok: false, error: `failed to call webhook: ${display}: response body too large` });
            return;
          }
          chunks.push(c);
        });
        res.on("error", (e) =>
          finish({ ok: false, error: `failed to call webhook: ${display}: ${e.message}` }),
        );
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          if (res.statusCode !== 200) {
            finish({
              ok: false,
              error: `failed to call webhook: an error on the server (${JSON.stringify(text.slice(0, 200))}) has prevented the request from succeeding (HTTP ${res.statusCode})`,
            });
            return;
          }
          finish(parseReview(text, uid));
        });
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      finish({ ok: false, error: `failed to call webhook: ${display}: context deadline exceeded` });
    }, w.timeoutSeconds * 1000);
    req.on("error", (e) =>
      finish({ ok: false, error: `failed to call webhook: ${display}: ${goNetworkError(e)}` }),
    );
    req.end(body);
  });
}

const UNKNOWN_AUTHORITY = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_GET_ISSUER_CERT",
]);

/**
 * Node's socket/TLS errors in the words of Go's net/http and crypto/x509, which is what a cluster admin sees
 * from kube-apiserver (`dial tcp ...: connect: connection refused`, `x509: certificate signed by unknown
 * authority`). Unknown errors keep Node's message.
 */
function goNetworkError(e: Error & { code?: string; address?: string; port?: number }): string {
  if (e.code === "ECONNREFUSED" && e.address)
    return `dial tcp ${e.address}:${e.port ?? ""}: connect: connection refused`;
  if (e.code && UNKNOWN_AUTHORITY.has(e.code))
    return "tls: failed to verify certificate: x509: certificate signed by unknown authority";
  if (e.code === "CERT_HAS_EXPIRED")
    return "tls: failed to verify certificate: x509: certificate has expired or is not yet valid";
  if (e.code === "ERR_TLS_CERT_ALTNAME_INVALID")
    return `tls: failed to verify certificate: x509: ${e.message}`;
  if (e.code === "ECONNRESET") return "EOF";
  return e.message;
}

function parseReview(text: string, uid: string): CallResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return { ok: false, error: `failed to call webhook: unable to decode response: ${(e as Error).message}` };
  }
  if (!isRecord(parsed) || parsed.apiVersion !== "admission.k8s.io/v1" || parsed.kind !== "AdmissionReview")
    return {
      ok: false,
      error: `expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${isRecord(parsed) ? `${String(parsed.apiVersion)}, Kind=${String(parsed.kind)}` : "non-object"}`,
    };
  const r = parsed.response;
  if (!isRecord(r)) return { ok: false, error: "webhook response was absent" };
  if (r.uid !== uid)
    return {
      ok: false,
      error: `expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(r.uid ?? "")}`,
    };
  const status = isRecord(r.status) ? r.status : undefined;
  const response: WebhookResponse = {
    allowed: r.allowed === true,
    warnings: Array.isArray(r.warnings) ? r.warnings.filter((x): x is string => typeof x === "string") : [],
  };
  if (status) {
    response.status = {
      ...(typeof status.code === "number" ? { code: status.code } : {}),
      ...(typeof status.reason === "string" ? { reason: status.reason } : {}),
      ...(typeof status.message === "string" ? { message: status.message } : {}),
    };
  }
  if (typeof r.patch === "string") response.patch = r.patch;
  if (typeof r.patchType === "string") response.patchType = r.patchType;
  return { ok: true, response };
}
