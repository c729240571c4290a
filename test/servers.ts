/**
 * Real servers for tests: Debian's mosquitto (MQTT) and victoria-metrics (InfluxDB line protocol, v2 write API),
 * and the path of Debian's chromium for UI tests.
 *
 * `.ci/run` starts one shared mosquitto and one victoria-metrics and exports their URLs
 * (RLFT_TEST_MQTT_URL, RLFT_TEST_INFLUX_URL); without those variables each call starts a private server on a free
 * loopback port and stops it in `stop()`. Tests that need their own configuration (password file, ACLs) pass
 * `config` and always get a private broker. When a binary is missing, `requireServer` explains which Debian
 * package to install; under CI=true a missing server is a failure, elsewhere the test is skipped.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../app/ports.ts";

export { freePort };

export interface RunningServer {
  url: string;
  host: string;
  port: number;
  /** Stops the server if this call started it (no-op for the shared CI server). */
  stop(): Promise<void>;
}

export function which(bin: string, extra: string[] = []): string | undefined {
  for (const p of extra) if (existsSync(p)) return p;
  const r = spawnSync("sh", ["-c", `command -v ${bin}`], { encoding: "utf8" });
  const out = r.stdout.trim();
  return r.status === 0 && out ? out : undefined;
}

async function waitForPort(port: number, child: ChildProcess, what: string, timeoutMs = 15000): Promise<void> {
  const start = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what} exited with code ${child.exitCode} before listening on ${port}`);
    const ok = await new Promise<boolean>((resolve) => {
      const c = createConnection({ host: "127.0.0.1", port }, () => { c.destroy(); resolve(true); });
      c.on("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() - start > timeoutMs) throw new Error(`${what} did not listen on 127.0.0.1:${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function stopChild(child: ChildProcess, dir?: string): Promise<void> {
  return new Promise((resolve) => {
    const done = () => { if (dir) rmSync(dir, { recursive: true, force: true }); resolve(); };
    if (child.exitCode !== null || child.signalCode !== null) return done();
    child.once("exit", done);
    child.kill("SIGTERM");
    setTimeout(() => { if (child.exitCode === null) child.kill("SIGKILL"); }, 3000).unref();
  });
}

export const MOSQUITTO_BIN = () => which("mosquitto", ["/usr/sbin/mosquitto"]);
export const VICTORIA_METRICS_BIN = () => which("victoria-metrics", ["/usr/bin/victoria-metrics"]);
export const CHROMIUM_BIN = () => which("chromium", ["/usr/bin/chromium"]);

/**
 * A mosquitto broker. `config` lines are appended to a generated config that listens on a free loopback port
 * (e.g. `["allow_anonymous false", "password_file /tmp/x/passwd", "acl_file /tmp/x/acl"]`).
 */
export async function startMosquitto(opts: { config?: string[] } = {}): Promise<RunningServer> {
  const shared = process.env.RLFT_TEST_MQTT_URL;
  if (shared && !opts.config) {
    const u = new URL(shared);
    return { url: shared, host: u.hostname, port: Number(u.port), stop: async () => {} };
  }
  const bin = MOSQUITTO_BIN();
  if (!bin) throw new Error("mosquitto is not installed: sudo apt-get install -y mosquitto");
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "rlft-mosquitto-"));
  const conf = join(dir, "mosquitto.conf");
  const lines = [`listener ${port} 127.0.0.1`, "persistence false", "log_dest stderr", "log_type error", ...(opts.config ?? [])];
  if (!lines.some((l) => l.startsWith("allow_anonymous"))) lines.push("allow_anonymous true");
  writeFileSync(conf, lines.join("\n") + "\n");
  const child = spawn(bin, ["-c", conf], { stdio: ["ignore", "ignore", "pipe"] });
  await waitForPort(port, child, "mosquitto");
  return { url: `mqtt://127.0.0.1:${port}`, host: "127.0.0.1", port, stop: () => stopChild(child, dir) };
}

/**
 * The settings of docker/mosquitto/secure.conf.example (what docs/security.md tells a lab to run), for
 * {@link startMosquitto}'s `config`: its own listener, persistence and log lines are dropped (the test broker has
 * its own) and the password and ACL files point at `files`.
 */
export function secureMosquittoConfig(files: { passwordFile: string; aclFile: string }): string[] {
  const text = readFileSync(join(import.meta.dirname, "..", "docker", "mosquitto", "secure.conf.example"), "utf8");
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#") && !/^(listener|persistence|persistence_location|log_dest)\b/.test(l))
    .map((l) => l.replace(/^password_file .*/, `password_file ${files.passwordFile}`).replace(/^acl_file .*/, `acl_file ${files.aclFile}`));
}

/** A victoria-metrics instance: write with the InfluxDB v2 API at `url`, read back with `${url}/api/v1/export`. */
export async function startVictoriaMetrics(): Promise<RunningServer> {
  const shared = process.env.RLFT_TEST_INFLUX_URL;
  if (shared) {
    const u = new URL(shared);
    return { url: shared, host: u.hostname, port: Number(u.port), stop: async () => {} };
  }
  const bin = VICTORIA_METRICS_BIN();
  if (!bin) throw new Error("victoria-metrics is not installed: sudo apt-get install -y victoria-metrics");
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "rlft-vm-"));
  const child = spawn(bin, [`-storageDataPath=${dir}`, `-httpListenAddr=127.0.0.1:${port}`, "-loggerLevel=ERROR"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  await waitForPort(port, child, "victoria-metrics");
  return { url: `http://127.0.0.1:${port}`, host: "127.0.0.1", port, stop: () => stopChild(child, dir) };
}

/**
 * For `test(name, { skip: requireServer("mosquitto") }, ...)`: false when the binary exists; otherwise a skip
 * reason — except under CI=true, where a missing server must fail loudly instead of silently skipping.
 */
export function requireServer(name: "mosquitto" | "victoria-metrics" | "chromium"): false | string {
  const found = name === "mosquitto" ? MOSQUITTO_BIN() : name === "victoria-metrics" ? VICTORIA_METRICS_BIN() : CHROMIUM_BIN();
  if (found) return false;
  const msg = `${name} is not installed (sudo apt-get install -y ${name})`;
  if (process.env.CI === "true") throw new Error(`${msg}; .ci/run installs it`);
  return msg;
}
