"""Guard mode (`ReplaySPGuard On`) in front of another SP, on every store
backend: three replicas, each running the SP unchanged plus the module
guarding the SP's assertion consumer, behind the balancer. Each test runs
for every SP it applies to (the ``guarded_sp`` parameter):

* ``mellon``: Debian's mod_auth_mellon (its own per-host session cache);
  each replica also runs the module's own SP at /own: the guard and the
  ACS side by side on one server;
* ``shibboleth``: Shibboleth SP 3 (Debian's libapache2-mod-shib), each
  replica with a shibd of its own (its own in-memory replay cache and
  sessions), started and stopped by the tests (shib.py).

The fleets and what each SP's answers look like are in guarded_sps.py.
Each SP's guarded fleet starts once per backend (module scope; conftest.py
runs the tests of one SP together). The same fleet without the guard is
the negative control: the SP alone accepts one response once per replica.

Whether a request reached the SP is read from its logs: mellon's debug
trace; mod_shib's "shib_handler entered" (its handler is where it reads
the body and hands the message to shibd) and each shibd's transaction log
(a Login line for every SSO message it processed, accepted or refused).

Markers of this module (registered in conftest.py):
``only_sp(*names)``: the case applies to these SPs only;
``per_sp(argname, **{sp: values})``: a parameter whose values depend on
the SP; ``sp_expect_log(**{sp: tags})``: error-log lines one SP's run may
cause (``expect_log`` for that SP only).
"""

import concurrent.futures
import json
import os
import socket
import threading
import time
import urllib.parse

import pytest
import requests

from common import HarnessError
from guarded_sps import MELLON, OWN_SP, SHIBBOLETH, SPS
from http_client import set_cookie_headers
from httpd_fleet import bad_log_lines
from stores import claim_key

PAGE = "/app/page.html"
BURST = 50


# --------------------------------------------------------------------------
# one run per SP: the parameter, its fleet, the minter
# --------------------------------------------------------------------------

def pytest_generate_tests(metafunc):
    """Every test that uses ``guarded_sp`` runs once per SP (of those its
    ``only_sp`` marker names), module-scoped so that each SP's fleet starts
    once per backend."""
    if "guarded_sp" not in metafunc.fixturenames:
        return
    only = metafunc.definition.get_closest_marker("only_sp")
    names = list(only.args) if only else list(SPS)
    logs = metafunc.definition.get_closest_marker("sp_expect_log")
    logs = logs.kwargs if logs else {}
    per = metafunc.definition.get_closest_marker("per_sp")

    def marks(name):
        return [pytest.mark.expect_log(*logs[name])] if name in logs else []
    if per is None:
        metafunc.parametrize("guarded_sp", [pytest.param(n, marks=marks(n)) for n in names],
                             indirect=True, scope="module")
        return
    argname = per.args[0]

    def ident(n, v):
        return "-".join([n] + list(v if isinstance(v, tuple) else [v]))
    metafunc.parametrize(["guarded_sp", argname],
                         [pytest.param(n, v, marks=marks(n), id=ident(n, v)) for n in names
                          for v in per.kwargs[n]],
                         indirect=["guarded_sp"], scope="module")


@pytest.fixture(scope="module")
def guarded_sp(request):
    """The SP under the guard (guarded_sps.GuardedSP); skipped when it is
    not installed."""
    sp = SPS[request.param]
    if not sp.available():
        pytest.skip(sp.skip_reason)
    return sp


def start_fleet(request, what, f):
    """Start f (stopped by request's finalizer); fail the test when it does
    not start or logs anything at warn or above."""
    request.addfinalizer(f.stop)
    offsets = {h: h.log_size() for h in f.instances}
    try:
        f.start()
    except HarnessError as e:
        pytest.fail("the %s fleet did not start:\n%s" % (what, e), pytrace=False)
    bad = {h.name: bad_log_lines(h._log_since(offsets[h]).splitlines()) for h in f.instances}
    bad = {k: v for k, v in bad.items() if v}
    if bad:
        pytest.fail("unexpected error-log lines at %s fleet start-up:\n%s" % (what, bad),
                    pytrace=False)
    return f


