"""The guard in front of application SPs behind mod_proxy, on Redis and
memcached: three replicas behind the balancer, replica i proxying the
application's assertion consumer (a route of the app, ``/sso/acs``) to
its own instance i, the guard over it (apps.py):

* ``flask``: Flask + python3-saml (Debian's python3-onelogin-saml2) under
  gunicorn, ``ProxyPass http://``;
* ``ruby``: a Rack app + ruby-saml (Debian's ruby-saml) under puma,
  ``ProxyPass http://``;
* ``flask-uwsgi``: the Flask app under uwsgi, ``ProxyPass uwsgi://``
  (mod_proxy_uwsgi), and ``flask-fcgi``: under uwsgi's FastCGI socket,
  ``ProxyPass fcgi://`` (mod_proxy_fcgi): applications that do not speak
  HTTP; the heavy cases (50 concurrent posts, 120 sign-ins, the re-wrapped
  assertion) run on the two HTTP apps only.

Each app checks the response itself (signature, audience, Destination and
Recipient against its configured public URL, times) and keeps the
assertion IDs it accepted, per instance, as their documentation asks.
Each instance's own log (one JSON line per request to the ACS as it was
received, and per answer as it left) is the evidence of what reached the
backend, byte for byte, and of what it answered.

Without the guard (the negative control, Redis only: the replicas
restarted without it), the same response signs in once per replica.
"""

import concurrent.futures
import hashlib
import os
import threading
import urllib.parse

import pytest
import requests

from apps import (ACS_PATH, KINDS, OWN_ENDPOINT_ACS, SESSION_COOKIE, AppFleet, AppLogs, ambiguous_requests,
                  post_form, raw_request, start_instances, stop_quietly)
from common import HarnessError, free_port
from http_client import set_cookie_headers
from stores import claim_key

BURST = 50
RELAY = "/app/whoami?next=%2Fx&y=a+b"
HEAVY = ("flask", "ruby")

pytestmark = pytest.mark.backends("redis", "memcached1")


def pytest_generate_tests(metafunc):
    """Every test that uses ``app_sp`` runs once per application (module
    scope: each one's fleet starts once per backend); a test marked
    ``heavy`` on the HTTP apps only."""
    if "app_sp" not in metafunc.fixturenames:
        return
    names = list(KINDS)
    if metafunc.definition.get_closest_marker("heavy"):
        names = [n for n in names if n in HEAVY]
    metafunc.parametrize("app_sp", names, indirect=True, scope="module")


@pytest.fixture(scope="module")
def app_sp(request):
    kind = KINDS[request.param]
    if not kind.available():
        pytest.skip("%s: not installed (scripts/install-deps.sh)" % kind.label)
    return kind


@pytest.fixture(scope="module")
def app_session(request, app_sp, workdir, module_so, store, idps):
    """The application's three instances and the guarded fleet in front of
    them, started once per backend."""
    d = os.path.join(workdir, "app-%s-%s" % (app_sp.name, store.name))
    port = free_port()
    public = "http://127.0.0.1:%d" % port
    try:
        insts = start_instances(app_sp, os.path.join(d, "instances"), public, idps["idp1"])
    except HarnessError as e:
        pytest.fail("%s did not start: %s" % (app_sp.label, e), pytrace=False)
    f = AppFleet(os.path.join(d, "fleet"), module_so, store, idps["idp1"], app_sp, insts,
                 guard=True, balancer_port=port)
    request.addfinalizer(lambda: stop_quietly(insts))
    request.addfinalizer(f.stop)
    try:
        f.start()
    except HarnessError as e:
        pytest.fail("the %s fleet did not start:\n%s" % (app_sp.label, e), pytrace=False)
    f.logs = AppLogs(insts)
    return f


def set_guard(f, on):
    if f.guard != on:
        f.guard = on
        f.restart_replicas()
        f.modified = False


@pytest.fixture
def app(app_session, store):
    """The guarded fleet, its store up and empty, the marks of its logs and
    the applications' logs set."""
    set_guard(app_session, True)
    store.heal()
    app_session.mark_logs()
    app_session.logs.mark()
    yield app_session
    store.heal()


class Minter:
    def __init__(self, idp, testidp, kind, f):
        self.idp, self.testidp, self.kind, self.f = idp, testidp, kind, f

    def mint(self, **kw):
        kw.setdefault("assertion_id", self.testidp.random_id())
        return kw["assertion_id"], self.idp.mint(self.kind.entity_id, self.f.post_url, **kw)


@pytest.fixture
def minter(idps, testidp, app_sp, app):
    return Minter(idps["idp1"], testidp, app_sp, app)


def post(url, b64, relay=RELAY, cookies=None):
    return post_form(url, {"SAMLResponse": b64, "RelayState": relay}, cookies=cookies)


