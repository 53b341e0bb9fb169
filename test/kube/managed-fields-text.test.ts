/**
 * SPEC §7 "the cache may drop managedFields": the informer cuts them from the API server's text before it
 * parses it (src/kube/managed-fields-text.ts). What must hold: the parse of the cut text is the parse of the
 * whole text less the carried objects' `metadata.managedFields` — no other field, wherever it sits and
 * whatever it is called — and a text the cut cannot follow is parsed as it came.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  cutManagedFields,
  type ObjectsAt,
  parseWithoutManagedFields,
} from "../../src/kube/managed-fields-text.js";

const MANAGED = [
  {
    manager: "capa-controller-manager",
    operation: "Update",
    fieldsType: "FieldsV1",
    fieldsV1: { "f:metadata": { "f:ownerReferences": { ".": {}, 'k:{"uid":"a\\"b}]"}': {} } } },
  },
];

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** The parse the cut must give: `value` less the managedFields (an array) of the objects it carries. */
function withoutCarriedManagedFields(value: unknown, at: ObjectsAt): unknown {
  const strip = (o: unknown): unknown => {
    if (!isRecord(o) || !isRecord(o.metadata) || !Array.isArray(o.metadata.managedFields)) return o;
    const { managedFields: _cut, ...metadata } = o.metadata;
    return { ...o, metadata };
  };
  if (at === "root") return strip(value);
  if (!isRecord(value)) return value;
  if (at === "event") return isRecord(value.object) ? { ...value, object: strip(value.object) } : value;
  if (at === "review") {
    if (!isRecord(value.request)) return value;
    const request = { ...value.request };
    for (const side of ["object", "oldObject"] as const)
      if (side in request) request[side] = strip(request[side]);
    return { ...value, request };
  }
  return Array.isArray(value.items) ? { ...value, items: value.items.map(strip) } : value;
}

const machine = (metadata: Record<string, unknown>, spec: unknown = { providerID: "aws:///i-1" }) => ({
  apiVersion: "cluster.x-k8s.io/v1beta2",
  kind: "Machine",
  metadata,
  spec,
});

