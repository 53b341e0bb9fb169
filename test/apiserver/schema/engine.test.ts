import { describe, expect, it } from "vitest";
import { type CompiledCrd, compileCrd, type JsonSchema } from "../../../src/apiserver/schema/index.js";
import type { KubeObject } from "../../../src/kube/object.js";

/** A minimal namespaced CRD `widgets.example.com/v1` around the given spec/status schemas. */
const crdWith = (properties: Record<string, JsonSchema>, extra: Partial<JsonSchema> = {}): KubeObject => ({
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.example.com" },
  spec: {
    group: "example.com",
    scope: "Namespaced",
    names: { plural: "widgets", kind: "Widget" },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: { openAPIV3Schema: { type: "object", properties, ...extra } },
      },
    ],
  },
});

const compile = (properties: Record<string, JsonSchema>, extra: Partial<JsonSchema> = {}): CompiledCrd => {
  const r = compileCrd(crdWith(properties, extra));
  if (!r.ok) throw new Error(JSON.stringify(r.causes));
  return r.value;
};

const widget = (spec: unknown, status?: unknown): KubeObject => ({
  apiVersion: "example.com/v1",
  kind: "Widget",
  metadata: { name: "w", namespace: "ns" },
  spec: spec as Record<string, unknown>,
  ...(status === undefined ? {} : { status: status as Record<string, unknown> }),
});

describe("compileCrd (SPEC §8 CRD registration)", () => {
  it("fills names defaults and exposes versions", () => {
    const c = compile({ spec: { type: "object" } });
    expect(c.names).toEqual({
      plural: "widgets",
      singular: "widget",
      kind: "Widget",
      listKind: "WidgetList",
      shortNames: [],
      categories: [],
    });
    expect(c.versions[0]).toMatchObject({
      name: "v1",
      served: true,
      storage: true,
      subresources: { status: true },
    });
    expect(c.scope).toBe("Namespaced");
  });

  it.each([
    [
      "name must be plural.group",
      (c: KubeObject) => {
        c.metadata!.name = "x.example.com";
      },
      "metadata.name",
    ],
    [
      "exactly one storage version",
      (c: KubeObject) => {
        (c.spec!.versions as Array<Record<string, unknown>>)[0]!.storage = false;
      },
      "spec.versions",
    ],
    [
      "unparseable CEL rule",
      (c: KubeObject) => {
        const v = (
          c.spec!.versions as Array<{
            schema: { openAPIV3Schema: { properties: Record<string, JsonSchema> } };
          }>
        )[0]!;
        v.schema.openAPIV3Schema.properties.spec!["x-kubernetes-validations"] = [{ rule: "self.a +" }];
      },
      "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule",
    ],
    [
      "typeless field",
      (c: KubeObject) => {
        const v = (
          c.spec!.versions as Array<{
            schema: { openAPIV3Schema: { properties: Record<string, JsonSchema> } };
          }>
        )[0]!;
        v.schema.openAPIV3Schema.properties.spec!.properties = { a: {} };
      },
      "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[a].type",
    ],
    [
      "unknown scope",
      (c: KubeObject) => {
        c.spec!.scope = "Galaxy";
      },
      "spec.scope",
    ],
  ])("rejects a CRD: %s", (_name, mutate, field) => {
    const crd = crdWith({ spec: { type: "object" } });
    mutate(crd);
    const r = compileCrd(crd);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.causes.map((c) => c.field)).toContain(field);
  });

  it("returns the OpenAPI schema with the standard fields and the GVK", () => {
    const c = compile({ spec: { type: "object" } });
    expect(c.openApiSchema("v1")).toMatchObject({
      type: "object",
      properties: { apiVersion: { type: "string" }, kind: { type: "string" }, spec: { type: "object" } },
      "x-kubernetes-group-version-kind": [{ group: "example.com", version: "v1", kind: "Widget" }],
    });
  });
});