def accepted(r):
    return r.status_code == 302 and any(c.startswith(SESSION_COOKIE + "=")
                                        for c in set_cookie_headers(r))


def targets(f):
    """The balancer, then each replica: where a response is posted round robin."""
    return [f.post_url] + [h.base_url + ACS_PATH for h in f.replicas]


def form_of(b64, relay=RELAY):
    return urllib.parse.urlencode({"SAMLResponse": b64, "RelayState": relay})


# --------------------------------------------------------------------------
# with the guard
# --------------------------------------------------------------------------

@pytest.mark.expect_log("replay_refused")
def test_a_response_signs_in_once_and_passes_unchanged(app, app_sp, minter, store):
    """The body reaches the app byte for byte (its Content-Length, no
    chunking, the RelayState as posted), the app's answer reaches the
    browser unchanged, its session works on every replica; a second post
    is refused by the guard and never reaches the app."""
    aid, b64 = minter.mint(name_id="alice")
    r = post(app.post_url, b64)
    assert accepted(r), (r.status_code, r.headers, r.text[:300])
    got = app.logs.received()
    assert len(got) == 1, got
    body = form_of(b64)
    assert got[0]["body"] == body, "the body reached the app changed"
    assert got[0]["content_length"] == str(len(body)) and not got[0]["transfer_encoding"], got[0]
    assert got[0]["method"] == "POST" and got[0]["query"] == ""
    ans = app.logs.answered()
    assert len(ans) == 1 and ans[0]["status"] == 302, ans
    assert r.headers["Location"] == ans[0]["location"] == RELAY, (r.headers, ans)
    assert set_cookie_headers(r) == ans[0]["set_cookie"], (set_cookie_headers(r), ans)
    assert hashlib.sha256(r.content).hexdigest() == ans[0]["body_sha256"]
    cookie = {SESSION_COOKIE: r.cookies[SESSION_COOKIE]}
    for h in app.replicas:
        page = requests.get(h.base_url + "/app/whoami", cookies=cookie, timeout=30)
        assert page.status_code == 200 and page.text == "alice\n", (h.name, page.status_code)
    assert store.claim_keys() == [claim_key(minter.idp.entity_id, aid)]
    assert app.count_in_logs("RSP01040") == 1
    again = post(app.post_url, b64)
    assert again.status_code == 403 and not accepted(again)
    assert len(app.logs.received()) == 1


