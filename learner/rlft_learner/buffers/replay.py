"""Replay buffers for residual off-policy RL: bounded rings of 1-step transitions, n-step targets at sample time.

Transitions of several robots interleave in one ring, so each row links to the row holding the same robot's next
step (`next`); an n-step sample follows those links (ResFiT uses n = 3..5 for sparse reward, docs/algorithms.md §1).
A link is trusted only while the target row still holds `seq + 1` of the same robot, so ring overwrites and
intervention segments (whose neighbours live only in the online buffer) just shorten the return, with a bootstrap.

Camera frames (rows with `image.<cam>` / `next_image.<cam>`, uint8 [N, H, W, 3]) are kept once per step in a
frames.FrameStore; a sample then also holds `image.<cam>` and `next_image.<cam>` as uint8 [B, 3, H, W].
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np
import torch

from .frames import FrameStore, camera_of

log = logging.getLogger("rlft_learner.replay")

# Stored per row: name -> (width kind, dtype). "obs" / "act" widths come from the buffer, None = scalar.
FIELDS = {"obs": ("obs", np.float32), "next_obs": ("obs", np.float32), "base_action": ("act", np.float32),
          "action": ("act", np.float32), "next_base_action": ("act", np.float32), "reward": (None, np.float32),
          "terminated": (None, np.float32), "truncated": (None, np.float32), "intervention": (None, np.float32),
          "robot": (None, np.int64), "seq": (None, np.int64), "next": (None, np.int64)}


@dataclass
class Batch:
    """An n-step batch (B rows): the target is `ret + discount * Q(next_obs, next_base_action + residual)`.
    `discount` is gamma**k for a k-step return and 0 when the return ended in a terminal (success) step."""

    obs: torch.Tensor  # (B, obs_dim), normalised
    base_action: torch.Tensor  # (B, A)
    action: torch.Tensor  # (B, A), executed (normalised)
    ret: torch.Tensor  # (B,)
    discount: torch.Tensor  # (B,)
    next_obs: torch.Tensor  # (B, obs_dim)
    next_base_action: torch.Tensor  # (B, A)
    #: `image.<cam>` (the obs frame) and `next_image.<cam>` (the next_obs frame), uint8 (B, 3, H, W); empty without cameras.
    images: dict[str, torch.Tensor] = field(default_factory=dict)


class ReplayBuffer:
    """A ring of `capacity` transitions; `add` takes a dict of arrays with a leading N axis (see FIELDS)."""

    def __init__(self, capacity: int, obs_dim: int, act_dim: int, cameras: dict[str, tuple[int, int]] | None = None,
                 frame_codec: str = "zlib6"):
        """`cameras` {name: (H, W)}: frames this buffer stores; None = taken from the first rows that carry frames."""
        self.capacity, self.obs_dim, self.act_dim = capacity, obs_dim, act_dim
        self.frame_codec = frame_codec
        self.frames: FrameStore | None = FrameStore(capacity, cameras, frame_codec) if cameras else None
        width = {"obs": obs_dim, "act": act_dim, None: None}
        self.data = {k: np.zeros((capacity,) if width[w] is None else (capacity, width[w]), dt) for k, (w, dt) in FIELDS.items()}
        self.data["next"][:] = -1
        self.size = 0
        self.ptr = 0
        self._last: dict[int, int] = {}  # robot index -> row of its latest transition
        self._warned_frameless = False
        self._feature_fn = None  # use_features: the frame stores sample features instead of frames

    def __len__(self) -> int:
        return self.size

    def keep_frames(self, cameras: dict[str, tuple[int, int]]) -> None:
        """Store camera frames {name: (H, W)} with every row from now on (a buffer of an agent that sees cameras):
        rows without them are refused instead of kept state-only. Only while the buffer is empty."""
        if self.size:
            raise ValueError(f"keep_frames: the buffer already holds {self.size} rows; call it before any row arrives")
        self._new_frames(cameras)

    def use_features(self, encode) -> None:
        """Batches carry `features` / `next_features` of a frozen encoder (frames.FrameStore.use_features), each
        frame encoded once, instead of the frames."""
        self._feature_fn = encode
        if self.frames is not None:
            self.frames.use_features(encode)

    def _new_frames(self, cameras: dict[str, tuple[int, int]], codec: str | None = None) -> FrameStore:
        self.frames = FrameStore(self.capacity, cameras, codec or self.frame_codec)
        if self._feature_fn is not None:
            self.frames.use_features(self._feature_fn)
        return self.frames

    def add(self, rows: dict[str, np.ndarray]) -> None:
        """Append N rows (keys: every FIELDS name except `next`; with cameras also image.<cam> and next_image.<cam>,
        uint8 [N, H, W, 3]), in seq order per robot. Raises ValueError (naming the camera) on frames that do not fit."""
        n = len(rows["seq"])
        frames = self._frames_for(rows, n)
        for i in range(n):
            slot = self.ptr
            for k in FIELDS:
                if k != "next":
                    self.data[k][slot] = rows[k][i]
            self.data["next"][slot] = -1
            robot = int(rows["robot"][i])
            prev = self._last.get(robot)
            if frames is not None:
                same = prev is not None and self.data["robot"][prev] == robot and self.data["seq"][prev] + 1 == self.data["seq"][slot]
                frames.put(slot, rows, i, prev if same else None)
            if prev is not None and self._linked(prev, slot):
                self.data["next"][prev] = slot
            self._last[robot] = slot
            self.ptr = (self.ptr + 1) % self.capacity
            self.size = min(self.size + 1, self.capacity)
        if frames is not None:
            frames.flush()  # this batch's frames go to the compressor thread (frames.py)

    def _frames_for(self, rows: dict[str, np.ndarray], n: int) -> FrameStore | None:
        """The frame store for `rows` (made from the first rows with frames), after checking they carry its cameras."""
        cams = {c: rows[k].shape[1:3] for k in rows if (c := camera_of(k)) is not None}
        if self.frames is None and cams:
            if self.size:  # e.g. operator steps with frames into an offline buffer of state-only demos
                if not self._warned_frameless:
                    log.warning("rows carry camera frames %s but this buffer already holds %d rows without frames (demos "
                                "recorded without cameras?): it keeps their state only", sorted(cams), self.size)
                    self._warned_frameless = True
                return None
            self._new_frames({c: (int(h), int(w)) for c, (h, w) in cams.items()})
        if self.frames is None:
            return None
        extra = sorted(set(cams) - set(self.frames.cameras))
        if extra:
            raise ValueError(f"rows carry frames of cameras {extra} this buffer does not store (it stores "
                             f"{sorted(self.frames.cameras)}); every robot must send the same cameras")
        self.frames.check(rows, n)
        return self.frames

    def memory(self) -> dict[str, float]:
        """Bytes held per transition: the row arrays (at capacity) plus the frames actually stored (frames.py)."""
        rows = sum(v.nbytes for v in self.data.values()) / self.capacity
        out = {"row_bytes_per_transition": rows, "bytes_per_transition": rows}
        if self.frames is not None:
            f = self.frames.stats(self.size)
            out.update(f, bytes_per_transition=rows + f["bytes_per_transition"])
        return out

    def _linked(self, prev: int, slot: int) -> bool:
        d = self.data
        return bool(d["robot"][prev] == d["robot"][slot] and d["seq"][prev] + 1 == d["seq"][slot]
                    and not d["terminated"][prev] and not d["truncated"][prev])

    def sample_idx(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return rng.integers(0, self.size, size=n)

    def nstep(self, idx: np.ndarray, n: int, gamma: float, frames: bool = False) -> dict[str, np.ndarray]:
        """n-step return from rows `idx`: sum_k gamma^k r_{t+k} until a terminal/truncated step, a broken link or n
        steps; bootstrap from the last step's next_obs unless it was terminal (success ends the episode, §1).
        `frames`: the frames even when the buffer samples cached features (use_features)."""
        d = self.data
        cur = idx.copy()
        ret = d["reward"][cur].astype(np.float64)
        steps = np.ones(len(idx))
        ended = (d["terminated"][cur] > 0) | (d["truncated"][cur] > 0)
        for k in range(1, n):
            nxt = d["next"][cur]
            safe = np.where(nxt >= 0, nxt, 0)
            ok = ~ended & (nxt >= 0) & (d["seq"][safe] == d["seq"][cur] + 1) & (d["robot"][safe] == d["robot"][cur])
            cur = np.where(ok, safe, cur)
            ret += np.where(ok, gamma ** k * d["reward"][cur], 0.0)
            steps += ok
            ended |= ~ok | (d["terminated"][cur] > 0) | (d["truncated"][cur] > 0)
        discount = gamma ** steps * (1.0 - d["terminated"][cur])
        out = {"obs": d["obs"][idx], "base_action": d["base_action"][idx], "action": d["action"][idx],
               "ret": ret.astype(np.float32), "discount": discount.astype(np.float32),
               "next_obs": d["next_obs"][cur], "next_base_action": d["next_base_action"][cur]}
        if self.frames is not None:
            out.update(self.frames.sample(idx, cur, frames))  # next_image from the row that supplied next_obs
        return out

    def state(self, lazy: bool = False) -> dict[str, np.ndarray]:
        """Arrays for an .npz checkpoint (only the filled part), copies: a checkpoint writer thread may write them while
        rows keep arriving. `lazy`: frames as frames.Blobs (references, packed by frames.write_npz on that thread)."""
        out = {k: v[: self.size].copy() for k, v in self.data.items()}
        out["_ptr"] = np.array(self.ptr)
        out["_last"] = np.array(sorted(self._last.items()), dtype=np.int64).reshape(-1, 2)
        if self.frames is not None:
            out.update(self.frames.state(self.size, lazy))  # type: ignore[arg-type]
        return out

    def load_state(self, arrays: dict[str, np.ndarray]) -> None:
        size = len(arrays["seq"])
        if size > self.capacity:
            raise ValueError(f"checkpointed buffer holds {size} rows but capacity is {self.capacity}; raise the capacity")
        for k in FIELDS:
            self.data[k][:size] = arrays[k]
        self.size, self.ptr = size, int(arrays["_ptr"]) % self.capacity
        self._last = {int(r): int(s) for r, s in arrays["_last"]}
        cams = FrameStore.cameras_in(arrays)
        if cams:
            if self.frames is None or self.frames.cameras != cams:
                self._new_frames(cams, str(arrays["_frames_codec"]))
            self.frames.load_state(arrays, size)
        elif self.frames is not None:
            raise ValueError(f"the checkpointed buffer holds no camera frames but this one stores {sorted(self.frames.cameras)}")


_warned_partial: list[str] = []


def to_batch(parts: list[dict[str, np.ndarray]], device: torch.device) -> Batch:
    """Concatenate n-step samples (e.g. offline + online halves, RLPD) into one tensor batch; frames go to
    `Batch.images` (uint8, on `device`): the cameras every part carries (or their cached `features` / `next_features`)."""
    keys = set.intersection(*(set(p) for p in parts))
    partial = sorted(set.union(*(set(p) for p in parts)) - keys)
    if partial and partial != _warned_partial:
        # A state-only agent does not need them; a pixel agent finds them missing in Batch.images, named here.
        log.warning("frames %s are only in some buffers (demos recorded without cameras?): batches leave them out", partial)
        _warned_partial[:] = partial
    cat = {k: torch.from_numpy(np.concatenate([p[k] for p in parts])).to(device) for k in parts[0] if k in keys}
    images = {k: cat.pop(k) for k in list(cat) if k.startswith(("image.", "next_image.")) or k in ("features", "next_features")}
    return Batch(**cat, images=images)
