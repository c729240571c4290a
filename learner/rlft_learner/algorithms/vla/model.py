"""A tiny vision-language-action model in the shape of pi0 (Black et al. 2024, arXiv 2410.24164), sized for CPUs.

- Prefix (run once per chunk): camera images -> small CoordConv CNN -> patch tokens; instruction -> token embeddings;
  joint state -> one token; a few pre-LN transformer blocks over all of them (bidirectional, padding masked).
- Action expert (run once per flow-matching integration step): the noisy action chunk and the flow time -> one token
  per action step; blocks of self-attention over the chunk and cross-attention into the prefix tokens; a linear head
  predicts the velocity. pi0's convention (openpi): x_t = t * noise + (1 - t) * actions, u = noise - actions,
  integrate from t = 1 (noise) to t = 0 with Euler steps dt = -1/N.
- Image preprocessing (crop -> bilinear resize -> /255 -> (x - mean) / std) is `preprocess_images`; the robot's TS
  runtime (policies/vla/preprocess.ts) implements the same arithmetic.

Attention is written out with matmul/softmax (no fused kernels), so the graphs export the same on torch 1.13 and 2.x.
This file has no training code (train.py) and no export code (export.py).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class ImageSpec:
    """How one camera's frame becomes a model input: crop (top, left, height, width) in source pixels, then resize."""

    name: str = "front"
    source_height: int = 64
    source_width: int = 64
    crop: list[int] = field(default_factory=lambda: [14, 2, 48, 60])
    height: int = 32
    width: int = 40
    mean: list[float] = field(default_factory=lambda: [0.5, 0.5, 0.5])
    std: list[float] = field(default_factory=lambda: [0.25, 0.25, 0.25])


@dataclass
class VlaConfig:
    state_dim: int = 5
    action_dim: int = 5
    horizon: int = 16
    vocab_size: int = 32
    max_tokens: int = 16
    cameras: list[ImageSpec] = field(default_factory=lambda: [ImageSpec()])
    width: int = 64  # token width D
    heads: int = 4
    keypoints: int = 16  # spatial-softmax keypoint tokens per camera (0 = patch tokens only)
    film: bool = True  # instruction FiLM-conditions the image encoder
    prefix_layers: int = 2
    expert_layers: int = 2
    # Position token (issue 30; the pixel BC recipe of docs/algorithms.md §6): an MLP over every camera's keypoints
    # and pooled features estimates `aux_dim` object positions (training targets only: sim-only names, normalised);
    # the estimates are embedded as one more prefix token the action expert attends to. 0 = no head, no token.
    aux_dim: int = 0
    aux_hidden: int = 128
    # The prefix holds the position token instead of the camera tokens (the cameras reach the policy only through the
    # head's estimates): a test of whether the estimates alone carry what the task needs.
    aux_only: bool = False

    def to_dict(self) -> dict:
        return asdict(self)

    @staticmethod
    def from_dict(d: dict) -> "VlaConfig":
        d = dict(d)
        d["cameras"] = [ImageSpec(**c) for c in d["cameras"]]
        return VlaConfig(**d)


def preprocess_images(frames: torch.Tensor, spec: ImageSpec) -> torch.Tensor:
    """uint8 frames (B, H_src, W_src, 3) -> float (B, 3, height, width): crop, bilinear resize (half-pixel centres,
    no antialias: F.interpolate align_corners=False), scale to [0, 1], normalise per channel."""
    top, left, h, w = spec.crop
    x = frames[:, top:top + h, left:left + w, :].permute(0, 3, 1, 2).float() / 255.0  # (B, 3, h, w)
    if (h, w) != (spec.height, spec.width):
        x = F.interpolate(x, size=(spec.height, spec.width), mode="bilinear", align_corners=False)
    mean = torch.tensor(spec.mean, dtype=x.dtype).view(1, 3, 1, 1)
    std = torch.tensor(spec.std, dtype=x.dtype).view(1, 3, 1, 1)
    return (x - mean) / std  # (B, 3, height, width)


def additive_mask(mask: torch.Tensor) -> torch.Tensor:
    """1/0 key mask (B, T) -> additive attention bias (B, 1, 1, T): 0 where attended, -1e9 where masked."""
    return ((1.0 - mask.float()) * -1e9)[:, None, None, :]


