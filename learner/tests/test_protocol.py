import base64
import glob
import json
import os

import msgpack
import numpy as np
import pytest

from rlft_learner.protocol import PROTOCOL, ProtocolError, decode, encode

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
        with pytest.raises(ProtocolError):
            decode(frames)
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
