/**
 * Loads an MJCF scene that includes files from disk (a robot model and its meshes) into mujoco-js: the files are
 * copied into a fresh folder of the WASM file system, the model is compiled, and the folder is removed again.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { MainModule, MjModel } from "mujoco-js";

let counter = 0;

/**
 * Compiles `xml` with the files of `assetDir` (recursively; null: none) beside it, so `<include file="so101.xml"/>` and the
 * model's `meshdir` resolve as on disk. Errors name the scene and MuJoCo's message.
 */
export function loadSceneWithAssets(mj: MainModule, xml: string, assetDir: string | null, name = "scene"): MjModel {
  const root = `/working/${name}_${process.pid}_${counter++}`;
  const made: string[] = [];
  const files: string[] = [];
  const copy = (src: string | null, dst: string) => {
    mj.FS.mkdir(dst);
    made.push(dst);
    for (const entry of src ? readdirSync(src) : []) {
      const s = join(src!, entry);
      if (statSync(s).isDirectory()) copy(s, `${dst}/${entry}`);
      else {
        mj.FS.writeFile(`${dst}/${entry}`, new Uint8Array(readFileSync(s)));
        files.push(`${dst}/${entry}`);
      }
    }
  };
  try {
    copy(assetDir, root);
    mj.FS.writeFile(`${root}/__scene.xml`, xml);
    files.push(`${root}/__scene.xml`);
    try {
      return mj.MjModel.loadFromXML(`${root}/__scene.xml`);
    } catch (e) {
      throw new Error(`${name}: MuJoCo could not compile the scene (${(e as Error).message ?? String(e)})`);
    }
  } finally {
    for (const f of files) mj.FS.unlink(f);
    for (const d of made.reverse()) mj.FS.rmdir(d);
  }
}
