"""Image encoders for policies and critics that see cameras (docs/algorithms.md §6).

The recipe the field converged on for learning from pixels on small data, sized for a CPU:
- One small convolutional encoder per camera, GroupNorm instead of BatchNorm (batch statistics break with small or
  correlated batches and at batch 1 on the robot; Diffusion Policy, Chi et al. 2023, arXiv 2303.04137, and robomimic,
  Mandlekar et al. 2021, arXiv 2108.03298, replace ResNet-18's BatchNorm the same way).
- A spatial softmax head (Levine et al. 2016, arXiv 1504.00702): each feature map becomes the expected image
  coordinates of its activation, a keypoint; robomimic and Diffusion Policy pool this way instead of global average
  pooling, which throws away where things are.
- Random-shift augmentation (DrQ, Yarats et al. 2021, arXiv 2004.13649; DrQ-v2 arXiv 2107.09645): pad 4 px by
  replicating the border and crop back at a random offset, per sample. Applied at training time only.

Images enter as uint8 (B, H, W, 3), exactly what a sensor_msgs/Image rgb8 frame holds; the scaling to [-1, 1] is part
of the network, so the exported ONNX graph takes the camera's bytes and nothing is left to the robot to get wrong.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class EncoderConfig:
    """Shapes of one camera's encoder; saved with the weights so a package can be rebuilt."""

    height: int = 84
    width: int = 84
    channels: int = 32  # conv width; the first layer has half
    keypoints: int = 32  # spatial-softmax maps; 2 coordinates each
    features: int = 64  # output width per camera
    groups: int = 8  # GroupNorm groups

    def to_dict(self) -> dict:
        return {k: int(v) for k, v in asdict(self).items()}


class SpatialSoftmax(nn.Module):
    """(B, K, h, w) feature maps -> (B, 2K) expected (x, y) in [-1, 1] of each map's softmax (Levine et al. 2016)."""

    def __init__(self, height: int, width: int):
        super().__init__()
        ys, xs = torch.meshgrid(torch.linspace(-1, 1, height), torch.linspace(-1, 1, width), indexing="ij")
        self.register_buffer("pos", torch.stack([xs.reshape(-1), ys.reshape(-1)], dim=1))  # (h*w, 2)

    def forward(self, maps: torch.Tensor) -> torch.Tensor:
        b, k = maps.shape[0], maps.shape[1]
        attn = F.softmax(maps.reshape(b, k, -1), dim=-1)  # (B, K, h*w)
        return torch.matmul(attn, self.pos).reshape(b, 2 * k)  # (B, 2K)


def conv_out(size: int, kernel: int, stride: int) -> int:
    return (size - kernel) // stride + 1


