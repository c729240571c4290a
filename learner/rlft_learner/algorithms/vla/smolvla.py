"""SmolVLA (Shukor et al. 2025, arXiv 2506.01844) as LeRobot 0.4 defines it, re-implemented without `transformers`
so the learner can read a LeRobot checkpoint directory (config.json + model.safetensors) and export it to ONNX.

Architecture, as in lerobot/policies/smolvla/{modeling_smolvla,smolvlm_with_expert}.py (LeRobot 0.4.4):
- prefix: each camera image (B, 3, 512, 512) in [-1, 1] -> SigLIP-style vision transformer (16 px patches, 12 layers,
  width 768) -> pixel shuffle (x4) -> linear connector to the text width (64 tokens per image, scaled by sqrt(width));
  instruction tokens -> the VLM's embedding table (scaled by sqrt(width)); the padded state (32) -> one token. The
  first `num_vlm_layers` (16) Llama layers of SmolVLM2 run over them once and keep every layer's keys (RoPE applied)
  and values: the KV cache.
- action expert (run once per Euler step): a narrower Llama stack (0.75 x width) over the chunk's 50 action tokens;
  even layers self-attend over [cached prefix keys/values, own keys/values], odd layers cross-attend into the cached
  keys/values through their own k/v projections. Flow matching as pi0: x_t = t noise + (1 - t) actions, 10 Euler
  steps from t = 1.

Parameter names are LeRobot's (`model.vlm_with_expert.vlm.model.text_model.layers.0.self_attn.q_proj.weight`, ...),
so `load_state_dict` takes a LeRobot model.safetensors as it is. The shapes not stored in the weights (head counts,
norm epsilons) come from `SmolVlaShapes` (SmolVLM2-500M's values by default).
"""

from __future__ import annotations

import json
import math
import mmap
import os
import struct
from dataclasses import asdict, dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

# ---------------------------------------------------------------------------------------------------------------
# Shapes and LeRobot's config.json


