import base64
import glob
import json
import os

import msgpack
import numpy as np
import pytest

from rlft_learner.transport.protocol import FrameError, PROTOCOL, ProtocolError, decode, encode

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "rlft-exp-1")


def episode_frames(T=4, obs_dim=3, act_dim=2, **over):
    header = {"type": "episode", "seq": 1, "episode_id": "e1", "seed": 0, "task": "t", "length": T, "success": False, **over}
    return encode(header, {"obs": np.ones((T, obs_dim)), "action": np.zeros((T, act_dim)), "reward": np.zeros(T)})


def test_round_trip_keeps_header_and_tensors():
    obs = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)
    frames = encode({"type": "episode", "seq": 9, "episode_id": "e", "seed": 1, "task": "t", "length": 4, "success": True},
                    {"obs": obs, "action": np.zeros((4, 2)), "reward": np.arange(4)})
    header, tensors = decode(frames)
    assert header["protocol"] == PROTOCOL and header["seq"] == 9 and header["success"] is True
    assert [s["name"] for s in header["tensors"]] == ["obs", "action", "reward"]
    np.testing.assert_array_equal(tensors["obs"], obs)
    assert tensors["reward"].dtype == np.float32 and tensors["reward"].tolist() == [0, 1, 2, 3]
    assert len(frames[1]) == 4 * 12  # raw float32 LE, no framing


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(GOLDEN, "*.json"))))
def test_golden_files_decode_as_recorded(path):
    golden = json.load(open(path))
    frames = [base64.b64decode(f) for f in golden["frames_b64"]]
    if golden.get("expect_error"):
        with pytest.raises(ProtocolError) as err:
            decode(frames)
        if os.path.basename(path).startswith("bad-zlib-"):  # hostile zlib frames: a FrameError naming the camera
            assert isinstance(err.value, FrameError) and golden["error"] in str(err.value) and "front" in str(err.value)
        return
    header, tensors = decode(frames)
    assert header == golden["header"]
    assert set(tensors) == set(golden["tensors"])
    for name, want in golden["tensors"].items():
        assert list(tensors[name].shape) == want["shape"]
        assert tensors[name].reshape(-1).tolist() == want["values"]


def test_golden_set_is_complete():
    names = {os.path.basename(p) for p in glob.glob(os.path.join(GOLDEN, "*.json"))}
    assert {"hello.json", "episode.json", "end.json", "bad-protocol.json", "bad-frame-size.json"} <= names


def _with_header(frames, **changes):
    header = msgpack.unpackb(frames[0])
    header.update(changes)
    return [msgpack.packb(header)] + frames[1:]


@pytest.mark.parametrize("mutate, message", [
    (lambda f: [], "empty message"),
    (lambda f: [b"\xc1garbage"] + f[1:], "not valid msgpack"),
    (lambda f: [msgpack.packb([1, 2])] + f[1:], "must be a msgpack map"),
    (lambda f: _with_header(f, protocol="rlft-exp/2"), "protocol must be"),
    (lambda f: _with_header(f, seq=-1), "seq must be"),
    (lambda f: _with_header(f, type="dance"), "unknown message type"),
    (lambda f: _with_header(f, success="yes"), "episode.success must be bool"),
    (lambda f: _with_header(f, length=5), "shape must be [5"),
    (lambda f: f[:3], "lists 3 tensors but the message has 2"),
    (lambda f: f[:1] + [f[1][:-4]] + f[2:], "needs 48 bytes"),
    (lambda f: f[:1] + [np.full((4, 3), np.nan, "<f4").tobytes()] + f[2:], "non-finite"),
])
def test_malformed_messages_raise_protocol_error(mutate, message):
    with pytest.raises(ProtocolError, match=message.replace("[", r"\[")):
        decode(mutate(episode_frames()))


def test_error_carries_seq_when_readable():
    with pytest.raises(ProtocolError) as err:
        decode(_with_header(episode_frames(seq=17), type="dance"))
    assert err.value.seq == 17


def test_wrong_dtype_is_rejected():
    frames = episode_frames()
    header = msgpack.unpackb(frames[0])
    header["tensors"][0]["dtype"] = "float64"
    with pytest.raises(ProtocolError, match="dtype must be 'float32'"):
        decode([msgpack.packb(header)] + frames[1:])


def _transitions(**changes):
    n = 2
    header = {"type": "transitions", "seq": 3, "robot_id": "r", "first_seq": 0, "count": n, "episode": [0, 0], "step": [0, 1],
              "policy_version": ["v", "v"], "intervention_source": ["", ""], **changes}
    return encode(header, {k: np.zeros((n, 3) if k in ("obs", "next_obs") else (n, 2) if "action" in k else n)
                           for k in ("obs", "next_obs", "base_action", "residual_action", "action", "next_base_action",
                                     "reward", "terminated", "truncated", "intervention")})


@pytest.mark.parametrize("changes, message", [
    ({"step": [0, 2**64 - 1]}, r"transitions.step item is 18446744073709551615; expected an integer in \[0, 2\^53 - 1\]"),
    ({"episode": [-(2**63), 0]}, r"transitions.episode item is -9223372036854775808"),
    ({"first_seq": 2**53}, r"transitions.first_seq is 9007199254740992"),
    ({"count": 2**64 - 1}, r"transitions.count is 18446744073709551615"),
    ({"seq": 2**64 - 1}, r"seq must be an integer in \[0, 2\^53 - 1\]; found 18446744073709551615"),
])
def test_extreme_integers_are_protocol_errors(changes, message):
    with pytest.raises(ProtocolError, match=message):
        decode(_transitions(**changes))


@pytest.mark.parametrize("value, message", [
    (3e38, r"tensor 'reward' has 1 values beyond ±1e\+06 \(largest \|x\| 3e\+38, the first at row 1, column 0\)"),
    (-1e6 - 1, r"tensor 'reward' has 1 values beyond ±1e\+06"),
    (float("inf"), r"tensor 'reward' has 1 non-finite values \(NaN/Inf\), the first at row 1, column 0"),
])
def test_values_beyond_the_cap_are_value_range_errors(value, message):
    from rlft_learner.transport.protocol import ValueRangeError

    header, tensors = decode(_transitions())
    tensors["reward"][1] = value
    with pytest.raises(ValueRangeError, match=message):
        decode(encode({k: v for k, v in header.items() if k not in ("tensors", "protocol")}, tensors))
    tensors["reward"][1] = 1e6  # the cap itself is allowed
    decode(encode({k: v for k, v in header.items() if k not in ("tensors", "protocol")}, tensors))


def test_robot_ids_are_short_names():
    hello = {"type": "hello", "seq": 0, "config_hash": "h", "obs_names": ["o"], "action_names": ["a"], "task": "t"}
    decode(encode({**hello, "robot_id": "r" * 128}))
    for rid in ("", "r" * 129):
        with pytest.raises(ProtocolError, match=r"hello.robot_id must be 1 to 128 characters"):
            decode(encode({**hello, "robot_id": rid}))


@pytest.mark.parametrize("source, ok", [("scripted_expert", True), ("x" * 64, True), ("x" * 65, False), ("a\nb", False),
                                        ("x" * 10**6, False)])
def test_episode_source_is_a_short_printable_tag(source, ok):
    frames = episode_frames(source=source)
    if ok:
        assert decode(frames)[0]["source"] == source
        return
    with pytest.raises(ProtocolError, match="episode.source must be at most 64 printable ASCII characters"):
        decode(frames)