@pytest.fixture(scope="module")
def guarded_session(request, guarded_sp, workdir, module_so, store, sp_keys, idps):
    """The SP's guarded fleet on this backend, started once."""
    sp = guarded_sp
    return start_fleet(request, sp.label, sp.fleet(
        os.path.join(workdir, "%s-guarded-%s" % (sp.dir_prefix, store.name)), module_so,
        store, sp_keys, idps["idp1"], guard=True))


@pytest.fixture
def guarded(guarded_session, store):
    store.heal()
    guarded_session.mark_logs()
    yield guarded_session
    store.heal()


class Minter:
    """Responses from an IdP for the guarded SP (its entity ID, its
    assertion consumer): mint() -> (assertion ID, base64 Response)."""

    def __init__(self, idp, testidp, entity_id, acs_url):
        self.idp, self.testidp = idp, testidp
        self.entity_id, self.acs_url = entity_id, acs_url

    def mint(self, **kw):
        kw.setdefault("assertion_id", self.testidp.random_id())
        return kw["assertion_id"], self.idp.mint(self.entity_id, self.acs_url, **kw)


@pytest.fixture
def minter(idps, testidp, guarded_sp, guarded_session):
    return Minter(idps["idp1"], testidp, guarded_sp.entity_id, guarded_session.post_url)


# --------------------------------------------------------------------------
# posting, claims
# --------------------------------------------------------------------------

def post(url, b64=None, relay_state=PAGE, fields=None, raw=None, headers=None, cookies=None):
    """POST a form to url, redirects not followed; raw: the body as given."""
    h = dict(headers or {})
    if raw is not None:
        h.setdefault("Content-Type", "application/x-www-form-urlencoded")
        return requests.post(url, data=raw, headers=h, cookies=cookies,
                             allow_redirects=False, timeout=30)
    data = {}
    if b64 is not None:
        data["SAMLResponse"] = b64
    if relay_state is not None:
        data["RelayState"] = relay_state
    data.update(fields or {})
    return requests.post(url, data=data, headers=h, cookies=cookies,
                         allow_redirects=False, timeout=30)


def claims(store):
    return store.claim_keys()


def replica_url(f, name):
    return [h.base_url for h in f.replicas if h.name == name][0]


def posting_targets(f, sp):
    """The balancer, then each replica: where a response is posted round robin."""
    return [f.post_url] + [h.base_url + sp.post_path for h in f.replicas]


# --------------------------------------------------------------------------
# the attacker's corpus (guard_corpus.json): requests that the guard and
# some SP could read differently, each refused before anything is claimed
# and before the SP reads a byte
# --------------------------------------------------------------------------

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "guard_corpus.json")) as _f:
    CORPUS = json.load(_f)["cases"]
CORPUS_IDS = [c["id"] for c in CORPUS]


def corpus_request(case, acs, used_b64, fresh_b64):
    """(request target, body, content type) of a corpus case: {A} the used
    response, {B} the fresh one, {ACS...} the guarded path's parts."""
    q = lambda v: urllib.parse.quote(v, safe="")
    d, leaf = acs.rsplit("/", 1)
    subst = {
        "{ACS_BUT_LAST}": acs[:-1], "{ACS_LAST_HEX}": "%02X" % ord(acs[-1]),
        "{ACS_DIR}": d, "{ACS_LEAF}": leaf, "{ACS_LOWER}": acs.lower(), "{ACS}": acs,
        "{A2}": q(q(used_b64)), "{A}": q(used_b64), "{B}": q(fresh_b64),
    }

    def fill(t):
        for k, v in subst.items():
            t = t.replace(k, v)
        return t
    target = fill(case["target"]) if "target" in case else acs + fill(case.get("path", ""))
    if "query" in case:
        target += "?" + fill(case["query"])
    body = fill(case.get("body", "SAMLResponse={B}"))
    return target, body, case.get("content_type", "application/x-www-form-urlencoded")


def raw_post(base_url, target, body, content_type, timeout=30):
    """POST with the request target sent byte for byte (no client
    normalises it): (status, [(header, value)])."""
    u = urllib.parse.urlsplit(base_url)
    req = ("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n"
           "Connection: close\r\n\r\n" % (target, u.netloc, content_type, len(body)))
    data = b""
    with socket.create_connection((u.hostname, u.port), timeout=timeout) as sock:
        sock.sendall(req.encode("latin-1") + body.encode("latin-1"))
        while len(data) < (1 << 20):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    status = int(head[0].split()[1])
    headers = [tuple(x.strip() for x in l.split(":", 1)) for l in head[1:] if ":" in l]
    return status, headers


