"""Camera frames in replay memory (issue 27): every frame stored once, uint8, losslessly compressed per frame.

A transition carries `image.<cam>` (its observation's frame) and `next_image.<cam>` (its next observation's frame). On
a robot's consecutive steps the second is the first of the next transition, so row t keeps only its own frame and
points at the row holding its next frame (`next_row`). A row's next frame is stored as an *extra* copy only while its
successor has not arrived, or when there is none to point at: the episode's last step (the next episode starts from a
new frame), a gap in seq, another robot's row in between does not matter (links are per robot). A link is made only when
the successor's frame is byte-identical to the extra copy, so pointing at it can never change what is sampled.

The ring evicts oldest first and a robot's rows arrive in seq order, so row t is overwritten before its successor:
a link never points at an overwritten row. `zlib6` (zlib level 6, per frame) is the default codec, picked by measurement
on rendered SO-101 84x84 frames (docs/results.md § Replay memory with camera frames): ~2.0-2.9 kB per frame, a fifth
smaller than level 1 and no slower to decode (decoding, 512 frames per batch, costs far more than encoding 2 per step);
`raw` keeps the bytes as they are (21 kB per 84x84 frame: 8.5 GB for 200k transitions with two cameras).

A row's own frame is compressed off the caller's path: `put` keeps it raw and `flush` (ReplayBuffer.add calls it once
per batch) hands the batch's frames to one worker thread (zlib releases the GIL), so the learner acks a batch without
waiting for zlib. Finished frames replace the raw ones at the next put, flush or sample; at most PENDING_FRAMES wait
(flush waits beyond that: ~86 MB of 84x84 frames), and stats, checkpoints and load_state wait for all of them.

Frames that reached the learner zlib-compressed (the robot's `learner.frame_encoding: zlib`, docs/protocol.md) come
with their streams in the rows as `zlib.image.<cam>` / `zlib.next_image.<cam>` (one bytes object per row, next to the
inflated frames that protocol.decode checked them against): a zlib store keeps those streams as they came, at the
robot's level, instead of compressing the frames again (any zlib level inflates the same way; the codec's level is
what this store uses for frames that arrive raw). The `raw` codec stores the inflated bytes.
"""

from __future__ import annotations

import re
import time
import zipfile
import zlib
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable

import numpy as np

from ..transport.protocol import FrameError, inflate_frame

#: Codecs by name: "zlib<level>" (1..9) or "raw".
CODEC = re.compile(r"^(raw|zlib[1-9])$")

#: Most own frames waiting for the compressor thread; flush() waits for the oldest beyond it.
PENDING_FRAMES = 4096


def camera_of(key: str) -> str | None:
    """`front` for `image.front`; None for any other key (`next_image.*` included)."""
    return key[len("image."):] if key.startswith("image.") else None


def _inflate(blob: bytes, size: int, cam: str) -> bytes:
    """A stored frame's `size` bytes, inflated within its size as the link's decoder does (protocol.inflate_frame): a
    blob from a damaged or hostile checkpoint that holds more, or less, is a ValueError naming the camera, never a
    large allocation."""
    try:
        return inflate_frame(blob, size, f"camera {cam!r}: a stored frame")
    except FrameError:
        raise ValueError(f"camera {cam!r}: a stored frame does not inflate to its {size} bytes (a damaged checkpoint?)") from None


