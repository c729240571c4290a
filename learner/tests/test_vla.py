"""The tiny VLA: tokenizer.json, preprocessing, flow-matching training and the exported package."""

import json
import os

import pytest
import numpy as np
import torch

from rlft_learner.algorithms.vla import train as train_vla
from rlft_learner.algorithms.vla.tokenizer import WordLevelTokenizer
from rlft_learner.algorithms.vla.model import ImageSpec, TinyVla, VlaConfig, preprocess_images


def test_tokenizer_json_is_a_wordlevel_tokenizer_with_unk_pad_and_template():
    tok = WordLevelTokenizer.build(["push the red cube to the left target"], max_length=12)
    doc = tok.to_json()
    assert doc["model"]["type"] == "WordLevel" and doc["model"]["unk_token"] == "[UNK]"
    assert [t["content"] for t in doc["added_tokens"]] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
    assert doc["padding"]["strategy"] == {"Fixed": 12} and doc["post_processor"]["type"] == "TemplateProcessing"
    ids, mask = tok.encode("Push the RED cube, to the azure target")
    unk, comma = tok.vocab["[UNK]"], tok.vocab.get(",")
    assert comma is None and ids.count(unk) == 2  # "," and "azure" are not in the vocabulary
    assert len(ids) == 12 and ids[0] == tok.vocab["[CLS]"] and ids[10] == tok.vocab["[SEP]"] and sum(mask) == 11
    ids, mask = tok.encode("push the red cube " * 5)
    assert len(ids) == 12 and ids[-1] == tok.vocab["[SEP]"] and sum(mask) == 12  # truncated to fit [CLS] ... [SEP]


def test_preprocess_crops_resizes_and_normalises():
    spec = ImageSpec(source_height=4, source_width=4, crop=[0, 0, 2, 2], height=1, width=1, mean=[0, 0, 0], std=[1, 1, 1])
    frames = torch.zeros(1, 4, 4, 3, dtype=torch.uint8)
    frames[0, 0, 1] = 255
    frames[0, 1, 0] = 255
    x = preprocess_images(frames, spec)
    assert x.shape == (1, 3, 1, 1) and torch.allclose(x, torch.full((1, 3, 1, 1), 0.5))


def test_flow_sampler_runs_the_prefix_once_and_the_expert_per_step():
    cfg = VlaConfig(vocab_size=10, width=32, cameras=[ImageSpec()])
    model = TinyVla(cfg).eval()
    calls = {"prefix": 0, "expert": 0}
    model.prefix.register_forward_hook(lambda *a: calls.__setitem__("prefix", calls["prefix"] + 1))
    model.expert.register_forward_hook(lambda *a: calls.__setitem__("expert", calls["expert"] + 1))
    img = torch.randn(2, 3, cfg.cameras[0].height, cfg.cameras[0].width)
    out = model.sample(torch.randn(2, 5), torch.ones(2, 16, dtype=torch.int64), torch.ones(2, 16, dtype=torch.int64), [img],
                       torch.randn(2, cfg.horizon, cfg.action_dim), steps=10)
    assert out.shape == (2, cfg.horizon, cfg.action_dim) and calls == {"prefix": 1, "expert": 10}


def test_train_vla_synthetic_exports_a_complete_package(tmp_path):
    cfg = train_vla.Config(synthetic=True, steps=3, width=32, log_every=1, out=str(tmp_path))
    done = train_vla.run(cfg)
    pkg = done["package"]
    policy = json.load(open(os.path.join(pkg, "policy.json")))
    assert policy["kind"] == "vla" and set(policy["files"].values()) == {"prefix.onnx", "action_expert.onnx"}
    for f in ["prefix.onnx", "action_expert.onnx", "tokenizer.json", "norm_stats.json", "test_vectors.json", "model.pt"]:
        assert f in policy["sha256"] and os.path.getsize(os.path.join(pkg, f)) > 0
    tok = WordLevelTokenizer.load(os.path.join(pkg, "tokenizer.json"))
    assert policy["language"]["vocab_size"] == len(tok.vocab) and policy["language"]["max_length"] == tok.max_length
    vec = json.load(open(os.path.join(pkg, "test_vectors.json")))
    assert np.isfinite(np.array(vec["actions"])).all()


