"""Camera frames on the experience link and in replay memory (issue 27): the door, storing each frame once, checkpoints."""

import os
import signal
import subprocess
import sys

import msgpack
import numpy as np
import pytest

from door import Door
from rlft_learner.buffers.frames import FrameStore, measure
from rlft_learner.buffers.replay import ReplayBuffer, to_batch
from rlft_learner.transport.protocol import FrameError, ProtocolError, decode, encode
from test_online import hello, transitions
from test_server import ask, client

H, W = 12, 10


def frame(robot: int, episode: int, step: int, cam: int = 0, h: int = H, w: int = W) -> np.ndarray:
    """A frame that names (robot, episode, step, camera) in its pixels, so a sample can be checked against its row."""
    f = np.zeros((h, w, 3), np.uint8)
    f[0, 0] = (robot, episode, step % 256)
    f[0, 1] = (cam, step // 256, 7)
    f[1:] = (step * 3 + cam) % 256
    return f


def rows_for(robot: int, episode: int, steps: range, seq0: int, cams=("front", "wrist"), last_done=False) -> dict:
    n = len(steps)
    rows = {"obs": np.zeros((n, 3), np.float32), "next_obs": np.zeros((n, 3), np.float32),
            **{k: np.zeros((n, 2), np.float32) for k in ("base_action", "action", "next_base_action")},
            "reward": np.zeros(n, np.float32), "terminated": np.zeros(n, np.float32), "truncated": np.zeros(n, np.float32),
            "intervention": np.zeros(n, np.float32), "robot": np.full(n, robot, np.int64),
            "seq": np.arange(seq0, seq0 + n, dtype=np.int64), "step": np.array(steps, np.int64)}
    rows["obs"][:, 0] = rows["next_obs"][:, 0] = robot
    rows["obs"][:, 1] = np.array(steps)
    rows["next_obs"][:, 1] = np.array(steps) + 1
    if last_done:
        rows["truncated"][-1] = 1
    for k, cam in enumerate(cams):
        rows[f"image.{cam}"] = np.stack([frame(robot, episode, s, k) for s in steps])
        rows[f"next_image.{cam}"] = np.stack([frame(robot, episode, s + 1, k) for s in steps])
    return rows


def check_sample(buf: ReplayBuffer, out: dict, idx: np.ndarray, n_step: int = 1) -> None:
    """Every sampled frame is its row's: image from obs (robot, step), next_image from next_obs of the chain's end."""
    for b, row in enumerate(idx):
        robot, step = int(buf.data["robot"][row]), int(buf.data["obs"][row, 1])
        for k, cam in enumerate(buf.frames.cameras):
            img = out[f"image.{cam}"][b]  # (3, H, W)
            assert img.shape == (3, H, W) and img.dtype == np.uint8
            assert (int(img[0, 0, 0]), int(img[2, 0, 0]) + 256 * int(img[1, 0, 1]), int(img[0, 0, 1])) == (robot, step, k)
            nxt = out[f"next_image.{cam}"][b]
            want = int(out["next_obs"][b, 1])  # the step whose frame next_obs shows
            assert int(nxt[2, 0, 0]) + 256 * int(nxt[1, 0, 1]) == want and int(nxt[0, 0, 0]) == robot


# -- replay memory ----------------------------------------------------------------------------------------------------

def test_frames_are_stored_once_and_sampled_as_uint8_nchw():
    buf = ReplayBuffer(1000, 3, 2, frame_codec="raw")
    # Two robots interleaved, batches cut mid-episode, an episode end (truncated) and a next episode.
    buf.add(rows_for(0, 0, range(0, 5), 0))
    buf.add(rows_for(1, 0, range(0, 7), 0))
    buf.add(rows_for(0, 0, range(5, 10), 5, last_done=True))
    buf.add(rows_for(0, 1, range(0, 6), 10))
    buf.add(rows_for(1, 0, range(7, 9), 7))
    f = buf.frames
    # One frame per row and camera; an extra next frame only at robot 0's episode end and each robot's newest row.
    assert set(f.extra["front"]) == set(f.extra["wrist"]) == {16, 22, 24}
    frame_bytes = H * W * 3
    assert f.stored_bytes == frame_bytes * 2 * (len(buf) + 3)
    mem = buf.memory()
    assert mem["bytes_per_transition"] < mem["row_bytes_per_transition"] + 2 * frame_bytes * 1.2
    rng = np.random.default_rng(0)
    for n_step in (1, 3):
        idx = buf.sample_idx(64, rng)
        out = buf.nstep(idx, n_step, 0.9)
        check_sample(buf, out, idx, n_step)
    batch = to_batch([out], "cpu")
    assert batch.images["image.front"].shape == (64, 3, H, W) and str(batch.images["next_image.wrist"].dtype) == "torch.uint8"


def test_a_next_frame_that_differs_is_kept_as_its_own_copy():
    buf = ReplayBuffer(100, 3, 2, frame_codec="zlib1")
    a = rows_for(0, 0, range(0, 4), 0)
    a["next_image.front"][1] = 255  # a camera that dropped a frame: next_image of step 1 is not step 2's image
    buf.add(a)
    assert 1 in buf.frames.extra["front"] and buf.frames.next_row[1] == -1 and buf.frames.next_row[0] == 1
    out = buf.nstep(np.array([1, 2]), 1, 0.9)
    assert (out["next_image.front"][0] == 255).all()


def slow_worker_zlib(gate):
    """A stand-in for frames.py's zlib whose compress waits for `gate` off the main thread (the compressor thread)."""
    import threading
    import zlib

    class SlowZlib:
        @staticmethod
        def compress(data, level):
            if threading.current_thread() is not threading.main_thread():
                gate.wait(10)
            return zlib.compress(data, level)

        decompress = staticmethod(zlib.decompress)
        decompressobj = staticmethod(zlib.decompressobj)

    return SlowZlib


def test_frames_are_compressed_off_the_add_path_and_sample_the_same_while_pending():
    import threading

    from rlft_learner.buffers import frames as frames_mod

    gate = threading.Event()
    SlowZlib = slow_worker_zlib(gate)  # every own frame is still raw when sampled

    buf = ReplayBuffer(16, 3, 2, frame_codec="zlib6")
    frames_mod.zlib = SlowZlib
    try:
        for ep in range(3):  # the ring wraps: rows overwritten while their frames wait for the worker
            buf.add(rows_for(0, ep, range(0, 7), 7 * ep, last_done=True))
        f = buf.frames
        assert f._own_raw["front"].any() and f._pending > 0
        idx = buf.sample_idx(100, np.random.default_rng(3))
        check_sample(buf, buf.nstep(idx, 3, 0.9), idx)
        gate.set()
        stats = f.stats(len(buf))  # waits for the worker
    finally:
        frames_mod.zlib = __import__("zlib")
    assert f._pending == 0 and not any(r.any() for r in f._own_raw.values())
    assert stats["frame_bytes"] < len(buf) * 2 * H * W * 3 / 2  # the own frames are compressed now
    check_sample(buf, buf.nstep(idx, 3, 0.9), idx)
    again = ReplayBuffer(16, 3, 2, frame_codec="zlib6")
    again.load_state(buf.state())
    a, b = buf.nstep(idx, 3, 0.9), again.nstep(idx, 3, 0.9)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])


