"""What the module says to Redis, watched with MONITOR: the claim, an
AuthnRequest's use and an IdP LogoutRequest's ID are each taken by one
``SET key value NX PX ttl`` with nothing read before it (a GET followed by
a SET would let two answers through), and connections are made per child
and reused across requests, not one per request. Also, on every backend:
many different answers to one AuthnRequest at once make one session."""

import os
import re
import threading
import time

import pytest

import http_client
import httpd_fleet
import stores
from http_client import post_acs, session_cookie
from httpd_fleet import Httpd
from redis_nodes import RedisClient

# what clients send (the commands a script runs are listed as "[db lua]")
CMD_RE = re.compile(r'^\+?[\d.]+ \[\d+ (?!lua\])[^\]]+\] (.*)$')


def parse_args(rest):
    """'"SET" "k" "v"' -> ['SET', 'k', 'v'] (MONITOR quotes every argument)."""
    return [a.encode().decode("unicode_escape") for a in re.findall(r'"((?:[^"\\]|\\.)*)"', rest)]


class Monitor:
    """Redis MONITOR on its own connection; commands collected by a thread."""

    def __init__(self, redis):
        self.client = RedisClient(port=redis.port, timeout=0.5)
        assert self.client.call("MONITOR") == "OK"
        self.commands = []
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        deadline = time.time() + 120
        while not self._stop and time.time() < deadline:
            try:
                line = self.client._line().decode("utf-8", "replace")
            except OSError:
                continue          # read timeout: look at _stop again
            except ConnectionError:
                return
            m = CMD_RE.match(line)
            if m:
                self.commands.append(parse_args(m.group(1)))

    def stop(self):
        time.sleep(0.3)           # let the last commands arrive
        self._stop = True
        self._thread.join(timeout=5)
        self.client.close()
        return self.commands


def naming(commands, key):
    return [c for c in commands if key in c[1:]]


@pytest.mark.backends("redis")
@pytest.mark.expect_log("replay_refused")
def test_claim_is_one_set_nx_px_with_nothing_read_before(fleet, saml, redis):
    m = saml.mint()
    mon = Monitor(redis)
    try:
        first = post_acs(fleet.acs_url, m.b64)
        second = post_acs(fleet.acs_url, m.b64)
    finally:
        commands = mon.stop()
    assert (first.status_code, second.status_code) == (303, 403)
    on_claim = naming(commands, m.key)
    # Each post: SET NX PX on the claim key, whose reply is the verdict,
    # then a GET pipelined with it (to name the first claimant in a
    # replay's log line; never part of the verdict). Nothing before it. The
    # won sign-in completes its claim last, with a compare-and-set script.
    # (EVALSHA, and EVAL with the script's text when the server did not
    # have it yet)
    names = [c[0].upper() for c in on_claim]
    completion = names[2:-2]
    assert names[:2] == ["SET", "GET"] and names[-2:] == ["SET", "GET"], on_claim
    assert completion in (["EVALSHA"], ["EVALSHA", "EVAL"]), on_claim
    for c in (on_claim[0], on_claim[-2]):
        assert [a.upper() for a in c[3:5]] == ["NX", "PX"] and int(c[5]) > 0, c
    for c in on_claim[2:-2]:
        # EVAL[SHA] script 1 key expected new: ours, open -> completed
        assert c[3] == m.key and c[4] == on_claim[0][2] and "o=1" in c[4], c
        assert "o=1" not in c[5], c
    # The session is written after the claim was won, under the hash of the
    # cookie value, never the value itself.
    cookie, _ = session_cookie(first)
    sess_key = stores.session_key(cookie)
    order = [c[1] for c in commands if c[0].upper() == "SET"]
    assert order.index(m.key) < order.index(sess_key)
    assert not any(cookie in " ".join(c) for c in commands)


def test_connections_are_reused_across_requests(workdir, module_so, redis, sp_config, idps):
    """One child, two threads: however many requests, at most a couple of
    connections are ever made."""
    h = Httpd(os.path.join(workdir, "reuse"), "reuse", modules=[("replay_sp_module", module_so)],
              log_level="warn replay_sp:info", threads=2, start_servers=1)
    h.body = httpd_fleet.sp_conf_body(redis.url, sp_config)
    h.write_file("index.html", "reuse\n")
    rc = redis.client()
    h.start()
    try:
        before = int(rc.info("stats")["total_connections_received"])
        acs = h.base_url + httpd_fleet.ENDPOINT + "/acs"
        n = 25
        for _ in range(n):
            r = post_acs(acs, idps["idp1"].mint(sp_config["entity_id"], acs))
            assert r.status_code == 303
            cookie, _ = session_cookie(r)
            assert http_client.get(h.base_url + "/index.html", cookie=cookie).status_code == 200
        after = int(rc.info("stats")["total_connections_received"])
    finally:
        h.stop()
        rc.close()
    # 75 commands over n requests; at most one connection per worker thread
    # (and per child, should the MPM start another).
    assert after - before <= 4, "%d connections for %d sign-ins" % (after - before, n)


