/**
 * Bounded YAML for text nobody vouches for: the transport and images ConfigMaps the installer reads (SPEC §6),
 * the files given to `convert` and `pack-provider -f`, and kubeconfig files (src/kube/config.ts). Every way such text can hurt the process — an
 * alias bomb or a dangling alias (yaml's `toJS` throws), an alias to its own container (a cyclic value),
 * nesting deep enough to exhaust yaml's recursive composer (a deep pile of `[` has crashed a process
 * outright), sheer size, a mapping of a great many keys (repeated keys are found with a set per mapping, not the
 * library's check, which compares every key with every other) — comes back as a problem naming the document,
 * never as an exception. Alias expansion uses the library's own `maxAliasCount`; nesting is measured on the
 * parser's syntax tree, built without recursion, before anything recursive runs. Values are JSON (YAML 1.2 core whatever a `%YAML`
 * directive says: no timestamps, binary, sets or merge keys); what they mean is the callers' business.
 * `stringifyYaml` writes YAML with the control characters the library leaves raw escaped (decision 158).
 */
import {
  Composer,
  CST,
  Document,
  type DocumentOptions,
  isScalar,
  LineCounter,
  type ParseOptions,
  Parser,
  type SchemaOptions,
  type ToStringOptions,
  visit,
} from "yaml";

export interface YamlBounds {
  /** UTF-8 bytes of text accepted at all. */
  maxBytes: number;
  maxDocuments: number;
  /**
   * What follows the first `maxDocuments` documents: refused (the default), or left unread — not even
   * tokenised — as kube-apiserver's body decoder leaves all but a body's first document.
   */
  pastMaxDocuments?: "refuse" | "unread";
  /** The yaml library's bound on alias expansion. */
  maxAliasCount: number;
  /** Bytes of JSON one document may expand to (aliases repeat what they point at). */
  maxDocumentBytes: number;
  /** Collections inside collections, in the text and once aliases are expanded. */
  maxDepth: number;
}

/** For files a person hands to a command: generous, but no input can exhaust memory or the stack. */
export const DEFAULT_YAML_BOUNDS: YamlBounds = Object.freeze({
  maxBytes: 64 * 1024 * 1024,
  maxDocuments: 100_000,
  maxAliasCount: 100,
  maxDocumentBytes: 64 * 1024 * 1024,
  // Kubernetes objects nest a few dozen levels (CRD schemas the most); yaml's composer fails near 800.
  maxDepth: 128,
});

/** A problem with the text. `bound` is true when a bound refused it, false when it is not valid YAML. */
export interface YamlProblem {
  bound: boolean;
  message: string;
}

export interface ParsedYamlDocument {
  document: Document.Parsed;
  /** 1-based position in the stream. */
  index: number;
  /** 1-based line where the document's content starts. */
  line: number;
}

const OPTIONS: ParseOptions & DocumentOptions & SchemaOptions = {
  schema: "core",
  resolveKnownTags: false,
  merge: false,
  // Repeated keys are refused, but found by `firstRepeatedKey`: the library's own check compares each key with
  // every key before it (a mapping of 40,000 keys took 13 s).
  uniqueKeys: false,
};

/** The library's message for a repeated key, which callers and admins have seen all along. */
const REPEATED_KEY = "Map keys must be unique";

/**
 * Where the first key repeated within one mapping of `document` is, in linear time: a set per mapping. Keys
 * are compared as the library's check compares them (`uniqueKeys: true`): scalars by value with `===` (so
 * `1` and `"1"` differ and NaN repeats nothing), other keys only by identity, which no two parsed keys share.
 */
function firstRepeatedKey(document: Document.Parsed): number | undefined {
  let first: number | undefined;
  visit(document, {
    Map(_key, map) {
      const seen = new Set<unknown>();
      for (const pair of map.items) {
        if (!isScalar(pair.key) || Number.isNaN(pair.key.value)) continue;
        const offset = pair.key.range?.[0];
        if (seen.has(pair.key.value) && offset !== undefined) first = Math.min(first ?? offset, offset);
        seen.add(pair.key.value);
      }
    },
  });
  return first;
}

const firstLine = (s: string): string => s.split("\n")[0] ?? s;