def run_corpus_case(case, fleet, minter, store, sp):
    """One corpus case against a guarded fleet: a response accepted first
    (A), then the case sent with a fresh one (B) straight to another
    replica than A's; the case must be refused by the layer it names,
    with nothing claimed for B, no session from the SP, the SP not
    reached; B posted plainly afterwards is still good."""
    aid, used = minter.mint()
    first = post(fleet.post_url, used)
    assert sp.accepted(first), (first.status_code, first.text[:300])
    other = [h for h in fleet.replicas if h.name != first.headers.get("X-RSP-Replica")][0]
    used_key = claim_key(minter.idp.entity_id, aid)
    assert claims(store) == [used_key]
    fleet.mark_logs()
    bid, fresh = minter.mint()
    acs = urllib.parse.urlsplit(fleet.post_url).path
    target, body, ctype = corpus_request(case, acs, used, fresh)
    status, headers = raw_post(other.base_url, target, body, ctype)
    layer, what = case["refused_by"].split(":")
    lines = [l for ls in fleet.new_log_lines().values() for l in ls if "RSP01004" in l]
    if layer == "guard":
        assert status == 400, (case["id"], target[:200], status)
        assert len(lines) == 1 and "check=%s:" % what in lines[0], (case["id"], lines)
    else:
        assert status == int(what), (case["id"], target[:200], status)
        assert lines == [], (case["id"], lines)
    assert not sp.cookie_set(headers), (case["id"], headers)
    assert claims(store) == [used_key], (case["id"], "something was claimed")
    assert sp.reached(fleet) == 0, (case["id"], "the SP read the request")
    # nothing was burned: the fresh response is still good
    again = post(fleet.post_url, fresh)
    assert sp.accepted(again), (case["id"], again.status_code, again.text[:300])
    assert sorted(claims(store)) == sorted([used_key, claim_key(minter.idp.entity_id, bid)])


# --------------------------------------------------------------------------
# with the guard
# --------------------------------------------------------------------------

@pytest.mark.expect_log("replay_refused")
def test_guarded_fresh_response_gets_the_sps_session(guarded, guarded_sp, minter, store):
    sp = guarded_sp
    aid, b64 = minter.mint(name_id="alice")
    r = post(guarded.post_url, b64)
    assert sp.accepted(r), (r.status_code, r.headers, r.text[:300])
    assert r.headers["Location"].endswith(PAGE), r.headers["Location"]
    replica = r.headers.get("X-RSP-Replica")
    page = requests.get(replica_url(guarded, replica) + PAGE, cookies=sp.session_cookies(r),
                        allow_redirects=False, timeout=30)
    assert page.status_code == 200 and page.headers.get(sp.user_header) == "alice", \
        (page.status_code, page.headers)
    assert claims(store) == [claim_key(minter.idp.entity_id, aid)]
    assert guarded.count_in_logs("RSP01040") == 1
    if sp is SHIBBOLETH:
        assert r.headers["Location"] == guarded.public + PAGE, r.headers["Location"]
        set_cookie = [c for c in set_cookie_headers(r) if c.startswith(sp.claim_cookie)]
        assert len(set_cookie) == 1 and "secure" not in set_cookie[0].lower(), set_cookie
        # the session lives in that replica's shibd only: another replica
        # sends the same cookie to the IdP
        other = [h for h in guarded.replicas if h.name != replica][0]
        elsewhere = requests.get(other.base_url + PAGE, cookies=sp.session_cookies(r),
                                 allow_redirects=False, timeout=30)
        assert elsewhere.status_code == 302, elsewhere.status_code
        assert elsewhere.headers["Location"].startswith(minter.idp.sso_url)
        logins = sp.logins(guarded)
        assert len(logins) == 1 and "|alice|" in logins[0], logins
        assert "new session created" in guarded.sp_of(replica).log_since_mark(
            guarded.sp_of(replica).shibd_log)
    again = post(guarded.post_url, b64)
    assert again.status_code == 403 and not sp.session_cookies(again)
    if sp is SHIBBOLETH:
        assert len(sp.logins(guarded)) == 1


