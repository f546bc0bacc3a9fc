"""The store monitor: one poller per host reads the store's own statistics
and writes alarms to the error log; counters are shown by the status
handler and mod_status. Each test has its own Redis and its own httpd (the
monitor polls every second here), so what one test does to its store cannot
reach another test's log."""

import os
import re
import time

import pytest

import common
import http_client
import httpd_fleet
import memcached_nodes
import redis_nodes
from http_client import post_acs, session_cookie
from httpd_fleet import Httpd
from redis_nodes import RedisServer

INTERVAL = 1          # ReplaySPMonitorInterval in these tests
TAG = {
    "policy": "RSP02001", "policy_ok": "RSP02002", "eviction": "RSP02003",
    "loss": "RSP02004", "refusals": "RSP02005", "headroom": "RSP02006",
    "headroom_ok": "RSP02007", "unreachable": "RSP02008", "reachable": "RSP02009",
    "role": "RSP02010", "role_ok": "RSP02011", "fail_open": "RSP01025",
}


class TunedRedis(RedisServer):
    """A RedisServer with extra command-line options (later ones win)."""

    def __init__(self, workdir, extra=()):
        super().__init__(workdir)
        self.extra = list(extra)

    def argv(self):
        return super().argv() + self.extra


class Watched:
    """One httpd with the monitor on, in front of its own Redis."""

    def __init__(self, root, module_so, redis, sp_config, extra=""):
        self.redis = redis
        self.sp = sp_config
        self.h = Httpd(root, os.path.basename(root), modules=[
            ("replay_sp_module", module_so), "status"],
            log_level="warn replay_sp:info", threads=4, start_servers=1)
        # The status locations come after <Location />, so that their
        # Require wins over the protected tree's.
        self.h.body = httpd_fleet.sp_conf_body(
            redis.url, sp_config, monitor=True,
            server_extra="ReplaySPMonitorInterval %d\nReplaySPStoreTimeout 500\n%s\n"
                         % (INTERVAL, extra)) + (
            "<Location /rsp-status>\n    SetHandler replay-sp-status\n"
            "    Require all granted\n</Location>\n"
            "<Location /server-status>\n    SetHandler server-status\n"
            "    Require all granted\n</Location>\n")
        self.h.write_file("index.html", "watched\n")
        self.acs = self.h.base_url + httpd_fleet.ENDPOINT + "/acs"

    def lines(self, tag):
        return [l for l in self.h.new_log_lines() if tag in l]

    def wait_for_line(self, tag, timeout=4 * INTERVAL + 2, count=1):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.lines(tag)
            if len(found) >= count:
                return found
            time.sleep(0.1)
        raise AssertionError("no %d× %s within %ss; log:\n%s"
                             % (count, tag, timeout, "\n".join(self.h.new_log_lines()[-20:])))

    def metrics(self):
        text = http_client.get(self.h.base_url + "/rsp-status").text
        return {m.group(1): float(m.group(2))
                for m in re.finditer(r"^(replay_sp_\w+) (\S+)$", text, re.M)}

    def wait_for_poll(self, after=0.0, timeout=4 * INTERVAL + 2):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.metrics().get("replay_sp_monitor_last_poll_timestamp_seconds", 0) > after:
                return
            time.sleep(0.1)
        raise AssertionError("the monitor did not poll within %ss" % timeout)

    def sign_in(self, idp):
        r = post_acs(self.acs, idp.mint(self.sp["entity_id"], self.acs))
        return r


@pytest.fixture
def watched(request, workdir, module_so, sp_config):
    """watched(redis_args=(), extra="", memcached_options=None) -> a started
    Watched, in front of a Redis, or of a memcached when memcached_options
    is given."""
    made = []

    def make(redis_args=(), extra="", memcached_options=None):
        n = len(made)
        # short: a unix socket path must stay under 108 bytes
        base = os.path.join(workdir, "mon", "%x-%d" % (abs(hash(request.node.name)) % 65536, n))
        if memcached_options is not None:
            redis = memcached_nodes.MemcachedServer(os.path.join(base, "mc"),
                                                    options=memcached_options)
        else:
            redis = TunedRedis(os.path.join(base, "redis"), redis_args)
        redis.start()
        w = Watched(os.path.join(base, "httpd"), module_so, redis, sp_config, extra)
        made.append(w)
        w.h.start()
        w.h.mark_log()
        return w

    yield make
    for w in made:
        w.h.stop()
        w.redis.stop()


