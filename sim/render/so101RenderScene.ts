/**
 * A small SO-101 scene for the renderer's tests and benchmark (the task scenes live with the SO-101 sim): the
 * Menagerie arm unchanged, a table top in front of it, a red cube, a green target disc, a blue bowl-like cylinder
 * and one spot light, plus MJCF cameras named like the shipped calibration files so MuJoCo's own renderer can look
 * through the same cameras.
 */
import { fileURLToPath } from "node:url";
import type { MainModule, MjData, MjModel } from "mujoco-js";
import { loadMujoco } from "../loadMujoco.ts";
import { loadSceneWithAssets } from "./loadScene.ts";

/** Where the SO-101 model and its meshes are. */
export const SO101_ASSETS = fileURLToPath(new URL("../assets/so101", import.meta.url));

/** The scene's MJCF (it includes so101.xml from the asset folder). */
export function so101RenderSceneXml(): string {
  return `<mujoco model="so101_render_scene">
  <include file="so101.xml"/>
  <visual><headlight ambient="0.1 0.1 0.1" diffuse="0.4 0.4 0.4" specular="0.1 0.1 0.1"/></visual>
  <worldbody>
    <light name="key" pos="0.3 -0.25 1.0" dir="-0.1 0.2 -1" diffuse="0.7 0.7 0.7" specular="0.2 0.2 0.2" cutoff="60" exponent="1"/>
    <geom name="floor" type="plane" size="1.5 1.5 0.05" pos="0 0 -0.75" rgba="0.3 0.3 0.32 1"/>
    <geom name="table" type="box" size="0.4 0.4 0.02" pos="0.2 0 -0.02" rgba="0.62 0.55 0.45 1"/>
    <body name="cube" pos="0.2 0.06 0.015">
      <freejoint name="cube"/>
      <geom name="cube" type="box" size="0.015 0.015 0.015" rgba="0.85 0.1 0.1 1"/>
    </body>
    <body name="target" mocap="true" pos="0.24 -0.08 0.001">
      <geom name="target" type="cylinder" size="0.03 0.001" rgba="0.1 0.75 0.2 1" contype="0" conaffinity="0"/>
    </body>
    <body name="bowl" pos="0.3 0.12 0.02">
      <geom name="bowl" type="cylinder" size="0.04 0.02" rgba="0.15 0.3 0.8 1" contype="0" conaffinity="0"/>
      <geom name="bowl_rim" type="capsule" size="0.006 0.03" pos="0 0.04 0.02" euler="0 1.5708 0" rgba="0.15 0.3 0.8 1" contype="0" conaffinity="0"/>
      <geom name="bowl_ball" type="sphere" size="0.012" pos="0 0 0.03" rgba="0.9 0.8 0.2 1" contype="0" conaffinity="0"/>
      <geom name="bowl_egg" type="ellipsoid" size="0.012 0.008 0.006" pos="-0.03 -0.02 0.025" rgba="0.9 0.5 0.2 1" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
</mujoco>`;
}

/** The scene, loaded. */
export interface So101RenderScene {
  mj: MainModule;
  model: MjModel;
  data: MjData;
  close(): void;
}

/** Loads the scene; call close() to free the WASM model and data. */
export async function loadSo101RenderScene(): Promise<So101RenderScene> {
  const mj = await loadMujoco();
  const model = loadSceneWithAssets(mj, so101RenderSceneXml(), SO101_ASSETS, "so101_render_scene");
  const data = new mj.MjData(model);
  mj.mj_forward(model, data);
  return {
    mj,
    model,
    data,
    close: () => {
      data.delete();
      model.delete();
    },
  };
}
