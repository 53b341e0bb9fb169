/**
 * CEL for CRD `x-kubernetes-validations` with @bufbuild/cel: rules are parsed and planned once when the
 * CRD is compiled, then run per request with `self` (and `oldSelf` for transition rules). JSON values are
 * handed to CEL as kube does: objects as maps, integers as int (BigInt), numbers of `type: number` as
 * double. Also exports the generic helpers the admission dispatcher uses for matchConditions.
 */
import { CelScalar, celEnv, isCelError, parse, plan } from "@bufbuild/cel";
import { strings } from "@bufbuild/cel/ext";
import type { JsonSchema } from "./structural.js";

export type CelProgram = (vars: Record<string, unknown>) => unknown;

export interface CompiledRule {
  readonly rule: string;
  readonly message: string | undefined;
  readonly messageExpression: CelProgram | undefined;
  readonly fieldPath: string | undefined;
  readonly reason: string | undefined;
  /** Transition rule: references `oldSelf`, so it runs only on UPDATE when an old value exists here. */
  readonly isTransition: boolean;
  readonly program: CelProgram;
}

/**
 * A rule this engine cannot run: it calls one of kube's CEL libraries @bufbuild/cel lacks (lists, url,
 * quantity, format, ip/cidr, optionals). Such rules are skipped, never guessed, and listed so the caller can
 * say so; upstream CRDs applied by the installer keep working.
 */
export interface UnsupportedRule {
  readonly field: string;
  readonly rule: string;
  readonly reason: string;
}

/** Walks a parsed expression looking for an identifier; the AST is plain protobuf-es messages. */
function referencesIdent(node: unknown, name: string, seen = new Set<unknown>()): boolean {
  if (typeof node !== "object" || node === null || seen.has(node)) return false;
  seen.add(node);
  const rec = node as Record<string, unknown>;
  if (rec.case === "identExpr" && (rec.value as { name?: unknown } | undefined)?.name === name) return true;
  for (const v of Object.values(rec)) {
    if (typeof v === "object" && v !== null && referencesIdent(v, name, seen)) return true;
  }
  return false;
}

/**
 * Compiles an expression over the given variable names (all `dyn`). Throws with the parser's message when
 * the expression does not parse; the caller turns that into a field error.
 */
export function compileExpression(
  expr: string,
  variables: readonly string[],
): { program: CelProgram; references: (ident: string) => boolean; missingFunctions: string[] } {
  const decl: Record<string, typeof CelScalar.DYN> = {};
  for (const v of variables) decl[v] = CelScalar.DYN;
  const env = celEnv({ variables: decl, funcs: strings });
  const parsed = parse(expr);
  const planned = plan(env, parsed) as (ctx: Record<string, unknown>) => unknown;
  const called = new Set<string>();
  collectCalls(parsed.expr, called);
  // Operators (`_&&_`, `_[_]`, `@in`, `!_`, ...) are planned natively; named functions must be in the env.
  const missingFunctions = [...called].filter((f) => !/^[_@!-]/.test(f) && env.funcs.find(f) === undefined);
  return {
    program: (vars) => planned(vars),
    references: (ident) => referencesIdent(parsed.expr, ident),
    missingFunctions,
  };
}

function collectCalls(node: unknown, out: Set<string>, seen = new Set<unknown>()): void {
  if (typeof node !== "object" || node === null || seen.has(node)) return;
  seen.add(node);
  const rec = node as Record<string, unknown>;
  if (rec.case === "callExpr") {
    const fn = (rec.value as { function?: unknown } | undefined)?.function;
    if (typeof fn === "string") out.add(fn);
  }
  for (const v of Object.values(rec)) if (typeof v === "object" && v !== null) collectCalls(v, out, seen);
}

