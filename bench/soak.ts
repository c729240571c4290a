/**
 * `npm run bench:soak [-- --sim-minutes 60]`: an accelerated sim session (policy + scripted operator, the real learner
 * as a child process) for N minutes of robot time. Reports start-of-run (after warm-up, 10% of the run) and end RSS of
 * the robot process and the learner, control ticks and deadline misses, transitions produced vs stored by the learner.
 * Writes bench/results/soak-<time>.{md,json} and soak-latest.*.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runSession } from "../app/session.ts";
import { robotPolicyFixture } from "../test/robotFixture.ts";
import { drainSpool, launchConfig, LearnerRig } from "../test/faults/rig.ts";

const args = process.argv.slice(2);
const simMinutes = args.includes("--sim-minutes") ? Number(args[args.indexOf("--sim-minutes") + 1]) : 60;
if (!(simMinutes > 0)) throw new Error(`--sim-minutes: expected a positive number, got ${args[args.indexOf("--sim-minutes") + 1]}`);

const fx = await robotPolicyFixture("push_cube");
const root = await mkdtemp(join(tmpdir(), "rlft-soak-"));
const rig = await LearnerRig.create(root, fx.dir, ["--checkpoint-every-s", "10", "--publish-every", "500"]);
const mb = (b: number) => Math.round(b / 1e5) / 10;
try {
  await rig.current.event("progress");
  const out = join(root, "robot");
  const cfg = launchConfig({ baseDir: fx.dir, out });
  let stop = () => undefined as void;
  const stopped = new Promise<void>((r) => (stop = r));
  const rss: { t: number; robot: number; learner: number }[] = [];
  const t0 = Date.now();
  let warm: { robot: number; learner: number } | null = null;
  let lastLog = 0;
  const res = await runSession({
    config: cfg, learner: rig.experience, policyEndpoint: rig.policy, episodes: 1_000_000, seed: 5000, out, stop: stopped,
    afterEpisode: (_i, { stack }) => {
      const sim = stack.runtime.clock.now();
      const now = { t: sim, robot: process.memoryUsage().rss, learner: rig.current.rss() };
      rss.push(now);
      if (warm === null && sim >= simMinutes * 6) warm = now;
      if (Date.now() - lastLog > 10_000) {
        lastLog = Date.now();
        console.error(`soak: ${(sim / 60).toFixed(1)}/${simMinutes} sim-min, robot RSS ${mb(now.robot)} MB, learner RSS ${mb(now.learner)} MB`);
      }
      if (sim >= simMinutes * 60) stop();
    },
  });
  const lastSeq = await drainSpool(cfg, out, rig.experience);
  const counts = await rig.finish(cfg.learner.robot_id);
  const end = rss.at(-1)!;
  const w = warm ?? rss[0];
  const result = {
    simMinutes, wallMinutes: (Date.now() - t0) / 60_000, episodes: res.episodes.length,
    ticks: res.loop.ticks, deadlineMisses: res.loop.deadlineMisses, missRate: res.loop.deadlineMisses / Math.max(1, res.loop.ticks),
    produced: lastSeq + 1, stored: counts.distinct_seqs, lost: lastSeq + 1 - counts.distinct_seqs, learnerUpdates: res.learnerUpdates,
    rss: { robot: { warm: mb(w.robot), end: mb(end.robot) }, learner: { warm: mb(w.learner), end: mb(end.learner) } },
    pauses: res.pauses.length, safety: res.safety,
  };
  const md = `# Soak: ${simMinutes} sim-minutes (${result.wallMinutes.toFixed(1)} min wall), ${new Date().toISOString()}

| process | RSS after warm-up (MB) | RSS at end (MB) |
|---|---|---|
| robot (node: sim + policy + bridge) | ${result.rss.robot.warm} | ${result.rss.robot.end} |
| learner (python) | ${result.rss.learner.warm} | ${result.rss.learner.end} |

| episodes | control ticks | deadline misses | transitions produced | stored by the learner | lost | learner updates | pauses |
|---|---|---|---|---|---|---|---|
| ${result.episodes} | ${result.ticks} | ${result.deadlineMisses} (${(100 * result.missRate).toFixed(3)}%) | ${result.produced} | ${result.stored} | ${result.lost} | ${result.learnerUpdates} | ${result.pauses} |
`;
  console.log(md);
  const dir = join(import.meta.dirname, "results");
  mkdirSync(dir, { recursive: true });
  const stamp = new Date().toISOString().replaceAll(":", "-").replace(".", "-");
  for (const name of [`soak-${stamp}`, "soak-latest"]) {
    writeFileSync(join(dir, `${name}.md`), md);
    writeFileSync(join(dir, `${name}.json`), JSON.stringify({ ...result, rssSeries: rss.filter((_, i) => i % 10 === 0) }, null, 2));
  }
  process.exitCode = result.lost === 0 && result.missRate <= 0.001 ? 0 : 1;
} finally {
  await rig.cleanup();
  await rm(root, { recursive: true, force: true });
  await fx.cleanup();
}
