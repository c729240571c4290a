"""rlft's scripted gym-hil demos as the offline dataset of LeRobot 0.4.4's SAC / HIL-SERL learner (its own venv).

Input: the LeRobotDataset v3.0 that `rlft dataset export <demos> --format lerobot --no-video` wrote from the same 50
scripted-expert episodes bench:peer trains rlft's BC on (observation.state: the 21 values of launch/gym_hil.yaml,
agent_pos then the block's position; action: ee_dx, ee_dy, ee_dz, gripper in [0, 2]; next.reward 1 on the last frame
of a success; next.done). LeRobot 0.4.4 reads it as it is (this script loads it with LeRobotDataset first); what its
RL learner needs on top is LeRobot's own layout of gym-hil's state observation, which its processors produce online
(VanillaObservationProcessorStep: agent_pos -> observation.state, environment_state -> observation.environment_state)
and the `complementary_info.discrete_penalty` its online transitions carry (the learner concatenates online and
offline batches key by key, and its discrete critic reads that penalty). So this writes a second LeRobotDataset with
LeRobot's own API (LeRobotDataset.create / add_frame / save_episode / finalize):
  observation.state             float32 [18]  agent_pos (7 joint positions, 7 velocities, gripper, pinch position)
  observation.environment_state float32 [3]   the block's position
  action                        float32 [4]   unchanged (the gripper value, 0 or 2 in these demos, is the index of
                                              LeRobot's discrete gripper head: it rounds the last action value)
  next.reward, next.done                      unchanged
  complementary_info.discrete_penalty float32 [1]  what gym-hil's GripperPenaltyWrapper puts into info on that step
                                              (LeRobot's config: gripper_penalty), from the recorded gripper state
Then it loads the result into LeRobot's ReplayBuffer.from_lerobot_dataset as its learner does and prints a summary.

Usage: python bench/peer/lerobot_demos.py <rlft export dir> <out dir> [gripper_penalty, default -0.02]
"""

import json
import sys
from pathlib import Path

import torch
from lerobot.datasets.lerobot_dataset import LeRobotDataset
from lerobot.rl.buffer import ReplayBuffer

MAX_GRIPPER_COMMAND = 255.0  # gym_hil.mujoco_gym_env
AGENT = 18  # agent_pos values, then environment_state (3)

src, out = Path(sys.argv[1]), Path(sys.argv[2])
penalty = float(sys.argv[3]) if len(sys.argv) > 3 else -0.02
if out.exists():
    sys.exit(f"{out} exists: remove it first (LeRobotDataset.create writes a new dataset)")

rl = LeRobotDataset("rlft/gym_hil_pick_cube_rlft_export", root=src)
names = rl.meta.features["observation.state"]["names"]
if rl.meta.features["observation.state"]["shape"][0] != AGENT + 3 or list(names[AGENT:]) != ["block_x", "block_y", "block_z"]:
    sys.exit(f"{src}: observation.state is not launch/gym_hil.yaml's agent_pos + block position (names {names})")
print(f"LeRobot read rlft's export: {rl.meta.total_episodes} episodes, {rl.meta.total_frames} frames, "
      f"codebase {rl.meta.info['codebase_version']}, features {sorted(rl.meta.features)}", flush=True)

features = {
    "observation.state": {"dtype": "float32", "shape": (AGENT,), "names": list(names[:AGENT])},
    "observation.environment_state": {"dtype": "float32", "shape": (3,), "names": list(names[AGENT:])},
    "action": {"dtype": "float32", "shape": (4,), "names": rl.meta.features["action"]["names"]},
    "next.reward": {"dtype": "float32", "shape": (1,), "names": None},
    "next.done": {"dtype": "bool", "shape": (1,), "names": None},
    "complementary_info.discrete_penalty": {"dtype": "float32", "shape": (1,), "names": None},
}
ds = LeRobotDataset.create(repo_id="rlft/gym_hil_pick_cube_demos", fps=rl.fps, features=features, root=out,
                           robot_type="franka_panda", use_videos=False)
episode, penalties, frames = None, 0, 0
for i in range(len(rl)):
    f = rl[i]
    if episode is not None and int(f["episode_index"]) != episode:
        ds.save_episode()
    episode = int(f["episode_index"])
    s, a = f["observation.state"].float(), f["action"].float()
    # gym-hil's GripperPenaltyWrapper: the command (gripper - 1 after its EEActionWrapper) against the gripper's state
    # before the step (its actuator command / 255, agent_pos[14]).
    g, before = float(a[-1]) - 1.0, float(s[14]) / MAX_GRIPPER_COMMAND
    pen = penalty if (g < -0.5 and before > 0.9) or (g > 0.5 and before < 0.1) else 0.0
    penalties += pen != 0.0
    ds.add_frame({
        "observation.state": s[:AGENT],
        "observation.environment_state": s[AGENT:],
        "action": a,
        "next.reward": f["next.reward"].float().reshape(1),
        "next.done": f["next.done"].bool().reshape(1),
        "complementary_info.discrete_penalty": torch.tensor([pen], dtype=torch.float32),
        "task": f["task"],
    })
    frames += 1
ds.save_episode()
ds.finalize()

back = LeRobotDataset("rlft/gym_hil_pick_cube_demos", root=out)
buf = ReplayBuffer.from_lerobot_dataset(back, device="cpu", state_keys=["observation.state", "observation.environment_state"],
                                        storage_device="cpu", optimize_memory=True, capacity=100_000)
print(json.dumps({
    "dataset": str(out), "episodes": back.meta.total_episodes, "frames": back.meta.total_frames, "tasks": list(back.meta.tasks.index),
    "reward_sum": float(sum(float(back[i]["next.reward"]) for i in range(len(back)))), "gripper_penalty_steps": int(penalties),
    "replay_buffer": len(buf),
}), flush=True)