/** Parses every document of `text` without building values (callers may edit the nodes first). */
export function parseYamlDocuments(
  text: string,
  bounds: YamlBounds = DEFAULT_YAML_BOUNDS,
): { ok: true; documents: ParsedYamlDocument[] } | { ok: false; problem: YamlProblem } {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > bounds.maxBytes)
    return {
      ok: false,
      problem: {
        bound: true,
        message: `the text is ${bytes} bytes, beyond the bound of ${bounds.maxBytes} bytes`,
      },
    };
  const lineCounter = new LineCounter();
  let parsed: Document.Parsed[];
  try {
    // Counted as the parser yields them: a megabyte of `---` lines is a quarter of a million documents, which
    // must be refused before they are walked, composed or even all tokenised.
    const tokens: CST.Token[] = [];
    let count = 0;
    for (const token of new Parser(lineCounter.addNewLine).parse(text)) {
      if (token.type === "document" && ++count > bounds.maxDocuments) {
        if (bounds.pastMaxDocuments === "unread") break;
        return {
          ok: false,
          problem: { bound: true, message: `the text holds more than ${bounds.maxDocuments} YAML documents` },
        };
      }
      tokens.push(token);
      // `...` ends the last document read: what follows it is the unread rest, even before a `---`.
      if (token.type === "doc-end" && count === bounds.maxDocuments && bounds.pastMaxDocuments === "unread")
        break;
    }
    const tooDeep = deeperThan(tokens, bounds.maxDepth);
    if (tooDeep)
      return {
        ok: false,
        problem: {
          bound: true,
          message: `YAML document ${tooDeep.document} line ${lineCounter.linePos(tooDeep.offset).line}: nests deeper than the bound of ${bounds.maxDepth} levels`,
        },
      };
    parsed = [...new Composer(OPTIONS).compose(tokens)];
  } catch (e) {
    // The parser reports problems in `errors`; this is for whatever it did not foresee.
    return { ok: false, problem: { bound: false, message: `not YAML: ${firstLine(String(e))}` } };
  }
  const documents: ParsedYamlDocument[] = [];
  for (const [i, document] of parsed.entries()) {
    // The earlier of the library's first error and the first repeated key, as the library (which reports
    // both as it reads) named them.
    const error = document.errors[0];
    const repeated = firstRepeatedKey(document);
    const problem =
      repeated !== undefined && (error === undefined || repeated < error.pos[0])
        ? { offset: repeated, message: REPEATED_KEY }
        : error && { offset: error.pos[0], message: firstLine(error.message) };
    if (problem)
      return {
        ok: false,
        problem: {
          bound: false,
          message: `YAML document ${i + 1} line ${lineCounter.linePos(problem.offset).line}: ${problem.message}`,
        },
      };
    const start = document.contents?.range?.[0] ?? document.range[0];
    documents.push({ document, index: i + 1, line: lineCounter.linePos(start).line });
  }
  return { ok: true, documents };
}

/** The first collection nested deeper than `max` in the concrete syntax tree, walked without recursion. */
function deeperThan(
  tokens: readonly CST.Token[],
  max: number,
): { document: number; offset: number } | undefined {
  let document = 0;
  for (const token of tokens) {
    if (token.type !== "document") continue;
    document++;
    const stack: [CST.Token, number][] = token.value ? [[token.value, 0]] : [];
    while (stack.length > 0) {
      const [t, depth] = stack.pop()!;
      if (!CST.isCollection(t)) continue;
      if (depth + 1 > max) return { document, offset: t.offset };
      for (const item of t.items) {
        if (item.key) stack.push([item.key, depth + 1]);
        if (item.value) stack.push([item.value, depth + 1]);
      }
    }
  }
  return undefined;
}

type Expansion = { ok: true } | { ok: false; why: string };

/**
 * Walks a value as JSON would write it, counting bytes and stopping at the bound. Shared nodes (aliases) are
 * counted every time they appear, as JSON repeats them; a node inside itself is a cycle. Iterative, because
 * expanded aliases can nest deeper than the stack.
 */
function checkExpansion(value: unknown, bounds: YamlBounds): Expansion {
  const onPath = new Set<object>();
  const stack: { value?: unknown; depth: number; leave?: object }[] = [{ value, depth: 0 }];
  let bytes = 0;
  while (stack.length > 0) {
    const top = stack.pop()!;
    if (top.leave) {
      onPath.delete(top.leave);
      continue;
    }
    const v = top.value;
    if (v === null || typeof v === "boolean") bytes += 5;
    else if (typeof v === "string") bytes += v.length + 2;
    else if (typeof v === "number") {
      if (!Number.isFinite(v)) return { ok: false, why: `holds a value JSON cannot carry (${v})` };
      bytes += String(v).length;
    } else if (typeof v === "object" && (Array.isArray(v) || isPlainObject(v))) {
      if (onPath.has(v))
        return {
          ok: false,
          why: "an alias refers to a node that contains it, which no JSON object can hold",
        };
      const depth = top.depth + 1;
      if (depth > bounds.maxDepth)
        return {
          ok: false,
          why: `nests (its aliases included) deeper than the bound of ${bounds.maxDepth} levels`,
        };
      onPath.add(v);
      stack.push({ leave: v, depth });
      if (Array.isArray(v)) {
        bytes += 2 + v.length;
        for (const item of v) stack.push({ value: item, depth });
      } else
        for (const [k, item] of Object.entries(v)) {
          bytes += k.length + 4;
          stack.push({ value: item, depth });
        }
    } else return { ok: false, why: `holds a value JSON cannot carry (${describeType(v)})` };
    if (bytes > bounds.maxDocumentBytes)
      return {
        ok: false,
        why: `expands (its aliases and variables included) beyond the bound of ${bounds.maxDocumentBytes} bytes of JSON`,
      };
  }
  return { ok: true };
}

