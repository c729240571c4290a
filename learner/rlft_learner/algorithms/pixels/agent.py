"""Residual RL from pixels: the residual actor and the critic ensemble see the cameras and the joints (docs/algorithms.md
§6, "Residual TD3 from pixels: which encoder"; ResFiT, Ankile et al. 2025, arXiv 2509.19301).

Chosen automatically when the base package's policy.json has `observation.images` (PixelResidualTD3; with
`algorithm: rlpd_sac` the baseline, PixelRlpdSAC). The TD3 / SAC step is the state learner's (`learn`); what changes
is the observation the networks read: [normalised joints, camera features], where the features come from one of two
encoder paths (config `image_encoder`):

- `base` (default, ResFiT's choice): the frozen BC policy's own camera encoders, without gradients, on the batch's
  current and next frames (one call per camera), or once per frame when the replay keeps features (below). Nothing
  about vision is learned online, and the residual reads the features the base acts on.
- `own`: a fresh encoder per camera, trained by the critic loss on random-shift augmented frames (DrQ, Yarats et al.
  2021, arXiv 2004.13649); the actor reads the features detached, the TD target the next frames' features without
  gradients (DrQ-v2, arXiv 2107.09645).

Batches carry the n-step arrays (`obs`, `base_action`, `action`, `ret`, `discount`, `next_obs`, `next_base_action`)
and uint8 (B, 3, H, W) `image.<camera>` / `next_image.<camera>` for every camera the base sees. The agent's replay
keeps each step's frames once (offpolicy.Experience.keep_frames, buffers/frames.py), so `update()` in serve's loop
samples such a batch like the state learner does; `update_batch(batch)` runs one update on a batch given as a dict.
With the frozen encoder the features of a frame never change, so a replay may encode each frame once when it arrives
(`encode_frames`) and send `features` / `next_features` (B, F) float32 instead of the frames: the same update without
the per-batch encoder passes. The agent's replay does this (buffers/frames.py FrameStore.use_features): a frame is
encoded the first time a batch draws it, kept until its row is overwritten, and recomputed after a resume.
"""

from __future__ import annotations

import copy

import numpy as np
import torch

from ...buffers.replay import Batch
from ...vision import CameraEncoders, random_shift
from ..offpolicy import OffPolicyConfig
from ..residual_td3.agent import BasePackage, ResidualTD3
from ..rlpd_sac.agent import RlpdSAC
from .nets import PixelResidualExport, chw_to_float, fresh_encoders, load_base_encoders

#: The n-step arrays a batch carries beside the frames (buffers/replay.py ReplayBuffer.nstep's keys).
STATE_KEYS = ("obs", "base_action", "action", "ret", "discount", "next_obs", "next_base_action")


def pixel_config_problems(cfg: OffPolicyConfig) -> list[str]:
    """What in `cfg` makes no sense when the networks see cameras, each with its fix ([] = fine). The keys are the
    residual learner's (ResidualTD3Config); a config without them (RlpdSacConfig) has none of the problems."""
    out = []
    if getattr(cfg, "her_goal", ""):
        out.append("her_goal: hindsight relabelling rewrites the goal inside the observation, but a pixel policy sees "
                   "the goal in its camera frames, which cannot be relabelled — remove her_goal and her_achieved")
    if getattr(cfg, "mirror_obs", "") or getattr(cfg, "mirror_action", ""):
        out.append("mirror_obs/mirror_action: a mirrored episode would need mirrored camera frames (and cameras placed "
                   "symmetrically), which are not made — remove mirror_obs and mirror_action")
    if getattr(cfg, "obs_features", ""):
        out.append("obs_features: relative features are differences of object positions a pixel base does not read "
                   "(it sees the objects in its frames) — remove obs_features")
    if getattr(cfg, "chunk_critic", False):
        out.append("chunk_critic: the chunk critic reads state only, not frames — set chunk_critic: false")
    return out


def check_pixel_config(cfg: OffPolicyConfig, base_path: str) -> None:
    problems = pixel_config_problems(cfg)
    if problems:
        raise ValueError(f"config: the base package {base_path} sees cameras, so the residual learns from pixels, and:\n  - "
                         + "\n  - ".join(problems))


