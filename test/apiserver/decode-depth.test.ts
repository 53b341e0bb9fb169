/**
 * The local server's decoder refuses what kube-apiserver's refuses (issue 22, found by the deep-object
 * conformance probes): an object nested deeper than 10,000 levels is a 400 BadRequest worded as kube's
 * `transformDecodeError` words it, with the first 30 bytes of the body; brackets inside strings are text.
 */
import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/apiserver/status.js";
import { decodeBody, decodePatchBody } from "../../src/apiserver/wire.js";
import { KUBE_MAX_DEPTH, openingPast } from "../../src/json-depth.js";

/** A Machine whose spec nests so the whole object is `levels` deep, by objects or by arrays. */
const machine = (levels: number, by: "objects" | "arrays" = "objects"): string => {
  const [open, close] = by === "objects" ? ['{"n":', "}"] : ["[", "]"];
  const spec = `${open.repeat(levels - 2)}${by === "objects" ? "{}" : "[]"}${close.repeat(levels - 2)}`;
  return `{"apiVersion":"machine.openshift.io/v1beta1","kind":"Machine","spec":${spec}}`;
};

const decode = (text: string) =>
  decodeBody("application/json", Buffer.from(text), { builtIn: false, kind: "Machine" });

describe("kube's decoder depth limit (10,000 levels)", () => {
  it("an object at the limit decodes", () => {
    expect(decode(machine(KUBE_MAX_DEPTH))).toMatchObject({ kind: "Machine" });
    expect(decode(machine(KUBE_MAX_DEPTH, "arrays"))).toMatchObject({ kind: "Machine" });
  });

  it.each([
    ["objects", machine(KUBE_MAX_DEPTH + 1), "{"],
    ["arrays", machine(KUBE_MAX_DEPTH + 1, "arrays"), "["],
  ])(
    "one level deeper (%s) is kube's 400, naming the character and the body's first 30 bytes",
    (_shape, text, c) => {
      let err: unknown;
      try {
        decode(text);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).toStatus()).toMatchObject({
        code: 400,
        reason: "BadRequest",
        message: `the object provided is unrecognized (must be of type Machine): couldn't get version/kind; json parse error: invalid character '${c}' exceeded max depth ({"apiVersion":"machine.openshi ...)`,
      });
    },
  );

  it("brackets inside strings are not depth", () => {
    expect(openingPast(JSON.stringify({ s: "{[".repeat(20_000) }), KUBE_MAX_DEPTH)).toBe(-1);
    expect(openingPast(JSON.stringify({ s: '\\"{'.repeat(20_000) }), 3)).toBe(-1);
    expect(openingPast(`${"[".repeat(11)}${"]".repeat(11)}`, 10)).toBe(10);
  });
});

/**
 * The yaml library's composer recurses: a deep body overflowed the stack — a 400 at first, and after a few
 * such bodies (the parser's code optimised) an overflow inside V8's regexp compiler, which V8 reports as a
 * fatal out-of-memory and which ended the local server's process (reproduced with three bodies in a row).
 */
describe("SPEC §8.1, decision 136: a YAML body is read within bounds", () => {
  const configMap = (a: string) =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  a: ${a}\n`;
  const decodeYaml = (text: string) =>
    decodeBody("application/yaml", Buffer.from(text), { builtIn: true, kind: "ConfigMap" });
  const refusal = (f: () => unknown): unknown => {
    try {
      f();
    } catch (e) {
      return e instanceof ApiError ? e.toStatus() : e;
    }
    return undefined;
  };

  it("reads a YAML object, and one nested to the bound (500 levels)", () => {
    expect(decodeYaml(configMap("'1'"))).toMatchObject({ data: { a: "1" } });
    const atBound = `${"[".repeat(498)}${"]".repeat(498)}`; // the object and `data` are two more levels
    expect(decodeYaml(configMap(atBound))).toMatchObject({ kind: "ConfigMap" });
  });

  it.each([
    ["a POST body nested 20,000 levels", () => decodeYaml(configMap("[".repeat(20_000)))],
    ["an apply patch nested 20,000 levels", () => decodePatchBody("apply", configMap("[".repeat(20_000)))],
    ["one level past the bound", () => decodeYaml(configMap(`${"[".repeat(499)}${"]".repeat(499)}`))],
  ])(
    "%s: a 400 naming the bound (before: the composer's stack overflow, which could end the process)",
    (_, f) => {
      expect(refusal(f)).toMatchObject({
        code: 400,
        reason: "BadRequest",
        message: expect.stringMatching(
          /^error decoding YAML: YAML document 1 line 6: nests deeper than the bound of 500 levels$/,
        ),
      });
    },
  );
});
