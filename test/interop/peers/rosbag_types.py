"""A rosbags typestore (ROS 2 Humble's standard messages) with rlft's own .msg files registered from
interfaces/rlft_interfaces/msg, as a ROS 2 user's tooling would have them after building rlft_interfaces."""
import glob
import os

from rosbags.typesys import Stores, get_typestore, get_types_from_msg

MSG_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "..", "interfaces", "rlft_interfaces", "msg")


def typestore():
    store = get_typestore(Stores.ROS2_HUMBLE)
    types = {}
    for path in sorted(glob.glob(os.path.join(MSG_DIR, "*.msg"))):
        with open(path, encoding="utf-8") as f:
            types.update(get_types_from_msg(f.read(), "rlft_interfaces/msg/" + os.path.basename(path)[:-4]))
    store.register(types)
    return store
