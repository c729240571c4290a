"""The `rlft-exp/1` wire format (docs/contracts.md, docs/protocol.md): a msgpack header frame followed by raw float32
tensor frames (or, for `policy` messages, raw file frames).

One definition, shared with the TypeScript side through the golden frames in test/golden/rlft-exp-1/.
Decoding is strict: anything off is a `ProtocolError` whose message says what was expected and what was found.
"""

from __future__ import annotations

import math
import re
import zlib
from typing import Any, Mapping, Sequence

import msgpack
import numpy as np

PROTOCOL = "rlft-exp/1"
DTYPE = "float32"
#: Camera frames travel as raw uint8 bytes, rgb8, row-major (T, H, W, 3): named `image.<camera>`, one frame per step
#: (the latest frame at or before the tick, docs/data.md), never JSON or base64. A `transitions` batch carries
#: `image.<camera>` (each obs's frame) with `next_image.<camera>` (each next_obs's frame), [N, H, W, 3] each.
IMAGE_DTYPE = "uint8"
IMAGE_NAME = re.compile(r"^(next_)?image\.[a-z][a-z0-9_]{0,31}$")
#: Largest camera frame side accepted (a 4K frame's width).
MAX_IMAGE_SIDE = 4096
#: Encodings a camera tensor may declare (`encoding` in its spec). Absent: raw bytes, [T, H, W, 3]. "zlib": each of the
#: T frames is one zlib stream (RFC 1950) of its H x W x 3 bytes, the streams back to back in the tensor's frame, their
#: byte counts in the spec's `sizes` (docs/protocol.md § Camera frames). The robot compresses (bridge/frameCodec.ts);
#: the learner inflates every frame, never past its declared size, and stores the streams as they came (buffers/frames.py).
FRAME_ENCODINGS = ("zlib",)
#: Most bytes the zlib frames of one message may declare once inflated (4x the learner's default message cap): a
#: stream's declared size bounds what is inflated, and this bounds what a message can make the learner allocate.
MAX_INFLATED_BYTES = 256 * 2**20
#: Most zlib streams (camera frames) one message may carry, counted before any is inflated: each stream is a separate
#: inflate call, so this bounds the per-message work however small the frames.
MAX_FRAMES_PER_MESSAGE = 8192
#: Message types that may carry camera frames (uint8 image.<camera> tensors, raw or zlib); checked before inflating.
FRAME_MESSAGE_TYPES = ("transitions", "episode")
#: Longest `episode.source` (printable ASCII): a short tag of where the episode came from; save_npz stores it per episode.
MAX_SOURCE_CHARS = 64
MAX_HEADER_BYTES = 1 << 20  # a header is a small map; anything bigger is not ours
#: Largest magnitude of a tensor value on the wire. Observations are physical readings in SI units (rad, m, N, m/s),
#: actions normalised to [-1, 1] or joint positions, rewards task-scaled (sparse 0/1 in the shipped tasks): 1e6 is far
#: beyond all of them, and its square (1e12), summed over a million rows (1e18), stays far inside float32's 3.4e38, so
#: normalisation statistics, n-step returns and squared TD errors cannot overflow. A finite 3e38 overflows the first
#: square and turned the critic NaN (issue 24); the robot's bridge refuses the same values at push() (bridge/wire.ts).
MAX_ABS_VALUE = 1e6
#: Integers in headers (seq, counts, steps, shapes): JavaScript's Number.MAX_SAFE_INTEGER, 2^53 - 1. The robot side
#: cannot send more intact, and every counter then fits the learner's int64 columns with room to add.
MAX_INT = 2**53 - 1
#: A robot id names spools, MQTT topics, key files and checkpoint entries; 128 characters is plenty for a name.
MAX_ROBOT_ID = 128

