"""LeRobot itself writes a small dataset with its recording API (LeRobotDataset.create / add_frame / save_episode) on
synthetic data, for `rlft dataset import` to read. The release on PYTHONPATH decides the layout: LeRobot 0.4 writes
v3.0, LeRobot 0.3 v2.1. Prints what it wrote as one line of JSON.

    lerobot_write.py ROOT

Two episodes (lengths 9 and 7, different tasks) at 10 fps; observation.state (4), action (3), a `next.done` flag and
one 64×64 camera (LeRobot 0.3 encodes AV1 with SVT-AV1, which needs at least 64 pixels a side) whose frame i of
episode e is one flat colour.
"""
import inspect
import os
import sys

import peer_env

peer_env.import_torchvision()

import numpy as np  # noqa: E402
from lerobot.datasets.lerobot_dataset import LeRobotDataset  # noqa: E402

FPS = 10
LENGTHS = [9, 7]
TASKS = ["stack the blocks", "open the drawer"]


def colour(e, i):
    return [10 + 20 * i, 40 + 100 * e, 200 - 15 * i]


def state(e, i):
    return [0.1 * i, -0.2 * e, 0.5 + 0.01 * i, 1.0]


def action(e, i):
    return [0.05 * i + e, -0.1 * i, 0.25]


def main():
    root = os.path.abspath(sys.argv[1])
    features = {
        "observation.state": {"dtype": "float32", "shape": (4,), "names": ["q0", "q1", "q2", "gripper"]},
        "action": {"dtype": "float32", "shape": (3,), "names": ["a0", "a1", "a2"]},
        "observation.images.top": {"dtype": "video", "shape": (64, 64, 3), "names": ["height", "width", "channels"]},
        "next.done": {"dtype": "bool", "shape": (1,), "names": None},
    }
    create = LeRobotDataset.create
    kwargs = {"use_videos": True}
    if "vcodec" in inspect.signature(create).parameters:
        kwargs["vcodec"] = "h264"  # LeRobot 0.4: h264 encodes faster than its default AV1
    ds = create("local/" + os.path.basename(root), fps=FPS, features=features, root=root, robot_type="so100_follower", **kwargs)
    new_api = "task" not in inspect.signature(ds.add_frame).parameters  # 0.4 takes the task inside the frame
    for e, n in enumerate(LENGTHS):
        for i in range(n):
            frame = {
                "observation.state": np.array(state(e, i), np.float32),
                "action": np.array(action(e, i), np.float32),
                "observation.images.top": np.full((64, 64, 3), colour(e, i), np.uint8),
                "next.done": np.array([i == n - 1]),
            }
            if new_api:
                ds.add_frame({**frame, "task": TASKS[e]})
            else:
                ds.add_frame(frame, task=TASKS[e])
        ds.save_episode()
    if hasattr(ds, "finalize"):
        ds.finalize()
    peer_env.emit({
        "codebase_version": ds.meta.info["codebase_version"],
        "fps": FPS,
        "episodes": [
            {"task": TASKS[e], "state": [state(e, i) for i in range(n)], "action": [action(e, i) for i in range(n)], "colour": [colour(e, i) for i in range(n)]}
            for e, n in enumerate(LENGTHS)
        ],
    })


if __name__ == "__main__":
    main()