@pytest.mark.expect_log("replay_refused", "RSP01042")
def test_guarded_repost_by_the_same_browser_gets_the_sps_answer_again(guarded, guarded_sp,
                                                                      minter, store):
    """The guard records the SP's session cookie (by its hash) and its
    redirect in the claim: the browser holding that cookie gets the same
    redirect again on a re-post (the SP not called); anyone else 403."""
    sp = guarded_sp
    aid, b64 = minter.mint(name_id="reposter")
    s = requests.Session()
    first = s.post(guarded.post_url, data={"SAMLResponse": b64, "RelayState": PAGE},
                   allow_redirects=False, timeout=30)
    assert sp.accepted(first), (first.status_code, first.text[:300])
    key = claim_key(minter.idp.entity_id, aid)
    rec, deadline = "", time.time() + 5
    while time.time() < deadline:
        rec = store.get(key)
        rec = rec.decode() if isinstance(rec, bytes) else (rec or "")
        if "cn=" in rec:
            break
        time.sleep(0.05)
    assert "cn=" + sp.claim_cookie in rec and "&l=" in rec, rec
    for value in sp.session_cookies(first).values():
        assert value not in rec, "cookie value stored"
    guarded.mark_logs()
    again = s.post(guarded.post_url, data={"SAMLResponse": b64, "RelayState": PAGE},
                   allow_redirects=False, timeout=30)
    assert again.status_code == 303, (again.status_code, again.text[:300])
    assert again.headers["Location"] == first.headers["Location"]
    assert "Set-Cookie" not in again.headers
    assert guarded.count_in_logs("RSP01042") == 1
    if sp is SHIBBOLETH:
        assert sp.handler_runs(guarded) == 0
    other = post(guarded.post_url, b64)
    assert other.status_code == 403
    # another browser with a made-up cookie of that name: still a replay
    forged = post(guarded.post_url, b64,
                  cookies={name: "0" * 32 for name in sp.session_cookies(first)})
    assert forged.status_code == 403


@pytest.mark.expect_log("replay_refused")
def test_guarded_30_sequential_posts_one_accepted(guarded, guarded_sp, minter, store):
    sp = guarded_sp
    aid, b64 = minter.mint()
    targets = posting_targets(guarded, sp)
    codes = [post(targets[i % len(targets)], b64) for i in range(30)]
    accepted = sum(sp.accepted(r) for r in codes)
    print("guarded (%s): 30 sequential posts of one response -> %d accepted" % (sp, accepted))
    assert accepted == 1, [r.status_code for r in codes]
    assert sum(r.status_code == 403 for r in codes) == 29
    if sp is SHIBBOLETH:
        assert sp.handler_runs(guarded) == 1 and len(sp.logins(guarded)) == 1


@pytest.mark.expect_log("replay_refused")
def test_guarded_50_concurrent_posts_one_accepted(guarded, guarded_sp, minter, store):
    sp = guarded_sp
    aid, b64 = minter.mint()
    barrier = threading.Barrier(BURST, timeout=30)

    def one(_):
        barrier.wait()
        return post(guarded.post_url, b64)
    with concurrent.futures.ThreadPoolExecutor(max_workers=BURST) as ex:
        results = list(ex.map(one, range(BURST)))
    accepted = sum(sp.accepted(r) for r in results)
    print("guarded (%s): %d concurrent posts -> %d accepted" % (sp, BURST, accepted))
    assert accepted == 1, sorted(r.status_code for r in results)
    assert sum(r.status_code == 403 for r in results) == BURST - 1
    if sp is SHIBBOLETH:
        assert len(sp.logins(guarded)) == 1


@pytest.mark.expect_log("replay_refused")
def test_guarded_same_assertion_in_a_new_envelope_refused(guarded, guarded_sp, minter, store):
    aid, b64 = minter.mint()
    assert guarded_sp.accepted(post(guarded.post_url, b64))
    _, again = minter.mint(assertion_id=aid)      # a new Response, same assertion
    assert again != b64
    r = post(guarded.post_url, again)
    assert r.status_code == 403 and not guarded_sp.session_cookies(r)