def test_a_body_near_the_limit_passes_whole(app, app_sp, minter):
    """A body over mod_proxy's in-memory prefetch (it spools it) and just
    under ReplaySPMaxBodySize reaches the app with its Content-Length,
    unchunked, byte for byte."""
    aid, b64 = minter.mint()
    body = form_of(b64) + "&pad=" + "A" * (262144 - len(form_of(b64)) - 20)
    assert len(body) < 262144
    r = requests.post(app.post_url, data=body, allow_redirects=False, timeout=30,
                      headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert accepted(r), (r.status_code, r.text[:300])
    got = app.logs.received()
    assert len(got) == 1 and got[0]["body"] == body, "the body reached the app changed"
    assert got[0]["content_length"] == str(len(body)) and not got[0]["transfer_encoding"]


@pytest.mark.expect_log("replay_refused")
def test_30_sequential_posts_one_accepted(app, app_sp, minter):
    aid, b64 = minter.mint()
    ts = targets(app)
    rs = [post(ts[i % len(ts)], b64) for i in range(30)]
    n = sum(accepted(r) for r in rs)
    print("guarded (%s): 30 sequential posts of one response -> %d accepted" % (app_sp, n))
    assert n == 1, [r.status_code for r in rs]
    assert sum(r.status_code == 403 for r in rs) == 29
    assert len(app.logs.received()) == 1


@pytest.mark.heavy
@pytest.mark.expect_log("replay_refused")
def test_50_concurrent_posts_one_accepted(app, app_sp, minter):
    aid, b64 = minter.mint()
    barrier = threading.Barrier(BURST, timeout=30)

    def one(_):
        barrier.wait()
        return post(app.post_url, b64)
    with concurrent.futures.ThreadPoolExecutor(max_workers=BURST) as ex:
        rs = list(ex.map(one, range(BURST), timeout=120))
    n = sum(accepted(r) for r in rs)
    print("guarded (%s): %d concurrent posts -> %d accepted" % (app_sp, BURST, n))
    assert n == 1, sorted(r.status_code for r in rs)
    assert sum(r.status_code == 403 for r in rs) == BURST - 1
    assert len(app.logs.received()) == 1


@pytest.mark.heavy
@pytest.mark.expect_log("replay_refused")
def test_same_assertion_in_a_new_envelope_refused(app, app_sp, minter):
    aid, b64 = minter.mint()
    assert accepted(post(app.post_url, b64))
    _, again = minter.mint(assertion_id=aid)      # a new Response, same assertion
    assert again != b64
    r = post(app.post_url, again)
    assert r.status_code == 403 and not accepted(r)
    assert len(app.logs.received()) == 1


@pytest.mark.heavy
@pytest.mark.expect_log("replay_refused")
def test_first_response_refused_after_120_sign_ins(app, app_sp, minter):
    aid, first = minter.mint(name_id="first")
    assert accepted(post(app.post_url, first))
    for i in range(120):
        _, b64 = minter.mint(name_id="user%d" % i)
        r = post(app.post_url, b64)
        assert accepted(r), (i, r.status_code, r.text[:200])
    for h in app.replicas:
        r = post(h.base_url + ACS_PATH, first)
        assert r.status_code == 403, (h.name, r.status_code)
    assert len(app.logs.received()) == 121


@pytest.mark.expect_log("check_refused")
def test_invalid_responses_refused_before_the_app(app, app_sp, minter, idps, testidp, store):
    cases = {
        "signature": testidp.TestIdP.tamper(minter.mint()[1]),
        "audience": minter.mint(audience="https://other-sp.example/")[1],
        "destination": minter.mint(destination=app.public + "/other/acs")[1],
        "issuer": idps["unknown"].mint(app_sp.entity_id, app.post_url),
    }
    for check, b64 in cases.items():
        app.mark_logs()
        r = post(app.post_url, b64)
        assert r.status_code == 400 and not accepted(r), (check, r.status_code)
        lines = [l for ls in app.new_log_lines().values() for l in ls if "RSP01004" in l]
        assert len(lines) == 1 and "check=%s:" % check in lines[0], (check, lines)
    assert app.logs.received() == [] and store.claim_keys() == []


@pytest.mark.expect_log("check_refused")
def test_ambiguous_inputs_refused_before_the_app(app, app_sp, minter, store):
    """Query and body, a parameter twice, other content types, a chunked
    body: each refused by the guard (400, check=ambiguous) sent straight
    to a replica, nothing claimed, nothing in the app's log; the response
    it carried is still good afterwards."""
    aid, b64 = minter.mint()
    replica = app.replicas[1].base_url
    for case, (method, target, headers, body) in ambiguous_requests(ACS_PATH, b64,
                                                                     RELAY).items():
        app.mark_logs()
        status, hdrs, _ = raw_request(replica, method, target, headers, body)
        assert status == 400, (case, status)
        lines = [l for ls in app.new_log_lines().values() for l in ls if "RSP01004" in l]
        assert len(lines) == 1 and "check=ambiguous:" in lines[0], (case, lines)
        assert not any(k.lower() == "set-cookie" for k, _ in hdrs), case
        assert app.logs.received() == [], (case, "the app received it")
        assert store.claim_keys() == [], (case, "something was claimed")
    r = post(app.post_url, b64)
    assert accepted(r), (r.status_code, r.text[:300])
    assert len(app.logs.received()) == 1


@pytest.mark.backends("redis")
def test_an_application_acs_at_the_modules_endpoint_path_reaches_the_app(app, app_sp,
                                                                         idps):
    """An application whose ACS is /saml/acs (the module's default
    endpoint path + /acs), guarded: the post must reach the application
    (which refuses it: its configured ACS is another URL), not the
    module's own ACS."""
    b64 = idps["idp1"].mint(app_sp.entity_id, app.public + OWN_ENDPOINT_ACS)
    r = post(app.public + OWN_ENDPOINT_ACS, b64)
    assert len(app.logs.received()) == 1, (r.status_code, r.text[:200])


# --------------------------------------------------------------------------
# the negative control: the app alone
# --------------------------------------------------------------------------

@pytest.mark.backends("redis")
def test_without_guard_the_app_accepts_a_response_once_per_replica(app, app_sp, minter,
                                                                    store):
    """The replicas restarted without the guard: each instance's own
    replay cache refuses the second post it sees, not the first: one
    sign-in per replica, for the same response."""
    set_guard(app, False)
    app.logs.mark()
    aid, b64 = minter.mint()
    ts = targets(app)
    rs = [post(ts[i % len(ts)], b64) for i in range(12)]
    won = sorted(r.headers.get("X-RSP-Replica") for r in rs if accepted(r))
    print("unguarded (%s): 12 sequential posts of one response -> %d accepted (%s)"
          % (app_sp, len(won), ", ".join(won)))
    assert len(won) > 1, won
    assert won == sorted(h.name for h in app.replicas), won
    assert all(r.status_code == 400 and "already used" in r.text for r in rs if not accepted(r))
    assert len(app.logs.received()) == 12 and store.claim_keys() == []
    set_guard(app, True)
