/**
 * `rlft demo`: the main job on a fresh machine. Collect scripted demonstrations in simulation, train a
 * diffusion BC policy with the Python learner, evaluate it on unseen seeds, print a summary table.
 */
import type { Command } from "commander";
import { decimal, integer } from "../numberOption.ts";
import { mkdirSync, writeFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { loadLaunch } from "../../launch/LaunchConfig.ts";
import { ensurePython } from "../../app/python.ts";
import { runEpisodes, formatRate, type EpisodeSummary } from "../../app/runEpisodes.ts";
import { trainBc } from "../../app/trainBc.ts";
import { DEFAULT_LAUNCH } from "./episodes.ts";
import { runSession, type SessionResult } from "../../app/session.ts";
import { statusLine } from "./session.ts";
import { progress, type Progress } from "../../app/progress.ts";
import { demoPlan, demoSeedProblem, runSo101Demo, SO101_DEMO_STEPS } from "../../app/so101Demo.ts";
import { SO101_LAUNCH } from "../../app/pixelBc.ts";
import { parseOverrides } from "../../app/learnerOverrides.ts";

/** Registers demo on `program`. */
export function registerDemoCommand(program: Command): void {
  program
    .command("demo")
    .description("Collect demonstrations → train a diffusion BC policy → evaluate it, all in simulation on the embedded runtime")
    .option("--out <dir>", "run directory (demos, package, eval episodes, summary.json)", "runs/demo")
    .option("--robot <name>", "rlft_arm5 (the fast made-up arm) | so101 (the SO-101 with front and wrist cameras)", "rlft_arm5")
    .option("--obs <kind>", "so101: pixels (joint positions + both cameras, what a real arm senses) | state (privileged cube and target, the reference)", "state")
    .option("--task <task>", "so101: push_cube | pick_place | reach (rlft_arm5 runs push_cube)")
    .option("--demos <n>", "demonstration episodes (seeds 0..n-1); default 50 (rlft_arm5) or 100 (so101)", integer({ min: 1 }))
    .option("--eval-episodes <n>", "evaluation episodes (seeds from --eval-seed, disjoint from training); default 200 (rlft_arm5: 50 seeds put the same fine-tuned policy anywhere from 66% to 90%) or 50 (so101, rendered cameras)", integer({ min: 1 }))
    .option("--eval-seed <n>", "first evaluation seed", integer({ min: 0 }), 1000)
    .option("--quality <q>", "scripted expert quality in [0,1]; default 0.7 (rlft_arm5: a base the fine-tuning can improve) or 1 (so101, as npm run bench:pixels)", decimal({ min: 0, max: 1 }))
    .option("--steps <n>", `BC gradient steps; default 4000 on rlft_arm5 (fewer than train-bc's 20000, so the demo stays short and its base policy leaves the fine-tuning something to fix), ${SO101_DEMO_STEPS.pixels} for so101 pixels and ${SO101_DEMO_STEPS.state} for so101 state (npm run bench:pixels)`, integer({ min: 1 }))
    .option("--online-episodes <n>", "online fine-tuning episodes with the scripted operator, residual RL over the BC policy (0 skips it; default 200 on rlft_arm5, 0 on so101: from pixels ~6 s an episode on 2 cores, 100 episodes ~10 min, docs/results.md)", integer({ min: 0 }))
    .option("--learner-set <key=value...>", "so101: learner train-bc settings on top of its defaults, e.g. batch_size=32")
    .option("--online-seed <n>", "first online episode seed (default 2000; disjoint from the demo and evaluation seeds)", integer({ min: 0 }))
    .option("--online-set <key=value...>", "online learner (serve) settings on top of the task's preset, e.g. utd=2")
    .option("--launch <file>", `launch file (default ${DEFAULT_LAUNCH}; ${SO101_LAUNCH} with --robot so101)`)
    .addHelpText("after", "\nExample:\n  rlft demo                    # or: npm run demo\n  rlft demo --demos 20 --online-episodes 20 --eval-episodes 20 --out runs/quick\n  rlft demo --robot so101 --obs pixels --out runs/so101_pixels   # BC from the SO-101's cameras (docs/so101.md)\n  rlft demo --robot so101 --obs pixels --online-episodes 100      # then residual RL from pixels with the scripted operator\n")
    .action(async (o) => {
      const plan = demoPlan(o);
      o.onlineEpisodes ??= plan.robot === "so101" ? 0 : 200;
      if (o.onlineSet && !o.onlineEpisodes) throw new Error("--online-set: the online learner runs only with --online-episodes N (N > 0)");
      const onlineSet = parseOverrides(o.onlineSet ?? [], "--online-set");
      if (plan.robot === "so101") {
        const so = {
          out: o.out, launch: o.launch ?? SO101_LAUNCH, task: plan.task, obs: plan.obs, demos: o.demos ?? 100, quality: o.quality ?? 1,
          steps: o.steps ?? SO101_DEMO_STEPS[plan.obs], evalEpisodes: o.evalEpisodes ?? 50, evalSeed: o.evalSeed, learner: parseOverrides(o.learnerSet ?? [], "--learner-set"),
          onlineEpisodes: o.onlineEpisodes, onlineSeed: o.onlineSeed, online: onlineSet,
        };
        const problem = demoSeedProblem(so);
        if (problem) throw new Error(problem); // before any setup
        const py = ensurePython();
        console.log(`rlft demo --robot so101 --obs ${plan.obs} → ${resolve(o.out)}  (learner: ${py})`);
        const ui: { bar: Progress | null } = { bar: null };
        try {
          await runSo101Demo({
            ...so,
            onSessionStatus: (st) => {
              ui.bar ??= progress("online", st.episodes, { unit: "episodes" });
              ui.bar.update(st.episode, { "": statusLine(st) });
              if (st.episode >= st.episodes) ui.bar.stop();
            },
          });
        } finally {
          ui.bar?.stop();
        }
        return;
      }
      o.demos ??= 50;
      o.evalEpisodes ??= 200;
      o.quality ??= 0.7;
      o.steps ??= 4000;
      o.launch ??= DEFAULT_LAUNCH;
      const seeds = demoSeedProblem({ demos: o.demos, evalSeed: o.evalSeed, evalEpisodes: o.evalEpisodes, onlineEpisodes: o.onlineEpisodes, onlineSeed: o.onlineSeed });
      if (seeds) throw new Error(seeds);
      const t0 = performance.now();
      const py = ensurePython();
      const out = resolve(o.out);
      const demos = join(out, "demos");
      rmSync(demos, { recursive: true, force: true });
      mkdirSync(out, { recursive: true });
      console.log(`rlft demo → ${out}  (learner: ${py})`);

      console.log(`\n[1/4] collecting ${o.demos} scripted demonstrations (push_cube, expert quality ${o.quality})`);
      const cfg = loadLaunch(o.launch);
      cfg.task = "push_cube";
      cfg.actor = { ...cfg.actor, kind: "expert", expert_quality: o.quality };
      const collect = await runEpisodes(cfg, { count: o.demos, seed: 0, label: "collect", recordTo: demos, metadata: { source: "scripted_expert" } });
      console.log(`      expert success ${formatRate(collect.summary)}`);

      console.log(`\n[2/4] training a diffusion policy on the successful demonstrations`);
      const t1 = performance.now();
      const demosNpz = join(out, "demos.npz");
      const bc = await trainBc({ data: demos, out, saveDataset: demosNpz, steps: o.steps });
      const trainSec = (performance.now() - t1) / 1000;
      console.log(`      final loss ${bc.finalLoss.toFixed(4)} after ${bc.steps} steps on ${bc.episodes} episodes (${trainSec.toFixed(0)} s)`);

      let session: SessionResult | null = null;
      if (o.onlineEpisodes > 0) {
        console.log(`\n[3/4] online fine-tuning: ${o.onlineEpisodes} episodes, residual RL with a scripted operator (seeds ${o.onlineSeed ?? 2000}..)`);
        const scfg = loadLaunch(o.launch);
        scfg.task = "push_cube";
        scfg.actor = { ...scfg.actor, kind: "policy", package: bc.packageDir };
        scfg.operator.enabled = true;
        scfg.camera.enabled = false;
        const sdir = join(out, "session");
        rmSync(sdir, { recursive: true, force: true });
        const bar = progress("online", o.onlineEpisodes, { unit: "episodes" });
        session = await runSession({
          config: scfg,
          learner: true,
          episodes: o.onlineEpisodes,
          seed: o.onlineSeed ?? 2000,
          out: sdir,
          pace: true,
          // The demos seed the offline buffer (RLPD 50/50 batches, as in ResFiT). Measured on push_cube (npm run
          // bench:learning): success dips while the critic warms up (~50 episodes), then climbs past BC from ~100 episodes.
          learnerConfig: { demo_dataset: demosNpz, ...onlineSet },
          onStatus: (st) => bar.update(st.episode, { "": statusLine(st) }),
        });
        bar.stop();
        console.log(`      ${session.learnerUpdates} learner updates, ${session.transitions.acked}/${session.transitions.pushed} transitions acked, final policy ${session.finalVersion}`);
      }

      console.log(`\n[4/4] evaluating on ${o.evalEpisodes} unseen seeds (${o.evalSeed}..${o.evalSeed + o.evalEpisodes - 1})`);
      const evalDir = join(out, "eval");
      rmSync(evalDir, { recursive: true, force: true });
      const evaluate = async (residual: string | undefined, label: string, dir: string) => {
        const ecfg = loadLaunch(o.launch);
        ecfg.task = "push_cube";
        ecfg.actor = { ...ecfg.actor, kind: "policy", package: bc.packageDir, residual };
        ecfg.camera.enabled = false;
        return (await runEpisodes(ecfg, { count: o.evalEpisodes, seed: o.evalSeed, label, recordTo: dir })).summary;
      };
      const ev = { summary: await evaluate(undefined, "eval BC", join(evalDir, "bc")) };
      const evRes = session?.finalPolicyDir ? await evaluate(session.finalPolicyDir, "eval BC+res", join(evalDir, "residual")) : null;

      const total = (performance.now() - t0) / 1000;
      printTable({ collect: collect.summary, evaluation: ev.summary, residual: evRes, session, bc, demos, evalDir, total });
      writeFileSync(
        join(out, "summary.json"),
        JSON.stringify(
          {
            collect: collect.summary,
            train: { final_loss: bc.finalLoss, steps: bc.steps, episodes: bc.episodes, seconds: trainSec, package: bc.packageDir },
            session: session && { episodes: session.episodes, learner_updates: session.learnerUpdates, transitions: session.transitions, final_version: session.finalVersion, final_policy: session.finalPolicyDir },
            eval: ev.summary,
            eval_residual: evRes,
            total_seconds: total,
          },
          null,
          2,
        ),
      );
    });
}

function outcomes(s: EpisodeSummary): string {
  return Object.entries(s.outcomes).map(([k, v]) => `${k} ${v}`).join(", ");
}

/** Intervention rate over a slice of session episodes. */
function interventionRate(eps: SessionResult["episodes"]): string {
  const steps = eps.reduce((a, e) => a + e.steps, 0);
  return steps ? `${((100 * eps.reduce((a, e) => a + e.interventionSteps, 0)) / steps).toFixed(0)}%` : "-";
}

function printTable(r: {
  collect: EpisodeSummary;
  evaluation: EpisodeSummary;
  residual: EpisodeSummary | null;
  session: SessionResult | null;
  bc: Awaited<ReturnType<typeof trainBc>>;
  demos: string;
  evalDir: string;
  total: number;
}): void {
  const rows: [string, string][] = [
    ["demonstrations", `${r.collect.episodes} episodes, expert success ${(100 * r.collect.rate).toFixed(0)}%, ${r.bc.episodes} used for training`],
    ["BC training", `${r.bc.steps} steps, final loss ${r.bc.finalLoss.toFixed(4)}`],
  ];
  if (r.session) {
    const e = r.session.episodes;
    const q = Math.max(1, Math.floor(e.length / 4));
    rows.push(["online session", `${e.length} episodes, ${r.session.learnerUpdates} learner updates, ${r.session.transitions.acked}/${r.session.transitions.pushed} transitions acked`]);
    rows.push(["interventions", `${interventionRate(e.slice(0, q))} of steps in the first ${q} episodes → ${interventionRate(e.slice(-q))} in the last ${q}`]);
  }
  rows.push(
    ["BC success", formatRate(r.evaluation)],
    ["BC + residual RL", r.residual ? formatRate(r.residual) : "(no residual package published)"],
    ["BC outcomes", outcomes(r.evaluation)],
    ["BC+res outcomes", r.residual ? outcomes(r.residual) : "-"],
    ["demo episodes", r.demos],
    ["eval episodes", r.evalDir],
    ["policy package", resolve(r.bc.packageDir)],
    ["total time", `${(r.total / 60).toFixed(1)} min`],
  );
  const w = Math.max(...rows.map(([k]) => k.length));
  const a = "─".repeat(w + 2);
  const b = "─".repeat(Math.max(...rows.map(([, v]) => v.length)) + 2);
  console.log(`\n┌${a}┬${b}┐`);
  for (const [k, v] of rows) console.log(`│ ${k.padEnd(w)} │ ${v.padEnd(b.length - 2)} │`);
  console.log(`└${a}┴${b}┘`);
}