@pytest.mark.expect_log("replay_refused")
def test_guarded_first_response_still_refused_after_120_sign_ins(guarded, guarded_sp, minter,
                                                                 store):
    """The SP's own replay record is bounded (mellon's lives in its
    100-entry session cache): after 120 other sign-ins it may have
    forgotten; the claim has not."""
    sp = guarded_sp
    aid, first = minter.mint(name_id="first")
    assert sp.accepted(post(guarded.post_url, first))
    for i in range(120):
        _, b64 = minter.mint(name_id="user%d" % i)
        assert sp.accepted(post(guarded.post_url, b64)), i
    for h in guarded.replicas:
        assert post(h.base_url + sp.post_path, first).status_code == 403, h.name
    if sp is SHIBBOLETH:
        assert len(sp.logins(guarded)) == 121


def test_guarded_sp_initiated_flow(guarded, guarded_sp, minter, testidp, store):
    """The SP's own AuthnRequest (mellon: through its login endpoint and
    cookie test; Shibboleth: its RelayState in shibd's memory), answered by
    the IdP with InResponseTo, posted back through the guard."""
    sp = guarded_sp
    s = requests.Session()
    r1 = guarded.replicas[0]
    url, loc = r1.base_url + PAGE, None
    for _ in range(3):      # the page -> (mellon's login endpoint ->) the IdP
        start = s.get(url, allow_redirects=False, timeout=30)
        assert start.status_code in (302, 303), (start.status_code, start.text[:300])
        loc = start.headers["Location"]
        if loc.startswith(minter.idp.sso_url):
            break
        u = urllib.parse.urlsplit(loc)
        url = r1.base_url + u.path + ("?" + u.query if u.query else "")
    assert loc.startswith(minter.idp.sso_url), loc
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(loc).query)
    rid, acs_url = testidp.parse_redirect_authn_request(q["SAMLRequest"][0])
    if sp is SHIBBOLETH:
        assert acs_url == guarded.post_url, acs_url
        assert q["RelayState"][0].startswith("ss:mem:"), q["RelayState"]
    _, b64 = minter.mint(in_response_to=rid, name_id="sp-initiated")
    data = {"SAMLResponse": b64, "RelayState": q["RelayState"][0]}
    back = s.post(r1.base_url + sp.post_path, data=data, allow_redirects=False, timeout=30)
    assert sp.accepted(back), (back.status_code, back.text[:300])
    if sp is SHIBBOLETH:
        assert back.headers["Location"] == guarded.public + PAGE, back.headers["Location"]
    page = s.get(r1.base_url + PAGE, allow_redirects=False, timeout=30)
    assert page.status_code == 200 and page.headers.get(sp.user_header) == "sp-initiated"
    assert len(claims(store)) == 1


@pytest.mark.expect_log("replay_refused")
@pytest.mark.per_sp("data", mellon=["aes256-gcm", "aes128-cbc"],
                    shibboleth=["aes128-gcm", "aes256-gcm"])
def test_guarded_encrypted_assertion_decrypted_by_both(guarded, guarded_sp, minter, testidp,
                                                       sp_keys, store, data):
    """A signed Response around an unsigned EncryptedAssertion (Shibboleth
    IdP's default shape), encrypted to the SP's certificate: the guard
    decrypts it with the same key (ReplaySPEncryptionKeyFile, no
    certificate) to claim it, the SP decrypts it again for its session."""
    sp = guarded_sp
    enc = testidp.Encryption(sp_keys[1], data=data)
    aid, b64 = minter.mint(name_id="enc-" + data, encrypt=enc, sign_response=True,
                           sign_assertion=False)
    r = post(guarded.post_url, b64)
    assert sp.accepted(r), (r.status_code, r.text[:300])
    page = requests.get(replica_url(guarded, r.headers["X-RSP-Replica"]) + PAGE,
                        cookies=sp.session_cookies(r), allow_redirects=False, timeout=30)
    assert page.status_code == 200 and page.headers.get(sp.user_header) == "enc-" + data
    assert claims(store) == [claim_key(minter.idp.entity_id, aid)]
    for h in guarded.replicas:
        assert post(h.base_url + sp.post_path, b64).status_code == 403, h.name


