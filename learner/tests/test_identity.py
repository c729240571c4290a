"""Who speaks for a robot (issue 24 item 3): a second peer saying it is `sim-0` used to be accepted, after which the
real sim-0's transitions were dropped as duplicates. Now a robot id belongs to the connection that said hello first
while it is open and talking, and with CURVE to the keys admitted for it (authorized/<robot_id>.key). Two real pyzmq
peers per test, plus the CURVE handshake through pyzmq's ZAP handler."""

import os
import time

import zmq
import zmq.auth

from door import Door
from rlft_learner.transport.protocol import encode
from rlft_learner.transport.security import load_curve_server
from test_online import hello, transitions
from test_server import ask, client


def heartbeat(seq, robot):
    return encode({"type": "heartbeat", "seq": seq, "robot_id": robot})


def test_a_second_peer_claiming_a_live_robot_id_is_refused_and_the_real_robots_data_is_kept(tmp_path):
    with Door(tmp_path) as door:
        real, impostor = client(door.endpoint), client(door.endpoint)
        try:
            assert ask(real, hello(0, robot="sim-0"))["type"] == "welcome"
            assert ask(real, transitions(1, 0, 5, robot="sim-0"))["acked_seq"] == 4
            # The impostor says hello as sim-0: refused with a reason that names the fix.
            r = ask(impostor, hello(0, robot="sim-0"))
            assert r["type"] == "error" and "robot_id 'sim-0' is in use by another connection" in r["reason"], r
            assert "own learner.robot_id" in r["reason"]
            # The real robot was told (an unsolicited error with seq -1, which its bridge logs and drops).
            notice = real.recv_multipart()
            assert b"said hello as robot_id 'sim-0' and was refused" in notice[0]
            # Its transitions (seq 5.. would have made the real robot's 5..9 "duplicates") and heartbeats are refused.
            r = ask(impostor, transitions(1, 5, 5, robot="sim-0"))
            assert r["type"] == "error" and "did not say hello as it" in r["reason"]
            assert ask(impostor, heartbeat(2, "sim-0"))["type"] == "error"
            # The real robot's next batch is stored in full: nothing dropped as a duplicate.
            assert ask(real, transitions(2, 5, 5, robot="sim-0"))["acked_seq"] == 9
            assert door.seqs(0) == list(range(10))
            assert door.server.stats.refused == 1
            # The impostor may still be a robot of its own.
            assert ask(impostor, hello(3, robot="sim-1"))["type"] == "welcome"
            assert ask(impostor, transitions(4, 0, 3, robot="sim-1"))["acked_seq"] == 2
            assert door.seqs(1) == [0, 1, 2]
        finally:
            real.close()
            impostor.close()


def test_a_robot_that_reconnects_takes_its_id_back_once_the_old_connection_is_closed(tmp_path):
    with Door(tmp_path) as door:
        old = client(door.endpoint)
        assert ask(old, hello(0, robot="sim-0"))["type"] == "welcome"
        assert ask(old, transitions(1, 0, 4, robot="sim-0"))["acked_seq"] == 3
        old.close()  # the robot's bridge closes its socket and opens a new one after a lost link
        new = client(door.endpoint)
        try:
            deadline = time.monotonic() + 10
            while True:  # ZeroMQ notices the closed connection within milliseconds; the bridge retries hello anyway
                w = ask(new, hello(0, robot="sim-0"))
                if w["type"] == "welcome" or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            assert w["type"] == "welcome" and w["acked_seq"] == 3
            assert ask(new, transitions(2, 4, 2, robot="sim-0"))["acked_seq"] == 5
        finally:
            new.close()


def test_a_silent_connection_loses_its_claim_after_three_heartbeat_periods(tmp_path):
    with Door(tmp_path, heartbeat_sec=0.1) as door:
        quiet, other = client(door.endpoint), client(door.endpoint)
        try:
            assert ask(quiet, hello(0, robot="sim-0"))["type"] == "welcome"
            assert ask(other, hello(0, robot="sim-0"))["type"] == "error"  # the holder just spoke
            assert b"was refused" in quiet.recv_multipart()[0]  # ... and is told
            time.sleep(door.server.stale_after_s + 0.2)  # a half-open link: open but silent past the robot's own timeout
            assert ask(other, hello(1, robot="sim-0"))["type"] == "welcome"
            r = ask(quiet, transitions(1, 0, 2, robot="sim-0"))
            assert r["type"] == "error" and "did not say hello as it" in r["reason"]
        finally:
            quiet.close()
            other.close()


