/**
 * `Status` answers as kube-apiserver shapes them: the error type the REST layer throws, and builders for
 * the reasons kubectl and client-node interpret (NotFound, AlreadyExists, Conflict, Invalid, …). Only
 * data lives here; the HTTP layer turns an ApiError into a response.
 */
import type { StatusCause } from "./types.js";

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface StatusBody {
  kind: "Status";
  apiVersion: "v1";
  metadata: Record<string, never>;
  status: "Failure" | "Success";
  message?: string;
  /** Absent for errors kube does not classify (a store's internal errors). */
  reason?: string;
  details?: StatusDetails;
  code: number;
}

export class ApiError extends Error {
  /** Warnings gathered before the failure (admission); sent with the error as kube does. */
  warnings: string[] = [];
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
  toStatus(): StatusBody {
    return {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: this.message,
      ...(this.reason ? { reason: this.reason } : {}),
      ...(this.details ? { details: wireDetails(this.details) } : {}),
      code: this.code,
    };
  }
}

/** Details as Go's `omitempty` writes them: a core kind's empty group and an unnamed object's name are absent. */
const wireDetails = (d: StatusDetails): StatusDetails => {
  const { name, group, causes, ...rest } = d;
  return {
    ...(name ? { name } : {}),
    ...(group ? { group } : {}),
    ...rest,
    // A cause's empty reason and field are absent too (an InternalError's cause is a message alone).
    ...(causes
      ? {
          causes: causes.map(
            ({ reason, field, ...c }) =>
              ({ ...(reason ? { reason } : {}), ...c, ...(field ? { field } : {}) }) as StatusCause,
          ),
        }
      : {}),
  };
};

/** `machines.machine.openshift.io` / `configmaps`: how kube names a resource in messages. */
const qualifiedResource = (group: string, plural: string): string => (group ? `${plural}.${group}` : plural);

export const notFound = (group: string, plural: string, name: string): ApiError =>
  new ApiError(404, "NotFound", `${qualifiedResource(group, plural)} "${name}" not found`, {
    name,
    group,
    kind: plural,
  });

export const alreadyExists = (group: string, plural: string, name: string): ApiError =>
  new ApiError(409, "AlreadyExists", `${qualifiedResource(group, plural)} "${name}" already exists`, {
    name,
    group,
    kind: plural,
  });

export const conflict = (group: string, plural: string, name: string, why: string): ApiError =>
  new ApiError(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${qualifiedResource(group, plural)} "${name}": ${why}`,
    {
      name,
      group,
      kind: plural,
    },
  );

export const STALE_OBJECT =
  "the object has been modified; please apply your changes to the latest version and try again";

export const invalid = (group: string, kind: string, name: string, causes: StatusCause[]): ApiError => {
  // Go's ToAggregate keeps each message once (kube validates some fields twice: two causes, one message).
  const list = [...new Set(causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message)))];
  const joined = list.length === 1 ? list[0]! : `[${list.join(", ")}]`;
  // StatusDetails' fields are omitempty: an empty name or kind is left out, as kube's JSON leaves it.
  return new ApiError(422, "Invalid", `${kind}${group ? `.${group}` : ""} "${name}" is invalid: ${joined}`, {
    ...(name ? { name } : {}),
    group,
    ...(kind ? { kind } : {}),
    causes,
  });
};

export const badRequest = (message: string): ApiError => new ApiError(400, "BadRequest", message);

export const methodNotAllowed = (): ApiError =>
  new ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource");

export const unsupportedMediaType = (message: string): ApiError =>
  new ApiError(415, "UnsupportedMediaType", message);

export const unauthorized = (): ApiError => new ApiError(401, "Unauthorized", "Unauthorized");

export const internalError = (message: string): ApiError =>
  new ApiError(500, "InternalError", `Internal error occurred: ${message}`);