def test_ring_overwrite_keeps_links_valid():
    buf = ReplayBuffer(16, 3, 2, frame_codec="zlib1")
    seq = 0
    for ep in range(12):
        for robot in (0, 1):
            buf.add(rows_for(robot, ep, range(0, 5), seq, last_done=True))
        seq += 5
    rng = np.random.default_rng(1)
    idx = buf.sample_idx(200, rng)
    check_sample(buf, buf.nstep(idx, 3, 0.9), idx)
    # Extras: only rows whose successor is not held (episode ends; nothing else once linked).
    assert len(buf.frames.extra["front"]) <= 2 * 16 // 5 + 2


def ident_features(frames: dict) -> np.ndarray:
    """A stand-in frozen encoder: (robot, step) read back from each camera's frame (frame() writes them in)."""
    cols = []
    for img in frames.values():  # (N, 3, H, W)
        cols += [img[:, 0, 0, 0].astype(np.float32), img[:, 2, 0, 0] + 256.0 * img[:, 1, 0, 1]]
    return np.stack(cols, 1)


def test_cached_features_are_each_frames_encoded_once_and_follow_ring_overwrites(tmp_path):
    buf = ReplayBuffer(16, 3, 2, frame_codec="zlib1")
    buf.use_features(ident_features)
    rng = np.random.default_rng(2)
    seq = 0

    def check(n_step: int) -> np.ndarray:
        idx = buf.sample_idx(300, rng)
        out = buf.nstep(idx, n_step, 0.9)
        assert "image.front" not in out and out["features"].shape == (300, 4) and out["features"].dtype == np.float32
        for b, row in enumerate(idx):
            robot, step = float(buf.data["robot"][row]), float(buf.data["obs"][row, 1])
            assert list(out["features"][b]) == [robot, step, robot, step]
            assert list(out["next_features"][b]) == [robot, out["next_obs"][b, 1], robot, out["next_obs"][b, 1]]
        return idx

    for ep in range(12):  # the ring wraps several times; episode ends leave extra next frames
        for robot in (0, 1):
            buf.add(rows_for(robot, ep, range(0, 5), seq, last_done=ep % 2 == 0))
            if ep >= 9:
                check(3)
        seq += 5
    f = buf.frames
    before = f.encoded_frames
    assert 0 < before <= 12 * 2 * 5 * 2  # frames and extras, each at most once per write
    for _ in range(3):
        check(1)
    assert f.encoded_frames - before <= 16 + len(f.extra["front"]), "features of rows already encoded were recomputed"
    # A resume recomputes them from the checkpointed frames.
    np.savez(tmp_path / "b.npz", **buf.state())
    again = ReplayBuffer(16, 3, 2, frame_codec="zlib1")
    again.use_features(ident_features)
    again.load_state(dict(np.load(tmp_path / "b.npz")))
    idx = np.arange(16)
    a, b = buf.nstep(idx, 2, 0.9), again.nstep(idx, 2, 0.9)
    assert np.array_equal(a["features"], b["features"]) and np.array_equal(a["next_features"], b["next_features"])
    assert "features" in to_batch([a, b], "cpu").images


