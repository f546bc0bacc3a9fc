"""The guard in front of SimpleSAMLphp as the SP (Debian's simplesamlphp
under mod_php, prefork MPM), on Redis and memcached: three replicas behind
the balancer, each running SimpleSAMLphp with its sessions (and its own
record of received assertions) in one memcached the replicas share (its
``memcache`` store: without it a sign-in's session stays on the replica
that made it), the guard over its assertion consumer
``/simplesaml/module.php/saml/sp/saml2-acs.php/default-sp`` (ssp.py).

What reached SimpleSAMLphp, byte for byte, and what it answered, is read
from the log a PHP file prepended to every request writes
(apps/ssp_prepend.php).

The negative controls (Redis only, the replicas restarted without the
guard): on the shared store, SimpleSAMLphp refuses a second post of one
response (get, then set), but it remembers an assertion until its
Conditions NotOnOrAfter + 60 s while it accepts one until + 180 s
(``assertion.allowed_clock_skew``): an assertion whose Conditions end has
passed by more than 60 s (an IdP clock that lags, a short Conditions
window) is accepted again on every post; with its default store
(``phpsession``) it keeps no record at all and accepts one response on
every post, even on one replica. 50 concurrent posts of one fresh
response are counted too (its check is not atomic).
"""

import concurrent.futures
import os
import threading
import urllib.parse

import pytest
import requests

import ssp
from apps import ambiguous_requests, post_form, raw_request
from common import HarnessError
from http_client import set_cookie_headers
from memcached_nodes import MemcachedServer
from stores import claim_key

BURST = 50
PAGE = "/app/whoami.php"

pytestmark = [pytest.mark.backends("redis", "memcached1"),
              pytest.mark.skipif(not ssp.available(),
                                 reason="simplesamlphp or libapache2-mod-php8.2 not installed")]


@pytest.fixture(scope="module")
def ssp_memcached(workdir):
    """The memcached SimpleSAMLphp's replicas share (its own store, not the
    guard's)."""
    m = MemcachedServer(os.path.join(workdir, "ssp-memcached"), name="ssp-memcached")
    m.start()
    yield m
    m.stop()


@pytest.fixture(scope="module")
def ssp_session(request, workdir, module_so, store, idps, ssp_memcached):
    module, why = ssp.module_for_php(module_so)
    if module is None:
        pytest.skip(why)
    f = ssp.SimpleSAMLphpFleet(os.path.join(workdir, "ssp-%s" % store.name), module, store,
                               idps["idp1"], ssp_memcached)
    request.addfinalizer(f.stop)
    try:
        f.start()
    except HarnessError as e:
        pytest.fail("the SimpleSAMLphp fleet did not start:\n%s" % e, pytrace=False)
    return f


@pytest.fixture
def sspf(ssp_session, store):
    """The guarded fleet on SimpleSAMLphp's shared store, the guard's store
    up and empty, log marks set."""
    ssp_session.reconfigure(guard=True, ssp_store="memcache")
    store.heal()
    ssp_session.mark_logs()
    ssp_session.mark_backend()
    yield ssp_session
    store.heal()


class Minter:
    def __init__(self, idp, testidp, f):
        self.idp, self.testidp, self.f = idp, testidp, f

    def mint(self, **kw):
        kw.setdefault("assertion_id", self.testidp.random_id())
        return kw["assertion_id"], self.idp.mint(ssp.SP_ENTITY_ID, self.f.post_url, **kw)


@pytest.fixture
def minter(idps, testidp, sspf):
    return Minter(idps["idp1"], testidp, sspf)


def relay(f):
    return f.public + PAGE


def post(url, b64, relay_state):
    return post_form(url, {"SAMLResponse": b64, "RelayState": relay_state})


def accepted(r):
    return r.status_code in (302, 303) and any(c.startswith(ssp.AUTH_COOKIE + "=")
                                               for c in set_cookie_headers(r))


def targets(f):
    return [f.post_url] + [h.base_url + ssp.ACS_PATH for h in f.replicas]


def form_of(b64, relay_state):
    return urllib.parse.urlencode({"SAMLResponse": b64, "RelayState": relay_state})


