"""ReplaySPStoreReplicas: a claim counts only once Redis's WAIT says that
many replicas have it. Against a real primary and a real replica
(redis-server --replicaof) on 127.0.0.1, two httpd replicas in front.

Shown here: acknowledged sign-ins (the claim is on the replica when the
303 leaves), a replica that stalls or is gone (503, RSP01048, the claim
kept on the primary: the same response is refused afterwards), the
monitor's alarms (RSP02012 when sign-ins are refused for want of
replicas, RSP02014 when they are back), and the configurations refused at
configtest (RSP01049). The failover runs (Sentinel) are not here.
"""

import os
import time

import pytest

import common
import httpd_fleet
from common import HarnessError
from http_client import post_acs, session_cookie
from httpd_fleet import Httpd, sp_conf_body
from redis_nodes import RedisServer
from idp_tools import Saml
from test_fleet import PAGE

TIMEOUT_MS = 1500
WAIT_MS = 500
TAG = {"unacked": "RSP01048", "config": "RSP01049", "replicas": "RSP02012",
       "replicas_ok": "RSP02014"}


class Replica(RedisServer):
    """redis-server replicating from primary."""

    def __init__(self, workdir, primary):
        super().__init__(workdir)
        self.primary = primary

    def argv(self):
        return super().argv() + ["--replicaof", "127.0.0.1", str(self.primary.port)]


def replicas_online(primary):
    c = primary.client()
    try:
        info = c.call("INFO", "replication").decode()
    finally:
        c.close()
    return info.count("state=online")


def wait_online(primary, n, timeout=20):
    common.wait_for(lambda: replicas_online(primary) >= n, timeout,
                    what="%d replica(s) online" % n)


@pytest.fixture(scope="module")
def primary(workdir):
    r = RedisServer(os.path.join(workdir, "repl-primary"))
    r.start()
    yield r
    r.stop()


@pytest.fixture(scope="module")
def replica(workdir, primary):
    r = Replica(os.path.join(workdir, "repl-replica"), primary)
    r.start()
    wait_online(primary, 1)
    yield r
    r.resume()
    r.stop()


@pytest.fixture(scope="module")
def acked_fleet(workdir, module_so, sp_config, primary, replica):
    f = httpd_fleet.started_fleet(os.path.join(workdir, "repl-fleet"), module=module_so,
                                  store_url=primary.url, sp=sp_config, n_replicas=2, threads=8,
                                  start_servers=1,
                                  server_extra="ReplaySPStoreTimeout %d\n"
                                               "ReplaySPStoreReplicas 1 %d\n"
                                               "ReplaySPMonitorInterval 1\n" % (TIMEOUT_MS, WAIT_MS))
    yield f
    f.stop()


@pytest.fixture
def fleet_r(acked_fleet, primary, replica):
    """The replica running and in step before and after each test."""
    replica.resume()
    if not replica.running():
        replica.start()
    wait_online(primary, 1)
    time.sleep(1.5)                  # a monitor poll sees it in step
    acked_fleet.mark_logs()
    yield acked_fleet
    replica.resume()
    if not replica.running():
        replica.start()
    wait_online(primary, 1)


@pytest.fixture
def mint(idps, acked_fleet, testidp):
    return Saml(idps, acked_fleet.entity_id, acked_fleet.acs_url, testidp).mint


def lines_with(fleet, needle):
    return [l for ls in fleet.new_log_lines().values() for l in ls if needle in l]


