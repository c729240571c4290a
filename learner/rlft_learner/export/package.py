"""Write a policy package (docs/contracts.md): sampler.onnx, denoiser.onnx, policy.json, test_vectors.json, model.pt."""

from __future__ import annotations

import datetime as dt
import hashlib
import inspect
import json
import os
import subprocess
from dataclasses import dataclass

import numpy as np
import onnx
import torch

from .. import __version__
from ..data import Normalizer
from ..algorithms.bc.diffusion import POSITIVE, DDIMSampler, ModelConfig, NoisePredictionNet, PixelSampler, cfg_combine
from ..finite import require_finite
from ..vision import CameraEncoders

OPSET = 17  # supported by torch 1.13 and 2.x exporters and by onnxruntime-node


@dataclass
class PackageMeta:
    """What policy.json says about where the policy came from and what it controls."""

    task: str
    obs_names: list[str]
    action_names: list[str]
    episodes: int
    execute_steps: int = 8
    steps: int = 10  # DDIM steps
    train_timesteps: int = 100
    version_prefix: str = "bc"
    # RECAP (docs/algorithms.md §3): policy.json's `advantage` block minus what export fills in (input, values,
    # cfg_beta, value). None for a plain policy. Needs a network with an indicator input.
    advantage: dict | None = None
    cfg_beta: float = 1.0


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5,
                             cwd=os.path.dirname(os.path.abspath(__file__)))
        return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def onnx_export(module: torch.nn.Module, args: tuple, path: str, inputs: list[str], outputs: list[str],
                dynamic_batch: bool = True) -> None:
    """Export `module` with the classic tracing exporter and check the file.

    dynamo=False on torch 2.x: the dynamo exporter needs onnxscript and is the default from 2.9 on; the tracing
    exporter is what torch 1.13 (Debian) has too, so both give the same graphs."""
    axes = {name: {0: "batch"} for name in inputs + outputs} if dynamic_batch else None
    kwargs = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    torch.onnx.export(module, args, path, input_names=inputs, output_names=outputs, dynamic_axes=axes,
                      opset_version=OPSET, do_constant_folding=True, **kwargs)
    onnx.checker.check_model(onnx.load(path), full_check=True)


def _export(module: torch.nn.Module, args: tuple, path: str, inputs: list[str], output: str) -> None:
    onnx_export(module, args, path, inputs, [output])


def image_inputs(encoders: CameraEncoders) -> list[dict]:
    """policy.json observation.images: one entry per camera, in the sampler's input order (LeRobot's feature key,
    the ONNX input, what the robot must feed, and how the graph preprocesses it)."""
    return [{"camera": c, "key": f"observation.images.{c}", "input": f"image.{c}", "height": e.height, "width": e.width,
             "encoding": "rgb8", "dtype": "uint8", "layout": "HWC", "history": 1,
             "preprocessing": "scaled to [-1, 1] inside the graph (x * 2/255 - 1); no resize, no crop"}
            for c, e in zip(encoders.cameras, encoders.cfgs)]