class FrameStore:
    """Per-row frames of a replay ring of `capacity` rows for `cameras` {name: (H, W)}."""

    def __init__(self, capacity: int, cameras: dict[str, tuple[int, int]], codec: str = "zlib6"):
        if not CODEC.match(codec):
            raise ValueError(f"frame codec {codec!r}: expected 'raw' or 'zlib1'..'zlib9'")
        self.capacity, self.cameras, self.codec = capacity, dict(cameras), codec
        self._level = 0 if codec == "raw" else int(codec[4:])
        self.frames = {c: np.empty(capacity, dtype=object) for c in self.cameras}  # compressed bytes per row
        self.extra: dict[str, dict[int, bytes]] = {c: {} for c in self.cameras}  # row -> its next frame, when unlinked
        self.next_row = np.full(capacity, -1, np.int64)  # row whose frame is this row's next frame; -1: in `extra`
        self._raw: set[int] = set()  # rows whose extra next frame is still raw bytes (no successor yet)
        self._extra_zlib: dict[str, dict[int, bytes]] = {c: {} for c in self.cameras}  # the robot's stream of a raw extra
        self._own_raw = {c: np.zeros(capacity, bool) for c in self.cameras}  # own frame raw, awaiting the compressor
        self._todo: list[tuple[str, int, bytes]] = []  # own frames put since the last flush (camera, row, raw bytes)
        self._jobs: deque[tuple[list[tuple[str, int, bytes]], Future]] = deque()  # with the compressor thread
        self._pending = 0  # frames in _jobs
        self._pool: ThreadPoolExecutor | None = None
        self.stored_bytes = 0  # compressed bytes held (frames + extras)
        # Features of a frozen encoder per frame (use_features): computed the first time a row is sampled, kept until
        # the row is overwritten, never checkpointed (recomputed after a resume).
        self._encode: Callable[[dict[str, np.ndarray]], np.ndarray] | None = None
        self._feat: np.ndarray | None = None  # (capacity, F) float32: row's own frame
        self._feat_ok = np.zeros(0, bool)
        self._feat_extra: dict[int, np.ndarray] = {}  # row -> features of its extra next frame
        self.encoded_frames = 0  # frames run through the encoder (each row's own and extra frames, once each)

    def use_features(self, encode: Callable[[dict[str, np.ndarray]], np.ndarray]) -> None:
        """Sample `features` / `next_features` (B, F) float32 instead of the frames: `encode` maps {camera: uint8 (N, 3,
        H, W)} to (N, F) and must be a fixed function (a frozen encoder), since each frame is encoded once and kept."""
        self._encode = encode
        self._feat, self._feat_ok, self._feat_extra = None, np.zeros(self.capacity, bool), {}

    # -- codec --
    def encode(self, frame: np.ndarray) -> bytes:
        data = np.ascontiguousarray(frame, dtype=np.uint8).tobytes()
        return data if self._level == 0 else zlib.compress(data, self._level)

    def decode(self, cam: str, blobs, raw_at: frozenset[int] | set[int] = frozenset()) -> np.ndarray:
        """(B, 3, H, W) uint8 from B stored blobs of camera `cam` (those at positions `raw_at` are not encoded)."""
        h, w = self.cameras[cam]
        if self._level == 0:
            raw = b"".join(blobs)
        else:
            raw = b"".join(b if k in raw_at else _inflate(b, h * w * 3, cam) for k, b in enumerate(blobs))
        return np.ascontiguousarray(np.frombuffer(raw, np.uint8).reshape(len(blobs), h, w, 3).transpose(0, 3, 1, 2))

    # -- rows --
    def check(self, rows: dict[str, np.ndarray], n: int) -> None:
        """Raises ValueError naming the camera and the fix when `rows` do not carry this store's frames."""
        for cam, (h, w) in self.cameras.items():
            for key in (f"image.{cam}", f"next_image.{cam}"):
                arr = rows.get(key)
                if arr is None:
                    raise ValueError(f"rows lack {key}: this replay stores cameras {sorted(self.cameras)}; every "
                                     f"transition must carry image.<cam> and next_image.<cam> for each of them")
                if arr.dtype != np.uint8 or arr.shape != (n, h, w, 3):
                    raise ValueError(f"{key}: expected uint8 [{n}, {h}, {w}, 3]; found {arr.dtype} {list(arr.shape)}: "
                                     f"camera {cam!r} must deliver {h}x{w} rgb8 frames (as when this buffer was made)")

    def put(self, slot: int, rows: dict[str, np.ndarray], i: int, prev: int | None) -> None:
        """Store row `i` of `rows` at `slot` (overwriting what it held). `prev`: the slot of the same robot's previous
        step when it is still held (consecutive seq), else None; linked when its extra next frame equals this frame.
        A row's next frame waits raw (not encoded) until its successor arrives: linked, it was never encoded."""
        self._drop(slot)
        if self._jobs:
            self._collect()
        own = {c: np.ascontiguousarray(rows[f"image.{c}"][i]).tobytes() for c in self.cameras}
        if prev is not None and prev != slot and self.next_row[prev] < 0 and prev in self._raw:
            if all(self.extra[c][prev] == own[c] for c in self.cameras):
                for c in self.cameras:
                    self.stored_bytes -= len(self.extra[c].pop(prev))
                    self._extra_zlib[c].pop(prev, None)
                self._feat_extra.pop(prev, None)
                self.next_row[prev] = slot
            self._settle(prev)
        for c in self.cameras:
            given = rows.get(f"zlib.image.{c}") if self._level else None
            if given is not None:
                blob = bytes(given[i])  # the robot's stream, which inflates to own[c] (protocol.decode checked it)
            else:
                blob = own[c]  # compressed by the worker after flush() (raw codec: as it is)
                if self._level:
                    self._own_raw[c][slot] = True
                    self._todo.append((c, slot, blob))
            given_next = rows.get(f"zlib.next_image.{c}") if self._level else None
            if given_next is not None:
                self._extra_zlib[c][slot] = bytes(given_next[i])
            nxt = np.ascontiguousarray(rows[f"next_image.{c}"][i]).tobytes()
            self.frames[c][slot], self.extra[c][slot] = blob, nxt
            self.stored_bytes += len(blob) + len(nxt)
        self.next_row[slot] = -1
        self._raw.add(slot)

    def flush(self) -> None:
        """Hand the own frames put since the last flush to the compressor thread (they stay raw until it is done)."""
        if self._jobs:
            self._collect()
        if not self._todo:
            return
        todo, self._todo, level = self._todo, [], self._level
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="frames-zlib")
        self._jobs.append((todo, self._pool.submit(lambda: [zlib.compress(raw, level) for _, _, raw in todo])))
        self._pending += len(todo)
        while self._pending > PENDING_FRAMES:
            self._collect(oldest=True)

    def _collect(self, wait: bool = False, oldest: bool = False) -> None:
        """Store the compressed frames of finished jobs (`wait`: of all jobs; `oldest`: at least the oldest). A row
        overwritten meanwhile holds another object, and keeps it."""
        if wait and self._todo:
            self.flush()
        while self._jobs and (wait or oldest or self._jobs[0][1].done()):
            oldest = False
            todo, job = self._jobs.popleft()
            self._pending -= len(todo)
            for (c, slot, raw), blob in zip(todo, job.result()):
                if self.frames[c][slot] is raw:
                    self.frames[c][slot] = blob
                    self.stored_bytes += len(blob) - len(raw)
                    self._own_raw[c][slot] = False

    def _own(self, c: str, rows: np.ndarray) -> np.ndarray:
        """(B, 3, H, W) own frames of `rows` of camera `c` (raw ones among them as they are)."""
        raw = self._own_raw[c][rows]
        return self.decode(c, self.frames[c][rows], set(np.flatnonzero(raw).tolist()) if raw.any() else frozenset())

    def _settle(self, slot: int) -> None:
        """Encode `slot`'s extra next frame (kept raw while its successor could still link to it)."""
        self._raw.discard(slot)
        for c in self.cameras:
            raw = self.extra[c].get(slot)
            given = self._extra_zlib[c].pop(slot, None)
            if raw is not None:
                blob = given if given is not None else self.encode(np.frombuffer(raw, np.uint8))
                self.extra[c][slot] = blob
                self.stored_bytes += len(blob) - len(raw)

    def _drop(self, slot: int) -> None:
        for c in self.cameras:
            old = self.frames[c][slot]
            if old is not None:
                self.stored_bytes -= len(old)
                self.frames[c][slot] = None
            extra = self.extra[c].pop(slot, None)
            if extra is not None:
                self.stored_bytes -= len(extra)
            self._extra_zlib[c].pop(slot, None)
            self._own_raw[c][slot] = False
        self.next_row[slot] = -1
        self._raw.discard(slot)
        if self._encode is not None:
            self._feat_ok[slot] = False
            self._feat_extra.pop(slot, None)

    def sample(self, idx: np.ndarray, cur: np.ndarray, frames: bool = False) -> dict[str, np.ndarray]:
        """`image.<cam>` of rows `idx` and `next_image.<cam>` of rows `cur` (the n-step chain's last rows); with
        use_features (and not `frames`), `features` and `next_features` of the same frames instead."""
        if self._jobs:
            self._collect()
        if self._encode is not None and not frames:
            return self._sample_features(idx, cur)
        out: dict[str, np.ndarray] = {}
        for c in self.cameras:
            out[f"image.{c}"] = self._own(c, idx)
            nxt = self.next_row[cur]
            own_raw = self._own_raw[c]
            blobs = [self.frames[c][j] if j >= 0 else self.extra[c][r] for r, j in zip(cur.tolist(), nxt.tolist())]
            raw_at = {k for k, (r, j) in enumerate(zip(cur.tolist(), nxt.tolist()))
                      if (j < 0 and r in self._raw) or (j >= 0 and own_raw[j])}
            out[f"next_image.{c}"] = self.decode(c, blobs, raw_at)
        return out

    def _run_encoder(self, frames: dict[str, np.ndarray]) -> np.ndarray:
        assert self._encode is not None
        f = np.asarray(self._encode(frames), dtype=np.float32)
        n = len(next(iter(frames.values())))
        if f.ndim != 2 or len(f) != n:
            raise ValueError(f"frame feature encoder returned shape {list(f.shape)} for {n} frames; expected [{n}, F]")
        if self._feat is None:
            self._feat = np.zeros((self.capacity, f.shape[1]), np.float32)
        self.encoded_frames += n
        return f

    def _own_features(self, rows: np.ndarray) -> np.ndarray:
        need = np.unique(rows[~self._feat_ok[rows]])
        if len(need):
            f = self._run_encoder({c: self._own(c, need) for c in self.cameras})
            assert self._feat is not None
            self._feat[need], self._feat_ok[need] = f, True
        assert self._feat is not None
        return self._feat[rows]

    def _sample_features(self, idx: np.ndarray, cur: np.ndarray) -> dict[str, np.ndarray]:
        feats = self._own_features(idx)
        nxt = self.next_row[cur]
        linked = nxt >= 0
        nfeats = np.empty_like(feats)
        if linked.any():
            nfeats[linked] = self._own_features(nxt[linked])
        if (~linked).any():
            rows = cur[~linked]
            need = sorted({int(r) for r in rows.tolist()} - set(self._feat_extra))
            if need:
                raw_at = {k for k, r in enumerate(need) if r in self._raw}
                f = self._run_encoder({c: self.decode(c, [self.extra[c][r] for r in need], raw_at) for c in self.cameras})
                self._feat_extra.update(zip(need, f))
            nfeats[~linked] = np.stack([self._feat_extra[int(r)] for r in rows.tolist()])
        return {"features": feats, "next_features": nfeats}

    # -- accounting --
    def stats(self, size: int) -> dict[str, float]:
        """Bytes held per transition (frames, extras and the link index), the extra copies, and the codec."""
        self._collect(wait=True)
        extras = sum(len(e) for e in self.extra.values())  # extra frames held
        held = self.stored_bytes + 8 * size  # next_row
        return {"frame_bytes": float(self.stored_bytes), "extra_frames": float(extras),
                "bytes_per_transition": held / max(size, 1), "cameras": float(len(self.cameras))}

    # -- checkpoints: plain arrays (no pickles) --
    def state(self, size: int, lazy: bool = False) -> dict[str, np.ndarray | Blobs]:
        """The frames of rows 0..size-1 as checkpoint arrays: per camera `_frames.<cam>.blob` (uint8, the rows' blobs
        end to end) and `.ends` (int64), the extras likewise. `lazy`: each camera's blobs as a Blobs (references to
        the stored bytes objects, 8 bytes a row, no frame copied: cheap on the serving thread) that write_npz packs
        into the same two entries; own frames still waiting for the compressor are compressed there."""
        for slot in list(self._raw):  # a checkpoint holds encoded frames only (at most one such row per robot)
            self._settle(slot)
        if not lazy:
            self._collect(wait=True)
        elif self._jobs:
            self._collect()
        out: dict[str, np.ndarray | Blobs] = {"_frames_codec": np.array(self.codec),
                                              "_frames_next_row": self.next_row[:size].copy()}
        for c, (h, w) in self.cameras.items():
            out[f"_frames.{c}.shape"] = np.array([h, w], np.int64)
            raw = self._own_raw[c][:size]
            own = Blobs(self.frames[c][:size].copy(), np.flatnonzero(raw) if raw.any() else None, self._level,
                        (f"_frames.{c}.blob", f"_frames.{c}.ends"))
            rows = np.array(sorted(self.extra[c]), np.int64)
            out[f"_frames.{c}.extra_rows"] = rows
            extras = np.empty(len(rows), dtype=object)
            extras[:] = [self.extra[c][r] for r in rows.tolist()]
            extra = Blobs(extras, None, self._level, (f"_frames.{c}.extra_blob", f"_frames.{c}.extra_ends"))
            for blobs in (own, extra):
                if lazy:
                    out[blobs.keys[0]] = blobs
                else:
                    out[blobs.keys[0]], out[blobs.keys[1]] = blobs.pack()
        return out

    @staticmethod
    def cameras_in(arrays: dict[str, np.ndarray]) -> dict[str, tuple[int, int]]:
        return {k[len("_frames."):-len(".shape")]: tuple(int(v) for v in arrays[k])
                for k in arrays if k.startswith("_frames.") and k.endswith(".shape")}

    def load_state(self, arrays: dict[str, np.ndarray], size: int) -> None:
        if str(arrays["_frames_codec"]) != self.codec:
            raise ValueError(f"checkpointed frames use codec {str(arrays['_frames_codec'])!r}, this buffer {self.codec!r}; "
                             f"set frame_codec to the checkpoint's")
        self._collect(wait=True)
        for slot in range(self.capacity):
            self._drop(slot)
        self.next_row[:size] = arrays["_frames_next_row"]
        for c in self.cameras:
            for r, b in enumerate(_unpack(arrays[f"_frames.{c}.blob"], arrays[f"_frames.{c}.ends"])):
                self.frames[c][r] = b
                self.stored_bytes += len(b)
            extra = _unpack(arrays[f"_frames.{c}.extra_blob"], arrays[f"_frames.{c}.extra_ends"])
            for r, b in zip(arrays[f"_frames.{c}.extra_rows"].tolist(), extra):
                self.extra[c][int(r)] = b
                self.stored_bytes += len(b)


