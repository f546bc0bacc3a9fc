"""Fleet test g and the store's other failure modes: fail closed (503 with
Retry-After, no session, nothing accepted) and recover without restarting
httpd. Store stopped and store hung run on every backend; OOM (CONFIG SET
maxmemory), READONLY (REPLICAOF), an ACL user, the unix socket and the db
number are about Redis itself. The key prefix runs on every backend. The
memcached-only failure modes (one of two servers down or hung, full) are in
test_memcached.py.
"""

import time

import pytest

import redis_nodes
from common import free_port
from http_client import get, post_acs, session_cookie
from httpd_fleet import TAGS
from stores import claim_key, session_key

from test_fleet import PAGE, claims, sessions, sign_in

RECOVERY = 10.0   # seconds a replica may take to get its store back


def assert_fail_closed(r, what):
    assert r.status_code == 503, (what, r.status_code, r.text[:300])
    ra = r.headers.get("Retry-After")
    assert ra and ra.strip().isdigit(), (what, "Retry-After %r" % ra)
    assert session_cookie(r)[0] is None, (what, "Set-Cookie on a 503")


def until(action, done, timeout=RECOVERY, interval=0.2, allowed=(503,)):
    """Repeat action() until done(result); every other result's status must
    be in ``allowed``. Bounded in time. Returns (last result, history)."""
    deadline = time.monotonic() + timeout
    history = []
    while True:
        r = action()
        history.append(r.status_code)
        if done(r):
            return r, history
        assert r.status_code in allowed, history
        assert time.monotonic() < deadline, "no recovery within %.0fs: %r" % (timeout, history)
        time.sleep(interval)


def assert_store_works(fleet, saml, store, rounds=3):
    """Fresh responses sign in (through the balancer) and their replays are
    refused on every replica: the claim verdicts are right again."""
    for _ in range(rounds):
        m = saml.mint()
        r, _ = until(lambda: post_acs(fleet.public, m.b64, relay_state=PAGE),
                     lambda r: r.status_code == 303)
        assert session_cookie(r)[0]
        assert store.exists(m.key)
        for h in fleet.replicas:
            r, _ = until(lambda: post_acs(h.base_url, m.b64), lambda r: r.status_code == 403)
            assert session_cookie(r)[0] is None


# --------------------------------------------------------------------------
# g. the store stopped -> 503, nothing accepted; started again -> works
# --------------------------------------------------------------------------

@pytest.mark.expect_log("claim_store_error", "session_read_store_error", "replay_refused")
def test_g_store_stopped_fail_closed_then_recovers_without_restart(fleet, saml, store):
    """Every server of the store stopped (Redis; the one memcached; both)."""
    old_cookie = sign_in(fleet, saml.mint())
    pids = [h.pid() for h in fleet.instances]
    ports = [s.port for s in store.servers]
    store.stop_all()

    m = saml.mint()
    fleet.mark_logs()
    for name, base in fleet.targets():
        assert_fail_closed(post_acs(base, m.b64, relay_state=PAGE), name)
        # a session cannot be checked either: not let through
        g = get(base + PAGE, cookie=old_cookie)
        assert g.status_code != 200, (name, g.status_code)
    assert fleet.count_in_logs(TAGS["claim_store_error"]) >= len(fleet.targets())
    assert fleet.count_in_logs(TAGS["sign_in_accepted"]) == 0

    store.start_all()
    assert [s.port for s in store.servers] == ports
    # the very response refused during the outage was not claimed: it signs in now
    r, history = until(lambda: post_acs(fleet.public, m.b64, relay_state=PAGE),
                       lambda r: r.status_code == 303)
    cookie = session_cookie(r)[0]
    assert cookie
    for name, base in fleet.targets():
        until(lambda: get(base + PAGE, cookie=cookie), lambda g: g.status_code == 200)
    assert_store_works(fleet, saml, store)
    # nobody restarted httpd
    assert [h.pid() for h in fleet.instances] == pids
    print("test g [%s]: after the store came back, the refused response got %r"
          % (store.name, history))


@pytest.mark.expect_log("claim_store_error", "session_read_store_error", "replay_refused")
def test_g_store_hung_times_out_and_fails_closed(fleet, saml, store):
    """SIGSTOP (every server of the store): connections are accepted by the
    kernel but never answered. The claim must give up after
    ReplaySPStoreTimeout (Redis: the default 1000 ms; memcached fleets: 500),
    and the connection that timed out must not be reused (its late reply
    would answer the next command)."""
    sign_in(fleet, saml.mint())           # warm every pool a little
    limit = store.timeout_s + 1.0
    elapsed_all = []
    store.pause_all()
    try:
        for h in fleet.replicas:
            m = saml.mint()
            t0 = time.monotonic()
            r = post_acs(h.base_url, m.b64, relay_state=PAGE, timeout=30)
            elapsed = time.monotonic() - t0
            elapsed_all.append(round(elapsed, 2))
            assert_fail_closed(r, h.name)
            assert elapsed < limit, "%s: a hung store held the request %.2fs (limit %.1fs)" % (
                h.name, elapsed, limit)
    finally:
        store.resume_all()
    assert_store_works(fleet, saml, store, rounds=10)
    print("test g hung [%s]: 503 after %r s (timeout %.1f s)" % (store.name, elapsed_all,
                                                                  store.timeout_s))


