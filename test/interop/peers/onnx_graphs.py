"""Every ONNX graph kind the learner exports, run by PyTorch (eager) and by onnxruntime's Python package on the same
fresh inputs; the TypeScript side runs the same graphs in onnxruntime-node and compares all three.

    onnx_graphs.py OUT_DIR

Packages, made with the learner's own commands and exporters (tiny and barely trained: equivalence, not learning):
  diffusion  make-fixture                         sampler.onnx (DDIM loop), denoiser.onnx
  recap      make-fixture --indicator, cfg 1.5    sampler.onnx (with guidance), denoiser.onnx, value.onnx
  residual   export_residual_package              residual.onnx, critic.onnx, chunk_critic.onnx
  vla        train-vla --synthetic                prefix.onnx, action_expert.onnx
  classifier SuccessCnn through onnx_export, as train-classifier does (it keeps no weights file to rebuild from)
The PyTorch references are rebuilt from the packages' model.pt / value.pt where there is one. Inputs have batch 3,
not the batch the export traced with, so the dynamic batch axis is exercised. Writes OUT_DIR/cases.json.
"""
import argparse
import json
import os
import sys

import numpy as np
import onnxruntime as ort
import torch

import peer_env
from rlft_learner.algorithms.vla import train as train_vla
from rlft_learner.commands import make_fixture
from rlft_learner.algorithms.bc.diffusion import DDIMSampler, ModelConfig, NoisePredictionNet, PixelSampler
from rlft_learner.export.package import _CriticBatchFirst, export_residual_package, onnx_export
from rlft_learner.algorithms.recap.value import ValueNet
from rlft_learner.algorithms.residual_td3.nets import CriticEnsemble, ResidualActor
from rlft_learner.algorithms.residual_td3.agent import BasePackage
from rlft_learner.algorithms.vla.tokenizer import WordLevelTokenizer
from rlft_learner.algorithms.classifier.train import SuccessCnn
from rlft_learner.vision import CameraEncoders, EncoderConfig
from rlft_learner.algorithms.vla.model import TinyVla, VlaConfig, preprocess_images

B = 3
gen = torch.Generator().manual_seed(1234)


def randn(*shape):
    return torch.randn(*shape, generator=gen)


def fixture(out, indicator, cameras=""):
    args = argparse.Namespace(out=out, obs_dim=6, action_dim=3, steps=2, hidden=32, seed=0, indicator=indicator, cfg_beta=1.5 if indicator else 1.0,
                              cameras=cameras, image_size=32)
    make_fixture.main(args)
    return out


def diffusion_cases(kind, pkg):
    policy = json.load(open(os.path.join(pkg, "policy.json")))
    saved = torch.load(os.path.join(pkg, "model.pt"), weights_only=True)
    net = NoisePredictionNet(ModelConfig(**saved["config"])).eval()
    net.load_state_dict(saved["state_dict"])
    cfg = net.cfg
    beta = policy.get("advantage", {}).get("cfg_beta", 1.0)
    sampler = DDIMSampler(net, saved["alphas_cumprod"].numpy(), saved["timesteps"], cfg_beta=beta).eval()
    noise = randn(B, cfg.horizon, cfg.action_dim)
    t = torch.tensor([0, 37, policy["sampler"]["train_timesteps"] - 1], dtype=torch.int64)
    ind = {"indicator": torch.tensor([0, 1, 2], dtype=torch.int64)} if cfg.indicator else {}
    cond = randn(B, cfg.history * cfg.obs_dim)  # the denoiser's obs: the state history, plus camera features for pixels
    if "encoders_state_dict" in saved:
        enc = CameraEncoders(saved["cameras"], [EncoderConfig(**c) for c in saved["encoder_configs"]]).eval()
        enc.load_state_dict(saved["encoders_state_dict"])
        obs = randn(B, cond.shape[1] - enc.out_dim)
        images = {f"image.{c}": torch.randint(0, 256, (B, e.height, e.width, 3), generator=gen, dtype=torch.uint8) for c, e in zip(enc.cameras, enc.cfgs)}
        pix = PixelSampler(enc, sampler).eval()
        yield kind, os.path.join(pkg, "sampler.onnx"), {"obs": obs, **images, "noise": noise, **ind}, lambda: {"action": pix(obs, *images.values(), noise, *ind.values())}
        yield kind, os.path.join(pkg, "encoder.onnx"), images, lambda: {"features": enc(*images.values())}
    else:
        obs = cond
        yield kind, os.path.join(pkg, "sampler.onnx"), {"obs": obs, "noise": noise, **ind}, lambda: {"action": sampler(obs, noise, *ind.values())}
    yield kind, os.path.join(pkg, "denoiser.onnx"), {"obs": cond, "x": noise, "t": t, **ind}, lambda: {"eps": net(cond, noise, t, *ind.values())}
    if "value" in policy["files"]:
        v = torch.load(os.path.join(pkg, "value.pt"), weights_only=True)
        value_net = ValueNet(**v["config"]).eval()
        value_net.load_state_dict(v["state_dict"])
        vobs = randn(B, cfg.obs_dim)
        yield kind, os.path.join(pkg, "value.onnx"), {"obs": vobs}, lambda: dict(zip(["value", "probs"], value_net(vobs)))


