"""`serve`: the online residual-RL learner. Robots stream transitions in (transport/online_server.py), ResidualTD3 trains
on them (algorithms/residual_td3/; with `algorithm: rlpd_sac` the HIL-SERL/RLPD SAC baseline of algorithms/rlpd_sac/),
new residual packages are exported and published, and everything is checkpointed so a killed learner resumes where its
last checkpoint left off. Its config keys: serve_config.py.

    python3 -m rlft_learner serve --config learner.yaml [--max-updates 20000 --json-progress ...]
    python3 -m rlft_learner bench-update [--config learner.yaml] [--seconds 5]
"""

from __future__ import annotations

import argparse
import dataclasses
import errno
import fcntl
import inspect
import io
import json
import logging
import os
import shutil
import signal
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

import numpy as np
import torch

from ..export.package import export_residual_package
from ..finite import NonFiniteError, require_finite
from ..buffers.her import EpisodeRelabeler, HindsightRelabeler
from ..buffers.mirror import Mirror, MirrorRelabeler
from ..transport.online_server import MAX_NORMALISED, OnlineServer
from ..transport.protocol import MAX_ABS_VALUE, value_problem
from ..buffers.replay import FIELDS
from ..buffers.frames import write_npz
from ..algorithms.residual_td3.nets import ObsFeatures
from ..algorithms.residual_td3.agent import BasePackage, ResidualTD3, demo_rows
from ..transport.security import load_signing_key, sign_package
from .serve_config import ServeConfig, add_config_flags, config_from_args


def _names(csv: str) -> list[str]:
    return [n.strip() for n in csv.split(",") if n.strip()]


def make_agent(cfg: ServeConfig, obs_dim: int, act_dim: int, base: BasePackage | None = None):
    """The learner `algorithm` names: ResidualTD3 (ours) or RlpdSAC (the HIL-SERL/RLPD baseline, same interface), each
    given its own config; over a base that sees cameras, their pixel versions (algorithms/pixels/). `obs_features`
    needs the base package (its observation names and stats)."""
    agent_cfg = cfg.agent_config()
    if base is not None and base.policy["observation"].get("images"):
        from ..algorithms.pixels.agent import PixelResidualTD3, PixelRlpdSAC  # the base sees cameras: so do actor and critics

        return (PixelRlpdSAC if cfg.algorithm == "rlpd_sac" else PixelResidualTD3)(agent_cfg, obs_dim, act_dim, base)
    if cfg.algorithm == "rlpd_sac":
        from ..algorithms.rlpd_sac.agent import RlpdSAC
        return RlpdSAC(agent_cfg, obs_dim, act_dim)
    features = None
    if cfg.obs_features:
        if base is None:
            raise ValueError("config: obs_features needs the base package's observation names and stats (base_package)")
        features = ObsFeatures(list(base.obs_names), base.obs_mean, base.obs_std, cfg.obs_features)
    return ResidualTD3(agent_cfg, obs_dim, act_dim, features)

log = logging.getLogger("rlft_learner.serve")


# ---------------------------------------------------------------------------------------------------------------------
# Checkpoints: run_dir/ckpt-<updates>-<hex>/{state.pt, online.npz, offline.npz, meta.json}, made current by an atomic
# rename of run_dir/checkpoint.json. Buffers and acked_seq are saved together, so after a restart `welcome` reports
# exactly the acked_seq whose transitions are in the restored buffers. Once the pointer is renamed, those acked_seqs are
# reported as `durable_seq` and robots may delete what they cover (docs/protocol.md § Disk spool).