@pytest.mark.parametrize("change, message", [
    (lambda r: r.pop("next_image.front"), "next_image.front"),
    (lambda r: r.update({"image.front": r["image.front"][:, :8]}), "camera 'front' must deliver 12x10"),
    (lambda r: r.update({"image.back": r["image.front"], "next_image.back": r["image.front"]}), "['back']"),
])
def test_rows_with_other_frames_are_refused_naming_the_camera(change, message):
    buf = ReplayBuffer(100, 3, 2)
    buf.add(rows_for(0, 0, range(0, 3), 0))
    bad = rows_for(0, 0, range(3, 6), 3)
    change(bad)
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        buf.add(bad)
    assert len(buf) == 3  # nothing of the refused rows stored


def test_checkpoint_state_round_trips_frames(tmp_path):
    buf = ReplayBuffer(64, 3, 2)
    for ep in range(6):
        buf.add(rows_for(0, ep, range(0, 9), 9 * ep, last_done=True))
    path = tmp_path / "online.npz"
    np.savez(path, **buf.state())
    with np.load(path) as f:  # no pickles: the default allow_pickle=False reads it
        arrays = {k: f[k] for k in f.files}
    again = ReplayBuffer(64, 3, 2)
    again.load_state(arrays)
    idx = np.random.default_rng(2).integers(0, len(buf), 100)
    a, b = buf.nstep(idx, 3, 0.9), again.nstep(idx, 3, 0.9)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
    assert again.frames.stored_bytes == buf.frames.stored_bytes


