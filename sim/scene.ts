/** MJCF generator for the `rlft_arm5` scene; the XML is built from ARM_SPEC so code and model share one source of numbers. */
import { ARM_SPEC } from "./armSpec.ts";
import type { Arm5TaskName } from "./tasks.ts";

/** Options of {@link sceneXml}. */
export interface SceneOptions {
  /**
   * `push_cube` adds the free cube and a flat target disc; `reach` a floating target ball; `peg_insert`
   * a free square peg (ArmSim.reset puts it between the fingers) and the hole fixture as the mocap `target`;
   * `multi_push` a red and a blue cube (`cube_red`, `cube_blue`) and two discs (`target_left`, `target_right`).
   */
  task: Arm5TaskName;
  /** Physics step in seconds (contract: 0.002). */
  physicsDt?: number;
}

/** Returns the MJCF XML of the table, the arm, the gripper and the task objects. */
export function sceneXml(opts: SceneOptions): string {
  const s = ARM_SPEC;
  const dt = opts.physicsDt ?? 0.002;
  const t = s.table;
  const lim = (i: number): string => `${s.jointLower[i]} ${s.jointUpper[i]}`;
  const fingerRange = `0 ${s.jointUpper[4] / 2}`;
  // Collision bits: world objects are contype 1 / conaffinity 3, robot geoms contype 2 / conaffinity 0,
  // so the robot touches the world but never itself (the closed fingers overlap by design).
  const robot = `contype="2" conaffinity="0" group="1"`;
  const world = `contype="1" conaffinity="3"`;
  const fingerTip = s.tool - 0.04; // finger bodies start 4 cm down the tool axis and end at the ee site.
  const task = taskXml(opts.task, world);
  // peg_insert: grippy fingers (priority 1 wins the friction of finger–peg contacts), so the squeezed peg
  // does not slide up when it meets the fixture; the push tasks keep the smooth 0.3 pushing face.
  const fingerFriction = opts.task === "peg_insert" ? `friction="1.5 0.02 0.0001" condim="4" priority="1"` : `friction="0.3 0.005 0.0001"`;
  return `<mujoco model="rlft_arm5">
  <compiler angle="radian" autolimits="true"/>
  <!-- implicitfast keeps the stiff position servos stable at 2 ms. peg_insert: elliptic cones and impratio 10
       (MuJoCo's advice for grasping) keep the squeezed peg from creeping down between the fingers. -->
  <option timestep="${dt}" integrator="implicitfast"${opts.task === "peg_insert" ? ` cone="elliptic" impratio="10"` : ""}/>
  <default>
    <joint armature="0.02" damping="4"/>
    <position ctrllimited="true" forcelimited="true"/>
  </default>
  <worldbody>
    <light pos="0.3 0 1.5" dir="0 0 -1"/>
    <geom name="floor" type="plane" size="2 2 0.1" pos="0 0 -0.5" rgba="0.35 0.35 0.38 1" ${world}/>
    <geom name="table" type="box" pos="${(t.xMin + t.xMax) / 2} 0 -0.02" size="${(t.xMax - t.xMin) / 2} ${t.yHalf} 0.02" friction="0.5 0.005 0.0001" rgba="0.72 0.6 0.45 1" ${world}/>
    <geom name="base" type="cylinder" pos="0 0 0.015" size="0.045 0.015" rgba="0.2 0.2 0.25 1" ${robot}/>
    <body name="turntable" gravcomp="1">
      <joint name="shoulder_pan" axis="0 0 1" range="${lim(0)}" damping="5"/>
      <geom name="turntable" type="capsule" fromto="0 0 0.04 0 0 ${s.shoulderHeight - 0.02}" size="0.025" rgba="0.25 0.3 0.45 1" ${robot}/>
      <body name="upper_arm" pos="0 0 ${s.shoulderHeight}" gravcomp="1">
        <joint name="shoulder_lift" axis="0 1 0" range="${lim(1)}" damping="5"/>
        <geom name="upper_arm" type="capsule" fromto="0 0 0 0 0 ${s.upperArm}" size="0.02" rgba="0.3 0.4 0.6 1" ${robot}/>
        <body name="forearm" pos="0 0 ${s.upperArm}" gravcomp="1">
          <joint name="elbow_flex" axis="0 1 0" range="${lim(2)}" damping="3"/>
          <geom name="forearm" type="capsule" fromto="0 0 0 0 0 ${s.forearm}" size="0.017" rgba="0.3 0.4 0.6 1" ${robot}/>
          <body name="hand" pos="0 0 ${s.forearm}" gravcomp="1">
            <joint name="wrist_flex" axis="0 1 0" range="${lim(3)}" damping="2"/>
            <geom name="palm" type="box" pos="0 0 0.025" size="0.015 0.05 0.012" rgba="0.25 0.25 0.3 1" ${robot}/>
            <body name="finger_left" pos="0 0 0.04" gravcomp="1">
              <joint name="finger_left" type="slide" axis="0 1 0" range="${fingerRange}" armature="0.01" damping="10"/>
              <geom name="finger_left" type="box" pos="0 ${s.fingerHalf / 2} ${fingerTip / 2}" size="${s.fingerHalf} ${s.fingerHalf / 2} ${fingerTip / 2}" ${fingerFriction} rgba="0.15 0.15 0.18 1" ${robot}/>
            </body>
            <body name="finger_right" pos="0 0 0.04" gravcomp="1">
              <joint name="finger_right" type="slide" axis="0 -1 0" range="${fingerRange}" armature="0.01" damping="10"/>
              <geom name="finger_right" type="box" pos="0 ${-s.fingerHalf / 2} ${fingerTip / 2}" size="${s.fingerHalf} ${s.fingerHalf / 2} ${fingerTip / 2}" ${fingerFriction} rgba="0.15 0.15 0.18 1" ${robot}/>
            </body>
            <site name="ee" pos="0 0 ${s.tool}" size="0.005"/>
          </body>
        </body>
      </body>
    </body>${task}
  </worldbody>
  <equality>
    <!-- Parallel gripper: the right finger mirrors the left one, so one actuator drives both. -->
    <joint joint1="finger_right" joint2="finger_left" polycoef="0 1 0 0 0"/>
  </equality>
  <actuator>
    <position name="shoulder_pan" joint="shoulder_pan" kp="80" ctrlrange="${lim(0)}" forcerange="-8 8"/>
    <position name="shoulder_lift" joint="shoulder_lift" kp="120" ctrlrange="${lim(1)}" forcerange="-10 10"/>
    <position name="elbow_flex" joint="elbow_flex" kp="80" ctrlrange="${lim(2)}" forcerange="-8 8"/>
    <position name="wrist_flex" joint="wrist_flex" kp="40" ctrlrange="${lim(3)}" forcerange="-5 5"/>
    <!-- gear 2: the actuator length is the opening (both fingers), so ctrl is in metres of opening. -->
    <position name="gripper" joint="finger_left" gear="2" kp="200" ctrlrange="${lim(4)}" forcerange="-20 20"/>
  </actuator>
</mujoco>
`;
}

