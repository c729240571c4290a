"""`serve` over a base that sees cameras (algorithms/pixels/): a robot's transitions with camera frames arrive over
ZeroMQ, the replay keeps their frames and the demos' (buffers/frames.py), the pixel agent learns from sampled batches
with frames, publishes a residual package whose residual.onnx reads the camera, and a restarted learner resumes with
the same frames."""

import time

import numpy as np
import onnxruntime as ort

from rlft_learner.algorithms.residual_td3.agent import BasePackage
from rlft_learner.commands.serve import Learner
from rlft_learner.transport.protocol import decode_policy
from test_online import client, hello, policy_sub, running_learner, transitions
from test_pixel_residual import SIZE, make_pixel_base
from test_server import ask


def test_serve_over_a_pixel_base_learns_from_transitions_with_frames_and_publishes(tmp_path):
    (tmp_path / "base").mkdir()
    package, demos = make_pixel_base(tmp_path / "base")
    base = BasePackage.load(package)
    ticks = np.random.default_rng(0).integers(0, 256, (41, SIZE, SIZE, 3), dtype=np.uint8)  # the camera at 41 ticks
    run = running_learner(tmp_path, base_package=package, demo_dataset=demos, publish_every=5)
    lr, cfg, _ = next(run)
    sub, sock = policy_sub(cfg.policy_bind), client(cfg.experience_bind)
    try:
        # The demos enter the offline buffer with their frames, base actions relabelled by the base reading them.
        assert len(lr.agent.offline) == 30 and lr.agent.offline.frames.cameras == {"front": (SIZE, SIZE)}
        ask(sock, hello(0, version=base.version, obs_names=base.obs_names, action_names=base.action_names))
        time.sleep(0.3)  # let the SUB connect before anything is published
        for seq, first in ((1, 0), (2, 20)):
            frames = {"image.front": ticks[first:first + 20], "next_image.front": ticks[first + 1:first + 21]}
            assert ask(sock, transitions(seq, first, 20, obs_dim=2, frames=frames))["acked_seq"] == first + 19
        header, files = decode_policy(sub.recv_multipart()[1:])
        assert header["kind"] == "residual" and header["base_version"] == base.version
        assert "critic.onnx" not in files  # a pixel residual's critics read frames: the package has the actor only
        sess = ort.InferenceSession(files["residual.onnx"], providers=["CPUExecutionProvider"])
        assert [i.name for i in sess.get_inputs()] == ["obs", "image.front", "base_action"]
    finally:
        sock.close()
        sub.close()
        next(run, None)  # stop the learner (it checkpoints)
    assert lr.agent.updates > 0 and lr.agent.actor_updates > 0
    rows = lr.agent.online.nstep(np.arange(40), 1, 0.99, frames=True)  # in arrival order: each step's frame kept once
    assert np.array_equal(rows["image.front"], ticks[:40].transpose(0, 3, 1, 2))
    assert np.array_equal(rows["next_image.front"], ticks[1:41].transpose(0, 3, 1, 2))
    # Batches carry the frozen base encoder's features of those frames, each frame encoded once (not every batch).
    feats = lr.agent.online.nstep(np.arange(40), 1, 0.99)
    want = lr.agent.encode_frames({"front": rows["image.front"]})
    assert "image.front" not in feats and np.allclose(feats["features"], want, atol=1e-5)
    assert np.allclose(feats["next_features"], lr.agent.encode_frames({"front": rows["next_image.front"]}), atol=1e-5)
    assert lr.agent.online.frames.encoded_frames < 4 * (len(lr.agent.online) + 1)
    assert lr.agent.online.memory()["extra_frames"] < 40 * SIZE * SIZE * 3  # linked: not every next frame is a copy
    offline = lr.agent.offline.nstep(np.arange(30), 1, 0.99)
    assert np.isfinite(offline["base_action"]).all() and np.abs(offline["base_action"]).max() > 0
    again = Learner(cfg, out=lambda line: None)  # resumes: the checkpoint holds the frames
    try:
        assert again.agent.updates == lr.agent.updates
        resumed = again.agent.online.nstep(np.arange(40), 1, 0.99, frames=True)
        assert np.array_equal(resumed["image.front"], rows["image.front"])
        assert np.allclose(again.agent.online.nstep(np.arange(40), 1, 0.99)["features"], feats["features"], atol=1e-5)
        assert again.agent.sample().images["next_features"].shape == (cfg.batch_size, again.agent.encoders.out_dim)
    finally:
        again.close()
