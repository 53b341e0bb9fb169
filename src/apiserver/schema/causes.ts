/**
 * Field errors shaped like kube's `field.Error` and rendered the way kube-apiserver renders them into
 * `Status.details.causes` (`ErrorBody()`: "Invalid value: \"x\": detail", "Required value", ...). Only the
 * rendering lives here; deciding what is wrong is the validator's job (validate.ts, cel.ts).
 */

import { goValue } from "../go-json.js";

export interface StatusCause {
  /** FieldValueInvalid | FieldValueRequired | FieldValueNotSupported | FieldValueForbidden | FieldValueTypeInvalid | FieldValueTooLong | FieldValueTooMany | FieldValueDuplicate */
  reason: string;
  field: string;
  message: string;
}

const withDetail = (head: string, detail: string | undefined): string =>
  detail ? `${head}: ${detail}` : head;

export const invalid = (field: string, value: unknown, detail?: string): StatusCause => ({
  reason: "FieldValueInvalid",
  field,
  message: withDetail(`Invalid value: ${goValue(value)}`, detail),
});

/** kube's TypeInvalid renders with the same "Invalid value" head but a distinct reason. */
export const typeInvalid = (field: string, value: unknown, detail?: string): StatusCause => ({
  reason: "FieldValueTypeInvalid",
  field,
  message: withDetail(`Invalid value: ${goValue(value)}`, detail),
});

export const required = (field: string, detail?: string): StatusCause => ({
  reason: "FieldValueRequired",
  field,
  message: withDetail("Required value", detail),
});

export const forbidden = (field: string, detail?: string): StatusCause => ({
  reason: "FieldValueForbidden",
  field,
  message: withDetail("Forbidden", detail),
});

export const duplicate = (field: string, value: unknown): StatusCause => ({
  reason: "FieldValueDuplicate",
  field,
  message: `Duplicate value: ${goValue(value)}`,
});

export const notSupported = (field: string, value: unknown, allowed: readonly unknown[]): StatusCause => ({
  reason: "FieldValueNotSupported",
  field,
  message: `Unsupported value: ${goValue(value)}: supported values: ${allowed.map(goValue).join(", ")}`,
});

/** kube 1.30's TooLongMaxLength: the value is omitted from the message. */
export const tooLong = (field: string, max: number): StatusCause => ({
  reason: "FieldValueTooLong",
  field,
  message: `Too long: may not be longer than ${max}`,
});

/** kube's field.TooMany: "items" for lists and, as kube-apiserver converts maxProperties, for objects too. */
export const tooMany = (field: string, actual: number, max: number): StatusCause => ({
  reason: "FieldValueTooMany",
  field,
  message: `Too many: ${actual}: must have at most ${max} items`,
});

/** Field paths as kube's `field.Path` prints them: `a.b[0][key]`. */
export const childPath = (base: string, name: string): string => (base ? `${base}.${name}` : name);
export const indexPath = (base: string, index: number): string => `${base}[${index}]`;
export const keyPath = (base: string, key: string): string => `${base}[${key}]`;