def fill(client, until, limit=20000, size=20000):
    """SET big values until until(info) is true (bounded)."""
    blob = "x" * size
    for i in range(limit):
        try:
            client.call("SET", "filler:%d" % i, blob)
        except redis_nodes.RedisError:
            pass
        if i % 20 == 0 and until(client.info()):
            return i
    raise AssertionError("the store never reached the state asked for")


@pytest.mark.expect_log("RSP02001", "RSP02003", "RSP02006")
def test_policy_alarm_at_startup_and_eviction_alarm_with_counts(watched):
    w = watched(("--maxmemory", "2mb", "--maxmemory-policy", "allkeys-lru"))
    policy = w.wait_for_line(TAG["policy"])
    assert len(policy) == 1 and "allkeys-lru" in policy[0]
    w.wait_for_poll()
    c = w.redis.client()
    fill(c, lambda info: int(info["evicted_keys"]) > 0)
    evicted = int(c.info()["evicted_keys"])
    # Within two intervals: every eviction counted, in one or more lines.
    deadline = time.monotonic() + 2 * INTERVAL + 2
    while True:
        lines = w.lines(TAG["eviction"])
        counted = sum(int(re.search(r"evicted (\d+) keys", l).group(1)) for l in lines)
        if counted >= evicted or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert counted == evicted, (counted, evicted, lines)
    assert all("may be replayed until" in l for l in lines)
    assert w.metrics()["replay_sp_store_evictions_seen_total"] == evicted
    assert len(w.lines(TAG["policy"])) == 1      # said once, not at every poll


@pytest.mark.expect_log("RSP02004", "RSP02008", "RSP02009")
def test_restart_raises_the_loss_alarm(watched, idps):
    w = watched()
    assert w.sign_in(idps["idp1"]).status_code == 303
    w.wait_for_poll()
    w.redis.stop()
    w.redis.start()
    loss = w.wait_for_line(TAG["loss"])
    assert "restarted" in loss[0] and "replays possible until" in loss[0]


@pytest.mark.expect_log("RSP02004")
def test_resetstat_raises_the_loss_alarm(watched):
    w = watched()
    w.wait_for_poll()
    first = w.metrics()["replay_sp_monitor_last_poll_timestamp_seconds"]
    w.wait_for_poll(after=first)      # a second poll: counters now compared
    w.redis.client().call("CONFIG", "RESETSTAT")
    loss = w.wait_for_line(TAG["loss"])
    assert "reset" in loss[0]