/** CEL optional syntax (`a.?b`, `a[?k]`, `optional.of`) that the parser of @bufbuild/cel 0.6 rejects. */
const OPTIONAL_SYNTAX = /\.\?[A-Za-z_]|\[\?|\boptional\./;

type AstNode = { exprKind?: { case?: string; value?: Record<string, unknown> } };

const BOOL_FUNCTIONS = new Set([
  "_==_",
  "_!=_",
  "_<_",
  "_<=_",
  "_>_",
  "_>=_",
  "@in",
  "_&&_",
  "_||_",
  "!_",
  "@not_strictly_false",
  "startsWith",
  "endsWith",
  "contains",
  "matches",
  "exists",
  "all",
  "exists_one",
  "isSorted",
]);
const NON_BOOL_FUNCTIONS = new Set([
  "_+_",
  "_-_",
  "_*_",
  "_/_",
  "_%_",
  "-_",
  "_[_]",
  "size",
  "int",
  "uint",
  "double",
  "string",
  "bytes",
  "timestamp",
  "duration",
  "type",
  "dyn",
  "lowerAscii",
  "upperAscii",
  "trim",
  "replace",
  "split",
  "substring",
  "indexOf",
  "lastIndexOf",
  "join",
  "format",
]);

/**
 * What a parsed expression's checked type is known to be, for the "must evaluate to bool" check kube's
 * compiler makes (its variables are dyn or typed objects, so a bare variable or field is not a bool).
 * `unknown` where this engine, which has no type checker, cannot tell; such expressions are accepted.
 */
function boolness(node: AstNode | undefined): "bool" | "other" | "unknown" {
  const kind = node?.exprKind;
  const v = kind?.value ?? {};
  switch (kind?.case) {
    case "constExpr":
      return (v.constantKind as { case?: string } | undefined)?.case === "boolValue" ? "bool" : "other";
    case "identExpr":
    case "listExpr":
    case "structExpr":
      return "other";
    case "selectExpr":
      return v.testOnly === true ? "bool" : "other";
    case "callExpr": {
      const fn = String(v.function ?? "");
      if (fn === "_?_:_") {
        const args = (v.args ?? []) as AstNode[];
        const [a, b] = [boolness(args[1]), boolness(args[2])];
        return a === "bool" && b === "bool" ? "bool" : a === "other" || b === "other" ? "other" : "unknown";
      }
      return BOOL_FUNCTIONS.has(fn) ? "bool" : NON_BOOL_FUNCTIONS.has(fn) ? "other" : "unknown";
    }
    case "comprehensionExpr":
      return boolness(v.accuInit as AstNode | undefined) === "bool" ? "bool" : "unknown";
    default:
      return "unknown";
  }
}

function identifiers(node: unknown, names: Set<string>, bound: Set<string>, seen = new Set<unknown>()): void {
  if (typeof node !== "object" || node === null || seen.has(node)) return;
  seen.add(node);
  const rec = node as Record<string, unknown>;
  if (rec.case === "identExpr") names.add(String((rec.value as { name?: unknown } | undefined)?.name));
  if (rec.case === "comprehensionExpr") {
    const c = rec.value as Record<string, unknown>;
    for (const k of ["iterVar", "iterVar2", "accuVar"]) if (typeof c[k] === "string" && c[k]) bound.add(c[k]);
  }
  for (const v of Object.values(rec))
    if (typeof v === "object" && v !== null) identifiers(v, names, bound, seen);
}

/**
 * Checks an admission expression as kube's CEL compiler does before storing it (matchConditions): it must
 * parse, name only the given variables, and evaluate to a bool. Returns the error, or undefined.
 */
export function checkBoolExpression(expr: string, variables: readonly string[]): string | undefined {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(expr);
  } catch (e) {
    return `compilation failed: ${(e as Error).message}`;
  }
  const names = new Set<string>();
  const bound = new Set<string>();
  identifiers(parsed.expr, names, bound);
  const undeclared = [...names].find((n) => !variables.includes(n) && !bound.has(n));
  if (undeclared) return `compilation failed: ERROR: <input>: undeclared reference to '${undeclared}'`;
  return boolness(parsed.expr as AstNode) === "other" ? "must evaluate to bool" : undefined;
}

export const celFailed = (result: unknown): result is Error => isCelError(result);

/**
 * A runtime error as kube-apiserver's cel-go (v0.23) words it, for the errors whose @bufbuild/cel text
 * differs and carries what cel-go prints: a missing key, an integer division or modulus by zero. Others
 * (a list index out of range: cel-go names the list's size, which @bufbuild/cel's text does not carry) stay
 * as @bufbuild/cel words them.
 */
export const celGoErrorText = (message: string): string =>
  message
    .replace(/^field not found: /, "no such key: ")
    .replace(/^u?int divide by zero$/, "division by zero")
    .replace(/^u?int modulus by zero$/, "modulus by zero");

/**
 * JSON → CEL value, guided by the schema where there is one: integers become BigInt unless the schema
 * says `type: number`; objects become Maps (so `has()` works on absent keys of maps and objects alike).
 */
export function toCel(value: unknown, schema: JsonSchema | undefined): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === "number") {
    if (schema?.type === "number") return value;
    return Number.isInteger(value) ? BigInt(value) : value;
  }
  if (Array.isArray(value)) return value.map((v) => toCel(v, schema?.items));
  if (typeof value === "object") {
    const out = new Map<string, unknown>();
    const props = schema?.properties;
    const additional =
      typeof schema?.additionalProperties === "object" ? schema.additionalProperties : undefined;
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      out.set(k, toCel(v, props?.[k] ?? additional));
    }
    return out;
  }
  return value;
}

/** Plain JSON → CEL without a schema (matchConditions' object/oldObject/request). */
export const jsonToCel = (value: unknown): unknown => toCel(value, undefined);