class PixelEncoderPath:
    """What both pixel agents add to their state-only algorithm (ResidualTD3 or RlpdSAC, next in the MRO): the encoder
    path, batches with frames, the export module and checkpoints of own encoders."""

    def __init__(self, cfg: OffPolicyConfig, obs_dim: int, act_dim: int, base: BasePackage):
        check_pixel_config(cfg, base.path)
        base_enc = load_base_encoders(base.path)
        declared = [i["camera"] for i in base.policy["observation"].get("images", [])]
        if declared != list(base_enc.cameras):
            raise ValueError(f"{base.path}: policy.json observation.images names cameras {declared} but model.pt's "
                             f"encoders are for {base_enc.cameras}; re-export the base package")
        super().__init__(cfg, obs_dim, act_dim, net_obs_dim=obs_dim + base_enc.out_dim)  # type: ignore[call-arg]
        self.cameras = list(base_enc.cameras)
        self.own = cfg.image_encoder == "own"
        enc = fresh_encoders(base_enc) if self.own else base_enc.requires_grad_(False)
        self.encoders: CameraEncoders = enc.to(self.device)
        if self.own:  # the critic loss trains the encoders (DrQ), with the critic optimiser's settings; the actor never does
            self.critic_opt.add_param_group({"params": list(self.encoders.parameters())})
        self.aug_gen = torch.Generator().manual_seed(cfg.seed + 1)
        # The replay stores each step's frames; sample() returns them (Batch.images), or with the frozen base encoder
        # their features, each frame encoded once when first sampled (33x the updates/s of encoding every batch).
        self.data.keep_frames(base.cameras, features=None if self.own else self.encode_frames)

    # -- batches with frames --
    def _frames(self, batch: dict, prefix: str) -> list[torch.Tensor]:
        out = []
        for cam, ecfg in zip(self.cameras, self.encoders.cfgs):
            key = f"{prefix}.{cam}"
            if key not in batch:
                raise KeyError(f"batch has no {key!r}: the base sees cameras {', '.join(self.cameras)}, so every batch "
                               f"needs image.<camera> and next_image.<camera> uint8 (B, 3, H, W); it has {sorted(batch)}")
            img = torch.as_tensor(batch[key])
            if img.dtype != torch.uint8 or img.dim() != 4 or tuple(img.shape[1:]) != (3, ecfg.height, ecfg.width):
                raise ValueError(f"batch {key!r}: expected uint8 (B, 3, {ecfg.height}, {ecfg.width}) (the base package's "
                                 f"camera size), found {img.dtype} {tuple(img.shape)}")
            out.append(img.to(self.device))
        return out

    def _features(self, images: list[torch.Tensor], shift: bool) -> torch.Tensor:
        x = [chw_to_float(img) for img in images]  # (B, 3, H, W) each, in [-1, 1]
        if shift and self.cfg.image_shift > 0:
            gen = self.aug_gen if x[0].device.type == "cpu" else None
            x = [random_shift(xi, self.cfg.image_shift, gen) for xi in x]
        return self.encoders(*x)  # (B, F)

    def encode_frames(self, frames: dict) -> np.ndarray:
        """Frozen-encoder features of N frames: camera -> uint8 (N, 3, H, W) in, float32 (N, F) out (image_encoder
        base only: own encoders change every update, so their features cannot be kept)."""
        if self.own:
            raise ValueError("encode_frames: image_encoder own trains its encoders, so features cannot be cached; "
                             "send the frames (image.<camera>) in every batch")
        with torch.no_grad():
            return self._features(self._frames({f"image.{c}": v for c, v in frames.items()}, "image"), shift=False).cpu().numpy()

    def to_batch(self, batch: dict) -> tuple[Batch, torch.Tensor | None]:
        """(the TD3 batch with obs = [state, features], the actor's obs or None) from a replay batch with frames (or,
        with the frozen encoder, with `features` / `next_features` from encode_frames)."""
        missing = [k for k in STATE_KEYS if k not in batch]
        if missing:
            raise KeyError(f"batch lacks {', '.join(missing)} (the n-step arrays of buffers/replay.py ReplayBuffer.nstep)")
        t = {k: torch.as_tensor(np.asarray(batch[k]) if not torch.is_tensor(batch[k]) else batch[k]).to(self.device)
             for k in STATE_KEYS}
        if not self.own and "features" in batch and "next_features" in batch:
            f, f_next = (torch.as_tensor(batch[k], dtype=torch.float32).to(self.device) for k in ("features", "next_features"))
            if f.shape != (len(t["obs"]), self.encoders.out_dim) or f_next.shape != f.shape:
                raise ValueError(f"batch features: expected ({len(t['obs'])}, {self.encoders.out_dim}) (encode_frames), "
                                 f"found {tuple(f.shape)} and {tuple(f_next.shape)}")
            return self._assemble(t, f, f_next), None
        now, nxt = self._frames(batch, "image"), self._frames(batch, "next_image")
        if self.own:
            f = self._features(now, shift=True)  # (B, F), with gradients for the critic loss
            with torch.no_grad():
                f_next = self._features(nxt, shift=True)
            actor_obs = torch.cat([t["obs"], f.detach()], dim=-1)
        else:
            with torch.no_grad():  # one encoder call per camera for the current and next frames together
                both = self._features([torch.cat([a, b]) for a, b in zip(now, nxt)], shift=False)  # (2B, F)
            f, f_next = both.chunk(2)
            actor_obs = None
        return self._assemble(t, f, f_next), actor_obs

    @staticmethod
    def _assemble(t: dict[str, torch.Tensor], f: torch.Tensor, f_next: torch.Tensor) -> Batch:
        return Batch(obs=torch.cat([t["obs"], f], dim=-1), base_action=t["base_action"], action=t["action"], ret=t["ret"],
                     discount=t["discount"], next_obs=torch.cat([t["next_obs"], f_next], dim=-1),
                     next_base_action=t["next_base_action"])

    def update_batch(self, batch: dict) -> dict[str, float]:
        """One critic update (+ maybe one actor update) on a replay batch with frames; returns metrics."""
        b, actor_obs = self.to_batch(batch)
        return self.learn(b, actor_obs)

    def update(self) -> dict[str, float]:
        """One update on a batch sampled from the replay, whose buffers keep each step's frames (serve's loop)."""
        b = self.sample()
        return self.update_batch({**{k: getattr(b, k) for k in STATE_KEYS}, **b.images})

    # -- export and checkpoints --
    def export_actor(self) -> PixelResidualExport:
        """residual.onnx's module: the encoders (frozen base copy or own) and the actor (for SAC its deterministic
        export, rlpd_sac.agent.DeterministicExport), on CPU, eval mode."""
        return PixelResidualExport(copy.deepcopy(self.encoders).cpu().eval(), copy.deepcopy(self.actor).cpu().eval(),
                                   self.obs_dim).eval()

    def state_dict(self) -> dict:
        out = super().state_dict()  # type: ignore[misc]
        out["image_encoder"] = self.cfg.image_encoder
        if self.own:
            out["encoders"] = self.encoders.state_dict()
        out["aug_rng"] = self.aug_gen.get_state()
        return out

    def load_state_dict(self, state: dict) -> None:
        was = state.get("image_encoder", "state-only")
        if was != self.cfg.image_encoder:
            raise ValueError(f"checkpoint was written with image_encoder {was}, the config says {self.cfg.image_encoder}; "
                             f"resume with the same image_encoder (or start a new run_dir)")
        super().load_state_dict(state)  # type: ignore[misc]
        if self.own:
            self.encoders.load_state_dict(state["encoders"])
        if "aug_rng" in state:
            self.aug_gen.set_state(state["aug_rng"])


class PixelResidualTD3(PixelEncoderPath, ResidualTD3):
    """ResidualTD3 whose actor and critics read [normalised state, camera features]; see the module docstring."""


class PixelRlpdSAC(PixelEncoderPath, RlpdSAC):
    """The HIL-SERL / RLPD baseline from pixels (algorithms/rlpd_sac/ over a zero base): the SAC actor and critics read
    [normalised state, camera features] through the same encoder path (HIL-SERL freezes a pretrained encoder too)."""
