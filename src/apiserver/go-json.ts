/**
 * Go's encoding/json as kube-apiserver's messages quote it: how an unmarshal error names the JSON value it could
 * not place. One place for the local server's decoders (object metadata, times, Scales, DeleteOptions). Pure.
 */

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
