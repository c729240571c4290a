/** The real servers other tests rely on start, listen on loopback, and stop. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createConnection } from "node:net";
import { requireServer, startMosquitto, startVictoriaMetrics } from "./servers.ts";

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = createConnection({ host: "127.0.0.1", port }, () => { c.destroy(); resolve(true); });
    c.on("error", () => resolve(false));
  });
}

test("mosquitto starts on a free loopback port", { skip: requireServer("mosquitto") }, async () => {
  const s = await startMosquitto();
  try {
    assert.match(s.url, /^mqtt:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(await connects(s.port), true);
  } finally {
    await s.stop();
  }
});

test("victoria-metrics accepts the InfluxDB v2 write API and exports it back", { skip: requireServer("victoria-metrics") }, async () => {
  const s = await startVictoriaMetrics();
  try {
    const res = await fetch(`${s.url}/api/v2/write?org=rlft&bucket=test`, { method: "POST", body: "rlft_servers_test,robot=r1 value=42\n" });
    assert.equal(res.status, 204);
    let body = "";
    for (let i = 0; i < 100 && !body.includes("42"); i++) {
      await fetch(`${s.url}/internal/force_flush`).catch(() => undefined);
      body = await (await fetch(`${s.url}/api/v1/export?match[]={__name__=~"rlft_servers_test.*"}`)).text();
      if (!body.includes("42")) await new Promise((r) => setTimeout(r, 100));
    }
    assert.match(body, /42/);
  } finally {
    await s.stop();
  }
});