def wait_line(fleet, needle, n, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = lines_with(fleet, needle)
        if len(found) >= n:
            return found
        time.sleep(0.2)
    raise AssertionError("no %d× %s within %ss: %r" % (n, needle, timeout, fleet.new_log_lines()))


@pytest.mark.expect_log("replay_refused")
def test_acknowledged_claims_are_on_the_replica_when_the_sign_in_succeeds(fleet_r, mint,
                                                                          primary, replica):
    rc = replica.client()
    try:
        for h in fleet_r.replicas:
            m = mint()
            r = post_acs(h.base_url, m.b64, relay_state=PAGE)
            assert r.status_code == 303, (r.status_code, r.text[:300])
            # WAIT returned: the replica has it, no waiting on our side
            assert rc.exists(m.key), "claim not on the replica when the 303 left"
            for other in fleet_r.replicas:
                assert post_acs(other.base_url, m.b64, relay_state=PAGE).status_code == 403
    finally:
        rc.close()


@pytest.mark.expect_log("replay_refused", TAG["unacked"], TAG["replicas"])
def test_stalled_replica_refuses_sign_ins_and_keeps_the_claim(fleet_r, mint, primary, replica):
    m = mint()
    replica.pause()
    try:
        t0 = time.monotonic()
        r = post_acs(fleet_r.replicas[0].base_url, m.b64, relay_state=PAGE)
        took = time.monotonic() - t0
    finally:
        replica.resume()
    assert r.status_code == 503, (r.status_code, r.text[:300])
    assert session_cookie(r)[0] is None
    assert WAIT_MS / 1000.0 <= took < TIMEOUT_MS / 1000.0 + 1, took
    line = wait_line(fleet_r, TAG["unacked"], 1)[0]
    assert ":error]" in line and "0 of the 1 replicas" in line, line
    assert primary.client().exists(m.key), "the claim was not kept"
    # kept: the same response is refused from now on, on every replica
    wait_online(primary, 1)
    for h in fleet_r.replicas:
        r = post_acs(h.base_url, m.b64, relay_state=PAGE)
        assert r.status_code == 403, (h.name, r.status_code)
    # and a fresh one signs in again
    r = post_acs(fleet_r.replicas[1].base_url, mint().b64, relay_state=PAGE)
    assert r.status_code == 303, (r.status_code, r.text[:300])


@pytest.mark.expect_log(TAG["unacked"], TAG["replicas"])
def test_no_replica_refuses_sign_ins_with_the_alarm_then_recovers(fleet_r, mint, primary,
                                                                  replica):
    replica.stop()
    common.wait_for(lambda: replicas_online(primary) == 0, 10, what="replica gone")
    for h in fleet_r.replicas:
        m = mint()
        r = post_acs(h.base_url, m.b64, relay_state=PAGE)
        assert r.status_code == 503, (h.name, r.status_code)
        assert primary.client().exists(m.key)
    alarms = wait_line(fleet_r, TAG["replicas"], len(fleet_r.replicas))
    assert all(":error]" in l and "asks for 1" in l for l in alarms), alarms
    replica.start()
    wait_online(primary, 1)
    wait_line(fleet_r, TAG["replicas_ok"], len(fleet_r.replicas))
    r = post_acs(fleet_r.replicas[0].base_url, mint().b64, relay_state=PAGE)
    assert r.status_code == 303, (r.status_code, r.text[:300])


@pytest.fixture
def repl_instance(workdir, module_so, sp_config):
    made = []

    def make(name, store_url, extra):
        h = Httpd(os.path.join(workdir, "repl-config", name), "repl-cfg-" + name,
                  modules=[("replay_sp_module", module_so)], log_level="warn",
                  threads=2, start_servers=1, body=sp_conf_body(store_url, sp_config, extra))
        made.append(h)
        return h
    yield make
    for h in made:
        h.stop()


@pytest.mark.parametrize("case,url,extra,says", [
    ("memcache", "memcache://127.0.0.1:11211", "ReplaySPStoreReplicas 1\n",
     "ReplaySPStoreReplicas needs a Redis store"),
    ("wait_too_long", "redis://127.0.0.1:6379/0",
     "ReplaySPStoreTimeout 300\nReplaySPStoreReplicas 1 300\n", "must be shorter"),
    ("count_text", "redis://127.0.0.1:6379/0", "ReplaySPStoreReplicas one\n",
     "ReplaySPStoreReplicas"),
    ("wait_zero", "redis://127.0.0.1:6379/0", "ReplaySPStoreReplicas 1 0\n",
     "ReplaySPStoreReplicas"),
])
def test_bad_replica_settings_refused_at_configtest(repl_instance, case, url, extra, says):
    h = repl_instance(case, url, extra)
    rc, out = h.configtest()
    assert rc != 0, "%s: configtest passed:\n%s" % (case, out)
    assert says in out, "%s: configtest output lacks %r:\n%s" % (case, says, out)
    with pytest.raises(HarnessError):
        h.start()
    h.gate_offset = h.log_size()


def test_good_replica_settings_pass_configtest(repl_instance):
    h = repl_instance("good", "redis://127.0.0.1:6379/0",
                      "ReplaySPStoreReplicas 2\nReplaySPStoreReplicas 1 250\n")
    rc, out = h.configtest()
    assert rc == 0 and "Syntax OK" in out, out