@dataclass
class SmolVlaShapes:
    """Every size the graphs depend on. Defaults: LeRobot's SmolVLA on SmolVLM2-500M-Video-Instruct."""

    # Vision tower (SigLIP as in SmolVLM2).
    image_size: int = 512
    patch: int = 16
    vision_width: int = 768
    vision_layers: int = 12
    vision_heads: int = 12
    vision_mlp: int = 3072
    vision_eps: float = 1e-6
    scale_factor: int = 4
    # Text model (SmolLM2 Llama layers), truncated to `layers`.
    width: int = 960
    layers: int = 16
    heads: int = 15
    kv_heads: int = 5
    head_dim: int = 64
    mlp: int = 2560
    vocab_size: int = 49280
    rms_eps: float = 1e-5
    # Action expert.
    expert_width: int = 720
    expert_layers: int = 16
    expert_mlp: int = 2048
    self_attn_every_n_layers: int = 2
    # Policy.
    max_state_dim: int = 32
    max_action_dim: int = 32
    chunk_size: int = 50
    num_steps: int = 10
    min_period: float = 4e-3
    max_period: float = 4.0
    tokenizer_max_length: int = 48

    @property
    def image_tokens(self) -> int:
        return (self.image_size // self.patch) ** 2 // self.scale_factor ** 2

    def to_dict(self) -> dict:
        return asdict(self)


def expert_intermediate_size(hidden: int, ffn_dim_multiplier: int = 4, multiple_of: int = 256) -> int:
    """LeRobot's get_intermediate_size: the expert's MLP width from its hidden width."""
    h = int(2 * hidden / 3)
    h = int(ffn_dim_multiplier * h)
    return multiple_of * ((h + multiple_of - 1) // multiple_of)


# SmolVLM2 configs by LeRobot's `vlm_model_name` (what transformers would fetch from the Hub; not stored in the checkpoint).
KNOWN_VLMS = {
    "HuggingFaceTB/SmolVLM2-500M-Video-Instruct": dict(image_size=512, patch=16, vision_width=768, vision_layers=12,
                                                       vision_heads=12, vision_mlp=3072, scale_factor=4, width=960,
                                                       heads=15, kv_heads=5, head_dim=64, mlp=2560, vocab_size=49280,
                                                       rms_eps=1e-5),
}


def lerobot_config(shapes: SmolVlaShapes, state_dim: int, action_dim: int, cameras: list[str],
                   source_hw: tuple[int, int] | dict = (480, 640), vlm: str = "HuggingFaceTB/SmolVLM2-500M-Video-Instruct",
                   empty_cameras: int = 0) -> dict:
    """A config.json as LeRobot 0.4 writes it for a SmolVLA policy with these shapes (the fields the exporter reads)."""
    feats = {"observation.state": {"type": "STATE", "shape": [state_dim]}}
    for c in cameras:
        hw = source_hw[c] if isinstance(source_hw, dict) else source_hw
        feats[f"observation.images.{c}"] = {"type": "VISUAL", "shape": [3, *hw]}
    return {
        "type": "smolvla", "n_obs_steps": 1,
        "normalization_mapping": {"VISUAL": "IDENTITY", "STATE": "MEAN_STD", "ACTION": "MEAN_STD"},
        "input_features": feats, "output_features": {"action": {"type": "ACTION", "shape": [action_dim]}},
        "chunk_size": shapes.chunk_size, "n_action_steps": shapes.chunk_size,
        "max_state_dim": shapes.max_state_dim, "max_action_dim": shapes.max_action_dim,
        "resize_imgs_with_padding": [shapes.image_size, shapes.image_size], "empty_cameras": empty_cameras,
        "adapt_to_pi_aloha": False, "use_delta_joint_actions_aloha": False,
        "tokenizer_max_length": shapes.tokenizer_max_length, "num_steps": shapes.num_steps, "use_cache": True,
        "vlm_model_name": vlm, "load_vlm_weights": False, "add_image_special_tokens": False,
        "attention_mode": "cross_attn", "prefix_length": -1, "pad_language_to": "longest",
        "num_expert_layers": shapes.expert_layers if shapes.expert_layers != shapes.layers else -1,
        "num_vlm_layers": shapes.layers, "self_attn_every_n_layers": shapes.self_attn_every_n_layers,
        "expert_width_multiplier": shapes.expert_width / shapes.width,
        "min_period": shapes.min_period, "max_period": shapes.max_period,
    }


class CheckpointError(ValueError):
    """A LeRobot checkpoint directory this exporter cannot read (the message names the file and the fix)."""


def shapes_from_checkpoint(config: dict, tensors: dict[str, torch.Tensor], vlm_config: dict | None = None) -> SmolVlaShapes:
    """SmolVlaShapes of a checkpoint: sizes from the weights' shapes, head counts from the VLM's config (`vlm_config`,
    the VLM's own config.json) or the table of known VLMs."""
    if config.get("type") != "smolvla":
        raise CheckpointError(f"config.json type is {config.get('type')!r}, not 'smolvla' — export-smolvla reads LeRobot SmolVLA checkpoints only")
    if config.get("attention_mode", "cross_attn") != "cross_attn" or config.get("add_image_special_tokens"):
        raise CheckpointError("config.json: only attention_mode 'cross_attn' without image special tokens is supported (LeRobot's defaults)")
    if int(config.get("prefix_length", -1)) > 0:
        raise CheckpointError("config.json: prefix_length > 0 (a fixed-length padded prefix) is not supported")
    name = config.get("vlm_model_name", "")
    if vlm_config is not None:
        tc, vc = vlm_config["text_config"], vlm_config["vision_config"]
        known = dict(image_size=vc["image_size"], patch=vc["patch_size"], vision_width=vc["hidden_size"],
                     vision_layers=vc["num_hidden_layers"], vision_heads=vc["num_attention_heads"],
                     vision_mlp=vc["intermediate_size"], scale_factor=vlm_config.get("scale_factor", 4),
                     width=tc["hidden_size"], heads=tc["num_attention_heads"], kv_heads=tc["num_key_value_heads"],
                     head_dim=tc.get("head_dim", tc["hidden_size"] // tc["num_attention_heads"]),
                     mlp=tc["intermediate_size"], vocab_size=tc["vocab_size"], rms_eps=tc.get("rms_norm_eps", 1e-5))
    elif name in KNOWN_VLMS:
        known = dict(KNOWN_VLMS[name])
    else:
        raise CheckpointError(f"config.json vlm_model_name {name!r} is not one this exporter knows ({', '.join(KNOWN_VLMS)}) — pass its config.json with --vlm-config")
    p = "model.vlm_with_expert."

    def shape(key: str) -> tuple[int, ...]:
        if key not in tensors:
            raise CheckpointError(f"model.safetensors has no tensor {key} — not a LeRobot SmolVLA checkpoint")
        return tuple(tensors[key].shape)

    def count(prefix: str) -> int:
        return len({k[len(prefix):].split(".")[0] for k in tensors if k.startswith(prefix)})

    # Sizes stored in the weights win over the table (a checkpoint of another width still loads).
    known["vocab_size"], known["width"] = shape(p + "vlm.model.text_model.embed_tokens.weight")
    known["mlp"] = shape(p + "vlm.model.text_model.layers.0.mlp.gate_proj.weight")[0]
    known["vision_width"] = shape(p + "vlm.model.vision_model.embeddings.patch_embedding.weight")[0]
    known["patch"] = shape(p + "vlm.model.vision_model.embeddings.patch_embedding.weight")[-1]
    known["vision_mlp"] = shape(p + "vlm.model.vision_model.encoder.layers.0.mlp.fc1.weight")[0]
    known["vision_layers"] = count(p + "vlm.model.vision_model.encoder.layers.")
    n_pos = shape(p + "vlm.model.vision_model.embeddings.position_embedding.weight")[0]
    known["image_size"] = int(round(math.sqrt(n_pos))) * known["patch"]
    layers = count(p + "vlm.model.text_model.layers.")
    expert_width = shape("model.action_in_proj.weight")[0]
    state_dim = shape("model.state_proj.weight")[1]
    action_dim = shape("model.action_in_proj.weight")[1]
    size = config.get("resize_imgs_with_padding") or [known["image_size"]] * 2
    if list(size) != [known["image_size"]] * 2:
        raise CheckpointError(f"config.json resize_imgs_with_padding {size} differs from the vision tower's {known['image_size']}² input")
    return SmolVlaShapes(**known, layers=layers, expert_width=expert_width, expert_layers=count(p + "lm_expert.layers."),
                         expert_mlp=shape(p + "lm_expert.layers.0.mlp.gate_proj.weight")[0],
                         self_attn_every_n_layers=int(config.get("self_attn_every_n_layers", 2)),
                         max_state_dim=state_dim, max_action_dim=action_dim, chunk_size=int(config["chunk_size"]),
                         num_steps=int(config.get("num_steps", 10)), min_period=float(config.get("min_period", 4e-3)),
                         max_period=float(config.get("max_period", 4.0)),
                         tokenizer_max_length=int(config.get("tokenizer_max_length", 48)))


# ---------------------------------------------------------------------------------------------------------------
# safetensors without the safetensors package (the format: u64 little-endian header size, JSON header, raw bytes)

_DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "F64": torch.float64, "I64": torch.int64,
           "I32": torch.int32, "BOOL": torch.bool, "U8": torch.uint8}


def read_safetensors(path: str) -> dict[str, torch.Tensor]:
    """All tensors of a .safetensors file (copies; the file is read once)."""
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) != 8:
            raise CheckpointError(f"{path} is not a safetensors file (shorter than 8 bytes)")
        (n,) = struct.unpack("<Q", head)
        if n > 100_000_000:
            raise CheckpointError(f"{path}: header of {n} bytes — not a safetensors file")
        header = json.loads(f.read(n))
        # Mapped copy-on-write, not read: a 450M-parameter checkpoint is not held twice while tensors are cloned out.
        size = os.fstat(f.fileno()).st_size
        data = memoryview(mmap.mmap(f.fileno(), size, access=mmap.ACCESS_COPY))[8 + n:] if size > 8 + n else bytearray()
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        if meta["dtype"] not in _DTYPES:
            raise CheckpointError(f"{path}: tensor {name} has dtype {meta['dtype']}, not one of {', '.join(_DTYPES)}")
        b, e = meta["data_offsets"]
        if not 0 <= b <= e <= len(data):
            raise CheckpointError(f"{path}: tensor {name} lies outside the file (offsets {b}..{e} of {len(data)})")
        t = torch.frombuffer(data, dtype=_DTYPES[meta["dtype"]], count=(e - b) // _DTYPES[meta["dtype"]].itemsize, offset=b) if e > b \
            else torch.empty(0, dtype=_DTYPES[meta["dtype"]])
        out[name] = t.reshape(meta["shape"]).clone()
    return out


def write_safetensors(path: str, tensors: dict[str, torch.Tensor], metadata: dict | None = None) -> None:
    """Writes tensors as safetensors (what safetensors.torch.save_file writes; 8-byte aligned header)."""
    rev = {v: k for k, v in _DTYPES.items()}
    header, off = {}, 0
    names = sorted(tensors)
    for name in names:
        t = tensors[name]
        nbytes = t.numel() * t.element_size()
        header[name] = {"dtype": rev[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + nbytes]}
        off += nbytes
    if metadata:
        header["__metadata__"] = metadata
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for name in names:  # one tensor's bytes at a time
            t = tensors[name].detach().contiguous().cpu()
            if t.numel():
                f.write(t.reshape(-1).view(torch.uint8).numpy().tobytes())


# ---------------------------------------------------------------------------------------------------------------
# The network, LeRobot's parameter names


class RMSNorm(nn.Module):
    """LlamaRMSNorm: x / sqrt(mean(x²) + eps) · weight, in float32."""

    def __init__(self, d: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        h = _f32(x)
        return self.weight * _as(h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps), x.dtype)


class LlamaAttention(nn.Module):
    def __init__(self, d: int, s: SmolVlaShapes, kv_in: int | None = None):
        super().__init__()
        self.head_dim = s.head_dim
        self.q_proj = nn.Linear(d, s.heads * s.head_dim, bias=False)
        self.k_proj = nn.Linear(kv_in or d, s.kv_heads * s.head_dim, bias=False)
        self.v_proj = nn.Linear(kv_in or d, s.kv_heads * s.head_dim, bias=False)
        self.o_proj = nn.Linear(s.heads * s.head_dim, d, bias=False)


class LlamaMLP(nn.Module):
    def __init__(self, d: int, hidden: int):
        super().__init__()
        self.gate_proj = nn.Linear(d, hidden, bias=False)
        self.up_proj = nn.Linear(d, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, d, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaLayer(nn.Module):
    def __init__(self, d: int, mlp: int, s: SmolVlaShapes, kv_in: int | None = None):
        super().__init__()
        self.self_attn = LlamaAttention(d, s, kv_in)
        self.mlp = LlamaMLP(d, mlp)
        self.input_layernorm = RMSNorm(d, s.rms_eps)
        self.post_attention_layernorm = RMSNorm(d, s.rms_eps)


class TextModel(nn.Module):
    def __init__(self, s: SmolVlaShapes):
        super().__init__()
        self.embed_tokens = nn.Embedding(s.vocab_size, s.width)
        self.layers = nn.ModuleList(LlamaLayer(s.width, s.mlp, s) for _ in range(s.layers))
        self.norm = RMSNorm(s.width, s.rms_eps)


class Expert(nn.Module):
    def __init__(self, s: SmolVlaShapes):
        super().__init__()
        cross = [s.self_attn_every_n_layers > 0 and i % s.self_attn_every_n_layers != 0 for i in range(s.expert_layers)]
        self.layers = nn.ModuleList(LlamaLayer(s.expert_width, s.expert_mlp, s, s.kv_heads * s.head_dim if c else None)
                                    for c in cross)
        self.norm = RMSNorm(s.expert_width, s.rms_eps)


class VisionAttention(nn.Module):
    def __init__(self, s: SmolVlaShapes):
        super().__init__()
        d = s.vision_width
        self.heads = s.vision_heads
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(d, d) for _ in range(4))

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = (p(x).view(B, T, self.heads, -1).transpose(1, 2) for p in (self.q_proj, self.k_proj, self.v_proj))
        att = torch.softmax((q @ k.transpose(-1, -2)) * (q.shape[-1] ** -0.5), dim=-1)
        return self.out_proj((att @ v).transpose(1, 2).reshape(B, T, D))


class VisionMLP(nn.Module):
    def __init__(self, s: SmolVlaShapes):
        super().__init__()
        self.fc1 = nn.Linear(s.vision_width, s.vision_mlp)
        self.fc2 = nn.Linear(s.vision_mlp, s.vision_width)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x), approximate="tanh"))