def _atomic_json(path: str, obj: Any) -> None:
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=2)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def lock_run_dir(run_dir: str):
    """Hold run_dir (flock on run_dir/.lock, released when the returned file is closed or the process ends, however
    it ends): a second learner on the same run_dir, in this process or another, would interleave checkpoints with this
    one's. Then removes partial checkpoint directories (.ckpt-*) a learner killed mid-write left: never current."""
    f = open(os.path.join(run_dir, ".lock"), "a+")
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.seek(0)
        who = f.read().strip()
        f.close()
        raise ValueError(f"run_dir {run_dir} is in use by another learner ({who or 'pid unknown'}): stop that one, or give "
                         f"this one another run_dir") from None
    f.seek(0)
    f.truncate()
    f.write(f"pid {os.getpid()}\n")
    f.flush()
    for d in os.listdir(run_dir):
        if d.startswith(".ckpt-"):
            log.warning("removing %s: a checkpoint a learner was writing when it stopped (never made current)", d)
            shutil.rmtree(os.path.join(run_dir, d), ignore_errors=True)
    return f


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_durable(path: str, write: Callable[[Any], None]) -> None:
    """Write a file through `write(f)` and fsync it: a checkpoint the pointer names is on disk, not in the page cache."""
    with open(path, "wb") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())


@dataclasses.dataclass
class CheckpointSnapshot:
    """What a checkpoint writes, copied out of the agent on the serving thread (cheap next to writing it), so the writing
    itself can run on another thread while the learner keeps serving robots and training."""

    updates: int
    state: bytes  # torch.save of agent.state_dict()
    buffers: dict[str, dict]  # file name -> arrays (copies: the live buffers keep changing) or frames.Blobs (references)


def snapshot_checkpoint(agent: ResidualTD3) -> CheckpointSnapshot:
    raw = io.BytesIO()
    torch.save(agent.state_dict(), raw)
    buffers = {"online.npz": agent.online.state(lazy=True), "offline.npz": agent.offline.state(lazy=True)}
    if agent.her is not None:
        buffers["her.npz"] = agent.her.state(lazy=True)
    return CheckpointSnapshot(agent.updates, raw.getvalue(), buffers)


def write_checkpoint(run_dir: str, snap: CheckpointSnapshot, meta: dict) -> str:
    """Write `snap` as run_dir/ckpt-<updates>-<hex>/ (every file fsync'ed), then make it current by an atomic rename of
    checkpoint.json. A failure leaves the previous checkpoint current and removes the partial directory."""
    name = f"ckpt-{snap.updates:09d}-{os.urandom(3).hex()}"
    tmp = os.path.join(run_dir, "." + name)
    os.makedirs(tmp)
    try:
        _write_durable(os.path.join(tmp, "state.pt"), lambda f: f.write(snap.state))
        for file, arrays in snap.buffers.items():
            _write_durable(os.path.join(tmp, file), lambda f, a=arrays: write_npz(f, a))
        _atomic_json(os.path.join(tmp, "meta.json"), meta)
        _fsync_dir(tmp)
        os.rename(tmp, os.path.join(run_dir, name))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    pointer = os.path.join(run_dir, "checkpoint.json")
    try:
        _fsync_dir(run_dir)
        _atomic_json(pointer, {"dir": name, "updates": snap.updates, "created": time.time()})
    except BaseException:
        # The pointer still names the previous checkpoint (the rename is _atomic_json's last step): this one would
        # never be loaded nor removed.
        shutil.rmtree(os.path.join(run_dir, name), ignore_errors=True)
        raise
    _fsync_dir(run_dir)
    # Only the current checkpoint is kept: earlier ones, and any a failed write left after its rename.
    for d in os.listdir(run_dir):
        if (d.startswith("ckpt-") and d != name) or d.startswith("checkpoint.json.tmp-"):
            path = os.path.join(run_dir, d)
            shutil.rmtree(path, ignore_errors=True) if os.path.isdir(path) else os.unlink(path)
    return name


def save_checkpoint(run_dir: str, agent: ResidualTD3, meta: dict) -> str:
    """Snapshot and write a checkpoint on this thread (Learner writes its periodic ones on a writer thread)."""
    return write_checkpoint(run_dir, snapshot_checkpoint(agent), meta)


