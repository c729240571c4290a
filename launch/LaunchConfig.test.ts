import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { parseLaunch, LaunchConfigError } from "./LaunchConfig.ts";

test("the shipped launch file parses", () => {
  const cfg = parseLaunch(readFileSync("launch/sim_push.yaml", "utf8"), "launch/sim_push.yaml");
  assert.equal(cfg.task, "push_cube");
  assert.equal(cfg.actor.kind, "policy");
});

test("defaults fill an empty file", () => {
  const cfg = parseLaunch("", "x.yaml");
  assert.equal(cfg.runtime, "embedded");
  assert.equal(cfg.camera.width, 64);
});

test("unknown key names file, line and key", () => {
  const text = "task: push_cube\ncamera:\n  enabled: true\n  fps: 30\n";
  assert.throws(() => parseLaunch(text, "bad.yaml"), (e: unknown) => {
    assert.ok(e instanceof LaunchConfigError);
    assert.match(e.message, /bad\.yaml:4: unknown key 'camera\.fps'/);
    assert.match(e.message, /rate_hz/);
    return true;
  });
});

test("wrong value names file, line and key", () => {
  assert.throws(() => parseLaunch("task: push_cube\ncontrol_hz: -3\n", "bad.yaml"), /bad\.yaml:2: control_hz:/);
  assert.throws(() => parseLaunch("task: fly\n", "bad.yaml"), /bad\.yaml:1: task:/);
});

test("YAML syntax error names file and line", () => {
  assert.throws(() => parseLaunch("task: [push\n", "bad.yaml"), /bad\.yaml:\d+:\d+: YAML syntax error/);
});

test("actor.indicator defaults to auto and rejects values it does not know", () => {
  assert.equal(parseLaunch("", "x.yaml").actor.indicator, "auto");
  assert.equal(parseLaunch("actor:\n  indicator: positive\n", "x.yaml").actor.indicator, "positive");
  assert.throws(() => parseLaunch("actor:\n  indicator: good\n", "bad.yaml"), /bad\.yaml:2: actor\.indicator:/);
});