class VisionLayer(nn.Module):
    def __init__(self, s: SmolVlaShapes):
        super().__init__()
        self.layer_norm1 = nn.LayerNorm(s.vision_width, eps=s.vision_eps)
        self.self_attn = VisionAttention(s)
        self.layer_norm2 = nn.LayerNorm(s.vision_width, eps=s.vision_eps)
        self.mlp = VisionMLP(s)

    def forward(self, x):
        x = x + self.self_attn(self.layer_norm1(x))
        return x + self.mlp(self.layer_norm2(x))


class VisionEmbeddings(nn.Module):
    def __init__(self, s: SmolVlaShapes):
        super().__init__()
        self.patch_embedding = nn.Conv2d(3, s.vision_width, s.patch, stride=s.patch)
        self.position_embedding = nn.Embedding((s.image_size // s.patch) ** 2, s.vision_width)

        # SmolVLM's position ids for a full patch mask, computed as transformers does (fractional coordinates
        # bucketised against float32 boundaries: patch i of a row gets position max(i - 1, 0) there, not i).
        n = s.image_size // s.patch
        boundaries = torch.arange(1 / n, 1.0, 1 / n)
        frac = torch.arange(n, dtype=torch.float32) / n * (1 - 1e-6)
        b = torch.bucketize(frac, boundaries, right=True)
        self.register_buffer("position_ids", (b[:, None] * n + b[None, :]).flatten(), persistent=False)

    def forward(self, img):
        x = self.patch_embedding(img).flatten(2).transpose(1, 2)  # (B, N, D)
        return x + self.position_embedding.weight[self.position_ids][None]


class VisionEncoder(nn.Module):
    def __init__(self, s: SmolVlaShapes):
        super().__init__()
        self.layers = nn.ModuleList(VisionLayer(s) for _ in range(s.vision_layers))


class VisionModel(nn.Module):
    def __init__(self, s: SmolVlaShapes):
        super().__init__()
        self.embeddings = VisionEmbeddings(s)
        self.encoder = VisionEncoder(s)
        self.post_layernorm = nn.LayerNorm(s.vision_width, eps=s.vision_eps)

    def forward(self, img):
        x = self.embeddings(img)
        for layer in self.encoder.layers:
            x = layer(x)
        return self.post_layernorm(x)


class SimpleMLP(nn.Module):
    def __init__(self, s: SmolVlaShapes):
        super().__init__()
        self.proj = nn.Linear(s.vision_width * s.scale_factor ** 2, s.width, bias=False)


class Connector(nn.Module):
    """SmolVLM's connector: pixel shuffle (tokens / r², width · r²) then a linear map to the text width."""

    def __init__(self, s: SmolVlaShapes):
        super().__init__()
        self.r = s.scale_factor
        self.modality_projection = SimpleMLP(s)

    def forward(self, x):
        B, N, D = x.shape
        r = self.r
        h = w = int(math.isqrt(N))
        x = x.reshape(B, h, w // r, D * r).permute(0, 2, 1, 3).reshape(B, w // r, h // r, D * r * r)
        x = x.permute(0, 2, 1, 3).reshape(B, N // (r * r), D * r * r)
        return self.modality_projection.proj(x)


class VlmInner(nn.Module):
    def __init__(self, s: SmolVlaShapes):
        super().__init__()
        self.vision_model = VisionModel(s)
        self.connector = Connector(s)
        self.text_model = TextModel(s)


class Vlm(nn.Module):
    def __init__(self, s: SmolVlaShapes, lm_head: bool = True):
        super().__init__()
        self.model = VlmInner(s)
        # Never used for actions; kept so a LeRobot state dict loads strictly.
        self.lm_head = nn.Linear(s.width, s.vocab_size, bias=False) if lm_head else None


class VlmWithExpert(nn.Module):
    def __init__(self, s: SmolVlaShapes, lm_head: bool = True):
        super().__init__()
        self.vlm = Vlm(s, lm_head)
        self.lm_expert = Expert(s)


def _f32(x: torch.Tensor) -> torch.Tensor:
    """x in float32 (no Cast node in the exported graph when it already is)."""
    return x if x.dtype == torch.float32 else x.float()


def _as(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    return x if x.dtype == dtype else x.to(dtype)


def apply_rope(x: torch.Tensor, positions: torch.Tensor, max_wavelength: float = 10_000) -> torch.Tensor:
    """LeRobot's apply_rope: x (B, L, H, D), positions (B, L)."""
    d_half = x.shape[-1] // 2
    freq_exponents = (2.0 / x.shape[-1]) * torch.arange(d_half, dtype=torch.float32, device=x.device)
    timescale = max_wavelength ** freq_exponents
    radians = positions[..., None].to(torch.float32) / timescale[None, None, :]
    radians = radians[..., None, :]
    sin, cos = torch.sin(radians), torch.cos(radians)
    x1, x2 = _f32(x).split(d_half, dim=-1)
    return _as(torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1), x.dtype)


def attention(mask: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, heads: int) -> torch.Tensor:
    """LeRobot's eager_attention_forward: q (B, T, H, dh), k/v (B, S, Hkv, dh), bool mask (B, T, S) -> (B, T, H·dh)."""
    B, T, _, dh = q.shape
    S, hkv = k.shape[1], k.shape[2]
    g = heads // hkv
    k = k[:, :, :, None, :].expand(B, S, hkv, g, dh).reshape(B, S, heads, dh)
    v = v[:, :, :, None, :].expand(B, S, hkv, g, dh).reshape(B, S, heads, dh)
    att = torch.matmul(_f32(q).transpose(1, 2), _f32(k).transpose(1, 2).transpose(2, 3)) * dh ** -0.5
    att = torch.where(mask[:, None, :, :], att, torch.finfo(torch.float32).min)
    probs = _as(torch.softmax(att, dim=-1), v.dtype)
    out = torch.matmul(probs, v.permute(0, 2, 1, 3)).permute(0, 2, 1, 3)
    return out.reshape(B, T, heads * dh)


def make_att_2d_masks(pad_masks: torch.Tensor, att_masks: torch.Tensor) -> torch.Tensor:
    cumsum = torch.cumsum(att_masks.to(torch.int64), dim=1)
    return (cumsum[:, None, :] <= cumsum[:, :, None]) & (pad_masks[:, None, :] & pad_masks[:, :, None])


def sinusoidal_time(t: torch.Tensor, dim: int, min_period: float, max_period: float) -> torch.Tensor:
    """LeRobot's create_sinusoidal_pos_embedding, in float64 as on CPU, returned as float32 (B, dim)."""
    fraction = torch.linspace(0.0, 1.0, dim // 2, dtype=torch.float64, device=t.device)
    period = min_period * (max_period / min_period) ** fraction
    ang = (1.0 / period * 2 * math.pi)[None, :] * t.to(torch.float64)[:, None]
    return torch.cat([torch.sin(ang), torch.cos(ang)], 1).to(torch.float32)


def _layer_step(layer: LlamaLayer, h: torch.Tensor, att_out: torch.Tensor) -> torch.Tensor:
    h = layer.self_attn.o_proj(att_out) + h
    return layer.mlp(layer.post_attention_layernorm(h)) + h


class SmolVla(nn.Module):
    """LeRobot's SmolVLAPolicy weights under the same names (`model.…`); prefix() and denoise_step() are what the ONNX
    graphs compute, sample() is LeRobot's sample_actions."""

    def __init__(self, s: SmolVlaShapes, lm_head: bool = True):
        super().__init__()
        self.shapes = s
        self.model = nn.Module()
        self.model.vlm_with_expert = VlmWithExpert(s, lm_head)
        self.model.state_proj = nn.Linear(s.max_state_dim, s.width)
        self.model.action_in_proj = nn.Linear(s.max_action_dim, s.expert_width)
        self.model.action_out_proj = nn.Linear(s.expert_width, s.max_action_dim)
        self.model.action_time_mlp_in = nn.Linear(2 * s.expert_width, s.expert_width)
        self.model.action_time_mlp_out = nn.Linear(s.expert_width, s.expert_width)

    def _is_cross(self, i: int) -> bool:
        n = self.shapes.self_attn_every_n_layers
        return n > 0 and i % n != 0

    def _expert_layer(self, i: int) -> LlamaLayer | None:
        s = self.shapes
        multiple_of = s.layers // s.expert_layers
        if multiple_of > 0 and i > 0 and i % multiple_of != 0:
            return None
        return self.model.vlm_with_expert.lm_expert.layers[i // multiple_of if multiple_of > 0 else i]

    def embed_prefix(self, images: list[torch.Tensor], img_masks: list[torch.Tensor], tokens: torch.Tensor,
                     lang_masks: torch.Tensor, state: torch.Tensor):
        """images: each (B, 3, S, S) in [-1, 1]; img_masks: each bool (B,); tokens/lang_masks (B, L); state (B, 32)."""
        vlm = self.model.vlm_with_expert.vlm.model
        embs, pads, att = [], [], []
        for img, m in zip(images, img_masks):
            e = vlm.connector(vlm.vision_model(img))
            e = e * torch.tensor(e.shape[-1] ** 0.5, dtype=e.dtype)
            embs.append(e)
            pads.append(m[:, None].expand(e.shape[0], e.shape[1]))
            att += [0] * e.shape[1]
        lang = vlm.text_model.embed_tokens(tokens)
        embs.append(lang * math.sqrt(lang.shape[-1]))
        pads.append(lang_masks.bool())
        att += [0] * lang.shape[1]
        st = self.model.state_proj(state)[:, None, :]
        embs.append(st)
        pads.append(torch.ones(st.shape[0], 1, dtype=torch.bool, device=st.device))
        att += [1]
        pad = torch.cat(pads, 1)
        att_t = torch.tensor(att, dtype=torch.bool, device=pad.device)[None, :].expand(pad.shape[0], -1)
        return torch.cat(embs, 1), pad, att_t

    def prefix(self, images, img_masks, tokens, lang_masks, state):
        """The KV cache: per layer keys (RoPE applied) and values (B, P, Hkv, dh), and the prefix pad mask (B, P)."""
        s = self.shapes
        x, pad, att = self.embed_prefix(images, img_masks, tokens, lang_masks, state)
        mask = make_att_2d_masks(pad, att)
        pos = torch.cumsum(pad.to(torch.int64), dim=1) - 1
        keys, values = [], []
        for layer in self.model.vlm_with_expert.vlm.model.text_model.layers:
            h = layer.input_layernorm(x)
            shp = (*h.shape[:-1], -1, s.head_dim)
            q = apply_rope(layer.self_attn.q_proj(h).view(shp), pos)
            k = apply_rope(layer.self_attn.k_proj(h).view(shp), pos)
            v = layer.self_attn.v_proj(h).view(shp)
            keys.append(k)
            values.append(v)
            x = _layer_step(layer, x, attention(mask, q, k, v, s.heads))
        return keys, values, pad

    def embed_suffix(self, x_t: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        m = self.model
        a = m.action_in_proj(x_t)
        te = sinusoidal_time(t, self.shapes.expert_width, self.shapes.min_period, self.shapes.max_period).to(a.dtype)
        h = m.action_time_mlp_in(torch.cat([a, te[:, None, :].expand_as(a)], 2))
        return m.action_time_mlp_out(F.silu(h))

    def denoise_step(self, x_t, t, keys, values, prefix_pad):
        """One velocity (B, chunk, 32) from the cached prefix keys/values (LeRobot's denoise_step)."""
        s = self.shapes
        h = self.embed_suffix(x_t, t)
        B, T = h.shape[:2]
        P = prefix_pad.shape[1]
        suffix_mask = torch.ones(B, T, dtype=torch.bool, device=h.device)
        full = torch.cat([prefix_pad[:, None, :].expand(B, T, P), make_att_2d_masks(suffix_mask, suffix_mask)], 2)
        pos = prefix_pad.to(torch.int64).sum(-1, keepdim=True) + torch.cumsum(suffix_mask.to(torch.int64), 1) - 1
        for i in range(s.layers):
            layer = self._expert_layer(i)
            if layer is None:
                continue
            hn = layer.input_layernorm(h)
            shp = (*hn.shape[:-1], -1, s.head_dim)
            q = layer.self_attn.q_proj(hn).view(shp)
            if self._is_cross(i):
                q = apply_rope(q, pos - pos.min(dim=1, keepdim=True).values)
                kc, vc = keys[i], values[i]
                k = layer.self_attn.k_proj(kc.reshape(*kc.shape[:2], -1)).view(*kc.shape[:2], -1, s.head_dim)
                v = layer.self_attn.v_proj(vc.reshape(*vc.shape[:2], -1)).view(*vc.shape[:2], -1, s.head_dim)
                out = attention(full[:, :, :P], q, k, v, s.heads)
            else:
                q = apply_rope(q, pos)
                k = apply_rope(layer.self_attn.k_proj(hn).view(shp), pos)
                v = layer.self_attn.v_proj(hn).view(shp)
                out = attention(full, q, torch.cat([keys[i], k], 1), torch.cat([values[i], v], 1), s.heads)
            h = _layer_step(layer, h, out)
        h = self.model.vlm_with_expert.lm_expert.norm(h)
        return self.model.action_out_proj(_f32(h[:, -s.chunk_size:]))

    @torch.no_grad()
    def sample(self, images, img_masks, tokens, lang_masks, state, noise):
        keys, values, pad = self.prefix(images, img_masks, tokens, lang_masks, state)
        n = self.shapes.num_steps
        dt = -1.0 / n
        x = noise
        for i in range(n):
            t = torch.full((x.shape[0],), 1.0 + i * dt, dtype=torch.float32)
            x = x + dt * self.denoise_step(x, t, keys, values, pad)
        return x


def resize_with_pad(img: torch.Tensor, width: int, height: int, pad_value: float = 0.0) -> torch.Tensor:
    """LeRobot's resize_with_pad: (B, C, h, w) in [0, 1] -> aspect-preserving bilinear resize (align_corners=False,
    no antialias), padded on the left and top to (height, width)."""
    cur_h, cur_w = img.shape[2:]
    ratio = max(cur_w / width, cur_h / height)
    rh, rw = int(cur_h / ratio), int(cur_w / ratio)
    out = F.interpolate(img, size=(rh, rw), mode="bilinear", align_corners=False)
    return F.pad(out, (max(0, width - rw), 0, max(0, height - rh), 0), value=pad_value)


def save_random_checkpoint(out_dir: str, shapes: SmolVlaShapes, state_dim: int, action_dim: int, cameras: list[str],
                           seed: int = 0, source_hw: tuple[int, int] | dict = (480, 640), vlm_name: str | None = None,
                           empty_cameras: int = 0) -> SmolVla:
    """A randomly initialised SmolVLA with these shapes, saved as LeRobot saves a checkpoint: config.json,
    model.safetensors (weights under LeRobot's names) and the normaliser's stats file."""
    torch.manual_seed(seed)
    model = SmolVla(shapes)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("weight") and p.dim() >= 2:
                nn.init.normal_(p, std=0.02)
            elif "norm" in name and name.endswith("weight"):
                p.uniform_(0.8, 1.2)
            else:
                nn.init.normal_(p, std=0.02)
    os.makedirs(out_dir, exist_ok=True)
    cfg = lerobot_config(shapes, state_dim, action_dim, cameras, source_hw, empty_cameras=empty_cameras,
                         **({"vlm": vlm_name} if vlm_name else {}))
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    write_safetensors(os.path.join(out_dir, "model.safetensors"), model.state_dict(), {"format": "pt"})
    if vlm_name is None and any(getattr(shapes, k) != v for k, v in KNOWN_VLMS[cfg["vlm_model_name"]].items()):
        # Not SmolVLM2-500M's shapes: the VLM's config.json (as the Hub would serve it) goes beside the checkpoint.
        with open(os.path.join(out_dir, "vlm_config.json"), "w") as f:
            json.dump(vlm_config(shapes), f, indent=2)
    g = torch.Generator().manual_seed(seed + 1)
    stats = {"observation.state.mean": torch.randn(state_dim, generator=g) * 0.3,
             "observation.state.std": torch.rand(state_dim, generator=g) + 0.5,
             "action.mean": torch.randn(action_dim, generator=g) * 0.3,
             "action.std": torch.rand(action_dim, generator=g) + 0.5}
    write_safetensors(os.path.join(out_dir, "policy_preprocessor_step_5_normalizer_processor.safetensors"), stats)
    return model


def vlm_config(s: SmolVlaShapes) -> dict:
    """The fields of a SmolVLM config.json (transformers' SmolVLMConfig) that the shapes come from."""
    return {"model_type": "smolvlm", "scale_factor": s.scale_factor,
            "text_config": {"model_type": "llama", "hidden_size": s.width, "intermediate_size": s.mlp,
                            "num_attention_heads": s.heads, "num_key_value_heads": s.kv_heads, "head_dim": s.head_dim,
                            "vocab_size": s.vocab_size, "rms_norm_eps": s.rms_eps, "num_hidden_layers": s.layers},
            "vision_config": {"hidden_size": s.vision_width, "intermediate_size": s.vision_mlp,
                              "num_hidden_layers": s.vision_layers, "num_attention_heads": s.vision_heads,
                              "image_size": s.image_size, "patch_size": s.patch}}


def default_shapes() -> SmolVlaShapes:
    return SmolVlaShapes()


def tiny_shapes(**over) -> SmolVlaShapes:
    """SmolVLA's structure at test size: 2 vision layers, 4 text/expert layers, narrow widths, 64² images."""
    s = dict(image_size=64, patch=8, vision_width=32, vision_layers=2, vision_heads=2, vision_mlp=64, scale_factor=2,
             width=48, layers=4, heads=3, kv_heads=1, head_dim=16, mlp=96, vocab_size=300, expert_width=36,
             expert_layers=4, expert_mlp=expert_intermediate_size(36), max_state_dim=8, max_action_dim=8,
             chunk_size=6, num_steps=4, tokenizer_max_length=12)
    s.update(over)
    return SmolVlaShapes(**s)


__all__ = ["SmolVla", "SmolVlaShapes", "CheckpointError", "read_safetensors", "write_safetensors", "resize_with_pad",
           "save_random_checkpoint", "shapes_from_checkpoint", "lerobot_config", "tiny_shapes", "vlm_config"]
