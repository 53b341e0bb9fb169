/**
 * Typed errors for Kubernetes API answers. Callers branch on the class (`instanceof NotFoundError`), never
 * on status numbers, and the server's own message travels with the error so it can reach an admin
 * verbatim. Our transport maps every non-2xx answer into these (`errorFromStatus`).
 */
import { isRecord } from "./object.js";

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/** Any non-2xx answer from the API server (or a transport failure, code 0). */
export class KubeApiError extends Error {
  constructor(
    readonly code: number,
    /** `Status.reason` (NotFound, Conflict, AlreadyExists, Invalid, Forbidden, ...) or "" */
    readonly reason: string,
    message: string,
    readonly causes: readonly StatusCause[] = [],
  ) {
    super(message);
    this.name = new.target.name;
  }
}
export class NotFoundError extends KubeApiError {}
/** 409: a stale resourceVersion, a failed precondition or a `test` op, or (reason AlreadyExists) a create clash. */
export class ConflictError extends KubeApiError {
  get alreadyExists(): boolean {
    return this.reason === "AlreadyExists";
  }
}
export class InvalidError extends KubeApiError {}
export class ForbiddenError extends KubeApiError {}
export class UnauthorizedError extends KubeApiError {}
export class GoneError extends KubeApiError {}
export class TooManyRequestsError extends KubeApiError {}
export class ServerError extends KubeApiError {}
/** The request never got an answer (connection refused, reset, timeout). */
export class TransportError extends KubeApiError {}

const asCauses = (v: unknown): StatusCause[] =>
  Array.isArray(v)
    ? v.filter(isRecord).map((c) => ({
        ...(typeof c.reason === "string" ? { reason: c.reason } : {}),
        ...(typeof c.message === "string" ? { message: c.message } : {}),
        ...(typeof c.field === "string" ? { field: c.field } : {}),
      }))
    : [];

const parseBody = (body: unknown): unknown => {
  if (typeof body !== "string") return body;
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
};

/** Builds the typed error for an HTTP status and the (raw or parsed) body the server sent with it. */
export function errorFromStatus(code: number, rawBody: unknown): KubeApiError {
  const body = parseBody(rawBody);
  const status = isRecord(body) ? body : {};
  const reason = typeof status.reason === "string" ? status.reason : "";
  const text =
    typeof status.message === "string"
      ? status.message
      : typeof body === "string" && body.length > 0
        ? body.slice(0, 500)
        : `HTTP ${code}`;
  const causes = asCauses(isRecord(status.details) ? status.details.causes : undefined);
  const cls =
    code === 404
      ? NotFoundError
      : code === 409
        ? ConflictError
        : code === 422
          ? InvalidError
          : code === 403
            ? ForbiddenError
            : code === 401
              ? UnauthorizedError
              : code === 410
                ? GoneError
                : code === 429
                  ? TooManyRequestsError
                  : code >= 500
                    ? ServerError
                    : KubeApiError;
  return new cls(code, reason, text, causes);
}
