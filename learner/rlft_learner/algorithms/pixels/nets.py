"""Networks of the residual learner from pixels (docs/algorithms.md §6): no training code here.

The residual actor and the critic ensemble are residual_td3/nets.py's MLPs over [normalised state, camera features]; the
features come from a CameraEncoders (rlft_learner/vision.py): the frozen BC policy's own encoder (ResFiT, Ankile et al. 2025,
arXiv 2509.19301) or one trained by the critic (DrQ-v2, Yarats et al. 2021, arXiv 2107.09645).

Frames reach the learner as uint8 (B, 3, H, W) (`image.<camera>` in a replay batch) and the robot as uint8 (B, H, W, 3)
(a sensor_msgs/Image rgb8 frame, policy.json observation.images layout HWC). Both become the same float (B, 3, H, W)
in [-1, 1] (x * 2/255 - 1, vision.to_float_chw), so the exported graph sees exactly what training saw.
"""

from __future__ import annotations

import os

import torch
import torch.nn as nn

from ...vision import CameraEncoders


def chw_to_float(image: torch.Tensor) -> torch.Tensor:
    """uint8 (B, 3, H, W) -> float32 (B, 3, H, W) in [-1, 1]: vision.to_float_chw's scaling for channel-first bytes."""
    if image.dtype != torch.uint8:
        raise ValueError(f"camera frames in a batch must be uint8 (B, 3, H, W); got {image.dtype}")
    return image.to(torch.float32) * (2.0 / 255.0) - 1.0


def load_base_encoders(package_dir: str) -> CameraEncoders:
    """The camera encoders of a pixel BC package (model.pt: encoders_state_dict, encoder_configs, cameras), in eval
    mode. Raises naming the fix when the package sees no cameras."""
    path = os.path.join(package_dir, "model.pt")
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    if "encoders_state_dict" not in ckpt:
        raise ValueError(f"{path} holds no camera encoders: the base package is state-only; train it with "
                         f"rlft train-bc --cameras <names> to learn from pixels")
    enc = CameraEncoders.from_spec(ckpt)
    enc.load_state_dict(ckpt["encoders_state_dict"])
    return enc.eval()


def fresh_encoders(like: CameraEncoders) -> CameraEncoders:
    """A randomly initialised encoder per camera with the shapes of `like` (image_encoder: own)."""
    return CameraEncoders.from_spec(like.spec())


class PixelResidualExport(nn.Module):
    """residual.onnx of a package that sees cameras: (obs, image.<camera> uint8 (B, H, W, 3) per camera, base_action)
    -> residual = actor([obs, encoders(images)], base_action). The encoders run inside the graph, so the robot feeds
    the camera's bytes as it does to the base's sampler."""

    def __init__(self, encoders: CameraEncoders, actor: nn.Module, obs_dim: int):
        super().__init__()
        self.encoders = encoders
        self.actor = actor
        self.n_cameras = len(encoders.cameras)
        self.obs_dim, self.act_dim = obs_dim, actor.act_dim
        self.hidden, self.layers, self.scale = actor.hidden, actor.layers, actor.scale

    def forward(self, obs: torch.Tensor, *rest: torch.Tensor) -> torch.Tensor:
        images, base_action = rest[:self.n_cameras], rest[self.n_cameras]
        return self.actor(torch.cat([obs, self.encoders(*images)], dim=-1), base_action)  # (B, A)
