// Worker entry: registers tsx inside this thread (loader hooks are per thread in Node 20), then loads the TS worker.
// Works whether the parent ran `node --import tsx` or a plain node entry point that registered tsx itself.
import { register } from "tsx/esm/api";

register();
await import(new URL("./inferenceWorker.ts", import.meta.url).href);
