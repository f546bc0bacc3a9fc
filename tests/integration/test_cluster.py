"""Redis Cluster: redis+cluster:// against real cluster nodes on 127.0.0.1
(three masters, two replicas each: ReplaySPStoreReplicas 1 can still be
met after a failover), two httpd replicas in front. (The
single-use fleet tests run on a cluster too: test_fleet.py, backend
``cluster``.)

Shown here: slots migrated from one master to another during a burst of
sign-ins, the module following the MOVED and ASK answers (counted on the
servers): every response accepted once, none twice, nothing lost; and a
shard's master SIGKILLed, its replica promoted by the cluster: sign-ins on
that shard get 503 while it lasts and then succeed, without restarting
httpd, the monitor's failover alarm (RSP02015) on every httpd replica; and
what such a failover loses: claims the replica had not received (forced
by stopping it before the master is killed) are accepted again without
ReplaySPStoreReplicas, and never with it, the counts printed.
"""

import concurrent.futures
import os
import signal
import threading
import time

import pytest

import common
import http_client
import httpd_fleet
import redis_nodes
from common import HarnessError
from http_client import post_round_robin
from httpd_fleet import started_fleet
from redis_nodes import RedisCluster
from idp_tools import Saml
from test_fleet import PAGE

TIMEOUT_MS = 1000
FAILOVER_BOUND = 40.0        # seconds: node timeout 1 s, election, promotion
TAG = {"failover": "RSP02015", "unacked": "RSP01048"}


@pytest.fixture(scope="module")
def cluster(workdir):
    c = RedisCluster(os.path.join(workdir, "cl-topo"), name="cl", replicas=2)
    try:
        c.start()
    except HarnessError as e:
        c.stop()
        pytest.fail("the Redis Cluster did not start: %s" % e, pytrace=False)
    yield c
    for n in c.nodes:
        if n.running():
            n.resume()
    c.stop()


@pytest.fixture(scope="module")
def cfleet(workdir, module_so, sp_config, cluster):
    f = started_fleet(os.path.join(workdir, "cl-fleet"), module=module_so,
                      store_url=cluster.url, sp=sp_config, n_replicas=2, threads=8,
                      start_servers=1, server_extra="ReplaySPStoreTimeout %d\n"
                      "ReplaySPMonitorInterval 1\n" % TIMEOUT_MS)
    yield f
    f.stop()


@pytest.fixture
def mint(idps, cfleet, testidp):
    return Saml(idps, cfleet.entity_id, cfleet.acs_url, testidp).mint


def post(fleet, i, m):
    return post_round_robin(fleet, i, m.b64, PAGE)