@pytest.mark.expect_log("replay_refused")
@pytest.mark.only_sp("shibboleth")
@pytest.mark.parametrize("transport", ["mgf1p-sha256", "oaep-sha256-mgf1sha256"])
def test_guarded_field_key_transports(guarded, guarded_sp, minter, testidp, sp_keys, store,
                                      transport):
    """What Debian 12's xmlsec1 cannot unwrap (Sweden Connect's
    rsa-oaep-mgf1p with SHA-256; xmlenc11#rsa-oaep with SHA-256 and
    MGF1-SHA256), encrypted by python3-cryptography: the guard decrypts it
    to claim it, Shibboleth SP (its own XML security library) decrypts it
    again for its session; once."""
    sp = guarded_sp
    kw = (dict(key="rsa-oaep-mgf1p", digest="sha256") if transport == "mgf1p-sha256"
          else dict(key="rsa-oaep", digest="sha256", mgf="sha256"))
    enc = testidp.Encryption(sp_keys[1], engine="cryptography", data="aes128-gcm", **kw)
    aid, b64 = minter.mint(name_id="enc-" + transport, encrypt=enc, sign_response=True,
                           sign_assertion=False)
    r = post(guarded.post_url, b64)
    assert sp.accepted(r), (r.status_code, r.text[:300])
    page = requests.get(replica_url(guarded, r.headers["X-RSP-Replica"]) + PAGE,
                        cookies=sp.session_cookies(r), allow_redirects=False, timeout=30)
    assert page.status_code == 200 and page.headers.get(sp.user_header) == "enc-" + transport
    assert claims(store) == [claim_key(minter.idp.entity_id, aid)]
    for h in guarded.replicas:
        assert post(h.base_url + sp.post_path, b64).status_code == 403, h.name


@pytest.mark.expect_log("replay_refused")
@pytest.mark.only_sp("mellon")
@pytest.mark.sp_expect_log(mellon=("auth_mellon:error",))
def test_guarded_mellon_cannot_unwrap_what_the_guard_can(guarded, guarded_sp, minter, testidp,
                                                        sp_keys, store):
    """What docs/guard.md says: the guard decrypts xmlenc11#rsa-oaep with
    SHA-256 and MGF1-SHA256, mod_auth_mellon on Debian 12 cannot (Lasso
    over xmlsec 1.2.37): the response is claimed, mellon refuses it (400),
    and it is spent (a re-post is a replay, 403). Such an IdP needs an SP
    that decrypts what it sends."""
    sp = guarded_sp
    enc = testidp.Encryption(sp_keys[1], engine="cryptography", data="aes128-gcm",
                             key="rsa-oaep", digest="sha256", mgf="sha256")
    aid, b64 = minter.mint(encrypt=enc, sign_response=True, sign_assertion=False)
    r = post(guarded.post_url, b64)
    assert r.status_code == 400 and not sp.accepted(r), r.status_code
    assert claims(store) == [claim_key(minter.idp.entity_id, aid)]
    assert post(guarded.replicas[0].base_url + sp.post_path, b64).status_code == 403


def test_guarded_body_reaches_the_sp_unchanged(guarded, guarded_sp, minter, store):
    """RelayState preserved, a body just under the limit (262144 bytes by
    default) passes whole."""
    aid, b64 = minter.mint()
    fields = {"SAMLResponse": b64, "RelayState": "/app/page.html?x=1&y=%2F"}
    body = urllib.parse.urlencode(fields)
    pad = 262144 - len(body) - len("&pad=") - 10
    raw = body + "&pad=" + "A" * pad
    assert len(raw) < 262144
    r = post(guarded.post_url, raw=raw)
    assert guarded_sp.accepted(r), (r.status_code, r.text[:300])
    assert r.headers["Location"].endswith("/app/page.html?x=1&y=%2F"), r.headers["Location"]


@pytest.mark.expect_log("check_refused", "body_too_large")
def test_guarded_body_over_the_limit_refused(guarded, guarded_sp, minter, store):
    aid, b64 = minter.mint()
    raw = urllib.parse.urlencode({"SAMLResponse": b64}) + "&pad=" + "A" * 262144
    r = post(guarded.post_url, raw=raw)
    assert r.status_code == 413
    assert claims(store) == []
    if guarded_sp is SHIBBOLETH:
        assert guarded_sp.handler_runs(guarded) == 0


@pytest.mark.sp_expect_log(mellon=("auth_mellon:error",),
                           shibboleth=("Blocked unacceptable redirect location",))
