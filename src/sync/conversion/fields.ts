/**
 * Field readers shared by the platform converters: each reads one field of an untyped object, reports a
 * wrong type as a field error at the field's full path and reads it as absent, so a converter can keep
 * going and collect every error of an object. Platform-independent; the next platform reuses them.
 */
import { isRecord } from "../../kube/object.js";
import { fieldPath, type Issues, invalid } from "./types.js";

export const readString = (issues: Issues, obj: Record<string, unknown>, key: string, path: string) => {
  const v = obj[key];
  if (v === undefined) return undefined;
  if (typeof v !== "string") {
    invalid(issues, fieldPath(path, key), v, "must be a string");
    return undefined;
  }
  return v;
};

export const readInteger = (issues: Issues, obj: Record<string, unknown>, key: string, path: string) => {
  const v = obj[key];
  if (v === undefined) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v)) {
    invalid(issues, fieldPath(path, key), v, "must be an integer");
    return undefined;
  }
  return v;
};

export const readBoolean = (issues: Issues, obj: Record<string, unknown>, key: string, path: string) => {
  const v = obj[key];
  if (v === undefined) return undefined;
  if (typeof v !== "boolean") {
    invalid(issues, fieldPath(path, key), v, "must be a boolean");
    return undefined;
  }
  return v;
};

export const readRecord = (issues: Issues, obj: Record<string, unknown>, key: string, path: string) => {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (!isRecord(v)) {
    invalid(issues, fieldPath(path, key), v, "must be an object");
    return undefined;
  }
  return v;
};

export const readArray = (issues: Issues, obj: Record<string, unknown>, key: string, path: string) => {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) {
    invalid(issues, fieldPath(path, key), v, "must be a list");
    return undefined;
  }
  return v as unknown[];
};

export const rejectUnknown = (
  issues: Issues,
  obj: Record<string, unknown>,
  known: ReadonlySet<string>,
  path: string,
  message: string,
) => {
  for (const [key, value] of Object.entries(obj)) {
    if (!known.has(key) && value !== undefined) invalid(issues, fieldPath(path, key), value, message);
  }
};

/** Sets `key` only when `value` is defined, so absent stays absent both ways. */
export const put = (target: Record<string, unknown>, key: string, value: unknown) => {
  if (value !== undefined) target[key] = value;
};
