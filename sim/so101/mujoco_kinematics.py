"""MuJoCo's own Python bindings as the reference for rlft's SO-101 kinematics and scene (sim/so101/).

Reads a JSON request on stdin:
  {"xml": path, "site": name, "states": [{"qpos": [...], "mocap_pos": [...]?, "ctrl": [...]?, "steps": n?}, ...]}
For every state it sets qpos (and mocap_pos, ctrl), runs mj_forward, then `steps` mj_step calls (default 0), and
reports the site's world position and rotation matrix (row-major) and the final qpos.
Prints one JSON object: {"version": mujoco.__version__, "results": [{"site_pos", "site_mat", "qpos"}, ...]}.
"""

import json
import sys

import mujoco
import numpy as np


def main() -> None:
    req = json.load(sys.stdin)
    model = mujoco.MjModel.from_xml_path(req["xml"])
    data = mujoco.MjData(model)
    site = model.site(req["site"]).id
    results = []
    for state in req["states"]:
        mujoco.mj_resetData(model, data)
        data.qpos[:] = state["qpos"]
        if state.get("mocap_pos"):
            data.mocap_pos[:] = np.reshape(state["mocap_pos"], (-1, 3))
        if state.get("ctrl"):
            data.ctrl[:] = state["ctrl"]
        mujoco.mj_forward(model, data)
        for _ in range(int(state.get("steps", 0))):
            mujoco.mj_step(model, data)
        results.append({"site_pos": data.site_xpos[site].tolist(), "site_mat": data.site_xmat[site].tolist(), "qpos": data.qpos.tolist()})
    json.dump({"version": mujoco.__version__, "results": results}, sys.stdout)


if __name__ == "__main__":
    main()