describe("pruneAndDefault (structural pruning)", () => {
  const c = compile({
    spec: {
      type: "object",
      properties: {
        known: { type: "string" },
        raw: {
          type: "object",
          "x-kubernetes-preserve-unknown-fields": true,
          properties: { typed: { type: "object", properties: { a: { type: "string" } } } },
        },
        labels: { type: "object", additionalProperties: { type: "string" } },
        items: { type: "array", items: { type: "object", properties: { name: { type: "string" } } } },
        embedded: {
          type: "object",
          "x-kubernetes-embedded-resource": true,
          properties: { spec: { type: "object", properties: { x: { type: "string" } } } },
        },
      },
    },
  });

  it.each([
    ["drops unknown fields", { known: "a", unknown: 1 }, { known: "a" }],
    [
      "keeps unknown fields under preserve-unknown-fields",
      { raw: { any: { deep: true } } },
      { raw: { any: { deep: true } } },
    ],
    [
      "still prunes known typed children under preserve-unknown-fields",
      { raw: { typed: { a: "x", b: "y" } } },
      { raw: { typed: { a: "x" } } },
    ],
    ["keeps additionalProperties entries", { labels: { a: "1", b: "2" } }, { labels: { a: "1", b: "2" } }],
    ["prunes inside array items", { items: [{ name: "a", junk: 1 }] }, { items: [{ name: "a" }] }],
    [
      "keeps apiVersion/kind/metadata of embedded resources",
      {
        embedded: {
          apiVersion: "v1",
          kind: "X",
          metadata: { name: "n", junk: 1 },
          spec: { x: "1", y: "2" },
          z: 1,
        },
      },
      { embedded: { apiVersion: "v1", kind: "X", metadata: { name: "n" }, spec: { x: "1" } } },
    ],
  ])("%s", (_name, spec, expected) => {
    expect(c.pruneAndDefault("v1", widget(spec)).spec).toEqual(expected);
  });

  it("never prunes ObjectMeta at the root, but drops fields ObjectMeta does not have", () => {
    const obj = widget({});
    obj.metadata = {
      name: "w",
      namespace: "ns",
      labels: { a: "b" },
      annotations: { x: "y" },
      finalizers: ["f"],
      ownerReferences: [{ apiVersion: "v1", kind: "K", name: "o", uid: "u" }],
      resourceVersion: "5",
      notObjectMeta: true,
    };
    const out = c.pruneAndDefault("v1", obj);
    expect(out.metadata).toEqual({
      name: "w",
      namespace: "ns",
      labels: { a: "b" },
      annotations: { x: "y" },
      finalizers: ["f"],
      ownerReferences: [{ apiVersion: "v1", kind: "K", name: "o", uid: "u" }],
      resourceVersion: "5",
    });
    expect(out.apiVersion).toBe("example.com/v1");
    expect(out.kind).toBe("Widget");
  });

  it("does not modify its input", () => {
    const input = widget({ known: "a", unknown: 1 });
    c.pruneAndDefault("v1", input);
    expect(input.spec).toEqual({ known: "a", unknown: 1 });
  });
});

describe("pruneAndDefault (structural defaulting)", () => {
  const c = compile({
    spec: {
      type: "object",
      default: {},
      properties: {
        mode: { type: "string", default: "MachineAPI" },
        nested: { type: "object", default: {}, properties: { n: { type: "integer", default: 3 } } },
        list: {
          type: "array",
          items: { type: "object", properties: { p: { type: "string", default: "d" } } },
        },
        map: {
          type: "object",
          additionalProperties: { type: "object", properties: { q: { type: "boolean", default: true } } },
        },
        nullableWithDefault: { type: "string", nullable: true, default: "x" },
        plain: { type: "string" },
      },
    },
  });

  it.each([
    ["applies a scalar default", {}, { mode: "MachineAPI" }],
    ["keeps a given value", { mode: "ClusterAPI" }, { mode: "ClusterAPI" }],
    ["applies nested defaults inside a defaulted object (top-down)", {}, { nested: { n: 3 } }],
    ["applies defaults inside array items", { list: [{}, { p: "x" }] }, { list: [{ p: "d" }, { p: "x" }] }],
    ["applies defaults inside additionalProperties", { map: { a: {} } }, { map: { a: { q: true } } }],
    ["replaces null of a non-nullable field with its default", { mode: null }, { mode: "MachineAPI" }],
    ["drops null of a non-nullable field without default", { plain: null }, {}],
    ["keeps null of a nullable field", { nullableWithDefault: null }, { nullableWithDefault: null }],
  ])("%s", (_name, spec, expected) => {
    expect(c.pruneAndDefault("v1", widget(spec)).spec).toMatchObject(expected);
    if ("plain" in (spec as object))
      expect(c.pruneAndDefault("v1", widget(spec)).spec).not.toHaveProperty("plain");
  });

  it("defaults an absent spec from the root", () => {
    const obj = widget({});
    delete obj.spec;
    expect(c.pruneAndDefault("v1", obj).spec).toEqual({
      mode: "MachineAPI",
      nested: { n: 3 },
      nullableWithDefault: "x",
    });
  });
});

