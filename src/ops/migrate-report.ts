/**
 * What `cli migrate` prints (SPEC §12): a live progress line on a terminal, one line per event otherwise, or
 * JSON lines with `-o json`. Pure over the `write` it is given. Text carries what others wrote (Event messages,
 * webhooks' refusals): each line is escaped for the terminal and kept on its line (decision 155); the live line's
 * own carriage return and erase are the only control characters written.
 */
import type { StableAuthority } from "../kube/kinds.js";
import type { MigrateEvent, Reporter } from "./migrate.js";
import { renderPlan } from "./migrate-plan.js";
import { oneLine } from "./terminal.js";

const describe = (kind: string, name: string, ns: string) => `${kind} ${ns}/${name}`;

const eventLine = (e: MigrateEvent, ns: string, target: StableAuthority): string => {
  switch (e.event) {
    case "wave":
      return `wave ${e.wave} (${e.group}): ${e.objects.length} object${e.objects.length === 1 ? "" : "s"}`;
    case "flipped":
      return `flipped ${describe(e.kind, e.name, ns)} to ${target}`;
    case "completed":
      return `completed ${describe(e.kind, e.name, ns)} (${e.seconds} s)`;
    case "refused":
      return `refused ${describe(e.kind, e.name, ns)}: ${e.message}`;
    case "failed":
      return `failed ${describe(e.kind, e.name, ns)}: ${e.reason}: ${e.message}`;
    case "gone":
      return `gone ${describe(e.kind, e.name, ns)}: ${e.message}; going on with the others`;
    case "interrupted":
      return e.message;
    default: {
      const never: never = e;
      return String(never);
    }
  }
};

export function textReporter(
  write: (text: string) => void,
  options: { tty: boolean; namespace: string; target: StableAuthority },
): Reporter {
  let live = "";
  const clear = () => {
    if (options.tty && live) write("\r\x1b[K");
  };
  const redraw = () => {
    if (options.tty && live) write(live);
  };
  return {
    plan: (plan) => write(renderPlan(plan, options.namespace)),
    event(e) {
      clear();
      write(`${oneLine(eventLine(e, options.namespace, options.target))}\n`);
      redraw();
    },
    progress(p) {
      if (!options.tty) return;
      clear();
      live = `[wave ${p.wave}: ${p.group}] ${p.done}/${p.objects} at ${options.target}, ${p.inFlight} in flight, ${p.blocked} blocked`;
      redraw();
    },
    end(lines) {
      clear();
      live = "";
      write(`${lines.map(oneLine).join("\n")}\n`);
    },
  };
}

export function jsonReporter(write: (text: string) => void): Reporter {
  const line = (o: Record<string, unknown>) => write(`${JSON.stringify(o)}\n`);
  return {
    plan: (plan) => line({ event: "plan", ...plan }),
    event: (e) => line({ ...e }),
    progress: (p) => line({ event: "progress", ...p }),
    end: (lines, summary) => line({ event: "summary", ...summary, message: lines.join("\n") }),
  };
}
