/**
 * The operator UI end to end: the real stack (MuJoCo arm, ray-cast camera, scripted expert as the policy,
 * wall clock), the real HTTP/WebSocket server and headless Chromium (playwright-core, Debian's chromium).
 * Clicking Success ends the episode with the reward recorded in the MCAP; E-STOP freezes the arm; the layout
 * holds on a phone (390×844) and a desktop; screenshots go to test-results/operator-ui/.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { get } from "node:http";
import { join } from "node:path";
import { chromium } from "playwright-core";
import WebSocket from "ws";
import { parseLaunch } from "../launch/LaunchConfig.ts";
import { Stack } from "../launch/Stack.ts";
import { EpisodeReader } from "../recording/EpisodeReader.ts";
import { CHROMIUM_BIN, requireServer } from "../test/servers.ts";
import { operatorLayoutProblems } from "../test/uiLayout.ts";

/** What runEpisodes reports per episode (kept off nodes/: web/ imports contracts, not nodes). */
type EpisodeResult = Awaited<ReturnType<Stack["runEpisodes"]>>[number];

/** The test's output folder (screenshots): RLFT_TEST_OUT or test-results/ in the checkout. */
export const TEST_OUT = join(process.env.RLFT_TEST_OUT ?? join(import.meta.dirname, "..", "test-results"), "operator-ui");
const TOKEN = "test-token-0123456789abcdef";