def export_package(net: NoisePredictionNet, alphas_cumprod: np.ndarray, timesteps: list[int], norm: Normalizer,
                   meta: PackageMeta, out_dir: str, vectors: int = 3, seed: int = 0, value_net: torch.nn.Module | None = None,
                   encoders: CameraEncoders | None = None) -> str:
    """Export `net` (eval mode, on CPU) and its sampler into `out_dir`; returns the path of policy.json.

    With `encoders` (a policy that sees cameras): sampler.onnx takes one uint8 (B, H, W, 3) `image.<camera>` input per
    camera after `obs` and runs the encoders inside the graph; encoder.onnx (images -> features) is exported too, and
    denoiser.onnx's `obs` is then [normalised state history, features] (what a TS-side DDIM loop feeds it after one
    encoder call); policy.json's observation.images says so.

    An indicator network (RECAP) gets an `indicator` int64 [B] input on both graphs and `meta.advantage` goes to
    policy.json; `meta.cfg_beta` != 1 bakes classifier-free guidance into sampler.onnx (two passes per step) and is
    declared there for the TS sampler. `value_net` (recap_value.ValueNet) is exported as value.onnx."""
    require_finite(f"policy package {out_dir}", net=net, **({"value_net": value_net} if value_net is not None else {}),
                   **({"encoders": encoders} if encoders is not None else {}))
    cfg: ModelConfig = net.cfg
    conditioned = bool(cfg.indicator)
    if conditioned != (meta.advantage is not None):
        raise ValueError("an indicator network needs meta.advantage, and meta.advantage needs an indicator network")
    os.makedirs(out_dir, exist_ok=True)
    net = net.to("cpu").eval()
    sampler = DDIMSampler(net, alphas_cumprod, timesteps, cfg_beta=meta.cfg_beta).eval()
    gen = torch.Generator().manual_seed(seed)
    cams: list[str] = []
    images: list[torch.Tensor] = []
    if encoders is not None:
        encoders = encoders.to("cpu").eval()
        cams = list(encoders.cameras)
        state_width = cfg.history * cfg.obs_dim - encoders.out_dim  # the noise net's obs = [state history, features]
        images = [torch.randint(0, 256, (vectors, e.height, e.width, 3), generator=gen, dtype=torch.uint8) for e in encoders.cfgs]
    obs_width = cfg.history * cfg.obs_dim if encoders is None else state_width
    obs = torch.randn(vectors, obs_width, generator=gen)  # (V, obs_width), normalised obs are ~N(0, 1)
    noise = torch.randn(vectors, cfg.horizon, cfg.action_dim, generator=gen)  # (V, H, A)
    t = torch.tensor([timesteps[0]] * vectors, dtype=torch.int64)  # (V,)
    indicator = torch.tensor([(POSITIVE, 0, 2)[i % 3] for i in range(vectors)], dtype=torch.int64)  # (V,) every value
    ind_in = ["indicator"] if conditioned else []
    ind_arg = (indicator,) if conditioned else ()
    vec: dict = {}
    img_in = [f"image.{c}" for c in cams]
    with torch.no_grad():
        if encoders is None:
            _export(sampler, (obs, noise, *ind_arg), os.path.join(out_dir, "sampler.onnx"), ["obs", "noise", *ind_in], "action")
            action = sampler(obs, noise, *ind_arg)  # (V, H, A), eager PyTorch reference for the TS equivalence test
            cond = obs
        else:
            pix = PixelSampler(encoders, sampler).eval()
            _export(pix, (obs, *images, noise, *ind_arg), os.path.join(out_dir, "sampler.onnx"), ["obs", *img_in, "noise", *ind_in], "action")
            _export(encoders, tuple(images), os.path.join(out_dir, "encoder.onnx"), img_in, "features")
            action = pix(obs, *images, noise, *ind_arg)  # (V, H, A)
            cond = torch.cat([obs, encoders(*images)], dim=-1)  # (V, cond_dim)
        _export(net, (cond, noise, t, *ind_arg), os.path.join(out_dir, "denoiser.onnx"), ["obs", "x", "t", *ind_in], "eps")
        vec = {"obs": obs.tolist(), "noise": noise.tolist(), "action": action.tolist()}
        if encoders is not None:
            vec["images"] = {c: img.tolist() for c, img in zip(cams, images)}
            vec["features"] = encoders(*images).tolist()
        if conditioned:
            eps_c = net(cond, noise, t, indicator)  # (V, H, A)
            eps_u = net(cond, noise, t, torch.full_like(indicator, 2))
            vec.update(indicator=indicator.tolist(), cfg={"beta": meta.cfg_beta, "t": int(timesteps[0]), "eps_cond": eps_c.tolist(),
                                                          "eps_uncond": eps_u.tolist(), "eps": cfg_combine(eps_c, eps_u, meta.cfg_beta).tolist()})
        if value_net is not None:
            value_net = value_net.to("cpu").eval()
            v_cams = list(getattr(getattr(value_net, "encoders", None), "cameras", []))  # recap.value.ValueOverImages
            if v_cams:
                vobs = torch.randn(vectors, value_net.obs_dim, generator=gen)  # (V, state_dim)
                v_imgs = [torch.randint(0, 256, (vectors, e.height, e.width, 3), generator=gen, dtype=torch.uint8)
                          for e in value_net.encoders.cfgs]
            else:
                vobs, v_imgs = torch.randn(vectors, cfg.obs_dim, generator=gen), []  # (V, obs_dim)
            onnx_export(value_net, (vobs, *v_imgs), os.path.join(out_dir, "value.onnx"), ["obs", *[f"image.{c}" for c in v_cams]],
                        ["value", "probs"])
            value, probs = value_net(vobs, *v_imgs)
            vec["value"] = {"obs": vobs.tolist(), "value": value.tolist(), "probs": probs.tolist(),
                            **({"images": {c: img.tolist() for c, img in zip(v_cams, v_imgs)}} if v_cams else {})}
    with open(os.path.join(out_dir, "test_vectors.json"), "w") as f:
        json.dump(vec, f)
    # Tensors, ints and strings only: torch 1.13's weights_only unpickler rejects Python floats.
    checkpoint = {"state_dict": net.state_dict(), "config": cfg.to_dict(), "alphas_cumprod": torch.from_numpy(np.asarray(alphas_cumprod, np.float32)),
                  "timesteps": [int(t) for t in timesteps]}
    if encoders is not None:
        checkpoint.update(encoders_state_dict=encoders.state_dict(), **encoders.spec())
    torch.save(checkpoint, os.path.join(out_dir, "model.pt"))

    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    files = ["sampler.onnx", "denoiser.onnx", "test_vectors.json", "model.pt"]
    file_map = {"sampler": "sampler.onnx", "denoiser": "denoiser.onnx"}
    if encoders is not None:
        files.append("encoder.onnx")
        file_map["encoder"] = "encoder.onnx"
    if value_net is not None:
        torch.save({"state_dict": value_net.state_dict(), "config": value_net.cfg_dict()}, os.path.join(out_dir, "value.pt"))
        files += ["value.onnx", "value.pt"]
        file_map["value"] = "value.onnx"
    policy = {
        "format": "rlft-policy", "format_version": 1, "kind": "diffusion",
        "version": f"{meta.version_prefix}-{meta.task}-{now.strftime('%Y%m%dT%H%M%SZ')}-{os.urandom(3).hex()}",  # suffix: unique within a second
        "created": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "provenance": {"learner": f"rlft_learner {__version__}", "torch": torch.__version__, "task": meta.task,
                       "episodes": meta.episodes, "git": _git_commit()},
        "observation": {"names": list(meta.obs_names), "history": cfg.history if encoders is None else obs_width // len(meta.obs_names),
                        "mean": [float(x) for x in norm.obs_mean], "std": [float(x) for x in norm.obs_std],
                        **({"images": image_inputs(encoders)} if encoders is not None else {})},
        "action": {"names": list(meta.action_names), "horizon": cfg.horizon, "execute_steps": meta.execute_steps,
                   "min": [float(x) for x in norm.act_min], "max": [float(x) for x in norm.act_max]},
        "sampler": {"type": "ddim", "train_timesteps": meta.train_timesteps, "steps": len(timesteps), "eta": 0,
                    "alphas_cumprod": [float(a) for a in alphas_cumprod], "timesteps": [int(t) for t in timesteps]},
        "files": file_map,
        "sha256": {name: sha256_file(os.path.join(out_dir, name)) for name in files},
    }
    if conditioned:
        policy["advantage"] = {"encoding": "index", "input": "indicator", "values": {"negative": 0, "positive": 1, "unconditioned": 2},
                               "condition": "positive", "cfg_beta": float(meta.cfg_beta), **meta.advantage}
    path = os.path.join(out_dir, "policy.json")
    with open(path, "w") as f:
        json.dump(policy, f, indent=2)
    return path




