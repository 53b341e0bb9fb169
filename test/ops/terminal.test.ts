import { describe, expect, it } from "vitest";
import { escapeTerminal, oneLine, terminalWriter } from "../../src/ops/terminal.js";

const ESC = String.fromCharCode(0x1b);
const CSI8 = String.fromCharCode(0x9b);

describe("escapeTerminal: text from the cluster reaches a person's terminal as text, not as commands (decision 155)", () => {
  const cases: [string, string, string][] = [
    [
      "plain text is unchanged",
      "MAPI Machine w-1 is still provisioning",
      "MAPI Machine w-1 is still provisioning",
    ],
    ["newline and tab are kept", "a\n\tb", "a\n\tb"],
    [
      "ESC as kubectl writes it: an OSC retitling the window",
      `${ESC}]0;owned${String.fromCharCode(7)}`,
      "^[]0;owned\\x07",
    ],
    ["a CSI clearing the screen", `${ESC}[2Jdone`, "^[[2Jdone"],
    ["carriage return, which overwrites the line", "refused\rcompleted", "refused\\rcompleted"],
    ["backspace and NUL", `ab${String.fromCharCode(8)}${String.fromCharCode(0)}`, "ab\\x08\\x00"],
    ["DEL", `x${String.fromCharCode(0x7f)}`, "x\\x7f"],
    ["the one-character CSI of C1", `${CSI8}31mred`, "\\x9b31mred"],
    ["a right-to-left override", `abc${String.fromCharCode(0x202e)}fed`, "abc\\u202efed"],
    ["an isolate", `${String.fromCharCode(0x2066)}x`, "\\u2066x"],
    ["other non-ASCII text is kept", "größe ✓ 名前", "größe ✓ 名前"],
  ];
  it.each(cases)("%s", (_name, text, want) => {
    expect(escapeTerminal(text)).toBe(want);
    // What it returns holds nothing more to escape: escaping twice changes nothing.
    expect(escapeTerminal(escapeTerminal(text))).toBe(want);
  });

  it("oneLine writes newlines visibly too, so a message cannot print a line of its own", () => {
    expect(oneLine(`blocked\ncompleted Machine openshift-machine-api/w-2 (1 s)${ESC}[K`)).toBe(
      "blocked\\ncompleted Machine openshift-machine-api/w-2 (1 s)^[[K",
    );
  });

  it("terminalWriter escapes whatever is written through it", () => {
    let out = "";
    terminalWriter({ write: (t) => (out += t) }).write(`error: ${ESC}[31mred\n`);
    expect(out).toBe("error: ^[[31mred\n");
  });
});