# Required header fields per message type, besides `type`, `protocol` and `seq` (docs/contracts.md).
REQUIRED_FIELDS: dict[str, dict[str, tuple[type, ...]]] = {
    "hello": {"robot_id": (str,), "config_hash": (str,), "obs_names": (list,), "action_names": (list,), "task": (str,)},
    "episode": {"episode_id": (str, int), "seed": (int,), "task": (str,), "length": (int,), "success": (bool,)},
    "end": {"episodes": (int,)},
    "welcome": {"learner": (str,)},
    "ack": {},
    "error": {"reason": (str,)},
    # Online RL (docs/protocol.md). `heartbeat` is both the robot's request ({robot_id}) and the learner's reply
    # ({acked_seq, ...}); the server checks robot_id itself.
    "transitions": {"robot_id": (str,), "first_seq": (int,), "count": (int,), "episode": (list,), "step": (list,),
                    "policy_version": (list,), "intervention_source": (list,)},
    "heartbeat": {},
    "get_policy": {},
    "policy": {"version": (str,), "kind": (str,), "files": (list,)},
}
# Tensors a `transitions` message must carry: name -> width ("obs", "act" or None for [N]).
TRANSITION_TENSORS = {"obs": "obs", "next_obs": "obs", "base_action": "act", "residual_action": "act", "action": "act",
                      "next_base_action": "act", "reward": None, "terminated": None, "truncated": None, "intervention": None}
TRANSITION_LISTS = {"episode": int, "step": int, "policy_version": str, "intervention_source": str}
BINARY_TENSORS = ("terminated", "truncated", "intervention")
# Tensors an episode must carry, as (name, rank); shapes are checked against `length` in `_check_episode`.
EPISODE_TENSORS = (("obs", 2), ("action", 2), ("reward", 1))
# Optional episode tensors, [length] each, 0/1: who acted per step (1 = operator), for RECAP (docs/recap.md).
EPISODE_OPTIONAL_FLAGS = ("intervention",)


class ProtocolError(ValueError):
    """A message that does not follow rlft-exp/1. `seq` is the offending message's seq when it could be read."""

    def __init__(self, message: str, seq: int | None = None):
        super().__init__(message)
        self.seq = seq


class ValueRangeError(ProtocolError):
    """A well-formed message whose tensor values are non-finite or beyond MAX_ABS_VALUE (counted apart: poisoning)."""


class FrameError(ProtocolError):
    """Camera frames in the wrong encoding or shape (counted apart: a camera set up wrong, not a malformed peer)."""


def value_problem(name: str, arr: np.ndarray, limit: float = MAX_ABS_VALUE) -> str | None:
    """Why `arr` may not enter the learner (non-finite values, or |x| > limit), naming where; None when it is fine."""
    if np.size(arr) == 0:
        return None
    flat = np.asarray(arr).reshape(len(arr) if np.ndim(arr) else 1, -1)  # rows x columns, for the message
    finite = np.isfinite(flat)
    if not finite.all():
        bad = int(flat.size - finite.sum())
        row, col = (int(i[0]) for i in np.nonzero(~finite))
        return f"{name} has {bad} non-finite values (NaN/Inf), the first at row {row}, column {col}"
    big = np.abs(flat) > limit
    if big.any():
        row, col = (int(i[0]) for i in np.nonzero(big))
        return (f"{name} has {int(big.sum())} values beyond ±{limit:g} (largest |x| {float(np.abs(flat).max()):.3g}, the first "
                f"at row {row}, column {col}); values must be finite with |x| <= {limit:g} so normalisation and squared "
                f"errors stay finite — send physical units (rad, m, N) and check the sensor")
    return None


def _check_int(where: str, value: int, seq: int | None, low: int = 0) -> None:
    if not low <= value <= MAX_INT:
        raise ProtocolError(f"{where} is {value}; expected an integer in [{low}, 2^53 - 1]", seq)


