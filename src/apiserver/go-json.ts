/**
 * Go's encoding/json as kube-apiserver's messages quote it: how an unmarshal error names the JSON value it could
 * not place, and how a field error prints a bad value. One place for the local server's decoders (object
 * metadata, times, Scales, DeleteOptions) and validators. Pure.
 */
import { type ValueSyntax, valueText } from "../json-text.js";

/**
 * A JSON value as an UnmarshalTypeError names it: `number 1.5` with its text where Go was reading a number
 * that cannot hold it (`intoNumber`), plain `number` elsewhere; `bool`, `array`, `object`, `string`.
 */
export const goJsonValue = (v: unknown, intoNumber = false): string =>
  Array.isArray(v)
    ? "array"
    : v === null
      ? "null"
      : typeof v === "object"
        ? "object"
        : typeof v === "boolean"
          ? "bool"
          : typeof v === "number"
            ? intoNumber
              ? `number ${JSON.stringify(v)}`
              : "number"
            : "string";

/** Go's `json: cannot unmarshal <value> into Go struct field <field> of type <goType>`. */
export const unmarshalError = (v: unknown, field: string, goType: string, intoNumber = false): string =>
  `json: cannot unmarshal ${goJsonValue(v, intoNumber)} into Go struct field ${field} of type ${goType}`;

/** Go's `%#v` of a value encoding/json decoded into `interface{}`: maps (keys sorted) and slices. */
const GO_SYNTAX: ValueSyntax = {
  openObject: "map[string]interface {}{",
  closeObject: "}",
  openArray: "[]interface {}{",
  closeArray: "}",
  separator: ", ",
  sortKeys: true,
  nil: "interface {}(nil)",
};

/**
 * A bad value as kube's `field.Error` prints it (`ErrorBody`): a string quoted, a number or boolean bare,
 * null as `null`, and anything else — an object or list out of a custom resource — in Go's `%#v` syntax
 * (`map[string]interface {}{"name":"a", "port":1}`), at any depth.
 */
export const goValue = (v: unknown): string => {
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number" || typeof v === "boolean" || typeof v === "bigint") return String(v);
  if (v === null || v === undefined) return "null";
  return valueText(v, Number.POSITIVE_INFINITY, GO_SYNTAX);
};