def test_keypoint_tokens_follow_a_bright_blob():
    """The spatial-softmax keypoints are expected image positions: with a keypoint map that fires on red, the token's
    (y, x) input moves with a red square."""
    spec = ImageSpec(source_height=32, source_width=40, crop=[0, 0, 32, 40], height=32, width=40)
    cfg = VlaConfig(vocab_size=10, width=32, cameras=[spec], keypoints=4)
    enc = TinyVla(cfg).prefix.images[0]
    assert enc.tokens == 20 + 4
    seen = []
    enc.kp_in.register_forward_hook(lambda m, inp, out: seen.append(inp[0].detach()))
    with torch.no_grad():
        for layer in enc.trunk:
            if isinstance(layer, torch.nn.Conv2d):
                layer.weight.zero_()
                layer.bias.zero_()
        # Channel 0 of every conv passes the red input channel straight through (centre tap).
        enc.trunk[0].weight[0, 0, 1, 1] = 1.0
        enc.trunk[1].weight[0, 0, 1, 1] = 1.0
        enc.trunk[2].weight[0, 0, 1, 1] = 1.0
        enc.kp.weight.zero_()
        enc.kp.bias.zero_()
        enc.kp.weight[:, 0] = 50.0
        for row, col in [(4, 4), (24, 32)]:
            img = torch.zeros(1, 3, 32, 40)
            img[0, 0, row:row + 4, col:col + 4] = 1.0
            enc(img)
    (y0, x0), (y1, x1) = seen[0][0, 0, :2].tolist(), seen[1][0, 0, :2].tolist()
    assert y0 < -0.5 and x0 < -0.5 and y1 > 0.3 and x1 > 0.3


def test_delta_actions_are_relative_to_the_measured_joints_and_a_constant_action_is_exported_as_is(tmp_path):
    data = train_vla.synthetic_vla_dataset()
    data.action[:, 4] = 0.0  # a "gripper" the demos never move
    data.action_names = ["j0", "j1", "j2", "j3", "gripper"]
    data.obs_names = ["q.j0", "q.j1", "q.j2", "q.j3", "q.gripper", "ee.x", "ee.y", "ee.z"]
    cfg = train_vla.Config(synthetic=True, horizon=4, width=32)
    tok, mcfg, norm, tensors, names = train_vla.prepare(cfg, data, [])
    assert norm["relative_to_state"] == ["q.j0", "q.j1", "q.j2", "q.j3", None]
    assert norm["actions"]["min"][4] == norm["actions"]["max"][4] == 0.0
    lo, hi = norm["actions"]["min"][:4], norm["actions"]["max"][:4]
    # Tick 0's chunk, unnormalised and with q added back, is the recorded commands of ticks 0..3.
    chunk = (tensors["chunks"][0, :, :4].double().numpy() + 1) / 2 * (hi - lo) + lo + data.obs[0, :4]
    assert np.allclose(chunk, data.action[:4, :4], atol=1e-5)
    absolute = train_vla.prepare(train_vla.Config(synthetic=True, horizon=4, width=32, delta_actions=False), data, [])[2]
    assert absolute["relative_to_state"] == [None] * 5
    # Fine-tuning from a package keeps the constant dimension's target at 0, as the package was trained (not -1).
    from rlft_learner.algorithms.vla.recap import BaseVla

    base = BaseVla(path="pkg", model=TinyVla(mcfg), tok=tok, norm=norm, state_names=names)
    tuned = train_vla.prepare(cfg, data, [], base=base)[3]["chunks"]
    assert float(tuned[:, :, 4].abs().max()) == 0.0 and float(tensors["chunks"][:, :, 4].abs().max()) == 0.0
    assert torch.allclose(tuned[:, :, :4], tensors["chunks"][:, :, :4], atol=1e-6)  # same data and range: the same targets


