// Telemetry against a real line-protocol server (Debian's victoria-metrics, InfluxDB v2 write API): points written are
// read back through /api/v1/export; with the database down or hanging, points are dropped and counted, the pending
// queue stays bounded and point() never throws. The control-loop monitor counts deadline misses from its topics.
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createServer, type Socket } from "node:net";
import { Telemetry, type FieldValue } from "../telemetry/Telemetry.ts";
import { ControlLoopMonitor } from "../nodes/ControlLoopMonitor.ts";
import { createRuntime } from "../runtime/index.ts";
import { freePort, requireServer, startVictoriaMetrics } from "./servers.ts";

async function exportSeries(url: string, match: string): Promise<{ metric: Record<string, string>; values: number[] }[]> {
  const res = await fetch(`${url}/api/v1/export?match[]=${encodeURIComponent(match)}`);
  assert.equal(res.status, 200);
  return (await res.text()).trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

test("points written through the influxdb client are read back from victoria-metrics", { skip: requireServer("victoria-metrics"), timeout: 60_000 }, async () => {
  const vm = await startVictoriaMetrics();
  const run = randomBytes(4).toString("hex");
  const tel = Telemetry.create({ url: vm.url, tags: { robot: "sim-0", run }, flushIntervalMs: 100, batchSize: 50 });
  try {
    const t0 = Date.now() - 10_000;
    for (let i = 0; i < 120; i++) tel.point("rlft_loop", { period_ms: 100 + (i % 3), deadline_misses: i % 40 === 0 ? 1 : 0 }, { clock: "sim" }, t0 + i * 50);
    tel.point("rlft_episode", { success: true, steps: 42, intervention_rate: 0.25 }, { outcome: "success" }, t0);
    await tel.flush();
    assert.deepEqual([tel.stats().written, tel.stats().dropped, tel.stats().pending], [121, 0, 0]);
    let loop: Awaited<ReturnType<typeof exportSeries>> = [];
    const until = Date.now() + 20_000; // victoria-metrics makes fresh samples searchable within a few seconds
    while (Date.now() < until) {
      loop = await exportSeries(vm.url, `{__name__=~"rlft_loop_.*",run="${run}"}`);
      if (loop.reduce((a, s) => a + s.values.length, 0) >= 240) break;
      await new Promise((r) => setTimeout(r, 300));
    }
    const period = loop.find((s) => s.metric.__name__ === "rlft_loop_period_ms");
    assert.ok(period, JSON.stringify(loop.map((s) => s.metric)));
    assert.equal(period.values.length, 120);
    assert.deepEqual([period.metric.robot, period.metric.clock], ["sim-0", "sim"]);
    assert.equal(loop.find((s) => s.metric.__name__ === "rlft_loop_deadline_misses")!.values.reduce((a, b) => a + b, 0), 3);
    const ep = await exportSeries(vm.url, `{__name__="rlft_episode_steps",run="${run}"}`);
    assert.deepEqual([ep[0]?.values, ep[0]?.metric.outcome], [[42], "success"]);
  } finally {
    await tel.close();
    await vm.stop();
  }
});

test("a database that is down or hangs: points are dropped and counted, pending stays bounded, nothing throws", { timeout: 30_000 }, async () => {
  const down = Telemetry.create({ url: `http://127.0.0.1:${await freePort()}`, flushIntervalMs: 50, logger: { warn: () => undefined } });
  for (let i = 0; i < 100; i++) assert.equal(down.point("rlft_loop", { period_ms: i }), true);
  await down.flush();
  assert.deepEqual([down.stats().written, down.stats().dropped, down.stats().pending], [0, 100, 0]);
  assert.ok(down.stats().failedWrites >= 1 && down.stats().lastError !== null);
  await down.close();

  // Accepts connections and never answers: writes hang until their timeout, new points beyond the cap are dropped.
  const sockets: Socket[] = [];
  const srv = createServer((s) => void sockets.push(s));
  const port = await new Promise<number>((r) => srv.listen(0, "127.0.0.1", () => r((srv.address() as { port: number }).port)));
  const hang = Telemetry.create({ url: `http://127.0.0.1:${port}`, flushIntervalMs: 20, batchSize: 10, maxPendingLines: 50, timeoutMs: 1000, logger: { warn: () => undefined } });
  const fields: Record<string, FieldValue> = { spool_bytes: 1 };
  let accepted = 0;
  for (let i = 0; i < 1000; i++) if (hang.point("rlft_bridge", fields)) accepted++;
  assert.equal(accepted, 50);
  assert.equal(hang.stats().pending, 50);
  assert.equal(hang.stats().dropped, 950);
  await hang.close();
  assert.equal(hang.stats().written, 0);
  for (const s of sockets) s.destroy();
  srv.close();
});

test("the control-loop monitor counts ticks, deadline misses and latency per window", async () => {
  const rt = await createRuntime("embedded", { clock: "sim", logLevel: "error" });
  const points: { m: string; f: Record<string, FieldValue> }[] = [];
  let now = 0;
  const mon = new ControlLoopMonitor(rt.createNode("monitor"), { telemetry: { point: (m, f) => points.push({ m, f }) > 0 }, nowMs: () => now });
  try {
    for (let t = 0; t < 10; t++) {
      const stamp = { sec: t, nanosec: 0 };
      mon.onObservation(stamp);
      now += 2;
      if (t !== 4 && t !== 7) mon.onCommand(stamp); // ticks 4 and 7: the actor never answered
      now += 98;
    }
    mon.onObservation({ sec: 10, nanosec: 0 });
    mon.report();
    assert.deepEqual(mon.totals, { ticks: 11, deadlineMisses: 2 });
    assert.equal(points.length, 1);
    assert.equal(points[0].m, "rlft_loop");
    assert.deepEqual([points[0].f.period_ms, points[0].f.jitter_ms, points[0].f.deadline_misses, points[0].f.latency_p50_ms], [100, 0, 2, 2]);
  } finally {
    await rt.shutdown();
  }
});
