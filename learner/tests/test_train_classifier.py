"""The success classifier learns a visible cue from a tiny synthetic set and exports a verifiable ONNX file."""

import hashlib
import json
import os

import numpy as np
import onnx
import pytest

from rlft_learner.algorithms.classifier.train import Config, train


def synthetic_frames(n: int, seed: int = 0):
    """Positives have a bright green block in the lower half (the cube on its target), negatives do not."""
    rng = np.random.default_rng(seed)
    frames = rng.integers(60, 120, size=(n, 24, 24, 3), dtype=np.uint8)
    labels = (np.arange(n) % 3 == 0).astype(np.uint8)
    for i in np.flatnonzero(labels):
        r, c = rng.integers(12, 18), rng.integers(2, 16)
        frames[i, r:r + 5, c:c + 6] = (20, 220, 40)
    return frames, labels


def test_train_classifier_tiny(tmp_path):
    frames, labels = synthetic_frames(90)
    np.save(tmp_path / "frames.npy", frames)
    np.save(tmp_path / "labels.npy", labels)
    out = tmp_path / "clf"
    done = train(Config(data=str(tmp_path), out=str(out), steps=150, batch_size=32, channels=16, shift=2))
    assert done["val_accuracy"] >= 0.8
    meta = json.loads((out / "classifier.json").read_text())
    assert meta["input"] == {"name": "image", "height": 24, "width": 24, "channels": 3}
    assert meta["trained_on"] == {"positives": 30, "negatives": 60}
    raw = (out / "classifier.onnx").read_bytes()
    assert hashlib.sha256(raw).hexdigest() == meta["sha256"]
    onnx.checker.check_model(onnx.load(str(out / "classifier.onnx")))


def test_one_class_is_refused(tmp_path):
    np.save(tmp_path / "frames.npy", np.zeros((4, 8, 8, 3), np.uint8))
    np.save(tmp_path / "labels.npy", np.zeros(4, np.uint8))
    with pytest.raises(ValueError, match="both kinds are needed"):
        train(Config(data=str(tmp_path), out=str(tmp_path / "o"), steps=1))
    assert not os.path.exists(tmp_path / "o")