def test_position_token_joins_the_prefix_and_aux_datasets_train_only_the_head(tmp_path):
    """--aux-names with the data's names: a head over the camera tokens estimates them (targets in training only) and
    its estimates are one more prefix token, exported inside prefix.onnx; --aux-dataset frames train the head alone."""
    import onnxruntime as ort

    from rlft_learner.algorithms.vla.data import save_vla_dataset, synthetic_vla_dataset

    extra = tmp_path / "aux"
    save_vla_dataset(str(extra), synthetic_vla_dataset(episodes=3, seed=7))
    cfg = train_vla.Config(synthetic=True, steps=3, width=32, log_every=1, out=str(tmp_path / "run"),
                           aux_names="q.j0,ee.x,not.there", aux_dataset=str(extra))
    pkg = train_vla.run(cfg)["package"]
    ckpt = torch.load(os.path.join(pkg, "model.pt"), weights_only=False)
    mcfg = VlaConfig.from_dict(ckpt["config"])
    assert mcfg.aux_dim == 2 and ckpt["aux"]["names"] == ["q.j0", "ee.x"]  # names the data lacks are left out
    assert json.load(open(os.path.join(pkg, "policy.json")))["provenance"]["aux_targets"] == ["q.j0", "ee.x"]
    model = TinyVla(mcfg).eval()
    model.load_state_dict(ckpt["state_dict"])
    vec = json.load(open(os.path.join(pkg, "test_vectors.json")))
    plain = TinyVla(VlaConfig.from_dict({**ckpt["config"], "aux_dim": 0}))
    n_tokens = np.array(vec["prefix_mask"]).shape[1]
    state, ids, mask = (torch.tensor(vec[k]) for k in ("state", "input_ids", "attention_mask"))
    images = [torch.tensor(vec["images"]["image_front"]).view(len(ids), 3, mcfg.cameras[0].height, mcfg.cameras[0].width)]
    assert plain.prefix(state.float(), ids, mask, *images)[0].shape[1] == n_tokens - 1  # the token is one more
    with torch.no_grad():
        prefix, pmask, est = model.prefix.with_estimates(state.float(), ids, mask, *images)
        alone = model.prefix.estimates(ids, mask, *images)
    assert est.shape == (len(ids), 2) and torch.allclose(est, alone, atol=1e-6)
    sess = ort.InferenceSession(os.path.join(pkg, "prefix.onnx"))
    got = sess.run(["prefix"], {"state": state.float().numpy(), "input_ids": ids.numpy(), "attention_mask": mask.numpy(),
                                "image_front": images[0].numpy()})[0]
    assert np.abs(got - prefix.numpy()).max() < 1e-4 and np.abs(got.reshape(len(ids), -1) - np.array(vec["prefix"])).max() < 1e-4


def test_an_aux_dataset_with_other_cameras_is_refused_naming_the_camera(tmp_path):
    from rlft_learner.algorithms.vla.data import save_vla_dataset, synthetic_vla_dataset

    other = synthetic_vla_dataset(episodes=2, seed=3)
    other.images = {"wrist": other.images["front"]}
    save_vla_dataset(str(tmp_path / "aux"), other)
    cfg = train_vla.Config(synthetic=True, steps=1, width=32, out=str(tmp_path / "run"), aux_names="q.j0",
                           aux_dataset=str(tmp_path / "aux"))
    import pytest

    with pytest.raises(ValueError, match="no camera 'front'"):
        train_vla.run(cfg)


def _recap_data(tmp_path):
    """Synthetic demos and 'own' episodes (half failed, some operator ticks), saved as datasets, and a BC base."""
    import dataclasses

    from rlft_learner.algorithms.vla.data import save_vla_dataset, synthetic_vla_dataset

    save_vla_dataset(str(tmp_path / "demos"), synthetic_vla_dataset(episodes=8, steps=20, seed=0))
    mixed = synthetic_vla_dataset(episodes=8, steps=20, seed=1)
    operator = np.zeros(160, np.uint8)
    operator[[5, 6, 7, 25, 26, 45]] = 1  # episodes 0 (success), 1 (failure) and 2 (success)
    mixed = dataclasses.replace(mixed, success=[i % 2 == 0 for i in range(8)], sources=["recap_collect"] * 8, intervention=operator)
    save_vla_dataset(str(tmp_path / "mixed"), mixed)
    small = dict(width=32, horizon=4, execute_steps=2, aux_names="ee.x,ee.y", log_every=10, steps=10)
    train_vla.run(train_vla.Config(dataset=str(tmp_path / "demos"), out=str(tmp_path / "base"), **small))
    return small