/**
 * A JSON object handed to CEL as a map whose values are converted on first read and then kept. CEL reads a
 * native Map only through get/has/size/keys/entries/values/forEach, all of which go through `get` here, so an
 * expression that reads one field never pays for converting the others.
 */
export class LazyCelMap extends Map<string, unknown> {
  readonly #source: Readonly<Record<string, unknown>>;
  readonly #convert: (value: unknown) => unknown;
  readonly #converted = new Set<string>();

  constructor(source: Readonly<Record<string, unknown>>, convert: (value: unknown) => unknown) {
    super();
    this.#source = source;
    this.#convert = convert;
    for (const k of Object.keys(source)) super.set(k, undefined);
  }

  override get(key: string): unknown {
    if (!super.has(key)) return undefined;
    if (!this.#converted.has(key)) {
      super.set(key, this.#convert(this.#source[key]));
      this.#converted.add(key);
    }
    return super.get(key);
  }

  override forEach(
    callback: (value: unknown, key: string, map: Map<string, unknown>) => void,
    thisArg?: unknown,
  ): void {
    for (const k of super.keys()) callback.call(thisArg, this.get(k), k, this);
  }

  override *entries(): MapIterator<[string, unknown]> {
    for (const k of super.keys()) yield [k, this.get(k)];
  }

  override *values(): MapIterator<unknown> {
    for (const k of super.keys()) yield this.get(k);
  }

  override [Symbol.iterator](): MapIterator<[string, unknown]> {
    return this.entries();
  }
}

export function compileRules(
  schema: JsonSchema,
  at: string,
): {
  rules: CompiledRule[];
  errors: Array<{ field: string; rule: string; error: string }>;
  unsupported: UnsupportedRule[];
} {
  const rules: CompiledRule[] = [];
  const errors: Array<{ field: string; rule: string; error: string }> = [];
  const unsupported: UnsupportedRule[] = [];
  const list = schema["x-kubernetes-validations"];
  if (!Array.isArray(list)) return { rules, errors, unsupported };
  list.forEach((r, i) => {
    const field = `${at}.x-kubernetes-validations[${i}]`;
    if (typeof r?.rule !== "string" || r.rule.trim() === "") {
      errors.push({ field: `${field}.rule`, rule: "", error: "rule must not be empty" });
      return;
    }
    if (OPTIONAL_SYNTAX.test(r.rule)) {
      unsupported.push({
        field: `${field}.rule`,
        rule: r.rule,
        reason: "CEL optional syntax is not supported",
      });
      return;
    }
    try {
      const compiled = compileExpression(r.rule, ["self", "oldSelf"]);
      if (compiled.missingFunctions.length > 0) {
        unsupported.push({
          field: `${field}.rule`,
          rule: r.rule,
          reason: `unsupported CEL functions: ${compiled.missingFunctions.join(", ")}`,
        });
        return;
      }
      let messageExpression: CelProgram | undefined;
      if (typeof r.messageExpression === "string" && r.messageExpression.trim() !== "") {
        try {
          messageExpression = compileExpression(r.messageExpression, ["self", "oldSelf"]).program;
        } catch (e) {
          errors.push({
            field: `${field}.messageExpression`,
            rule: r.messageExpression,
            error: `messageExpression compilation failed: ${(e as Error).message}`,
          });
          return;
        }
      }
      rules.push({
        rule: r.rule,
        message: typeof r.message === "string" && r.message !== "" ? r.message : undefined,
        messageExpression,
        fieldPath: typeof r.fieldPath === "string" && r.fieldPath !== "" ? r.fieldPath : undefined,
        reason: typeof r.reason === "string" && r.reason !== "" ? r.reason : undefined,
        isTransition: compiled.references("oldSelf"),
        program: compiled.program,
      });
    } catch (e) {
      errors.push({
        field: `${field}.rule`,
        rule: r.rule,
        error: `compilation failed: ${(e as Error).message}`,
      });
    }
  });
  return { rules, errors, unsupported };
}

/**
 * Turns a rule's relative JSONPath `fieldPath` (`.a.b`, `.a['k.x']`, `.list[2]`) into kube field-path
 * segments appended to `base`. Unparseable input leaves the base path (kube rejects such CRDs up front).
 */
export function appendFieldPath(base: string, fieldPath: string): string {
  let out = base;
  const re = /\.([A-Za-z_$][\w$-]*)|\['((?:[^'\\]|\\.)*)'\]|\[(\d+)\]/gy;
  let m: RegExpExecArray | null = re.exec(fieldPath);
  let consumed = 0;
  while (m) {
    consumed = re.lastIndex;
    if (m[1] !== undefined) out = out ? `${out}.${m[1]}` : m[1];
    else if (m[2] !== undefined) out = `${out}[${m[2]}]`;
    else if (m[3] !== undefined) out = `${out}[${m[3]}]`;
    m = re.exec(fieldPath);
  }
  return consumed === fieldPath.length ? out : base;
}
