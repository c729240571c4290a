/** What the camera must deliver for the launch file's policy: a VLA reads a frame every control tick. */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { LaunchConfig } from "../launch/LaunchConfig.ts";
import { policyKind } from "../policies/vla/VlaPackage.ts";

/**
 * A VLA sees the world only through its camera, and was trained on a frame per control tick: it holds when its
 * latest frame is older than its limit. When `cfg.actor` runs a VLA package, the camera is switched on and runs at the
 * control rate (the launch file's 2 Hz ray-cast preview would make the policy hold most ticks). Returns true when
 * it changed the camera.
 */
export async function fitCameraToPolicy(cfg: LaunchConfig): Promise<boolean> {
  // No package there: the policy loader reports it, with the fix, when the stack starts.
  if (cfg.actor.kind !== "policy" || !cfg.actor.package || !existsSync(join(cfg.actor.package, "policy.json"))) return false;
  if ((await policyKind(cfg.actor.package)) !== "vla") return false;
  const changed = !cfg.camera.enabled || cfg.camera.rate_hz !== cfg.control_hz;
  cfg.camera.enabled = true;
  cfg.camera.rate_hz = cfg.control_hz;
  return changed;
}
