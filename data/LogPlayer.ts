/**
 * `rlft replay <episodes> --through-nodes`: republishes recorded topics on the embedded runtime with their recorded
 * timestamps, so any node (a new safety rule, the experience bridge, a policy in shadow mode, the recorder) runs on
 * real logs. The sim clock follows the log: the messages of log time t are published just before the timers due at
 * t fire (1 ns earlier), which is the order of the live stack, where the driver's tick publishes first. Episodes are
 * played in file order; a file whose times start before the clock (another session) is shifted forward, headers
 * unchanged. The recorder does not keep the episode's "reset" event, so one is published before each "start".
 */
import type { EmbeddedRuntime } from "../runtime/embedded/EmbeddedRuntime.ts";
import type { Publisher } from "../runtime/Runtime.ts";
import { EpisodeReader } from "../recording/EpisodeReader.ts";
import { TOPICS } from "../contracts/topics.ts";

/** Options of {@link playLogs}. */
export interface PlayOptions {
  /** Only these topics (default: every recorded topic). */
  topics?: readonly string[];
  /** Never these topics (e.g. what the node under test publishes itself). */
  exclude?: readonly string[];
  /** Called after each file. */
  onEpisode?: (file: string, messages: number) => void;
  /** Warnings (damaged files). */
  warn?: (msg: string) => void;
}

/** What was played. */
export interface PlayResult {
  episodes: number;
  messages: number;
  perTopic: Map<string, number>;
}

/** Plays `files` on `runtime` (an embedded runtime on the sim clock). */
export async function playLogs(runtime: EmbeddedRuntime, files: readonly string[], opts: PlayOptions = {}): Promise<PlayResult> {
  const clock = runtime.simClock;
  const node = runtime.createNode("log_player");
  const pubs = new Map<string, Publisher<unknown>>();
  const perTopic = new Map<string, number>();
  const exclude = new Set(opts.exclude ?? []);
  let messages = 0;
  try {
    for (const file of files) {
      const r = await EpisodeReader.open(file);
      let n = 0;
      try {
        const topics = r.topics().filter((t) => (!opts.topics || opts.topics.includes(t.topic)) && !exclude.has(t.topic));
        for (const t of topics) {
          if (!pubs.has(t.topic)) {
            const qos = t.topic === TOPICS.episodeEvent.topic ? { durability: "transient_local" as const, depth: 1 } : undefined;
            pubs.set(t.topic, node.createPublisher(t.type, t.topic, qos));
          }
        }
        let offsetNs: bigint | undefined;
        for await (const m of r.messages({ topics: topics.map((t) => t.topic) })) {
          offsetNs ??= (() => {
            const now = BigInt(Math.round(clock.now() * 1e9));
            return m.logTimeNs <= now ? now - m.logTimeNs + 2n : 0n;
          })();
          const at = m.logTimeNs + offsetNs;
          await clock.runUntil(Number(at - 1n) / 1e9);
          const pub = pubs.get(m.topic)!;
          if (m.topic === TOPICS.episodeEvent.topic && (m.message as { event?: string }).event === "start") pub.publish({ ...m.message, event: "reset" });
          pub.publish(m.message);
          perTopic.set(m.topic, (perTopic.get(m.topic) ?? 0) + 1);
          n++;
        }
        // Let timers due at the last message's time fire (they follow the messages, as in the live stack).
        await clock.runUntil(clock.now() + 1e-9);
        if (r.damage || r.recovered) opts.warn?.(r.describeDamage());
      } finally {
        await r.close();
      }
      messages += n;
      opts.onEpisode?.(file, n);
    }
  } finally {
    node.destroy();
  }
  return { episodes: files.length, messages, perTopic };
}
