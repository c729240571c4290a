"""Held-out success of a LeRobot 0.4.4 SAC policy on gym-hil PandaPickCube, as its actor runs it (its own venv).

The policy is LeRobot's SACPolicy.from_pretrained (bench/peer_lerobot.py saves the learner's at shutdown); the env is
the actor's (bench/peer_lerobot.py make_state_env: the registered gym_hil/PandaPickCube-v0 with state observations,
random block position, no reset sleep) with LeRobot's own gym_hil processors (make_processors) and step function
(step_env_and_process_transition), and policy.select_action as its actor calls it (no pacing: evaluation only).
Episode i uses seed `first + i` as rlft's gym driver does: NumPy's global generator seeded (gym-hil draws the block
position from it), then env.reset(seed=...); torch is seeded too (SAC samples its action). Success: a step with
reward >= 0.5 (gym-hil's sparse reward is 1 on the lift; the episode then ends), or info["succeed"].

Usage: python bench/peer/lerobot_eval.py <pretrained_model dir> [episodes=200] [first seed=100000] [out.json]
"""

import json
import math
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from peer_lerobot import make_state_env  # noqa: E402

from lerobot.policies.sac.modeling_sac import SACPolicy  # noqa: E402
from lerobot.processor import TransitionKey  # noqa: E402
from lerobot.processor.converters import create_transition  # noqa: E402
from lerobot.rl.gym_manipulator import make_processors, step_env_and_process_transition  # noqa: E402


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


model = sys.argv[1]
episodes = int(sys.argv[2]) if len(sys.argv) > 2 else 200
first = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000
out = sys.argv[4] if len(sys.argv) > 4 else None

policy = SACPolicy.from_pretrained(model).eval()
keys = list(policy.config.input_features)
env_cfg = SimpleNamespace(name="gym_hil", task="PandaPickCube-v0",
                          processor=SimpleNamespace(gripper=SimpleNamespace(use_gripper=True, gripper_penalty=-0.02),
                                                    reset=SimpleNamespace(terminate_on_success=True)))
env, _ = make_state_env(env_cfg)
env_processor, action_processor = make_processors(env, None, env_cfg, "cpu")

t0 = time.perf_counter()
results = []
for i in range(episodes):
    seed = first + i
    np.random.seed(seed)
    torch.manual_seed(seed)
    obs, info = env.reset(seed=seed)
    env_processor.reset()
    action_processor.reset()
    policy.reset()
    transition = env_processor(create_transition(observation=obs, info=info))
    success, steps = False, 0
    while True:
        observation = {k: v for k, v in transition[TransitionKey.OBSERVATION].items() if k in keys}
        with torch.no_grad():
            action = policy.select_action(batch=observation)
        transition = step_env_and_process_transition(env=env, transition=transition, action=action,
                                                     env_processor=env_processor, action_processor=action_processor)
        steps += 1
        reward = float(transition[TransitionKey.REWARD])
        success = success or reward >= 0.5 or bool(transition[TransitionKey.INFO].get("succeed", False))
        if transition.get(TransitionKey.DONE, False) or transition.get(TransitionKey.TRUNCATED, False) or steps >= 100:
            break
    results.append({"seed": seed, "success": bool(success), "steps": steps})
    if (i + 1) % 20 == 0:
        print(f"eval {i + 1}/{episodes}: {sum(r['success'] for r in results)} successes", flush=True)

env.close()
k = sum(r["success"] for r in results)
lo, hi = wilson(k, episodes)
summary = {"policy": model, "episodes": episodes, "first_seed": first, "successes": k, "rate": k / episodes, "wilson95": [lo, hi],
           "mean_steps": sum(r["steps"] for r in results) / episodes, "wall_s": time.perf_counter() - t0}
print(json.dumps(summary), flush=True)
if out:
    Path(out).write_text(json.dumps({**summary, "episodes_detail": results}, indent=1) + "\n")