const isPlainObject = (v: object): boolean => {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};
const describeType = (v: unknown): string =>
  typeof v === "object" && v !== null ? (v.constructor?.name ?? "object") : typeof v;

/** The JSON value of one parsed document, within the bounds. */
export function documentValue(
  parsed: ParsedYamlDocument,
  bounds: YamlBounds = DEFAULT_YAML_BOUNDS,
): { ok: true; value: unknown } | { ok: false; problem: YamlProblem } {
  const where = `YAML document ${parsed.index} line ${parsed.line}`;
  let value: unknown;
  try {
    value = parsed.document.toJS({ maxAliasCount: bounds.maxAliasCount });
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    if (message.startsWith("Excessive alias count"))
      return {
        ok: false,
        problem: {
          bound: true,
          message: `${where}: its aliases expand beyond the bound of ${bounds.maxAliasCount} alias uses (maxAliasCount)`,
        },
      };
    const unresolved = /^Unresolved alias .*: (.*)$/.exec(message);
    if (unresolved)
      return {
        ok: false,
        problem: { bound: false, message: `${where}: alias *${unresolved[1]} refers to no anchor before it` },
      };
    return {
      ok: false,
      problem: { bound: e instanceof RangeError, message: `${where}: ${firstLine(message)}` },
    };
  }
  const expansion = checkExpansion(value, bounds);
  if (!expansion.ok) return { ok: false, problem: { bound: true, message: `${where}: ${expansion.why}` } };
  return { ok: true, value };
}

/** Every document of `text` as a JSON value (an empty document is null), or the first problem. */
export function parseYaml(
  text: string,
  bounds: YamlBounds = DEFAULT_YAML_BOUNDS,
): { ok: true; values: unknown[] } | { ok: false; problem: YamlProblem } {
  const parsed = parseYamlDocuments(text, bounds);
  if (!parsed.ok) return parsed;
  const values: unknown[] = [];
  for (const document of parsed.documents) {
    const value = documentValue(document, bounds);
    if (!value.ok) return value;
    values.push(value.value ?? null);
  }
  return { ok: true, values };
}

/** The bidirectional controls (embeddings, overrides, isolates) that reorder what a terminal or editor shows. */
const BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069]/;
/**
 * Lines of spaces and tabs only: yaml 2.9's block scalar drops a space of them (`" \n"` is written `|+` and
 * reads back `"\n"`), so such a string is written in double quotes instead.
 */
const BLANK_LINES = /^[ \t\n]*\n[ \t\n]*$/;
/** What the library writes raw even in double quotes: DEL, the C1 controls, the bidirectional controls. */
const RAW_IN_DOUBLE_QUOTES = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

const yamlEscape = (c: string): string => {
  const code = c.charCodeAt(0);
  const hex = code.toString(16).toUpperCase();
  return code <= 0xff ? `\\x${hex}` : `\\u${hex}`;
};

/**
 * `value` as YAML, as the library's `stringify` writes it, but with no DEL, C1 or bidirectional control
 * left raw (decision 158): a string holding one is written in double quotes with the character as an escape
 * (`\x9B`, `\u202E`), which reads back as the same string — as Go's YAML writer, and so `kubectl -o yaml`,
 * escapes DEL and C1. The library already double-quotes any string with DEL or a C1 control (and writes the
 * character raw inside); strings with a bidirectional control are double-quoted here. So every such character
 * in the text is inside double quotes, where the escape means the character itself. Strings of blank lines are
 * double-quoted too, as the library's block scalars lose a space of them.
 */
export function stringifyYaml(value: unknown, options: ToStringOptions = {}): string {
  return documentText(new Document(value), options);
}

/** A document's text as `stringifyYaml` writes a value's (its scalars' styles changed where it must). */
export function documentText(doc: Document, options: ToStringOptions = {}): string {
  visit(doc, {
    Scalar(_, node) {
      if (typeof node.value === "string" && (BIDI_CONTROLS.test(node.value) || BLANK_LINES.test(node.value)))
        node.type = "QUOTE_DOUBLE";
    },
  });
  return doc.toString(options).replace(RAW_IN_DOUBLE_QUOTES, yamlEscape);
}
