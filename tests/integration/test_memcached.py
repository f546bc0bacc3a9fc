"""memcached as the store (issue 3): what only memcached can get wrong.

* Two servers: a key always lives on the server the module's rule names
  (first 4 bytes of SHA-256(key), big-endian, mod N, URL order); the
  harness checks that by the formula and by asking every server.
* A sign-in's records live with its claim: the session key is drawn so
  that it maps to the claim's server, and the logout index entries are
  written there (an IdP's LogoutRequest reads every server).
* One of two servers stopped: every claim that maps to it fails closed (a
  replay of an assertion it held gets 503 everywhere, never 303: no rehash
  to the live server), every sign-in whose claim maps to the live server
  works (one server per sign-in: exactly 1 in N fails), and the stopped
  server, started again (empty), serves the sign-in path again.
* One of two servers hung (SIGSTOP): 503 within ReplaySPStoreTimeout + 1 s,
  while the replica keeps serving other requests.
* Full (``-M``, ``SERVER_ERROR out of memory``): 503, nothing accepted.
* What the module says to memcached (``watch``): the claim is one ``add``
  with the TTL rule's expiry, nothing read before it (the claim key is read
  after it, in the same pipeline); sessions are ``set``.

The fleet suite (test_fleet.py, test_store.py) runs on memcached as well;
the claim TTL rule (``mg key t``) is its test d.
"""

import concurrent.futures
import math
import os
import time

import pytest

from http_client import get, post_acs, session_cookie
from httpd_fleet import TAGS
from memcached_nodes import MemcachedServer, MemcacheError, MemcacheWatch
from stores import (KEY_PREFIX, b64url_nopad, claim_key, logout_index_key,
                    memcache_server_index, session_key)
from test_fleet import PAGE, sign_in
from test_store import assert_fail_closed, until

TWO = pytest.mark.backends("memcached2")
ONE = pytest.mark.backends("memcached1")


def mint_on(saml, store, index, idp="idp1", **kw):
    """A fresh response whose claim key maps to server ``index`` (the
    assertion ID is chosen by trial: each try has a 1/N chance)."""
    issuer = saml.idps[idp].entity_id
    for _ in range(200):
        aid = saml.testidp.random_id()
        if store.index_of(claim_key(issuer, aid)) == index:
            return saml.mint(idp=idp, assertion_id=aid, **kw)
    raise AssertionError("no assertion ID mapping to server %d in 200 tries" % index)


def cookie_on(fleet, saml, store, index, **kw):
    """Sign in with a claim on server ``index``: the session is there too.
    Returns (cookie, minted)."""
    m = mint_on(saml, store, index, **kw)
    c = sign_in(fleet, m)
    assert store.index_of(session_key(c)) == index, "the session is not with its claim"
    return c, m


def log_lines(fleet, tag):
    return [line for lines in fleet.new_log_lines().values() for line in lines if tag in line]


# --------------------------------------------------------------------------
# where keys live
# --------------------------------------------------------------------------

@TWO
def test_keys_live_on_the_server_the_formula_names(fleet, saml, store):
    """For every claim and session key: the formula's server, the server
    that answers ``mg`` for it, and the server whose metadump lists it are
    one and the same; a session is on its claim's server, and so are its
    two logout index entries (for those, the claim's server rather than
    their own key's); both servers are used."""
    keys, index_keys = [], {}
    issuer = saml.idps["idp1"].entity_id
    for i in range(12):
        m = saml.mint(name_id="user%d" % i, session_index="si-%d" % i)
        c = sign_in(fleet, m)
        home = store.index_of(m.key)
        assert store.index_of(session_key(c)) == home, "session not with its claim"
        keys += [m.key, session_key(c)]
        for k in (logout_index_key(issuer, "user%d" % i),
                  logout_index_key(issuer, "user%d" % i, "si-%d" % i)):
            index_keys[k] = home
    listed = store.keys_by_server(KEY_PREFIX)
    for k in keys:
        i = store.index_of(k)
        assert i == memcache_server_index(k, 2)
        assert store.holders(k) == [i], (k, i, store.holders(k))
        assert [j for j, ks in listed.items() if k in ks] == [i], k
    claims_and_sessions = [k for ks in listed.values() for k in ks
                           if k.startswith((KEY_PREFIX + "a:", KEY_PREFIX + "s:"))]
    assert sorted(keys) == sorted(claims_and_sessions)
    for k, home in index_keys.items():
        assert [j for j, ks in listed.items() if k in ks] == [home], (k, home)
    # 12 claims on one server only: probability 2**-11
    assert listed[0] and listed[1], listed
    print("keys per server: %s" % {store.servers[i].address: len(ks) for i, ks in listed.items()})


