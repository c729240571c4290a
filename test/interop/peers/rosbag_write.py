"""rosbags writes a rosbag2 bag (MCAP storage unless told sqlite3, bag format 9) with rlft's message types and sensor_msgs/Image, the
way a ROS 2 user's recording or converter would, for `rlft replay --through-nodes`. Prints the bag's .mcap file and
what it holds as one line of JSON.

    rosbag_write.py BAG_DIR [mcap|sqlite3]

An episode of 12 ticks at 10 Hz from t = 100 s: /episode/event start and success, /observation, /joint_states,
/joint_command, /arbiter/intervention (the operator on ticks 4-6) and a 8x6 rgb8 /camera/front/image every other
tick. Log time = header stamp.
"""
import glob
import os
import sys

import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer

import peer_env
from rosbag_types import typestore

JOINTS = ["j1", "j2", "j3"]
T0 = 100_000_000_000


def main():
    bag = sys.argv[1]
    storage = sys.argv[2] if len(sys.argv) > 2 else "mcap"
    store = typestore()
    T = store.types
    Time, Header = T["builtin_interfaces/msg/Time"], T["std_msgs/msg/Header"]
    header = lambda ns: Header(stamp=Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000), frame_id="")  # noqa: E731
    topics = {
        "/episode/event": "rlft_interfaces/msg/EpisodeEvent",
        "/observation": "rlft_interfaces/msg/Observation",
        "/joint_states": "sensor_msgs/msg/JointState",
        "/joint_command": "sensor_msgs/msg/JointState",
        "/arbiter/intervention": "rlft_interfaces/msg/Intervention",
        "/camera/front/image": "sensor_msgs/msg/Image",
    }
    written = {t: [] for t in topics}
    with Writer(bag, version=9, storage_plugin=StoragePlugin.SQLITE3 if storage == "sqlite3" else StoragePlugin.MCAP) as w:
        conns = {t: w.add_connection(t, ty, typestore=store) for t, ty in topics.items()}

        def put(topic, ns, msg):
            w.write(conns[topic], ns, store.serialize_cdr(msg, topics[topic]))
            written[topic].append(ns)

        ticks = 12
        put("/episode/event", T0, T["rlft_interfaces/msg/EpisodeEvent"](header=header(T0), episode=0, event="start", seed=7, task="push_cube", detail="written by rosbags"))
        for i in range(ticks):
            ns = T0 + i * 100_000_000
            q = np.array([0.1 * i, -0.05 * i, 0.3], dtype=np.float64)
            js = T["sensor_msgs/msg/JointState"]
            if i % 2 == 0:
                data = np.full(8 * 6 * 3, 10 * i, dtype=np.uint8)
                put("/camera/front/image", ns, T["sensor_msgs/msg/Image"](header=header(ns), height=6, width=8, encoding="rgb8", is_bigendian=0, step=24, data=data))
            put("/observation", ns, T["rlft_interfaces/msg/Observation"](header=header(ns), names=["q.j1", "q.j2", "q.j3"], values=q))
            put("/joint_states", ns, js(header=header(ns), name=JOINTS, position=q, velocity=np.zeros(0), effort=np.zeros(0)))
            put("/joint_command", ns, js(header=header(ns), name=JOINTS, position=q + 0.01, velocity=np.zeros(0), effort=np.zeros(0)))
            op = 4 <= i <= 6
            put("/arbiter/intervention", ns, T["rlft_interfaces/msg/Intervention"](header=header(ns), active=op, source="spacemouse" if op else "policy", action=q + 0.01 if op else np.zeros(0)))
        end = T0 + (ticks - 1) * 100_000_000
        put("/episode/event", end, T["rlft_interfaces/msg/EpisodeEvent"](header=header(end), episode=0, event="success", seed=7, task="push_cube", detail=""))
    (file,) = glob.glob(os.path.join(bag, "*.db3" if storage == "sqlite3" else "*.mcap"))
    peer_env.emit({"file": file, "counts": {t: len(v) for t, v in written.items()}})


if __name__ == "__main__":
    main()
