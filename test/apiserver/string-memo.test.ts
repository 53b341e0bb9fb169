import { describe, expect, it } from "vitest";
import { negotiate } from "../../src/apiserver/negotiation.js";
import { isQualifiedName } from "../../src/apiserver/object-meta.js";
import { ApiError } from "../../src/apiserver/status.js";
import { memoByString } from "../../src/apiserver/string-memo.js";

/** A function that counts its calls. */
const counted = <V>(fn: (s: string) => V) => {
  const calls: string[] = [];
  return {
    calls,
    fn: (s: string): V => {
      calls.push(s);
      return fn(s);
    },
  };
};

describe("memoByString (issue 25: the local API server's string checks remembered, bounded)", () => {
  it("answers a string it has met without calling the function again", () => {
    const f = counted((s) => [s.length]);
    const memo = memoByString(f.fn);
    expect(memo("abc")).toEqual([3]);
    expect(memo("abc")).toEqual([3]);
    expect(memo("de")).toEqual([2]);
    expect(f.calls).toEqual(["abc", "de"]);
  });

  it("freezes an object it keeps, so no caller can change the next caller's answer", () => {
    const memo = memoByString((s: string) => [s]);
    const first = memo("x") as string[];
    expect(() => first.push("y")).toThrow(TypeError);
    expect(memo("x")).toEqual(["x"]);
  });

  it("keeps no string longer than maxLength: a hostile key costs the function, never memory", () => {
    const f = counted((s) => s.length);
    const memo = memoByString(f.fn, { maxLength: 4 });
    memo("12345");
    memo("12345");
    memo("1234");
    memo("1234");
    expect(f.calls).toEqual(["12345", "12345", "1234"]);
  });

  it("empties itself at capacity instead of growing", () => {
    const f = counted((s) => [s]);
    const memo = memoByString(f.fn, { capacity: 2 });
    memo("a");
    memo("b");
    memo("c"); // full: forgets a and b, keeps c
    memo("c");
    memo("a");
    expect(f.calls).toEqual(["a", "b", "c", "a"]);
  });

  it("keeps nothing when the function throws", () => {
    let fail = true;
    const memo = memoByString((s: string) => {
      if (fail) throw new Error(`bad ${s}`);
      return [s];
    });
    expect(() => memo("k")).toThrow("bad k");
    fail = false;
    expect(memo("k")).toEqual(["k"]);
  });
});

describe("the memoised checks answer as before", () => {
  it("isQualifiedName: the same problems the second time, for valid and invalid keys", () => {
    for (const key of ["app", "example.com/name", "Bad_Prefix/x", "a/b/c", "/x", "x/", "-x"]) {
      const first = [...isQualifiedName(key)];
      expect(isQualifiedName(key)).toEqual(first);
    }
    expect(isQualifiedName("example.com/name")).toEqual([]);
    expect(isQualifiedName("/x")).toEqual(["prefix part must be non-empty"]);
  });

  it("negotiate: a 406 is answered every time (not kept), a rendering the same every time", () => {
    const endpoint = { builtIn: false, collection: false };
    for (let i = 0; i < 2; i++) {
      expect(() => negotiate("text/html", endpoint)).toThrow(ApiError);
      expect(negotiate("application/json;as=Table;v=v1;g=meta.k8s.io", endpoint)).toEqual({
        as: "Table",
        version: "v1",
      });
    }
    // The endpoint's form is part of what is remembered: protobuf alone is a built-in's (answered in JSON
    // here), and a custom resource's 406.
    const protobuf = "application/vnd.kubernetes.protobuf";
    expect(negotiate(protobuf, { builtIn: true, collection: false })).toEqual({ as: "object" });
    expect(() => negotiate(protobuf, endpoint)).toThrow(ApiError);
  });
});
