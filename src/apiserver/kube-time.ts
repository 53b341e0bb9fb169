/**
 * kube's two timestamp types as its JSON decoding reads and writes them: `metav1.Time` (Go's
 * `time.RFC3339`, whole seconds on the way out) and `metav1.MicroTime` (`2006-01-02T15:04:05.000000Z07:00`:
 * exactly six fraction digits in, six out). Decoding is a port of Go's `time.Parse` for these two layouts —
 * what it accepts and the error it gives, which kube-apiserver answers verbatim in a 400 ("… cannot be
 * handled as a Lease: parsing time …") — and kube writes a decoded time back in UTC, so an offset or a
 * fraction a client sent is not what it reads back. Pure.
 */
import { unmarshalError } from "./go-json.js";

export type TimeLayout = "Time" | "MicroTime";

type Std = "2006" | "01" | "02" | "15" | "04" | "05" | ".000000" | "Z07:00";

/** Time's elements, the literal before each; MicroTime puts its fraction before the zone. */
const TIME_CHUNKS: readonly (readonly [string, Std])[] = [
  ["", "2006"],
  ["-", "01"],
  ["-", "02"],
  ["T", "15"],
  [":", "04"],
  [":", "05"],
  ["", "Z07:00"],
];

/** The layouts' text (for Go's error messages) and their chunks: the literal before each element. */
const LAYOUTS: Readonly<Record<TimeLayout, { text: string; chunks: readonly (readonly [string, Std])[] }>> = {
  Time: { text: "2006-01-02T15:04:05Z07:00", chunks: TIME_CHUNKS },
  MicroTime: {
    text: "2006-01-02T15:04:05.000000Z07:00",
    chunks: [...TIME_CHUNKS.slice(0, -1), ["", ".000000"], ...TIME_CHUNKS.slice(-1)],
  },
};

/** Go's time.quote over the value's UTF-8 bytes (held one byte per character): `\xNN` for the unprintable. */
const quote = (bytes: string): string => {
  let out = '"';
  for (const c of bytes) {
    const code = c.charCodeAt(0);
    if (code >= 0x80 || code < 0x20) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else out += c === '"' || c === "\\" ? `\\${c}` : c;
  }
  return `${out}"`;
};

const isDigit = (s: string, i: number): boolean => i < s.length && s[i]! >= "0" && s[i]! <= "9";

/** Go's getnum: one or two digits (`fixed`: exactly two); undefined is Go's errBad. */
const getnum = (s: string, fixed: boolean): [number, string] | undefined => {
  if (!isDigit(s, 0)) return undefined;
  if (!isDigit(s, 1)) return fixed ? undefined : [Number(s[0]), s.slice(1)];
  return [Number(s[0]) * 10 + Number(s[1]), s.slice(2)];
};

/** Go's atoi: an optional sign, then digits only (an empty string is 0). */
const atoi = (s: string): number | undefined => {
  const neg = s[0] === "-";
  const digits = s[0] === "-" || s[0] === "+" ? s.slice(1) : s;
  if (!/^\d*$/.test(digits)) return undefined;
  const x = digits === "" ? 0 : Number(digits);
  return neg ? -x : x;
};

/** Go's parseNanoseconds: `value` starts with the separator; `n` bytes in all. */
const parseNanoseconds = (value: string, n: number): { ns: number; range?: string } | undefined => {
  if (value[0] !== "." && value[0] !== ",") return undefined;
  const bytes = Math.min(n, 10);
  const ns = atoi(value.slice(1, bytes));
  if (ns === undefined) return undefined;
  if (ns < 0) return { ns: 0, range: "fractional second" };
  return { ns: ns * 10 ** (10 - bytes) };
};

const isLeap = (y: number): boolean => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const daysIn = (month: number, year: number): number =>
  month === 2 && isLeap(year) ? 29 : (DAYS[month - 1] ?? 0);

/** Milliseconds since the epoch of a UTC date and time (years below 100 too, unlike Date.UTC). */
const utcMs = (year: number, month: number, day: number, hour = 0, min = 0, sec = 0): number => {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, min, sec, 0);
  return d.getTime();
};

/** Go's zero time.Time (0001-01-01T00:00:00Z), which kube writes as `null`. */
const ZERO_MS = utcMs(1, 1, 1);

interface Parsed {
  /** Milliseconds since the epoch of the whole second, in UTC. */
  secondMs: number;
  nsec: number;
}