def encode(header: Mapping[str, Any], tensors: Mapping[str, np.ndarray] | None = None,
           frame_zlib_level: int | None = None) -> list[bytes]:
    """Encode a message: `protocol` is filled in, `tensors` specs are written from the arrays (in dict order). With
    `frame_zlib_level`, camera frames (uint8 tensors) go as one zlib stream per frame (encoding "zlib")."""
    tensors = tensors or {}
    head = dict(header)
    head.setdefault("protocol", PROTOCOL)
    frames: list[bytes] = []
    specs = []
    for name, value in tensors.items():
        if isinstance(value, np.ndarray) and value.dtype == np.uint8:  # camera frames: raw bytes as they are
            arr = np.ascontiguousarray(value)
            spec = {"name": name, "shape": [int(d) for d in arr.shape], "dtype": IMAGE_DTYPE}
            if frame_zlib_level is not None:
                rows = [zlib.compress(row.tobytes(), frame_zlib_level) for row in arr]
                specs.append({**spec, "encoding": "zlib", "sizes": [len(r) for r in rows]})
                frames.append(b"".join(rows))
                continue
            specs.append(spec)
        else:
            arr = np.ascontiguousarray(value, dtype="<f4")
            specs.append({"name": name, "shape": [int(d) for d in arr.shape], "dtype": DTYPE})
        frames.append(arr.tobytes())
    if specs or "tensors" in head:
        head["tensors"] = specs
    return [msgpack.packb(head, use_bin_type=True)] + frames


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _decode_header(frame: bytes) -> dict[str, Any]:
    if len(frame) > MAX_HEADER_BYTES:
        raise ProtocolError(f"header frame is {len(frame)} bytes; expected at most {MAX_HEADER_BYTES}")
    try:
        header = msgpack.unpackb(frame, raw=False, strict_map_key=True)
    except Exception as exc:  # msgpack raises several unrelated types (ExtraData, ValueError, UnpackValueError, ...)
        raise ProtocolError(f"header frame is not valid msgpack ({type(exc).__name__}: {exc})") from None
    if not isinstance(header, dict):
        raise ProtocolError(f"header must be a msgpack map; found {type(header).__name__}")
    if not all(isinstance(k, str) for k in header):
        raise ProtocolError("header keys must be strings")
    return header


def _check_fields(header: dict[str, Any], seq: int) -> str:
    msg_type = header.get("type")
    if not isinstance(msg_type, str) or msg_type not in REQUIRED_FIELDS:
        raise ProtocolError(f"unknown message type {msg_type!r}; expected one of {sorted(REQUIRED_FIELDS)}"[:300], seq)
    for field, types in REQUIRED_FIELDS[msg_type].items():
        if field not in header:
            raise ProtocolError(f"{msg_type} header lacks required field {field!r}", seq)
        value = header[field]
        ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in types)
        if not ok:
            want = " or ".join(t.__name__ for t in types)
            raise ProtocolError(f"{msg_type}.{field} must be {want}; found {type(value).__name__}", seq)
        if _is_int(value):
            _check_int(f"{msg_type}.{field}", value, seq, low=-MAX_INT)
    if msg_type == "hello":
        if not 1 <= len(header["robot_id"]) <= MAX_ROBOT_ID:
            raise ProtocolError(f"hello.robot_id must be 1 to {MAX_ROBOT_ID} characters; found {len(header['robot_id'])}", seq)
        for field in ("obs_names", "action_names"):
            names = header[field]
            if not names or not all(isinstance(n, str) for n in names):
                raise ProtocolError(f"hello.{field} must be a non-empty list of strings", seq)
    return msg_type


def compress_bound(n: int) -> int:
    """zlib's compressBound(n): the longest stream zlib itself writes for n bytes. A longer stream (say, padded with
    empty stored blocks) still inflates, but the learner stores streams as they came, so it is refused."""
    return n + (n >> 12) + (n >> 14) + (n >> 25) + 13