def test_guard_passes_what_the_sp_then_refuses_itself(guarded, guarded_sp, minter, store):
    """The guard checks the response, not the SP's rules: an off-site
    RelayState passes the guard (claimed) and the SP refuses it (Shibboleth:
    redirectLimit="exact", its error page, no session)."""
    sp = guarded_sp
    aid, b64 = minter.mint()
    r = post(guarded.post_url, b64, relay_state="https://evil.example/")
    assert r.status_code >= 400 and not sp.accepted(r), r.status_code
    assert r.status_code != 403
    assert claims(store) == [claim_key(minter.idp.entity_id, aid)]
    if sp is SHIBBOLETH:
        assert r.status_code == 500 and not sp.session_cookies(r), (r.status_code, r.text[:300])
        assert "Blocked unacceptable redirect location" in r.text
        assert sp.handler_runs(guarded) == 1
        assert guarded.count_in_logs("Blocked unacceptable redirect location") == 1


@pytest.mark.backends("redis")
@pytest.mark.expect_log("check_refused", "AH10244")
@pytest.mark.parametrize("case", CORPUS, ids=CORPUS_IDS)
def test_guarded_corpus_refused_before_the_claim_sp_never_called(guarded, guarded_sp, minter,
                                                                 store, case):
    """guard_corpus.json against each SP: each case refused by the layer it
    names, nothing claimed, the SP never reached (mellon's handler;
    mod_shib's handler and shibd), the fresh response still good
    afterwards."""
    run_corpus_case(case, guarded, minter, store, guarded_sp)


@pytest.mark.expect_log("check_refused")
def test_guarded_chunked_body_refused(guarded, guarded_sp, minter, store):
    sp = guarded_sp
    aid, b64 = minter.mint()
    body = urllib.parse.urlencode({"SAMLResponse": b64}).encode()
    # straight to a replica: the balancer (mod_proxy) sends it on with a
    # Content-Length, which is no longer ambiguous
    r = requests.post(guarded.replicas[0].base_url + sp.post_path,
                      data=iter([body[:100], body[100:]]),
                      headers={"Content-Type": "application/x-www-form-urlencoded"},
                      allow_redirects=False, timeout=30)
    assert r.status_code == 400 and claims(store) == []
    if sp is SHIBBOLETH:
        assert sp.handler_runs(guarded) == 0 and sp.logins(guarded) == []


@pytest.mark.expect_log("check_refused")
@pytest.mark.per_sp("case_check",
                    mellon=[("tampered", "signature"), ("audience", "audience"),
                            ("expired", "expired"), ("unknown_idp", "issuer")],
                    shibboleth=[("tampered", "signature"), ("audience", "audience"),
                                ("destination", "destination"), ("recipient", "recipient"),
                                ("expired", "expired"), ("unknown_idp", "issuer")])
def test_guarded_invalid_response_refused_nothing_claimed(guarded, guarded_sp, minter, idps,
                                                           testidp, store, case_check):
    sp = guarded_sp
    case, check = case_check
    other_acs = guarded.public + "/Shibboleth.sso/SAML2/POST-SimpleSign"
    if case == "tampered":
        b64 = testidp.TestIdP.tamper(minter.mint()[1])
    elif case == "audience":
        b64 = minter.mint(audience="https://other-sp.example/")[1]
    elif case == "destination":
        b64 = minter.mint(destination=other_acs)[1]
    elif case == "recipient":
        b64 = minter.mint(recipient=other_acs)[1]
    elif case == "expired":
        b64 = minter.mint(scd_not_on_or_after_offset=-120, not_on_or_after_offset=-120)[1]
    else:
        b64 = idps["unknown"].mint(sp.entity_id, guarded.post_url)
    r = post(guarded.post_url, b64)
    assert r.status_code == 400 and not sp.session_cookies(r)
    lines = [l for ls in guarded.new_log_lines().values() for l in ls if "RSP01004" in l]
    assert len(lines) == 1 and "check=%s:" % check in lines[0], lines
    assert claims(store) == []
    if sp is SHIBBOLETH:
        assert sp.handler_runs(guarded) == 0 and sp.logins(guarded) == []