@pytest.mark.backends("redis")
@pytest.mark.expect_log("claim_store_error", "replay_refused")
def test_g_redis_oom_fails_closed(fleet, saml, store, rc):
    m = saml.mint()
    rc.call("CONFIG", "SET", "maxmemory", "1")
    try:
        for name, base in fleet.targets():
            assert_fail_closed(post_acs(base, m.b64, relay_state=PAGE), name)
        assert not store.exists(m.key)
        assert sessions(store) == []
    finally:
        rc.call("CONFIG", "SET", "maxmemory", redis_nodes.REDIS_MAXMEMORY)
    r, _ = until(lambda: post_acs(fleet.public, m.b64), lambda r: r.status_code == 303)
    assert_store_works(fleet, saml, store)


@pytest.mark.backends("redis")
@pytest.mark.expect_log("claim_store_error", "replay_refused")
def test_g_redis_readonly_fails_closed(fleet, saml, store, rc):
    m = saml.mint()
    rc.call("REPLICAOF", "127.0.0.1", str(free_port()))   # a master that is not there
    try:
        for name, base in fleet.targets():
            assert_fail_closed(post_acs(base, m.b64, relay_state=PAGE), name)
        assert not store.exists(m.key)
    finally:
        rc.call("REPLICAOF", "NO", "ONE")
    until(lambda: post_acs(fleet.public, m.b64), lambda r: r.status_code == 303)
    assert_store_works(fleet, saml, store)


# --------------------------------------------------------------------------
# store URL forms and key prefix
# --------------------------------------------------------------------------

@pytest.mark.backends("redis")
@pytest.mark.expect_log("replay_refused")
def test_store_over_unix_socket(fleet, saml, store, redis):
    fleet.restart_replicas(store_url=redis.unix_url)
    m = saml.mint()
    sign_in(fleet, m)
    assert store.exists(m.key)
    for h in fleet.replicas:
        assert post_acs(h.base_url, m.b64).status_code == 403


@pytest.mark.backends("redis")
@pytest.mark.expect_log("replay_refused")
def test_store_db_number_and_key_prefix(fleet, saml, store, rc, redis):
    fleet.restart_replicas(store_url="redis://127.0.0.1:%d/3" % redis.port,
                           server_extra="ReplaySPStoreKeyPrefix rsptest:")
    m = saml.mint()
    cookie = sign_in(fleet, m)
    assert claims(store) == [] and sessions(store) == []          # nothing in db 0
    rc.call("SELECT", 3)
    try:
        k = claim_key(m.issuer, m.assertion_id, prefix="rsptest:")
        assert rc.exists(k), rc.keys("*")
        assert len(rc.keys("rsptest:s:*")) == 1
        for h in fleet.replicas:
            assert get(h.base_url + PAGE, cookie=cookie).status_code == 200
            assert post_acs(h.base_url, m.b64).status_code == 403
    finally:
        rc.call("SELECT", 0)


@pytest.mark.expect_log("replay_refused")
def test_store_key_prefix(fleet, saml, store):
    """ReplaySPStoreKeyPrefix: claim and session keys carry it (and, on
    memcached, live on the server the prefixed key maps to)."""
    fleet.restart_replicas(server_extra="ReplaySPStoreKeyPrefix rsptest:\n" + store.server_extra)
    m = saml.mint()
    cookie = sign_in(fleet, m)
    assert claims(store) == [] and sessions(store) == []          # nothing under rsp:
    k = claim_key(m.issuer, m.assertion_id, prefix="rsptest:")
    assert store.exists(k), store.keys("")
    assert store.claim_keys(prefix="rsptest:") == [k]
    sk = session_key(cookie, prefix="rsptest:")
    assert store.session_keys(prefix="rsptest:") == [sk]
    for h in fleet.replicas:
        assert get(h.base_url + PAGE, cookie=cookie).status_code == 200
        assert post_acs(h.base_url, m.b64).status_code == 403


# --------------------------------------------------------------------------
# the claim is won but the session cannot be stored
# --------------------------------------------------------------------------

