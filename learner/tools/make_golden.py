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
import zlib

import msgpack
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from rlft_learner.transport.protocol import decode, encode  # noqa: E402

OBS_NAMES = ["q.shoulder_pan", "q.shoulder_lift", "q.elbow_flex", "q.wrist_flex", "q.gripper", "ee.x", "ee.y", "ee.z",
             "cube.x", "cube.y", "target.x", "target.y"]
ACTION_NAMES = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "gripper"]


def _b64(frames: list[bytes]) -> list[str]:
    return [base64.b64encode(f).decode("ascii") for f in frames]


def _valid(description: str, header: dict, tensors: dict[str, np.ndarray] | None = None, frame_zlib_level: int | None = None) -> dict:
    frames = encode(header, tensors, frame_zlib_level)
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
    return {**_base_files(), **_online_files()}


def _online_files() -> dict[str, dict]:
    """Online RL messages (docs/protocol.md)."""
    n = 2
    obs = np.arange(n * 12, dtype=np.float32).reshape(n, 12) * 0.125 - 1.0  # (2, 12)
    base = np.array([[0.5, -0.25, 0.75, 0.0, -1.0], [0.25, -0.5, 1.0, 0.125, -1.0]], dtype=np.float32)  # (2, 5)
    residual = np.array([[0.0625, 0.0, -0.03125, 0.0, 0.0], [-0.0625, 0.03125, 0.0, 0.0, 0.0]], dtype=np.float32)
    tensors = {"obs": obs, "next_obs": obs + 0.0625, "base_action": base, "residual_action": residual,
               "action": np.clip(base + residual, -1, 1), "next_base_action": base[::-1].copy(),
               "reward": np.array([0.0, 1.0], np.float32), "terminated": np.array([0.0, 1.0], np.float32),
               "truncated": np.zeros(n, np.float32), "intervention": np.array([1.0, 0.0], np.float32)}
    header = {"type": "transitions", "seq": 7, "robot_id": "sim-0", "first_seq": 40, "count": n, "episode": [3, 3],
              "step": [12, 13], "policy_version": ["res-push_cube-20261130T001500Z-a1b2c3-u1000"] * n,
              "intervention_source": ["scripted_operator", ""]}
    good = encode(header, tensors)
    # Camera frames of obs and next_obs (issue 27): one 3x2 camera, the second step's image is the first's next_image.
    px = (np.arange(3 * 2 * 3 * 3) * 11 % 256).astype(np.uint8).reshape(3, 2, 3, 3)  # frames of 3 ticks (H=2, W=3)
    framed = {**tensors, "image.front": px[:2], "next_image.front": px[1:]}
    no_next = encode(header, {**tensors, "image.front": px[:2]})
    zipped = encode(header, framed, frame_zlib_level=1)
    return {
        "hello-online": _valid("hello of an online robot (mode online, base policy version)", {
            "type": "hello", "seq": 1, "robot_id": "sim-0", "config_hash": "sha256:0123abcd", "obs_names": OBS_NAMES,
            "action_names": ACTION_NAMES, "task": "push_cube", "mode": "online",
            "base_policy_version": "bc-push_cube-20261130T001500Z-a1b2c3"}),
        "welcome": _valid("welcome to an online robot: resend after acked_seq 39, keep seq > durable_seq 31, latest residual package", {
            "type": "welcome", "seq": 1, "learner": "rlft_learner 0.1.0", "acked_seq": 39, "durable_seq": 31,
            "latest_policy": {"version": "res-push_cube-20261130T001500Z-a1b2c3-u1000", "kind": "residual"},
            "heartbeat_sec": 2.0}),
        "transitions": _valid("2 transitions of sim-0 (seq 40, 41): an intervention step, then a success", header, tensors),
        "ack": _valid("ack of seq 40, 41: stored up to 41, the last checkpoint holds up to 31",
                      {"type": "ack", "seq": 7, "acked_seq": 41, "durable_seq": 31}),
        "heartbeat-request": _valid("heartbeat from an idle robot", {"type": "heartbeat", "seq": 8, "robot_id": "sim-0"}),
        "heartbeat": _valid("heartbeat reply with the learner's counters", {
            "type": "heartbeat", "seq": 8, "acked_seq": 41, "durable_seq": 41, "policy_version": "res-push_cube-20261130T001500Z-a1b2c3-u1000",
            "updates": 1000, "online_transitions": 42, "offline_transitions": 1}),
        "transitions-images": _valid("the same 2 transitions with camera frames: uint8 image.front and next_image.front "
                                     "[2, 2, 3, 3] (the frames of obs and of next_obs)", header, framed),
        "bad-transitions-image-without-next": _invalid("transitions with image.front but no next_image.front", no_next,
                                                       "image.front without next_image.front"),
        "bad-transitions-truncated": _invalid("transitions whose action frame is 8 bytes short of 2x5 float32",
                                              good[:5] + [good[5][:-8]] + good[6:], "frame size"),
        # Frames compressed on the robot (learner.frame_encoding: zlib): one zlib stream per frame, sizes in the spec.
        "transitions-images-zlib": _valid("the same 2 transitions with the same camera frames, each frame one zlib stream "
                                          "(encoding zlib, sizes per frame); decodes to the raw frames", header, framed, 1),
        **_bad_zlib(zipped, px),
    }


