"""Learner config values (issue 24 item 9): every value is range-checked where its field is declared, errors name the
key, the value and what is allowed; a YAML syntax error is one line `file:line:column: what` and exit code 1."""

import os
import subprocess
import sys

import pytest

from rlft_learner.algorithms.bc import train as train_bc
from rlft_learner.algorithms.classifier import train as train_classifier
from rlft_learner.algorithms.recap import train as recap
from rlft_learner.algorithms.vla import train as train_vla
from rlft_learner.options import check_dataclass, in_range
from rlft_learner.algorithms.residual_td3.config import ResidualTD3Config
from rlft_learner.algorithms.rlpd_sac.config import RlpdSacConfig
from rlft_learner.commands.serve_config import ServeConfig, load_config

LEARNER_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


@pytest.mark.parametrize("yaml_text, message", [
    ("gamma: 7\n", r"gamma = 7.0 is out of range; allowed: \(0, 1\] — discount"),
    ("tau: -3\n", r"tau = -3.0 is out of range; allowed: \(0, 1\]"),
    ("actor_lr: 0\n", r"actor_lr = 0.0 is out of range; allowed: > 0"),
    ("batch_size: 1\n", r"batch_size = 1 is out of range; allowed: >= 2"),
    ("critic_lr: .nan\n", r"critic_lr = nan is not a finite number"),
    ("utd: .inf\n", r"utd = inf is not a finite number"),
    ("exploration_rho: 1.0\n", r"exploration_rho = 1.0 is out of range; allowed: \[0, 1\)"),
    ("intervention_action: sometimes\n", r"intervention_action = 'sometimes' is not one of executed, clipped"),
    ("max_message_mb: 0\n", r"max_message_mb = 0.0 is out of range"),
    ("gamma: 0.99\ntau: 0.01\ngamma: 0.9\n", r"c.yaml:3:1: YAML syntax error: .*key 'gamma' appears twice \(first on line 1\)"),
    ("gamma: [0.99\n", r"c.yaml:2:1: YAML syntax error: "),
    ("gama: 0.9\n", r"unknown config key 'gama' — did you mean 'gamma'\?"),
])
def test_bad_serve_config_values_are_named_with_what_is_allowed(tmp_path, yaml_text, message):
    p = tmp_path / "c.yaml"
    p.write_text(yaml_text)
    with pytest.raises(ValueError, match=message):
        load_config(str(p))


def test_the_file_is_named_and_flags_are_checked_too(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("gamma: 0.95\n")
    with pytest.raises(ValueError, match=r"c.yaml: gamma = 1.5"):
        p.write_text("gamma: 1.5\n")
        load_config(str(p))
    with pytest.raises(ValueError, match=r"^command line: tau = 2.0"):
        load_config(overrides={"tau": 2.0})
    assert load_config(overrides={"gamma": 1.0, "tau": 1.0}).gamma == 1.0  # the closed ends are allowed


def test_every_declared_range_holds_for_the_defaults():
    """The defaults of every command's config pass their own ranges (and every range spec parses)."""
    for cls in (ServeConfig, ResidualTD3Config, RlpdSacConfig, train_bc.Config, recap.Config, train_vla.Config, train_classifier.Config):
        check_dataclass(cls(), cls.__module__)
    assert in_range(0.5, "(0, 1]") and not in_range(0.0, "(0, 1]") and in_range(1.0, "(0, 1]") and not in_range(float("nan"), "> 0")
    assert {"gamma", "tau", "actor_lr", "critic_lr", "sac_lr", "batch_size", "base_noise_scale", "utd", "max_message_mb"} <= set(ServeConfig.__allowed__)


@pytest.mark.parametrize("argv, message", [
    (["train-bc", "--lr", "-1", "--dataset", "x.npz"], "train-bc: command line: lr = -1.0 is out of range; allowed: > 0"),
    (["recap", "--positive-fraction", "1.0", "--dataset", "x.npz"], "recap: command line: positive_fraction = 1.0 is out of range; allowed: (0, 1)"),
    (["recap", "--intervention-positive", "sometimes", "--dataset", "x.npz"], "recap: command line: intervention_positive = 'sometimes' is not one of always, success, none"),
    (["train-vla", "--steps", "0", "--synthetic"], "train-vla: command line: steps = 0 is out of range; allowed: >= 1"),
    (["train-classifier", "--val-fraction", "nan"], "train-classifier: command line: val_fraction = nan is not a finite number"),
])
def test_training_commands_check_their_flags(argv, message, capsys):
    from rlft_learner.__main__ import main

    assert main(argv) == 1
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith(message)


def test_a_yaml_syntax_error_is_one_line_and_exit_code_1_without_a_traceback(tmp_path):
    p = tmp_path / "learner.yaml"
    p.write_text("base_package: runs/bc/package\ngamma: 0.99\n  tau: 0.005\n")
    env = {**os.environ, "PYTHONPATH": LEARNER_DIR, "OPENBLAS_NUM_THREADS": "1"}
    r = subprocess.run([sys.executable, "-m", "rlft_learner", "serve", "--config", str(p)], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines()[-1] == f"serve: {p}:3:6: YAML syntax error: mapping values are not allowed here", r.stderr


def test_each_serve_key_is_declared_once_beside_the_config_that_owns_it():
    """serve's flat config is the union of its own keys, the door's and each algorithm's, with no key in two of them
    (a second declaration would silently win in the flat config); each algorithm gets a config of its own keys only."""
    import dataclasses

    from rlft_learner.algorithms.offpolicy import OffPolicyConfig
    from rlft_learner.commands.serve_config import ServerConfig
    from rlft_learner.transport.server import DoorConfig

    def own(cls, *parents):
        return {f.name for f in dataclasses.fields(cls)} - set().union(*({f.name for f in dataclasses.fields(p)} for p in parents))

    parts = [own(DoorConfig), own(ServerConfig, DoorConfig), own(OffPolicyConfig), own(ResidualTD3Config, OffPolicyConfig),
             own(RlpdSacConfig, OffPolicyConfig)]
    assert sum(len(p) for p in parts) == len(set().union(*parts))  # disjoint
    assert set().union(*parts) == {f.name for f in dataclasses.fields(ServeConfig)}
    for cls in (ResidualTD3Config, RlpdSacConfig, ServerConfig):  # every key's range is reachable from the flat config
        assert cls.__allowed__.items() <= ServeConfig.__allowed__.items()
    res = load_config(overrides={"critic_heads": 4, "sac_lr": 1e-3}).agent_config()
    sac = load_config(overrides={"algorithm": "rlpd_sac", "critic_heads": 4, "sac_lr": 1e-3}).agent_config()
    assert type(res) is ResidualTD3Config and res.critic_heads == 4 and not hasattr(res, "sac_lr")
    assert type(sac) is RlpdSacConfig and sac.sac_lr == 1e-3 and not hasattr(sac, "critic_heads")


def test_rlpd_sac_shares_the_residual_learners_data_handling_by_composition():
    from rlft_learner.algorithms.offpolicy import Experience
    from rlft_learner.algorithms.residual_td3.agent import ResidualTD3
    from rlft_learner.algorithms.rlpd_sac.agent import RlpdSAC

    assert not issubclass(RlpdSAC, ResidualTD3)
    sac = RlpdSAC(RlpdSacConfig(critic_hidden=8, actor_hidden=8), 3, 2)
    res = ResidualTD3(ResidualTD3Config(critic_hidden=8, actor_hidden=8, critic_heads=2), 3, 2)
    assert isinstance(sac.data, Experience) and isinstance(res.data, Experience)
    assert sac.online is sac.data.online and res.offline is res.data.offline