# --------------------------------------------------------------------------
# every other atomic consumption: one create-if-absent, nothing read before
# --------------------------------------------------------------------------

def _hashed(kind, data):
    import hashlib
    return stores.KEY_PREFIX + kind + stores.b64url_nopad(hashlib.sha256(data).digest())


def first_touch_is_set_nx(commands, key):
    """The commands naming key: the first is SET key ... NX PX, and every
    write of it is one (no GET-then-SET)."""
    on = naming(commands, key)
    assert on, "no command on %s" % key
    first = on[0]
    assert first[0].upper() == "SET" and [a.upper() for a in first[3:5]] == ["NX", "PX"], on
    for c in on:
        assert c[0].upper() in ("SET", "GET"), on
        if c[0].upper() == "SET":
            assert [a.upper() for a in c[3:5]] == ["NX", "PX"], on
    return on


@pytest.mark.backends("redis")
@pytest.mark.expect_log("RSP01004")
def test_request_id_used_up_by_one_set_nx(fleet, saml, redis):
    """An AuthnRequest's ID is used up by the one SET NX PX on its use key,
    nothing read before it: two different responses to one request, the
    second refused (request-used)."""
    from test_login import answer, start
    req_id, _, relay = start(fleet, saml)
    a, b = answer(saml, req_id), answer(saml, req_id)
    mon = Monitor(redis)
    try:
        ra = post_acs(fleet.acs_url, a.b64, relay_state=relay)
        rb = post_acs(fleet.acs_url, b.b64, relay_state=relay)
    finally:
        commands = mon.stop()
    assert (ra.status_code, rb.status_code) == (303, 400), (ra.status_code, rb.status_code)
    assert fleet.count_in_logs("check=request-used") == 1
    use = _hashed("u:", req_id.encode())
    on = first_touch_is_set_nx(commands, use)
    assert [c[0].upper() for c in on].count("SET") == 2, on   # one per post
    # and the pending request itself is only read, never consumed by a write
    pend = _hashed("q:", req_id.encode())
    assert all(c[0].upper() == "GET" for c in naming(commands, pend)), naming(commands, pend)


@pytest.mark.backends("redis")
@pytest.mark.expect_log("RSP01035")
def test_logout_request_id_taken_by_one_set_nx(fleet, saml, redis):
    """An IdP's LogoutRequest ID: one SET NX PX, nothing read before it;
    the same request again is refused (replayed)."""
    from test_logout import local, sign_in, sp_metadata
    idp = saml.idps["idp1"]
    sign_in(fleet, saml, session_index="SI-P")
    url, req_id = idp.logout_request_url(sp_metadata(fleet), "alice", session_index="SI-P")
    mon = Monitor(redis)
    try:
        r1 = http_client.get(local(url, fleet.public))
        r2 = http_client.get(local(url, fleet.public))
    finally:
        commands = mon.stop()
    assert (r1.status_code, r2.status_code) == (302, 400)
    key = _hashed("i:", idp.entity_id.encode() + b"\x00" + req_id.encode())
    on = first_touch_is_set_nx(commands, key)
    assert [c[0].upper() for c in on].count("SET") == 2, on


@pytest.mark.expect_log("RSP01004", "RSP01003", "RSP01032")
def test_many_answers_to_one_request_at_once_make_one_session(fleet, saml, store):
    """Twenty different valid responses to one AuthnRequest, posted at once
    while the store is paused a moment (so that they pile up and reach it
    together): exactly one session, the others refused as answering a
    request already answered."""
    from test_login import answer, start
    req_id, _, relay = start(fleet, saml)
    responses = [answer(saml, req_id) for _ in range(20)]
    before = set(store.session_keys())
    statuses = []
    lock = threading.Lock()

    def go(m, base):
        s = post_acs(base, m.b64, relay_state=relay).status_code
        with lock:
            statuses.append(s)
    bases = [h.base_url for h in fleet.replicas]
    threads = [threading.Thread(target=go, args=(m, bases[i % len(bases)]))
               for i, m in enumerate(responses)]
    store.pause_all()
    try:
        for t in threads:
            t.start()
        time.sleep(0.3)
    finally:
        store.resume_all()
    for t in threads:
        t.join(60)
    assert statuses.count(303) == 1, sorted(statuses)
    assert set(statuses) <= {303, 400, 503}, sorted(statuses)
    assert len(set(store.session_keys()) - before) == 1