def _read_checkpoint(ckpt: str, agent: ResidualTD3) -> tuple[dict, dict, dict[str, dict[str, np.ndarray]]]:
    """(meta, agent state, buffers) of one checkpoint directory, checked before anything is loaded into `agent`: a
    checkpoint with non-finite weights, or buffers holding values the door would refuse, raises ValueError."""
    meta = json.load(open(os.path.join(ckpt, "meta.json")))
    # Our own file (optimiser state holds Python floats/tuples): load it fully on torch 2.x, whose default is weights_only.
    extra = {"weights_only": False} if "weights_only" in inspect.signature(torch.load).parameters else {}
    state = torch.load(os.path.join(ckpt, "state.pt"), map_location=agent.device, **extra)
    require_finite(f"checkpoint {ckpt}", **state)
    buffers: dict[str, dict[str, np.ndarray]] = {}
    for buf, name in ((agent.online, "online.npz"), (agent.offline, "offline.npz"), (agent.her, "her.npz")):
        if buf is None or (name == "her.npz" and not os.path.exists(os.path.join(ckpt, name))):
            continue  # HER off, or turned on for a run checkpointed without it
        with np.load(os.path.join(ckpt, name)) as f:
            buffers[name] = {k: f[k] for k in f.files}
        for key, limit in (("obs", MAX_NORMALISED), ("next_obs", MAX_NORMALISED), ("reward", MAX_ABS_VALUE)):
            problem = value_problem(f"{name} {key}", buffers[name][key], limit) if key in buffers[name] else None
            if problem is not None:
                raise NonFiniteError(f"checkpoint {ckpt}: {problem}")
    return meta, state, buffers


def load_checkpoint(run_dir: str, agent: ResidualTD3) -> dict | None:
    """Restore `agent` from run_dir's current checkpoint; returns its meta, or None when there is none. A checkpoint
    with non-finite weights or poisoned buffers is refused; an older complete one left in run_dir is used instead."""
    pointer = os.path.join(run_dir, "checkpoint.json")
    if not os.path.exists(pointer):
        return None
    current = json.load(open(pointer))["dir"]
    older = sorted((d for d in os.listdir(run_dir) if d.startswith("ckpt-") and d != current
                    and os.path.exists(os.path.join(run_dir, d, "meta.json"))), reverse=True)
    refused: list[str] = []
    for name in [current] + older:
        try:
            meta, state, buffers = _read_checkpoint(os.path.join(run_dir, name), agent)
        except NonFiniteError as exc:
            log.error("%s", exc)
            refused.append(str(exc))
            continue
        agent.load_state_dict(state)
        for buf, file in ((agent.online, "online.npz"), (agent.offline, "offline.npz"), (agent.her, "her.npz")):
            if file in buffers:
                buf.load_state(buffers[file])
        if name != current:
            log.warning("resuming from the older checkpoint %s: the current one (%s) was refused", name, current)
        return meta
    raise ValueError(f"{run_dir} holds no usable checkpoint: {refused[0]} — it was written by a learner without finite "
                     f"guards (issue 24). Start a new run_dir, or move {pointer} away to start afresh in this one")


# ---------------------------------------------------------------------------------------------------------------------
# The learner loop.

