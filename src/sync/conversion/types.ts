/**
 * The result type every converter returns (SPEC §5): a value with the lossy-but-allowed warnings, or
 * every field error found in the whole object. Also the Kubernetes-style printing of a field error and a
 * small collector the converters share so that no converter stops at its first error.
 */
import { type FieldError, formatFieldError } from "../../kube/field-error.js";

export type { FieldError };

export type ConversionResult<T> =
  | { ok: true; value: T; warnings: string[] }
  | { ok: false; errors: FieldError[] };

export { formatFieldError };

/** All field errors of a failed result joined the way the Synchronized condition message carries them. */
export const formatFieldErrors = (errors: readonly FieldError[]): string =>
  errors.map(formatFieldError).join("; ");

/**
 * Errors and warnings gathered while one object converts. A converter appends to it and keeps going, so a
 * user sees every problem of an object at once.
 */
export interface Issues {
  readonly errors: FieldError[];
  readonly warnings: string[];
}

export const newIssues = (): Issues => ({ errors: [], warnings: [] });

export const invalid = (issues: Issues, path: string, value: unknown, message: string): void => {
  issues.errors.push({ path, value, message });
};

export const warn = (issues: Issues, path: string, message: string): void => {
  issues.warnings.push(`${path}: ${message}`);
};

export const finish = <T>(issues: Issues, value: T): ConversionResult<T> =>
  issues.errors.length > 0
    ? { ok: false, errors: issues.errors }
    : { ok: true, value, warnings: issues.warnings };

/** Joins field path segments: `join("spec", "blockDevices", 1)` → `spec.blockDevices[1]`. */
export const fieldPath = (base: string, ...segments: (string | number)[]): string =>
  segments.reduce<string>(
    (acc, s) => (typeof s === "number" ? `${acc}[${s}]` : acc === "" ? s : `${acc}.${s}`),
    base,
  );