@pytest.mark.backends("redis")
@pytest.mark.expect_log("session_store_after_claim")
def test_session_store_fails_after_claim_claim_released_503(fleet, saml, store, rc, redis):
    """A Redis ACL user that may write claims (rsp:a:*) but not sessions
    (rsp:s:*): every sign-in wins its claim, fails to store its session,
    answers 503 and releases the claim it still holds. (memcached: the same
    with the session's server down, in test_memcached.py.)"""
    rc.call("ACL", "SETUSER", "claimsonly", "on", ">pw", "~rsp:a:*", "+@all")
    try:
        fleet.restart_replicas(store_url="redis://claimsonly:pw@127.0.0.1:%d/0" % redis.port)
        m = saml.mint()
        for name, base in fleet.targets():
            assert_fail_closed(post_acs(base, m.b64, relay_state=PAGE), name)
            assert not store.exists(m.key), "%s: claim left behind" % name
        assert sessions(store) == []
        assert fleet.count_in_logs(TAGS["session_store_after_claim"]) == len(fleet.targets())
        assert fleet.count_in_logs("claim released") == len(fleet.targets())
    finally:
        rc.call("ACL", "DELUSER", "claimsonly")
    # The same assertion was never accepted: it still signs in once.
    fleet.reset_replicas()
    sign_in(fleet, m)


# --------------------------------------------------------------------------
# a claim whose sign-in never completed: a retry takes it over, once
# --------------------------------------------------------------------------

def claim_left_open(fleet, saml, store):
    """A response posted while the store is paused: 503 (the claim timed
    out), and the claim lands once the store resumes; (minted, time of
    the post, the record it left)."""
    m = saml.mint()
    store.pause_all()
    try:
        t0 = time.time()
        r = post_acs(fleet.replicas[0].base_url, m.b64, relay_state=PAGE)
        assert_fail_closed(r, "paused store")
    finally:
        store.resume_all()
    deadline = time.monotonic() + RECOVERY
    while not store.exists(m.key):
        assert time.monotonic() < deadline, "the paused claim never landed"
        time.sleep(0.1)
    record = store.get(m.key)
    record = record.decode() if isinstance(record, bytes) else record
    return m, t0, record


def takeover_age_s(store):
    # 3 x ReplaySPStoreTimeout + 1 s, + 1 s: the record's time is whole seconds
    return 3 * store.timeout_s + 2.0


@pytest.mark.expect_log("claim_store_error", "replay_refused")
def test_retry_takes_over_a_claim_whose_sign_in_never_completed(fleet, saml, store):
    m, t0, record = claim_left_open(fleet, saml, store)
    assert "&o=1" in record, record                   # open: the sign-in never completed
    # Too soon: the sign-in that won it might still be running.
    assert post_acs(fleet.public, m.b64, relay_state=PAGE).status_code == 403
    time.sleep(max(0.0, t0 + takeover_age_s(store) + 0.5 - time.time()))
    # The same browser's retry (after our Retry-After): taken over, signed in.
    fleet.mark_logs()
    r = post_acs(fleet.public, m.b64, relay_state=PAGE)
    assert r.status_code == 303, (r.status_code, r.text[:300])
    cookie = session_cookie(r)[0]
    assert get(fleet.public + PAGE, cookie=cookie).status_code == 200
    assert fleet.count_in_logs("RSP01044") == 1
    done = store.get(m.key)
    done = done.decode() if isinstance(done, bytes) else done
    assert "o=1" not in done, done                     # completed now
    # A completed sign-in's replay: refused, on every replica, however late.
    for name, base in fleet.targets():
        assert post_acs(base, m.b64, relay_state=PAGE).status_code == 403, name


@pytest.mark.expect_log("claim_store_error", "replay_refused")
def test_concurrent_retries_one_takes_over(fleet, saml, store):
    import concurrent.futures
    m, t0, _ = claim_left_open(fleet, saml, store)
    time.sleep(max(0.0, t0 + takeover_age_s(store) + 0.5 - time.time()))
    fleet.mark_logs()
    with concurrent.futures.ThreadPoolExecutor(max_workers=25) as ex:
        codes = list(ex.map(lambda i: post_acs(fleet.public, m.b64, relay_state=PAGE).status_code,
                            range(50)))
    assert codes.count(303) == 1, codes
    assert codes.count(403) == 49, codes
    assert fleet.count_in_logs("RSP01044") == 1
    assert fleet.count_in_logs(TAGS["sign_in_accepted"]) == 1


@pytest.mark.expect_log("replay_refused")
def test_completed_sign_in_is_never_taken_over(fleet, saml, store):
    """A completed claim is not open: a replay long after (beyond the
    takeover age) is refused."""
    m = saml.mint()
    assert post_acs(fleet.public, m.b64, relay_state=PAGE).status_code == 303
    record = store.get(m.key)
    record = record.decode() if isinstance(record, bytes) else record
    assert "o=1" not in record, record
    time.sleep(takeover_age_s(store) + 0.5)
    for name, base in fleet.targets():
        assert post_acs(base, m.b64, relay_state=PAGE).status_code == 403, name
