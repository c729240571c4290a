/** The real `rlft` command for tests and fault rows: run it, start it in the background, read what it recorded. */
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { EpisodeReader } from "../../recording/EpisodeReader.ts";

export const RLFT_BIN = join(import.meta.dirname, "..", "..", "bin", "rlft.js");

/** Runs `rlft args...` to its end; `timeout` is a hang guard (the result then has signal SIGTERM). */
export function rlft(args: string[], timeout = 300_000): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [RLFT_BIN, ...args], { encoding: "utf8", timeout });
}

/** Starts `rlft args...` in the background. */
export function startRlft(args: string[]): ChildProcess {
  return spawn(process.execPath, [RLFT_BIN, ...args], { stdio: ["ignore", "pipe", "pipe"] });
}

/** Resolves when the child has exited (at once when it already has). */
export function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r({ code: child.exitCode, signal: child.signalCode }) : child.once("exit", (code, signal) => r({ code, signal }))));
}

/** Waits (a hang guard, not a timing assertion) until `cond`; throws when the child exits first or `ms` pass. */
export async function untilChild(child: ChildProcess, cond: () => boolean, what: string, ms = 120_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (child.exitCode !== null) throw new Error(`the child exited (${child.exitCode}) before ${what}`);
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A session index (index.json). */
export interface SessionIndex {
  episodes: { episode: number; file: string; seed: number; outcome: string; steps?: number }[];
}

/** The index of a recording directory (no episodes when there is none yet). */
export function readIndex(dir: string): SessionIndex {
  return existsSync(join(dir, "index.json")) ? (JSON.parse(readFileSync(join(dir, "index.json"), "utf8")) as SessionIndex) : { episodes: [] };
}

/** The MCAP files of a directory, sorted. */
export function mcapFiles(dir: string): string[] {
  return readdirSync(dir).filter((f) => f.endsWith(".mcap")).sort();
}

/**
 * What is wrong with the finished episodes of `idx` (none: []): each must open as a complete file (summary and footer,
 * not recovered), carry its result and hold messages. Episodes indexed as interrupted/unreadable are skipped.
 */
export async function episodeProblems(dir: string, idx: SessionIndex): Promise<string[]> {
  const problems: string[] = [];
  for (const e of idx.episodes.filter((x) => x.outcome !== "interrupted" && x.outcome !== "unreadable")) {
    try {
      const r = await EpisodeReader.open(join(dir, e.file));
      try {
        if (r.recovered) problems.push(`${e.file} is not complete (read by scanning)`);
        if (r.result?.outcome !== e.outcome) problems.push(`${e.file}: result ${r.result?.outcome}, index ${e.outcome}`);
        let n = 0;
        for await (const _ of r.messages()) n++;
        if (n === 0) problems.push(`${e.file} holds no messages`);
      } finally {
        await r.close();
      }
    } catch (err) {
      problems.push(`${e.file}: ${(err as Error).message}`);
    }
  }
  return problems;
}

/** Processes whose command line names `file` (Linux /proc), e.g. a learner started on a run directory's learner.yaml. */
export function processesNaming(file: string): string[] {
  return readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, "utf8").includes(file);
      } catch {
        return false;
      }
    });
}

/** Waits (up to `ms`, a hang guard) until no process names `file`: a stopped learner may take a moment to exit. */
export async function untilNoProcessNaming(file: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (processesNaming(file).length > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
}
