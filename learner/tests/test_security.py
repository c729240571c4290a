"""CURVE admission, the public-bind guard and package signatures (docs/security.md), with pyzmq and python3-cryptography."""

import base64
import json
import os

import pytest
import zmq
import zmq.auth

from rlft_learner.security import (Authenticator, check_bind, is_loopback_endpoint, load_curve_server, load_signing_key,
                                   make_curve_server, sign_package)


def test_loopback_endpoints_and_the_public_bind_guard():
    for ep in ("tcp://127.0.0.1:5555", "tcp://[::1]:5555", "tcp://localhost:1", "ipc:///tmp/x", "inproc://a"):
        assert is_loopback_endpoint(ep), ep
    for ep in ("tcp://*:5555", "tcp://0.0.0.0:5555", "tcp://192.168.1.4:5555", "tcp://eth0:5555"):
        assert not is_loopback_endpoint(ep), ep
    check_bind("tcp://127.0.0.1:5555", "experience_bind", secured=False, insecure_public_bind=False)
    check_bind("tcp://*:5555", "experience_bind", secured=True, insecure_public_bind=False)
    check_bind("tcp://*:5555", "experience_bind", secured=False, insecure_public_bind=True)
    with pytest.raises(ValueError, match=r"experience_bind 'tcp://0.0.0.0:5555' listens beyond this machine without CURVE.*curve_secret"):
        check_bind("tcp://0.0.0.0:5555", "experience_bind", secured=False, insecure_public_bind=False)


def _keys(tmp_path):
    d = tmp_path / "keys"
    (d / "authorized").mkdir(parents=True)
    zmq.auth.create_certificates(str(d), "learner")
    pub, _ = zmq.auth.create_certificates(str(d), "robot")
    os.replace(pub, d / "authorized" / "robot.key")
    zmq.auth.create_certificates(str(d), "rogue")
    return d


def _client(ctx, d, name, endpoint):
    pub, sec = zmq.auth.load_certificate(str(d / f"{name}.key_secret"))
    server_pub, _ = zmq.auth.load_certificate(str(d / "learner.key"))
    s = ctx.socket(zmq.DEALER)
    s.linger = 0
    s.curve_publickey, s.curve_secretkey, s.curve_serverkey = pub, sec, server_pub
    s.rcvtimeo = 1500
    s.connect(endpoint)
    return s


def test_curve_admits_authorized_robots_only(tmp_path):
    d = _keys(tmp_path)
    server = load_curve_server(str(d / "learner.key_secret"), str(d / "authorized"))
    ctx = zmq.Context()
    auth = Authenticator(ctx, server.authorized_dir)
    router = ctx.socket(zmq.ROUTER)
    router.linger = 0
    make_curve_server(router, server)
    port = router.bind_to_random_port("tcp://127.0.0.1")
    ep = f"tcp://127.0.0.1:{port}"
    try:
        good, rogue = _client(ctx, d, "robot", ep), _client(ctx, d, "rogue", ep)
        good.send(b"hi")
        rogue.send(b"hi")
        assert router.poll(3000)
        ident, msg = router.recv_multipart()
        assert msg == b"hi"
        assert not router.poll(1000), "the rogue client's message must never arrive"
        router.send_multipart([ident, b"ok"])
        assert good.recv() == b"ok"
        good.close()
        rogue.close()
    finally:
        router.close()
        auth.stop()
        ctx.term()


def test_missing_or_wrong_key_files_name_the_fix(tmp_path):
    d = _keys(tmp_path)
    with pytest.raises(ValueError, match="rlft keys"):
        load_curve_server(str(d / "nope.key_secret"), str(d / "authorized"))
    with pytest.raises(ValueError, match="holds only a public key"):
        load_curve_server(str(d / "learner.key"), str(d / "authorized"))
    with pytest.raises(ValueError, match="curve_authorized"):
        load_curve_server(str(d / "learner.key_secret"), str(d / "missing"))


def test_sign_package_signs_policy_json_bytes(tmp_path):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    pem = tmp_path / "learner.sign.pem"
    pem.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "policy.json").write_text(json.dumps({"version": "res-x", "sha256": {}}))
    sig = sign_package(str(pkg), load_signing_key(str(pem)))
    on_disk = json.loads((pkg / "policy.sig").read_text())
    assert on_disk == sig and sig["alg"] == "ed25519" and len(sig["key_id"]) == 16
    key.public_key().verify(base64.b64decode(sig["signature"]), (pkg / "policy.json").read_bytes())
    with pytest.raises(ValueError, match="ed25519|sign_key"):
        (tmp_path / "bad.pem").write_text("not a key")
        load_signing_key(str(tmp_path / "bad.pem"))
