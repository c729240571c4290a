/**
 * Attack rows on recording and run directories (issue 24 items 6 and 7), through the real `rlft` command:
 * SIGKILL during `rlft collect`, a session started again in its run directory, and a fatal error after the learner
 * started. Listed in ATTACK_SCENARIOS (attackScenarios.ts).
 */
import { createServer } from "node:net";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { episodeProblems, exited, mcapFiles, processesNaming as learnerProcesses, readIndex, rlft, startRlft, untilChild } from "../support/rlftCli.ts";
import type { FaultRow, FaultScenario } from "./FaultScenario.ts";

const row = (scenario: string, injected: string, held: boolean, detail: string): FaultRow => ({ scenario, injected, survived: held, transitionsLost: 0, unsafeCommands: 0, detail });

export const collectKilled: FaultScenario = {
  name: "attack: rlft collect killed with SIGKILL",
  async run(ctx) {
    const dir = join(ctx.root, "demos");
    const target = ctx.full ? 14 : 3;
    const child = startRlft(["collect", "--episodes", "1000", "--out", dir, "--no-camera", "--quality", "1"]);
    try {
      await untilChild(child, () => readIndex(dir).episodes.length >= target, `${target} finished episodes`);
    } finally {
      child.kill("SIGKILL");
      await exited(child);
    }
    const idx = readIndex(dir);
    const problems = await episodeProblems(dir, idx);
    const files = mcapFiles(dir);
    const unindexed = files.filter((f) => !idx.episodes.some((e) => e.file === f));
    const again = rlft(["collect", "--episodes", "2", "--out", dir, "--no-camera", "--quality", "1"]);
    const after = readIndex(dir);
    const resumed = again.status === 0 && after.episodes.length === idx.episodes.length + unindexed.length + 2 && after.episodes.slice(0, idx.episodes.length).every((e, i) => e.file === idx.episodes[i].file);
    return row("attack: rlft collect killed with SIGKILL", `SIGKILL after ${idx.episodes.length} finished episodes, then rlft collect again in the same directory`, problems.length === 0 && unindexed.length <= 1 && resumed, `${idx.episodes.length} finished episodes indexed, all complete readable MCAPs (${problems.length} problems${problems.length ? `: ${problems[0]}` : ""}); ${unindexed.length} file cut by the kill; the second collect resumed at episode ${after.episodes.at(-2)?.episode} and kept every entry (issue 24 item 6: all files 0 bytes, no index)`);
  },
};

export const sessionRestarted: FaultScenario = {
  name: "attack: session started again in its run directory",
  async run(ctx) {
    const launch = join(ctx.root, "expert.yaml");
    writeFileSync(launch, "task: push_cube\nactor: {kind: expert, expert_quality: 1}\ncamera: {enabled: false}\nepisodes: {max_steps: 60}\n");
    const out = join(ctx.root, "run");
    const runs = [1, 2].map(() => rlft(["session", launch, "--offline", "--episodes", "2", "--out", out]));
    const idx = readIndex(join(out, "episodes"));
    const numbers = idx.episodes.map((e) => e.episode).join(",");
    const problems = await episodeProblems(join(out, "episodes"), idx);
    const held = runs.every((r) => r.status === 0) && numbers === "0,1,2,3" && problems.length === 0 && !/EEXIST/.test(runs[1].stderr);
    return row("attack: session started again in its run directory", "rlft session --offline twice in one run directory", held, `exit codes ${runs.map((r) => r.status).join(", ")}; index holds episodes ${numbers}, all complete; ${/EEXIST/.test(runs[1].stderr) ? "EEXIST seen" : "no EEXIST"} (issue 24 item 7: numbering restarted at 0, every file hit EEXIST, the index lost the earlier entries)`);
  },
};

export const sessionFatalError: FaultScenario = {
  name: "attack: fatal error after the learner started",
  async run(ctx) {
    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, "127.0.0.1", () => r()));
    try {
      const port = (busy.address() as { port: number }).port;
      const launch = join(ctx.root, "busy.yaml");
      writeFileSync(launch, `task: push_cube\nactor: {kind: policy, package: ${JSON.stringify(ctx.baseDir)}}\ncamera: {enabled: false}\nepisodes: {max_steps: 20}\nui: {enabled: true, port: ${port}}\n`);
      const t0 = Date.now();
      const out = join(ctx.root, "run");
      const r = rlft(["session", launch, "--learner", "--episodes", "1", "--out", out, "--no-operator"], 240_000);
      const sec = (Date.now() - t0) / 1000;
      let learners = learnerProcesses(join(out, "learner.yaml"));
      for (let i = 0; i < 100 && learners.length > 0; i++) {
        await new Promise((res) => setTimeout(res, 100));
        learners = learnerProcesses(join(out, "learner.yaml"));
      }
      const held = r.signal === null && r.status === 1 && /ui\.port \d+ on 127\.0\.0\.1 is in use/.test(r.stderr) && learners.length === 0;
      return row("attack: fatal error after the learner started", "rlft session --learner whose operator UI port is taken (the stack fails after the learner started)", held, `${r.signal ? `hung: killed by the ${sec.toFixed(0)} s guard` : `exited ${r.status} after ${sec.toFixed(0)} s with one line: ${r.stderr.trim().split("\n").pop()}`}; learner processes left: ${learners.length} (issue 24 item 7: hung over 6 minutes, ignored Ctrl-C)`);
    } finally {
      await new Promise((r) => busy.close(r));
    }
  },
};

