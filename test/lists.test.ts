/**
 * Decision 135: no list is spread into a call's arguments in src. `a.push(...b)` and `Math.max(...b)` throw
 * RangeError past ~125,000 items, a length a hostile object reaches easily; `appendAll` and a loop do not.
 * Read from the source files themselves, so a new spread of this kind fails here.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { appendAll } from "../src/lists.js";

const SRC = resolve(import.meta.dirname, "../src");
const sourceFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );

/** A spread among the arguments of the calls that take a list's items one argument each. */
const SPREAD_CALL =
  /\.(?:push|unshift|splice)\((?:[^(){}]*,\s*)?\.\.\.|Math\.(?:max|min|hypot)\(\s*\.\.\.|String\.fromC(?:harCode|odePoint)\(\s*\.\.\./;

const isComment = (line: string): boolean => /^\s*(?:\*|\/\/)/.test(line);

describe("appendAll", () => {
  it("appends every list in order and returns the target", () => {
    const target = [1];
    expect(appendAll(target, [2, 3], [], [4])).toBe(target);
    expect(target).toEqual([1, 2, 3, 4]);
  });
  it("appends 300,000 items, where a spread into push throws", () => {
    const many = new Array<number>(300_000).fill(7);
    expect(() => [].push(...(many as never[]))).toThrow(RangeError);
    expect(appendAll([], many)).toHaveLength(300_000);
  });
});

describe("no list spread into a call's arguments in src", () => {
  it.each([
    ["out.push(...found);", true],
    ["causes.push(a, ...b);", true],
    ["Math.min(...times)", true],
    ["String.fromCharCode(...codes)", true],
    ['values.push({ labels: { le: "+Inf", ...labels } });', false],
    ["appendAll(out, found);", false],
  ])("the pattern: %s → %s", (line, found) => {
    expect(SPREAD_CALL.test(line)).toBe(found);
  });

  it("finds none", () => {
    const found = sourceFiles(SRC).flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .flatMap((line, i) =>
          SPREAD_CALL.test(line) && !isComment(line)
            ? [`${relative(SRC, file)}:${i + 1}: ${line.trim()}`]
            : [],
        ),
    );
    expect(found).toEqual([]);
  });
});
