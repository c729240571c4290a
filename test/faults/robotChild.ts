/**
 * A robot process for the crash scenario: a session with long episodes against an external learner, printing
 * `episode done` after each; the parent SIGKILLs it mid-episode.
 */
import { runSession } from "../../app/session.ts";
import { launchConfig } from "./rig.ts";

const o = JSON.parse(process.argv[2]) as { baseDir: string; out: string; experience: string; policy: string };
const cfg = launchConfig({ baseDir: o.baseDir, out: o.out });
cfg.episodes.max_steps = 200;
await runSession({
  config: cfg, learner: o.experience, policyEndpoint: o.policy, episodes: 1000, seed: 7, out: o.out,
  afterEpisode: () => void process.stdout.write("episode done\n"),
});
