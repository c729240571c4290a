"""`serve`'s config: its own keys (sockets, files, schedule: `ServerConfig`), the door's (transport/server.py
DoorConfig) and every key of both algorithms (algorithms/residual_td3/config.py, algorithms/rlpd_sac/config.py,
algorithms/offpolicy.py), as one flat set of YAML keys and --flags (`ServeConfig`). Each key is declared and
range-checked once, beside the config it belongs to; the checks that involve several keys sit beside each config
(`check`), and those across configs here. A YAML file, then --flags: unknown keys and wrong types are errors that name
the key.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
from dataclasses import dataclass, field
from typing import Any

from ..algorithms.residual_td3.config import ResidualTD3Config
from ..algorithms.rlpd_sac.config import RlpdSacConfig
from ..options import allow, check_value, help_meta as _h, help_with_range, read_yaml
from ..transport.server import DoorConfig

#: The learner `algorithm`s: ours (residual over the BC base) and the HIL-SERL / RLPD SAC baseline, with their configs.
AGENT_CONFIGS: dict[str, type] = {"residual_td3": ResidualTD3Config, "rlpd_sac": RlpdSacConfig}
ALGORITHMS = tuple(AGENT_CONFIGS)


@dataclass
class ServerConfig(DoorConfig):
    """`serve`'s own keys: where it listens and writes, what it serves, when it publishes and checkpoints."""

    experience_bind: str = field(default="tcp://127.0.0.1:5555", metadata=_h("ROUTER address robots send hello/transitions/heartbeat/get_policy to"))
    policy_bind: str = field(default="tcp://127.0.0.1:5556", metadata=_h("PUB address every new residual package is published on (topic `policy`)"))
    base_package: str = field(default="", metadata=_h("REQUIRED: the BC package dir; its names and stats define normalisation, its version must match robots' hello"))
    run_dir: str = field(default="runs/residual", metadata=_h("checkpoints, packages/ and metrics.jsonl; an existing run is resumed"))
    demo_dataset: str = field(default="", metadata=_h("optional .npz of demos (train-bc format) put in the offline buffer, base actions relabelled by the base policy"))
    base_noise_scale: float = field(default=1.0, metadata=_h("sampling temperature the robot runs the base at (launch actor.noise_scale; rlft session passes it): demo base actions are relabelled with the initial DDIM noise x this, so offline rows match what the robot executes"))
    config_hash: str = field(default="", metadata=_h("robot config hash to require in hello; empty = accept any and record it"))
    max_robots: int = field(default=64, metadata=_h("robot ids this learner serves at once; a hello for one more is refused. Ids that never sent a transition are forgotten when their connection is gone and never checkpointed, so invented ids cannot pile up"))
    heartbeat_sec: float = field(default=2.0, metadata=_h("heartbeat period told to robots in welcome"))
    sign_key: str = field(default="", metadata=_h("ed25519 private key (keys/learner.sign.pem) that signs every published package (policy.sig); empty = unsigned"))
    publish_every: int = field(default=1000, metadata=_h("critic updates between residual package exports (none while the actor has not moved)"))
    keep_packages: int = field(default=5, metadata=_h("newest packages kept on disk; older ones are deleted"))
    checkpoint_every: int = field(default=5000, metadata=_h("critic updates between checkpoints (also on SIGINT/SIGTERM and at the end)"))
    checkpoint_every_s: float = field(default=30.0, metadata=_h("seconds between checkpoints while new transitions arrive. Robots keep every transition in their disk spool until a checkpoint holds it (durable_seq), so this bounds how much they keep"))
    max_updates: int = field(default=0, metadata=_h("stop after this many critic updates (0 = forever)"))
    max_seconds: float = field(default=0.0, metadata=_h("stop after this many seconds (0 = forever)"))
    json_progress: bool = field(default=False, metadata=_h("print JSON lines (progress every ~2 s, policy on publish) on stdout"))
    progress_every_s: float = field(default=2.0, metadata=_h("seconds between progress lines / metrics rows"))
    threads: int = field(default=1, metadata=_h("torch CPU threads (default 1: extra OpenMP threads spin-wait for cores the simulator or robot stack also uses)"))
    # --- algorithm: ours, or the HIL-SERL / RLPD baseline (algorithms/rlpd_sac/) ---
    algorithm: str = field(default="residual_td3", metadata=_h("residual_td3 (ours: residual over the BC base) or rlpd_sac (SAC from scratch with demos, the HIL-SERL/RLPD baseline; robots run it over a zero base). rlpd_sac uses actor_hidden/layers, critic_hidden/layers, gamma, n_step, utd, policy_delay, tau, batch_size, offline_fraction, learning_starts and the sac_* keys"))


