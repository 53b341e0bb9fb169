/**
 * Bounded YAML (src/yaml.ts, SPEC §6 "YAML alias expansion and document size are bounded"): JSON-shaped
 * values from YAML 1.2 core only; alias bombs, recursive and dangling aliases, oversized text, too many
 * documents and documents that expand too far are problems naming the document, never exceptions — for any
 * input. And the commands that read YAML files (`convert -f`, `pack-provider -f`) turn an alias bomb into
 * exit 2 and one line on stderr, never a stack trace.
 */
import { spawn } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Composer, LineCounter, Parser, parseAllDocuments, visit } from "yaml";
import { DEFAULT_YAML_BOUNDS, parseYaml, stringifyYaml, type YamlBounds } from "../src/yaml.js";

const ALIAS_BOMB = [
  'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]",
  "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]",
  "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]",
  "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]",
  "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]",
  "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]",
  "",
].join("\n");
const BOMB_MESSAGE =
  "YAML document 1 line 1: its aliases expand beyond the bound of 100 alias uses (maxAliasCount)";

const small = (over: Partial<YamlBounds>): YamlBounds => ({ ...DEFAULT_YAML_BOUNDS, ...over });

describe("parseYaml: values", () => {
  it("every document as a JSON value, empty documents as null", () => {
    expect(parseYaml("a: 1\n---\n---\n- x\n- 2\n")).toEqual({ ok: true, values: [{ a: 1 }, null, ["x", 2]] });
  });

  it("a few aliases within the bound are expanded", () => {
    expect(parseYaml("a: &a {x: 1}\nb: *a\n")).toEqual({ ok: true, values: [{ a: { x: 1 }, b: { x: 1 } }] });
  });

  it("the YAML 1.2 core schema whatever a %YAML directive says: no timestamps, binary, sets or merge keys", () => {
    expect(
      parseYaml("%YAML 1.1\n---\nwhen: 2001-12-14\nblob: !!binary aGk=\nset: !!set {x}\n<<: {m: 1}\n"),
    ).toEqual({ ok: true, values: [{ when: "2001-12-14", blob: "aGk=", set: { x: null }, "<<": { m: 1 } }] });
  });

  it("a __proto__ key is data, not a prototype", () => {
    const result = parseYaml("__proto__: {polluted: true}\n");
    expect(result.ok).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe("parseYaml: bounds are problems, never exceptions", () => {
  it.each([
    ["an alias bomb", ALIAS_BOMB, true, BOMB_MESSAGE],
    [
      "an alias to the node that contains it",
      "a: &a [x, *a]\n",
      true,
      "YAML document 1 line 1: an alias refers to a node that contains it, which no JSON object can hold",
    ],
    [
      "an alias to no anchor",
      "a: 1\n---\nb: *nowhere\n",
      false,
      "YAML document 2 line 3: alias *nowhere refers to no anchor before it",
    ],
    [
      "a value JSON cannot carry",
      "a: .inf\n",
      true,
      "YAML document 1 line 1: holds a value JSON cannot carry (Infinity)",
    ],
  ])("%s", (_, text, bound, message) => {
    expect(parseYaml(text)).toEqual({ ok: false, problem: { bound, message } });
  });

  it("text over maxBytes", () => {
    expect(parseYaml("a: 12345\n", small({ maxBytes: 8 }))).toEqual({
      ok: false,
      problem: { bound: true, message: "the text is 9 bytes, beyond the bound of 8 bytes" },
    });
  });

  it("more documents than maxDocuments", () => {
    expect(parseYaml("a\n---\nb\n---\nc\n", small({ maxDocuments: 2 }))).toEqual({
      ok: false,
      problem: { bound: true, message: "the text holds more than 2 YAML documents" },
    });
  });

  it("more documents than maxDocuments are refused as the count passes the bound, before any is composed or measured", () => {
    // The third document nests past maxDepth: had the documents been walked or composed before they were
    // counted (1 MiB of "---" lines built 262,000 of them first), the depth would be the problem named.
    const deep = `${"[".repeat(10)}${"]".repeat(10)}`;
    expect(parseYaml(`a\n---\nb\n---\n${deep}\n`, small({ maxDocuments: 2, maxDepth: 5 }))).toEqual({
      ok: false,
      problem: { bound: true, message: "the text holds more than 2 YAML documents" },
    });
  });

  describe("past maxDocuments unread (kube's body decoder reads the first document only)", () => {
    const firstOnly = small({ maxDocuments: 1, pastMaxDocuments: "unread" });
    it.each([
      ["two documents", "a: 1\n---\nb: 2\n", [{ a: 1 }]],
      ["a second document that is not YAML", "a: 1\n---\na: [\n  b: {\n: : :\n", [{ a: 1 }]],
      ["a second document past the depth bound", `a: 1\n---\n${"[".repeat(600)}\n`, [{ a: 1 }]],
      ["an alias bomb after the first", `a: 1\n---\n${ALIAS_BOMB}`, [{ a: 1 }]],
      ["an empty first document", "---\n---\na: 1\n", [null]],
      ["a comment, then a document", "# c\n---\na: 1\n", [{ a: 1 }]],
      ["a document end marker, then more", "a: 1\n...\n]]]\n", [{ a: 1 }]],
      ["one document", "a: 1\n", [{ a: 1 }]],
    ])("%s", (_, text, values) => {
      expect(parseYaml(text, firstOnly)).toEqual({ ok: true, values });
    });
    it("the first document's own problems are still named", () => {
      expect(parseYaml("a: [\n---\nb: 2\n", firstOnly)).toMatchObject({
        ok: false,
        problem: { bound: false },
      });
      // Not YAML after the first document, with no marker ending it: still the first document's text.
      expect(parseYaml("a: 1\n]]]\n---\nb: 2\n", firstOnly)).toMatchObject({
        ok: false,
        problem: { bound: false },
      });
      expect(parseYaml(`${"[".repeat(600)}\n---\nb: 2\n`, firstOnly)).toMatchObject({
        ok: false,
        problem: { bound: true },
      });
    });
    it("a million document markers after the first are not tokenised", () => {
      expect(parseYaml(`a: 1\n${"---\n".repeat(1_000_000)}`, firstOnly)).toEqual({
        ok: true,
        values: [{ a: 1 }],
      });
    });
  });

  it("a document whose aliases expand past maxDocumentBytes", () => {
    const text = `a: &a "${"x".repeat(100)}"\nb: [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n`;
    expect(parseYaml(text, small({ maxDocumentBytes: 1000 }))).toEqual({
      ok: false,
      problem: {
        bound: true,
        message:
          "YAML document 1 line 1: expands (its aliases and variables included) beyond the bound of 1000 bytes of JSON",
      },
    });
  });

  it("nesting deeper than maxDepth, however deep (a deep pile has crashed the yaml library's composer)", () => {
    for (const depth of [129, 200_000])
      expect(parseYaml(`a: 1\n---\nb: ${"[".repeat(depth)}${"]".repeat(depth)}\n`)).toEqual({
        ok: false,
        problem: {
          bound: true,
          message: "YAML document 2 line 3: nests deeper than the bound of 128 levels",
        },
      });
    expect(parseYaml(`${"[".repeat(127)}${"]".repeat(127)}`).ok).toBe(true);
  });

  it("aliases nesting a document deeper than maxDepth", () => {
    expect(parseYaml("a: &a [[1]]\nb: [[*a]]\n", small({ maxDepth: 4 }))).toEqual({
      ok: false,
      problem: {
        bound: true,
        message: "YAML document 1 line 1: nests (its aliases included) deeper than the bound of 4 levels",
      },
    });
  });

  it("any text: a result, never a throw", () => {
    const fragments = fc.constantFrom(
      "&a ",
      "*a",
      "[",
      "]",
      "{",
      "}",
      ": ",
      "- ",
      "\n",
      "---\n",
      "x",
      "!!",
      "%YAML 1.1\n",
      "? ",
      "'",
      '"',
      "#",
      "  ",
    );
    fc.assert(
      fc.property(fc.array(fragments, { maxLength: 60 }), (parts) => {
        const result = parseYaml(parts.join(""));
        expect(typeof result.ok).toBe("boolean");
      }),
      { numRuns: 500 },
    );
  });
});

describe("parseYaml: a mapping that repeats a key is refused, and finding that is linear", () => {
  it.each([
    ["a block mapping", "a: 1\nb: 2\na: 3\n", 3],
    ["a flow mapping", "{a: 1, b: 2, a: 3}\n", 1],
    ["a plain and a quoted key of one string", "a: 1\n'a': 2\n", 2],
    ["two empty keys", ": 1\n: 2\n", 2],
    ["a nested mapping, in a later document", "x: 1\n---\nm:\n  k: 1\n  j: 2\n  k: 3\n", 6],
    ["the earliest of two, the inner one", "m:\n  k: 1\n  k: 2\nm: 3\n", 3],
    ["a mapping in a sequence", "- {a: 1}\n- a: 1\n  a: 2\n", 3],
  ])("%s", (_, text, line) => {
    const document = text.split("---\n").length;
    expect(parseYaml(text)).toEqual({
      ok: false,
      problem: { bound: false, message: `YAML document ${document} line ${line}: Map keys must be unique` },
    });
  });

  it.each([
    ["a number and a string that read alike", "1: a\n'1': b\n", [{ 1: "b" }]],
    ["the same key in two mappings", "a: {k: 1}\nb: {k: 2}\n", [{ a: { k: 1 }, b: { k: 2 } }]],
    ["the same key in two documents", "k: 1\n---\nk: 2\n", [{ k: 1 }, { k: 2 }]],
    ["single-pair mappings in a flow sequence", "[a: 1, a: 2]\n", [[{ a: 1 }, { a: 2 }]]],
  ])("not a repeated key: %s", (_, text, values) => {
    expect(parseYaml(text)).toEqual({ ok: true, values });
  });

  it("refuses what the yaml library's own check (uniqueKeys: true) refuses: the same document, one of its problems", () => {
    // Every problem the library names in the first document it refuses. A document with a repeated key and
    // another problem may be named by either (the earlier in the text), as both are refusals; and a repeated
    // empty key (`: 1` twice) is named on the line the library gives its empty node, which may differ from the
    // line of its own check (that one is off too: `":\n:"` names line 1 for the second key).
    const library = (text: string): { document: number; line: number; problem: string }[] => {
      const lines = new LineCounter();
      const options = { schema: "core", resolveKnownTags: false, merge: false, uniqueKeys: true } as const;
      const tokens = new Parser(lines.addNewLine).parse(text);
      for (const [i, document] of [...new Composer(options).compose(tokens)].entries())
        if (document.errors.length > 0)
          return document.errors.map((e) => ({
            document: i + 1,
            line: lines.linePos(e.pos[0]).line,
            problem: e.message.split("\n")[0] ?? "",
          }));
      return [];
    };
    const hasEmptyKey = (text: string): boolean => {
      let found = false;
      for (const document of parseAllDocuments(text, { uniqueKeys: false }))
        visit(document, {
          Scalar(key, node) {
            if (key === "key" && node.range?.[0] === node.range?.[1]) found = true;
          },
        });
      return found;
    };
    const named = (message: string) => {
      const [, document, line, problem] = /^YAML document (\d+) line (\d+): (.*)$/.exec(message) ?? [];
      return { document: Number(document), line: Number(line), problem };
    };
    const fragments = fc.constantFrom(
      "a",
      "b",
      "'a'",
      '"b"',
      "1",
      "'1'",
      ": ",
      ":",
      "- ",
      "\n",
      "  ",
      "{",
      "}",
      "[",
      "]",
      ", ",
      "? ",
      "&x ",
      "*x",
      "!!str ",
      "---\n",
      "~",
      "#c",
    );
    fc.assert(
      fc.property(fc.array(fragments, { maxLength: 40 }), (parts) => {
        const text = parts.join("");
        const expected = library(text);
        const result = parseYaml(text);
        if (expected.length === 0) {
          if (!result.ok) expect(result.problem.message).not.toMatch(/Map keys must be unique/);
          return;
        }
        if (result.ok || result.problem.bound)
          throw new Error(`${JSON.stringify(text)}: ${JSON.stringify(result)}`);
        const got = named(result.problem.message);
        expect(got.document).toBe(expected[0]?.document);
        expect(expected.map((e) => e.problem)).toContain(got.problem);
        // The line is the library's too, but for two of its quirks: a repeated empty key, and an explicit key
        // (`? "b"a`, the library pointing at what follows the first key) — ours names the repeated key's line.
        if (expected.length === 1 && !hasEmptyKey(text) && !text.includes("? "))
          expect(got).toEqual(expected[0]);
      }),
      {
        numRuns: 10_000,
        // Compared with another library's error positions on malformed text, whose quirks a random seed finds
        // now and then (see above): a fixed seed in CI, any other through YAML_PROPERTY_SEED to look for more.
        seed: Number(process.env.YAML_PROPERTY_SEED ?? 20261207),
      },
    );
  });

  it("a mapping of 200,000 keys is read, its repeated last key found (the library's own check took 13 s at 40,000)", () => {
    // The library compares each key with every key before it: minutes for this one (quadratic), where a
    // set per mapping takes a second or two. vitest's timeout is only a guard here, never a measurement.
    const keys = 200_000;
    const lines: string[] = [];
    for (let i = 0; i < keys; i++) lines.push(`k${i}: ""`);
    expect(parseYaml(`${lines.join("\n")}\nk0: again\n`)).toEqual({
      ok: false,
      problem: { bound: false, message: `YAML document 1 line ${keys + 1}: Map keys must be unique` },
    });
  });
});

describe("stringifyYaml: no DEL, C1 or bidirectional control left raw (decision 158)", () => {
  const RAW = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

  it.each([
    ["a C1 control (CSI)", { v: "a\u009bb" }, 'v: "a\\x9Bb"\n'],
    ["DEL", { v: "a\u007f" }, 'v: "a\\x7F"\n'],
    ["a right-to-left override", { v: "a\u202eb" }, 'v: "a\\u202Eb"\n'],
    ["an isolate, in a key", { "k\u2066": "v" }, '"k\\u2066": v\n'],
    ["blank lines (the library's block scalar loses a space of them)", { v: " \n" }, 'v: "\\ \\n"\n'],
    [
      "nothing to escape: as the library writes it",
      { v: "plain", n: [1, "two"] },
      "v: plain\nn:\n  - 1\n  - two\n",
    ],
  ])("%s", (_, value, text) => {
    expect(stringifyYaml(value)).toBe(text);
  });

  it("any value reads back the same, with none of those characters raw, whatever the line width", () => {
    // Found by this property: `{"": " \n"}` read back as `{"": "\n"}` (yaml 2.9's `|+` block scalar).
    const chars = fc.constantFrom(
      "a",
      " ",
      "\n",
      "\t",
      "#",
      ":",
      "-",
      '"',
      "\\",
      "\u0085",
      "\u009b",
      "\u007f",
      "\u202e",
      "\u2069",
      "\u00a0",
      "\u001b",
      "é",
    );
    const text = fc.array(chars, { maxLength: 12 }).map((cs) => cs.join(""));
    const value = fc.dictionary(text, fc.oneof(text, fc.array(text, { maxLength: 3 })), { maxKeys: 4 });
    fc.assert(
      fc.property(value, fc.constantFrom(0, 20, 80), (v, lineWidth) => {
        const yaml = stringifyYaml(v, { lineWidth });
        expect(yaml).not.toMatch(RAW);
        const back = parseYaml(yaml);
        expect(back.ok && back.values[0]).toEqual(Object.keys(v).length === 0 ? {} : v);
      }),
      { numRuns: 500 },
    );
  });
});

describe("the commands that read YAML files: an alias bomb is exit 2 and one line, no stack trace", () => {
  const ROOT = fileURLToPath(new URL("../", import.meta.url));
  const cli = (
    args: string[],
    stdin = "",
  ): Promise<{ code: number | null; stdout: string; stderr: string }> =>
    new Promise((resolve, reject) => {
      const child = spawn("npx", ["tsx", "src/cli.ts", ...args], { cwd: ROOT });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (c: Buffer) => {
        stdout += c.toString();
      });
      child.stderr.on("data", (c: Buffer) => {
        stderr += c.toString();
      });
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, stdout, stderr }));
      child.stdin.end(stdin);
    });
  const bombFile = async (): Promise<string> => {
    const path = join(await mkdtemp(join(tmpdir(), "yaml-bomb-")), "bomb.yaml");
    await writeFile(path, ALIAS_BOMB);
    return path;
  };
  const INFRA = "test/fixtures/convert/infrastructure.yaml";

  it("convert -f FILE", async () => {
    const bomb = await bombFile();
    const result = await cli(["convert", "--to", "capi", "--infrastructure", INFRA, "-f", bomb]);
    expect(result).toEqual({ code: 2, stdout: "", stderr: `error: ${bomb}: ${BOMB_MESSAGE}\n` });
  });

  it("convert -f - (stdin) and --infrastructure FILE", async () => {
    const bomb = await bombFile();
    const fromStdin = await cli(
      ["convert", "--to", "capi", "--infrastructure", INFRA, "-f", "-"],
      ALIAS_BOMB,
    );
    expect(fromStdin).toEqual({ code: 2, stdout: "", stderr: `error: <stdin>: ${BOMB_MESSAGE}\n` });
    const asInfrastructure = await cli(["convert", "--to", "capi", "--infrastructure", bomb, "-f", INFRA]);
    expect(asInfrastructure).toEqual({
      code: 2,
      stdout: "",
      stderr: `error: --infrastructure: ${bomb}: ${BOMB_MESSAGE}\n`,
    });
  });

  it("convert -f FILE with an alias to no anchor: exit 1 naming it, no stack trace", async () => {
    const path = join(await mkdtemp(join(tmpdir(), "yaml-dangling-")), "dangling.yaml");
    await writeFile(
      path,
      "apiVersion: machine.openshift.io/v1beta1\nkind: Machine\nmetadata:\n  name: *nothere\n",
    );
    const result = await cli(["convert", "--to", "capi", "--infrastructure", INFRA, "-f", path]);
    expect(result).toEqual({
      code: 1,
      stdout: "",
      stderr: `error: ${path}: invalid YAML: YAML document 1 line 1: alias *nothere refers to no anchor before it\n`,
    });
  });

  it("pack-provider -f FILE", async () => {
    const bomb = await bombFile();
    const result = await cli([
      "pack-provider",
      "--name",
      "aws",
      "--type",
      "infrastructure",
      "--version",
      "v1",
      "-f",
      bomb,
    ]);
    expect(result).toEqual({ code: 2, stdout: "", stderr: `pack-provider: components: ${BOMB_MESSAGE}\n` });
  });
});