@pytest.mark.only_sp("mellon")
@pytest.mark.expect_log("replay_refused")
def test_guard_and_own_acs_on_one_server(guarded, guarded_sp, idps, store):
    """The module's own SP at /own and the guard at mellon's postResponse,
    in one httpd: both work, each with its own claims."""
    own_acs = guarded.public + "/own/saml/acs"
    b64 = idps["idp1"].mint(OWN_SP, own_acs, name_id="own-user")
    r = requests.post(own_acs, data={"SAMLResponse": b64, "RelayState": "/own/page.html"},
                      allow_redirects=False, timeout=30)
    assert r.status_code == 303, (r.status_code, r.text[:300])
    assert requests.post(own_acs, data={"SAMLResponse": b64},
                         allow_redirects=False, timeout=30).status_code == 403
    m = idps["idp1"].mint(MELLON.entity_id, guarded.post_url, name_id="mellon-user")
    assert guarded_sp.accepted(post(guarded.post_url, m))
    assert len(claims(store)) == 2


@pytest.mark.expect_log("claim_store_error")
def test_guarded_store_down_503(guarded, guarded_sp, minter, store):
    sp = guarded_sp
    aid, b64 = minter.mint()
    store.stop_all()
    try:
        r = post(guarded.post_url, b64)
        assert r.status_code == 503 and r.headers.get("Retry-After")
        assert not sp.session_cookies(r)
    finally:
        store.start_all()
    if sp is SHIBBOLETH:
        assert sp.handler_runs(guarded) == 0 and sp.logins(guarded) == []


@pytest.mark.only_sp("mellon")
@pytest.mark.backends("redis")
@pytest.mark.expect_log("RSP01025")
def test_guarded_fail_open_hands_on_without_claim_line(guarded, guarded_sp, minter, store):
    """ReplaySPOnStoreFailure open, store down: the response reaches mellon
    without a claim, said once (RSP01025), and not also as a won claim."""
    aid, b64 = minter.mint()
    guarded.restart_replicas(server_extra=store.server_extra + "\nReplaySPOnStoreFailure open")
    try:
        guarded.mark_logs()
        store.stop_all()
        try:
            r = post(guarded.post_url, b64)
        finally:
            store.start_all()
        assert guarded_sp.accepted(r), (r.status_code, r.text[:300])
        assert guarded.count_in_logs("RSP01025") == 1
        assert guarded.count_in_logs("RSP01040") == 0
    finally:
        guarded.reset_replicas()


# --------------------------------------------------------------------------
# the negative control: the SP alone
# --------------------------------------------------------------------------

@pytest.mark.backends("redis")
@pytest.mark.sp_expect_log(mellon=("has already been used",),
                           shibboleth=("Rejecting replayed message ID",))
def test_without_guard_the_sp_accepts_a_replay_once_per_replica(request, guarded_sp, workdir,
                                                                module_so, store, sp_keys,
                                                                idps, testidp):
    sp = guarded_sp
    f = start_fleet(request, sp.label, sp.fleet(
        os.path.join(workdir, sp.dir_prefix + "-unguarded"), module_so, store, sp_keys,
        idps["idp1"], guard=False))
    m = Minter(idps["idp1"], testidp, sp.entity_id, f.post_url)
    aid, b64 = m.mint()
    targets = posting_targets(f, sp)
    results = [post(targets[i % len(targets)], b64) for i in range(30)]
    won = [r.headers.get("X-RSP-Replica") for r in results if sp.accepted(r)]
    print("unguarded (%s): 30 sequential posts of one response -> %d accepted (%s)"
          % (sp, len(won), ", ".join(sorted(map(str, won)))))
    assert len(won) > 1, won
    if sp is SHIBBOLETH:
        # each shibd's own replay cache refuses the second post it sees, not
        # the first: one sign-in per replica
        assert sorted(won) == sorted(h.name for h in f.replicas), won
        for r in results:
            if not sp.accepted(r):
                assert "Rejecting replayed message ID" in r.text, (r.status_code, r.text[:300])
        assert claims(store) == []
        # what the guard's query-string rule is for: Shibboleth takes a
        # SAMLResponse from the query string before the one in the body
        _, fresh = m.mint(name_id="from-the-query")
        r = post(f.replicas[0].base_url + sp.post_path + "?SAMLResponse="
                 + urllib.parse.quote(fresh, safe=""), b64, relay_state=None)
        assert sp.accepted(r), (r.status_code, r.text[:300])
        page = requests.get(f.replicas[0].base_url + PAGE, cookies=sp.session_cookies(r),
                            allow_redirects=False, timeout=30)
        assert page.status_code == 200 and page.headers.get(sp.user_header) == "from-the-query"
    f.stop()
