"""How long a learner checkpoint holds the serving thread, with a replay of camera frames (docs/results.md).

Fills a replay buffer with `rows` transitions of two 84x84 cameras (front, wrist; synthetic frames with `noise` levels
of per-pixel noise over a texture, so zlib6 keeps ~`bytes_per_transition` as reported), then checkpoints it both ways,
in one run on the same buffer:
- `inline`: what the learner did before: the buffers packed (frames joined) and written on the serving thread;
- `writer`: what serve does now: the agent copied on the serving thread (frames by reference) and the files written and
  fsync'ed on the writer thread, while this thread polls every millisecond as the serving loop does; its longest gap
  between two polls is what a robot waiting for an ack would see.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time

import numpy as np


def fill(rows: int, noise: int, seed: int = 0):
    from ..buffers.replay import ReplayBuffer

    buf = ReplayBuffer(rows, 12, 6, cameras={"front": (84, 84), "wrist": (84, 84)}, frame_codec="zlib6")
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:84, 0:84]
    texture = np.stack([(xx * 3) % 256, (yy * 3) % 256, (xx + yy) % 256], -1).astype(np.uint8)
    n = 500
    for b in range(0, rows, n):
        m = min(n, rows - b)
        fr = texture[None] + rng.integers(0, noise + 1, (m + 1, 84, 84, 3), dtype=np.uint8)
        batch = {k: np.zeros((m, 12) if k in ("obs", "next_obs") else (m, 6), np.float32)
                 for k in ("obs", "next_obs", "base_action", "action", "next_base_action")}
        batch.update({k: np.zeros(m, np.float32) for k in ("reward", "terminated", "truncated", "intervention")})
        batch.update({"robot": np.zeros(m, np.int64), "seq": np.arange(b, b + m, dtype=np.int64)})
        for c in ("front", "wrist"):
            batch[f"image.{c}"], batch[f"next_image.{c}"] = fr[:-1], fr[1:]
        buf.add(batch)
    return buf


def bench(rows: int, noise: int, out_dir: str) -> dict:
    from ..commands.serve import CheckpointSnapshot, write_checkpoint

    t0 = time.perf_counter()
    buf = fill(rows, noise)
    fill_s = time.perf_counter() - t0
    stats = buf.frames.stats(len(buf))
    result: dict = {"event": "bench-checkpoint", "rows": rows, "cameras": ["front", "wrist"], "frame": "84x84",
                    "bytes_per_transition": stats["bytes_per_transition"], "fill_seconds": fill_s}
    # inline: packed and written on the calling (serving) thread, no fsync (as before)
    d = tempfile.mkdtemp(dir=out_dir)
    try:
        t0 = time.perf_counter()
        st = buf.state()
        packed = time.perf_counter() - t0
        np.savez(os.path.join(d, "online.npz"), **st)
        del st
        result["inline"] = {"serving_thread_held_s": time.perf_counter() - t0, "packing_s": packed,
                            "bytes": os.path.getsize(os.path.join(d, "online.npz"))}
    finally:
        shutil.rmtree(d, ignore_errors=True)
    # writer: copied here, written (and fsync'ed) beside this thread
    d = tempfile.mkdtemp(dir=out_dir)
    try:
        t0 = time.perf_counter()
        snap = CheckpointSnapshot(0, b"", {"online.npz": buf.state(lazy=True)})
        copied = time.perf_counter() - t0
        done, took = threading.Event(), {}

        def write() -> None:
            t1 = time.perf_counter()
            try:
                write_checkpoint(d, snap, {})
            finally:
                took["s"] = time.perf_counter() - t1
                done.set()

        threading.Thread(target=write, daemon=True).start()
        gap, last = 0.0, time.perf_counter()
        while not done.wait(0.001):
            now = time.perf_counter()
            gap, last = max(gap, now - last), now
        result["writer"] = {"serving_thread_held_s": copied, "longest_poll_gap_s": gap, "write_s": took["s"]}
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return result


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rows", type=int, default=40_000, help="transitions in the replay (default: 40000)")
    parser.add_argument("--noise", type=int, default=1, help="per-pixel noise levels in the synthetic frames (default: 1)")
    parser.add_argument("--dir", default=".", help="where the checkpoint files are written and removed (default: .)")


def main(args: argparse.Namespace) -> int:
    if args.rows < 1 or args.noise < 0 or not os.path.isdir(args.dir):
        print("bench-checkpoint: --rows must be >= 1, --noise >= 0 and --dir an existing folder", file=sys.stderr)
        return 1
    print(json.dumps(bench(args.rows, args.noise, args.dir)), flush=True)
    return 0