/** Go's time.Parse(layout, value) for the two layouts kube uses: the instant, or Go's error text. */
export const goParseTime = (layout: TimeLayout, text: string): Parsed | { error: string } => {
  const { text: layoutText, chunks } = LAYOUTS[layout];
  const value = Buffer.from(text, "utf8").toString("latin1");
  const cannot = (layoutElem: string, valueElem: string) => ({
    error: `parsing time ${quote(value)} as ${quote(layoutText)}: cannot parse ${quote(valueElem)} as ${quote(layoutElem)}`,
  });
  const outOfRange = (what: string) => ({ error: `parsing time ${quote(value)}: ${what} out of range` });
  let v = value;
  let [year, month, day, hour, min, sec, nsec, offset] = [0, -1, -1, 0, 0, 0, 0, 0];
  for (const [i, [prefix, std]] of chunks.entries()) {
    for (const c of prefix) {
      if (v[0] !== c) return cannot(prefix, v);
      v = v.slice(1);
    }
    const hold = v;
    let bad = false;
    let range = "";
    const num = (fixed: boolean): number => {
      const r = getnum(v, fixed);
      if (!r) {
        bad = true;
        return 0;
      }
      v = r[1];
      return r[0];
    };
    switch (std) {
      case "2006": {
        if (v.length < 4 || !isDigit(v, 0)) bad = true;
        else {
          const y = atoi(v.slice(0, 4));
          v = v.slice(4);
          if (y === undefined) bad = true;
          else year = y;
        }
        break;
      }
      case "01":
        month = num(true);
        if (!bad && (month <= 0 || month > 12)) range = "month";
        break;
      case "02":
        day = num(true);
        break;
      case "15":
        hour = num(false);
        if (hour >= 24) range = "hour";
        break;
      case "04":
        min = num(true);
        if (min >= 60) range = "minute";
        break;
      case "05": {
        sec = num(true);
        if (bad) break;
        if (sec >= 60) {
          range = "second";
          break;
        }
        // Go takes a fraction the layout does not name (RFC 3339's Time), any number of digits.
        if (
          v.length >= 2 &&
          (v[0] === "." || v[0] === ",") &&
          isDigit(v, 1) &&
          chunks[i + 1]?.[1] !== ".000000"
        ) {
          let n = 2;
          while (n < v.length && isDigit(v, n)) n++;
          const r = parseNanoseconds(v, n);
          v = v.slice(n);
          if (!r) bad = true;
          else [nsec, range] = [r.ns, r.range ?? ""];
        }
        break;
      }
      case ".000000": {
        if (v.length < 7) {
          bad = true;
          break;
        }
        const r = parseNanoseconds(v, 7);
        v = v.slice(7);
        if (!r) bad = true;
        else [nsec, range] = [r.ns, r.range ?? ""];
        break;
      }
      case "Z07:00": {
        if (v[0] === "Z") {
          v = v.slice(1);
          break;
        }
        if (v.length < 6 || v[3] !== ":") {
          bad = true;
          break;
        }
        const [sign, hh, mm] = [v[0], v.slice(1, 3), v.slice(4, 6)];
        v = v.slice(6);
        const h = getnum(hh, true);
        const m = h ? getnum(mm, true) : undefined;
        if (!h || !m) bad = true;
        const [hr, mn] = [h?.[0] ?? 0, m?.[0] ?? 0];
        // Go allows offsets of 24 hours or 60 minutes (its test is `>`).
        if (hr > 24) range = "time zone offset hour";
        if (mn > 60) range = "time zone offset minute";
        offset = (hr * 60 + mn) * 60;
        if (sign === "-") offset = -offset;
        else if (sign !== "+") bad = true;
        break;
      }
    }
    if (range) return outOfRange(range);
    if (bad) return cannot(std, hold);
  }
  if (v.length !== 0) return { error: `parsing time ${quote(value)}: extra text: ${quote(v)}` };
  if (day < 1 || day > daysIn(month, year)) return outOfRange("day");
  return { secondMs: utcMs(year, month, day, hour, min, sec) - offset * 1000, nsec };
};

const pad = (n: number, width: number): string => String(n).padStart(width, "0");

/** A decoded time as kube's JSON writes it: UTC, whole seconds (Time) or microseconds (MicroTime). */
export const formatKubeTime = (layout: TimeLayout, t: Parsed): string | null => {
  if (t.secondMs === ZERO_MS && t.nsec === 0) return null;
  const d = new Date(t.secondMs);
  const date = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}`;
  const time = `${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}`;
  const fraction = layout === "MicroTime" ? `.${pad(Math.floor(t.nsec / 1000), 6)}` : "";
  return `${date}T${time}${fraction}Z`;
};

/**
 * What kube's decoding makes of a JSON value in a Time or MicroTime field at `field` (Go's struct-field
 * path, e.g. `LeaseSpec.spec.renewTime`): the text it stores (null for null and the zero time), or the
 * decode error it answers.
 */
export const decodeKubeTime = (
  layout: TimeLayout,
  value: unknown,
  field: string,
): { text: string | null } | { error: string } => {
  if (value === null) return { text: null };
  if (typeof value !== "string")
    return {
      error: unmarshalError(value, field, "string"),
    };
  const parsed = goParseTime(layout, value);
  return "error" in parsed ? parsed : { text: formatKubeTime(layout, parsed) };
};
