/**
 * A session over a base that reads cameras: the learner needs the frames of those cameras with every transition.
 * With a learner on another machine the frames would leave the robot, so an empty learner.cameras is refused with the
 * fix instead of filled in (a session that starts its own learner fills it in: test/so101Demo.test.ts runs one).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadLaunch } from "../launch/LaunchConfig.ts";
import { makeLearnerFixture } from "../policies/testing/learnerFixture.ts";
import { runSession } from "./session.ts";

test("a session over a camera base with a remote learner and no learner.cameras is refused, naming the cameras", async () => {
  const fx = await makeLearnerFixture({ cameras: ["front", "wrist"], imageSize: 32, steps: 2 });
  const out = mkdtempSync(join(tmpdir(), "rlft-sesscam-"));
  try {
    const cfg = loadLaunch("launch/sim_so101.yaml");
    cfg.actor = { ...cfg.actor, kind: "policy", package: fx.dir };
    assert.deepEqual(cfg.learner.cameras, []);
    await assert.rejects(
      runSession({ config: cfg, learner: "tcp://127.0.0.1:9", episodes: 1, seed: 2000, out }),
      /reads cameras front, wrist, so the learner at tcp:\/\/127\.0\.0\.1:9 needs their frames with every transition: set learner\.cameras: \[front, wrist\] in the launch file/,
    );
  } finally {
    rmSync(out, { recursive: true, force: true });
    await fx.cleanup();
  }
});