class _CriticBatchFirst(torch.nn.Module):
    """A critic ensemble's (E, B) output as (B, E), so ONNX's dynamic axis is the batch, first like every input."""

    def __init__(self, critic: torch.nn.Module):
        super().__init__()
        self.critic = critic

    def forward(self, obs: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        # CriticEnsemble.forward, written with a broadcasting matmul instead of expand + baddbmm (whose dynamic batch
        # the tracing exporter cannot express); same weights, same result (test_critic_export_matches_the_ensemble).
        c = self.critic
        if getattr(c, "features", None) is not None:
            obs = c.features(obs)  # residual_nets.ObsFeatures
        x = torch.cat([obs, action], dim=-1).unsqueeze(0)  # (1, B, in)
        for i, (w, b) in enumerate(zip(c.weights, c.biases)):
            x = torch.matmul(x, w) + b  # (E, B, out)
            if i < len(c.ln_gain):
                mu = x.mean(dim=-1, keepdim=True)
                var = ((x - mu) ** 2).mean(dim=-1, keepdim=True)
                x = torch.relu((x - mu) / torch.sqrt(var + 1e-5) * c.ln_gain[i] + c.ln_bias[i])  # F.layer_norm, eps 1e-5
        return x.squeeze(-1).transpose(0, 1)  # (B, E)


def export_residual_package(actor: torch.nn.Module, base, parent: str, updates: int, exploration_std: float,
                            provenance: dict | None = None, vectors: int = 4, seed: int = 0,
                            version_prefix: str = "res", critic: torch.nn.Module | None = None,
                            chunk_critic: tuple[torch.nn.Module, int] | None = None,
                            exploration_uniform: float = 0.0, exploration_rho: float = 0.0,
                            frames: dict[str, np.ndarray] | None = None) -> tuple[str, dict]:
    """Write a residual package (docs/protocol.md): residual.onnx (obs, base_action -> residual), policy.json with the
    base version and base policy.json sha256, model.pt, test_vectors.json. `base` is a residual_td3.BasePackage.
    With `critic` (the Q ensemble), also critic.onnx (obs, action -> q (B, E)): robots use it to rank base samples
    (actor.best_of, critic-ranked best-of-N). With `chunk_critic` (the chunk ensemble and its K), also
    chunk_critic.onnx (obs, chunk (B, K*A) -> q (B, E)) for best_of_select chunk_critic (chunk_critic.py).
    `exploration_uniform` > 0 (the env warm-up package): robots in training mode add U(-u, u) noise instead of the
    Gaussian. `exploration_rho` > 0: the Gaussian noise is AR(1)-correlated across control steps (same std).
    An `actor` that sees cameras (algorithms/pixels/nets.py PixelResidualExport) makes residual.onnx take one uint8 (B, H, W, 3)
    `image.<camera>` input per camera between obs and base_action, and policy.json gets observation.images as the BC
    package's; `frames` (camera -> uint8 (V, H, W, 3), e.g. recorded ones) are the test vectors' images instead of
    random bytes. Its critics read frames too and are not exported (critic-ranked best-of-N is state-only).
    Written in a temporary directory and renamed to `parent/<version>`, so nobody sees a half-written package.
    Returns (package dir, policy.json contents)."""
    import copy

    from ..algorithms.pixels.nets import PixelResidualExport

    encoders = actor.encoders if isinstance(actor, PixelResidualExport) else None
    if encoders is not None and (critic is not None or chunk_critic is not None):
        raise ValueError("a residual that sees cameras exports its actor only: its critics read frames (pass critic=None)")

    require_finite("residual package", actor=actor, **({"critic": critic} if critic is not None else {}),
                   **({"chunk_critic": chunk_critic[0]} if chunk_critic is not None else {}))
    os.makedirs(parent, exist_ok=True)
    tmp = os.path.join(parent, f".tmp-{os.urandom(4).hex()}")
    os.makedirs(tmp)
    actor = copy.deepcopy(actor).to("cpu").eval()
    gen = torch.Generator().manual_seed(seed)
    obs = torch.randn(vectors, actor.obs_dim, generator=gen)  # (V, obs_dim), normalised obs ~ N(0, 1)
    base_action = torch.rand(vectors, actor.act_dim, generator=gen) * 2 - 1  # (V, A) in [-1, 1]
    images = [] if encoders is None else [torch.from_numpy(np.ascontiguousarray(frames[c][:vectors])) if frames else
                                          torch.randint(0, 256, (vectors, e.height, e.width, 3), generator=gen, dtype=torch.uint8)
                                          for c, e in zip(encoders.cameras, encoders.cfgs)]  # (V, H, W, 3) uint8 each
    if images and any(len(i) != vectors for i in images):
        raise ValueError(f"frames: need {vectors} frames per camera for the test vectors")
    img_in = [] if encoders is None else [f"image.{c}" for c in encoders.cameras]
    with torch.no_grad():
        _export(actor, (obs, *images, base_action), os.path.join(tmp, "residual.onnx"), ["obs", *img_in, "base_action"], "residual")
        residual = actor(obs, *images, base_action)  # (V, A), eager reference for the TS equivalence test
    vec = {"obs": obs.tolist(), "base_action": base_action.tolist(), "residual": residual.tolist()}
    if encoders is not None:
        vec["images"] = {c: img.tolist() for c, img in zip(encoders.cameras, images)}
    if critic is not None:
        wrapped = _CriticBatchFirst(copy.deepcopy(critic).to("cpu").eval()).eval()
        action = torch.clamp(base_action + residual, -1.0, 1.0)  # (V, A), what the robot would execute
        with torch.no_grad():
            _export(wrapped, (obs, action), os.path.join(tmp, "critic.onnx"), ["obs", "action"], "q")
            vec["critic"] = {"action": action.tolist(), "q": wrapped(obs, action).tolist()}
    if chunk_critic is not None:
        net, k = chunk_critic
        wrapped = _CriticBatchFirst(copy.deepcopy(net).to("cpu").eval()).eval()
        chunk = torch.rand(vectors, k * actor.act_dim, generator=gen) * 2 - 1  # (V, K*A) base chunks in [-1, 1]
        with torch.no_grad():
            _export(wrapped, (obs, chunk), os.path.join(tmp, "chunk_critic.onnx"), ["obs", "chunk"], "q")
            vec["chunk_critic"] = {"chunk": chunk.tolist(), "q": wrapped(obs, chunk).tolist()}
    with open(os.path.join(tmp, "test_vectors.json"), "w") as f:
        json.dump(vec, f)
    torch.save({"state_dict": actor.state_dict(),
                "config": {"obs_dim": int(actor.obs_dim), "act_dim": int(actor.act_dim), "hidden": int(actor.hidden),
                           "layers": int(actor.layers)}, "scale": torch.tensor(float(actor.scale)),
                **(encoders.spec() if encoders is not None else {})},
               os.path.join(tmp, "model.pt"))
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    files = (["residual.onnx", "model.pt", "test_vectors.json"] + (["critic.onnx"] if critic is not None else [])
             + (["chunk_critic.onnx"] if chunk_critic is not None else []))
    policy = {
        "format": "rlft-policy", "format_version": 1, "kind": "residual",
        "version": f"{version_prefix}-{base.task}-{now.strftime('%Y%m%dT%H%M%SZ')}-{os.urandom(3).hex()}-u{updates}",
        "created": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "provenance": {"learner": f"rlft_learner {__version__}", "torch": torch.__version__, "task": base.task,
                       "updates": int(updates), "git": _git_commit(), **(provenance or {})},
        "base": {"version": base.version, "policy_json_sha256": base.policy_json_sha256},
        "observation": {"names": list(base.obs_names), "mean": [float(x) for x in base.obs_mean],
                        "std": [float(x) for x in base.obs_std], **({"images": image_inputs(encoders)} if encoders is not None else {})},
        "action": {"names": list(base.action_names), "min": [float(x) for x in base.act_min],
                   "max": [float(x) for x in base.act_max]},
        "residual": {"scale": float(actor.scale), "exploration_std": float(exploration_std),
                     **({"exploration_uniform": float(exploration_uniform)} if exploration_uniform > 0 else {}),
                     **({"exploration_rho": float(exploration_rho)} if exploration_rho > 0 else {})},
        "files": {"actor": "residual.onnx", **({"critic": "critic.onnx"} if critic is not None else {}),
                  **({"chunk_critic": "chunk_critic.onnx"} if chunk_critic is not None else {})},
        **({"chunk_critic": {"steps": int(chunk_critic[1])}} if chunk_critic is not None else {}),
        "sha256": {name: sha256_file(os.path.join(tmp, name)) for name in files},
    }
    with open(os.path.join(tmp, "policy.json"), "w") as f:
        json.dump(policy, f, indent=2)
    out_dir = os.path.join(parent, policy["version"])
    os.rename(tmp, out_dir)
    return out_dir, policy