@TWO
def test_idp_logout_finds_sessions_on_every_server(fleet, saml, store):
    """One user, four sign-ins with their claims (so their sessions and
    index entries) on both servers: the IdP's LogoutRequest ends all four."""
    from test_logout import local, sp_metadata
    idp = saml.idps["idp1"]
    cookies = [cookie_on(fleet, saml, store, i % 2, name_id="carol", session_index="SI-C")[0]
               for i in range(4)]
    url, _ = idp.logout_request_url(sp_metadata(fleet), "carol", session_index="SI-C")
    r = get(local(url, fleet.replicas[0].base_url))
    assert r.status_code == 302, r.text[:300]
    assert fleet.count_in_logs("sessions-ended=4") == 1
    for c in cookies:
        assert get(fleet.public + PAGE, cookie=c).status_code != 200


# --------------------------------------------------------------------------
# one of two servers stopped
# --------------------------------------------------------------------------

N_SIGN_INS = 40


@TWO
@pytest.mark.expect_log("claim_store_error", "session_read_store_error", "replay_refused")
def test_server_holding_a_claim_stopped_replay_503_live_keys_work_then_recovers(
        fleet, saml, store):
    # A sign-in; its claim lives on one server: that one is "dead" from now on.
    m = saml.mint()
    sign_in(fleet, m)
    dead = store.index_of(m.key)
    live = 1 - dead
    assert store.holders(m.key) == [dead]          # the formula and the servers agree
    # a session on each server (it lives with its claim)
    cookie_live, _ = cookie_on(fleet, saml, store, live)
    cookie_dead, _ = cookie_on(fleet, saml, store, dead)
    pids = [h.pid() for h in fleet.instances]

    store.servers[dead].stop()
    fleet.mark_logs()

    # 1. The replay of the assertion the dead server held: 503 on every
    #    replica and through the balancer (three times: each replica once),
    #    never 303 (a client that moved the key to the live server would
    #    win a fresh claim there) and never 403 (nobody can know).
    targets = fleet.targets() + [("balancer", fleet.public)] * 2
    for name, base in targets:
        r = post_acs(base, m.b64, relay_state=PAGE)
        assert r.status_code != 303, "%s: replay ACCEPTED with its claim's server down" % name
        assert_fail_closed(r, name)
    assert store.holders(m.key) == []               # nothing moved to the live server
    assert fleet.count_in_logs(TAGS["claim_store_error"]) >= len(targets)

    # 2. Sessions: on the live server they work everywhere; on the dead one
    #    they are not let through.
    for name, base in fleet.targets():
        assert get(base + PAGE, cookie=cookie_live).status_code == 200, name
        assert get(base + PAGE, cookie=cookie_dead).status_code != 200, name

    # 3. Fresh sign-ins, half with their claim on each server: exactly those
    #    whose claim maps to the dead server fail (503), every other one is
    #    accepted (its session and index entries are on its claim's server).
    fleet.mark_logs()
    results = []
    for i in range(N_SIGN_INS):
        idx = live if i % 2 == 0 else dead
        mi = mint_on(saml, store, idx, name_id="user%d" % i)
        r = post_acs(fleet.public, mi.b64, relay_state=PAGE)
        results.append((mi, idx, r.status_code, session_cookie(r)[0]))
    ok = []
    for mi, idx, status, cookie in results:
        if idx == dead:
            assert status == 503 and cookie is None, ("claim on the dead server", status)
            continue
        assert status == 303 and cookie, ("claim on the live server refused", status)
        sk = session_key(cookie)
        assert store.holders(mi.key) == [live] and store.holders(sk) == [live]
        ok.append((mi, cookie))
    assert len(ok) == N_SIGN_INS // 2
    assert fleet.count_in_logs(TAGS["sign_in_accepted"]) == len(ok)
    assert fleet.count_in_logs(TAGS["session_store_after_claim"]) == 0
    assert fleet.count_in_logs(TAGS["claim_store_error"]) == N_SIGN_INS // 2
    # what was accepted is single use, and its cookie works everywhere
    for i, (mi, cookie) in enumerate(ok):
        assert get(fleet.replicas[i % 3].base_url + PAGE, cookie=cookie).status_code == 200
        assert post_acs(fleet.public, mi.b64).status_code == 403

    # 4. The dead server started again, empty: the sign-in path works again.
    store.servers[dead].start()
    assert int(store.client(store.servers[dead]).stats()["curr_items"]) == 0
    for _ in range(3):
        mi = mint_on(saml, store, dead)
        r, _ = until(lambda: post_acs(fleet.public, mi.b64, relay_state=PAGE),
                     lambda r: r.status_code == 303)
        assert store.holders(mi.key) == [dead]
        for h in fleet.replicas:
            assert post_acs(h.base_url, mi.b64).status_code == 403, h.name
    cookie_back, _ = cookie_on(fleet, saml, store, dead)
    for name, base in fleet.targets():
        assert get(base + PAGE, cookie=cookie_back).status_code == 200, name
    assert [h.pid() for h in fleet.instances] == pids     # no httpd restart
    print("memcached2, server %d stopped: replay of its claim -> 503 x%d; %d sign-ins: "
          "claim on the dead server 503 x%d; claim on the live one 303 x%d; "
          "replays accepted: 0" % (dead, len(targets), N_SIGN_INS, N_SIGN_INS // 2, len(ok)))


# --------------------------------------------------------------------------
# one of two servers hung
# --------------------------------------------------------------------------

N_HUNG = 8


@TWO
@pytest.mark.expect_log("claim_store_error", "replay_refused")
def test_hung_server_503_within_timeout_replica_keeps_serving(fleet, saml, store):
    hung, live = 0, 1
    limit = store.timeout_s + 1.0
    cookie_live, _ = cookie_on(fleet, saml, store, live)
    h = fleet.replicas[0]
    stuck = [mint_on(saml, store, hung) for _ in range(N_HUNG)]
    # Warm the replica's children first (their store connections are made
    # on first use): not what this test measures.
    with concurrent.futures.ThreadPoolExecutor(max_workers=3 * N_HUNG) as ex:
        warm = list(ex.map(lambda mi: post_acs(h.base_url, mi.b64).status_code,
                           [mint_on(saml, store, live) for _ in range(3 * N_HUNG)]))
    assert set(warm) == {303}, warm

    def post(mi):
        t0 = time.monotonic()
        r = post_acs(h.base_url, mi.b64, relay_state=PAGE, timeout=30)
        t1 = time.monotonic()
        return r.status_code, t1 - t0, t1, session_cookie(r)[0], r.headers.get("Retry-After")

    def timed(fn):
        t0 = time.monotonic()
        r = fn()
        t1 = time.monotonic()
        return r.status_code, t1 - t0, t1

    store.servers[hung].pause()
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=N_HUNG) as ex:
            futures = [ex.submit(post, mi) for mi in stuck]
            time.sleep(0.1)
            # meanwhile, on the same replica
            meta = timed(lambda: get(h.base_url + "/saml/metadata"))
            page = timed(lambda: get(h.base_url + PAGE, cookie=cookie_live))
            res = [f.result(timeout=60) for f in futures]
        # a sign-in whose claim maps to the live server, while the other
        # one is still hung: 303 (its session is on the live server too)
        mi = mint_on(saml, store, live)
        t0 = time.monotonic()
        r = post_acs(h.base_url, mi.b64, relay_state=PAGE, timeout=30)
        other = (r.status_code, time.monotonic() - t0)
    finally:
        store.servers[hung].resume()

    for status, elapsed, _end, cookie, retry_after in res:
        assert status == 503 and cookie is None and retry_after, (status, cookie)
        assert elapsed < limit, "a hung memcached held a sign-in %.2fs (limit %.1fs)" % (
            elapsed, limit)
    last_hung_end = max(end for _s, _e, end, _c, _r in res)
    for what, (status, elapsed, end) in (("metadata", meta), ("protected page", page)):
        assert status == 200, (what, status)
        assert end < last_hung_end, "%s waited for the hung sign-ins" % what
        assert elapsed < store.timeout_s, "%s took %.2fs" % (what, elapsed)
    assert other[0] == 303 and other[1] < limit, other

    # resumed: the sign-in path on that server works again (the adds sent
    # while it was stopped may be carried out late: those assertions are
    # burned, never accepted)
    for _ in range(3):
        mi = mint_on(saml, store, hung)
        until(lambda: post_acs(fleet.public, mi.b64, relay_state=PAGE),
              lambda r: r.status_code == 303)
        for rep in fleet.replicas:
            assert post_acs(rep.base_url, mi.b64).status_code == 403, rep.name
    print("memcached2, server %d hung: %d sign-ins -> 503 after %s s (timeout %.1f s); "
          "meanwhile metadata %.3f s, protected page %.3f s; live-server sign-in %r"
          % (hung, N_HUNG, sorted(round(e, 2) for _s, e, _t, _c, _r in res), store.timeout_s,
             meta[1], page[1], other))


# --------------------------------------------------------------------------
# memcached full
# --------------------------------------------------------------------------

def fill_until_out_of_memory(client, max_value=3000, batch=500, limit_per_size=40000):
    """Store never-expiring filler items of growing sizes until each size
    is refused with SERVER_ERROR out of memory: every slab class up to
    max_value bytes is full (with -M memcached does not evict; it gives
    each class its first page even past -m, so every class is filled).
    Returns the number of items stored."""
    stored = 0
    size = 8
    while size <= max_value:
        value = b"f" * size
        n, full = 0, False
        while not full and n < limit_per_size:
            items = [(b"fill:%d:%d" % (size, n + i), value) for i in range(batch)]
            replies = client.store_many("set", items)
            n += batch
            stored += replies.count("STORED")
            bad = [r for r in replies if r != "STORED"]
            assert all(r.startswith("SERVER_ERROR out of memory") for r in bad), bad[:3]
            full = bool(bad)
        assert full, "size %d: still storing after %d items" % (size, n)
        size = int(size * 1.1) + 1
    return stored


@ONE
@pytest.mark.expect_log("claim_store_error", "session_store_after_claim", "replay_refused")
def test_memcached_full_fails_closed(fleet, saml, store, workdir):
    full = MemcachedServer(os.path.join(workdir, "memcached-full"),
                           options=("-U", "0", "-m", "2", "-M", "-o", "no_slab_reassign"))
    full.start()
    try:
        c = full.client()
        assert c.stats_settings()["evictions"] == "off"
        fleet.restart_replicas(store_url=full.url)
        sign_in(fleet, saml.mint())       # works while there is room
        t0 = time.monotonic()
        n = fill_until_out_of_memory(c)
        fill_s = time.monotonic() - t0
        with pytest.raises(MemcacheError, match="out of memory"):
            c.add("probe:" + "x" * 43, b"v" * 120, 60)

        fleet.mark_logs()
        minted = [saml.mint() for _ in range(3)]
        for m in minted:
            for name, base in fleet.targets():
                assert_fail_closed(post_acs(base, m.b64, relay_state=PAGE), name)
            assert not c.exists(m.key)
        # only the sign-in from before the fill: one claim, one session
        assert len(c.keys(KEY_PREFIX + "a:")) == 1
        assert len(c.keys(KEY_PREFIX + "s:")) == 1
        assert fleet.count_in_logs(TAGS["sign_in_accepted"]) == 0
        errors = log_lines(fleet, TAGS["claim_store_error"]) + \
            log_lines(fleet, TAGS["session_store_after_claim"])
        assert len(errors) == 3 * len(fleet.targets()), errors
        assert all("out of memory" in line for line in errors), errors[:3]
        assert int(c.stats()["evictions"]) == 0

        # room again (flushed items are reclaimed on allocation): works again
        c.flush_all()
        m = minted[0]
        until(lambda: post_acs(fleet.public, m.b64, relay_state=PAGE),
              lambda r: r.status_code == 303)
        assert c.exists(m.key)
        for h in fleet.replicas:
            assert post_acs(h.base_url, m.b64).status_code == 403
        c.close()
    finally:
        full.stop()
    print("memcached full: %d filler items in %.1f s; 3 responses x %d targets -> 503, "
          "nothing accepted" % (n, fill_s, len(fleet.targets())))


# --------------------------------------------------------------------------
# what the module says to memcached
# --------------------------------------------------------------------------

@ONE
@pytest.mark.expect_log("replay_refused")
def test_claim_is_one_add_with_its_expiry_nothing_read_before(fleet, saml, store):
    """memcached's watch log: the first post's only commands on the claim
    key are one ``add`` (logged as memcached's own lookup, then the store)
    with expiry ceil(window_end - now + skew) + the module's margin (1 s,
    for memcached's once-a-second clock); the replay's ``add`` is
    refused, then one ``get`` names the first claimant (each add is
    followed by that read, in the same pipeline); the won sign-in
    completes its claim with one ``cas`` (after its session). The session is a
    ``set`` with the session lifetime, after the claim was won."""
    m = saml.mint(not_on_or_after_offset=240, scd_not_on_or_after_offset=300)
    w = MemcacheWatch(store.servers[0])
    try:
        t0 = time.time()
        first = post_acs(fleet.acs_url, m.b64)
        t1 = time.time()
        second = post_acs(fleet.acs_url, m.b64)
    finally:
        entries = w.stop()
    assert (first.status_code, second.status_code) == (303, 403)
    keyed = [e for e in entries if e.get("key") == m.key]
    on_claim = [(e["type"], e.get("cmd"), e.get("status")) for e in keyed]
    expected = [
        ("item_get", None, "not_found"), ("item_store", "add", "stored"),         # first post
        ("item_get", None, "found"),               # read with it (never the verdict)
        ("item_get", None, "found"), ("item_store", "cas", "stored"),  # completed: compare-and-set
        ("item_get", None, "found"), ("item_store", "add", "not_stored"),         # the replay
        ("item_get", None, "found"),                                              # who claimed it
    ]
    # memcached's watch merges the logs of its worker threads: entries of two
    # connections (two replicas) can come out of order, one connection's never
    assert sorted(on_claim, key=repr) == sorted(expected, key=repr), on_claim

    def before(e, key=None):
        """The entries of e's connection logged before e (on key, if given)."""
        return [x for x in entries[:entries.index(e)]
                if x.get("cfd") == e.get("cfd") and (key is None or x.get("key") == key)]

    won = next(e for e in keyed if e.get("cmd") == "add" and e.get("status") == "stored")
    lost = next(e for e in keyed if e.get("cmd") == "add" and e.get("status") == "not_stored")
    cas = next(e for e in keyed if e.get("cmd") == "cas")
    # nothing read before the claim: on its connection, the first post's only
    # entry on the key before its add is memcached's own lookup inside the add
    assert [(x["type"], x.get("status")) for x in before(won, m.key)] == [("item_get", "not_found")]
    # each add: memcached logs its own lookup just before the store, same connection
    for a in (won, lost):
        assert before(a) and before(a)[-1]["type"] == "item_get" and before(a)[-1]["key"] == m.key
    if cas.get("cfd") == won.get("cfd"):
        assert entries.index(cas) > entries.index(won)
    adds = [won]
    # the expiry sent: ceil(ttl_ms / 1000) + margin, ttl = window_end - now + 60 s
    ttl = int(adds[0]["ttl"])
    lo = math.ceil(m.window_end + 60 - t1) + store.expiry_margin_s
    hi = math.ceil(m.window_end + 60 - t0) + store.expiry_margin_s
    assert lo <= ttl <= hi, (ttl, lo, hi)
    cookie, _ = session_cookie(first)
    sk = session_key(cookie)
    on_session = [e for e in entries if e.get("key") == sk and e["type"] == "item_store"]
    assert [e["cmd"] for e in on_session] == ["set"], on_session
    assert abs(int(on_session[0]["ttl"]) - 28800) <= 5, on_session   # the session lifetime
    if on_session[0].get("cfd") == won.get("cfd"):
        assert entries.index(on_session[0]) > entries.index(won)
    assert not any(cookie in e.get("key", "") for e in entries)
    print("watch: claim add ttl=%d (rule %d..%d), session set ttl=%s"
          % (ttl, lo, hi, on_session[0]["ttl"]))


@pytest.mark.backends("memcached1")
@pytest.mark.expect_log("RSP01004")
def test_request_use_is_one_add_nothing_read_before(fleet, saml, store):
    """memcached's watch log: two different answers to one AuthnRequest;
    the request's use key is first touched by an ``add`` (memcached's own
    lookup inside it just before), once per post, and stored only once:
    the second is refused (request-used), not let through by a read."""
    import hashlib
    from test_login import answer, start
    req_id, _, relay = start(fleet, saml)
    a, b = answer(saml, req_id), answer(saml, req_id)
    use = KEY_PREFIX + "u:" + b64url_nopad(hashlib.sha256(req_id.encode()).digest())
    w = MemcacheWatch(store.servers[0])
    try:
        ra = post_acs(fleet.acs_url, a.b64, relay_state=relay)
        rb = post_acs(fleet.acs_url, b.b64, relay_state=relay)
    finally:
        entries = w.stop()
    assert (ra.status_code, rb.status_code) == (303, 400)
    mine = [e for e in entries if e.get("key") == use]
    on = [(e["type"], e.get("cmd"), e.get("status")) for e in mine]
    # memcached writes each worker thread's entries in order, but two
    # connections' entries may interleave in any order: compare per
    # connection
    stores = sorted((e.get("cmd"), e.get("status")) for e in mine if e["type"] == "item_store")
    assert stores == [("add", "not_stored"), ("add", "stored")], on
    won = next(e for e in mine if e["type"] == "item_store" and e.get("status") == "stored")
    before = [e for e in mine[:mine.index(won)] if e.get("cfd") == won.get("cfd")]
    # nothing on that connection before the add but memcached's own lookup
    # inside it
    assert [(e["type"], e.get("status")) for e in before] == [("item_get", "not_found")], on
