"""LeRobot's own code reads a dataset directory that rlft exported and reports what it saw, as one line of JSON.

    lerobot_load.py ROOT... (one JSON line: a list, one report per ROOT; one process, so LeRobot is imported once)

With LeRobot 0.4 on PYTHONPATH, a ROOT whose info.json says v2.1 is converted in place first by LeRobot's converter
(lerobot/datasets/v30/convert_dataset_v21_to_v30.py, the way LeRobot 0.4 users read v2.1). With LeRobot 0.3 (which
reads v2.1 itself, next to the `datasets` 3.6 it requires) the v2.1 ROOT is loaded as it is. Then `LeRobotDataset`
loads ROOT from disk (no hub):
every frame (vectors, scalars, task, and the per-channel mean of each decoded video frame), the stats it would
normalise with, and, recomputed with LeRobot's `get_feature_stats` / `aggregate_stats` from the frames it loaded, how
far the stats rlft wrote are from LeRobot's own. The TypeScript test compares all of it with what it exported.
"""
import glob
import importlib.util
import json
import os
import sys

import peer_env

peer_env.import_torchvision()

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from lerobot.datasets.compute_stats import aggregate_stats, get_feature_stats  # noqa: E402
from lerobot.datasets.lerobot_dataset import LeRobotDataset  # noqa: E402
from lerobot.datasets.utils import unflatten_dict  # noqa: E402

# LeRobot 0.3 (reads and writes v2.1; no v3.0 converter) or 0.4 (v3.0).
LEROBOT_03 = importlib.util.find_spec("lerobot.datasets.v30") is None


def tolist(v):
    return v.tolist() if hasattr(v, "tolist") else v


def to_np(v):
    """A parquet cell as pandas gives it (nested lists come as object arrays of arrays) → float64 array."""
    if isinstance(v, np.ndarray) and v.dtype == object:
        return np.stack([to_np(x) for x in v])
    return np.asarray(v, dtype=np.float64)