describe("pruneAndDefault over a stored object's untouched subtrees", () => {
  const schema: Record<string, JsonSchema> = {
    spec: {
      type: "object",
      properties: {
        mode: { type: "string", default: "MachineAPI" },
        nested: { type: "object", default: {}, properties: { n: { type: "integer", default: 3 } } },
        list: {
          type: "array",
          items: { type: "object", properties: { p: { type: "string", default: "d" } } },
        },
      },
    },
    status: { type: "object", properties: { phase: { type: "string" } } },
  };
  const stored = (c: CompiledCrd): KubeObject =>
    c.pruneAndDefault("v1", widget({ list: [{}], extra: 1 }, { phase: "Running", extra: 2 }));

  it.each<[string, (o: KubeObject) => KubeObject]>([
    ["a status change keeps spec", (o) => ({ ...o, status: { phase: "Failed", unknown: 1 } })],
    [
      "a spec change keeps status",
      (o) => ({ ...o, spec: { ...o.spec, mode: null, list: [...(o.spec!.list as unknown[]), {}] } }),
    ],
    ["a metadata change keeps both", (o) => ({ ...o, metadata: { ...o.metadata, labels: { a: "b" } } })],
    ["the output again (restore after admission)", (o) => o],
  ])("same result as on a fresh copy, the stored object unchanged: %s", (_name, change) => {
    const c = compile(schema);
    const old = stored(c);
    const before = structuredClone(old);
    const input = change(old);
    const out = c.pruneAndDefault("v1", input);
    expect(out).toEqual(compile(schema).pruneAndDefault("v1", structuredClone(input)));
    expect(old).toEqual(before);
  });

  it("an untouched subtree the schema already pruned and defaulted is kept as the same object", () => {
    const c = compile(schema);
    const old = stored(c);
    const out = c.pruneAndDefault("v1", { ...old, status: { phase: "Failed" } });
    expect(out.spec).toBe(old.spec);
    expect(out.status).not.toBe(old.status);
  });

  it("a subtree from another compilation of the CRD is pruned and defaulted again", () => {
    const old = stored(compile(schema));
    const out = compile(schema).pruneAndDefault("v1", old);
    expect(out.spec).not.toBe(old.spec);
    expect(out).toEqual(old);
  });
});

