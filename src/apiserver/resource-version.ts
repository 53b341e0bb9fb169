/**
 * resourceVersions as kube's storage reads them: an unsigned 64-bit integer (strconv.ParseUint), "" and "0"
 * meaning none. A write's resourceVersion is its precondition (rest/strategy.ts); a read's is how fresh the
 * answer must be — kube's watch cache serves a GET or list "not older than" it, waiting up to 3 s for a
 * revision it has not reached and then answering 504 with a cause client-go's reflector recognises (it
 * relists from the newest). Nothing here knows about HTTP beyond the Status a failure becomes.
 */
import { ApiError, invalid } from "./status.js";
import type { Storage } from "./storage.js";
import type { ResourceInfo } from "./types.js";

const MAX_UINT64 = 18446744073709551615n;

/** How long kube's watch cache waits for a revision it has not reached (its `blockTimeout`). */
export const BLOCK_TIMEOUT_MS = 3_000;

/** strconv.ParseUint(rv, 10, 64), as kube's storage versioner calls it: the number, or Go's error text. */
export const parseResourceVersion = (rv: string): bigint | string => {
  if (!/^\d+$/.test(rv)) return `strconv.ParseUint: parsing ${JSON.stringify(rv)}: invalid syntax`;
  const n = BigInt(rv);
  return n > MAX_UINT64 ? `strconv.ParseUint: parsing ${JSON.stringify(rv)}: value out of range` : n;
};

/**
 * The precondition a write's `metadata.resourceVersion` sets, as kube's store reads it: undefined for an
 * unconditional write ("", absent or "0"), which custom resources refuse (422: their strategy does not allow
 * unconditional updates; kube names the resource, not the kind); else the number as the stored object would
 * carry it. Not a number: the versioner's parse error, an internal error without a reason (500).
 */
export const preconditionOf = (res: ResourceInfo, name: string, rv: unknown): string | undefined => {
  const n = typeof rv === "string" && rv !== "" ? parseResourceVersion(rv) : 0n;
  if (typeof n === "string") throw new ApiError(500, "", n);
  if (n > 0n) return String(n);
  if (res.crd)
    throw invalid(res.group, res.plural, name, [
      {
        reason: "FieldValueInvalid",
        field: "metadata.resourceVersion",
        message: "Invalid value: 0x0: must be specified for an update",
      },
    ]);
  return undefined;
};

/**
 * The resourceVersion a GET or list asks for, as the watch cache parses it: undefined for none ("" or
 * absent), else the number. Not a number: the storage layer's invalid error, which kube answers as an
 * internal error without a reason (500).
 */
export const readResourceVersion = (rv: string | null | undefined): bigint | undefined => {
  if (rv === null || rv === undefined || rv === "") return undefined;
  const n = parseResourceVersion(rv);
  if (typeof n === "string")
    throw new ApiError(500, "", `resourceVersion: Invalid value: ${JSON.stringify(rv)}: ${n}`);
  return n;
};

/** kube's storage.NewTooLargeResourceVersionError: a 504 the client may retry after a second. */
export const tooLargeResourceVersion = (wanted: bigint, current: number): ApiError =>
  new ApiError(504, "Timeout", `Timeout: Too large resource version: ${wanted}, current: ${current}`, {
    causes: [{ reason: "ResourceVersionTooLarge", field: "", message: "Too large resource version" }],
    retryAfterSeconds: 1,
  });

/**
 * Waits, as kube's watch cache does, until the server has reached `wanted` (at most `blockMs`); a 504 when it
 * has not. Returns at once for 0 and for revisions already reached.
 */
export const awaitResourceVersion = async (
  storage: Storage,
  wanted: bigint,
  blockMs = BLOCK_TIMEOUT_MS,
): Promise<void> => {
  if (wanted <= BigInt(storage.currentRv())) return;
  if (!(await storage.waitForRv(Number(wanted), blockMs)))
    throw tooLargeResourceVersion(wanted, storage.currentRv());
};