def late_conditions(minter):
    """An assertion SimpleSAMLphp accepts but forgets at once: its
    Conditions NotOnOrAfter passed 70 s ago (within its 180 s skew; its
    record is kept until that + 60 s), its SubjectConfirmationData good
    for 4 more minutes."""
    return minter.mint(not_on_or_after_offset=-70, scd_not_on_or_after_offset=240)


# --------------------------------------------------------------------------
# with the guard
# --------------------------------------------------------------------------

@pytest.mark.expect_log("replay_refused")
def test_a_response_signs_in_once_and_passes_unchanged(sspf, minter, store):
    """The body reaches SimpleSAMLphp byte for byte (Content-Length, not
    chunked, the RelayState as posted); its answer (303, Location, its
    session cookies) reaches the browser unchanged; the session works on
    every replica (its shared store); a second post is refused by the
    guard and never reaches PHP."""
    aid, b64 = minter.mint(name_id="alice")
    r = post(sspf.post_url, b64, relay(sspf))
    assert accepted(r), (r.status_code, r.headers, r.text[:300])
    got = sspf.received()
    assert len(got) == 1, got
    body = form_of(b64, relay(sspf))
    assert got[0]["body"] == body, "the body reached SimpleSAMLphp changed"
    assert got[0]["content_length"] == str(len(body)) and not got[0]["transfer_encoding"]
    assert got[0]["method"] == "POST" and got[0]["query"] == ""
    ans = sspf.answered()
    assert len(ans) == 1 and ans[0]["status"] == r.status_code == 303, ans
    assert r.headers["Location"] == ans[0]["location"] == relay(sspf)
    assert set_cookie_headers(r) == ans[0]["set_cookie"], (set_cookie_headers(r), ans)
    for h in sspf.replicas:
        page = requests.get(h.base_url + PAGE, cookies=r.cookies, timeout=30)
        assert page.status_code == 200 and page.text == "alice\n", (h.name, page.status_code)
    assert store.claim_keys() == [claim_key(minter.idp.entity_id, aid)]
    again = post(sspf.post_url, b64, relay(sspf))
    assert again.status_code == 403 and not accepted(again)
    assert len(sspf.received()) == 1


