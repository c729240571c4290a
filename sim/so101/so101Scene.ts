/**
 * The rlft scene around Menagerie's SO-101: so101.xml is included unchanged (with its sts3215 actuator class:
 * kp 998.22, kv 2.731, ±2.94 N·m, i.e. the STS3215's 30 kg·cm stall torque; joint damping 0.6 N·m·s/rad, which
 * with that torque caps a joint near the servo's ~4.7 rad/s no-load speed), and rlft adds a table at z = 0 under
 * the base, lights and the task's objects. Mesh files go into MuJoCo's virtual FS once per process.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { MainModule } from "mujoco-js";
import { SO101_ASSET_DIR, SO101_SPEC } from "./so101Spec.ts";
import type { So101TaskName } from "../tasks.ts";

/** Where so101.xml and its meshes sit in MuJoCo's virtual FS (mounted by loadMujoco). */
const FS_DIR = "/working/so101";

const written = new WeakSet<MainModule>();

/** Copies so101.xml and assets/*.stl into the module's virtual FS (once per module); returns the folder. */
export function writeSo101Assets(mj: MainModule): string {
  if (written.has(mj)) return FS_DIR;
  mj.FS.mkdir(FS_DIR);
  mj.FS.mkdir(`${FS_DIR}/assets`);
  mj.FS.writeFile(`${FS_DIR}/so101.xml`, readFileSync(join(SO101_ASSET_DIR, "so101.xml"), "utf8"));
  for (const f of readdirSync(join(SO101_ASSET_DIR, "assets"))) {
    if (f.endsWith(".stl")) mj.FS.writeFile(`${FS_DIR}/assets/${f}`, readFileSync(join(SO101_ASSET_DIR, "assets", f)));
  }
  written.add(mj);
  return FS_DIR;
}

/** Options of {@link so101SceneXml}. */
export interface So101SceneOptions {
  task: So101TaskName;
  /** Physics step (s); replaces so101.xml's 5 ms when the control period needs another. */
  physicsDt: number;
}

/** The scene's MJCF; it must sit beside so101.xml (the include and meshdir are relative to it). */
export function so101SceneXml(opts: So101SceneOptions): string {
  const s = SO101_SPEC;
  const t = s.table;
  const h = s.cubeHalf;
  return `<mujoco model="rlft_so101_${opts.task}">
  <include file="so101.xml"/>
  <!-- After the include, so only the step changes; so101.xml's solver settings (elliptic cones, impratio 10) stay. -->
  <option timestep="${opts.physicsDt}"/>
  <worldbody>
    <light name="key" pos="0.3 -0.4 1.2" dir="-0.1 0.35 -1" directional="true" diffuse="0.7 0.7 0.7" specular="0.2 0.2 0.2"/>
    <light name="fill" pos="-0.4 0.4 1.0" dir="0.4 -0.4 -1" directional="true" diffuse="0.3 0.3 0.3" specular="0 0 0" castshadow="false"/>
    <geom name="floor" type="plane" pos="0 0 -0.75" size="2 2 0.1" rgba="0.35 0.35 0.38 1"/>
    <geom name="table" type="box" pos="${(t.xMin + t.xMax) / 2} 0 -0.02" size="${(t.xMax - t.xMin) / 2} ${t.yHalf} 0.02" friction="0.6 0.005 0.0001" rgba="0.72 0.6 0.45 1"/>${taskXml(opts.task, h)}
  </worldbody>
</mujoco>
`;
}

function taskXml(task: So101TaskName, h: number): string {
  const disc = `
    <body name="target" mocap="true" pos="0.2 0 0">
      <geom name="target" type="cylinder" size="${SO101_SPEC.targetRadius} 0.0005" pos="0 0 0.0006" rgba="0.1 0.8 0.2 1" contype="0" conaffinity="0"/>
    </body>`;
  // A 3 cm, 20 g cube (wood or PLA); the jaws' own contact settings (priority 1, friction 1, condim 6) govern a grasp.
  const cube = `
    <body name="cube" pos="0.2 0 ${h}">
      <freejoint name="cube"/>
      <geom name="cube" type="box" size="${h} ${h} ${h}" mass="0.02" friction="0.8 0.005 0.0001" rgba="0.9 0.1 0.1 1"/>
    </body>`;
  switch (task) {
    case "reach":
      return `
    <body name="target" mocap="true" pos="0.2 0 0.1">
      <geom name="target" type="sphere" size="0.012" rgba="0.1 0.8 0.2 1" contype="0" conaffinity="0"/>
    </body>`;
    case "push_cube":
    case "pick_place":
      return cube + disc;
    case "multi_push": {
      // Both cubes as push_cube's; both discs green (the instruction says which side). Start poses: reset().
      const colored = (color: string, rgba: string, y: number): string => `
    <body name="cube_${color}" pos="0.2 ${y} ${h}">
      <freejoint name="cube_${color}"/>
      <geom name="cube_${color}" type="box" size="${h} ${h} ${h}" mass="0.02" friction="0.8 0.005 0.0001" rgba="${rgba}"/>
    </body>`;
      const side = (name: string, y: number): string => `
    <body name="target_${name}" mocap="true" pos="0.2 ${y} 0">
      <geom name="target_${name}" type="cylinder" size="${SO101_SPEC.targetRadius} 0.0005" pos="0 0 0.0006" rgba="0.1 0.8 0.2 1" contype="0" conaffinity="0"/>
    </body>`;
      return colored("red", "0.9 0.1 0.1 1", 0.05) + colored("blue", "0.1 0.25 0.9 1", -0.05) + side("left", 0.13) + side("right", -0.13);
    }
  }
}