def _check_specs(header: dict[str, Any], n_frames: int, seq: int) -> list[tuple[str, tuple[int, ...], str]]:
    specs = header.get("tensors", [])
    if not isinstance(specs, list):
        raise ProtocolError(f"header.tensors must be a list; found {type(specs).__name__}", seq)
    if len(specs) != n_frames:
        raise ProtocolError(f"header lists {len(specs)} tensors but the message has {n_frames} tensor frames", seq)
    out: list[tuple[str, tuple[int, ...], str]] = []
    names: set[str] = set()
    for i, spec in enumerate(specs):
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            raise ProtocolError(f"tensors[{i}] must be a map with a string name", seq)
        name, dtype = spec["name"], spec.get("dtype")
        shape = spec.get("shape")
        if not isinstance(shape, list) or len(shape) > 8 or not all(_is_int(d) and 0 <= d <= MAX_INT for d in shape):
            raise ProtocolError(f"tensor {name!r}: shape must be a list of at most 8 non-negative ints; found {shape!r}"[:300], seq)
        if IMAGE_NAME.match(name) and dtype != IMAGE_DTYPE:
            cam = name.split(".", 1)[1]
            raise FrameError(f"tensor {name!r}: camera {cam!r} frames must travel as raw uint8 rgb8 (0..255, [T, H, W, 3]); "
                             f"found dtype {str(dtype)[:32]!r} — send the camera's bytes as they are, not normalised floats", seq)
        if dtype == IMAGE_DTYPE:
            if not IMAGE_NAME.match(name):
                raise ProtocolError(f"tensor {name[:64]!r}: uint8 tensors are camera frames named image.<camera> "
                                    f"(lowercase letters, digits, _); other tensors are {DTYPE}", seq)
            if len(shape) != 4 or shape[3] != 3 or not (1 <= shape[1] <= MAX_IMAGE_SIDE and 1 <= shape[2] <= MAX_IMAGE_SIDE):
                raise FrameError(f"tensor {name!r}: camera frames must be [T, H, W, 3] rgb8 with sides in [1, {MAX_IMAGE_SIDE}]; "
                                    f"found {shape}", seq)
        elif dtype != DTYPE:
            raise ProtocolError(f"tensor {name!r}: dtype must be {DTYPE!r} ({IMAGE_DTYPE!r} for image.<camera> frames); found {dtype!r}"[:300], seq)
        if "encoding" in spec or "sizes" in spec:
            _check_encoding(name, spec, dtype, shape, seq)
        if name in names:
            raise ProtocolError(f"tensor name {name[:64]!r} appears twice", seq)
        names.add(name)
        out.append((name, tuple(shape), dtype))
    return out


def _check_encoding(name: str, spec: dict[str, Any], dtype: Any, shape: list[int], seq: int) -> None:
    """A camera tensor's `encoding` and `sizes` (one byte count per frame); the byte counts are checked in `decode`."""
    encoding = spec.get("encoding")
    if dtype != IMAGE_DTYPE:
        raise ProtocolError(f"tensor {name!r}: only camera frames (uint8 image.<camera>) may carry an encoding; found "
                            f"encoding {str(encoding)[:32]!r} on a {str(dtype)[:32]} tensor", seq)
    cam = name.split(".", 1)[1]
    if encoding not in FRAME_ENCODINGS:
        raise FrameError(f"tensor {name!r}: camera {cam!r} frames declare encoding {str(encoding)[:32]!r}; rlft-exp/1 knows "
                         f"raw frames (no encoding) and \"zlib\" (one zlib stream per frame, their byte counts in sizes) — "
                         f"set the robot's learner.frame_encoding to raw or zlib", seq)
    if shape[0] < 1:
        raise FrameError(f"tensor {name!r} (camera {cam!r}, encoding zlib): a zlib tensor carries at least one frame; "
                         f"found shape {shape}", seq)
    sizes = spec.get("sizes")
    if not isinstance(sizes, list) or len(sizes) != shape[0] or not all(_is_int(b) and 0 < b <= MAX_INT for b in sizes):
        raise FrameError(f"tensor {name!r} (camera {cam!r}, encoding zlib): sizes must list {shape[0]} positive byte counts, "
                         f"one per frame; found {str(sizes)[:80]}", seq)
    n = shape[1] * shape[2] * 3
    bound = compress_bound(n)
    for i, b in enumerate(sizes):
        if b > bound:
            raise FrameError(f"tensor {name!r} (camera {cam!r}, encoding zlib): frame {i} is a {b}-byte stream, longer than "
                             f"zlib's compressBound ({bound} bytes) for a {shape[1]}x{shape[2]}x3 frame ({n} bytes); "
                             f"compress each frame once with zlib (bridge/frameCodec.ts), without padding", seq)


def inflate_frame(blob: bytes, size: int, where: str, seq: int | None = None) -> bytes:
    """The `size` bytes one zlib stream `blob` holds, inflating at most `size` + 1 bytes (enough to see it holds more):
    a stream that is cut short, inflates to another size, or has bytes after its end is a FrameError naming `where`."""
    fix = "compress each frame's H x W x 3 rgb8 bytes as one zlib stream (bridge/frameCodec.ts)"
    d = zlib.decompressobj()
    try:
        out = d.decompress(blob, size + 1)
    except zlib.error as exc:
        raise FrameError(f"{where} is not a valid zlib stream ({exc}); {fix}", seq) from None
    if len(out) > size:
        raise FrameError(f"{where} inflates to more than its declared {size} bytes; {fix}", seq)
    if not d.eof:
        raise FrameError(f"{where} is a zlib stream cut short ({len(blob)} bytes give {len(out)} of {size}); {fix}", seq)
    if d.unused_data:
        raise FrameError(f"{where} has {len(d.unused_data)} bytes after its zlib stream; {fix}", seq)
    if len(out) != size:
        raise FrameError(f"{where} inflates to {len(out)} bytes; its declared shape needs {size}; {fix}", seq)
    return out