def test_a_body_near_the_limit_passes_whole(sspf, minter):
    aid, b64 = minter.mint()
    base = form_of(b64, relay(sspf))
    body = base + "&pad=" + "A" * (262144 - len(base) - 20)
    r = requests.post(sspf.post_url, data=body, allow_redirects=False, timeout=30,
                      headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert accepted(r), (r.status_code, r.text[:300])
    got = sspf.received()
    assert len(got) == 1 and got[0]["body"] == body, "the body reached SimpleSAMLphp changed"
    assert got[0]["content_length"] == str(len(body))


@pytest.mark.expect_log("replay_refused")
def test_30_sequential_posts_one_accepted(sspf, minter):
    aid, b64 = minter.mint()
    ts = targets(sspf)
    rs = [post(ts[i % len(ts)], b64, relay(sspf)) for i in range(30)]
    n = sum(accepted(r) for r in rs)
    print("guarded (SimpleSAMLphp): 30 sequential posts of one response -> %d accepted" % n)
    assert n == 1, [r.status_code for r in rs]
    assert sum(r.status_code == 403 for r in rs) == 29
    assert len(sspf.received()) == 1


@pytest.mark.expect_log("replay_refused")
def test_50_concurrent_posts_one_accepted(sspf, minter):
    aid, b64 = minter.mint()
    barrier = threading.Barrier(BURST, timeout=30)

    def one(_):
        barrier.wait()
        return post(sspf.post_url, b64, relay(sspf))
    with concurrent.futures.ThreadPoolExecutor(max_workers=BURST) as ex:
        rs = list(ex.map(one, range(BURST), timeout=120))
    n = sum(accepted(r) for r in rs)
    print("guarded (SimpleSAMLphp): %d concurrent posts -> %d accepted" % (BURST, n))
    assert n == 1, sorted(r.status_code for r in rs)
    assert sum(r.status_code == 403 for r in rs) == BURST - 1
    assert len(sspf.received()) == 1


@pytest.mark.expect_log("replay_refused")
def test_same_assertion_in_a_new_envelope_refused(sspf, minter):
    aid, b64 = minter.mint()
    assert accepted(post(sspf.post_url, b64, relay(sspf)))
    _, again = minter.mint(assertion_id=aid)
    assert again != b64
    r = post(sspf.post_url, again, relay(sspf))
    assert r.status_code == 403 and not accepted(r)
    assert len(sspf.received()) == 1


@pytest.mark.expect_log("replay_refused")
def test_first_response_refused_after_120_sign_ins(sspf, minter):
    aid, first = minter.mint(name_id="first")
    assert accepted(post(sspf.post_url, first, relay(sspf)))
    for i in range(120):
        _, b64 = minter.mint(name_id="user%d" % i)
        r = post(sspf.post_url, b64, relay(sspf))
        assert accepted(r), (i, r.status_code, r.text[:200])
    for h in sspf.replicas:
        r = post(h.base_url + ssp.ACS_PATH, first, relay(sspf))
        assert r.status_code == 403, (h.name, r.status_code)
    assert len(sspf.received()) == 121


@pytest.mark.expect_log("replay_refused")
def test_sp_initiated_sign_in_across_replicas(sspf, minter, testidp, store):
    """SimpleSAMLphp's own AuthnRequest, made on one replica (its state in
    the shared store), answered with InResponseTo and posted to another
    through the guard: signed in, the page answers on a third; the
    response cannot be used again."""
    r1, r2, r3 = (h.base_url for h in sspf.replicas)
    start = requests.get(r1 + "/app/login.php", allow_redirects=False, timeout=30)
    assert start.status_code in (302, 303), (start.status_code, start.text[:300])
    loc = start.headers["Location"]
    assert loc.startswith(minter.idp.sso_url), loc
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(loc).query)
    rid, acs_url = testidp.parse_redirect_authn_request(q["SAMLRequest"][0])
    assert acs_url == sspf.post_url, acs_url
    _, b64 = minter.mint(in_response_to=rid, name_id="sp-initiated")
    back = post(r2 + ssp.ACS_PATH, b64, q["RelayState"][0])
    assert accepted(back), (back.status_code, back.text[:300])
    assert back.headers["Location"] == sspf.public + "/app/login.php", back.headers
    page = requests.get(r3 + "/app/login.php", cookies=back.cookies, allow_redirects=False,
                        timeout=30)
    assert page.status_code == 200 and page.text == "sp-initiated\n", (page.status_code,
                                                                       page.text[:200])
    assert len(store.claim_keys()) == 1
    again = post(r3 + ssp.ACS_PATH, b64, q["RelayState"][0])
    assert again.status_code == 403


@pytest.mark.expect_log("replay_refused")
def test_an_assertion_it_would_forget_is_accepted_once(sspf, minter):
    """The response SimpleSAMLphp alone accepts on every post (see the
    negative control): once with the guard, which claims it for its whole
    window plus ReplaySPClockSkew (set to SimpleSAMLphp's 180 s)."""
    aid, b64 = late_conditions(minter)
    ts = targets(sspf)
    rs = [post(ts[i % len(ts)], b64, relay(sspf)) for i in range(8)]
    n = sum(accepted(r) for r in rs)
    print("guarded (SimpleSAMLphp): 8 posts of an assertion past its Conditions -> %d accepted"
          % n)
    assert n == 1, [r.status_code for r in rs]
    assert len(sspf.received()) == 1


@pytest.mark.expect_log("check_refused")
def test_invalid_responses_refused_before_simplesamlphp(sspf, minter, idps, testidp, store):
    cases = {
        "signature": testidp.TestIdP.tamper(minter.mint()[1]),
        "audience": minter.mint(audience="https://other-sp.example/")[1],
        "destination": minter.mint(destination=sspf.public + "/other/acs")[1],
        "issuer": idps["unknown"].mint(ssp.SP_ENTITY_ID, sspf.post_url),
    }
    for check, b64 in cases.items():
        sspf.mark_logs()
        r = post(sspf.post_url, b64, relay(sspf))
        assert r.status_code == 400 and not accepted(r), (check, r.status_code)
        lines = [l for ls in sspf.new_log_lines().values() for l in ls if "RSP01004" in l]
        assert len(lines) == 1 and "check=%s:" % check in lines[0], (check, lines)
    assert sspf.received() == [] and store.claim_keys() == []


