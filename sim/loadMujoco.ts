/** Loads the MuJoCo WASM module once per process; later callers share the same promise. */
import loadModule, { type MainModule } from "mujoco-js";

let cached: Promise<MainModule> | undefined;

/** The MuJoCo module with a MEMFS mounted at /working (XML must be written there before loading). */
export function loadMujoco(): Promise<MainModule> {
  cached ??= loadModule().then((mj) => {
    // mujoco-js reads models through its virtual FS; without this mount loadFromXML cannot find the file.
    mj.FS.mkdir("/working");
    mj.FS.mount(mj.MEMFS, { root: "." }, "/working");
    return mj;
  });
  return cached;
}
