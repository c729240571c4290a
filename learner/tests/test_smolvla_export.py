"""export-smolvla on random checkpoints in LeRobot's layout: the ONNX graphs (onnxruntime) give PyTorch's chunk, the
safetensors reader/writer agree with the `safetensors` package, and checkpoints it cannot read are refused naming why."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

from rlft_learner.algorithms.vla.smolvla import (CheckpointError, SmolVla, read_safetensors, save_random_checkpoint,
                                                 tiny_shapes, write_safetensors)
from rlft_learner.algorithms.vla.smolvla_export import export_smolvla, read_checkpoint, write_byte_level_bpe

ort = pytest.importorskip("onnxruntime")


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("smolvla") / "ckpt")
    save_random_checkpoint(d, tiny_shapes(), 5, 4, ["front"], source_hw=(40, 56), empty_cameras=1)
    pytest.importorskip("tokenizers")
    write_byte_level_bpe(os.path.join(d, "tokenizer.json"), 300)
    return d


def test_onnx_graphs_give_the_pytorch_chunk(ckpt, tmp_path):
    out = str(tmp_path / "pkg")
    export_smolvla(ckpt, out, os.path.join(ckpt, "tokenizer.json"), vectors=0)
    pj = json.load(open(os.path.join(out, "policy.json")))
    assert [c["name"] for c in pj["cameras"]] == ["front", "empty_camera_0"]
    assert pj["cameras"][1]["optional"] and pj["state"]["pad_to"] == 8 and pj["action"]["pad_to"] == 8
    assert set(pj["sha256"]) == {"prefix.onnx", "action_expert.onnx", "tokenizer.json", "norm_stats.json"}
    _, s, w, _ = read_checkpoint(ckpt)
    model = SmolVla(s)
    model.load_state_dict(w)
    model.eval()
    g = torch.Generator().manual_seed(3)
    imgs = [torch.rand(1, 3, 64, 64, generator=g) * 2 - 1, -torch.ones(1, 3, 64, 64)]
    masks = [torch.ones(1, dtype=torch.bool), torch.zeros(1, dtype=torch.bool)]
    ids = torch.randint(0, 300, (1, 12), generator=g)
    lang = torch.ones(1, 12, dtype=torch.int64)
    lang[0, 6:] = 0
    state = torch.randn(1, 8, generator=g)
    noise = torch.randn(1, 6, 8, generator=g)
    expected = model.sample(imgs, masks, ids, lang, state, noise).numpy()
    p = ort.InferenceSession(os.path.join(out, "prefix.onnx"))
    e = ort.InferenceSession(os.path.join(out, "action_expert.onnx"))
    feeds = {"state": state.numpy(), "input_ids": ids.numpy(), "attention_mask": lang.numpy(),
             "image_front": imgs[0].numpy(), "image_empty_camera_0": imgs[1].numpy(),
             "image_front_mask": masks[0].numpy(), "image_empty_camera_0_mask": masks[1].numpy()}
    cache = dict(zip([o.name for o in p.get_outputs()], p.run(None, feeds)))
    x = noise.numpy()
    for i in range(s.num_steps):
        v = e.run(None, {"x": x, "t": np.array([1.0 - i / s.num_steps], np.float32), **cache})[0]
        x = x - v / s.num_steps
    assert np.abs(x - expected).max() < 1e-4


def test_safetensors_round_trip_and_the_reference_reader(tmp_path):
    ts = {"a": torch.randn(3, 4), "b": torch.arange(5, dtype=torch.int64), "c": torch.randn(2).to(torch.bfloat16)}
    path = str(tmp_path / "x.safetensors")
    write_safetensors(path, ts, {"format": "pt"})
    back = read_safetensors(path)
    assert all(torch.equal(ts[k], back[k]) for k in ts)
    st = pytest.importorskip("safetensors.torch")
    ref = st.load_file(path)
    assert all(torch.equal(ts[k], ref[k]) for k in ts)
    st.save_file(ts, path)
    assert all(torch.equal(ts[k], v) for k, v in read_safetensors(path).items())


def test_checkpoints_it_cannot_read_are_refused_naming_why(ckpt, tmp_path):
    import shutil
    bad = str(tmp_path / "bad")
    shutil.copytree(ckpt, bad)
    cfg = json.load(open(os.path.join(bad, "config.json")))
    json.dump({**cfg, "type": "pi0"}, open(os.path.join(bad, "config.json"), "w"))
    with pytest.raises(CheckpointError, match="type is 'pi0', not 'smolvla'"):
        read_checkpoint(bad)
    json.dump(cfg, open(os.path.join(bad, "config.json"), "w"))
    for f in os.listdir(bad):
        if f.endswith("normalizer_processor.safetensors"):
            os.remove(os.path.join(bad, f))
    with pytest.raises(CheckpointError, match="no observation.state.mean"):
        read_checkpoint(bad)
    with pytest.raises(CheckpointError, match="config.json does not exist — pass the directory LeRobot saved"):
        read_checkpoint(str(tmp_path / "nowhere"))
    w = read_safetensors(os.path.join(ckpt, "model.safetensors"))
    del w["model.state_proj.weight"]
    write_safetensors(os.path.join(bad, "model.safetensors"), w)
    with pytest.raises(CheckpointError, match="no tensor model.state_proj.weight"):
        read_checkpoint(bad)


def test_external_data_is_written_beside_the_graphs_and_hashed(ckpt, tmp_path):
    out = str(tmp_path / "pkg")
    export_smolvla(ckpt, out, os.path.join(ckpt, "tokenizer.json"), vectors=0, external_data=True)
    pj = json.load(open(os.path.join(out, "policy.json")))
    assert {"prefix.onnx.data", "action_expert.onnx.data"} <= set(pj["sha256"])
    import onnx
    m = onnx.load(os.path.join(out, "prefix.onnx"), load_external_data=False)
    locations = {e.value for t in m.graph.initializer for e in t.external_data if e.key == "location"}
    assert locations == {"prefix.onnx.data"}
    ort.InferenceSession(os.path.join(out, "prefix.onnx"))
