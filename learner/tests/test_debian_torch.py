"""The learner on Debian's own PyTorch (`apt install python3-torch`: 1.13 on Debian 12), for users who have only apt.

The system interpreter (/usr/bin/python3, or $RLFT_DEBIAN_PYTHON) trains a tiny diffusion policy for two steps and
exports its package with the learner from this checkout; onnxruntime (this venv's, the robot's runtime family) then
runs the exported sampler and reproduces the package's own PyTorch test vectors. Skipped, saying why, where the
system Python has no torch: CI does not apt-install torch for this. $RLFT_DEBIAN_PYTHONPATH adds paths to the system
interpreter's (e.g. Debian packages unpacked with `dpkg -x` instead of installed).
"""
import json
import os
import subprocess

import numpy as np
import onnxruntime as ort
import pytest

LEARNER = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON = os.environ.get("RLFT_DEBIAN_PYTHON", "/usr/bin/python3")
APT = "python3-torch python3-onnx python3-zmq python3-msgpack python3-yaml python3-cryptography"


def system_env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME", "PYTHONPATH")}
    env["PYTHONPATH"] = os.pathsep.join([LEARNER, *filter(None, [os.environ.get("RLFT_DEBIAN_PYTHONPATH")])])
    env["PYTHONNOUSERSITE"] = "1"
    return env


def system_torch() -> str:
    if not os.path.exists(PYTHON):
        pytest.skip(f"{PYTHON} does not exist")
    probe = "import torch, numpy, onnx, zmq, msgpack, yaml, cryptography; print(torch.__version__)"
    r = subprocess.run([PYTHON, "-c", probe], env=system_env(), capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        reason = (r.stderr.strip().splitlines() or ["?"])[-1]
        pytest.skip(f"{PYTHON} cannot run the learner ({reason}); on Debian/Ubuntu: sudo apt install {APT}")
    return r.stdout.strip()


def test_learner_trains_and_exports_on_the_system_torch(tmp_path):
    version = system_torch()
    out = tmp_path / "package"
    r = subprocess.run([PYTHON, "-m", "rlft_learner", "make-fixture", "--out", str(out), "--steps", "2", "--hidden", "16"],
                       env=system_env(), capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    policy = json.loads((out / "policy.json").read_text())
    assert policy["provenance"]["torch"] == version
    vec = json.loads((out / "test_vectors.json").read_text())
    sess = ort.InferenceSession(str(out / "sampler.onnx"), providers=["CPUExecutionProvider"])
    (action,) = sess.run(None, {"obs": np.asarray(vec["obs"], np.float32), "noise": np.asarray(vec["noise"], np.float32)})
    assert np.max(np.abs(action - np.asarray(vec["action"], np.float32))) < 1e-4
