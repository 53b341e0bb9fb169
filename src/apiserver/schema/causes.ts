/**
 * Field errors shaped like kube's `field.Error` and rendered the way kube-apiserver renders them into
 * `Status.details.causes` (`ErrorBody()`: "Invalid value: \"x\": detail", "Required value", ...). Only the
 * rendering lives here; deciding what is wrong is the validator's job (validate.ts, cel.ts).
 */

export interface StatusCause {
  /** FieldValueInvalid | FieldValueRequired | FieldValueNotSupported | FieldValueForbidden | FieldValueTypeInvalid | FieldValueTooLong | FieldValueTooMany | FieldValueDuplicate */
  reason: string;
  field: string;
  message: string;
}

/**
 * Renders a bad value as Go's `%q`/`%v` would for the JSON types we meet: strings quoted, numbers and
 * booleans bare, anything structured as compact JSON (kube prints Go syntax there; JSON is the readable
 * equivalent and never reached by the product's own rules).
 */
const renderValue = (v: unknown): string => {
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number" || typeof v === "boolean" || typeof v === "bigint") return String(v);
  if (v === null || v === undefined) return "null";
  return JSON.stringify(v);
};

const withDetail = (head: string, detail: string | undefined): string =>
  detail ? `${head}: ${detail}` : head;

export const invalid = (field: string, value: unknown, detail?: string): StatusCause => ({
  reason: "FieldValueInvalid",
  field,
  message: withDetail(`Invalid value: ${renderValue(value)}`, detail),
});

/** kube's TypeInvalid renders with the same "Invalid value" head but a distinct reason. */
export const typeInvalid = (field: string, value: unknown, detail?: string): StatusCause => ({
  reason: "FieldValueTypeInvalid",
  field,
  message: withDetail(`Invalid value: ${renderValue(value)}`, detail),
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
  message: `Duplicate value: ${renderValue(value)}`,
});

export const notSupported = (field: string, value: unknown, allowed: readonly unknown[]): StatusCause => ({
  reason: "FieldValueNotSupported",
  field,
  message: `Unsupported value: ${renderValue(value)}: supported values: ${allowed.map(renderValue).join(", ")}`,
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