@pytest.mark.expect_log("replay_refused")
def test_slots_migrated_during_a_burst(cfleet, mint, cluster, capsys):
    """Half the burst's claims live in slots moved while the burst runs,
    each posted while its slot is half-moved (ASK); the other half posted
    at the same time from four threads: every response accepted exactly
    once, each claim on its slot's new master; their replays, on maps from
    before the move (MOVED), all refused. The redirections are counted by
    the servers."""
    responses = [mint() for _ in range(60)]
    slots = [cluster.slot_of(m.key) for m in responses]
    masters = cluster.masters()
    mid_move = {}
    for i in range(0, len(responses), 2):
        mid_move.setdefault(slots[i], []).append(i)
    moved_before = cluster.errorstats("MOVED")
    ask_before = cluster.errorstats("ASK")
    statuses = {}
    errors = []

    def migrate_all():
        try:
            for s, idx in mid_move.items():
                src = cluster.owner(s)
                dst = masters[(masters.index(src) + 1) % len(masters)]

                def during():
                    for i in idx:
                        statuses[i] = post(cfleet, i, responses[i])
                cluster.migrate(s, src, dst, during)
        except Exception as e:   # reported below, not lost in the thread
            errors.append(e)

    mover = threading.Thread(target=migrate_all)
    mover.start()
    try:
        with concurrent.futures.ThreadPoolExecutor(4) as ex:
            futs = {ex.submit(post, cfleet, i, responses[i]): i
                    for i in range(1, len(responses), 2)}
            for f in concurrent.futures.as_completed(futs, timeout=120):
                statuses[futs[f]] = f.result()
    finally:
        mover.join(120)
    assert not mover.is_alive() and not errors, errors
    asked = cluster.errorstats("ASK") - ask_before
    assert [statuses.get(i) for i in range(len(responses))] == [303] * len(responses), statuses
    assert asked >= len(mid_move), asked   # each slot's own claim, at least
    # each claim where the cluster now keeps its slot
    for m, s in zip(responses, slots):
        assert cluster.holds(m.key), (m.key, s)
    # nothing accepted twice, after the move as during it: the replays of
    # the moved slots' claims meet the replicas' maps from before the move
    # (ASK changes no map), so MOVED is answered and followed
    again = [post(cfleet, i, m) for i, m in enumerate(responses)]
    assert again == [403] * len(responses), again
    moved = cluster.errorstats("MOVED") - moved_before
    with capsys.disabled():
        print("\n  slot migration during a burst: %d slots moved, %d sign-ins and their "
              "replays; the servers answered ASK %d times (during the burst) and MOVED %d "
              "times" % (len(mid_move), len(responses), asked, moved))
    assert moved > 0


def shard_of(cluster, master):
    """The slot ranges master serves."""
    e = next(x for x in cluster.view() if x["id"] == master.node_id)
    return e["slots"]


def on_shard(cluster, ranges, key):
    s = cluster.slot_of(key)
    return any(lo <= s <= hi for lo, hi in ranges)


def fresh_on(cluster, ranges, mint, n):
    """n fresh responses whose claims live on the shard of ranges."""
    out = []
    for _ in range(40 * n):
        m = mint()
        if on_shard(cluster, ranges, m.key):
            out.append(m)
            if len(out) == n:
                return out
    raise AssertionError("could not mint %d responses for the shard" % n)


def failover(cfleet, cluster, mint, before, stop_replica):
    """Sign in `before` fresh responses whose claims live on the first
    shard (first stopping its replicas and cutting them off when
    stop_replica, so that they miss them); SIGKILL that shard's master;
    post fresh responses for the shard until one succeeds on a promoted
    replica.
    Returns (the responses accepted before the kill, the statuses seen
    during the failover, the old master, the new one)."""
    old = cluster.masters()[0]
    replicas = cluster.replicas_of(old)
    ranges = shard_of(cluster, old)
    pre = fresh_on(cluster, ranges, mint, before)
    time.sleep(2.5)   # each monitor (a poll a second) has seen the master
    accepted = []
    if stop_replica:
        redis_nodes.cut_off_replicas(old, replicas)
    try:
        for i, m in enumerate(pre):
            if post(cfleet, i, m) == 303:
                accepted.append(m)
        # nothing of what was accepted can have reached a replica
        assert not stop_replica or not redis_nodes.attached_replicas(old)
        os.kill(old.pid, signal.SIGKILL)
        old.proc.wait(10)
    finally:
        if stop_replica:
            for r in replicas:
                os.kill(r.pid, signal.SIGCONT)
    seen = []
    deadline = time.monotonic() + FAILOVER_BOUND
    while True:
        s = post(cfleet, len(seen), fresh_on(cluster, ranges, mint, 1)[0])
        seen.append(s)
        if s == 303:
            break
        assert s == 503, seen
        assert time.monotonic() < deadline, "no sign-in within %ss of the kill: %r" % (
            FAILOVER_BOUND, seen[-20:])
        time.sleep(0.1)
    new = cluster.owner(ranges[0][0])
    assert new in replicas, (new.port if new else None, [r.port for r in replicas])
    return accepted, seen, old, new