def _check_inflated_budget(checked: list[tuple[str, tuple[int, ...], str]], specs: dict[str, dict], seq: int) -> None:
    """What the message's zlib frames declare once inflated, against MAX_INFLATED_BYTES, before anything is inflated."""
    total = streams = 0
    for name, shape, _ in checked:
        if specs[name].get("encoding") == "zlib":
            streams += shape[0]
            if streams > MAX_FRAMES_PER_MESSAGE:
                raise FrameError(f"tensor {name!r} (camera {name.split('.', 1)[1]!r}): the message carries more than "
                                 f"{MAX_FRAMES_PER_MESSAGE} zlib frames; send smaller batches", seq)
            total += math.prod(shape)
            if total > MAX_INFLATED_BYTES:
                raise FrameError(f"tensor {name!r} (camera {name.split('.', 1)[1]!r}): the message's zlib frames declare more "
                                 f"than {MAX_INFLATED_BYTES >> 20} MiB once inflated; send smaller batches", seq)


def _inflate_tensor(name: str, shape: tuple[int, ...], sizes: list[int], data: bytes, seq: int,
                    seen: dict[bytes, bytes]) -> tuple[np.ndarray, list[bytes]]:
    """A zlib-encoded camera tensor as raw uint8 [T, H, W, 3] and its per-frame streams. `seen`: streams of this message
    already inflated (a transition's next_image is the next transition's image: each is inflated once)."""
    cam = name.split(".", 1)[1]
    if sum(sizes) != len(data):
        raise FrameError(f"tensor {name!r} (camera {cam!r}, encoding zlib): sizes add up to {sum(sizes)} bytes; its "
                         f"frame has {len(data)}", seq)
    size = math.prod(shape[1:])
    blobs: list[bytes] = []
    out = np.empty(shape, np.uint8)
    flat = out.reshape(len(sizes), -1)
    at = 0
    for i, n in enumerate(sizes):
        blob = data[at:at + n]
        at += n
        raw = seen.get(blob)
        if raw is None:
            where = f"camera {cam!r}: {name} frame {i} of {len(sizes)} ({shape[1]}x{shape[2]}x3 = {size} bytes, zlib)"
            raw = seen[blob] = inflate_frame(blob, size, where, seq)
        elif len(raw) != size:  # the same stream declared at another size by another tensor
            raise FrameError(f"camera {cam!r}: {name} frame {i} inflates to {len(raw)} bytes; its declared shape needs {size}", seq)
        flat[i] = np.frombuffer(raw, np.uint8)
        blobs.append(blob)
    out.flags.writeable = False
    return out, blobs


def _check_episode(header: dict[str, Any], tensors: dict[str, np.ndarray], seq: int) -> None:
    length = header["length"]
    if length < 1:
        raise ProtocolError(f"episode.length must be >= 1; found {length}", seq)
    for name, rank in EPISODE_TENSORS:
        if name not in tensors:
            raise ProtocolError(f"episode lacks tensor {name!r}; expected {[n for n, _ in EPISODE_TENSORS]}", seq)
        shape = tensors[name].shape
        if len(shape) != rank or shape[0] != length or (rank == 2 and shape[1] < 1):
            want = f"[{length}, >=1]" if rank == 2 else f"[{length}]"
            raise ProtocolError(f"episode tensor {name!r}: shape must be {want}; found {list(shape)}", seq)
    for name, arr in tensors.items():
        if name.startswith("next_image."):
            raise ProtocolError(f"episode tensor {name!r}: next_image.<camera> belongs to transitions; an episode carries "
                                f"image.<camera>, one frame per step", seq)
        if arr.dtype == np.uint8 and arr.shape[0] != length:
            raise ProtocolError(f"episode tensor {name!r}: one frame per step, [{length}, H, W, 3]; found {list(arr.shape)}", seq)
    for name in EPISODE_OPTIONAL_FLAGS:
        if name in tensors:
            if tensors[name].shape != (length,):
                raise ProtocolError(f"episode tensor {name!r}: shape must be [{length}]; found {list(tensors[name].shape)}", seq)
            if not np.isin(tensors[name], (0.0, 1.0)).all():
                raise ProtocolError(f"episode tensor {name!r} must hold only 0 or 1", seq)
    if "source" in header:
        source = header["source"]
        if not isinstance(source, str):
            raise ProtocolError(f"episode.source must be str; found {type(source).__name__}", seq)
        if len(source) > MAX_SOURCE_CHARS or not all(" " <= ch <= "~" for ch in source):
            raise ProtocolError(f"episode.source must be at most {MAX_SOURCE_CHARS} printable ASCII characters; found "
                                f"{len(source)} characters {source[:32]!r}", seq)