allow(ServerConfig, {  # options.allow: what each key accepts, checked wherever the value is read
    "base_noise_scale": "[0, 2]", "max_robots": "[1, 100000]", "heartbeat_sec": "(0, 60]", "publish_every": ">= 1",
    "keep_packages": ">= 1", "checkpoint_every": ">= 1", "checkpoint_every_s": "> 0", "max_updates": ">= 0",
    "max_seconds": ">= 0", "progress_every_s": "> 0", "threads": ">= 1", "algorithm": ALGORITHMS,
})

#: Options that only the residual learner has (it re-runs the base or ranks base chunks), with why, for a clear error
#: when they are set together with another algorithm.
RESIDUAL_ONLY = {
    "chunk_critic": "chunk_critic ranks base chunks, so it needs algorithm residual_td3 (found {alg})",
    "warmup_env_steps": "warmup_env_steps is the residual learner's warm-up; rlpd_sac explores with its own initial actor",
    "mirror_obs": "mirror_obs is a residual_td3 option (it re-runs the base); found algorithm {alg}",
    "obs_features": "obs_features is a residual_td3 option; found algorithm {alg}",
    "her_goal": "her_goal relabels goals for the residual learner (it re-runs the base); found algorithm {alg}",
}


@dataclass
class ServeConfig(RlpdSacConfig, ResidualTD3Config, ServerConfig):
    """Everything `serve` reads from its YAML file (same names as keys; each also a --flag). Unknown keys are errors;
    what each key accepts is declared once, beside the config that owns it."""

    def check(self) -> None:
        """The checks across configs (an algorithm's option set for the other one), then each config's own."""
        for key, why in RESIDUAL_ONLY.items():
            if self.algorithm != "residual_td3" and getattr(self, key):
                raise ValueError("config: " + why.format(alg=self.algorithm))
        ResidualTD3Config.check(self)
        RlpdSacConfig.check(self)

    def agent_config(self) -> ResidualTD3Config | RlpdSacConfig:
        """The config of the selected algorithm, with this config's values for its keys."""
        cls = AGENT_CONFIGS[self.algorithm]
        return cls(**{f.name: getattr(self, f.name) for f in dataclasses.fields(cls)})


allow(ServeConfig, {})


def config_keys() -> set[str]:
    return {f.name for f in dataclasses.fields(ServeConfig)}


def check_config(values: dict[str, Any], where: str) -> dict[str, Any]:
    """Keys, types and ranges of config `values` read from `where` (a file or the command line); errors name all three."""
    defaults = ServeConfig()
    fields = {f.name: f for f in dataclasses.fields(ServeConfig)}
    out: dict[str, Any] = {}
    for key, value in values.items():
        if key not in fields:
            close = difflib.get_close_matches(str(key), sorted(fields), n=1)
            hint = f" — did you mean {close[0]!r}?" if close else f"; known keys: {', '.join(sorted(fields))}"
            raise ValueError(f"{where}: unknown config key {key!r}{hint}")
        want = type(getattr(defaults, key))
        if want is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, want) or (want is not bool and isinstance(value, bool)):
            raise ValueError(f"{where}: config key {key!r} must be {want.__name__}; found {value!r}")
        check_value(ServeConfig, key, value, where)
        out[key] = value
    return out


def load_config(path: str = "", overrides: dict[str, Any] | None = None) -> ServeConfig:
    """Config from a YAML mapping (may be empty) with `overrides` (from flags) on top. Each value is range-checked where
    it is read (check_config); what depends on several keys by ServeConfig.check."""
    values: dict[str, Any] = {}
    if path:
        loaded = read_yaml(path)
        if loaded is not None and not isinstance(loaded, dict):
            raise ValueError(f"{path}: expected a YAML mapping of config keys; found {type(loaded).__name__}")
        values.update(check_config(loaded or {}, path))
    values.update(check_config(overrides or {}, "command line"))
    cfg = ServeConfig(**values)
    cfg.check()
    return cfg


def add_config_flags(parser: argparse.ArgumentParser) -> None:
    """--key for every config key; only flags given on the command line override the YAML file."""
    parser.add_argument("--config", default="", help="YAML file of config keys (see commands/serve_config.py)")
    defaults = ServeConfig()
    for f in dataclasses.fields(ServeConfig):
        default = getattr(defaults, f.name)
        flag = "--" + f.name.replace("_", "-")
        help_text = f"{help_with_range(ServeConfig, f)} (default: {default!r})"
        if isinstance(default, bool):
            parser.add_argument(flag, dest=f.name, action=argparse.BooleanOptionalAction, default=argparse.SUPPRESS, help=help_text)
        else:
            parser.add_argument(flag, dest=f.name, type=type(default), default=argparse.SUPPRESS, help=help_text)


def config_from_args(args: argparse.Namespace) -> ServeConfig:
    return load_config(args.config, {k: v for k, v in vars(args).items() if k in config_keys()})