class Attention(nn.Module):
    def __init__(self, d: int, heads: int):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))

    def forward(self, x: torch.Tensor, ctx: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
        B, T, D = x.shape
        S = ctx.shape[1]
        q = self.q(x).view(B, T, self.h, self.dh).transpose(1, 2)  # (B, h, T, dh)
        k = self.k(ctx).view(B, S, self.h, self.dh).transpose(1, 2)  # (B, h, S, dh)
        v = self.v(ctx).view(B, S, self.h, self.dh).transpose(1, 2)  # (B, h, S, dh)
        att = q @ k.transpose(-1, -2) / math.sqrt(self.dh)  # (B, h, T, S)
        if bias is not None:
            att = att + bias
        y = torch.softmax(att, dim=-1) @ v  # (B, h, T, dh)
        return self.o(y.transpose(1, 2).reshape(B, T, D))


class Block(nn.Module):
    """Pre-LN transformer block; with `cross`, a cross-attention into a context between self-attention and MLP."""

    def __init__(self, d: int, heads: int, cross: bool = False):
        super().__init__()
        self.ln1, self.attn = nn.LayerNorm(d), Attention(d, heads)
        self.cross = cross
        if cross:
            self.ln_c, self.xattn = nn.LayerNorm(d), Attention(d, heads)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, bias=None, ctx=None, ctx_bias=None):
        h = self.ln1(x)
        x = x + self.attn(h, h, bias)
        if self.cross:
            x = x + self.xattn(self.ln_c(x), ctx, ctx_bias)
        return x + self.mlp(self.ln2(x))


class ImageEncoder(nn.Module):
    """(B, 3, H, W) -> (B, N, D) tokens: coarse patch tokens plus one token per spatial-softmax keypoint.

    CoordConv (Liu et al. 2018) input channels let the CNN say *where* things are; the keypoints (spatial softmax,
    Levine et al. 2016, as in robomimic / Diffusion Policy's image encoders) turn each feature map into an expected
    (x, y) image position, which is what pushing needs: where the red / blue cube and the targets are. The language
    picks among them in the prefix's attention. Patch tokens keep the coarse layout (the arm, occlusions)."""

    def __init__(self, spec: ImageSpec, d: int, keypoints: int = 16, channels: int = 32, film: bool = True):
        super().__init__()
        self.channels = channels
        # FiLM (Perez et al. 2018; RT-1's language-conditioned image encoder): the instruction scales and shifts the
        # trunk's feature maps, so "red" vs "blue" changes *what the keypoints look at* before any attention.
        self.film = nn.Linear(d, 4 * channels) if film else None
        if self.film is not None:
            nn.init.zeros_(self.film.weight)
            nn.init.zeros_(self.film.bias)
        ys = torch.linspace(-1, 1, spec.height).view(1, 1, -1, 1).expand(1, 1, spec.height, spec.width)
        xs = torch.linspace(-1, 1, spec.width).view(1, 1, 1, -1).expand(1, 1, spec.height, spec.width)
        self.register_buffer("coords", torch.cat([ys, xs], 1).contiguous())  # (1, 2, H, W)
        self.trunk = nn.ModuleList([
            nn.Conv2d(5, 16, 3, stride=1, padding=1),
            nn.Conv2d(16, channels, 3, stride=2, padding=1),
            nn.Conv2d(channels, channels, 3, stride=1, padding=1),
        ])
        # GroupNorm after every conv (as robomimic / Diffusion Policy do for BC from scratch): without it the few
        # cube pixels barely move the features and the policy learns to ignore the camera.
        self.norms = nn.ModuleList([nn.GroupNorm(4, 16), nn.GroupNorm(8, channels), nn.GroupNorm(8, channels)])
        with torch.no_grad():
            fh, fw = self.features(torch.zeros(1, 5, spec.height, spec.width), None).shape[2:]
        self.keypoints = keypoints
        if keypoints > 0:
            self.kp = nn.Conv2d(channels, keypoints, 1)
            gy = torch.linspace(-1, 1, fh).view(-1, 1).expand(fh, fw).reshape(1, 1, -1)
            gx = torch.linspace(-1, 1, fw).view(1, -1).expand(fh, fw).reshape(1, 1, -1)
            self.register_buffer("grid", torch.cat([gy, gx], 1).contiguous())  # (1, 2, fh*fw)
            self.kp_in = nn.Linear(3, d)  # (y, x, peak logit) -> token
            self.kp_id = nn.Parameter(torch.randn(1, keypoints, d) * 0.02)
        self.patch = nn.Sequential(nn.AvgPool2d(4), nn.Flatten(2))
        with torch.no_grad():
            n = self.patch(torch.zeros(1, channels, fh, fw)).shape[2]
        self.patch_in = nn.Linear(channels, d)
        self.pos = nn.Parameter(torch.randn(1, n, d) * 0.02)
        self.tokens = n + keypoints

    def features(self, x: torch.Tensor, cond: torch.Tensor | None) -> torch.Tensor:
        """(B, 5, H, W) -> (B, C, fh, fw); `cond` (B, D) is the instruction vector FiLM reads (None: no FiLM)."""
        x = torch.relu(self.norms[0](self.trunk[0](x)))
        film = self.film(cond) if (self.film is not None and cond is not None) else None  # (B, 4C)
        for i, (conv, norm) in enumerate(zip(self.trunk[1:], self.norms[1:])):
            x = norm(conv(x))
            if film is not None:
                g, b = film[:, 2 * i * self.channels:(2 * i + 2) * self.channels].chunk(2, dim=1)  # (B, C) each
                x = x * (1 + g[:, :, None, None]) + b[:, :, None, None]
            x = torch.relu(x)
        return x

    def forward(self, img: torch.Tensor, cond: torch.Tensor | None = None) -> torch.Tensor:
        x = torch.cat([img, self.coords.expand(img.shape[0], -1, -1, -1)], 1)  # (B, 5, H, W)
        f = self.features(x, cond)  # (B, C, fh, fw)
        out = self.patch_in(self.patch(f).transpose(1, 2)) + self.pos  # (B, N, D)
        if self.keypoints == 0:
            return out
        logits = self.kp(f).flatten(2)  # (B, K, fh*fw)
        attn = torch.softmax(logits, dim=-1)
        yx = attn @ self.grid.transpose(1, 2).expand(img.shape[0], -1, -1)  # (B, K, 2)
        peak = logits.max(dim=-1, keepdim=True)[0] - logits.mean(dim=-1, keepdim=True)  # (B, K, 1): how sure
        kp = self.kp_in(torch.cat([yx, torch.tanh(0.1 * peak)], -1)) + self.kp_id  # (B, K, D)
        return torch.cat([out, kp], 1)


