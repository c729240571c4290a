import { EpisodeReader } from "../../recording/EpisodeReader.ts";
const r = await EpisodeReader.open(process.argv[2]);
let n = 0;
for await (const m of r.messages({})) {
  const st = (m.message as any)?.header?.stamp;
  if (!st || m.topic.includes("depth")) continue;
  console.log(m.topic.padEnd(28), `${st.sec}.${String(st.nanosec).padStart(9, "0")}`, String((m as any).logTime ?? ""));
  if (++n > 40) break;
}
await r.close();