describe("validate (schema keywords, kube messages)", () => {
  const c = compile(
    {
      spec: {
        type: "object",
        required: ["name"],
        properties: {
          name: { type: "string", minLength: 2, maxLength: 5, pattern: "^[a-z]+$" },
          count: { type: "integer", format: "int32", minimum: 0, maximum: 10 },
          big: { type: "integer", format: "int32" },
          ratio: { type: "number", exclusiveMinimum: true, minimum: 0, multipleOf: 0.5 },
          mode: { type: "string", enum: ["MachineAPI", "ClusterAPI"] },
          port: { "x-kubernetes-int-or-string": true },
          when: { type: "string", format: "date-time" },
          tags: {
            type: "array",
            minItems: 1,
            maxItems: 2,
            items: { type: "string" },
            "x-kubernetes-list-type": "set",
          },
          conditions: {
            type: "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["type"],
            items: { type: "object", required: ["type"], properties: { type: { type: "string" } } },
          },
          props: { type: "object", maxProperties: 1, additionalProperties: { type: "integer" } },
          nullable: { type: "string", nullable: true },
          flag: { type: "boolean" },
        },
      },
    },
    { required: ["spec"] },
  );
  // JSON round trip: a row's `name: undefined` means "absent", as it would on the wire.
  const causesOf = (spec: Record<string, unknown>) =>
    c.validate("v1", JSON.parse(JSON.stringify(widget({ name: "ab", ...spec }))), undefined);

  it("accepts a valid object", () => {
    expect(
      causesOf({
        count: 3,
        ratio: 1.5,
        mode: "ClusterAPI",
        port: "http",
        when: "2024-01-02T03:04:05Z",
        tags: ["a"],
        props: { a: 1 },
        nullable: null,
        flag: false,
        conditions: [{ type: "A" }, { type: "B" }],
      }),
    ).toEqual([]);
    expect(causesOf({ port: 8080 })).toEqual([]);
  });

  it.each([
    [
      "type",
      { count: "3" },
      {
        reason: "FieldValueTypeInvalid",
        field: "spec.count",
        message: 'Invalid value: "string": spec.count in body must be of type integer: "string"',
      },
    ],
    [
      "type (float for integer)",
      { count: 1.5 },
      {
        reason: "FieldValueTypeInvalid",
        field: "spec.count",
        message: 'Invalid value: "number": spec.count in body must be of type integer: "number"',
      },
    ],
    [
      "non-nullable null",
      { flag: null },
      {
        reason: "FieldValueTypeInvalid",
        field: "spec.flag",
        message: 'Invalid value: "null": spec.flag in body must be of type boolean: "null"',
      },
    ],
    [
      "enum",
      { mode: "Migrating" },
      {
        reason: "FieldValueNotSupported",
        field: "spec.mode",
        message: 'Unsupported value: "Migrating": supported values: "MachineAPI", "ClusterAPI"',
      },
    ],
    [
      "required",
      { name: undefined },
      { reason: "FieldValueRequired", field: "spec.name", message: "Required value" },
    ],
    [
      "maxLength",
      { name: "abcdef" },
      { reason: "FieldValueTooLong", field: "spec.name", message: "Too long: may not be longer than 5" },
    ],
    [
      "minLength",
      { name: "a" },
      {
        reason: "FieldValueInvalid",
        field: "spec.name",
        message: 'Invalid value: "a": spec.name in body should be at least 2 chars long',
      },
    ],
    [
      "pattern",
      { name: "AB" },
      {
        reason: "FieldValueInvalid",
        field: "spec.name",
        message: "Invalid value: \"AB\": spec.name in body should match '^[a-z]+$'",
      },
    ],
    [
      "minimum",
      { count: -1 },
      {
        reason: "FieldValueInvalid",
        field: "spec.count",
        message: "Invalid value: -1: spec.count in body should be greater than or equal to 0",
      },
    ],
    [
      "maximum",
      { count: 11 },
      {
        reason: "FieldValueInvalid",
        field: "spec.count",
        message: "Invalid value: 11: spec.count in body should be less than or equal to 10",
      },
    ],
    [
      "exclusiveMinimum",
      { ratio: 0 },
      {
        reason: "FieldValueInvalid",
        field: "spec.ratio",
        message: "Invalid value: 0: spec.ratio in body should be greater than 0",
      },
    ],
    [
      "multipleOf",
      { ratio: 0.7 },
      {
        reason: "FieldValueInvalid",
        field: "spec.ratio",
        message: "Invalid value: 0.7: spec.ratio in body should be a multiple of 0.5",
      },
    ],
    [
      "format date-time",
      { when: "yesterday" },
      {
        reason: "FieldValueInvalid",
        field: "spec.when",
        message: 'Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday"',
      },
    ],
    [
      "format int32",
      { big: 2 ** 31 },
      {
        reason: "FieldValueInvalid",
        field: "spec.big",
        message: 'Invalid value: 2147483648: spec.big in body must be of type int32: "2147483648"',
      },
    ],
    ["int-or-string", { port: true }, { reason: "FieldValueTypeInvalid", field: "spec.port" }],
    [
      "maxItems",
      { tags: ["a", "b", "c"] },
      { reason: "FieldValueTooMany", field: "spec.tags", message: "Too many: 3: must have at most 2 items" },
    ],
    [
      "minItems",
      { tags: [] },
      {
        reason: "FieldValueInvalid",
        field: "spec.tags",
        message: "Invalid value: 0: spec.tags in body should have at least 1 items",
      },
    ],
    [
      "listType set duplicates",
      { tags: ["a", "a"] },
      { reason: "FieldValueDuplicate", field: "spec.tags[1]", message: 'Duplicate value: "a"' },
    ],
    [
      "listType map duplicate keys",
      { conditions: [{ type: "A" }, { type: "A" }] },
      {
        reason: "FieldValueDuplicate",
        field: "spec.conditions[1]",
        message: 'Duplicate value: map[string]interface {}{"type":"A"}',
      },
    ],
    [
      "required inside array items",
      { conditions: [{}] },
      { reason: "FieldValueRequired", field: "spec.conditions[0].type" },
    ],
    [
      "additionalProperties schema",
      { props: { a: "x" } },
      { reason: "FieldValueTypeInvalid", field: "spec.props[a]" },
    ],
    [
      "maxProperties",
      { props: { a: 1, b: 2 } },
      {
        reason: "FieldValueTooMany",
        field: "spec.props",
        // kube-apiserver converts kube-openapi's TooManyProperties to field.TooMany, which says "items".
        message: "Too many: 2: must have at most 1 items",
      },
    ],
  ])("%s", (_name, spec, expected) => {
    const causes = causesOf(spec as Record<string, unknown>);
    expect(causes).toHaveLength(1);
    expect(causes[0]).toMatchObject(expected);
  });

  it("reports a missing required spec at the root", () => {
    const obj = widget({});
    delete obj.spec;
    expect(c.validate("v1", obj, undefined)).toEqual([
      { reason: "FieldValueRequired", field: "spec", message: "Required value" },
    ]);
  });

  it("collects every error, not the first", () => {
    expect(
      causesOf({ count: -1, mode: "x", name: "AB" })
        .map((e) => e.field)
        .sort(),
    ).toEqual(["spec.count", "spec.mode", "spec.name"]);
  });

  it("ratchets: an UPDATE that leaves an invalid value unchanged is accepted (kube ≥ 1.30)", () => {
    const old = widget({ name: "ab", count: 99 });
    const next = widget({ name: "ab", count: 99, mode: "MachineAPI" });
    expect(c.validate("v1", next, old)).toEqual([]);
    expect(c.validate("v1", widget({ name: "ab", count: 98 }), old)).toHaveLength(1);
  });
});