class PrefixEncoder(nn.Module):
    """forward(state, input_ids, attention_mask, *images) -> prefix (B, P, D), prefix_mask (B, P)."""

    def __init__(self, cfg: VlaConfig):
        super().__init__()
        d = cfg.width
        self.cfg = cfg
        self.images = nn.ModuleList(ImageEncoder(c, d, cfg.keypoints, film=cfg.film) for c in cfg.cameras)
        self.embed = nn.Embedding(cfg.vocab_size, d)
        self.text_pos = nn.Parameter(torch.randn(1, cfg.max_tokens, d) * 0.02)
        self.state = nn.Linear(cfg.state_dim, d)
        self.blocks = nn.ModuleList(Block(d, cfg.heads) for _ in range(cfg.prefix_layers))
        self.ln = nn.LayerNorm(d)
        self.image_tokens = sum(e.tokens for e in self.images)
        if cfg.aux_dim > 0:
            # The head reads each camera's tokens mean-pooled (patch layout + keypoints, FiLM-conditioned on the
            # instruction, so "the instructed cube" is as answerable as "the red cube").
            self.aux_head = nn.Sequential(nn.Linear(d * len(cfg.cameras), cfg.aux_hidden), nn.ReLU(),
                                          nn.Linear(cfg.aux_hidden, cfg.aux_hidden), nn.ReLU(),
                                          nn.Linear(cfg.aux_hidden, cfg.aux_dim))
            self.aux_in = nn.Linear(cfg.aux_dim, d)
            self.aux_pos = nn.Parameter(torch.randn(1, 1, d) * 0.02)

    def forward(self, state: torch.Tensor, input_ids: torch.Tensor, attention_mask: torch.Tensor, *images: torch.Tensor):
        prefix, mask, _ = self.with_estimates(state, input_ids, attention_mask, *images)
        return prefix, mask

    def _images(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, images) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """The instruction's word embeddings (B, L, D) and each camera's tokens (B, N_i, D), FiLM-conditioned on the
        instruction's bag of words."""
        words = self.embed(input_ids)  # (B, L, D)
        m = attention_mask.float()[:, :, None]  # (B, L, 1)
        cond = (words * m).sum(1) / m.sum(1).clamp(min=1.0)  # (B, D): bag of the instruction's words
        return words, [enc(x, cond) for enc, x in zip(self.images, images)]

    def estimates(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, *images: torch.Tensor) -> torch.Tensor:
        """The position head's estimates (B, aux_dim) alone: the image path, without the prefix blocks (training on
        frames that are not imitated, `train-vla --aux-dataset`)."""
        return self._head(self._images(input_ids, attention_mask, images)[1])

    def _head(self, img: list[torch.Tensor]) -> torch.Tensor:
        """The position head over each camera's tokens, mean-pooled: (B, aux_dim)."""
        return self.aux_head(torch.cat([t.mean(1) for t in img], -1))

    def with_estimates(self, state: torch.Tensor, input_ids: torch.Tensor, attention_mask: torch.Tensor, *images: torch.Tensor,
                       token_noise: torch.Tensor | None = None):
        """-> prefix (B, P, D), prefix_mask (B, P), the position head's estimates (B, aux_dim) or None. `token_noise`
        (B, aux_dim), training only: added to the estimates the token carries (not to those returned)."""
        B = state.shape[0]
        words, img = self._images(input_ids, attention_mask, images)
        txt = words + self.text_pos[:, : input_ids.shape[1]]  # (B, L, D)
        st = self.state(state)[:, None, :]  # (B, 1, D)
        extra, est = [], None
        if self.cfg.aux_dim > 0:
            est = self._head(img)  # (B, aux_dim)
            extra = [self.aux_in(est if token_noise is None else est + token_noise)[:, None, :] + self.aux_pos]  # (B, 1, D)
        if self.cfg.aux_only and extra:
            img = []
        x = torch.cat(img + [txt, st] + extra, 1)  # (B, P, D)
        ones = torch.ones(B, sum(t.shape[1] for t in img) + 1 + len(extra), dtype=torch.float32, device=state.device)
        n_img = ones.shape[1] - 1 - len(extra)
        mask = torch.cat([ones[:, :n_img], attention_mask.float(), ones[:, n_img:]], 1)  # (B, P): text padding masked
        bias = additive_mask(mask)
        for blk in self.blocks:
            x = blk(x, bias)
        return self.ln(x), mask, est