def test_invented_robot_ids_are_bounded_and_never_checkpointed(tmp_path):
    with Door(tmp_path, heartbeat_sec=0.05, max_robots=8) as door:
        sock = client(door.endpoint)
        real = client(door.endpoint)
        try:
            assert ask(real, hello(0, robot="sim-0"))["type"] == "welcome"
            assert ask(real, transitions(1, 0, 2, robot="sim-0"))["acked_seq"] == 1
            refused = 0
            for i in range(200):  # one connection inventing 200 ids, each with a hello and nothing else
                refused += ask(sock, hello(i, robot=f"ghost-{i}"))["type"] == "error"
            assert len(door.server.robots) <= 8 and refused == 0  # ids with nothing to keep make room for the next
            assert set(door.server.robot_state()) == {"sim-0"}  # a checkpoint holds only robots with transitions
            assert ask(real, heartbeat(2, "sim-0"))["acked_seq"] == 1
            time.sleep(door.server.stale_after_s + 0.1)  # the last invented id's connection falls silent
            # Ids that hold transitions count against max_robots: the ninth is refused with the key to raise.
            for i in range(7):
                c = client(door.endpoint)
                assert ask(c, hello(0, robot=f"r{i}"))["type"] == "welcome"
                assert ask(c, transitions(1, 0, 1, robot=f"r{i}"))["acked_seq"] == 0
                c.close()
            r = ask(sock, hello(999, robot="one-too-many"))
            assert r["type"] == "error" and "max_robots = 8 robot ids" in r["reason"]
            # A checkpoint written by an older learner with invented ids: they are dropped on restore.
            door.server.restore({"sim-0": {"acked_seq": 1, "index": 0, "config_hash": ""},
                                 **{f"ghost-{i}": {"acked_seq": -1, "index": i + 1, "config_hash": ""} for i in range(200)}})
            assert list(door.server.robots) == ["sim-0"]
        finally:
            sock.close()
            real.close()


def _curve_keys(tmp_path):
    """learner + robots sim-0 and sim-1, laid out as `rlft keys --robot sim-0 sim-1` does (authorized/<robot>.key)."""
    d = tmp_path / "keys"
    (d / "authorized").mkdir(parents=True)
    zmq.auth.create_certificates(str(d), "learner")
    for robot in ("sim-0", "sim-1"):
        pub, _ = zmq.auth.create_certificates(str(d), robot)
        os.link(pub, d / "authorized" / f"{robot}.key")
    return d


def _curve_client(d, name, endpoint):
    pub, sec = zmq.auth.load_certificate(str(d / f"{name}.key_secret"))
    s = zmq.Context.instance().socket(zmq.DEALER)
    s.linger = 0
    s.rcvtimeo = 5000
    s.curve_publickey, s.curve_secretkey = pub, sec
    s.curve_serverkey = zmq.auth.load_certificate(str(d / "learner.key"))[0]
    s.connect(endpoint)
    return s


def test_with_curve_a_key_speaks_only_for_the_robot_its_file_names(tmp_path):
    d = _curve_keys(tmp_path)
    curve = load_curve_server(str(d / "learner.key_secret"), str(d / "authorized"))
    assert sorted(n for names in curve.robots.values() for n in names) == ["sim-0", "sim-1"]
    with Door(tmp_path, curve=curve) as door:
        sim0, sim1 = _curve_client(d, "sim-0", door.endpoint), _curve_client(d, "sim-1", door.endpoint)
        try:
            # sim-1's key claiming sim-0, before the real sim-0 is even connected: refused by key, not by timing.
            r = ask(sim1, hello(0, robot="sim-0"))
            assert r["type"] == "error" and "not admitted for this connection's CURVE key (it is admitted as sim-1)" in r["reason"]
            assert "authorized/<robot_id>.key" in r["reason"]
            assert ask(sim0, hello(0, robot="sim-0"))["type"] == "welcome"
            assert ask(sim0, transitions(1, 0, 3, robot="sim-0"))["acked_seq"] == 2
            assert ask(sim1, hello(1, robot="sim-1"))["type"] == "welcome"
            r = ask(sim1, transitions(2, 3, 3, robot="sim-0"))
            assert r["type"] == "error" and "did not say hello as it" in r["reason"]
            assert door.seqs(0) == [0, 1, 2]
        finally:
            sim0.close()
            sim1.close()
