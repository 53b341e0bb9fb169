/**
 * The long model-based campaign (issue 8): `npm run test:model -- --runs 1000 [--seed S] [--commands N]
 * [--without deleteCluster,…] [--rate429 R]` (command kinds left out, to look past a known open defect; R, the
 * share of the product's requests but its Lease's turned away with 429 and `Retry-After` all run long, 0 by default).
 * Starts a local cluster with the whole product (test/integration/harness.ts), runs the property of
 * test/model/model.ts `--runs` times with fast-check, and prints a summary — on failure the seed and the
 * counterexample path to replay it (`--seed S --path P`), and the failing command trace. Every wait in the
 * property is bounded, so the campaign terminates.
 *
 * Runs leave their objects behind, so the cluster is replaced by a fresh one every `--fresh-every` runs
 * (default 50): one cluster for a whole campaign grew to 1.5 GB and 13 s a run by run 240, and a 1,000-run
 * campaign would not end in a working day. A replay from `--path P` starts on a fresh cluster too.
 */
import fc from "fast-check";
import { answered429, type ModelStats, modelProperty, startModelHarness } from "./model.js";

const argValue = (args: readonly string[], flag: string): string | undefined => {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : args.find((a) => a.startsWith(`${flag}=`))?.slice(flag.length + 1);
};

const main = async (args: readonly string[]): Promise<number> => {
  const runs = Number(argValue(args, "--runs") ?? 100);
  const seedArg = argValue(args, "--seed");
  const seed = seedArg !== undefined ? Number(seedArg) : Date.now() ^ (Math.random() * 0x7fffffff);
  const path = argValue(args, "--path");
  const maxCommands = Number(argValue(args, "--commands") ?? 20);
  const without = (argValue(args, "--without") ?? "").split(",").filter(Boolean);
  const freshEvery = Number(argValue(args, "--fresh-every") ?? 50);
  const rate429 = Number(argValue(args, "--rate429") ?? 0);
  if (
    !Number.isInteger(runs) ||
    runs < 1 ||
    !Number.isFinite(seed) ||
    !Number.isInteger(maxCommands) ||
    !Number.isInteger(freshEvery) ||
    freshEvery < 1 ||
    !(rate429 >= 0 && rate429 < 1)
  )
    throw new Error(
      "usage: campaign [--runs N] [--seed S] [--path P] [--commands N] [--without kind,…] [--fresh-every N] [--rate429 R, 0 ≤ R < 1]",
    );
  // What the run's commands depend on besides the seed: a replay without them would run other commands.
  const replayOptions = [
    maxCommands !== 20 ? ` --commands ${maxCommands}` : "",
    without.length ? ` --without ${without.join(",")}` : "",
    rate429 ? ` --rate429 ${rate429}` : "",
  ].join("");
  console.log(
    `model campaign: ${runs} runs, seed ${seed}, up to ${maxCommands} commands per run${without.length ? `, without ${without.join(",")}` : ""}${rate429 ? `, 429 on ${rate429} of the product's requests (its Lease's aside)` : ""}`,
  );
  const started = Date.now();
  const start = () => startModelHarness("model-campaign");
  let h = await start();
  // Counted per cluster, summed as each is replaced: the report shows the retry path was taken, and by which verbs.
  const earlier429: Record<string, number> = {};
  const add429 = (into: Record<string, number>, from: Record<string, number>) => {
    for (const [verb, n] of Object.entries(from)) into[verb] = (into[verb] ?? 0) + n;
    return into;
  };
  try {
    const stats: ModelStats = { runs: 0, commands: {} };
    const details = await fc.check(
      modelProperty(
        () => h,
        {
          beforeRun: async (run) => {
            if (run === 0 || run % freshEvery !== 0) return;
            add429(earlier429, answered429(h));
            await h.stop();
            h = await start();
          },
          maxCommands,
          without,
          rate429,
          convergeTimeoutMs: 30_000,
          progress: (r) => {
            if ((r.run + 1) % 10 === 0)
              console.log(`  ${r.run + 1} runs converged (${Math.round((Date.now() - started) / 1000)} s)`);
          },
        },
        stats,
      ),
      {
        seed,
        numRuns: runs,
        endOnFailure: true,
        ...(path !== undefined ? { path } : {}),
      },
    );
    const seconds = Math.round((Date.now() - started) / 1000);
    console.log(`commands executed: ${JSON.stringify(stats.commands)}`);
    if (details.failed) {
      console.error(`FAILED after ${details.numRuns} runs (${seconds} s)`);
      console.error(
        `replay: npm run test:model -- --runs ${runs} --seed ${details.seed} --path ${details.counterexamplePath}${replayOptions}`,
      );
      console.error(`commands: ${String(details.counterexample?.[0] ?? "")}`);
      console.error(
        String(
          details.errorInstance instanceof Error ? details.errorInstance.message : details.errorInstance,
        ),
      );
      return 1;
    }
    const all429 = add429({ ...earlier429 }, answered429(h));
    const total429 = Object.values(all429).reduce((a, b) => a + b, 0);
    const byVerb = Object.entries(all429)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([verb, n]) => `${verb} ${n}`)
      .join(", ");
    const turnedAway = rate429 ? `; requests answered 429 and sent again: ${total429} (${byVerb})` : "";
    console.log(
      `passed: ${details.numRuns} runs, seed ${details.seed}, ${seconds} s; observed objects ${h.watched().length}${turnedAway}`,
    );
    return 0;
  } finally {
    await h.stop();
  }
};

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e);
    process.exit(2);
  },
);