@pytest.mark.expect_log("RSP02001", "RSP02002")
def test_policy_changed_at_run_time(watched):
    w = watched()
    w.wait_for_poll()
    assert w.lines(TAG["policy"]) == []
    c = w.redis.client()
    c.call("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
    assert "allkeys-lru" in w.wait_for_line(TAG["policy"])[0]
    c.call("CONFIG", "SET", "maxmemory-policy", "volatile-ttl")
    assert "volatile-ttl" in w.wait_for_line(TAG["policy"], count=2)[1]
    c.call("CONFIG", "SET", "maxmemory-policy", "noeviction")
    w.wait_for_line(TAG["policy_ok"])


@pytest.mark.expect_log("RSP02001", "replay_refused")
def test_config_renamed_everything_works_from_info(watched, idps):
    """A managed Redis without CONFIG: the monitor still reads the policy
    (from INFO memory) and sign-ins still work."""
    w = watched(("--rename-command", "CONFIG", "", "--maxmemory-policy", "allkeys-lru"))
    with pytest.raises(redis_nodes.RedisError):
        w.redis.client().call("CONFIG", "GET", "maxmemory")
    assert "allkeys-lru" in w.wait_for_line(TAG["policy"])[0]
    m = idps["idp1"].mint(w.sp["entity_id"], w.acs)
    assert post_acs(w.acs, m).status_code == 303
    assert post_acs(w.acs, m).status_code == 403


@pytest.mark.expect_log("RSP02005", "RSP02006", "RSP02007", "claim_store_error")
def test_full_store_refuses_sign_ins_and_raises_the_refusal_alarm(watched, idps):
    w = watched()
    w.wait_for_poll()
    c = w.redis.client()
    c.call("CONFIG", "SET", "maxmemory", "1")
    try:
        for _ in range(3):
            r = w.sign_in(idps["idp1"])
            assert r.status_code == 503 and session_cookie(r)[0] is None
        assert "is full" in w.wait_for_line(TAG["refusals"])[0]
        w.wait_for_line(TAG["headroom"])
    finally:
        c.call("CONFIG", "SET", "maxmemory", redis_nodes.REDIS_MAXMEMORY)
    w.wait_for_line(TAG["headroom_ok"])
    assert w.sign_in(idps["idp1"]).status_code == 303


@pytest.mark.expect_log("RSP02008", "RSP02009", "RSP02004", "claim_store_error")
def test_unreachable_once_then_recovered_once(watched, idps):
    w = watched()
    w.wait_for_poll()
    w.redis.stop()
    time.sleep(4 * INTERVAL + 0.5)            # four polls while it is down
    assert w.sign_in(idps["idp1"]).status_code == 503
    assert len(w.lines(TAG["unreachable"])) == 1
    w.redis.start()
    back = w.wait_for_line(TAG["reachable"])
    assert len(back) == 1 and "after" in back[0]
    assert len(w.lines(TAG["unreachable"])) == 1


@pytest.mark.expect_log("RSP02010", "RSP02011", "claim_store_error")
def test_replica_role_alarm(watched, idps):
    w = watched()
    w.wait_for_poll()
    c = w.redis.client()
    c.call("REPLICAOF", "127.0.0.1", str(common.free_port()))
    try:
        w.wait_for_line(TAG["role"])
        assert w.sign_in(idps["idp1"]).status_code == 503
    finally:
        c.call("REPLICAOF", "NO", "ONE")
    w.wait_for_line(TAG["role_ok"])


@pytest.mark.expect_log("replay_refused")
def test_status_counters_equal_what_happened(watched, idps):
    w = watched()
    n, m = 5, 3
    minted = [idps["idp1"].mint(w.sp["entity_id"], w.acs) for _ in range(n)]
    for b64 in minted:
        assert post_acs(w.acs, b64).status_code == 303
    for b64 in minted[:m]:
        assert post_acs(w.acs, b64).status_code == 403
    got = w.metrics()
    assert got["replay_sp_claims_won_total"] == n
    assert got["replay_sp_replays_refused_total"] == m
    assert got["replay_sp_store_errors_total"] == 0
    assert got["replay_sp_fail_open_total"] == 0
    assert got["replay_sp_claim_latency_seconds_count"] == n + m
    w.wait_for_poll()
    got = w.metrics()
    assert got["replay_sp_store_up"] == 1
    assert got["replay_sp_store_limit_bytes"] == 256 * 1024 * 1024
    assert 0 < got["replay_sp_store_used_bytes"] < got["replay_sp_store_limit_bytes"]
    auto = http_client.get(w.h.base_url + "/server-status?auto").text
    assert "ReplaySPClaimsWon: %d" % n in auto
    assert "ReplaySPReplaysRefused: %d" % m in auto
    # each metadata file of the SP: a line of ?auto, a row of the page
    assert re.search(r"^ReplaySPMetadataSource0: sp=\S+ file=\S+idp1\S* generation=1 "
                     r"idps=1 age=\d+ failing=no$", auto, re.M), auto
    html = http_client.get(w.h.base_url + "/server-status").text
    assert "mod_replay_sp" in html
    assert "<h3>Metadata sources</h3>" in html and "(file)</td><td>1</td><td>1</td>" in html


def test_lasso_servers_built_when_the_child_starts(watched, idps):
    """One child of 4 threads (MinSpareThreads 1: no second child for a
    sequential client): its 4 Lasso servers are built before the first
    request, and no sign-in, login or logout builds another."""
    w = watched(extra="MinSpareThreads 1")
    assert w.metrics()["replay_sp_lasso_servers_built_total"] == 4
    for _ in range(6):
        r = w.sign_in(idps["idp1"])
        assert r.status_code == 303
        cookie = http_client.session_cookie(r)[0]
        assert http_client.get(w.h.base_url + "/index.html", cookie=cookie).status_code == 200
        assert http_client.get(w.h.base_url + httpd_fleet.ENDPOINT + "/login").status_code == 302
        assert http_client.get(w.h.base_url + httpd_fleet.ENDPOINT + "/logout",
                               cookie=cookie).status_code in (302, 303)
    assert w.metrics()["replay_sp_lasso_servers_built_total"] == 4


@pytest.mark.expect_log("RSP01025")
def test_fail_open_accepts_without_a_claim_and_says_so(watched, idps):
    """ReplaySPOnStoreFailure open: a store user that may write sessions
    (and their logout index)
    but not claims; every sign-in is accepted without a claim, each with an
    error line, and counted."""
    w = watched(extra="ReplaySPOnStoreFailure open")
    c = w.redis.client()
    c.call("ACL", "SETUSER", "sessionsonly", "on", ">pw", "~rsp:s:*", "~rsp:n:*", "+@all")
    w.h.stop()
    w.h.body = w.h.body.replace(w.redis.url, "redis://sessionsonly:pw@127.0.0.1:%d/0" % w.redis.port)
    w.h.start()
    w.h.mark_log()
    b64 = idps["idp1"].mint(w.sp["entity_id"], w.acs)
    assert post_acs(w.acs, b64).status_code == 303
    assert post_acs(w.acs, b64).status_code == 303      # no claim: not detected
    lines = w.lines(TAG["fail_open"])
    assert len(lines) == 2 and "WITHOUT a claim" in lines[0]
    got = w.metrics()
    assert got["replay_sp_fail_open_total"] == 2
    assert got["replay_sp_claims_won_total"] == 0


# --------------------------------------------------------------------------
# memcached
# --------------------------------------------------------------------------

@pytest.mark.expect_log("RSP02001")
@pytest.mark.parametrize("options, says", [
    (("-U", "0", "-m", "64", "-o", "no_slab_reassign"), "evictions on"),
    (("-U", "0", "-m", "64", "-M"), "slab page mover on"),
])
def test_memcached_that_may_evict_raises_the_policy_alarm(watched, options, says):
    w = watched(memcached_options=options)
    policy = w.wait_for_line(TAG["policy"])
    assert len(policy) == 1 and says in policy[0]


def test_memcached_configured_as_advised_raises_nothing(watched, idps):
    w = watched(memcached_options=memcached_nodes.MEMCACHED_DEFAULT_OPTIONS)
    w.wait_for_poll()
    first = w.metrics()["replay_sp_monitor_last_poll_timestamp_seconds"]
    assert w.sign_in(idps["idp1"]).status_code == 303
    w.wait_for_poll(after=first)
    got = w.metrics()
    assert got["replay_sp_store_up"] == 1
    assert got["replay_sp_store_limit_bytes"] == 64 * 1024 * 1024
    assert got["replay_sp_claims_won_total"] == 1


@pytest.mark.expect_log("RSP02004", "RSP02008", "RSP02009")
def test_memcached_restart_raises_the_loss_alarm(watched, idps):
    w = watched(memcached_options=memcached_nodes.MEMCACHED_DEFAULT_OPTIONS)
    assert w.sign_in(idps["idp1"]).status_code == 303
    w.wait_for_poll()
    w.redis.restart()
    loss = w.wait_for_line(TAG["loss"])
    assert "restarted" in loss[0] and "claims made before" in loss[0]
