"""Fleet test g and the store's other failure modes: fail closed (503 with
Retry-After, no session, nothing accepted) and recover without restarting
httpd. Also the store URL forms (unix socket, db number) and the key prefix.
"""

import time

import pytest

import harness

from harness import (TAGS, claim_key, free_port, get, post_acs, session_cookie)
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


def assert_store_works(fleet, saml, rc, rounds=3):
    """Fresh responses sign in (through the balancer) and their replays are
    refused on every replica: the claim verdicts are right again."""
    for _ in range(rounds):
        m = saml.mint()
        r, _ = until(lambda: post_acs(fleet.public, m.b64, relay_state=PAGE),
                     lambda r: r.status_code == 303)
        assert session_cookie(r)[0]
        assert rc.exists(m.key)
        for h in fleet.replicas:
            r, _ = until(lambda: post_acs(h.base_url, m.b64), lambda r: r.status_code == 403)
            assert session_cookie(r)[0] is None


# --------------------------------------------------------------------------
# g. Redis stopped -> 503, nothing accepted; started again -> works
# --------------------------------------------------------------------------

@pytest.mark.expect_log("claim_store_error", "session_read_store_error", "replay_refused")
def test_g_redis_stopped_fail_closed_then_recovers_without_restart(fleet, saml, rc, redis):
    old_cookie = sign_in(fleet, saml.mint())
    pids = [h.pid() for h in fleet.instances]
    port = redis.port
    redis.stop()

    m = saml.mint()
    fleet.mark_logs()
    for name, base in fleet.targets():
        assert_fail_closed(post_acs(base, m.b64, relay_state=PAGE), name)
        # a session cannot be checked either: not let through
        g = get(base + PAGE, cookie=old_cookie)
        assert g.status_code != 200, (name, g.status_code)
    assert fleet.count_in_logs(TAGS["claim_store_error"]) >= len(fleet.targets())
    assert fleet.count_in_logs(TAGS["sign_in_accepted"]) == 0

    redis.start()
    assert redis.port == port
    # the very response refused during the outage was not claimed: it signs in now
    r, history = until(lambda: post_acs(fleet.public, m.b64, relay_state=PAGE),
                       lambda r: r.status_code == 303)
    cookie = session_cookie(r)[0]
    assert cookie
    for name, base in fleet.targets():
        until(lambda: get(base + PAGE, cookie=cookie), lambda g: g.status_code == 200)
    assert_store_works(fleet, saml, rc)
    # nobody restarted httpd
    assert [h.pid() for h in fleet.instances] == pids
    print("test g: after Redis came back, the refused response got %r" % history)


@pytest.mark.expect_log("claim_store_error", "session_read_store_error", "replay_refused")
def test_g_redis_hung_times_out_and_fails_closed(fleet, saml, rc, redis):
    """SIGSTOP: connections are accepted by the kernel but never answered.
    The claim must give up after ReplaySPStoreTimeout (default 1000 ms), and
    the connection that timed out must not be reused (its late reply would
    answer the next command)."""
    sign_in(fleet, saml.mint())           # warm every pool a little
    redis.pause()
    try:
        for h in fleet.replicas:
            m = saml.mint()
            t0 = time.monotonic()
            r = post_acs(h.base_url, m.b64, relay_state=PAGE, timeout=30)
            elapsed = time.monotonic() - t0
            assert_fail_closed(r, h.name)
            assert elapsed < 3.5, "%s: a hung store held the request %.1fs" % (h.name, elapsed)
    finally:
        redis.resume()
    assert_store_works(fleet, saml, rc, rounds=10)


@pytest.mark.expect_log("claim_store_error", "replay_refused")
def test_g_redis_oom_fails_closed(fleet, saml, rc):
    m = saml.mint()
    rc.call("CONFIG", "SET", "maxmemory", "1")
    try:
        for name, base in fleet.targets():
            assert_fail_closed(post_acs(base, m.b64, relay_state=PAGE), name)
        assert not rc.exists(m.key)
        assert sessions(rc) == []
    finally:
        rc.call("CONFIG", "SET", "maxmemory", harness.REDIS_MAXMEMORY)
    r, _ = until(lambda: post_acs(fleet.public, m.b64), lambda r: r.status_code == 303)
    assert_store_works(fleet, saml, rc)


@pytest.mark.expect_log("claim_store_error", "replay_refused")
def test_g_redis_readonly_fails_closed(fleet, saml, rc):
    m = saml.mint()
    rc.call("REPLICAOF", "127.0.0.1", str(free_port()))   # a master that is not there
    try:
        for name, base in fleet.targets():
            assert_fail_closed(post_acs(base, m.b64, relay_state=PAGE), name)
        assert not rc.exists(m.key)
    finally:
        rc.call("REPLICAOF", "NO", "ONE")
    until(lambda: post_acs(fleet.public, m.b64), lambda r: r.status_code == 303)
    assert_store_works(fleet, saml, rc)


# --------------------------------------------------------------------------
# store URL forms and key prefix
# --------------------------------------------------------------------------

@pytest.mark.expect_log("replay_refused")
def test_store_over_unix_socket(fleet, saml, rc, redis):
    fleet.restart_replicas(store_url=redis.unix_url)
    m = saml.mint()
    sign_in(fleet, m)
    assert rc.exists(m.key)
    for h in fleet.replicas:
        assert post_acs(h.base_url, m.b64).status_code == 403


@pytest.mark.expect_log("replay_refused")
def test_store_db_number_and_key_prefix(fleet, saml, rc, redis):
    fleet.restart_replicas(store_url="redis://127.0.0.1:%d/3" % redis.port,
                           server_extra="ReplaySPStoreKeyPrefix rsptest:")
    m = saml.mint()
    cookie = sign_in(fleet, m)
    assert claims(rc) == [] and sessions(rc) == []          # nothing in db 0
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


# --------------------------------------------------------------------------
# the claim is won but the session cannot be stored
# --------------------------------------------------------------------------

@pytest.mark.expect_log("session_store_after_claim")
def test_session_store_fails_after_claim_claim_released_503(fleet, saml, rc, redis):
    """A Redis ACL user that may write claims (rsp:a:*) but not sessions
    (rsp:s:*): every sign-in wins its claim, fails to store its session,
    answers 503 and releases the claim it still holds."""
    rc.call("ACL", "SETUSER", "claimsonly", "on", ">pw", "~rsp:a:*", "+@all")
    try:
        fleet.restart_replicas(store_url="redis://claimsonly:pw@127.0.0.1:%d/0" % redis.port)
        m = saml.mint()
        for name, base in fleet.targets():
            assert_fail_closed(post_acs(base, m.b64, relay_state=PAGE), name)
            assert not rc.exists(m.key), "%s: claim left behind" % name
        assert sessions(rc) == []
        assert fleet.count_in_logs(TAGS["session_store_after_claim"]) == len(fleet.targets())
        assert fleet.count_in_logs("claim released") == len(fleet.targets())
    finally:
        rc.call("ACL", "DELUSER", "claimsonly")
    # The same assertion was never accepted: it still signs in once.
    fleet.reset_replicas()
    sign_in(fleet, m)