class ConvEncoder(nn.Module):
    """One camera: uint8 (B, H, W, 3) -> (B, features).

    Four 3x3/5x5 convolutions (strides 2, 2, 1, 1) with GroupNorm and ReLU, a 1x1 convolution to `keypoints` maps,
    the spatial softmax and a linear layer. About 17 MFLOP per 84x84 image at the default width, so a CPU trains
    two cameras at batch 64 in a fraction of a second per step.
    """

    def __init__(self, cfg: EncoderConfig):
        super().__init__()
        self.cfg = cfg
        c, g = cfg.channels, cfg.groups
        self.convs = nn.Sequential(
            nn.Conv2d(3, c // 2, 5, stride=2), nn.GroupNorm(g // 2, c // 2), nn.ReLU(),
            nn.Conv2d(c // 2, c, 3, stride=2), nn.GroupNorm(g, c), nn.ReLU(),
            nn.Conv2d(c, c, 3, stride=1), nn.GroupNorm(g, c), nn.ReLU(),
            nn.Conv2d(c, c, 3, stride=1), nn.GroupNorm(g, c), nn.ReLU(),
            nn.Conv2d(c, cfg.keypoints, 1),
        )
        h = conv_out(conv_out(conv_out(conv_out(cfg.height, 5, 2), 3, 2), 3, 1), 3, 1)
        w = conv_out(conv_out(conv_out(conv_out(cfg.width, 5, 2), 3, 2), 3, 1), 3, 1)
        if h < 2 or w < 2:
            raise ValueError(f"camera images of {cfg.height}x{cfg.width} are too small for the encoder (need at least 32x32)")
        self.softmax = SpatialSoftmax(h, w)
        self.out = nn.Sequential(nn.Linear(2 * cfg.keypoints, cfg.features), nn.LayerNorm(cfg.features))

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        x = to_float_chw(image)  # (B, 3, H, W) in [-1, 1]
        return self.out(self.softmax(self.convs(x)))  # (B, features)


def to_float_chw(image: torch.Tensor) -> torch.Tensor:
    """uint8 (B, H, W, 3) -> float32 (B, 3, H, W) scaled to [-1, 1]; float input passes through (already scaled)."""
    if image.dtype == torch.uint8:
        return image.permute(0, 3, 1, 2).to(torch.float32) * (2.0 / 255.0) - 1.0
    return image


def random_shift(image: torch.Tensor, pad: int = 4, generator: torch.Generator | None = None) -> torch.Tensor:
    """DrQ's augmentation: replicate-pad `pad` pixels and crop back to the input size at a random integer offset per
    sample. uint8 (B, H, W, 3) in, float32 (B, 3, H, W) in [-1, 1] out (the encoder accepts either)."""
    x = to_float_chw(image)  # (B, 3, H, W)
    if pad <= 0:
        return x
    b, _, h, w = x.shape
    padded = F.pad(x, (pad, pad, pad, pad), mode="replicate")  # (B, 3, H+2p, W+2p)
    dx = torch.randint(0, 2 * pad + 1, (b,), generator=generator, device=x.device)  # (B,)
    dy = torch.randint(0, 2 * pad + 1, (b,), generator=generator, device=x.device)  # (B,)
    rows = (dy[:, None] + torch.arange(h, device=x.device)[None, :])  # (B, H)
    cols = (dx[:, None] + torch.arange(w, device=x.device)[None, :])  # (B, W)
    bi = torch.arange(b, device=x.device)[:, None, None]  # (B, 1, 1)
    out = padded.permute(0, 2, 3, 1)[bi, rows[:, :, None], cols[:, None, :]]  # (B, H, W, 3)
    return out.permute(0, 3, 1, 2).contiguous()  # (B, 3, H, W)


class CameraEncoders(nn.Module):
    """One ConvEncoder per named camera; images in `cameras` order -> (B, sum of features [+ aux_dim]).

    `cfg`: one EncoderConfig for every camera, or one per camera (cameras of different sizes).

    `aux_dim` > 0 adds a position head (an MLP over all cameras' features) whose `aux_dim` outputs are appended to the
    features: training supervises them with quantities only the simulator knows (e.g. the cube's and the target's
    position, normalised), as an auxiliary loss, and the policy reads the estimates like any feature. At run time the
    head sees only the images, so nothing privileged reaches the robot (docs/algorithms.md §6). `aux_only` outputs the
    estimates alone (a perception bottleneck: the policy then reads joints + estimated positions, like a state policy)."""

    def __init__(self, cameras: list[str], cfg: EncoderConfig | list[EncoderConfig], aux_dim: int = 0, aux_hidden: int = 128,
                 aux_only: bool = False):
        super().__init__()
        if not cameras:
            raise ValueError("CameraEncoders needs at least one camera")
        self.cameras = list(cameras)
        self.cfgs = list(cfg) if isinstance(cfg, list) else [cfg] * len(cameras)
        if len(self.cfgs) != len(self.cameras):
            raise ValueError(f"{len(self.cameras)} cameras need {len(self.cameras)} encoder configs; got {len(self.cfgs)}")
        self.encoders = nn.ModuleList([ConvEncoder(c) for c in self.cfgs])
        if aux_only and aux_dim <= 0:
            raise ValueError("aux_only outputs the position head's estimates alone: it needs aux_dim > 0 (aux_targets)")
        self.aux_dim, self.aux_hidden, self.aux_only = int(aux_dim), int(aux_hidden), bool(aux_only)
        feats = sum(c.features for c in self.cfgs)
        self.aux_head = (nn.Sequential(nn.Linear(feats, aux_hidden), nn.ReLU(), nn.Linear(aux_hidden, aux_dim))
                         if aux_dim > 0 else None)

    @property
    def cfg(self) -> EncoderConfig:
        """The first camera's config (all cameras share one unless sizes differ)."""
        return self.cfgs[0]

    @property
    def out_dim(self) -> int:
        return self.aux_dim if self.aux_only else sum(c.features for c in self.cfgs) + self.aux_dim

    def spec(self) -> dict:
        """What a checkpoint keeps to rebuild these encoders (with `from_spec`): cameras, configs, the aux head."""
        return {"cameras": list(self.cameras), "encoder_configs": [e.to_dict() for e in self.cfgs],
                "encoder_aux": [self.aux_dim, self.aux_hidden, int(self.aux_only)]}

    @classmethod
    def from_spec(cls, ckpt: dict) -> "CameraEncoders":
        """Encoders shaped as `spec()` (or a checkpoint holding it) says, randomly initialised; older checkpoints
        without `encoder_aux` have no aux head."""
        cfgs = [EncoderConfig(**{k: int(v) for k, v in c.items()}) for c in ckpt["encoder_configs"]]
        aux_dim, aux_hidden, aux_only = (*(int(x) for x in ckpt.get("encoder_aux", (0, 128))), 0, 0)[:3]
        return cls(list(ckpt["cameras"]), cfgs, aux_dim=aux_dim, aux_hidden=aux_hidden, aux_only=bool(aux_only))

    def forward(self, *images: torch.Tensor) -> torch.Tensor:
        if len(images) != len(self.cameras):
            raise ValueError(f"expected {len(self.cameras)} images ({', '.join(self.cameras)}), got {len(images)}")
        feats = torch.cat([enc(img) for enc, img in zip(self.encoders, images)], dim=-1)  # (B, n * features)
        if self.aux_head is None:
            return feats
        est = self.aux_head(feats)  # (B, aux_dim)
        return est if self.aux_only else torch.cat([feats, est], dim=-1)  # (B, [n * features +] aux_dim): estimates last