KILLED = r"""
import os, signal, sys
import numpy as np
sys.path.insert(0, sys.argv[2])
from test_frames import rows_for
from rlft_learner.buffers.replay import ReplayBuffer
buf = ReplayBuffer(500, 3, 2)
for ep in range(8):
    buf.add(rows_for(ep % 2, ep, range(0, 20), 20 * ep, last_done=True))
tmp = sys.argv[1] + ".tmp.npz"
np.savez(tmp, **buf.state())
with open(tmp, "rb") as f:
    os.fsync(f.fileno())
os.replace(tmp, sys.argv[1])
out = buf.nstep(buf.sample_idx(256, np.random.default_rng(5)), 3, 0.9)
np.savez(sys.argv[1] + ".sample.npz", **out)
buf.add(rows_for(0, 99, range(0, 20), 500))  # more rows after the checkpoint, lost with the process
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_write_kill_resume_gives_the_same_samples(tmp_path):
    ckpt = str(tmp_path / "online.npz")
    tests = os.path.dirname(os.path.abspath(__file__))
    proc = subprocess.run([sys.executable, "-c", KILLED, ckpt, tests], capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    with np.load(ckpt) as f:
        arrays = {k: f[k] for k in f.files}
    buf = ReplayBuffer(500, 3, 2)
    buf.load_state(arrays)
    out = buf.nstep(buf.sample_idx(256, np.random.default_rng(5)), 3, 0.9)
    with np.load(ckpt + ".sample.npz") as want:
        assert set(want.files) == set(out)
        for k in want.files:
            np.testing.assert_array_equal(want[k], out[k])


def test_to_batch_leaves_out_frames_only_some_parts_carry():
    buf = ReplayBuffer(50, 3, 2)
    buf.add(rows_for(0, 0, range(0, 5), 0))
    plain = ReplayBuffer(50, 3, 2)
    rows = rows_for(0, 0, range(0, 5), 0)
    plain.add({k: v for k, v in rows.items() if "image" not in k})
    idx = np.arange(4)
    batch = to_batch([buf.nstep(idx, 1, 0.9), plain.nstep(idx, 1, 0.9)], "cpu")
    assert batch.obs.shape == (8, 3) and batch.images == {}


def test_measure_reports_bytes_and_decode_cost():
    frames = {"front": np.stack([frame(0, 0, s) for s in range(20)])}
    rows = {r["codec"]: r for r in measure(frames, batch=8, repeats=1, capacity=1000)}
    assert rows["raw"]["front_bytes_per_frame"] == H * W * 3
    assert rows["zlib1"]["front_bytes_per_frame"] < H * W * 3
    assert rows["raw"]["gb_at_capacity"] == pytest.approx((H * W * 3 + 8) * 1000 / 1e9)


def test_codec_names_are_checked():
    with pytest.raises(ValueError, match="'zlib1'..'zlib9'"):
        FrameStore(4, {"front": (H, W)}, "lz4")


# -- the wire ---------------------------------------------------------------------------------------------------------

def framed(seq=1, first=0, n=4, robot="r0", cams=(("front", H, W), ("wrist", H, W)), zlib_level=None, **over):
    """A transitions message (test_online.transitions) with frames added (with `zlib_level`, one zlib stream each)."""
    frames = transitions(seq, first, n, robot)
    header = msgpack.unpackb(frames[0])
    tensors = {}
    for k, (cam, h, w) in enumerate(cams):
        tensors[f"image.{cam}"] = np.stack([frame(0, 0, first + i, k, h, w) for i in range(n)])
        tensors[f"next_image.{cam}"] = np.stack([frame(0, 0, first + i + 1, k, h, w) for i in range(n)])
    tensors.update(over)
    extra = encode({"type": "x", "seq": 0}, tensors, zlib_level)
    header["tensors"] += msgpack.unpackb(extra[0])["tensors"]
    return [msgpack.packb(header)] + frames[1:] + extra[1:]


def test_frames_round_trip_byte_exact():
    header, t = decode(framed())
    assert t["image.front"].dtype == np.uint8 and t["image.front"].shape == (4, H, W, 3)
    np.testing.assert_array_equal(t["next_image.wrist"][2], frame(0, 0, 3, 1))


def _retype(frames, name, dtype):
    header = msgpack.unpackb(frames[0])
    for spec in header["tensors"]:
        if spec["name"] == name:
            spec["dtype"] = dtype
    return [msgpack.packb(header)] + frames[1:]


def _without(frames, name):
    header = msgpack.unpackb(frames[0])
    keep = [i for i, s in enumerate(header["tensors"]) if s["name"] != name]
    header["tensors"] = [header["tensors"][i] for i in keep]
    return [msgpack.packb(header)] + [frames[1 + i] for i in keep]


@pytest.mark.parametrize("make, message", [
    (lambda: _without(framed(), "next_image.front"), "image.front without next_image.front"),
    (lambda: _without(framed(), "image.wrist"), "next_image.wrist without image.wrist"),
    (lambda: framed(**{"next_image.front": np.zeros((4, H, W + 1, 3), np.uint8)}), "image is 12x10 but next_image 12x11"),
    (lambda: framed(**{"image.front": np.zeros((3, H, W, 3), np.uint8)}), r"image.front: one frame per transition, \[4, H, W, 3\]"),
    (lambda: framed(**{"image.front": np.zeros((4, H, W, 4), np.uint8)}), r"\[T, H, W, 3\] rgb8"),
    (lambda: framed(**{"image.front": np.zeros((4, H, W), np.uint8)}), r"\[T, H, W, 3\] rgb8"),
    (lambda: framed(**{"image.front": np.zeros((1, 4097, 2, 3), np.uint8)}), r"sides in \[1, 4096\]"),
    (lambda: framed(**{"image.front": np.zeros((4, H, W, 3), np.float32)}), "must travel as raw uint8"),
    (lambda: _retype(framed(), "next_image.wrist", "float16"), "camera 'wrist' frames must travel as raw uint8"),
])
def test_hostile_frames_are_refused_as_frame_errors(make, message):
    with pytest.raises(FrameError, match=message):
        decode(make())


def test_a_huge_claimed_frame_is_refused_before_anything_is_allocated():
    frames = framed(cams=(("front", H, W),))
    header = msgpack.unpackb(frames[0])
    for spec in header["tensors"]:
        if spec["name"].endswith("image.front"):
            spec["shape"] = [4, 4096, 4096, 3]  # 200 MB claimed, 1.4 kB sent
    with pytest.raises(ProtocolError, match="needs 201326592 bytes of uint8"):
        decode([msgpack.packb(header)] + frames[1:])


def test_episode_messages_carry_no_next_image():
    header = {"type": "episode", "seq": 1, "episode_id": "e", "seed": 0, "task": "t", "length": 2, "success": True}
    frames = encode(header, {"obs": np.ones((2, 3)), "action": np.zeros((2, 2)), "reward": np.zeros(2),
                             "next_image.front": np.zeros((2, H, W, 3), np.uint8)})
    with pytest.raises(ProtocolError, match="next_image.<camera> belongs to transitions"):
        decode(frames)


# -- the learner's door -----------------------------------------------------------------------------------------------

def test_the_door_stores_frames_byte_exact_and_pins_cameras(tmp_path):
    with Door(tmp_path) as door:
        c = client(door.endpoint)
        assert ask(c, hello(1))["type"] == "welcome"
        ack = ask(c, framed(seq=2, first=0, n=4))
        assert ack["type"] == "ack" and ack["acked_seq"] == 3
        rows = door.rows[0]
        np.testing.assert_array_equal(rows["image.wrist"][1], frame(0, 0, 1, 1))
        np.testing.assert_array_equal(rows["next_image.front"][3], frame(0, 0, 4, 0))
        assert door.server.cameras == {"front": (H, W), "wrist": (H, W)}
        refusals = [
            (framed(seq=3, first=4, cams=(("front", H, W), ("wrist", 8, 8))), "camera 'wrist' frames are 8x8; this learner stores wrist at 12x10"),
            (framed(seq=4, first=4, cams=(("front", H, W),)), "no frames of camera(s) wrist"),
            (transitions(5, 4, 4), "no frames of camera(s) front, wrist"),
            (framed(seq=6, first=4, cams=(("front", H, W), ("wrist", H, W), ("top", H, W))), "camera(s) top that this learner does not store"),
        ]
        for msg, want in refusals:
            err = ask(c, msg)
            assert err["type"] == "error" and want in err["reason"], err
            assert "learner.cameras" in err["reason"] or "render or capture" in err["reason"]
        float_frames = framed(seq=7, first=4, **{"image.front": np.zeros((4, H, W, 3), np.float32)})
        err = ask(c, float_frames)
        assert "must travel as raw uint8" in err["reason"]
        assert door.server.stats.rejected_frames == 5
        assert door.stored == 4  # nothing refused was stored
        ack = ask(c, framed(seq=8, first=4, n=2))
        assert ack["acked_seq"] == 5


def test_a_pixel_base_package_fixes_the_cameras_at_the_door(tmp_path):
    from types import SimpleNamespace
    from rlft_learner.transport.online_server import package_cameras

    images = [{"camera": "front", "height": H, "width": W}, {"camera": "wrist", "height": 8, "width": 8}]
    assert package_cameras(SimpleNamespace(policy={"observation": {"images": images}})) == {"front": (H, W), "wrist": (8, 8)}
    assert package_cameras(SimpleNamespace(policy={"observation": {"names": ["q"]}})) is None
    with Door(tmp_path) as door:
        door.server.cameras = package_cameras(SimpleNamespace(policy={"observation": {"images": images}}))
        door.server.cameras_from = "the base package's observation.images"
        c = client(door.endpoint)
        assert ask(c, hello(1))["type"] == "welcome"
        err = ask(c, framed(seq=2, first=0, n=4))  # wrist at 12x10, the package reads it at 8x8
        assert err["type"] == "error" and "camera 'wrist' frames are 12x10; this learner stores wrist at 8x8 (the base package's" in err["reason"]
        ok = ask(c, framed(seq=3, first=0, n=4, cams=(("front", H, W), ("wrist", 8, 8))))
        assert ok["type"] == "ack" and door.stored == 4 and door.server.stats.rejected_frames == 1


# -- frames compressed on the robot (encoding "zlib") -----------------------------------------------------------------

def _zlib_stream(frames, name, stream, index=0, encoding="zlib"):
    """`frames` (zlib-encoded) with frame `index` of tensor `name` replaced by `stream` (sizes follow)."""
    header = msgpack.unpackb(frames[0])
    k = next(i for i, s in enumerate(header["tensors"]) if s["name"] == name)
    spec = header["tensors"][k]
    ends = np.cumsum([0] + spec["sizes"]).tolist()
    data = frames[1 + k]
    parts = [data[ends[i]:ends[i + 1]] for i in range(len(spec["sizes"]))]
    parts[index] = stream
    header["tensors"][k] = {**spec, "encoding": encoding, "sizes": [len(p) for p in parts]}
    return [msgpack.packb(header)] + frames[1:1 + k] + [b"".join(parts)] + frames[2 + k:]


def test_zlib_frames_decode_to_the_raw_frames_with_their_streams():
    import zlib
    blobs = {}
    header, t = decode(framed(zlib_level=1), blobs)
    _, raw = decode(framed())
    for name in ("image.front", "next_image.front", "image.wrist", "next_image.wrist"):
        np.testing.assert_array_equal(t[name], raw[name])
        assert [zlib.decompress(b) for b in blobs[name]] == [f.tobytes() for f in raw[name]]
    spec = next(s for s in header["tensors"] if s["name"] == "image.front")
    assert spec["encoding"] == "zlib" and spec["sizes"] == [len(b) for b in blobs["image.front"]]


def test_the_zlib_golden_decodes_to_the_raw_golden():
    import base64
    import json
    gold = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "rlft-exp-1")
    load = lambda n: [base64.b64decode(f) for f in json.load(open(os.path.join(gold, n)))["frames_b64"]]  # noqa: E731
    _, z = decode(load("transitions-images-zlib.json"))
    _, raw = decode(load("transitions-images.json"))
    assert set(z) == set(raw)
    for k in raw:
        np.testing.assert_array_equal(z[k], raw[k])


def _bomb() -> bytes:
    import zlib
    return zlib.compress(bytes(64 << 20), 9)  # 64 MiB of zeros in ~64 kB


@pytest.mark.parametrize("make, message", [
    (lambda f: _zlib_stream(f, "image.front", f_stream(f, "image.front")[:-5]), "camera 'front': image.front frame 0 of 4 .* is a zlib stream cut short"),
    (lambda f: _zlib_stream(f, "next_image.wrist", _big(), 2), "camera 'wrist': next_image.wrist frame 2 of 4 .* inflates to more than its declared 360 bytes"),
    (lambda f: _zlib_stream(f, "image.wrist", _bomb(), 1), r"image.wrist' \(camera 'wrist', encoding zlib\): frame 1 is a \d+-byte stream, longer than zlib's compressBound \(373 bytes\)"),
    (lambda f: _zlib_stream(f, "image.front", _padded(f_stream(f, "image.front"), 200)), "frame 0 is a .* longer than zlib's compressBound"),
    (lambda f: _zlib_stream(f, "image.front", _small()), r"camera 'front': image.front frame 0 of 4 \(12x10x3 = 360 bytes, zlib\) inflates to 240 bytes"),
    (lambda f: _zlib_stream(f, "image.front", f_stream(f, "image.front") + b"tail"), "has 4 bytes after its zlib stream"),
    (lambda f: _zlib_stream(f, "image.front", b"not zlib at all"), "image.front frame 0 of 4 .* is not a valid zlib stream"),
    (lambda f: _zlib_stream(f, "image.front", f_stream(f, "image.front"), encoding="lz4"), "camera 'front' frames declare encoding 'lz4'"),
    (lambda f: _zlib_stream(f, "image.front", f_stream(f, "image.front"), encoding="raw"), "camera 'front' frames declare encoding 'raw'"),
    (lambda f: _resize(f, "image.front", drop=1), r"sizes must list 4 positive byte counts"),
    (lambda f: _resize(f, "image.front", add=3), r"sizes add up to .* its frame has"),
])
def test_hostile_zlib_frames_are_frame_errors_naming_the_camera(make, message):
    with pytest.raises(FrameError, match=message):
        decode(make(framed(zlib_level=1)))


def f_stream(frames, name, index=0):
    header = msgpack.unpackb(frames[0])
    k = next(i for i, s in enumerate(header["tensors"]) if s["name"] == name)
    sizes = header["tensors"][k]["sizes"]
    start = sum(sizes[:index])
    return frames[1 + k][start:start + sizes[index]]


def _padded(stream: bytes, blocks: int) -> bytes:
    """`stream` with `blocks` empty stored deflate blocks after its zlib header: still a valid stream of the same bytes."""
    return stream[:2] + b"\x00\x00\x00\xff\xff" * blocks + stream[2:]


def test_a_padded_stream_is_valid_zlib_but_refused_before_inflating():
    import zlib
    from rlft_learner.transport.protocol import compress_bound
    stream = zlib.compress(bytes(range(256)) * 2, 1)
    assert zlib.decompress(_padded(stream, 1000)) == bytes(range(256)) * 2  # what the door would otherwise store
    assert compress_bound(360) == 373 and compress_bound(84 * 84 * 3) == 21168 + 5 + 1 + 13


def test_zlib_tensors_carry_at_least_one_frame_and_at_most_the_frame_cap():
    from rlft_learner.transport import protocol
    frames = framed(zlib_level=1, n=4)
    header = msgpack.unpackb(frames[0])
    k = next(i for i, s in enumerate(header["tensors"]) if s["name"] == "image.front")
    header["tensors"][k].update(shape=[0, H, W, 3], sizes=[])
    with pytest.raises(FrameError, match="a zlib tensor carries at least one frame"):
        decode([msgpack.packb(header)] + frames[1:1 + k] + [b""] + frames[2 + k:])
    header = msgpack.unpackb(frames[0])
    for spec in header["tensors"]:
        if spec.get("encoding") == "zlib":
            spec["shape"] = [protocol.MAX_FRAMES_PER_MESSAGE // 3, 1, 1, 3]
            spec["sizes"] = [1] * spec["shape"][0]
    with pytest.raises(FrameError, match="more than 8192 zlib frames; send smaller batches"):
        decode([msgpack.packb(header)] + frames[1:])


def test_camera_frames_only_on_transitions_and_episode_before_inflating(monkeypatch):
    from rlft_learner.transport import protocol
    frames = framed(zlib_level=1, n=4)
    header = msgpack.unpackb(frames[0])
    header.update(type="heartbeat")
    monkeypatch.setattr(protocol, "inflate_frame", lambda *a, **k: pytest.fail("inflated a frame of a heartbeat"))
    with pytest.raises(ProtocolError, match="camera frames travel only on transitions and episode messages; found one on 'heartbeat'"):
        decode([msgpack.packb(header)] + frames[1:])


def test_many_tensor_names_are_checked_for_duplicates_in_linear_time():
    import time
    frames = framed(n=4)
    header = msgpack.unpackb(frames[0])
    specs = [{"name": f"t{i}", "shape": [0], "dtype": "float32"} for i in range(24000)]
    header["tensors"] = specs + [{"name": "t5", "shape": [0], "dtype": "float32"}]
    t0 = time.process_time()
    with pytest.raises(ProtocolError, match="tensor name 't5' appears twice"):
        decode([msgpack.packb(header)] + [b""] * len(header["tensors"]))
    assert time.process_time() - t0 < 2.0


def _big() -> bytes:
    import zlib
    return zlib.compress(bytes(H * W * 3 + 1), 1)


def _small() -> bytes:
    import zlib
    return zlib.compress(frame(0, 0, 0)[:8].tobytes(), 1)  # an 8x10 frame where 12x10 is declared


def _resize(frames, name, drop=0, add=0):
    header = msgpack.unpackb(frames[0])
    for spec in header["tensors"]:
        if spec["name"] == name:
            spec["sizes"] = spec["sizes"][:len(spec["sizes"]) - drop]
            spec["sizes"][0] += add
    return [msgpack.packb(header)] + frames[1:]


def test_an_encoding_on_a_float_tensor_and_a_huge_declared_zlib_frame_are_refused():
    header = msgpack.unpackb(framed(zlib_level=1)[0])
    obs = next(s for s in header["tensors"] if s["name"] == "obs")
    obs.update(encoding="zlib", sizes=[1] * obs["shape"][0])
    with pytest.raises(ProtocolError, match="only camera frames .* may carry an encoding"):
        decode([msgpack.packb(header)] + framed(zlib_level=1)[1:])
    frames = framed(zlib_level=1, n=4)
    header = msgpack.unpackb(frames[0])
    for spec in header["tensors"]:
        if spec["name"].endswith("image.front"):
            spec["shape"] = [4, 4096, 4096, 3]  # 4 x 50 MB claimed: past what one message may inflate to
    with pytest.raises(FrameError, match="declare more than 256 MiB once inflated"):
        decode([msgpack.packb(header)] + frames[1:])


def test_the_door_stores_the_robots_zlib_streams_and_refuses_hostile_ones_naming_the_camera(tmp_path):
    import zlib
    with Door(tmp_path) as door:
        c = client(door.endpoint)
        welcome = ask(c, hello(1))
        assert welcome["type"] == "welcome" and welcome["frame_encodings"] == ["zlib"]
        ack = ask(c, framed(seq=2, first=0, n=4, zlib_level=1))
        assert ack["type"] == "ack" and ack["acked_seq"] == 3
        rows = door.rows[0]
        np.testing.assert_array_equal(rows["image.wrist"][1], frame(0, 0, 1, 1))  # inflated and checked
        assert zlib.decompress(rows["zlib.next_image.front"][3]) == frame(0, 0, 4, 0).tobytes()
        good = framed(seq=3, first=4, n=2, zlib_level=1)
        hostile = [
            (_zlib_stream(good, "next_image.wrist", f_stream(good, "next_image.wrist")[:-3], 1), "camera 'wrist'", "cut short"),
            (_zlib_stream(good, "image.front", _big()), "camera 'front'", "inflates to more than"),
            (_zlib_stream(good, "image.front", _bomb()), "camera 'front'", "longer than zlib's compressBound"),
            (_zlib_stream(good, "image.front", f_stream(good, "image.front"), encoding="brotli"), "camera 'front'", "encoding 'brotli'"),
            (framed(seq=3, first=4, n=2, zlib_level=1, cams=(("front", H, W), ("wrist", 8, 8))), "camera 'wrist' frames are 8x8", "this learner stores wrist at 12x10"),
        ]
        for msg, who, what in hostile:
            err = ask(c, msg)
            assert err["type"] == "error" and who in err["reason"] and what in err["reason"], err
        assert door.server.stats.rejected_frames == 5 and door.server.stats.malformed == 5
        assert door.stored == 4
        assert ask(c, good)["acked_seq"] == 5  # the door still serves


def test_replay_keeps_the_robots_streams_and_samples_the_same_frames():
    import zlib
    rows = rows_for(0, 0, range(0, 6), 0, last_done=True)
    for key in [k for k in rows if "image." in k]:
        streams = np.empty(6, dtype=object)
        streams[:] = [zlib.compress(f.tobytes(), 1) for f in rows[key]]
        rows[f"zlib.{key}"] = streams
    buf = ReplayBuffer(100, 3, 2, frame_codec="zlib6")
    buf.add(rows)
    f = buf.frames
    assert not f._todo and not f._jobs  # nothing left for the compressor thread: the robot's streams are kept
    for slot in range(6):
        assert f.frames["front"][slot] == rows["zlib.image.front"][slot]
    f.state(len(buf))  # settles the last row's extra next frame: the robot's stream, not a re-encoded one
    assert f.extra["wrist"][5] == rows["zlib.next_image.wrist"][5]
    idx = np.arange(6)
    check_sample(buf, buf.nstep(idx, 1, 0.9), idx)
    raw = ReplayBuffer(100, 3, 2, frame_codec="raw")  # a raw store keeps the inflated bytes
    raw.add(rows)
    assert raw.frames.frames["front"][0] == rows["image.front"][0].tobytes()


def test_stored_blobs_inflate_within_the_frame_size():
    import zlib
    store = FrameStore(4, {"front": (2, 3)}, "zlib1")
    good = zlib.compress(bytes(range(18)), 1)
    assert store.decode("front", [good]).shape == (1, 3, 2, 3)
    for bad in (zlib.compress(bytes(64 << 20), 9), zlib.compress(bytes(17), 1), good[:-3]):
        with pytest.raises(ValueError, match="camera 'front': a stored frame does not inflate to its 18 bytes"):
            store.decode("front", [bad])


def test_a_lazy_checkpoint_state_writes_the_same_npz_without_copying_frames(tmp_path):
    """Learner checkpoints (serve.write_checkpoint) take the frames as references on the serving thread and pack them on
    the writer thread: the file np.load reads back is entry for entry the eager np.savez one, own frames still waiting
    for the compressor included, and the snapshot does not change when rows arrive after it."""
    import threading

    from rlft_learner.buffers import frames as frames_mod

    gate = threading.Event()
    SlowZlib = slow_worker_zlib(gate)  # the lazy state sees own frames still raw

    buf = ReplayBuffer(40, 3, 2, frame_codec="zlib6")
    frames_mod.zlib = SlowZlib
    try:
        buf.add(rows_for(0, 0, range(0, 9), 0, last_done=True))
        buf.add(rows_for(1, 0, range(0, 5), 0))  # robot 1's last row waits for its successor: an extra frame
        assert buf.frames._own_raw["front"].any()
        lazy = buf.state(lazy=True)
        assert isinstance(lazy["_frames.front.blob"], frames_mod.Blobs) and lazy["_frames.front.blob"].raw_at is not None
        frames_mod.write_npz(str(tmp_path / "lazy.npz"), lazy, chunk_bytes=100)  # many chunks
        buf.add(rows_for(1, 0, range(5, 12), 5))  # after the snapshot: not in the file
        gate.set()
    finally:
        frames_mod.zlib = __import__("zlib")
    with np.load(tmp_path / "lazy.npz") as f:
        got = {k: f[k] for k in f.files}
    assert len(got["seq"]) == 14 and "_frames.front.blob" in got and "_frames.wrist.extra_ends" in got
    again = ReplayBuffer(40, 3, 2, frame_codec="zlib6")
    again.load_state(got)
    ref = ReplayBuffer(40, 3, 2, frame_codec="zlib6")
    ref.add(rows_for(0, 0, range(0, 9), 0, last_done=True))
    ref.add(rows_for(1, 0, range(0, 5), 0))
    np.savez(tmp_path / "eager.npz", **ref.state())
    with np.load(tmp_path / "eager.npz") as f:
        assert sorted(f.files) == sorted(got)
        for k in f.files:
            np.testing.assert_array_equal(f[k], got[k], err_msg=k)
    idx = np.arange(14)
    a, b = ref.nstep(idx, 1, 0.9), again.nstep(idx, 1, 0.9)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
    check_sample(again, b, idx)


def test_bench_checkpoint_times_both_paths_on_one_buffer(tmp_path):
    from rlft_learner.commands.bench_checkpoint import bench

    out = bench(300, 1, str(tmp_path))
    assert out["rows"] == 300 and out["bytes_per_transition"] > 0
    assert set(out["inline"]) == {"serving_thread_held_s", "packing_s", "bytes"} and out["inline"]["bytes"] > 300 * 2 * 1000
    assert set(out["writer"]) == {"serving_thread_held_s", "longest_poll_gap_s", "write_s"}
    assert os.listdir(tmp_path) == []  # both checkpoints removed