def test_recap_on_the_vla_puts_the_indicator_in_the_prompt_and_the_package_template(tmp_path):
    from rlft_learner.algorithms.vla.data import load_vla_dataset

    small = _recap_data(tmp_path)
    mixed = load_vla_dataset(str(tmp_path / "mixed"))
    assert mixed.success == [i % 2 == 0 for i in range(8)] and int(mixed.intervention.sum()) == 6
    common = dict(dataset=str(tmp_path / "demos"), recap_dataset=str(tmp_path / "mixed"), pretrained=str(tmp_path / "base" / "package"),
                  value_steps=30, **small)
    train_vla.run(train_vla.Config(out=str(tmp_path / "recap"), **common))
    train_vla.run(train_vla.Config(out=str(tmp_path / "plain"), recap_plain=True, **common))
    pj = json.load(open(tmp_path / "recap" / "package" / "policy.json"))
    assert pj["language"]["template"] == "{instruction} advantage positive"
    assert pj["provenance"]["pretrained"] == os.path.abspath(tmp_path / "base" / "package")
    stats = json.load(open(tmp_path / "recap" / "recap.json"))
    assert stats["episodes"] == 16 and stats["successes"] == 12 and stats["operator_ticks"] == 6
    assert stats["forced_positive_ticks"] == 4  # operator ticks of successful episodes only (episode 1 failed)
    assert 0.25 < stats["positive_fraction_not_operator"] < 0.35
    # The base's ids are kept; the indicator words are appended, and the test vectors are tokenised through the template.
    base_tok = WordLevelTokenizer.load(str(tmp_path / "base" / "package" / "tokenizer.json"))
    tok = WordLevelTokenizer.load(str(tmp_path / "recap" / "package" / "tokenizer.json"))
    assert all(tok.vocab[w] == i for w, i in base_tok.vocab.items())
    assert {"advantage", "positive", "negative"} <= set(tok.vocab) - set(base_tok.vocab)
    vec = json.load(open(tmp_path / "recap" / "package" / "test_vectors.json"))
    assert vec["input_ids"][0] == tok.encode(vec["instructions"][0] + " advantage positive")[0]
    ckpt = torch.load(tmp_path / "recap" / "package" / "model.pt")
    assert ckpt["state_dict"]["prefix.embed.weight"].shape[0] == len(tok.vocab)
    # The baseline: same data and budget, no indicator, no template.
    plain = json.load(open(tmp_path / "plain" / "package" / "policy.json"))
    assert "template" not in plain["language"] and not (tmp_path / "plain" / "recap.json").exists()


def test_recap_on_the_vla_refuses_a_missing_base_and_fine_tuning_a_recap_package(tmp_path):
    import pytest

    small = _recap_data(tmp_path)
    with pytest.raises(ValueError, match="pass the package it ran as --pretrained"):
        train_vla.run(train_vla.Config(dataset=str(tmp_path / "demos"), recap_dataset=str(tmp_path / "mixed"), out=str(tmp_path / "x"), **small))
    common = dict(dataset=str(tmp_path / "demos"), recap_dataset=str(tmp_path / "mixed"), value_steps=5, **small)
    train_vla.run(train_vla.Config(out=str(tmp_path / "recap"), pretrained=str(tmp_path / "base" / "package"), **common))
    with pytest.raises(ValueError, match="fine-tune from the BC package it came from"):
        train_vla.run(train_vla.Config(out=str(tmp_path / "again"), pretrained=str(tmp_path / "recap" / "package"), **common))
    with pytest.raises(ValueError, match="missing policy.json"):
        train_vla.run(train_vla.Config(out=str(tmp_path / "y"), pretrained=str(tmp_path / "nowhere"), **common))


def test_crop_is_one_for_every_camera_or_given_per_camera_and_refused_outside_the_frame():
    crop = train_vla.camera_crop
    assert crop("14,2,48,60", "front", 64, 64) == [14, 2, 48, 60]
    # Per camera (the SO-101's front and wrist): an unlisted camera, or "full", is the whole frame.
    assert crop("front:14,0,48,84;wrist:full", "front", 84, 84) == [14, 0, 48, 84]
    assert crop("front:14,0,48,84;wrist:full", "wrist", 84, 84) == [0, 0, 84, 84]
    assert crop("front:14,0,48,84", "wrist", 84, 84) == [0, 0, 84, 84]
    assert crop("full", "front", 96, 144) == [0, 0, 96, 144]
    for bad, why in [("1,2,3", "four integers"), ("a,b,c,d", "four integers"), ("front", "four integers"),
                     ("front:0,0,90,84", "does not fit camera 'front''s 84x84"), ("front:0,0,8,8;wrist", "name:top,left")]:
        with pytest.raises(ValueError, match=why):
            crop(bad, "front", 84, 84)
