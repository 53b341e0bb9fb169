/**
 * The control characters in `text` a terminal would act on (C0 but newline and tab, DEL, C1, the bidi overrides
 * and isolates), as code points: what no admin command may print raw (decision 155). Written apart from
 * src/ops/terminal.ts, so the tests do not check the escaper with itself.
 */
export const terminalControls = (text: string): number[] =>
  [...text]
    .map((c) => c.codePointAt(0) ?? 0)
    .filter(
      (n) =>
        (n < 0x20 && n !== 0x0a && n !== 0x09) ||
        (n >= 0x7f && n <= 0x9f) ||
        (n >= 0x202a && n <= 0x202e) ||
        (n >= 0x2066 && n <= 0x2069),
    );