def _check_transitions(header: dict[str, Any], tensors: dict[str, np.ndarray], seq: int) -> None:
    n, first = header["count"], header["first_seq"]
    if n < 1 or first < 0:
        raise ProtocolError(f"transitions: count must be >= 1 and first_seq >= 0; found count {n}, first_seq {first}", seq)
    for name, kind in TRANSITION_LISTS.items():
        values = header[name]
        if len(values) != n or not all(isinstance(v, kind) and not isinstance(v, bool) for v in values):
            raise ProtocolError(f"transitions.{name} must be a list of {n} {kind.__name__}s (count); found {len(values)} items", seq)
        if kind is int:
            for v in values:
                _check_int(f"transitions.{name} item", v, seq)
    widths: dict[str, int] = {}
    for name, kind in TRANSITION_TENSORS.items():
        if name not in tensors:
            raise ProtocolError(f"transitions lacks tensor {name!r}; expected {list(TRANSITION_TENSORS)}", seq)
        shape = tensors[name].shape
        if kind is None:
            ok = shape == (n,)
        else:
            ok = len(shape) == 2 and shape[0] == n and shape[1] >= 1 and widths.setdefault(kind, shape[1]) == shape[1]
        if not ok:
            want = f"[{n}]" if kind is None else f"[{n}, {widths.get(kind, '>=1')}]"
            raise ProtocolError(f"transitions tensor {name!r}: shape must be {want}; found {list(shape)}", seq)
    for name in BINARY_TENSORS:
        if not np.isin(tensors[name], (0.0, 1.0)).all():
            raise ProtocolError(f"transitions tensor {name!r} must hold only 0 or 1", seq)
    _check_transition_frames(tensors, n, seq)


def _check_transition_frames(tensors: dict[str, np.ndarray], n: int, seq: int) -> None:
    """Each camera's `image.<cam>` and `next_image.<cam>`: both present, [count, H, W, 3], the same H x W."""
    cams = {name.split(".", 1)[1] for name, arr in tensors.items() if arr.dtype == np.uint8}
    for cam in sorted(cams):
        a, b = tensors.get(f"image.{cam}"), tensors.get(f"next_image.{cam}")
        if a is None or b is None:
            have, lack = ("image", "next_image") if b is None else ("next_image", "image")
            raise FrameError(f"transitions carry {have}.{cam} without {lack}.{cam}: camera {cam!r} needs both, the frame "
                             f"of each obs and of each next_obs (rlft-exp/1 transitions)", seq)
        for arr, name in ((a, "image"), (b, "next_image")):
            if arr.shape[0] != n:
                raise FrameError(f"transitions tensor {name}.{cam}: one frame per transition, [{n}, H, W, 3]; found "
                                 f"{list(arr.shape)}", seq)
        if a.shape != b.shape:
            raise FrameError(f"camera {cam!r}: image is {a.shape[1]}x{a.shape[2]} but next_image {b.shape[1]}x{b.shape[2]}; "
                             f"both are frames of the same camera, same size", seq)


