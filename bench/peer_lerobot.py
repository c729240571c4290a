"""LeRobot's own HIL-SERL (SAC, learner + actor over gRPC) on gym-hil PandaPickCube, CPU, no teleoperator.

Runs `lerobot.rl.learner` or `lerobot.rl.actor` (LeRobot 0.4.4, bench/peer/lerobot-requirements.txt, in its own venv)
with bench/peer/lerobot_gym_hil_sac.json, whose `dataset` is rlft's 50 scripted demos as a LeRobotDataset
(bench/peer/lerobot_demos.py). Patches, each only in this process:

- TrainRLServerPipelineConfig.validate() of 0.4.4 reads `dataset.repo_id` unconditionally; a config without an offline
  dataset (which its RL learner supports: `if cfg.dataset is not None`) would fail with AttributeError. With a dataset,
  as here, this patch does nothing.
- actor: the gym-hil env. LeRobot 0.4.4's make_robot_env builds it as
  `gym.make("gym_hil/PandaPickCube-v0", image_obs=True, render_mode="human", use_gripper=..., gripper_penalty=...)`:
  it renders two 128x128 cameras every step (about 0.74 s a step with MUJOCO_GL=osmesa on this machine against 0.011 s
  without; bench/peer_lerobot.sh measures both), its observation then has no block position (gym-hil drops
  `environment_state` when image_obs is true), the block starts at one fixed position, and every reset sleeps 1 s.
  Here the actor's env is the same registered env and wrappers made with `image_obs=False, render_mode="rgb_array",
  random_block_position=True, reset_delay_seconds=0`: the state task rlft's launch/gym_hil.yaml runs (agent_pos and
  the block's position; LeRobot's own processors map them to observation.state and observation.environment_state),
  and the policy reads state only. The processors, the policy, the learner and the 10 Hz pacing are LeRobot's.
- learner: on shutdown (SIGTERM from bench/peer_lerobot.sh once the actor has run its episode budget), the policy it
  trained is saved with LeRobot's own `save_pretrained` to <output_dir>/final/pretrained_model, for
  bench/peer/lerobot_eval.py (0.4.4 saves only at save_freq steps; checkpointing is off in the config).

Usage: python bench/peer_lerobot.py learner|actor --config_path bench/peer/lerobot_gym_hil_sac.json [draccus overrides]
(bench/peer_lerobot.sh starts both and stops them after the episode budget.)
"""

import logging
import os
import sys
from types import SimpleNamespace

import gymnasium as gym
from lerobot.configs.train import TrainRLServerPipelineConfig

_validate = TrainRLServerPipelineConfig.validate


def _validate_without_dataset(self):
    if self.dataset is not None:
        return _validate(self)
    self.dataset = SimpleNamespace(repo_id="none")
    try:
        return _validate(self)
    finally:
        self.dataset = None


TrainRLServerPipelineConfig.validate = _validate_without_dataset

# The gym-hil env of rlft's launch/gym_hil.yaml: state observations, random block position, no reset sleep.
GYM_HIL_KWARGS = {"image_obs": False, "render_mode": "rgb_array", "random_block_position": True, "reset_delay_seconds": 0}


def make_state_env(cfg):
    """lerobot.rl.gym_manipulator.make_robot_env for gym_hil, with GYM_HIL_KWARGS instead of its rendered env."""
    import gym_hil  # noqa: F401

    gripper = cfg.processor.gripper
    env = gym.make(f"gym_hil/{cfg.task}", use_gripper=gripper.use_gripper if gripper is not None else True,
                   gripper_penalty=gripper.gripper_penalty if gripper is not None else 0.0, **GYM_HIL_KWARGS)
    return env, None


def patch_actor_env():
    import lerobot.rl.gym_manipulator as gm

    original = gm.make_robot_env

    def make_robot_env(cfg):
        if cfg.name != "gym_hil":
            return original(cfg)
        logging.info("bench/peer_lerobot.py: gym_hil/%s with %s (state only, no rendering)", cfg.task, GYM_HIL_KWARGS)
        return make_state_env(cfg)

    gm.make_robot_env = make_robot_env


def run_learner():
    import lerobot.rl.learner as learner

    made = []
    make_policy = learner.make_policy

    def capture(*args, **kwargs):
        policy = make_policy(*args, **kwargs)
        made.append(policy)
        return policy

    learner.make_policy = capture
    out = None
    for a in sys.argv[1:]:
        if a.startswith("--output_dir="):
            out = a.split("=", 1)[1]
    try:
        learner.train_cli()
    finally:
        if made and out:
            path = os.path.join(out, "final", "pretrained_model")
            made[-1].save_pretrained(path)
            print(f"bench/peer_lerobot.py: saved the learner's policy to {path}", flush=True)


if __name__ == "__main__":
    role = sys.argv.pop(1) if len(sys.argv) > 1 else ""
    if role == "learner":
        run_learner()
    elif role == "actor":
        patch_actor_env()
        from lerobot.rl.actor import actor_cli

        actor_cli()
    else:
        sys.exit("bench/peer_lerobot.py needs a role first: learner or actor (then --config_path ...).")
