/**
 * Diagnosis of bench:pixels: the first 40 stamped messages of an episode MCAP in log order (topic and header stamp),
 * e.g. to see whether a tick's camera frames are published before the policy acts on that tick.
 *
 * Usage: node --import tsx bench/pixdiag/order.mts <episode.mcap>
 */
import { EpisodeReader } from "../../recording/EpisodeReader.ts";

const r = await EpisodeReader.open(process.argv[2]);
let n = 0;
for await (const m of r.messages({})) {
  const st = (m.message as { header?: { stamp?: { sec: number; nanosec: number } } }).header?.stamp;
  if (!st || m.topic.includes("depth")) continue;
  console.log(m.topic.padEnd(28), `${st.sec}.${String(st.nanosec).padStart(9, "0")}`);
  if (++n >= 40) break;
}
await r.close();
