"""Summarise a bench/peer_lerobot.sh run from LeRobot's own logs: actor episodes (reward, success), learner updates.

gym-hil PandaPickCube's reward is sparse: 1 on the step the block is lifted (the episode then ends), plus the gripper
penalty (-0.02 per gripper toggle with LeRobot's config); an episode counts as a success when its reward sum is > 0.5.
Usage: python bench/peer/lerobot_summary.py actor.log learner.log budget_seconds
"""

import json
import re
import sys

actor_log, learner_log, budget = sys.argv[1], sys.argv[2], float(sys.argv[3])
actor = open(actor_log, encoding="utf8", errors="replace").read()
learner = open(learner_log, encoding="utf8", errors="replace").read()
episodes = [(int(s), float(r)) for s, r in re.findall(r"Global step (\d+): Episode reward: (-?[\d.eE+-]+)", actor)]
steps = [int(s) for s in re.findall(r"Number of optimization step: (\d+)", learner)]
hz = [float(h) for h in re.findall(r"Optimization frequency loop \[Hz\]: ([\d.eE+-]+)", learner)]
succ = [r > 0.5 for _, r in episodes]
hz_sorted = sorted(hz)
out = {
    "budget_s": budget,
    "episodes": len(episodes),
    "env_steps": episodes[-1][0] if episodes else 0,
    "successes": sum(succ),
    "success_last_10": sum(succ[-10:]),
    "episode_rewards": [round(r, 3) for _, r in episodes],
    "learner_updates_logged": steps[-1] if steps else 0,
    "learner_update_hz_median": hz_sorted[len(hz_sorted) // 2] if hz_sorted else 0.0,
    "learner_update_loops": len(hz),
}
print(json.dumps(out, indent=1))