def _bad_zlib(zipped: list[bytes], px: np.ndarray) -> dict[str, dict]:
    """Hostile zlib camera frames (the last two frames of `zipped` are image.front and next_image.front)."""
    head = msgpack.unpackb(zipped[0])
    spec = head["tensors"][-1]  # next_image.front: frames px[1], px[2]

    def with_stream(first: bytes, encoding: str = "zlib") -> list[bytes]:
        second = zipped[-1][spec["sizes"][0]:]
        h = {**head, "tensors": head["tensors"][:-1] + [{**spec, "encoding": encoding, "sizes": [len(first), len(second)]}]}
        return [msgpack.packb(h)] + zipped[1:-1] + [first + second]

    stream = zlib.compress(px[1].tobytes(), 1)
    bigger = zlib.compress(np.concatenate([px[1].reshape(-1), px[1].reshape(-1)]).tobytes(), 1)  # 36 bytes for 18
    smaller = zlib.compress(px[1].reshape(-1)[:12].tobytes(), 1)  # a 2x2 frame's bytes where 2x3 is declared
    return {
        "bad-zlib-truncated": _invalid("zlib next_image.front whose first stream is cut 4 bytes short", with_stream(stream[:-4]),
                                       "zlib stream cut short"),
        "bad-zlib-larger-than-declared": _invalid("zlib next_image.front whose first stream inflates to 36 bytes; [2, 3, 3] "
                                                  "declares 18", with_stream(bigger), "inflates to more than"),
        "bad-zlib-wrong-size": _invalid("zlib next_image.front whose first stream holds a 2x2 frame (12 bytes) where the "
                                        "camera is 2x3 (18 bytes)", with_stream(smaller), "inflates to 12 bytes"),
        # A valid zlib stream padded with 8 empty stored blocks: past compressBound(18) = 31 bytes, refused uninflated.
        "bad-zlib-padded": _invalid("zlib next_image.front whose first stream (18 bytes of frame) is padded with 8 empty "
                                    "stored blocks after its zlib header, longer than zlib's compressBound",
                                    with_stream(stream[:2] + b"\x00\x00\x00\xff\xff" * 8 + stream[2:]),
                                    "longer than zlib's compressBound"),
        "bad-zlib-encoding-name": _invalid("next_image.front declaring encoding lz4", with_stream(stream, "lz4"),
                                           "lz4"),
    }


def _base_files() -> dict[str, dict]:
    T = 3
    obs = (np.arange(T * 12, dtype=np.float32).reshape(T, 12) * 0.25 - 2.0)  # (T, 12)
    action = np.array([[0.5, -0.25, 1.0, 0.0, 0.015625]] * T, dtype=np.float32) * np.arange(1, T + 1, dtype=np.float32)[:, None]
    reward = np.array([0.0, 0.0, 1.0], dtype=np.float32)
    episode = _valid("episode with 3 steps of push_cube (obs 3x12, action 3x5, reward 3)",
                     {"type": "episode", "seq": 2, "episode_id": "ep-0001", "seed": 42, "task": "push_cube", "length": T,
                      "success": True}, {"obs": obs, "action": action, "reward": reward})
    good = encode({"type": "episode", "seq": 5, "episode_id": "ep-0002", "seed": 7, "task": "push_cube", "length": 1,
                   "success": False}, {"obs": np.zeros((1, 12)), "action": np.zeros((1, 5)), "reward": np.zeros(1)})
    frames = (np.arange(2 * 2 * 3 * 3) * 7 % 256).astype(np.uint8).reshape(2, 2, 3, 3)  # (T=2, H=2, W=3, rgb)
    image_episode = _valid("episode with 2 steps and one 3x2 camera (uint8 image.front, one frame per step)",
                           {"type": "episode", "seq": 4, "episode_id": "ep-0003", "seed": 9, "task": "push_cube", "length": 2,
                            "success": True}, {"obs": obs[:2], "action": action[:2], "reward": reward[:2], "image.front": frames})
    bad_u8 = encode({"type": "episode", "seq": 6, "episode_id": "ep-0004", "seed": 1, "task": "push_cube", "length": 1,
                     "success": False}, {"obs": np.zeros((1, 12), np.uint8), "action": np.zeros((1, 5)), "reward": np.zeros(1)})
    wrong_proto = msgpack.packb({"type": "hello", "protocol": "rlft-exp/0", "seq": 0, "robot_id": "sim-0", "config_hash": "x",
                                 "obs_names": OBS_NAMES, "action_names": ACTION_NAMES, "task": "push_cube"})
    return {
        "hello": _valid("hello from a sim robot doing push_cube", {
            "type": "hello", "seq": 1, "robot_id": "sim-0", "config_hash": "sha256:0123abcd", "obs_names": OBS_NAMES,
            "action_names": ACTION_NAMES, "task": "push_cube"}),
        "episode": episode,
        "end": _valid("end after 1 episode", {"type": "end", "seq": 3, "episodes": 1}),
        "episode-images": image_episode,
        "bad-uint8-not-an-image": _invalid("episode whose obs tensor is uint8 (only image.<camera> frames may be)", bad_u8, "dtype"),
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
