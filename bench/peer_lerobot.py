"""LeRobot's own HIL-SERL (SAC, learner + actor over gRPC) on gym-hil PandaPickCube, CPU, no teleoperator.

Runs `lerobot.rl.learner` or `lerobot.rl.actor` (LeRobot 0.4.4, bench/peer/lerobot-requirements.txt, in its own venv)
with bench/peer/lerobot_gym_hil_sac.json. One patch, and only in this process: LeRobot 0.4.4's
TrainPipelineConfig.validate() reads `dataset.repo_id` unconditionally, so a run without an offline dataset (which
its RL learner itself supports: `if cfg.dataset is not None`) fails with AttributeError before starting; here validate
sees a placeholder while it runs and the config gets `dataset = None` back.

Usage: python bench/peer_lerobot.py learner|actor --config_path bench/peer/lerobot_gym_hil_sac.json [draccus overrides]
(bench/peer_lerobot.sh starts both and stops them after a time budget.)
"""

import sys
from types import SimpleNamespace

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

if __name__ == "__main__":
    role = sys.argv.pop(1) if len(sys.argv) > 1 else ""
    if role == "learner":
        from lerobot.rl.learner import train_cli

        train_cli()
    elif role == "actor":
        from lerobot.rl.actor import actor_cli

        actor_cli()
    else:
        sys.exit("bench/peer_lerobot.py needs a role first: learner or actor (then --config_path ...).")