class Learner:
    """Owns the agent, the server, packages, checkpoints and progress. `run(stop)` serves until `stop` is set or a
    max_updates / max_seconds limit is reached, then checkpoints."""

    def __init__(self, cfg: ServeConfig, out: Callable[[str], None] | None = None):
        if not cfg.base_package:
            raise ValueError("config: base_package is required — the BC package directory the robots run (train-bc's OUT/package)")
        self.cfg = cfg
        self.out = out or (lambda line: (sys.stdout.write(line + "\n"), sys.stdout.flush()))
        torch.set_num_threads(cfg.threads)
        self.base = BasePackage.load(cfg.base_package)
        self.agent = make_agent(cfg, len(self.base.obs_names), len(self.base.action_names), self.base)
        # Episode relabelers whose copies go to agent.her: hindsight goals (her.py), mirror symmetry (mirror.py).
        self.relabelers: list[EpisodeRelabeler] = []
        if cfg.her_goal:
            self.relabelers.append(HindsightRelabeler(self.base, _names(cfg.her_goal), _names(cfg.her_achieved), cfg.her_radius,
                                                      cfg.her_goals_per_episode, cfg.her_min_move or cfg.her_radius,
                                                      cfg.base_noise_scale, cfg.seed))
        self.mirror = Mirror(self.base, _names(cfg.mirror_obs), _names(cfg.mirror_action)) if cfg.mirror_obs else None
        if self.mirror is not None:
            self.relabelers.append(MirrorRelabeler(self.base, self.mirror, cfg.base_noise_scale, cfg.seed))
        if cfg.chunk_critic:
            self.agent.enable_chunk_critic(self.base.execute_steps, self.mirror)
        os.makedirs(cfg.run_dir, exist_ok=True)
        self._run_dir_lock = lock_run_dir(cfg.run_dir)
        self.packages_dir = os.path.join(cfg.run_dir, "packages")
        self.latest_version: str | None = None
        self.published_at = -1
        self.resumed_from: int | None = None
        self.refused = {"publish": 0, "checkpoint": 0, "checkpoint_write": 0}  # refused for non-finite weights; writes failed
        self._ckpt_pool: ThreadPoolExecutor | None = None
        self._ckpt_job: tuple[Future, dict, int] | None = None  # (writer, robots it makes durable, updates)
        self._write_ended = 0.0  # monotonic time the last checkpoint write ended
        try:
            door = cfg.door()
            self.sign_key = load_signing_key(cfg.sign_key) if cfg.sign_key else None
            self.server = OnlineServer(cfg.experience_bind, cfg.policy_bind, self.base, on_rows=self._on_rows,
                                       status=self.status, config_hash=cfg.config_hash, heartbeat_sec=cfg.heartbeat_sec,
                                       max_robots=cfg.max_robots, **door)
        except Exception:
            self._run_dir_lock.close()
            raise
        self.server.keep_packages = cfg.keep_packages
        try:
            self._resume_or_start()
            if cfg.algorithm == "rlpd_sac" and self.latest_version is None:
                self.publish()  # SAC acts from scratch: robots explore with the initial actor from their first episode
            elif cfg.warmup_env_steps > 0 and self.latest_version is None:
                self.publish(exploration_uniform=cfg.warmup_noise)  # env warm-up: the zero residual + uniform noise
        except Exception:
            self.server.close()
            self._run_dir_lock.close()
            raise
        self.dirty = False

    def _resume_or_start(self) -> None:
        meta = load_checkpoint(self.cfg.run_dir, self.agent)
        if meta is not None:
            if meta["base_version"] != self.base.version:
                raise ValueError(f"{self.cfg.run_dir} was trained on base package {meta['base_version']!r} but base_package is "
                                 f"{self.base.version!r} — use a new run_dir")
            self.server.restore(meta["robots"])
            frames = getattr(self.agent.online, "frames", None)
            if self.server.cameras is None and frames is not None:  # the cameras the checkpointed frames came from
                self.server.cameras, self.server.cameras_from = dict(frames.cameras), f"the frames in {self.cfg.run_dir}"
            self.latest_version = meta.get("latest_version")
            self.published_at = meta.get("published_at", -1)
            if self.latest_version:
                path = os.path.join(self.packages_dir, self.latest_version)
                self.server.set_latest(path, json.load(open(os.path.join(path, "policy.json"))))
            self.resumed_from = self.agent.updates
            for relabeler in self.relabelers:
                relabeler.resume(self.agent.her)
            log.info("resumed %s from update %d (acked_seq %s, latest package %s)", self.cfg.run_dir, self.agent.updates,
                     {k: v["acked_seq"] for k, v in meta["robots"].items()}, self.latest_version)
        elif self.cfg.demo_dataset:
            if self.cfg.algorithm == "rlpd_sac":
                from ..algorithms.rlpd_sac.agent import zero_base_demo_rows
                rows = zero_base_demo_rows(self.cfg.demo_dataset, self.base)
            else:
                rows = demo_rows(self.cfg.demo_dataset, self.base, self.cfg.base_noise_scale, self.mirror)
            self.agent.add_offline(rows)
            log.info("offline buffer: %d demo transitions from %s", len(rows["seq"]), self.cfg.demo_dataset)

    def _on_rows(self, rows: dict[str, np.ndarray]) -> None:
        self.agent.add(rows)
        for relabeler in self.relabelers:
            relabelled = relabeler.add(rows)
            if relabelled is not None:
                self.agent.add_her(relabelled)
        self.dirty = True

    def status(self) -> dict[str, Any]:
        return {"updates": self.agent.updates, "online": len(self.agent.online), "offline": len(self.agent.offline)}

    def guards(self) -> dict[str, Any]:
        """What the finite guards and the door refused so far (in progress and done events, metrics.jsonl)."""
        st = self.server.stats
        skipped = dict(self.agent.guard.skipped)
        if self.agent.chunk is not None:
            skipped.update(self.agent.chunk.guard.skipped)
        return {"malformed": st.malformed, "rejected_values": st.rejected_values, "rejected_frames": st.rejected_frames,
                "refused_requests": st.refused,
                "internal_errors": st.internal_errors, "skipped_updates": skipped, "refused_exports": dict(self.refused)}

    def _refuse(self, what: str, exc: ValueError) -> None:
        self.refused[what] += 1
        if self.refused[what] == 1 or self.refused[what] % 100 == 0:
            log.error("%s refused (#%d): %s — the last good one stays", what, self.refused[what], exc)

    def checkpoint(self, wait: bool = False) -> bool:
        """Checkpoint, unless a network or optimiser state is non-finite (then the last good one stays). The agent is
        copied here; the files are written on the writer thread, so robots are served and the agent trains meanwhile
        (a 200k-transition replay with two cameras is ~2 GB to write, longer than a robot waits for its ack). The
        robots' acked_seqs it holds become durable when it completes (poll_checkpoint). Returns False, doing nothing,
        while the previous one is still being written, unless `wait`: then it waits for that one and writes this one
        before returning."""
        if self._ckpt_job is not None:
            self.poll_checkpoint(wait=wait)
            if self._ckpt_job is not None:
                return False
        try:
            require_finite("checkpoint", **self.agent.state_dict())
        except NonFiniteError as exc:
            self._refuse("checkpoint", exc)
            return True
        robots = self.server.robot_state()
        meta = {"base_version": self.base.version, "robots": robots, "latest_version": self.latest_version,
                "published_at": self.published_at, "updates": self.agent.updates, "config": dataclasses.asdict(self.cfg)}
        t0 = time.monotonic()
        snap = snapshot_checkpoint(self.agent)
        snap_s = time.monotonic() - t0
        self.dirty = False
        if self._ckpt_pool is None:
            self._ckpt_pool = ThreadPoolExecutor(1, thread_name_prefix="checkpoint")

        def write() -> tuple[str, float, float]:
            t1 = time.monotonic()
            return write_checkpoint(self.cfg.run_dir, snap, meta), snap_s, time.monotonic() - t1
        self._ckpt_job = (self._ckpt_pool.submit(write), robots, snap.updates)
        if wait:
            self.poll_checkpoint(wait=True)
        return True

    def close(self) -> None:
        """Wait for a checkpoint being written, close the sockets and release run_dir (run() does this when it ends)."""
        if self._ckpt_pool is not None:
            self.poll_checkpoint(wait=True)
            self._ckpt_pool.shutdown()
            self._ckpt_pool = None
        self.server.close()
        self._run_dir_lock.close()

    def poll_checkpoint(self, wait: bool = False) -> None:
        """Finish a checkpoint the writer thread completed (`wait`: wait for it): its acked_seqs become durable. One
        that failed (a full disk) is logged with the fix and counted; the previous one stays current, robots keep
        their spools, and the next checkpoint tries again."""
        if self._ckpt_job is None or not (wait or self._ckpt_job[0].done()):
            return
        job, robots, updates = self._ckpt_job
        self._ckpt_job = None
        self._write_ended = time.monotonic()
        try:
            name, snap_s, write_s = job.result()
        except Exception as exc:  # noqa: BLE001 - keep serving: the robots keep in their spools what is not durable
            self.refused["checkpoint_write"] += 1
            self.dirty = True
            full = isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)
            fix = f"free space in {self.cfg.run_dir}" if full else f"check that {self.cfg.run_dir} is writable (the traceback says more)"
            log.error("checkpoint at update %d failed (#%d): %s — the previous checkpoint stays current and robots keep "
                      "their spools until one completes; %s", updates, self.refused["checkpoint_write"], exc, fix,
                      exc_info=not full)
            return
        self.server.mark_durable(robots)  # only now: the pointer rename made this checkpoint the one a restart loads
        log.info("checkpoint %s (update %d): copied in %.0f ms on the serving thread, written in %.1f s beside it", name,
                 updates, 1e3 * snap_s, write_s)

    def publish(self, exploration_uniform: float = 0.0) -> None:
        """Export, sign and publish the actor as a new package, unless a network in it is non-finite (export refuses;
        robots keep the last good package)."""
        a = self.agent
        try:
            path, policy = self._export(exploration_uniform)
        except NonFiniteError as exc:
            self._refuse("publish", exc)
            self.published_at = a.updates  # next try after publish_every more updates
            return
        if self.sign_key is not None:
            sign_package(path, self.sign_key)
        self.server.publish(path, policy)
        self.latest_version, self.published_at = policy["version"], a.updates
        kept = sorted((d for d in os.listdir(self.packages_dir) if not d.startswith(".")),
                      key=lambda d: os.path.getmtime(os.path.join(self.packages_dir, d)))
        for old in kept[: max(0, len(kept) - self.cfg.keep_packages)]:
            shutil.rmtree(os.path.join(self.packages_dir, old), ignore_errors=True)
        if self.cfg.json_progress:
            self.out(json.dumps({"event": "policy", "version": policy["version"], "updates": a.updates}))

    def _export(self, exploration_uniform: float) -> tuple[str, dict]:
        a = self.agent
        sac = self.cfg.algorithm == "rlpd_sac"
        pixels = hasattr(a, "export_actor")  # algorithms/pixels: encoders + actor in one graph, no state-only critics
        return export_residual_package(
            a.export_actor() if pixels else a.actor, self.base, self.packages_dir, a.updates, a.exploration_std() if sac else self.cfg.exploration_std,
            provenance={"online_transitions": a.env_steps, "intervention_transitions": a.intervention_steps,
                        "algorithm": self.cfg.algorithm, **({"zero_base": True} if sac else {})},
            version_prefix="sac" if sac else "res", critic=None if sac or pixels else a.critic,
            chunk_critic=(a.chunk.net, a.chunk.k) if a.chunk is not None else None,
            exploration_uniform=exploration_uniform, exploration_rho=0.0 if sac else self.cfg.exploration_rho)

    def run(self, stop: threading.Event | None = None) -> dict:
        cfg, a = self.cfg, self.agent
        stop = stop or threading.Event()
        log.info("serving on %s, publishing on %s (base %s, %d obs, %d actions)", self.server.endpoint,
                 self.server.pub_endpoint, self.base.version, a.obs_dim, a.act_dim)
        metrics = open(os.path.join(cfg.run_dir, "metrics.jsonl"), "a")
        t_start = last_progress = last_ckpt_t = time.monotonic()
        last_ckpt_u, last_progress_u = a.updates, a.updates
        window: dict[str, list[float]] = {}
        try:
            while not stop.is_set():
                due = a.updates_due()
                self.server.serve(timeout_ms=0 if due else 20)
                if due and not (cfg.max_updates and a.updates >= cfg.max_updates):
                    for k, v in a.update().items():
                        window.setdefault(k, []).append(v)
                    if a.actor_updates and a.updates - max(self.published_at, 0) >= cfg.publish_every:
                        self.publish()
                now = time.monotonic()
                self.poll_checkpoint()
                # The interval runs from the later of the last checkpoint's start and its write's end: a write that
                # takes longer than checkpoint_every_s is not followed at once by the next one.
                since = now - max(last_ckpt_t, self._write_ended)
                if a.updates - last_ckpt_u >= cfg.checkpoint_every or (self.dirty and since >= cfg.checkpoint_every_s):
                    if self.checkpoint():
                        last_ckpt_u, last_ckpt_t = a.updates, now
                if now - last_progress >= cfg.progress_every_s:
                    ups = (a.updates - last_progress_u) / (now - last_progress)
                    self._progress(metrics, window, ups, now - t_start)
                    window, last_progress, last_progress_u = {}, now, a.updates
                if (cfg.max_updates and a.updates >= cfg.max_updates) or (cfg.max_seconds and now - t_start >= cfg.max_seconds):
                    break
        finally:
            metrics.close()
            if a.actor_updates and self.published_at != a.updates:
                self.publish()
            self.checkpoint(wait=True)
            self.close()
        done = {"event": "done", "updates": a.updates, "online": len(a.online), "offline": len(a.offline),
                "policy_version": self.latest_version, "malformed": self.server.stats.malformed, "robots": self.robot_summary(),
                "guards": self.guards(), "replay_memory": a.online.memory()}
        if cfg.json_progress:
            self.out(json.dumps(done))
        return done

    def robot_summary(self) -> dict[str, dict[str, int]]:
        """Per robot: acked/durable seq and the online rows held with how many distinct seqs (end-to-end counts)."""
        size = len(self.agent.online)
        robot, seq = self.agent.online.data["robot"][:size], self.agent.online.data["seq"][:size]
        out = {}
        for rid, r in self.server.robots.items():
            mine = seq[robot == r.index]
            out[rid] = {"acked_seq": r.acked_seq, "durable_seq": r.durable_seq, "online_rows": int(len(mine)),
                        "distinct_seqs": int(len(np.unique(mine)))}
        return out

    def _progress(self, metrics, window: dict[str, list[float]], ups: float, elapsed: float) -> None:
        a = self.agent
        row = {"updates": a.updates, "time": round(elapsed, 2), "charts/updates_per_s": ups,
               "charts/online": len(a.online), "charts/offline": len(a.offline),
               **({"charts/her": len(a.her)} if a.her is not None else {}),
               "charts/intervention_fraction": a.intervention_steps / max(1, a.env_steps),
               "charts/rejected_values": self.server.stats.rejected_values, "charts/skipped_updates": a.guard.total,
               **{k: float(np.mean(v)) for k, v in window.items()}}
        metrics.write(json.dumps(row) + "\n")
        metrics.flush()
        if self.cfg.json_progress:
            self.out(json.dumps({"event": "progress", "updates": a.updates, "online": len(a.online), "offline": len(a.offline),
                                 **({"her": len(a.her)} if a.her is not None else {}),
                                 "updates_per_s": round(ups, 1), "policy_version": self.latest_version, "guards": self.guards(),
                                 "losses": {k: round(float(np.mean(v)), 6) for k, v in window.items()}}))