def bring_back(cluster, old):
    """The killed master started again: it rejoins as a replica."""
    old.proc = None
    old.start()
    cluster.settled()


FAILOVER_LOG = ("claim_store_error", "session_store_after_claim", "RSP02008", "RSP02015",
                "RSP02004", "replay_refused", "RSP01032", "RSP01045")


@pytest.mark.expect_log(*FAILOVER_LOG)
def test_failover_then_sign_ins_on_the_promoted_replica_without_restart(cfleet, mint, cluster):
    pids = [h.pid() for h in cfleet.replicas]
    cfleet.mark_logs()
    accepted, seen, old, new = failover(cfleet, cluster, mint, 6, stop_replica=False)
    assert len(accepted) == 6
    assert 503 in seen, seen        # the failover's duration
    assert [h.pid() for h in cfleet.replicas] == pids     # not restarted
    # accepted before, refused after (the replica had them)
    got = http_client.answers_after_failover(cfleet, accepted, PAGE, FAILOVER_BOUND)
    assert got == [403] * 6, (got, httpd_fleet.tagged_lines(cfleet))

    def everywhere():
        per = cfleet.new_log_lines()
        return all(any(TAG["failover"] in l for l in per[h.name]) for h in cfleet.replicas)
    common.wait_for(everywhere, 15, interval=0.2, what="the failover alarm on every replica")
    per = cfleet.new_log_lines()
    for h in cfleet.replicas:
        got = [l for l in per[h.name] if TAG["failover"] in l]
        assert ":error]" in got[0] and "127.0.0.1:%d" % new.port in got[0], got
        assert "127.0.0.1:%d" % old.port in got[0] and " slots 0-" in got[0], got
    bring_back(cluster, old)


@pytest.mark.expect_log(*FAILOVER_LOG, TAG["unacked"], "RSP02012", "RSP02013", "RSP02014")
def test_claims_lost_in_a_failover_unless_acknowledged(cfleet, mint, cluster, capsys):
    """The shard's replicas stopped and cut off, sign-ins made, its master
    killed, the replicas continued and one promoted: what the master alone had
    is gone. Without ReplaySPStoreReplicas those responses are accepted a
    second time; with it, none was accepted in the first place (503), and
    nothing accepted before the failover is accepted after it."""
    counts = {}
    try:
        for label, extra in (("without ReplaySPStoreReplicas", ""),
                             ("with ReplaySPStoreReplicas 1", "ReplaySPStoreReplicas 1 200\n")):
            cfleet.restart_replicas(server_extra="ReplaySPStoreTimeout %d\n"
                                    "ReplaySPMonitorInterval 1\n%s" % (TIMEOUT_MS, extra))
            cfleet.mark_logs()
            ranges = shard_of(cluster, cluster.masters()[0])
            safe = fresh_on(cluster, ranges, mint, 4)
            assert [post(cfleet, i, m) for i, m in enumerate(safe)] == [303] * 4
            accepted, seen, old, new = failover(cfleet, cluster, mint, 6, stop_replica=True)
            got = http_client.answers_after_failover(cfleet, accepted + safe, PAGE, FAILOVER_BOUND)
            counts[label] = (len(accepted), got.count(303))
            # what the replicas had before they were stopped: refused
            assert got[len(accepted):] == [403] * len(safe), (
                label, got, httpd_fleet.tagged_lines(cfleet))
            if extra:
                assert accepted == [], "accepted without the replica acknowledging"
            else:   # the loss, shown: each one accepted a second time
                assert len(accepted) == 6 and got[:6] == [303] * 6, (
                    label, got, httpd_fleet.tagged_lines(cfleet))
            bring_back(cluster, old)
    finally:
        cfleet.reset_replicas()
    with capsys.disabled():
        for label, (n, again) in counts.items():
            print("\n  cluster failover %s: %d sign-ins accepted while the shard's replicas "
                  "were stopped, %d responses accepted again after the failover"
                  % (label, n, again))
