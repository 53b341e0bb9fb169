/**
 * Layers point one way (issue 18): src/kube is the runtime every other layer builds on, so it imports nothing
 * from the layers above it (policies, sync, migration, server, …) — only itself, packages, Node's modules and
 * the leaf modules (logging, JSON text, bounded YAML). The policy engine imports nothing from the sync
 * controllers or the server. Read from the import lines of the source files themselves, so a new import that
 * breaks a layer fails here.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = resolve(import.meta.dirname, "../../src");

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );

/** Every module specifier of static imports, re-exports and dynamic imports in `text`. */
const specifiersOf = (text: string): string[] => [
  ...[...text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s*"([^"]+)"/gms)].map((m) => m[1]!),
  ...[...text.matchAll(/^\s*import\s*"([^"]+)"/gm)].map((m) => m[1]!),
  ...[...text.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g)].map((m) => m[1]!),
];

/** The src-relative paths (`policies/types.ts`) the relative imports of `file` resolve to. */
const localImportsOf = (file: string): { from: string; to: string }[] =>
  specifiersOf(readFileSync(file, "utf8"))
    .filter((s) => s.startsWith("."))
    .map((s) => ({
      from: relative(SRC, file),
      to: relative(SRC, resolve(dirname(file), s)).replace(/\.js$/, ".ts"),
    }));

const layerOf = (srcPath: string): string => (srcPath.includes("/") ? srcPath.split("/")[0]! : srcPath);

describe("import parsing", () => {
  it("finds static, multi-line, re-exported, side-effect and dynamic imports", () => {
    const text = [
      'import type { A } from "../policies/types.js";',
      "import {\n  b,\n  c,\n} from './nope';",
      'import {\n  d,\n} from "./object.js";',
      'export { e } from "../sync/writes.js";',
      'import "./side.js";',
      'const m = await import("../migration/x.js");',
    ].join("\n");
    expect(specifiersOf(text)).toEqual([
      "../policies/types.js",
      "./object.js",
      "../sync/writes.js",
      "./side.js",
      "../migration/x.js",
    ]);
  });
  it("reads src/kube's own imports (the check below is not vacuous)", () => {
    const imports = sourceFiles(join(SRC, "kube")).flatMap(localImportsOf);
    expect(imports).toContainEqual({ from: "kube/write.ts", to: "kube/client.ts" });
  });
});

describe("layers point one way", () => {
  const LEAVES = ["logging.ts", "json-text.ts", "yaml.ts"];

  it("src/kube imports only src/kube and the leaf modules", () => {
    const outside = sourceFiles(join(SRC, "kube"))
      .flatMap(localImportsOf)
      .filter(({ to }) => layerOf(to) !== "kube" && !LEAVES.includes(to));
    expect(outside).toEqual([]);
  });

  it.each(LEAVES)("%s, a leaf src/kube uses, imports nothing from src", (leaf) => {
    expect(localImportsOf(join(SRC, leaf))).toEqual([]);
  });

  it("src/policies imports nothing from the sync controllers or the server", () => {
    const upward = sourceFiles(join(SRC, "policies"))
      .flatMap(localImportsOf)
      .filter(({ to }) => ["sync", "server"].includes(layerOf(to)));
    expect(upward).toEqual([]);
  });
});