def _check_policy_files(header: dict[str, Any], frames: Sequence[bytes], seq: int) -> dict[str, bytes]:
    files = header["files"]
    if len(files) != len(frames):
        raise ProtocolError(f"policy header lists {len(files)} files but the message has {len(frames)} file frames", seq)
    out: dict[str, bytes] = {}
    for i, (spec, frame) in enumerate(zip(files, frames)):
        if not (isinstance(spec, dict) and isinstance(spec.get("name"), str) and isinstance(spec.get("sha256"), str)
                and _is_int(spec.get("bytes"))):
            raise ProtocolError(f"policy.files[{i}] must be a map {{name, sha256, bytes}}", seq)
        if len(frame) != spec["bytes"]:
            raise ProtocolError(f"policy file {spec['name']!r} should be {spec['bytes']} bytes; frame has {len(frame)}", seq)
        out[spec["name"]] = bytes(frame)
    return out


def decode_policy(frames: Sequence[bytes]) -> tuple[dict[str, Any], dict[str, bytes]]:
    """Decode a `policy` message (a get_policy reply, or a PUB message without its topic frame): header and file bytes."""
    header, _ = decode(frames)
    if header["type"] != "policy":
        raise ProtocolError(f"expected a policy message; found {header['type']!r}", header["seq"])
    return header, _check_policy_files(header, frames[1:], header["seq"])


def decode(frames: Sequence[bytes], blobs: dict[str, list[bytes]] | None = None) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Decode and validate one multipart message; raises `ProtocolError` on anything malformed. Camera frames that came
    zlib-encoded are returned inflated; with `blobs`, their per-frame zlib streams are put there too (by tensor name)."""
    if len(frames) == 0:
        raise ProtocolError("empty message; expected [header, ...tensor frames]")
    header = _decode_header(bytes(frames[0]))
    seq = header.get("seq")
    seq = seq if _is_int(seq) and -1 <= seq <= MAX_INT else None
    if header.get("protocol") != PROTOCOL:
        raise ProtocolError(f"protocol must be {PROTOCOL!r}; found {header.get('protocol')!r}", seq)
    # An error reply to a message whose header could not be read carries seq -1 (server.py).
    if seq is None or seq < (-1 if header.get("type") == "error" else 0):
        raise ProtocolError(f"seq must be an integer in [0, 2^53 - 1]; found {header.get('seq')!r}"[:200])
    msg_type = _check_fields(header, seq)
    if msg_type == "policy":  # file frames, described by header.files instead of header.tensors
        _check_policy_files(header, frames[1:], seq)
        return header, {}
    tensors: dict[str, np.ndarray] = {}
    seen: dict[bytes, bytes] = {}
    checked = _check_specs(header, len(frames) - 1, seq)
    if msg_type not in FRAME_MESSAGE_TYPES:  # before anything is inflated
        for name, _, dtype in checked:
            if dtype == IMAGE_DTYPE:
                raise ProtocolError(f"tensor {name!r}: camera frames travel only on {' and '.join(FRAME_MESSAGE_TYPES)} "
                                    f"messages; found one on {msg_type!r}", seq)
    specs = {s["name"]: s for s in header["tensors"]} if checked else {}  # maps with string names, unique (checked)
    _check_inflated_budget(checked, specs, seq)
    for (name, shape, dtype), frame in zip(checked, frames[1:]):
        data = bytes(frame)
        if specs[name].get("encoding") == "zlib":
            tensors[name], streams = _inflate_tensor(name, shape, specs[name]["sizes"], data, seq, seen)
            if blobs is not None:
                blobs[name] = streams
            continue
        size = 1 if dtype == IMAGE_DTYPE else 4
        expected = size * math.prod(shape)
        if len(data) != expected:
            raise ProtocolError(
                f"tensor {name!r} with shape {list(shape)} needs {expected} bytes of {dtype}; frame has {len(data)}", seq
            )
        if dtype == IMAGE_DTYPE:
            tensors[name] = np.frombuffer(data, dtype=np.uint8).reshape(shape)  # read-only view of our own copy
            continue
        arr = np.frombuffer(data, dtype="<f4").reshape(shape).astype(np.float32)
        problem = value_problem(f"tensor {name!r}", arr)
        if problem is not None:
            raise ValueRangeError(problem, seq)
        tensors[name] = arr
    if msg_type == "episode":
        _check_episode(header, tensors, seq)
    elif msg_type == "transitions":
        _check_transitions(header, tensors, seq)
    return header, tensors