# ---------------------------------------------------------------------------------------------------------------------
# bench-update: critic+actor updates per second for a config, on synthetic buffers.

def bench_update(cfg: ServeConfig, seconds: float = 5.0, obs_dim: int = 12, act_dim: int = 5) -> dict:
    torch.set_num_threads(cfg.threads)
    base = None
    if cfg.base_package:
        base = BasePackage.load(cfg.base_package)
        obs_dim, act_dim = len(base.obs_names), len(base.action_names)
    cfg = dataclasses.replace(cfg, critic_warmup_updates=0, learning_starts=1)
    agent = make_agent(cfg, obs_dim, act_dim, base)
    rng = np.random.default_rng(0)
    n = 20_000
    rows = {k: rng.uniform(-1, 1, size=(n,) if w is None else (n, obs_dim if w == "obs" else act_dim)).astype(dt)
            for k, (w, dt) in FIELDS.items() if k != "next"}
    rows.update(robot=np.zeros(n, np.int64), seq=np.arange(n), terminated=(rng.random(n) < 0.01).astype(np.float32),
                truncated=np.zeros(n, np.float32), intervention=(rng.random(n) < 0.1).astype(np.float32))
    agent.add(rows)
    for _ in range(20):  # warm-up (allocator, first-call overheads)
        agent.update()
    t0, k = time.perf_counter(), 0
    while time.perf_counter() - t0 < seconds:
        agent.update()
        k += 1
    ups = k / (time.perf_counter() - t0)
    return {"event": "bench-update", "updates_per_s": round(ups, 1), "env_steps_per_s_at_utd": round(ups / cfg.utd, 1),
            "algorithm": cfg.algorithm, "batch_size": cfg.batch_size, "threads": cfg.threads,
            "critic_heads": cfg.sac_critics if cfg.algorithm == "rlpd_sac" else cfg.critic_heads,
            "critic_hidden": cfg.critic_hidden, "actor_hidden": cfg.actor_hidden, "obs_dim": obs_dim, "act_dim": act_dim,
            "device": cfg.device, "torch": torch.__version__}


