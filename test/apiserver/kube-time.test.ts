/**
 * kube's Time and MicroTime as its JSON decoding reads them: Go's time.Parse for the two layouts, its error
 * text (kube-apiserver answers it in a 400), and the UTC form kube writes back. The texts are kube-apiserver
 * 1.33's, seen by the differential conformance suite (`builtin2:` probes).
 */
import { describe, expect, it } from "vitest";
import { decodeKubeTime } from "../../src/apiserver/kube-time.js";

const parsing = (value: string, as: string, what: string) =>
  `parsing time ${JSON.stringify(value)} as "${as}": cannot parse ${what}`;
const MICRO = "2006-01-02T15:04:05.000000Z07:00";
const TIME = "2006-01-02T15:04:05Z07:00";

describe("decodeKubeTime", () => {
  it.each<[string, "Time" | "MicroTime", unknown, { text: string | null } | { error: string }]>([
    ["a MicroTime", "MicroTime", "2026-12-05T10:00:00.123456Z", { text: "2026-12-05T10:00:00.123456Z" }],
    [
      "an offset, to UTC",
      "MicroTime",
      "2026-12-05T12:00:00.000001+02:00",
      { text: "2026-12-05T10:00:00.000001Z" },
    ],
    [
      "a one-digit hour (Go's 15 is not fixed)",
      "MicroTime",
      "2026-12-05T1:00:00.000000Z",
      { text: "2026-12-05T01:00:00.000000Z" },
    ],
    ["null", "MicroTime", null, { text: null }],
    ["the zero time, written back as null", "Time", "0001-01-01T00:00:00Z", { text: null }],
    [
      "toISOString()'s three digits",
      "MicroTime",
      "2026-12-05T10:00:00.000Z",
      { error: parsing("2026-12-05T10:00:00.000Z", MICRO, '".000Z" as ".000000"') },
    ],
    [
      "nine digits",
      "MicroTime",
      "2026-12-05T10:00:00.123456789Z",
      { error: parsing("2026-12-05T10:00:00.123456789Z", MICRO, '"789Z" as "Z07:00"') },
    ],
    ["a Time's fraction, dropped", "Time", "2026-12-05T10:00:00.999Z", { text: "2026-12-05T10:00:00Z" }],
    [
      "month 13",
      "Time",
      "2026-13-01T00:00:00Z",
      { error: 'parsing time "2026-13-01T00:00:00Z": month out of range' },
    ],
    [
      "February 29th of 2026",
      "Time",
      "2026-02-29T00:00:00Z",
      { error: 'parsing time "2026-02-29T00:00:00Z": day out of range' },
    ],
    ["February 29th of 2028", "Time", "2028-02-29T00:00:00Z", { text: "2028-02-29T00:00:00Z" }],
    [
      "extra text",
      "Time",
      "2026-12-01T00:00:00Zx",
      { error: 'parsing time "2026-12-01T00:00:00Zx": extra text: "x"' },
    ],
    [
      "a lower-case z",
      "Time",
      "2026-12-01T00:00:00z",
      { error: parsing("2026-12-01T00:00:00z", TIME, '"z" as "Z07:00"') },
    ],
    [
      "non-ASCII, as Go quotes it",
      "Time",
      "é",
      { error: `parsing time "\\xc3\\xa9" as "${TIME}": cannot parse "\\xc3\\xa9" as "2006"` },
    ],
    [
      "a number",
      "MicroTime",
      5,
      { error: "json: cannot unmarshal number into Go struct field LeaseSpec.spec.renewTime of type string" },
    ],
  ])("%s", (_, layout, value, expected) => {
    expect(decodeKubeTime(layout, value, "LeaseSpec.spec.renewTime")).toEqual(expected);
  });
});
