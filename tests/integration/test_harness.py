"""Self-tests of the harness: they need no module (plain httpd, Redis, the
gate's line matching), so they tell a broken harness from a broken module."""

import base64
import hashlib
import os

import pytest

import harness
from harness import Fleet, RedisError, bad_log_lines, claim_key, session_key


def test_claim_key_derivation():
    k = claim_key("https://idp.example/idp", "_abc")
    digest = hashlib.sha256(b"https://idp.example/idp\x00_abc").digest()
    assert k == "rsp:a:" + base64.urlsafe_b64encode(digest).decode().rstrip("=")
    assert len(k) == len("rsp:a:") + 43
    assert claim_key("https://idp2.example/idp", "_abc") != k
    # the 0x00 separator: ("ab", "c") and ("a", "bc") differ
    assert claim_key("ab", "c") != claim_key("a", "bc")
    assert session_key("v").startswith("rsp:s:") and len(session_key("v")) == 6 + 43


def test_redis_server_and_resp_client(workdir):
    r = harness.RedisServer(os.path.join(workdir, "redis-selftest"))
    r.start()
    try:
        c = r.client()
        assert c.call("SET", "k", "v", "NX", "PX", 5000) == "OK"
        assert c.call("SET", "k", "v", "NX", "PX", 5000) is None
        assert 4000 < c.pttl("k") <= 5000
        assert c.info("memory")["maxmemory_policy"] == "noeviction"
        assert r.client(unix=True).get("k") == b"v"
        with pytest.raises(RedisError):
            c.call("NOSUCHCOMMAND")
        port = r.port
        r.restart()
        assert r.port == port
        c2 = r.client()
        assert c2.ping() and c2.get("k") is None   # no persistence
        c2.close()
        c.close()
    finally:
        r.stop()
    assert not harness.port_open(port)


def test_plain_fleet_round_robin(workdir):
    """Three plain replicas (no module) behind the balancer: requests are
    spread round-robin, no stickiness; stop/start by PID works."""
    f = Fleet(os.path.join(workdir, "plain-fleet"), module=None)
    f.start()
    try:
        seen = {}
        for _ in range(12):
            r = harness.get(f.public + "/whoami.txt", timeout=10)
            assert r.status_code == 200
            seen[r.headers["X-RSP-Replica"]] = seen.get(r.headers["X-RSP-Replica"], 0) + 1
        assert seen == {"replica1": 4, "replica2": 4, "replica3": 4}
        pids = [h.pid() for h in f.instances]
        assert all(harness.pid_alive(p) for p in pids)
        rc, out = f.replicas[0].configtest()
        assert rc == 0 and "Syntax OK" in out
    finally:
        f.stop()
    assert not any(harness.pid_alive(p) for p in pids)
    assert not any(h.running() for h in f.instances)


def test_gate_line_matching():
    lines = [
        "[Mon Nov 30 09:20:27.5 2026] [mpm_event:notice] [pid 1:tid 1] AH00489: resuming",
        "[Mon Nov 30 09:20:27.5 2026] [replay_sp:error] [pid 1:tid 2] [client 127.0.0.1:1] RSP01001: replay refused",
        "[Mon Nov 30 09:20:27.5 2026] [replay_sp:warn] [pid 1:tid 2] RSP01004: response refused check=audience",
        "[Mon Nov 30 09:20:27.5 2026] [replay_sp:notice] [pid 1:tid 2] RSP01002: sign-in accepted",
        "[Mon Nov 30 09:20:27.5 2026] [core:notice] [pid 1:tid 1] AH00052: child pid 7 exit signal Segmentation fault (11)",
        "(process:123): Lasso-WARNING **: 09:20:27.5: something",
        "[Mon Nov 30 09:20:27.5 2026] [proxy_http:error] [pid 1:tid 3] AH01102: error reading status line",
    ]
    assert len(bad_log_lines(lines)) == 5
    assert len(bad_log_lines(lines, ("RSP01001", "RSP01004"))) == 3
    assert bad_log_lines(lines[:1] + lines[3:4]) == []