/** The task objects: cube + disc, target ball, or peg + hole fixture. */
function taskXml(task: Arm5TaskName, world: string): string {
  const s = ARM_SPEC;
  switch (task) {
    case "push_cube":
      return `
    <body name="cube" pos="0.22 0 ${s.cubeHalf}">
      <freejoint name="cube"/>
      <geom name="cube" type="box" size="${s.cubeHalf} ${s.cubeHalf} ${s.cubeHalf}" mass="0.08" friction="0.5 0.005 0.0001" rgba="0.9 0.1 0.1 1" ${world}/>
    </body>
    <body name="target" mocap="true" pos="0.3 0 0">
      <geom name="target" type="cylinder" size="${s.targetRadius} 0.0005" pos="0 0 0.0006" rgba="0.1 0.8 0.2 1" contype="0" conaffinity="0"/>
    </body>`;
    case "multi_push": {
      const cube = (color: string, rgba: string, y: number): string => `
    <body name="cube_${color}" pos="0.22 ${y} ${s.cubeHalf}">
      <freejoint name="cube_${color}"/>
      <geom name="cube_${color}" type="box" size="${s.cubeHalf} ${s.cubeHalf} ${s.cubeHalf}" mass="0.08" friction="0.5 0.005 0.0001" rgba="${rgba}" ${world}/>
    </body>`;
      const disc = (side: string, y: number): string => `
    <body name="target_${side}" mocap="true" pos="0.22 ${y} 0">
      <geom name="target_${side}" type="cylinder" size="${s.targetRadius} 0.0005" pos="0 0 0.0006" rgba="0.1 0.8 0.2 1" contype="0" conaffinity="0"/>
    </body>`;
      return cube("red", "0.9 0.1 0.1 1", 0.06) + cube("blue", "0.1 0.25 0.9 1", -0.06) + disc("left", 0.15) + disc("right", -0.15);
    }
    case "reach":
      return `
    <body name="target" mocap="true" pos="0.25 0 0.1">
      <geom name="target" type="sphere" size="0.012" rgba="0.1 0.8 0.2 1" contype="0" conaffinity="0"/>
    </body>`;
    case "peg_insert": {
      const p = s.peg;
      const a = p.half + p.clearance; // hole half side
      const w = p.wall;
      const zc = p.height / 2;
      // Four walls around a square hole that goes down to the table; priority 2 gives peg–wall contacts the
      // walls' low friction, so a slightly misaligned peg slides in instead of jamming.
      const wall = (name: string, x: number, y: number, sx: number, sy: number): string =>
        `<geom name="${name}" type="box" pos="${x} ${y} ${zc}" size="${sx} ${sy} ${zc}" friction="0.3 0.005 0.0001" priority="2" rgba="0.2 0.45 0.8 1" ${world}/>`;
      return `
    <body name="peg" pos="0.2 0 ${p.halfLength + 0.05}">
      <freejoint name="peg"/>
      <geom name="peg" type="box" size="${p.half} ${p.half} ${p.halfLength}" mass="${p.mass}" friction="0.5 0.005 0.0001" rgba="0.9 0.6 0.1 1" ${world}/>
    </body>
    <body name="target" mocap="true" pos="0.22 0 0">
      ${wall("fixture_px", a + w / 2, 0, w / 2, a + w)}
      ${wall("fixture_nx", -(a + w / 2), 0, w / 2, a + w)}
      ${wall("fixture_py", 0, a + w / 2, a, w / 2)}
      ${wall("fixture_ny", 0, -(a + w / 2), a, w / 2)}
    </body>`;
    }
  }
}