def time_embedding(t: torch.Tensor, dim: int) -> torch.Tensor:
    """Sinusoidal embedding of flow time t in [0, 1] (B,) -> (B, dim), periods from 1e-3 to 1 as in pi0."""
    half = dim // 2
    freqs = torch.exp(torch.linspace(0, math.log(1000.0), half, device=t.device))  # (half,)
    ang = 2 * math.pi * t[:, None] * freqs[None, :]  # (B, half)
    return torch.cat([torch.sin(ang), torch.cos(ang)], 1)


class ActionExpert(nn.Module):
    """forward(x, t, prefix, prefix_mask) -> velocity (B, H, A)."""

    def __init__(self, cfg: VlaConfig):
        super().__init__()
        d = cfg.width
        self.cfg = cfg
        self.inp = nn.Linear(cfg.action_dim, d)
        # pi0: action and time embeddings are concatenated and mixed by an MLP.
        self.mix = nn.Sequential(nn.Linear(2 * d, d), nn.SiLU(), nn.Linear(d, d))
        self.pos = nn.Parameter(torch.randn(1, cfg.horizon, d) * 0.02)
        self.blocks = nn.ModuleList(Block(d, cfg.heads, cross=True) for _ in range(cfg.expert_layers))
        self.ln = nn.LayerNorm(d)
        self.out = nn.Linear(d, cfg.action_dim)

    def forward(self, x: torch.Tensor, t: torch.Tensor, prefix: torch.Tensor, prefix_mask: torch.Tensor) -> torch.Tensor:
        B, H, _ = x.shape
        te = time_embedding(t, self.cfg.width)[:, None, :].expand(B, H, self.cfg.width)  # (B, H, D)
        h = self.mix(torch.cat([self.inp(x), te], -1)) + self.pos  # (B, H, D)
        bias = additive_mask(prefix_mask)
        for blk in self.blocks:
            h = blk(h, None, prefix, bias)
        return self.out(self.ln(h))  # (B, H, A)


class TinyVla(nn.Module):
    def __init__(self, cfg: VlaConfig):
        super().__init__()
        self.cfg = cfg
        self.prefix = PrefixEncoder(cfg)
        self.expert = ActionExpert(cfg)

    @torch.no_grad()
    def sample(self, state, input_ids, attention_mask, images, noise, steps: int = 10) -> torch.Tensor:
        """Euler integration from t = 1 (noise) to t = 0 (actions); the prefix is computed once. (B, H, A)."""
        prefix, mask = self.prefix(state, input_ids, attention_mask, *images)
        x, dt = noise, -1.0 / steps
        for i in range(steps):
            t = torch.full((x.shape[0],), 1.0 + i * dt, dtype=x.dtype, device=x.device)
            x = x + dt * self.expert(x, t, prefix, mask)
        return x
