"""Renders a scene through MuJoCo's own renderer (the `mujoco` Python package, headless) for rlft's renderer tests.

Reads a JSON request on stdin:
  {"xml": path, "out": dir, "poses": [{"qpos": [...], "mocap_pos": [...], "mocap_quat": [...]}, ...],
   "cameras": [{"name", "body", "pos": [3], "quat": [w, x, y, z], "fovy": deg, "width", "height"}]}
Each camera is added to `body` (MuJoCo camera convention: looks along -z, y up) with mjSpec, so the pose given is
exactly the one rlft computed from its calibration files. For every pose and camera it writes
<out>/<pose>_<camera>.{rgb,seg,depth}: uint8 H*W*3, int32 geom id (-1 = none), float32 z-depth in metres.
Prints one JSON line with the MuJoCo version and the GL backend. MUJOCO_GL defaults to osmesa.
"""

import json
import os
import sys

os.environ.setdefault("MUJOCO_GL", "osmesa")

import mujoco  # noqa: E402
import numpy as np  # noqa: E402


def main() -> None:
    req = json.load(sys.stdin)
    spec = mujoco.MjSpec.from_file(req["xml"])
    for cam in req["cameras"]:
        parent = spec.worldbody if cam["body"] == "world" else spec.body(cam["body"])
        if parent is None:
            raise SystemExit(f"no body {cam['body']} in {req['xml']}")
        parent.add_camera(name=f"rlft_{cam['name']}", pos=cam["pos"], quat=cam["quat"], fovy=cam["fovy"])
    model = spec.compile()
    data = mujoco.MjData(model)
    renderers = {}
    for i, pose in enumerate(req["poses"]):
        data.qpos[:] = pose["qpos"]
        if pose.get("mocap_pos"):
            data.mocap_pos[:] = np.reshape(pose["mocap_pos"], (-1, 3))
            data.mocap_quat[:] = np.reshape(pose["mocap_quat"], (-1, 4))
        mujoco.mj_forward(model, data)
        for cam in req["cameras"]:
            key = (cam["width"], cam["height"])
            if key not in renderers:
                renderers[key] = mujoco.Renderer(model, height=cam["height"], width=cam["width"])
            r = renderers[key]
            name = f"rlft_{cam['name']}"
            base = os.path.join(req["out"], f"{i}_{cam['name']}")
            r.disable_depth_rendering()
            r.disable_segmentation_rendering()
            r.update_scene(data, camera=name)
            r.render().astype(np.uint8).tofile(base + ".rgb")
            r.enable_segmentation_rendering()
            r.update_scene(data, camera=name)
            seg = r.render()
            ids = np.where(seg[..., 1] == int(mujoco.mjtObj.mjOBJ_GEOM), seg[..., 0], -1).astype(np.int32)
            ids.tofile(base + ".seg")
            r.disable_segmentation_rendering()
            r.enable_depth_rendering()
            r.update_scene(data, camera=name)
            depth = r.render().astype(np.float32)
            # Nothing seen: MuJoCo returns the far plane; rlft says +inf.
            far = model.vis.map.zfar * model.stat.extent
            depth[depth >= far * 0.999] = np.inf
            depth.tofile(base + ".depth")
            r.disable_depth_rendering()
    print(json.dumps({"mujoco": mujoco.__version__, "gl": os.environ.get("MUJOCO_GL")}))


if __name__ == "__main__":
    main()