@pytest.mark.expect_log("check_refused")
def test_ambiguous_inputs_refused_before_simplesamlphp(sspf, minter, store):
    """Query and body, the response in the query of a GET (SimpleSAMLphp's
    consumer takes the HTTP-Redirect binding too), a parameter twice,
    multipart (PHP parses it into $_POST), other content types, a chunked
    body, an artifact: each refused by the guard, sent straight to a
    replica; PHP never ran for it; nothing claimed; the response still
    good afterwards."""
    aid, b64 = minter.mint()
    reqs = ambiguous_requests(ssp.ACS_PATH, b64, relay(sspf))
    art = b"SAMLart=AAQAAMFbLinlXaCM%2BFIxiDwGOLAy2T71gbpO7ZhNzAgEANlB90ECfpNEVLg%3D"
    reqs["artifact"] = ("POST", ssp.ACS_PATH,
                        [("Content-Type", "application/x-www-form-urlencoded"),
                         ("Content-Length", str(len(art)))], art)
    replica = sspf.replicas[1].base_url
    for case, (method, target, headers, body) in reqs.items():
        sspf.mark_logs()
        status, hdrs, _ = raw_request(replica, method, target, headers, body)
        assert status == 400, (case, status)
        lines = [l for ls in sspf.new_log_lines().values() for l in ls if "RSP01004" in l]
        assert len(lines) == 1 and "check=ambiguous:" in lines[0], (case, lines)
        assert not any(k.lower() == "set-cookie" for k, _ in hdrs), case
        assert sspf.received() == [], (case, "SimpleSAMLphp received it")
        assert store.claim_keys() == [], (case, "something was claimed")
    r = post(sspf.post_url, b64, relay(sspf))
    assert accepted(r), (r.status_code, r.text[:300])


# --------------------------------------------------------------------------
# the negative controls: SimpleSAMLphp alone
# --------------------------------------------------------------------------

@pytest.mark.backends("redis")
def test_without_guard_simplesamlphp_accepts_a_response_more_than_once(sspf, minter):
    sspf.reconfigure(guard=False, ssp_store="memcache")
    sspf.mark_backend()
    ts = targets(sspf)
    # its own check, on the shared store: a plain re-post is refused
    _, b64 = minter.mint()
    rs = [post(ts[i % len(ts)], b64, relay(sspf)) for i in range(6)]
    plain = sum(accepted(r) for r in rs)
    # 50 at once: get, then set (not atomic)
    _, b64 = minter.mint()
    barrier = threading.Barrier(BURST, timeout=30)

    def one(_):
        barrier.wait()
        return post(sspf.post_url, b64, relay(sspf))
    with concurrent.futures.ThreadPoolExecutor(max_workers=BURST) as ex:
        burst = sum(accepted(r) for r in ex.map(one, range(BURST), timeout=120))
    # an assertion it forgets before it stops accepting it
    _, b64 = late_conditions(minter)
    rs = [post(ts[i % len(ts)], b64, relay(sspf)) for i in range(12)]
    late = [r.headers.get("X-RSP-Replica") for r in rs if accepted(r)]
    print("unguarded (SimpleSAMLphp, shared memcache store, 3 replicas): one response posted "
          "6 times -> %d accepted; %d concurrent -> %d accepted; an assertion past its "
          "Conditions (by 70 s) posted 12 times -> %d accepted (%s)"
          % (plain, BURST, burst, len(late), ", ".join(sorted(set(late)))))
    assert plain == 1, [r.status_code for r in rs]
    assert burst >= 1
    assert len(late) > 1 and set(late) == {h.name for h in sspf.replicas}, late


@pytest.mark.backends("redis")
def test_without_guard_the_default_store_accepts_every_post_on_one_replica(sspf, minter):
    sspf.reconfigure(guard=False, ssp_store="phpsession")
    _, b64 = minter.mint()
    url = sspf.replicas[0].base_url + ssp.ACS_PATH
    rs = [post(url, b64, relay(sspf)) for i in range(6)]
    n = sum(accepted(r) for r in rs)
    print("unguarded (SimpleSAMLphp, default phpsession store, one replica): one response "
          "posted 6 times -> %d accepted" % n)
    assert n == 6, [r.status_code for r in rs]
