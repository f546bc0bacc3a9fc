"""Redis under Sentinel: redis+sentinel:// against a real master, two real
replicas and three real sentinels (redis-server --sentinel) on 127.0.0.1,
two httpd replicas in front.

Shown here: sign-ins through the master the sentinels name; the URL's
errors told apart (no sentinel answers, the sentinels do not know the
master); a failover — the master SIGKILLed during a stream of sign-ins,
Sentinel promotes a replica — answered with 503 while it lasts and then
sign-ins on the new master, without restarting httpd, and the monitor's
failover alarm (RSP02015) on every httpd replica; and what a failover
loses: claims the replicas had not received (forced by stopping them
before the master is killed) are accepted again without
ReplaySPStoreReplicas, and never with it (0 replays), the counts printed.
"""

import os
import signal
import time

import pytest

import common
import http_client
import httpd_fleet
import redis_nodes
from common import free_port
from redis_nodes import RedisServer
from idp_tools import Saml
from test_fleet import PAGE
from test_replicas import Replica, replicas_online

MASTER = "rspmaster"
TIMEOUT_MS = 1000
FAILOVER_BOUND = 40.0        # seconds: down-after 1 s, election, promotion
TAG = {"failover": "RSP02015", "unacked": "RSP01048"}


class Sentinel:
    """redis-server --sentinel with a config of its own (it rewrites it)."""

    def __init__(self, workdir, master_port):
        self.dir = common.make_dir(workdir)
        self.port = free_port()
        self.conf = os.path.join(self.dir, "sentinel.conf")
        self.log_path = os.path.join(self.dir, "sentinel.log")
        with open(self.conf, "w") as f:
            f.write("port %d\nbind 127.0.0.1\ndaemonize no\ndir %s\nlogfile %s\n"
                    "sentinel monitor %s 127.0.0.1 %d 2\n"
                    "sentinel down-after-milliseconds %s 1000\n"
                    "sentinel failover-timeout %s 10000\n"
                    "sentinel parallel-syncs %s 2\n"
                    % (self.port, self.dir, self.log_path, MASTER, master_port,
                       MASTER, MASTER, MASTER))
        self.proc = None

    def start(self):
        import subprocess
        with open(os.path.join(self.dir, "stdout"), "ab") as out:
            self.proc = subprocess.Popen([redis_nodes.REDIS_SERVER, self.conf, "--sentinel"],
                                         stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        common.wait_for(lambda: self.call("PING") == "PONG", 20,
                        what="sentinel on port %d" % self.port)
        return self

    def call(self, *args):
        c = redis_nodes.RedisClient(port=self.port, timeout=2)
        try:
            return c.call(*args)
        except (OSError, ConnectionError, redis_nodes.RedisError):
            return None
        finally:
            c.close()

    def master_port(self):
        r = self.call("SENTINEL", "get-master-addr-by-name", MASTER)
        return int(r[1]) if r else None

    def stop(self):
        common.stop_server(self.proc, self.port, "sentinel", common.STOP_TIMEOUT)


class Topology:
    """A master, two replicas and three sentinels; after a failover the
    roles move, the ports stay."""

    def __init__(self, workdir):
        self.master = RedisServer(os.path.join(workdir, "sent-redis-a")).start()
        self.nodes = {self.master.port: self.master}
        for name in "bc":
            r = Replica(os.path.join(workdir, "sent-redis-" + name), self.master).start()
            self.nodes[r.port] = r
        common.wait_for(lambda: replicas_online(self.master) == 2, 20, what="2 replicas")
        self.sentinels = [Sentinel(os.path.join(workdir, "sentinel-%d" % i),
                                   self.master.port).start() for i in range(3)]
        self.settled()

    @property
    def url(self):
        return "redis+sentinel://%s/%s/0" % (
            ",".join("127.0.0.1:%d" % s.port for s in self.sentinels), MASTER)

    def current(self):
        return self.nodes[self.sentinels[0].master_port()]

    def settled(self, timeout=40):
        """Every sentinel names the same running master, which has both
        other nodes online as replicas, and the sentinels know each other."""
        def ok():
            ports = {s.master_port() for s in self.sentinels}
            if len(ports) != 1 or None in ports:
                return False
            m = self.nodes[ports.pop()]
            if not m.running() or replicas_online(m) != 2:
                return False
            return all(len(s.call("SENTINEL", "sentinels", MASTER) or []) == 2
                       and len(s.call("SENTINEL", "replicas", MASTER) or []) >= 2
                       for s in self.sentinels)
        common.wait_for(ok, timeout, interval=0.25, what="sentinels settled")

    def stop(self):
        for s in self.sentinels:
            s.stop()
        for n in self.nodes.values():
            if n.running():
                n.resume()
            n.stop()


@pytest.fixture(scope="module")
def topo(workdir):
    t = Topology(workdir)
    yield t
    t.stop()


@pytest.fixture(scope="module")
def sfleet(workdir, module_so, sp_config, topo):
    f = httpd_fleet.started_fleet(os.path.join(workdir, "sent-fleet"), module=module_so,
                                  store_url=topo.url, sp=sp_config, n_replicas=2, threads=8,
                                  start_servers=1, server_extra="ReplaySPStoreTimeout %d\n"
                                  "ReplaySPMonitorInterval 1\n" % TIMEOUT_MS)
    yield f
    f.stop()


@pytest.fixture
def mint(idps, sfleet, testidp):
    return Saml(idps, sfleet.entity_id, sfleet.acs_url, testidp).mint


def lines_with(fleet, needle):
    return [l for ls in fleet.new_log_lines().values() for l in ls if needle in l]


def post(fleet, i, m):
    return http_client.post_round_robin(fleet, i, m.b64, PAGE)


@pytest.mark.expect_log("replay_refused")
def test_sign_ins_go_to_the_master_the_sentinels_name(sfleet, mint, topo):
    sfleet.mark_logs()
    master = topo.current()
    for i in range(4):
        m = mint()
        assert post(sfleet, i, m) == 303
        assert master.client().exists(m.key)
        assert post(sfleet, i + 1, m) == 403


@pytest.mark.expect_log("claim_store_error", "RSP02008")
def test_sentinel_errors_told_apart(sfleet, mint, topo):
    """Nobody at the sentinels' addresses; sentinels that do not know the
    master's name: two different messages."""
    dead = "redis+sentinel://127.0.0.1:%d,127.0.0.1:%d/%s/0" % (free_port(), free_port(), MASTER)
    unknown = "redis+sentinel://%s/nosuchmaster/0" % ",".join(
        "127.0.0.1:%d" % s.port for s in topo.sentinels)
    try:
        for url, says in ((dead, "no sentinel answered"),
                          (unknown, "the sentinels do not know the master nosuchmaster")):
            sfleet.restart_replicas(store_url=url)
            sfleet.mark_logs()
            assert post(sfleet, 0, mint()) == 503
            time.sleep(0.1)
            errs = lines_with(sfleet, httpd_fleet.TAGS["claim_store_error"])
            assert errs and all(says in l for l in errs), errs
    finally:
        sfleet.reset_replicas()


def failover(sfleet, topo, mint, before, stop_replicas):
    """Sign in `before` fresh responses; kill the master (first stopping
    the replicas and closing their links when stop_replicas, so that they
    miss what follows: the sign-ins are then made on the master alone);
    post fresh responses
    until one succeeds on the new master. Returns (the responses accepted
    before the kill, the statuses seen during the failover, the new master)."""
    old = topo.current()
    replicas = [n for n in topo.nodes.values() if n is not old]
    accepted = []
    time.sleep(2.5)   # each monitor (a poll a second) has seen the master
    if stop_replicas:
        redis_nodes.cut_off_replicas(old, replicas)
    try:
        for i in range(before):
            m = mint()
            if post(sfleet, i, m) == 303:
                accepted.append(m)
        # nothing of what was accepted can have reached a replica
        assert not stop_replicas or not redis_nodes.attached_replicas(old)
        os.kill(old.pid, signal.SIGKILL)
        old.proc.wait(10)
    finally:
        if stop_replicas:
            for r in replicas:
                os.kill(r.pid, signal.SIGCONT)
    seen = []
    deadline = time.monotonic() + FAILOVER_BOUND
    while True:
        s = post(sfleet, len(seen), mint())
        seen.append(s)
        if s == 303:
            break
        assert s == 503, seen
        assert time.monotonic() < deadline, "no sign-in within %ss of the kill: %r" % (
            FAILOVER_BOUND, seen[-20:])
        time.sleep(0.1)
    new = topo.current()
    assert new is not old and new in replicas
    return accepted, seen, old, new


def bring_back(topo, old):
    """The killed master started again: Sentinel makes it a replica."""
    old.proc = None
    old.start()
    topo.settled()


@pytest.mark.expect_log("claim_store_error", "session_store_after_claim", "RSP02008",
                        "RSP02015", "RSP02004", "replay_refused", "RSP01032", "RSP01045")
def test_failover_then_sign_ins_on_the_new_master_without_restart(sfleet, mint, topo):
    pids = [h.pid() for h in sfleet.replicas]
    sfleet.mark_logs()
    accepted, seen, old, new = failover(sfleet, topo, mint, 10, stop_replicas=False)
    assert len(accepted) == 10
    assert 503 in seen, seen        # the failover's duration
    assert [h.pid() for h in sfleet.replicas] == pids     # not restarted
    # the alarm, on every httpd replica, naming both masters
    def everywhere():
        per = sfleet.new_log_lines()
        return all(any(TAG["failover"] in l for l in per[h.name]) for h in sfleet.replicas)
    common.wait_for(everywhere, 15, interval=0.2, what="the failover alarm on every replica")
    per = sfleet.new_log_lines()
    for h in sfleet.replicas:
        got = [l for l in per[h.name] if TAG["failover"] in l]
        assert got, (h.name, per[h.name][-10:])
        assert ":error]" in got[0] and "127.0.0.1:%d" % new.port in got[0], got
        assert "127.0.0.1:%d" % old.port in got[0], got
    bring_back(topo, old)


@pytest.mark.expect_log("claim_store_error", "session_store_after_claim", "RSP02008",
                        "RSP02015", "RSP02004", "replay_refused", "RSP01032", "RSP01045",
                        TAG["unacked"], "RSP02012", "RSP02013", "RSP02014")
def test_claims_lost_in_a_failover_unless_acknowledged(sfleet, mint, topo, capsys):
    """The replicas stopped, sign-ins made, the master killed, the replicas
    continued and one promoted: what the master alone had is gone. Without
    ReplaySPStoreReplicas those sign-ins' responses are accepted a second
    time; with it, none was accepted in the first place (503), and nothing
    accepted before the failover is accepted after it."""
    counts = {}
    try:
        for label, extra in (("without ReplaySPStoreReplicas", ""),
                             ("with ReplaySPStoreReplicas 1", "ReplaySPStoreReplicas 1 400\n")):
            sfleet.restart_replicas(server_extra="ReplaySPStoreTimeout %d\n"
                                    "ReplaySPMonitorInterval 1\n%s" % (TIMEOUT_MS, extra))
            sfleet.mark_logs()
            # acknowledged ones first, while the replicas run
            safe = []
            for i in range(5):
                m = mint()
                assert post(sfleet, i, m) == 303
                safe.append(m)
            accepted, seen, old, new = failover(sfleet, topo, mint, 8, stop_replicas=True)
            got = http_client.answers_after_failover(sfleet, accepted + safe, PAGE, FAILOVER_BOUND)
            counts[label] = (len(accepted), got.count(303))
            # what the replicas had before they were stopped: refused
            assert got[len(accepted):] == [403] * len(safe), (
                label, got, httpd_fleet.tagged_lines(sfleet))
            if extra:
                assert accepted == [], "accepted without replicas acknowledging"
            else:   # the loss, shown: each one accepted a second time
                assert len(accepted) == 8 and got[:8] == [303] * 8, (
                    label, got, httpd_fleet.tagged_lines(sfleet))
            bring_back(topo, old)
    finally:
        sfleet.reset_replicas()
    with capsys.disabled():
        for label, (n, again) in counts.items():
            print("\n  failover %s: %d sign-ins accepted while the replicas were stopped, "
                  "%d responses accepted again after the failover" % (label, n, again))