# ---------------------------------------------------------------------------------------------------------------------
# CLI entry points (registered in __main__.py).

class ServeCommand:
    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        add_config_flags(parser)

    @staticmethod
    def main(args: argparse.Namespace) -> int:
        json_progress = getattr(args, "json_progress", False)
        try:
            cfg = config_from_args(args)
            json_progress = cfg.json_progress
            learner = Learner(cfg)
        except (ValueError, RuntimeError, OSError) as exc:
            if json_progress:
                print(json.dumps({"event": "error", "message": str(exc)}), flush=True)
            print(f"serve: {exc}", file=sys.stderr)
            return 1
        stop = threading.Event()

        def on_signal(signum, _frame):
            log.info("signal %d: checkpointing and stopping", signum)
            stop.set()

        signal.signal(signal.SIGINT, on_signal)
        signal.signal(signal.SIGTERM, on_signal)
        if learner.resumed_from is not None and cfg.json_progress:
            # env_steps: the online transitions its UTD clock had counted; a session that paces the robot on this
            # learner's updates adds its own transitions to it (app/session.ts paceLearner).
            print(json.dumps({"event": "resumed", "updates": learner.resumed_from, "env_steps": learner.agent.env_steps}), flush=True)
        if cfg.json_progress:  # sockets bound, checkpoint loaded: whoever started us may connect now
            print(json.dumps({"event": "ready"}), flush=True)
        learner.run(stop)
        return 0


class BenchUpdateCommand:
    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        add_config_flags(parser)
        parser.add_argument("--seconds", type=float, default=5.0, help="timed seconds (default: 5)")

    @staticmethod
    def main(args: argparse.Namespace) -> int:
        try:
            cfg = config_from_args(args)
        except (ValueError, OSError) as exc:
            print(f"bench-update: {exc}", file=sys.stderr)
            return 1
        print(json.dumps(bench_update(cfg, args.seconds)), flush=True)
        return 0
