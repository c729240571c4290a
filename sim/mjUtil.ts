/** Small helpers over mujoco-js (compiling a scene, the name table, flat arrays), shared by the robot worlds (sim/arm5/, sim/so101/). */
import type { MainModule, MjModel } from "mujoco-js";

/** `id(type, name)`: the object's index, or an error naming the scene's missing `name` (`required` false: -1). */
export function idLookup(mj: MainModule, model: MjModel, missing: (name: string) => string): (type: number, name: string, required?: boolean) => number {
  return (type, name, required = true) => {
    const i = mj.mj_name2id(model, type, name);
    if (i < 0 && required) throw new Error(missing(name));
    return i;
  };
}

/** Entry `index` of an array of 3-vectors (site_xpos, mocap_pos, xpos). */
export function vec3(a: unknown, index: number): [number, number, number] {
  const v = a as Float64Array;
  return [v[3 * index], v[3 * index + 1], v[3 * index + 2]];
}

let counter = 0;

/** Compiles MJCF `xml` written as a unique file in `dir` of MuJoCo's virtual FS (includes resolve from there); the file is removed after. */
export function compileXml(mj: MainModule, dir: string, name: string, xml: string): MjModel {
  const path = `${dir}/${name}_${process.pid}_${counter++}.xml`;
  mj.FS.writeFile(path, xml);
  try {
    return mj.MjModel.loadFromXML(path);
  } finally {
    mj.FS.unlink(path);
  }
}
