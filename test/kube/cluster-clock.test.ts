/**
 * The cluster's clock from its answers' Date headers (src/kube/cluster-clock.ts): the admin commands judge a
 * Lease's renewTime (SPEC §9, §12) on it, not on the clock of the machine they run on.
 */
import { describe, expect, it } from "vitest";
import { createManualClock } from "../../src/kube/clock.js";
import {
  CLOCK_SKEW_NOTE_MS,
  clockSkewNote,
  clusterClock,
  dateOffsetMs,
} from "../../src/kube/cluster-clock.js";

const AT = Date.parse("2026-12-06T13:00:00.000Z");
const answer = (date?: string) => ({ method: "GET", code: "200", host: "h", ...(date ? { date } : {}) });

describe("SPEC §9, §12: dateOffsetMs: the cluster's clock ahead of this one, from a Date header (its second's middle)", () => {
  it.each([
    ["the same second", "Sun, 06 Dec 2026 13:00:00 GMT", AT, 500],
    ["the cluster 10 minutes ahead", "Sun, 06 Dec 2026 13:10:00 GMT", AT, 600_500],
    ["the cluster 10 minutes behind", "Sun, 06 Dec 2026 12:50:00 GMT", AT + 999, -600_499],
    ["no header", undefined, AT, undefined],
    ["an unreadable header", "yesterday", AT, undefined],
  ])("%s", (_name, date, receivedAt, want) => expect(dateOffsetMs(date, receivedAt)).toBe(want));
});

describe("SPEC §9, §12: clusterClock", () => {
  it("is this clock until an answer carries a Date, then this clock moved by the first one's offset", async () => {
    const local = createManualClock(AT);
    const cluster = clusterClock(local);
    expect(cluster.now()).toBe(AT);
    cluster.observe(answer());
    expect(cluster.offsetMs()).toBeUndefined();
    cluster.observe(answer("Sun, 06 Dec 2026 13:10:00 GMT"));
    expect(cluster.now()).toBe(AT + 600_500);
    // A later answer's rounding does not move it: it never jumps back within a run.
    cluster.observe(answer("Sun, 06 Dec 2026 13:09:59 GMT"));
    await local.advance(2_000);
    expect(cluster.now()).toBe(AT + 602_500);
  });

  it("waits as long as this clock does: a duration is the same on both", async () => {
    const local = createManualClock(AT);
    const cluster = clusterClock(local);
    cluster.observe(answer("Sun, 06 Dec 2026 14:00:00 GMT"));
    let fired = false;
    cluster.setTimeout(() => {
      fired = true;
    }, 1_000);
    await local.advance(999);
    expect(fired).toBe(false);
    await local.advance(1);
    expect(fired).toBe(true);
  });
});

describe("SPEC §9: clockSkewNote: said only when the skew is past what a Date header can tell", () => {
  it.each([
    ["no answer yet", undefined, undefined],
    ["within the bound", CLOCK_SKEW_NOTE_MS - 1, undefined],
    ["the cluster ahead: this machine behind", 600_400, "this machine's clock is 600 s behind the cluster's"],
    [
      "the cluster behind: this machine ahead",
      -CLOCK_SKEW_NOTE_MS,
      "this machine's clock is 10 s ahead of the cluster's",
    ],
  ])("%s", (_name, offset, want) => {
    const note = clockSkewNote(offset);
    if (want === undefined) expect(note).toBeUndefined();
    else expect(note).toContain(want);
  });
});
