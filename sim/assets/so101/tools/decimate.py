"""Vertex-clustering decimation of the SO-101's visual STL meshes (for the rlft software renderer).

Each vertex is snapped to a cubic grid cell of `--cell` metres; a cell's vertices merge into their mean; faces that
collapse are dropped. Robust on these CAD meshes, where quadric decimation stalls at ~1/3 of the faces.
Usage: python decimate.py SRC_DIR OUT_DIR [--cell 0.002]   (needs numpy and trimesh)
"""
import argparse, glob, os
import numpy as np
import trimesh

COLLISION = {"moving_jaw_so101_gripper_part0_v1.stl", "moving_jaw_so101_gripper_part1_v1.stl",
             "wrist_roll_follower_so101_gripper_part0_v1.stl"}

def cluster(m: trimesh.Trimesh, cell: float) -> trimesh.Trimesh:
    key = np.floor(m.vertices / cell).astype(np.int64)
    _, inv = np.unique(key, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    n = inv.max() + 1
    verts = np.zeros((n, 3)); np.add.at(verts, inv, m.vertices)
    verts /= np.bincount(inv, minlength=n)[:, None]
    faces = inv[m.faces]
    ok = (faces[:, 0] != faces[:, 1]) & (faces[:, 1] != faces[:, 2]) & (faces[:, 0] != faces[:, 2])
    faces = faces[ok]
    keep = np.sort(np.unique(np.sort(faces, axis=1), axis=0, return_index=True)[1])  # drop duplicates, keep winding
    return trimesh.Trimesh(verts, faces[keep], process=True)

ap = argparse.ArgumentParser(); ap.add_argument("src"); ap.add_argument("out"); ap.add_argument("--cell", type=float, default=0.002)
a = ap.parse_args(); os.makedirs(a.out, exist_ok=True)
for f in sorted(glob.glob(os.path.join(a.src, "*.stl"))):
    name = os.path.basename(f); m = trimesh.load(f)
    o = m if name in COLLISION else cluster(m, a.cell)
    o.export(os.path.join(a.out, name))
    print(f"{name}: {len(m.faces)} -> {len(o.faces)} faces, bounds moved {np.abs(o.bounds - m.bounds).max() * 1000:.2f} mm")
