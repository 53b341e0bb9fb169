/**
 * Text from the cluster made safe for a person's terminal (decision 155). The admin commands print what others
 * wrote — Event and condition messages, a Lease's holder, an admission webhook's refusal, the API server's
 * errors — and a control sequence in any of them would reach the terminal as a command: `ESC ] 0 ;` retitles
 * the window, `ESC [ 2 J` clears it, a carriage return or a backspace overwrites what the command printed,
 * a bidirectional override reverses it (kubectl's CVE-2021-25743, escaped by kubectl since 1.26). Every C0
 * control but the newline and the tab, DEL, the C1 controls (U+0080–U+009F; U+009B is a one-character CSI) and
 * the bidirectional overrides and isolates are written as visible escapes instead: ESC as kubectl writes it
 * (`^[`), CR as `\r`, the others as `\xNN` or `\uNNNN`. Text without them is returned as it is.
 */

const hex = (n: number, width: number): string => n.toString(16).padStart(width, "0");

/** The characters escaped, built from code points so that the source holds no control character. */
const UNSAFE = new RegExp(
  `[${[
    [0x00, 0x08],
    [0x0b, 0x1f],
    [0x7f, 0x9f],
    [0x202a, 0x202e],
    [0x2066, 0x2069],
  ]
    .map(([from, to]) => `\\u${hex(from!, 4)}-\\u${hex(to!, 4)}`)
    .join("")}]`,
  "g",
);

const visible = (c: string): string => {
  const n = c.codePointAt(0) ?? 0;
  if (n === 0x1b) return "^[";
  if (n === 0x0d) return "\\r";
  return n <= 0xff ? `\\x${hex(n, 2)}` : `\\u${hex(n, 4)}`;
};

/** `text` with every control character a terminal would act on written visibly; newlines and tabs kept. */
export const escapeTerminal = (text: string): string => text.replace(UNSAFE, visible);

/** `escapeTerminal`, and newlines written as `\n` too: for text that must stay on its own line of output. */
export const oneLine = (text: string): string => escapeTerminal(text).replaceAll("\n", "\\n");

/** A writer that escapes everything written to it (stderr: always text for a person). */
export const terminalWriter = (sink: { write(text: string): unknown }): { write(text: string): unknown } => ({
  write: (text: string) => sink.write(escapeTerminal(text)),
});
