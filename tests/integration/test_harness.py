"""Self-tests of the harness: they need no module (plain httpd, Redis,
memcached, the gate's line matching), so they tell a broken harness from a
broken module."""

import base64
import hashlib
import os

import pytest

import common
import http_client
import memcached_nodes
import redis_nodes
import stores
from httpd_fleet import Fleet, bad_log_lines
from redis_nodes import RedisError
from stores import claim_key, session_key


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
    r = redis_nodes.RedisServer(os.path.join(workdir, "redis-selftest"))
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
    assert not common.port_open(port)


def test_memcache_server_index_formula():
    """First 4 bytes of SHA-256(key), big-endian, mod N (prefixes from
    `printf %s KEY | openssl dgst -sha256`)."""
    for key, head in (("rsp:a:abc", "0875c0d3"), ("rsp:s:xyz", "83257524"), ("key", "2c70e12b")):
        for n in (1, 2, 3, 5):
            assert stores.memcache_server_index(key, n) == int(head, 16) % n, (key, n)


def test_memcached_server_and_client(workdir):
    m = memcached_nodes.MemcachedServer(os.path.join(workdir, "memcached-selftest"))
    m.start()
    try:
        c = m.client()
        assert c.version().startswith("1.6")
        settings = c.stats_settings()
        assert settings["evictions"] == "off"              # -M
        assert settings["slab_reassign"] == "no"           # -o no_slab_reassign
        assert settings["udpport"] == "0"
        assert c.add("rsp:a:k", "v1", 100) is True
        assert c.add("rsp:a:k", "v2", 100) is False         # add: only if absent
        assert c.get("rsp:a:k") == b"v1"
        assert c.ttl("rsp:a:k") in (99, 100)
        r = c.mg("rsp:a:k", "v", "t", "c")
        assert r["value"] == b"v1" and int(r["flags"]["c"]) > 0
        assert c.mg("rsp:a:none", "t") is None and c.ttl("rsp:a:none") is None
        assert c.set("rsp:s:k", b"x" * 2000, 0) and c.ttl("rsp:s:k") == -1
        assert c.keys("rsp:") == ["rsp:a:k", "rsp:s:k"]
        assert c.keys("rsp:a:") == ["rsp:a:k"]
        assert c.delete("rsp:s:k") is True and c.delete("rsp:s:k") is False
        with pytest.raises(memcached_nodes.MemcacheError):
            c.command("nosuchcommand")
        pid, port = m.pid, m.port
        assert int(c.stats()["pid"]) == pid
        # paused: connections are accepted, nothing answers
        m.pause()
        slow = m.client(timeout=0.3)
        with pytest.raises(OSError):
            slow.version()
        slow.close()
        m.resume()
        assert c.flush_all() and c.keys("") == []
        m.restart()
        assert m.port == port and m.pid != pid
        c2 = m.client()
        assert c2.get("rsp:a:k") is None
        c2.close()
        c.close()
    finally:
        m.stop()
    assert not common.port_open(port)


def test_plain_fleet_round_robin(workdir):
    """Three plain replicas (no module) behind the balancer: requests are
    spread round-robin, no stickiness; stop/start by PID works."""
    f = Fleet(os.path.join(workdir, "plain-fleet"), module=None)
    f.start()
    try:
        seen = {}
        for _ in range(12):
            r = http_client.get(f.public + "/whoami.txt", timeout=10)
            assert r.status_code == 200
            seen[r.headers["X-RSP-Replica"]] = seen.get(r.headers["X-RSP-Replica"], 0) + 1
        assert seen == {"replica1": 4, "replica2": 4, "replica3": 4}
        pids = [h.pid() for h in f.instances]
        assert all(common.pid_alive(p) for p in pids)
        rc, out = f.replicas[0].configtest()
        assert rc == 0 and "Syntax OK" in out
    finally:
        f.stop()
    assert not any(common.pid_alive(p) for p in pids)
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