describe("SPEC §7 the cache drops managedFields: cut from the text before it is parsed", () => {
  it.each<[string, ObjectsAt, unknown]>([
    ["a GET's object, managedFields first", "root", machine({ managedFields: MANAGED, name: "a" })],
    [
      "a GET's object, managedFields between",
      "root",
      machine({ name: "a", managedFields: MANAGED, uid: "u" }),
    ],
    ["a GET's object, managedFields last", "root", machine({ name: "a", uid: "u", managedFields: MANAGED })],
    ["a GET's object, managedFields alone", "root", machine({ managedFields: MANAGED })],
    ["a GET's object, managedFields empty", "root", machine({ name: "a", managedFields: [] })],
    [
      "a watch event's object",
      "event",
      { type: "MODIFIED", object: machine({ name: "a", managedFields: MANAGED }) },
    ],
    [
      "every item of a list, not the list's metadata",
      "list",
      {
        kind: "MachineList",
        metadata: { resourceVersion: "7", managedFields: MANAGED },
        items: [
          machine({ name: "a", managedFields: MANAGED }),
          machine({ name: "b" }),
          machine({ managedFields: MANAGED, name: "c" }),
        ],
      },
    ],
    [
      "a spec field, a label and an annotation of the same name stay",
      "root",
      machine(
        {
          name: "a",
          labels: { managedFields: "x" },
          annotations: { managedFields: '["managedFields":[]]' },
          managedFields: MANAGED,
        },
        { managedFields: [{ mine: true }], metadata: { managedFields: [1] } },
      ),
    ],
    [
      "a carried object's own `object` and `items` are not envelopes",
      "root",
      {
        metadata: { name: "a", managedFields: MANAGED },
        object: { metadata: { managedFields: [1] } },
        items: [{ metadata: { managedFields: [2] } }],
      },
    ],
    [
      "an event's metadata and a list's items under another key stay",
      "event",
      { type: "ADDED", metadata: { managedFields: [1] }, items: [{ metadata: { managedFields: [2] } }] },
    ],
    [
      "strings holding quotes, backslashes, brackets and the key itself",
      "event",
      {
        type: "MODIFIED",
        object: machine({
          name: 'a\\"],"managedFields":[{"',
          annotations: { x: '\\\\"managedFields":[' },
          managedFields: [{ fieldsV1: { 'k:{"name":"]}\\\\"}': { ".": {} } } }],
          uid: "\u2028\u00e9\ud83d\ude00",
        }),
      },
    ],
    ["managedFields that are not an array stay", "root", machine({ name: "a", managedFields: null })],
    [
      "an admission review's object and oldObject, not its response or another request field",
      "review",
      {
        kind: "AdmissionReview",
        request: {
          uid: "u",
          object: machine({ name: "a", managedFields: MANAGED }),
          options: { metadata: { managedFields: [1] } },
          oldObject: machine({ managedFields: MANAGED, name: "a" }),
        },
        response: { metadata: { managedFields: [2] } },
      },
    ],
    [
      "a CREATE's review: no oldObject",
      "review",
      { request: { object: machine({ name: "a", managedFields: MANAGED }), oldObject: null } },
    ],
  ])("%s", (_what, at, value) => {
    for (const text of [JSON.stringify(value), JSON.stringify(value, null, 2)]) {
      expect(JSON.parse(cutManagedFields(text, at))).toEqual(withoutCarriedManagedFields(value, at));
      expect(parseWithoutManagedFields(at)(text)).toEqual(withoutCarriedManagedFields(value, at));
    }
  });

  it("cuts only the bytes of the member and one comma", () => {
    const text = '{"metadata":{"name":"a","managedFields":[{"manager":"m"}],"uid":"u"},"spec":{}}';
    expect(cutManagedFields(text, "root")).toBe('{"metadata":{"name":"a","uid":"u"},"spec":{}}');
    expect(cutManagedFields('{"metadata":{"managedFields":[]}}', "root")).toBe('{"metadata":{}}');
  });

  it("duplicate managedFields keys: a list item's are all cut, no comma cut twice; one object's first only", () => {
    const list = (metadata: string) => `{"items":[{"metadata":${metadata}}]}`;
    expect(cutManagedFields(list('{"managedFields":[1],"managedFields":[2]}'), "list")).toBe(list("{}"));
    const three = list('{"a":1,"managedFields":[1],"managedFields":[2],"b":2}');
    expect(JSON.parse(cutManagedFields(three, "list"))).toEqual({ items: [{ metadata: { a: 1, b: 2 } }] });
    // One object carried: the scan ends at the first cut, and the parse keeps the last duplicate, as it would
    // have (the store drops it).
    const text = '{"metadata":{"managedFields":[1],"managedFields":[2]}}';
    expect(cutManagedFields(text, "root")).toBe('{"metadata":{"managedFields":[2]}}');
  });

  it.each<[string, string]>([
    ["a key spelled with an escape", '{"metadata":{"managed\\u0046ields":[1],"name":"a"}}'],
    ["an unterminated string", '{"metadata":{"managedFields":["abc]}}'],
    ["brackets that close the wrong container", '{"metadata":{"managedFields":[{"a":1]}],"name":"a"}}'],
    ["a text that ends inside managedFields", '{"metadata":{"managedFields":[[[1]'],
    ["no managedFields at all", '{"metadata":{"name":"a"}}'],
  ])("left as it came: %s", (_what, text) => {
    expect(cutManagedFields(text, "root")).toBe(text);
  });

  it("a spec nested 20,000 levels deep is skipped without recursion", () => {
    const deep = `${"[".repeat(20_000)}${"]".repeat(20_000)}`;
    const text = `{"metadata":{"managedFields":[1],"name":"a"},"spec":${deep}}`;
    expect(cutManagedFields(text, "root")).toBe(`{"metadata":{"name":"a"},"spec":${deep}}`);
    const event = `{"type":"ADDED","object":{"spec":${deep},"metadata":{"managedFields":[1]}}}`;
    expect(cutManagedFields(event, "event")).toBe(`{"type":"ADDED","object":{"spec":${deep},"metadata":{}}}`);
  });

  const metadataOf = fc
    .tuple(
      fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }),
      fc.option(fc.jsonValue({ maxDepth: 4 }), { nil: undefined }),
      fc.nat(5),
    )
    .map(([fields, managedFields, position]) => {
      // managedFields at any position among the other fields (JSON.stringify keeps insertion order).
      const entries = Object.entries(fields).filter(([k]) => k !== "managedFields");
      if (managedFields !== undefined)
        entries.splice(position % (entries.length + 1), 0, ["managedFields", managedFields]);
      return Object.fromEntries(entries);
    });
  const objectOf = fc.record({
    metadata: metadataOf,
    spec: fc.jsonValue({ maxDepth: 4 }),
    status: fc.dictionary(fc.constantFrom("managedFields", "metadata", "items", "object"), fc.jsonValue()),
  });

  it("property: the cut text parses to the text's parse less the carried objects' managedFields", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          objectOf.map((o) => ["root", o] as const),
          objectOf.map((o) => ["event", { type: "MODIFIED", object: o }] as const),
          fc
            .array(objectOf, { maxLength: 4 })
            .map((items) => ["list", { metadata: { resourceVersion: "1" }, items }] as const),
          fc.tuple(objectOf, fc.option(objectOf), fc.boolean()).map(
            ([object, oldObject, oldFirst]) =>
              [
                "review",
                {
                  request: oldFirst ? { oldObject, uid: "u", object } : { uid: "u", object, oldObject },
                },
              ] as const,
          ),
        ),
        fc.boolean(),
        ([at, value], pretty) => {
          const text = pretty ? JSON.stringify(value, null, 1) : JSON.stringify(value);
          expect(JSON.parse(cutManagedFields(text, at))).toEqual(
            withoutCarriedManagedFields(JSON.parse(text), at),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it("property: any JSON value under any shape — the cut parses as the whole text does, less managedFields", () => {
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.constantFrom<ObjectsAt>("root", "event", "list", "review"),
        (value, at) => {
          const text = JSON.stringify(value);
          expect(JSON.parse(cutManagedFields(text, at))).toEqual(
            withoutCarriedManagedFields(JSON.parse(text), at),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it("property: noise inside managedFields — the cut text is JSON exactly when the text is (what is cut is never parsed)", () => {
    const parsed = (text: string): { ok: true; value: unknown } | { ok: false } => {
      try {
        return { ok: true, value: JSON.parse(text) };
      } catch {
        return { ok: false };
      }
    };
    /** A JSON value's text with one character inserted, deleted or replaced at random. */
    const damaged = fc
      .tuple(
        fc.jsonValue({ maxDepth: 3 }),
        fc.nat(),
        fc.constantFrom("insert", "delete", "replace", "none"),
        fc.constantFrom(...'{}[]",:\\ -+.0123456789eEtrufalsn\u0001\t\nx'),
      )
      .map(([value, at, how, c]) => {
        const text = JSON.stringify([value]);
        const k = at % text.length;
        if (how === "insert") return text.slice(0, k) + c + text.slice(k);
        if (how === "delete") return text.slice(0, k) + text.slice(k + 1);
        if (how === "replace") return text.slice(0, k) + c + text.slice(k + 1);
        return text;
      });
    fc.assert(
      fc.property(damaged, fc.boolean(), (managedFields, pretty) => {
        const text = `{"request":{"uid":"u","object":{"metadata":{"name":"a",${pretty ? "\n  " : ""}"managedFields":${managedFields}}}}}`;
        const whole = parsed(text);
        const cut = parsed(cutManagedFields(text, "review"));
        expect(cut.ok).toBe(whole.ok);
        if (whole.ok && cut.ok) expect(cut.value).toEqual(withoutCarriedManagedFields(whole.value, "review"));
      }),
      { numRuns: 5000 },
    );
  });

  it("property: noise anywhere but inside managedFields — the cut text is JSON exactly when the text is", () => {
    const noise = fc.string({ unit: fc.constantFrom(...'{}[]",:\\ amnagedFilst01') });
    const templates = [
      (n: string) => `{"spec":${n},"metadata":{"managedFields":[1],"name":"a"}}`,
      (n: string) => `{"metadata":{"name":${n},"managedFields":[1]}}`,
      (n: string) => `{"metadata":{"managedFields":[1],"name":${n}}}`,
      (n: string) => `{"metadata":{"managedFields":[1]},"spec":${n}}`,
      (n: string) => `{"metadata":{"managedFields":[1]}}${n}`,
      (n: string) => `${n}{"metadata":{"managedFields":[1]}}`,
      (n: string) => n,
    ];
    const parsed = (text: string): { ok: true; value: unknown } | { ok: false } => {
      try {
        return { ok: true, value: JSON.parse(text) };
      } catch {
        return { ok: false };
      }
    };
    fc.assert(
      fc.property(noise, fc.nat(templates.length - 1), (n, t) => {
        const text = templates[t]!(n);
        const whole = parsed(text);
        const cut = parsed(cutManagedFields(text, "root"));
        expect(cut.ok).toBe(whole.ok);
        if (whole.ok && cut.ok) expect(cut.value).toEqual(withoutCarriedManagedFields(whole.value, "root"));
      }),
      { numRuns: 3000 },
    );
  });
});
