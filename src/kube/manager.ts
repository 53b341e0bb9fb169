/**
 * Ties controllers to leadership (SPEC §7): the leader elector's callbacks start every controller when
 * this replica starts leading and stop them all, synchronously cutting off their queues, the moment it
 * stops. Admission never passes through here — every replica serves it regardless of leadership.
 */
import type { Logger } from "pino";
import type { Controller } from "./controller.js";

export interface LeaderGate {
  /** Pass as the elector's `onStartedLeading`. */
  onStartedLeading(): void;
  /** Pass as the elector's `onStoppedLeading`. */
  onStoppedLeading(): void;
  /**
   * Resolves when every controller stopped by any `onStoppedLeading` so far has drained its in-flight
   * reconciles (each batch's, when leadership came and went while one still ran).
   */
  drained(): Promise<void>;
}

export function leaderGatedControllers(controllers: readonly Controller[], logger: Logger): LeaderGate {
  let stopping: Promise<void> = Promise.resolve();
  return {
    onStartedLeading() {
      for (const c of controllers)
        c.start().catch((e) =>
          logger.error(
            { controller: c.name, err: e instanceof Error ? e.message : String(e) },
            "controller did not start",
          ),
        );
    },
    onStoppedLeading() {
      // Each stop() shuts its queue before its first await: no key is handed out after this line. Each also
      // waits for every batch still running, earlier starts' included, so `drained` never forgets a batch a
      // quick loss–regain–loss left running.
      stopping = Promise.all(controllers.map((c) => c.stop())).then(() => undefined);
    },
    drained: () => stopping,
  };
}