describe("SPEC §8.1: list types as kube's listtype validation (decision 135)", () => {
  const c = compile({
    spec: {
      type: "object",
      properties: {
        set: { type: "array", "x-kubernetes-list-type": "set", items: { type: "string" } },
        numbers: { type: "array", "x-kubernetes-list-type": "set", items: { type: "number" } },
        objects: {
          type: "array",
          "x-kubernetes-list-type": "set",
          items: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        },
        entries: {
          type: "array",
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["name", "port"],
          items: {
            type: "object",
            properties: {
              name: { type: "string" },
              port: { type: "integer" },
              v: { type: "string", maxLength: 1 },
            },
          },
        },
      },
    },
  });
  const duplicates = (spec: Record<string, unknown>) =>
    c.validate("v1", widget(spec), undefined).map((e) => `${e.field}: ${e.message}`);

  it.each([
    [
      "a value repeated names its first repeat only",
      { set: ["a", "b", "a", "a", "b"] },
      ['spec.set[2]: Duplicate value: "a"', 'spec.set[4]: Duplicate value: "b"'],
    ],
    ["numbers print bare", { numbers: [1.5, 2, 1.5] }, ["spec.numbers[2]: Duplicate value: 1.5"]],
    ["a string and a number of one text differ", { objects: [{ a: "1" }, { a: 1 }] }, []],
    [
      "objects equal whatever their key order, printed as Go's %#v prints them (keys sorted)",
      {
        objects: [
          { b: [1, "x", null], a: { c: true } },
          { a: { c: true }, b: [1, "x", null] },
        ],
      },
      [
        'spec.objects[1]: Duplicate value: map[string]interface {}{"a":map[string]interface {}{"c":true}, "b":[]interface {}{1, "x", interface {}(nil)}}',
      ],
    ],
    [
      "a map list names the first repeat of each key, by its key fields",
      {
        entries: [
          { name: "a", port: 1 },
          { name: "a", port: 1, v: "x" },
          { name: "a", port: 1 },
          { name: "a", port: 2 },
        ],
      },
      ['spec.entries[1]: Duplicate value: map[string]interface {}{"name":"a", "port":1}'],
    ],
  ])("%s", (_, spec, want) => {
    expect(duplicates(spec)).toEqual(want);
  });

  it("150,000 distinct items are not compared pairwise, and 150,000 repeats are each named", () => {
    // Pairwise, 150,000 distinct items are ~11 billion comparisons: the test would not finish.
    expect(duplicates({ set: Array.from({ length: 150_000 }, (_, i) => `t${i}`) })).toEqual([]);
    const repeats = Array.from({ length: 150_000 }, (_, i) => `t${i >> 1}`);
    expect(duplicates({ set: repeats })).toHaveLength(75_000);
  });

  it("an UPDATE of a 100,000-item map list ratchets each item against its old one by key (decision 138)", () => {
    // Each item searched the old list for its key: 100,000 × 100,000 — it did not finish.
    const entries = (changed: number) =>
      Array.from({ length: 100_000 }, (_, i) => ({
        name: `n${i}`,
        port: 1,
        v: i === changed ? "new" : "old",
      }));
    const old = widget({ entries: entries(-1) });
    const errors = c.validate("v1", widget({ entries: entries(99_999).reverse() }), old);
    // Every "old" value is invalid (maxLength 1) but unchanged, so ratcheted; the changed one is judged.
    expect(errors.map((e) => e.field)).toEqual(["spec.entries[0].v"]);
  });

  it("an item nested 10,000 levels deep is keyed and printed without exhausting the stack", () => {
    let deep: unknown = {};
    for (let i = 0; i < 10_000; i++) deep = { n: deep };
    const found = duplicates({ objects: [deep, deep] });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^spec\.objects\[1\]: Duplicate value: map\[string\]interface \{\}\{"n":map/);
  });
});

