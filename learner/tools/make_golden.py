"""Write the rlft-exp/1 golden frames (test/golden/rlft-exp-1/*.json) from the Python encoder.

Both the Python and the TS decoders must decode the valid files to `header`/`tensors` and reject the
`expect_error` ones. Values are exactly representable in float32, so JSON round-trips are exact.

    python3 learner/tools/make_golden.py [--out test/golden/rlft-exp-1]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys

import msgpack
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from rlft_learner.protocol import decode, encode  # noqa: E402

OBS_NAMES = ["q.shoulder_pan", "q.shoulder_lift", "q.elbow_flex", "q.wrist_flex", "q.gripper", "ee.x", "ee.y", "ee.z",
             "cube.x", "cube.y", "target.x", "target.y"]
ACTION_NAMES = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "gripper"]


def _b64(frames: list[bytes]) -> list[str]:
    return [base64.b64encode(f).decode("ascii") for f in frames]


def _valid(description: str, header: dict, tensors: dict[str, np.ndarray] | None = None) -> dict:
    frames = encode(header, tensors)
    decoded, arrays = decode(frames)  # the file records what our decoder returns
    return {"description": description, "frames_b64": _b64(frames), "header": decoded,
            "tensors": {k: {"shape": list(v.shape), "values": v.reshape(-1).tolist()} for k, v in arrays.items()}}


def _invalid(description: str, frames: list[bytes], error: str) -> dict:
    try:
        decode(frames)
    except ValueError:
        pass
    else:
        raise AssertionError(f"golden {description!r} should not decode")
    return {"description": description, "frames_b64": _b64(frames), "expect_error": True, "error": error}


def golden() -> dict[str, dict]:
    T = 3
    obs = (np.arange(T * 12, dtype=np.float32).reshape(T, 12) * 0.25 - 2.0)  # (T, 12)
    action = np.array([[0.5, -0.25, 1.0, 0.0, 0.015625]] * T, dtype=np.float32) * np.arange(1, T + 1, dtype=np.float32)[:, None]
    reward = np.array([0.0, 0.0, 1.0], dtype=np.float32)
    episode = _valid("episode with 3 steps of push_cube (obs 3x12, action 3x5, reward 3)",
                     {"type": "episode", "seq": 2, "episode_id": "ep-0001", "seed": 42, "task": "push_cube", "length": T,
                      "success": True}, {"obs": obs, "action": action, "reward": reward})
    good = encode({"type": "episode", "seq": 5, "episode_id": "ep-0002", "seed": 7, "task": "push_cube", "length": 1,
                   "success": False}, {"obs": np.zeros((1, 12)), "action": np.zeros((1, 5)), "reward": np.zeros(1)})
    wrong_proto = msgpack.packb({"type": "hello", "protocol": "rlft-exp/0", "seq": 0, "robot_id": "sim-0", "config_hash": "x",
                                 "obs_names": OBS_NAMES, "action_names": ACTION_NAMES, "task": "push_cube"})
    return {
        "hello": _valid("hello from a sim robot doing push_cube", {
            "type": "hello", "seq": 1, "robot_id": "sim-0", "config_hash": "sha256:0123abcd", "obs_names": OBS_NAMES,
            "action_names": ACTION_NAMES, "task": "push_cube"}),
        "episode": episode,
        "end": _valid("end after 1 episode", {"type": "end", "seq": 3, "episodes": 1}),
        "bad-protocol": _invalid("hello with protocol rlft-exp/0", [wrong_proto], "protocol"),
        "bad-frame-size": _invalid("episode whose action frame is 4 bytes short of 1x5 float32",
                                   [good[0], good[1], good[2][:-4], good[3]], "frame size"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    parser.add_argument("--out", default=os.path.join(root, "test", "golden", "rlft-exp-1"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name, content in golden().items():
        with open(os.path.join(args.out, f"{name}.json"), "w") as f:
            json.dump(content, f, indent=2)
            f.write("\n")
        print(f"wrote {os.path.join(args.out, name + '.json')}")


if __name__ == "__main__":
    main()