test("operator UI in Chromium: start, success recorded in the MCAP, e-stop freezes the arm, token and robot checks", { skip: requireServer("chromium"), timeout: 90_000 }, async (t) => {
  const out = mkdtempSync(join(tmpdir(), "rlft-ui-"));
  t.after(() => rmSync(out, { recursive: true, force: true }));
  mkdirSync(TEST_OUT, { recursive: true });
  const cfg = parseLaunch(
    [
      "clock: wall",
      "task: push_cube",
      "actor: {kind: expert, expert_quality: 1}",
      "camera: {enabled: true, rate_hz: 5, width: 48, height: 48}",
      "operator: {enabled: true, kind: ui}",
      `ui: {enabled: true, port: 0, token: ${TOKEN}}`,
      "reward: {sim_ground_truth: false}",
      "episodes: {max_steps: 3000}",
      "learner: {robot_id: cell-7}",
    ].join("\n"),
    "ui.yaml",
  );
  const stack = await Stack.create(cfg, { quiet: true, recordTo: out });
  const ui = stack.station!.ui!;
  const ended: EpisodeResult[] = [];
  stack.manager.onEnd((r) => ended.push(r));
  const running = stack.runEpisodes({ count: 2, seed: 5 });
  const browser = await chromium.launch({ executablePath: CHROMIUM_BIN(), args: ["--no-sandbox", "--disable-gpu"] });
  t.after(async () => {
    await browser.close();
    await stack.shutdown();
  });
  const page = await browser.newPage({ viewport: { width: 1100, height: 860 } });
  await page.goto(ui.url);
  await page.waitForSelector("#conn:text('live')");
  assert.equal(await page.textContent("#robot"), "cell-7");

  // Episode 0: start from the page, watch the camera, click Success.
  await page.click("button[data-cmd=start]");
  await page.waitForSelector("body[data-state=running]");
  await page.waitForFunction(() => Number((document.getElementById("camera") as HTMLCanvasElement).dataset.frames ?? 0) >= 2);
  await page.waitForFunction(() => /#0/.test(document.getElementById("episode")!.textContent ?? ""));
  await page.click("button[data-cmd=success]");
  await page.waitForSelector("body[data-state=idle]");
  await page.waitForFunction(() => /success/.test(document.getElementById("last")!.textContent ?? ""));
  assert.equal(ended[0].outcome, "success");
  assert.match(ended[0].detail, /web_ui/);
  await page.screenshot({ path: join(TEST_OUT, "operator-ui-after-success.png"), fullPage: true });
  // Layout on a phone and a desktop, from the elements' boxes: the camera, every status row (the long "Last" one
  // included) and every button on the first screen, nothing clipped or under the buttons, the end of the page
  // reachable with no empty band (test/uiLayout.ts). Screenshots of both go to TEST_OUT.
  for (const [name, viewport] of [["phone", { width: 390, height: 844 }], ["desktop", { width: 1100, height: 860 }]] as const) {
    await page.setViewportSize(viewport);
    assert.deepEqual(await operatorLayoutProblems(page, { minButtonHeight: 44 }), [], `${name} layout`);
    await page.screenshot({ path: join(TEST_OUT, `operator-ui-${name}.png`) });
    await page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)");
    await page.screenshot({ path: join(TEST_OUT, `operator-ui-${name}-end.png`) });
    await page.evaluate("window.scrollTo(0, 0)");
  }

  // Episode 1: keyboard shortcut n starts it; the E-STOP button freezes the arm where it is.
  await page.keyboard.press("n");
  await page.waitForSelector("body[data-state=running]");
  await new Promise((r) => setTimeout(r, 1500)); // let the expert move the arm
  // Held arrow key in the page: the web keyboard takes over, the arbiter records who acted.
  await page.keyboard.down("ArrowUp");
  await page.waitForFunction(() => document.getElementById("incontrol")!.textContent === "web_keyboard");
  await page.keyboard.up("ArrowUp");
  assert.ok(stack.arbiter.counts.operator > 0, "operator ticks were counted");
  await page.keyboard.press("t"); // hand back at once
  await page.waitForFunction(() => document.getElementById("incontrol")!.textContent === "policy");
  const moving0 = [...stack.world!.sim.jointState().position];
  await new Promise((r) => setTimeout(r, 300));
  const moving1 = [...stack.world!.sim.jointState().position];
  assert.ok(Math.max(...moving1.map((q, i) => Math.abs(q - moving0[i]))) > 1e-3, "the arm moves before the e-stop");
  await page.click("#estop");
  await page.waitForSelector("body[data-estop=true]");
  await page.waitForSelector("#estop-banner:not([hidden])");
  await new Promise((r) => setTimeout(r, 600)); // the servos settle on the held target
  const held0 = [...stack.world!.sim.jointState().position];
  await new Promise((r) => setTimeout(r, 1000));
  const held1 = [...stack.world!.sim.jointState().position];
  const drift = Math.max(...held1.map((q, i) => Math.abs(q - held0[i])));
  assert.ok(drift < 2e-3, `the arm holds after the e-stop (moved ${drift} rad in 1 s)`);
  assert.equal(stack.safety.estopped, true);
  assert.ok((stack.safety.counts.frozen_drop ?? 0) > 0, "the policy's commands were dropped");
  assert.equal(stack.manager.paused, true);
  await page.screenshot({ path: join(TEST_OUT, "operator-ui-estop.png"), fullPage: true });

  // Start is refused while latched; release, then abort from the page.
  await page.click("#release");
  await page.waitForSelector("body[data-estop=false]");
  await page.click("button[data-cmd=abort]");
  await running;
  assert.deepEqual(ended.map((e) => e.outcome), ["success", "abort"]);

  // Token, Host and robot checks on the API and the WebSocket.
  const base = new URL(ui.url);
  const api = `http://${base.host}/api/status`;
  assert.equal((await fetch(api)).status, 401);
  assert.equal((await fetch(api, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 200);
  // fetch cannot set Host; a DNS-rebinding page would arrive with its own name there.
  const rebound = await new Promise<number>((resolve, reject) =>
    get(`${api}?token=${TOKEN}`, { headers: { host: "evil.example" } }, (res) => (res.resume(), resolve(res.statusCode ?? 0))).on("error", reject),
  );
  assert.equal(rebound, 403);
  const ws = new WebSocket(`ws://${base.host}/ws?token=${TOKEN}`);
  await new Promise((r, j) => ws.once("open", r).once("error", j));
  const replies: { type: string; ok?: boolean; ignored?: boolean }[] = [];
  ws.on("message", (d, bin) => !bin && replies.push(JSON.parse(d.toString())));
  ws.send(JSON.stringify({ type: "command", cmd: "start", robot: "cell-8" }));
  ws.send("{not json");
  await new Promise((r) => setTimeout(r, 300));
  assert.ok(replies.some((m) => m.type === "result" && m.ignored === true), "a command for another robot is ignored");
  const rejected = stack.station!.console.status().rejected;
  assert.equal(rejected.otherRobot, 1);
  assert.equal(rejected.malformed, 1);
  ws.close();
  const badWs = new WebSocket(`ws://${base.host}/ws?token=wrong-token-0123456789abc`);
  await assert.rejects(new Promise((r, j) => badWs.once("open", r).once("error", j)), /401/);

  // The MCAP of episode 0 has the operator's reward and the success event.
  await stack.recorder!.flush();
  const r = await EpisodeReader.open(join(out, "episode_000000.mcap"));
  const rewards: { reward: number; terminal: boolean; source: string }[] = [];
  const events: string[] = [];
  for await (const m of r.messages({ topics: ["/reward", "/episode/event"] })) {
    if (m.topic === "/reward") rewards.push(m.message as never);
    else events.push((m.message as { event: string }).event);
  }
  await r.close();
  assert.deepEqual(rewards, [{ header: (rewards[0] as never as { header: unknown }).header, reward: 1, terminal: true, source: "web_ui" }]);
  assert.deepEqual(events, ["start", "success"]);
  const r1 = await EpisodeReader.open(join(out, "episode_000001.mcap"));
  const ev1: string[] = [];
  for await (const m of r1.messages({ topics: ["/episode/event", "/safety/events"] })) ev1.push(m.topic === "/episode/event" ? (m.message as { event: string }).event : `safety:${(m.message as { kind: string }).kind}`);
  await r1.close();
  assert.ok(ev1.includes("pause") && ev1.includes("safety:estop") && ev1.at(-1) === "abort", ev1.join(","));
});