def residual_cases(base_dir, parent):
    base = BasePackage.load(base_dir)
    obs_dim, act_dim = len(base.obs_names), len(base.action_names)
    torch.manual_seed(3)
    actor = ResidualActor(obs_dim, act_dim, hidden=32, layers=2, scale=0.1)
    torch.nn.init.normal_(actor.head.weight, std=0.5)  # the head starts at zero: make the residual non-trivial
    critic = CriticEnsemble(obs_dim, act_dim, hidden=16, layers=2, heads=3)
    k = int(base.policy["action"]["execute_steps"])
    chunk = CriticEnsemble(obs_dim, k * act_dim, hidden=16, layers=2, heads=3)
    pkg, _ = export_residual_package(actor, base, parent, updates=1, exploration_std=0.05, critic=critic, chunk_critic=(chunk, k))
    actor.eval()
    obs, base_action = randn(B, obs_dim), torch.rand(B, act_dim, generator=gen) * 2 - 1
    action, chunk_in = torch.rand(B, act_dim, generator=gen) * 2 - 1, torch.rand(B, k * act_dim, generator=gen) * 2 - 1
    yield "residual", os.path.join(pkg, "residual.onnx"), {"obs": obs, "base_action": base_action}, lambda: {"residual": actor(obs, base_action)}
    yield "critic", os.path.join(pkg, "critic.onnx"), {"obs": obs, "action": action}, lambda: {"q": _CriticBatchFirst(critic.eval())(obs, action)}
    yield "critic", os.path.join(pkg, "chunk_critic.onnx"), {"obs": obs, "chunk": chunk_in}, lambda: {"q": _CriticBatchFirst(chunk.eval())(obs, chunk_in)}


def vla_cases(out):
    train_vla.run(train_vla.Config(synthetic=True, steps=2, width=32, log_every=1, out=out, threads=1))
    pkg = os.path.join(out, "package")
    saved = torch.load(os.path.join(pkg, "model.pt"), weights_only=False)
    model = TinyVla(VlaConfig.from_dict(saved["config"])).eval()
    model.load_state_dict(saved["state_dict"])
    cfg = model.cfg
    tok = WordLevelTokenizer.build(["push the red cube to the left target", "push the blue cube"], max_length=cfg.max_tokens)
    ids, mask = zip(*(tok.encode(s) for s in ["push the red cube", "push the blue cube to the left target", "push"]))
    ids = torch.tensor(ids, dtype=torch.int64).clamp(max=cfg.vocab_size - 1)
    mask = torch.tensor(mask, dtype=torch.int64)
    state = randn(B, cfg.state_dim)
    images = [preprocess_images(torch.randint(0, 256, (B, c.source_height, c.source_width, 3), generator=gen, dtype=torch.uint8), c) for c in cfg.cameras]
    feeds = {"state": state, "input_ids": ids, "attention_mask": mask, **{f"image_{c.name}": x for c, x in zip(cfg.cameras, images)}}
    yield "vla", os.path.join(pkg, "prefix.onnx"), feeds, lambda: dict(zip(["prefix", "prefix_mask"], model.prefix(state, ids, mask, *images)))
    with torch.no_grad():
        prefix, pmask = model.prefix(state, ids, mask, *images)
    x, t = randn(B, cfg.horizon, cfg.action_dim), torch.tensor([1.0, 0.55, 0.1])
    yield "vla", os.path.join(pkg, "action_expert.onnx"), {"x": x, "t": t, "prefix": prefix, "prefix_mask": pmask}, lambda: {"velocity": model.expert(x, t, prefix, pmask)}


def classifier_cases(out):
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(5)
    net = SuccessCnn(8).eval()
    path = os.path.join(out, "classifier.onnx")
    onnx_export(net, (torch.zeros(1, 24, 32, 3, dtype=torch.uint8),), path, ["image"], ["prob"])  # as train_classifier.train
    image = torch.randint(0, 256, (B, 24, 32, 3), generator=gen, dtype=torch.uint8)
    yield "classifier", path, {"image": image}, lambda: {"prob": net(image)}


def tensor_json(t):
    a = t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
    return {"dtype": str(a.dtype), "shape": list(a.shape), "data": a.reshape(-1).tolist()}


def main():
    out = os.path.abspath(sys.argv[1])
    torch.set_num_threads(1)
    diffusion = fixture(os.path.join(out, "diffusion"), indicator=False)
    recap = fixture(os.path.join(out, "recap"), indicator=True)
    pixels = fixture(os.path.join(out, "pixels"), indicator=False, cameras="front,wrist")
    cases = []
    sources = [diffusion_cases("diffusion", diffusion), diffusion_cases("recap", recap), diffusion_cases("diffusion (cameras)", pixels), residual_cases(diffusion, os.path.join(out, "residuals")),
               vla_cases(os.path.join(out, "vla")), classifier_cases(os.path.join(out, "classifier"))]
    for source in sources:
        for kind, graph, feeds, reference in source:
            with torch.no_grad():
                expected = {k: v for k, v in reference().items()}
            sess = ort.InferenceSession(graph, providers=["CPUExecutionProvider"])
            names = [i.name for i in sess.get_inputs()]
            assert sorted(names) == sorted(feeds), f"{graph}: inputs {names}, fed {list(feeds)}"
            got = sess.run(None, {k: v.numpy() for k, v in feeds.items()})
            outs = [o.name for o in sess.get_outputs()]
            case = {"kind": kind, "graph": os.path.relpath(graph, out), "inputs": {k: tensor_json(v) for k, v in feeds.items()}, "outputs": {}}
            for name, value in zip(outs, got):
                ref = expected[name]
                case["outputs"][name] = {"ort": tensor_json(value), "torch": tensor_json(ref),
                                         "max_diff": float(np.max(np.abs(value.astype(np.float64) - ref.numpy().astype(np.float64))))}
            cases.append(case)
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump({"onnxruntime": ort.__version__, "torch": torch.__version__, "cases": cases}, f)
    peer_env.emit({"cases": len(cases), "file": os.path.join(out, "cases.json")})


if __name__ == "__main__":
    main()
