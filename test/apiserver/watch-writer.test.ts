import { describe, expect, it } from "vitest";
import { createWatchWriter, type WatchResponse } from "../../src/apiserver/watch-writer.js";

/** A response that records its writes; `backlog` stands for bytes the socket has not taken yet. */
const fakeResponse = (backlog = 0) => {
  const writes: string[] = [];
  const res = {
    writes,
    ended: false,
    destroyed: false,
    get writableLength() {
      return backlog + writes.join("").length;
    },
    get writableEnded() {
      return res.ended;
    },
    write(text: string) {
      writes.push(text);
    },
    end() {
      res.ended = true;
    },
  };
  return res satisfies WatchResponse;
};

/** A scheduler the test turns by hand: `turn()` runs what was deferred, as setImmediate would. */
const manualTurns = () => {
  let pending: Array<() => void> = [];
  return {
    defer: (flush: () => void) => {
      pending.push(flush);
      return { cancel: () => (pending = pending.filter((f) => f !== flush)) };
    },
    turn: () => {
      const run = pending;
      pending = [];
      for (const f of run) f();
    },
    scheduled: () => pending.length,
  };
};

describe("watch writer (one socket write per stream per event-loop turn)", () => {
  it("events of one turn go out as one write, in order, after the turn", () => {
    const res = fakeResponse();
    const turns = manualTurns();
    const w = createWatchWriter(res, { maxBacklog: 1000, defer: turns.defer });
    w.write("a\n");
    w.write("b\n");
    w.write("c\n");
    expect(res.writes).toEqual([]);
    expect(turns.scheduled()).toBe(1);
    turns.turn();
    expect(res.writes).toEqual(["a\nb\nc\n"]);
  });

  it("the next turn's events are the next write", () => {
    const res = fakeResponse();
    const turns = manualTurns();
    const w = createWatchWriter(res, { maxBacklog: 1000, defer: turns.defer });
    w.write("a\n");
    turns.turn();
    w.write("b\n");
    turns.turn();
    turns.turn();
    expect(res.writes).toEqual(["a\n", "b\n"]);
  });

  it("end (timeoutSeconds, an injected drop) sends what is queued, then ends, and nothing is written after", () => {
    const res = fakeResponse();
    const turns = manualTurns();
    const w = createWatchWriter(res, { maxBacklog: 1000, defer: turns.defer });
    w.write("a\n");
    w.write("bookmark\n");
    w.end();
    expect(res.writes).toEqual(["a\nbookmark\n"]);
    expect(res.ended).toBe(true);
    expect(turns.scheduled()).toBe(0);
    w.write("late\n");
    turns.turn();
    expect(res.writes).toEqual(["a\nbookmark\n"]);
  });

  it("a closed stream drops what was queued", () => {
    const res = fakeResponse();
    const turns = manualTurns();
    const w = createWatchWriter(res, { maxBacklog: 1000, defer: turns.defer });
    w.write("a\n");
    w.discard();
    turns.turn();
    expect(res.writes).toEqual([]);
  });

  it("a destroyed response is not written to", () => {
    const res = fakeResponse();
    const turns = manualTurns();
    const w = createWatchWriter(res, { maxBacklog: 1000, defer: turns.defer });
    w.write("a\n");
    res.destroyed = true;
    turns.turn();
    w.write("b\n");
    expect(res.writes).toEqual([]);
    expect(turns.scheduled()).toBe(0);
  });

  it.each<[string, number, string[], boolean]>([
    ["a watcher under the backlog limit keeps its stream", 0, ["0123456789", "0123456789"], false],
    ["a watcher whose socket backlog is over the limit is cut", 101, ["x"], true],
    [
      "queued events count towards the backlog",
      0,
      ["0123456789".repeat(6), "0123456789".repeat(5), "x"],
      true,
    ],
  ])("%s", (_name, backlog, texts, cut) => {
    const res = fakeResponse(backlog);
    const turns = manualTurns();
    let stalled = 0;
    const w = createWatchWriter(res, {
      maxBacklog: 100,
      defer: turns.defer,
      onStalled: () => {
        stalled += 1;
      },
    });
    for (const t of texts) w.write(t);
    turns.turn();
    expect(res.ended).toBe(cut);
    expect(stalled).toBe(cut ? 1 : 0);
    // What was accepted before the cut is still delivered; the event that overflowed is not.
    const accepted = cut ? texts.slice(0, -1).join("") : texts.join("");
    expect(res.writes.join("")).toBe(accepted);
  });

  it("defaults to flushing on setImmediate", async () => {
    const res = fakeResponse();
    const w = createWatchWriter(res, { maxBacklog: 1000 });
    w.write("a\n");
    w.write("b\n");
    await new Promise((r) => setImmediate(r));
    expect(res.writes).toEqual(["a\nb\n"]);
  });
});