class Blobs:
    """A checkpoint's frames of one camera, not yet packed: `items` (an object array of bytes, one per row, shared
    with the store: bytes never change, an overwritten row gets a new object), the positions in it of frames that
    are still raw (`zlib<level>` compresses them while packing). Written as the entries `keys` (blob, ends)."""

    def __init__(self, items: np.ndarray, raw_at: np.ndarray | None, level: int, keys: tuple[str, str]):
        self.items, self.raw_at, self.level, self.keys = items, raw_at, level, keys

    def encoded(self) -> list[bytes]:
        out = self.items.tolist()
        if self.raw_at is not None and self.level:
            for k in self.raw_at.tolist():
                out[k] = zlib.compress(out[k], self.level)
        return out

    def pack(self) -> tuple[np.ndarray, np.ndarray]:
        return _pack(self.encoded())


def _pack(blobs: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    ends = np.cumsum([len(b) for b in blobs], dtype=np.int64) if blobs else np.zeros(0, np.int64)
    return np.frombuffer(b"".join(blobs), np.uint8), ends  # read-only, its own bytes: np.savez writes it as it is


def write_npz(file, arrays: dict[str, np.ndarray | Blobs], chunk_bytes: int = 4 << 20) -> None:
    """np.savez's format (a stored zip of .npy entries, no pickles; np.load reads it), where a Blobs value becomes its
    two entries (the blobs end to end, uint8, and their ends, int64), streamed a few MB at a time instead of joined into one copy: on a writer thread the
    serving thread gets the GIL back between chunks (file writes and crc32 release it)."""
    with zipfile.ZipFile(file, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        for key, value in arrays.items():
            if not isinstance(value, Blobs):
                with zf.open(key + ".npy", "w", force_zip64=True) as fp:
                    np.lib.format.write_array(fp, np.asanyarray(value), allow_pickle=False)
                continue
            blobs = value.encoded()
            lengths = np.fromiter((len(b) for b in blobs), np.int64, len(blobs))
            with zf.open(value.keys[0] + ".npy", "w", force_zip64=True) as fp:
                np.lib.format.write_array_header_1_0(fp, {"descr": "|u1", "fortran_order": False, "shape": (int(lengths.sum()),)})
                chunk: list[bytes] = []
                held = 0
                for b in blobs:
                    chunk.append(b)
                    held += len(b)
                    if held >= chunk_bytes:
                        fp.write(b"".join(chunk))
                        chunk, held = [], 0
                if chunk:
                    fp.write(b"".join(chunk))
            with zf.open(value.keys[1] + ".npy", "w", force_zip64=True) as fp:
                np.lib.format.write_array(fp, np.cumsum(lengths, dtype=np.int64), allow_pickle=False)


def _unpack(blob: np.ndarray, ends: np.ndarray) -> list[bytes]:
    data = blob.tobytes()
    starts = np.concatenate([[0], ends[:-1]]) if len(ends) else ends
    return [data[s:e] for s, e in zip(starts.tolist(), ends.tolist())]


def measure(frames: dict[str, np.ndarray], codecs=("raw", "zlib1", "zlib3", "zlib6"), batch: int = 256, repeats: int = 5,
            capacity: int = 200_000) -> list[dict[str, float | str]]:
    """Bytes per frame and decode ms per batch of `batch` per camera for each codec, on `frames` {cam: (T, H, W, 3)};
    `gb_at_capacity`: the frames of `capacity` transitions stored once (one frame per camera per transition)."""
    rng = np.random.default_rng(0)
    out: list[dict[str, float | str]] = []
    for codec in codecs:
        store = FrameStore(1, {c: x.shape[1:3] for c, x in frames.items()}, codec)
        row: dict[str, float | str] = {"codec": codec}
        per_transition = 0.0
        for c, x in frames.items():
            t0 = time.perf_counter()
            blobs = np.empty(len(x), dtype=object)
            blobs[:] = [store.encode(f) for f in x]
            enc = (time.perf_counter() - t0) / len(x)
            idx = rng.integers(0, len(x), batch)
            t0 = time.perf_counter()
            for _ in range(repeats):
                store.decode(c, blobs[idx])
            row[f"{c}_bytes_per_frame"] = float(np.mean([len(b) for b in blobs]))
            row[f"{c}_encode_ms_per_frame"] = 1e3 * enc
            row[f"{c}_decode_ms_per_batch"] = 1e3 * (time.perf_counter() - t0) / repeats
            per_transition += row[f"{c}_bytes_per_frame"]  # type: ignore[operator]
        row["gb_at_capacity"] = (per_transition + 8) * capacity / 1e9
        out.append(row)
    return out


if __name__ == "__main__":  # python -m rlft_learner.buffers.frames front.npy wrist.npy ...: (T, H, W, 3) uint8 per camera
    import json
    import os
    import sys

    cams: dict[str, list[np.ndarray]] = {}
    for path in sys.argv[1:]:
        name = os.path.basename(path).rsplit(".", 1)[0].split("_")[-1]
        cams.setdefault(name, []).append(np.load(path))
    print(json.dumps(measure({c: np.concatenate(v) for c, v in cams.items()}), indent=1))
