"""Two independent readers open an rlft episode MCAP and report per topic the type, the message count and a digest
of the decoded content, as one line of JSON:

  rosbags (Ternaris' pure-Python rosbag2 library): every message deserialised with rlft's .msg definitions
  registered (rosbag_types.py), not with the schema text in the file;
  mcap + mcap-ros2-support (Foxglove's official Python reader and its ROS 2 decoder): every message decoded with the
  schema text the file stores, counts also from the file's summary statistics.

    rosbag_read.py FILE.mcap
"""
import sys

import numpy as np
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
from rosbags.rosbag2 import Reader

import peer_env
from rosbag_types import typestore


def digest(msg):
    """What the test compares: observation values, joint positions, image size and a pixel sum, event names."""
    out = {}
    for name in ("values", "position"):
        if hasattr(msg, name):
            out[name] = [float(x) for x in getattr(msg, name)]
    if hasattr(msg, "names"):
        out["names"] = list(msg.names)
    if hasattr(msg, "encoding"):
        out["image"] = [int(msg.width), int(msg.height), msg.encoding, int(np.asarray(bytearray(msg.data) if not isinstance(msg.data, np.ndarray) else msg.data, dtype=np.uint64).sum())]
    if hasattr(msg, "event"):
        out["event"] = msg.event
    if hasattr(msg, "active"):
        out["active"] = bool(msg.active)
    stamp = getattr(getattr(msg, "header", None), "stamp", None)
    if stamp is not None:
        out["stamp"] = int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)
    return out


def main():
    path = sys.argv[1]
    store = typestore()
    ros = {}
    with Reader(path) as reader:
        for conn, timestamp, raw in reader.messages():
            msg = store.deserialize_cdr(raw, conn.msgtype)
            t = ros.setdefault(conn.topic, {"type": conn.msgtype, "count": 0, "first": None, "last": None, "log_time_is_stamp": True})
            t["count"] += 1
            d = digest(msg)
            t["first"] = t["first"] or d
            t["last"] = d
            if "stamp" in d and d["stamp"] != timestamp:
                t["log_time_is_stamp"] = False
    official = {}
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        summary = reader.get_summary()
        stats = summary.statistics.channel_message_counts if summary and summary.statistics else {}
        for schema, channel, message, decoded in reader.iter_decoded_messages():
            t = official.setdefault(channel.topic, {"type": schema.name, "count": 0, "summary_count": stats.get(channel.id), "first": None, "last": None})
            t["count"] += 1
            d = digest(decoded)
            t["first"] = t["first"] or d
            t["last"] = d
        metadata = {m.name: dict(m.metadata) for m in reader.iter_metadata()}
    peer_env.emit({"rosbags": ros, "mcap": official, "metadata": metadata})


if __name__ == "__main__":
    main()
