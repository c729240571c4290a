"""rlft's SmolVLA (algorithms/vla/smolvla.py) against LeRobot's own (lerobot 0.4.4 + transformers): the same random
weights, loaded from one LeRobot-named state dict, give the same action chunk. Skipped where LeRobot or transformers
cannot be imported (LeRobot pins torch below the project's; run it from a venv that has both, see
docs/policy-package.md)."""

from __future__ import annotations

import importlib.machinery
import sys
import types
from unittest import mock

import pytest
import torch

from rlft_learner.algorithms.vla.smolvla import SmolVla, tiny_shapes


class _MockTorchvision:
    """torchvision does not load next to torch 2.13; LeRobot imports it at module level but SmolVLA never calls it."""

    def find_spec(self, name, path=None, target=None):
        if name == "torchvision" or name.startswith("torchvision."):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        m = mock.MagicMock(name=spec.name)
        m.__path__, m.__spec__ = [], spec
        return m

    def exec_module(self, m):
        pass


def _lerobot():
    try:
        import transformers  # noqa: F401
    except ImportError:
        pytest.skip("transformers is not installed (LeRobot's SmolVLA needs it)")
    finder = _MockTorchvision()
    sys.meta_path.insert(0, finder)
    try:
        from lerobot.policies.smolvla import smolvlm_with_expert
        from lerobot.policies.smolvla.configuration_smolvla import SmolVLAConfig
        from lerobot.policies.smolvla.modeling_smolvla import VLAFlowMatching
    except ImportError as e:
        pytest.skip(f"lerobot 0.4.4 is not importable: {e}")
    finally:
        sys.meta_path.remove(finder)
    return smolvlm_with_expert, SmolVLAConfig, VLAFlowMatching


def test_same_chunk_as_lerobot():
    swe, SmolVLAConfig, VLAFlowMatching = _lerobot()
    from transformers import SmolVLMConfig
    s = tiny_shapes()
    vlm_cfg = SmolVLMConfig(
        text_config=dict(model_type="llama", hidden_size=s.width, intermediate_size=s.mlp, num_hidden_layers=s.layers,
                         num_attention_heads=s.heads, num_key_value_heads=s.kv_heads, head_dim=s.head_dim,
                         vocab_size=s.vocab_size, rms_norm_eps=s.rms_eps),
        vision_config=dict(hidden_size=s.vision_width, intermediate_size=s.vision_mlp, num_hidden_layers=s.vision_layers,
                           num_attention_heads=s.vision_heads, image_size=s.image_size, patch_size=s.patch),
        scale_factor=s.scale_factor)
    processor = types.SimpleNamespace(tokenizer=types.SimpleNamespace(fake_image_token_id=0, global_image_token_id=1))
    with mock.patch.object(swe.AutoConfig, "from_pretrained", return_value=vlm_cfg), \
            mock.patch.object(swe.AutoProcessor, "from_pretrained", return_value=processor):
        cfg = SmolVLAConfig(chunk_size=s.chunk_size, n_action_steps=s.chunk_size, max_state_dim=s.max_state_dim,
                            max_action_dim=s.max_action_dim, num_steps=s.num_steps, num_vlm_layers=s.layers,
                            expert_width_multiplier=s.expert_width / s.width, load_vlm_weights=False,
                            resize_imgs_with_padding=(s.image_size, s.image_size), device="cpu")
        theirs = VLAFlowMatching(cfg).eval()
    torch.manual_seed(0)
    ours = SmolVla(s).eval()
    with torch.no_grad():
        for p in ours.parameters():
            p.normal_(0, 0.05)
    sd = {k[len("model."):]: v for k, v in ours.state_dict().items()}
    missing, unexpected = theirs.load_state_dict(sd, strict=False)
    assert not unexpected, unexpected
    assert all("rotary" in k or "position_ids" in k for k in missing), missing
    g = torch.Generator().manual_seed(1)
    B = 2
    images = [torch.rand(B, 3, s.image_size, s.image_size, generator=g) * 2 - 1 for _ in range(2)]
    masks = [torch.ones(B, dtype=torch.bool), torch.tensor([True, False])]
    tokens = torch.randint(0, s.vocab_size, (B, s.tokenizer_max_length), generator=g)
    lang = torch.ones(B, s.tokenizer_max_length, dtype=torch.bool)
    lang[1, 5:] = False
    state = torch.randn(B, s.max_state_dim, generator=g)
    noise = torch.randn(B, s.chunk_size, s.max_action_dim, generator=g)
    with torch.no_grad():
        expected = theirs.sample_actions(images, masks, tokens, lang, state, noise=noise.clone())
        got = ours.sample(images, masks, tokens, lang.long(), state, noise.clone())
    assert (got - expected).abs().max().item() < 1e-5, (got - expected).abs().max().item()
