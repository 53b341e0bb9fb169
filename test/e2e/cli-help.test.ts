/**
 * The CLI's conventions as an admin meets them (SPEC §9, issue 21 item 9): every subcommand answers
 * `--help` and `-h` with its usage on stdout and exit 0, and bad usage exits 2 with a message naming the
 * flag. The real CLI as a child process (`node --import tsx src/cli.ts …`).
 */
import { describe, expect, it } from "vitest";
// runCli names no cluster anywhere: help must not need one.
import { terminalControls } from "../ops/terminal-controls.js";
import { runCli } from "./helpers.js";

const SUBCOMMANDS = [
  "serve",
  "convert",
  "certs",
  "preflight",
  "uninstall-prepare",
  "migrate",
  "installer",
  "pack-provider",
  "config-reference",
];

describe("cli --help / -h (child process)", () => {
  it.each(SUBCOMMANDS.flatMap((name) => [[name, "--help"] as const, [name, "-h"] as const]))(
    "%s %s prints its usage on stdout and exits 0",
    async (name, flag) => {
      const r = await runCli([name, flag]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^usage: (machine-api-migration )?${name}`, "i"));
    },
    60_000,
  );

  it("the top level lists every subcommand", async () => {
    const r = await runCli(["--help"]);
    expect(r.code).toBe(0);
    for (const name of SUBCOMMANDS) expect(r.stdout).toContain(`  ${name} `);
  }, 60_000);

  it.each([
    ["preflight", ["--bogus"], "unknown flag --bogus"],
    ["uninstall-prepare", ["-x"], "unknown flag -x"],
    ["preflight", ["--kubeconfig"], "flag --kubeconfig needs a value"],
    ["certs", ["--dir"], "flag --dir needs a value"],
    ["installer", ["--webhook-port", "abc"], "flag --webhook-port (setting webhookPort)"],
    ["serve", ["--no-webhook-port"], "unknown flag --no-webhook-port"],
  ])(
    "bad usage: %s %j exits 2 naming the flag",
    async (name, args, message) => {
      const r = await runCli([name, ...args]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(message);
      expect(r.stdout).toBe("");
    },
    60_000,
  );

  it("what it echoes reaches the terminal escaped: an unknown subcommand or flag with control characters (decision 155)", async () => {
    const ESC = String.fromCharCode(0x1b);
    const sub = await runCli([`pre${ESC}[2Jflight`]);
    expect(sub.code).toBe(2);
    expect(terminalControls(sub.stderr)).toEqual([]);
    expect(sub.stderr).toContain('unknown subcommand "pre^[[2Jflight"');
    const flag = await runCli(["preflight", `--x${ESC}]0;owned${String.fromCharCode(7)}`]);
    expect(flag.code).toBe(2);
    expect(terminalControls(flag.stderr)).toEqual([]);
    expect(flag.stderr).toContain("unknown flag --x^[]0;owned\\x07");
  }, 60_000);
});
