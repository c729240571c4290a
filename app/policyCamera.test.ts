/** fitCameraToPolicy: a VLA gets a frame every control tick in eval, session and launch alike. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseLaunch } from "../launch/LaunchConfig.ts";
import { fitCameraToPolicy } from "./policyCamera.ts";

test("a VLA package switches the camera on at the control rate; a diffusion package or a missing one leaves it alone", async () => {
  const root = mkdtempSync(join(tmpdir(), "rlft-policycam-"));
  try {
    for (const [name, kind] of [["vla", "vla"], ["diffusion", "diffusion"]] as const) {
      mkdirSync(join(root, name));
      writeFileSync(join(root, name, "policy.json"), JSON.stringify({ kind }));
    }
    const launch = (pkg: string) => {
      const cfg = parseLaunch(`control_hz: 10\ncamera:\n  enabled: false\n  rate_hz: 2\nactor:\n  kind: policy\n  package: ${pkg}\n`, "t.yaml");
      return cfg;
    };
    const vla = launch(join(root, "vla"));
    assert.equal(await fitCameraToPolicy(vla), true);
    assert.equal(vla.camera.enabled, true);
    assert.equal(vla.camera.rate_hz, 10);
    assert.equal(await fitCameraToPolicy(vla), false, "already fitted: nothing changes");
    for (const pkg of [join(root, "diffusion"), join(root, "absent")]) {
      const cfg = launch(pkg);
      assert.equal(await fitCameraToPolicy(cfg), false, pkg);
      assert.deepEqual([cfg.camera.enabled, cfg.camera.rate_hz], [false, 2]);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