def max_diff(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return f"shape {list(a.shape)} vs {list(b.shape)}"
    return float(np.max(np.abs(a - b))) if a.size else 0.0


def stored_episode_stats(ds, root):
    """Per episode: index, its rows [lo, hi) and the stats rlft wrote for it, in the dataset's own layout."""
    if LEROBOT_03:  # v2.1: meta/episodes_stats.jsonl as LeRobot 0.3 loaded it; rows from its episode_data_index
        for e in sorted(ds.meta.episodes_stats):
            stats = {k: {s: to_np(v) for s, v in st.items()} for k, st in ds.meta.episodes_stats[e].items()}
            yield e, int(ds.episode_data_index["from"][e]), int(ds.episode_data_index["to"][e]), stats
        return
    episodes = pd.concat([pd.read_parquet(f) for f in sorted(glob.glob(os.path.join(root, "meta/episodes/*/*.parquet")))])
    for _, ep in episodes.iterrows():
        stored = unflatten_dict({k[len("stats/"):]: to_np(v) for k, v in ep.items() if k.startswith("stats/")})
        yield int(ep["episode_index"]), int(ep["dataset_from_index"]), int(ep["dataset_to_index"]), stored


def load(root):
    root = os.path.abspath(root)
    # The column types and `huggingface` metadata of the data files as rlft wrote them (before any conversion).
    schema = pq.read_schema(sorted(glob.glob(os.path.join(root, "data/*/*.parquet")))[0])
    with open(os.path.join(root, "meta", "info.json")) as f:
        if json.load(f)["codebase_version"] == "v2.1" and not LEROBOT_03:
            from lerobot.datasets.v30.convert_dataset_v21_to_v30 import convert_dataset

            convert_dataset(repo_id=os.path.basename(root), root=os.path.dirname(root), push_to_hub=False)

    ds = LeRobotDataset("rlft/" + os.path.basename(root), root=root, **({} if LEROBOT_03 else {"video_backend": "torchcodec"}))
    meta = ds.meta
    video_keys = list(meta.video_keys)
    items = []
    frames = {k: {} for k in video_keys}  # key -> episode -> list of (C,H,W) uint8
    for i in range(len(ds)):
        it = ds[i]
        row = {k: tolist(v) for k, v in it.items() if k not in video_keys}
        ep = int(it["episode_index"])
        for k in video_keys:
            img = it[k]  # (C, H, W) float in [0, 1]
            row[k + "#mean"] = img.mean(dim=(1, 2)).tolist()
            frames[k].setdefault(ep, []).append(np.round(img.numpy() * 255).astype(np.uint8))
        items.append(row)

    # Stats rlft wrote per episode (meta/episodes, stats/<feature>/<stat> columns) against LeRobot's computation on
    # the frames LeRobotDataset returned. Images: rlft's are from the frames before encoding, LeRobot's here from
    # the decoded video (lossy), so the test allows more there.
    hf = ds.hf_dataset.with_format(None)
    diffs, counts, episode_stats = {}, {}, []
    for e, lo, hi, stored in stored_episode_stats(ds, root):
        ours = {}
        for key, ft in meta.features.items():
            if ft["dtype"] == "string":
                continue
            if ft["dtype"] in ("video", "image"):
                # As float: LeRobot 0.4.4 feeds uint8 frames to RunningQuantileStats, whose `batch**2` then wraps
                # around in uint8 and its image std comes out wrong; the formula itself is what is compared here.
                arr = np.stack(frames[key][e]).astype(np.float64)
                st = get_feature_stats(arr, axis=(0, 2, 3), keepdims=True)
                st = {s: v if s == "count" else np.squeeze(v / 255.0, axis=0) for s, v in st.items()}
            else:
                arr = np.array([np.asarray(x, dtype=np.float64) for x in hf[key][lo:hi]])
                st = get_feature_stats(arr, axis=0, keepdims=arr.ndim == 1)
            ours[key] = st
            counts.setdefault(key, []).append(int(np.asarray(stored[key]["count"]).reshape(-1)[0]) if key in stored else None)
            d = diffs.setdefault(key, {})
            # Quantiles in histogram bins ((max - min) / 5000): the estimator is LeRobot's, but where a value sits
            # on a bin edge float rounding may put it in the neighbouring bin.
            bin_width = np.maximum((np.asarray(st["max"], np.float64) - np.asarray(st["min"], np.float64)) / 5000, 1e-12)
            for stat, v in st.items():
                m = max_diff(stored[key][stat], v) if stat in stored.get(key, {}) else "missing"
                if stat.startswith("q") and ft["dtype"] not in ("video", "image") and not isinstance(m, str):
                    m = float(np.max(np.abs(np.asarray(stored[key][stat], np.float64) - v) / bin_width))
                d[stat] = m if isinstance(m, str) or isinstance(d.get(stat), str) else max(d.get(stat, 0.0), m)
        episode_stats.append({k: stored[k] for k in ours if k in stored})
    # meta/stats.json against LeRobot's aggregation of the stored episode stats.
    agg = aggregate_stats(episode_stats)
    agg_diff = {k: {s: max_diff(meta.stats[k][s], v) for s, v in st.items() if s in meta.stats.get(k, {})} for k, st in agg.items()}

    data_files = sorted(glob.glob(os.path.join(root, "data/*/*.parquet")))
    return {
        "codebase_version": meta.info["codebase_version"],
        "len": len(ds),
        "num_episodes": ds.num_episodes,
        "fps": ds.fps,
        "video_keys": video_keys,
        "features": list(meta.features),
        "tasks": [str(t) for t in (meta.tasks.values() if LEROBOT_03 else meta.tasks.index)],
        "stats_keys": sorted(meta.stats),
        "image_counts": {k: counts.get(k) for k in video_keys},
        "stat_diff": diffs,
        "agg_diff": agg_diff,
        "arrow_types": {f.name: str(f.type) for f in schema},
        "hf_metadata": (schema.metadata or {}).get(b"huggingface", b"").decode(),
        "data_files": [os.path.relpath(f, root) for f in data_files],
        "items": items,
    }


if __name__ == "__main__":
    peer_env.emit([load(root) for root in sys.argv[1:]])