describe("validate (x-kubernetes-validations CEL)", () => {
  const c = compile({
    spec: {
      type: "object",
      "x-kubernetes-validations": [
        { rule: "!has(self.b) || has(self.a)", message: "b needs a", fieldPath: ".b" },
        {
          rule: "!has(self.a) || self.a != 'forbidden'",
          message: "a is forbidden",
          reason: "FieldValueForbidden",
          fieldPath: ".a",
        },
        { rule: "!has(self.n) || self.n < 100" },
        {
          rule: "!has(self.a) || self.a.size() < 10",
          messageExpression: "'a is ' + string(self.a.size()) + ' long'",
        },
      ],
      properties: {
        a: { type: "string" },
        b: { type: "string" },
        n: { type: "integer" },
        labels: {
          type: "object",
          additionalProperties: { type: "string" },
          "x-kubernetes-validations": [{ rule: "!('bad' in self)", message: "no bad key" }],
        },
      },
    },
    status: {
      type: "object",
      properties: {
        phase: {
          type: "string",
          "x-kubernetes-validations": [
            { rule: "self == oldSelf || oldSelf != 'Final'", message: "Final is final" },
          ],
        },
        gen: { type: "integer" },
      },
      "x-kubernetes-validations": [
        {
          rule: "!has(oldSelf.gen) || (has(self.gen) && self.gen >= oldSelf.gen)",
          message: "gen must not decrease",
          fieldPath: ".gen",
        },
      ],
    },
  });

  it.each([
    ["has() on an absent key passes", { a: "x" }, []],
    [
      "field rule with fieldPath",
      { b: "x" },
      [{ reason: "FieldValueInvalid", field: "spec.b", message: 'Invalid value: "object": b needs a' }],
    ],
    [
      "reason FieldValueForbidden",
      { a: "forbidden" },
      [{ reason: "FieldValueForbidden", field: "spec.a", message: "Forbidden: a is forbidden" }],
    ],
    [
      "no message: failed rule",
      { n: 100 },
      [
        {
          reason: "FieldValueInvalid",
          field: "spec",
          message: 'Invalid value: "object": failed rule: !has(self.n) || self.n < 100',
        },
      ],
    ],
    [
      "messageExpression",
      { a: "abcdefghijk" },
      [{ field: "spec", message: 'Invalid value: "object": a is 11 long' }],
    ],
    [
      "map 'in'",
      { labels: { bad: "1" } },
      [{ field: "spec.labels", message: 'Invalid value: "object": no bad key' }],
    ],
  ])("%s", (_name, spec, expected) => {
    const causes = c.validate("v1", widget(spec), undefined);
    expect(causes).toHaveLength(expected.length);
    for (const [i, e] of expected.entries()) expect(causes[i]).toMatchObject(e);
  });

  it("a rule whose evaluation fails reports the error instead of passing", () => {
    const bad = compile({
      spec: { type: "object", "x-kubernetes-validations": [{ rule: "self.missing == 'x'" }] },
    });
    const causes = bad.validate("v1", widget({}), undefined);
    expect(causes).toHaveLength(1);
    expect(causes[0]).toEqual({
      reason: "FieldValueInvalid",
      field: "spec",
      message: "Invalid value: \"object\": no such key: missing evaluating rule: self.missing == 'x'",
    });
  });

  it("transition rules (oldSelf) are skipped on CREATE", () => {
    expect(c.validate("v1", widget({}, { phase: "Other", gen: 1 }), undefined)).toEqual([]);
  });

  it.each([
    ["allows an unchanged final value", { phase: "Final" }, { phase: "Final" }, []],
    ["refuses leaving Final", { phase: "Final" }, { phase: "Other" }, ["status.phase"]],
    ["allows any move when there was no old value at the path", {}, { phase: "Other" }, []],
    ["refuses decreasing gen, error at fieldPath", { gen: 5 }, { gen: 4 }, ["status.gen"]],
    ["refuses removing gen", { gen: 5 }, {}, ["status.gen"]],
    ["allows increasing gen", { gen: 5 }, { gen: 6 }, []],
  ])("transition: %s", (_name, oldStatus, newStatus, fields) => {
    const causes = c.validate("v1", widget({}, newStatus), widget({}, oldStatus));
    expect(causes.map((x) => x.field)).toEqual(fields);
  });

  it("integers reach CEL as int, so int comparisons with literals work", () => {
    const causes = c.validate("v1", widget({ n: 99 }), undefined);
    expect(causes).toEqual([]);
  });
});

describe("CEL rules needing kube libraries @bufbuild/cel lacks", () => {
  it("are skipped and listed, never guessed; the CRD still compiles", () => {
    const c = compile({
      spec: {
        type: "object",
        properties: { l: { type: "array", items: { type: "integer" } }, a: { type: "integer" } },
        "x-kubernetes-validations": [
          { rule: "self.l.isSorted()", message: "sorted" },
          { rule: "self.?a.orValue(1) == 1", message: "optional" },
          { rule: "!has(self.a) || self.a > 0", message: "a must be positive" },
        ],
      },
    });
    expect(c.unsupportedRules?.map((r) => [r.field, r.reason])).toEqual([
      [
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule",
        "unsupported CEL functions: isSorted",
      ],
      [
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[1].rule",
        "CEL optional syntax is not supported",
      ],
    ]);
    expect(c.validate("v1", widget({ l: [2, 1], a: 2 }), undefined)).toEqual([]);
    expect(c.validate("v1", widget({ a: -1 }), undefined).map((x) => x.message)).toEqual([
      'Invalid value: "object": a must be positive',
    ]);
  });
});
