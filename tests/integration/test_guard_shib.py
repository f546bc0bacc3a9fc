"""Guard mode in front of Shibboleth SP 3 (Debian's libapache2-mod-shib):
three replicas, each running mod_shib with its own shibd (its own
in-memory replay cache and sessions) plus the module with `ReplaySPGuard
On` over Shibboleth's SAML2/POST assertion consumer, behind the balancer,
on every store backend. The same fleet without the guard is the negative
control: Shibboleth alone accepts one response once per replica.

Whether a request reached Shibboleth is read from two places: mod_shib's
own debug line "shib_handler entered" in the replica's error log (its
handler is where it reads the body and hands the message to shibd), and
each shibd's transaction log, which has a Login line for every SSO message
it processed, accepted or refused.
"""

import concurrent.futures
import os
import threading
import urllib.parse

import pytest
import requests

import http_client
from httpd_fleet import Fleet
from stores import claim_key
import shib
from guard_common import (BURST, CORPUS, CORPUS_IDS, PAGE, Minter, claims, post,
                          run_corpus_case, start_fleet)

SHIB_SP = "https://sp.shib.test.example/shibboleth"
POST_RESPONSE = shib.POST_PATH

pytestmark = pytest.mark.skipif(not shib.available(),
                                reason="libapache2-mod-shib (mod_shib, shibd) not installed")


def shib_body(store_url, sp, sp_keys, idp, guard, server_extra=""):
    key, cert = sp_keys
    lines = [
        "ReplaySPStore %s" % store_url,
        "ReplaySPMonitorInterval 0",
        server_extra,
        sp.httpd_lines(),
        "ShibCompatValidUser Off",
        "<Location %s>" % shib.HANDLER,
        "    AuthType None",
        "    Require all granted",
        "</Location>",
        "<Location /app>",
        "    AuthType shibboleth",
        "    ShibRequestSetting requireSession 1",
        "    Require shib-session",
        '    Header always set X-Shib-User "expr=%{REMOTE_USER}"',
        "</Location>",
    ]
    if guard:
        lines += [
            "<Location %s>" % POST_RESPONSE,
            "    ReplaySPGuard On",
            '    ReplaySPEntityID "%s"' % SHIB_SP,
            '    ReplaySPIdPMetadataFile "%s"' % idp.metadata_path,
            "    # the key Shibboleth decrypts with (its CredentialResolver's key)",
            '    ReplaySPEncryptionKeyFile "%s"' % key,
            "</Location>",
        ]
    return "\n".join(lines) + "\n"


class ShibFleet(Fleet):
    """Three replicas, each with mod_shib and its own shibd, behind the
    balancer; with ``guard``, the module guards SAML2/POST on each."""

    def __init__(self, workdir, module, store, sp_keys, idp, guard):
        self.idp = idp
        self.sp_keys = sp_keys
        self.guard = guard
        self.store_obj = store
        self.sps = {}
        super().__init__(workdir, module=module, store_url=store.url,
                         sp={"entity_id": SHIB_SP}, server_extra=store.server_extra)
        for h in self.replicas:
            # mod_shib's debug lines say when its handler runs (shib_handler
            # entered): the evidence that a refused request never reached it
            h.log_level = "warn replay_sp:info mod_shib:debug"

    def _sp_for(self, h):
        if h.name not in self.sps:
            key, cert = self.sp_keys
            self.sps[h.name] = shib.ShibSP(os.path.join(self.dir, h.name + "-shib"), SHIB_SP,
                                           self.idp.entity_id, self.idp.metadata_path,
                                           key, cert)
        return self.sps[h.name]

    def _configure_replicas(self, **kw):
        for h in self.replicas:
            h.modules = [("replay_sp_module", self.module), ("mod_shib", shib.MOD_SHIB)]
            h.body = ('Header always set X-RSP-Replica "%s"\n' % h.name
                      + shib_body(self.store_url, self._sp_for(h), self.sp_keys, self.idp,
                                  self.guard, self.server_extra))

    def start(self):
        shib.start_all(list(self.sps.values()))
        try:
            with shib.cxx_preload():
                return super().start()
        except Exception:
            shib.stop_all(list(self.sps.values()))
            raise

    def stop(self):
        """The balancer, then the replicas (at once: each graceful stop
        takes about a second), then the shibds."""
        errors = []
        try:
            try:
                self.balancer.stop()
            except Exception as e:   # keep stopping the others
                errors.append(e)
            with concurrent.futures.ThreadPoolExecutor(len(self.replicas)) as ex:
                for fut in [ex.submit(h.stop) for h in self.replicas]:
                    if fut.exception() is not None:
                        errors.append(fut.exception())
        finally:
            shib.stop_all(list(self.sps.values()))
        if errors:
            raise errors[0]

    def sp_of(self, replica_name):
        return self.sps[replica_name]

    def mark_logs(self):
        super().mark_logs()
        for sp in self.sps.values():
            sp.mark_logs()

    @property
    def post_url(self):
        return self.public + POST_RESPONSE


@pytest.fixture(scope="session")
def guarded_session(request, workdir, module_so, store, sp_keys, idps):
    return start_fleet(request, "Shibboleth", ShibFleet(
        os.path.join(workdir, "shib-guarded-" + store.name), module_so, store, sp_keys,
        idps["idp1"], guard=True))


@pytest.fixture
def guarded(guarded_session, store):
    store.heal()
    guarded_session.mark_logs()
    yield guarded_session
    store.heal()


@pytest.fixture
def shib_saml(idps, testidp, guarded_session):
    return Minter(idps["idp1"], testidp, SHIB_SP, guarded_session.post_url)


def session_cookies(resp):
    """Shibboleth's session cookie(s) set by a response: {name: value}."""
    return {k: v for k, v in resp.cookies.items() if k.startswith(shib.SESSION_COOKIE_PREFIX)}


def shib_accepted(resp):
    """Shibboleth's answer to a response it accepted: a redirect with its
    session cookie."""
    return resp.status_code in (302, 303) and bool(session_cookies(resp))


def handler_runs(f):
    """How many requests reached mod_shib's handler since mark_logs()."""
    return f.count_in_logs("shib_handler entered")


def shibd_logins(f):
    """Login lines in every shibd's transaction log since mark_logs()
    (accepted and refused alike: each one is a message shibd processed)."""
    return [l for sp in f.sps.values()
            for l in sp.log_since_mark(sp.transaction_log).splitlines()
            if "Shibboleth-TRANSACTION.Login" in l]


def replica_url(f, name):
    return [h.base_url for h in f.replicas if h.name == name][0]


# --------------------------------------------------------------------------
# with the guard
# --------------------------------------------------------------------------

@pytest.mark.expect_log("replay_refused")
def test_guarded_fresh_response_gets_shibboleths_session(guarded, shib_saml, store):
    aid, b64 = shib_saml.mint(name_id="alice")
    r = post(guarded.post_url, b64)
    assert shib_accepted(r), (r.status_code, r.headers, r.text[:300])
    assert r.headers["Location"] == guarded.public + PAGE, r.headers["Location"]
    set_cookie = [c for c in http_client.set_cookie_headers(r)
                  if c.startswith(shib.SESSION_COOKIE_PREFIX)]
    assert len(set_cookie) == 1 and "secure" not in set_cookie[0].lower(), set_cookie
    replica = r.headers.get("X-RSP-Replica")
    page = requests.get(replica_url(guarded, replica) + PAGE, cookies=session_cookies(r),
                        allow_redirects=False, timeout=30)
    assert page.status_code == 200 and page.headers.get("X-Shib-User") == "alice", \
        (page.status_code, page.headers)
    # the session lives in that replica's shibd only: another replica sends
    # the same cookie to the IdP
    other = [h for h in guarded.replicas if h.name != replica][0]
    elsewhere = requests.get(other.base_url + PAGE, cookies=session_cookies(r),
                             allow_redirects=False, timeout=30)
    assert elsewhere.status_code == 302, elsewhere.status_code
    assert elsewhere.headers["Location"].startswith(shib_saml.idp.sso_url)
    assert claims(store) == [claim_key(shib_saml.idp.entity_id, aid)]
    assert guarded.count_in_logs("RSP01040") == 1
    logins = shibd_logins(guarded)
    assert len(logins) == 1 and "|alice|" in logins[0], logins
    assert "new session created" in guarded.sp_of(replica).log_since_mark(
        guarded.sp_of(replica).shibd_log)
    again = post(guarded.post_url, b64)
    assert again.status_code == 403 and not session_cookies(again)
    assert len(shibd_logins(guarded)) == 1


@pytest.mark.expect_log("replay_refused", "RSP01042")
def test_guarded_repost_by_the_same_browser_gets_shibboleths_answer_again(guarded, shib_saml,
                                                                          store):
    """The claim records Shibboleth's session cookie (by its hash) and its
    redirect: the browser holding that cookie gets the redirect again,
    mod_shib not called; anyone else 403."""
    import time
    aid, b64 = shib_saml.mint(name_id="reposter")
    s = requests.Session()
    first = s.post(guarded.post_url, data={"SAMLResponse": b64, "RelayState": PAGE},
                   allow_redirects=False, timeout=30)
    assert shib_accepted(first), (first.status_code, first.text[:300])
    key = claim_key(shib_saml.idp.entity_id, aid)
    rec, deadline = "", time.time() + 5
    while time.time() < deadline:
        rec = store.get(key)
        rec = rec.decode() if isinstance(rec, bytes) else (rec or "")
        if "cn=" in rec:
            break
        time.sleep(0.05)
    assert "cn=" + shib.SESSION_COOKIE_PREFIX in rec and "&l=" in rec, rec
    guarded.mark_logs()
    again = s.post(guarded.post_url, data={"SAMLResponse": b64, "RelayState": PAGE},
                   allow_redirects=False, timeout=30)
    assert again.status_code == 303, (again.status_code, again.text[:300])
    assert again.headers["Location"] == first.headers["Location"]
    assert handler_runs(guarded) == 0
    assert post(guarded.post_url, b64).status_code == 403


@pytest.mark.expect_log("replay_refused")
def test_guarded_30_sequential_posts_one_accepted(guarded, shib_saml, store):
    aid, b64 = shib_saml.mint()
    targets = [guarded.post_url] + [h.base_url + POST_RESPONSE for h in guarded.replicas]
    codes = [post(targets[i % len(targets)], b64) for i in range(30)]
    accepted = sum(shib_accepted(r) for r in codes)
    print("guarded: 30 sequential posts of one response -> %d accepted" % accepted)
    assert accepted == 1, [r.status_code for r in codes]
    assert sum(r.status_code == 403 for r in codes) == 29
    assert handler_runs(guarded) == 1 and len(shibd_logins(guarded)) == 1


@pytest.mark.expect_log("replay_refused")
def test_guarded_50_concurrent_posts_one_accepted(guarded, shib_saml, store):
    aid, b64 = shib_saml.mint()
    barrier = threading.Barrier(BURST, timeout=30)

    def one(_):
        barrier.wait()
        return post(guarded.post_url, b64)
    with concurrent.futures.ThreadPoolExecutor(max_workers=BURST) as ex:
        results = list(ex.map(one, range(BURST)))
    accepted = sum(shib_accepted(r) for r in results)
    print("guarded: %d concurrent posts -> %d accepted" % (BURST, accepted))
    assert accepted == 1, sorted(r.status_code for r in results)
    assert sum(r.status_code == 403 for r in results) == BURST - 1
    assert len(shibd_logins(guarded)) == 1


@pytest.mark.expect_log("replay_refused")
def test_guarded_same_assertion_in_a_new_envelope_refused(guarded, shib_saml, store):
    aid, b64 = shib_saml.mint()
    assert shib_accepted(post(guarded.post_url, b64))
    _, again = shib_saml.mint(assertion_id=aid)      # a new Response, same assertion
    assert again != b64
    r = post(guarded.post_url, again)
    assert r.status_code == 403 and not session_cookies(r)


@pytest.mark.expect_log("replay_refused")
def test_guarded_first_response_still_refused_after_120_sign_ins(guarded, shib_saml, store):
    aid, first = shib_saml.mint(name_id="first")
    assert shib_accepted(post(guarded.post_url, first))
    for i in range(120):
        _, b64 = shib_saml.mint(name_id="user%d" % i)
        assert shib_accepted(post(guarded.post_url, b64)), i
    for h in guarded.replicas:
        assert post(h.base_url + POST_RESPONSE, first).status_code == 403, h.name
    assert len(shibd_logins(guarded)) == 121


def test_guarded_shibboleth_sp_initiated_flow(guarded, shib_saml, testidp, store):
    """Shibboleth's own AuthnRequest (its RelayState in shibd's memory),
    answered with InResponseTo, posted back through the guard."""
    s = requests.Session()
    r1 = guarded.replicas[0]
    start = s.get(r1.base_url + PAGE, allow_redirects=False, timeout=30)
    assert start.status_code in (302, 303), (start.status_code, start.text[:300])
    loc = start.headers["Location"]
    assert loc.startswith(shib_saml.idp.sso_url), loc
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(loc).query)
    rid, acs_url = testidp.parse_redirect_authn_request(q["SAMLRequest"][0])
    assert acs_url == guarded.post_url, acs_url
    assert q["RelayState"][0].startswith("ss:mem:"), q["RelayState"]
    _, b64 = shib_saml.mint(in_response_to=rid, name_id="sp-initiated")
    data = {"SAMLResponse": b64, "RelayState": q["RelayState"][0]}
    back = s.post(r1.base_url + POST_RESPONSE, data=data, allow_redirects=False, timeout=30)
    assert shib_accepted(back), (back.status_code, back.text[:300])
    assert back.headers["Location"] == guarded.public + PAGE, back.headers["Location"]
    page = s.get(r1.base_url + PAGE, allow_redirects=False, timeout=30)
    assert page.status_code == 200 and page.headers.get("X-Shib-User") == "sp-initiated"
    assert len(claims(store)) == 1


@pytest.mark.expect_log("replay_refused")
@pytest.mark.parametrize("data", ["aes128-gcm", "aes256-gcm"])
def test_guarded_encrypted_assertion_decrypted_by_both(guarded, shib_saml, testidp, sp_keys,
                                                       store, data):
    """Shibboleth IdP's default shape: a signed Response around an unsigned
    EncryptedAssertion, encrypted to the SP's certificate. The guard
    decrypts it with the same key (ReplaySPEncryptionKeyFile) to claim it,
    shibd decrypts it again for its session."""
    enc = testidp.Encryption(sp_keys[1], data=data)
    aid, b64 = shib_saml.mint(name_id="enc-" + data, encrypt=enc, sign_response=True,
                              sign_assertion=False)
    r = post(guarded.post_url, b64)
    assert shib_accepted(r), (r.status_code, r.text[:300])
    page = requests.get(replica_url(guarded, r.headers["X-RSP-Replica"]) + PAGE,
                        cookies=session_cookies(r), allow_redirects=False, timeout=30)
    assert page.status_code == 200 and page.headers.get("X-Shib-User") == "enc-" + data
    assert claims(store) == [claim_key(shib_saml.idp.entity_id, aid)]
    for h in guarded.replicas:
        assert post(h.base_url + POST_RESPONSE, b64).status_code == 403, h.name


def test_guarded_body_reaches_shibboleth_unchanged(guarded, shib_saml, store):
    """RelayState preserved, a body just under the limit (262144 bytes by
    default) passes whole."""
    aid, b64 = shib_saml.mint()
    fields = {"SAMLResponse": b64, "RelayState": "/app/page.html?x=1&y=%2F"}
    body = urllib.parse.urlencode(fields)
    pad = 262144 - len(body) - len("&pad=") - 10
    raw = body + "&pad=" + "A" * pad
    assert len(raw) < 262144
    r = post(guarded.post_url, raw=raw)
    assert shib_accepted(r), (r.status_code, r.text[:300])
    assert r.headers["Location"].endswith("/app/page.html?x=1&y=%2F"), r.headers["Location"]


@pytest.mark.expect_log("check_refused", "body_too_large")
def test_guarded_body_over_the_limit_refused(guarded, shib_saml, store):
    aid, b64 = shib_saml.mint()
    raw = urllib.parse.urlencode({"SAMLResponse": b64}) + "&pad=" + "A" * 262144
    r = post(guarded.post_url, raw=raw)
    assert r.status_code == 413
    assert claims(store) == [] and handler_runs(guarded) == 0


@pytest.mark.expect_log("Blocked unacceptable redirect location")
def test_guard_passes_what_shibboleth_then_refuses_itself(guarded, shib_saml, store):
    """The guard checks the response, not Shibboleth's rules: an off-site
    RelayState passes the guard (claimed) and Shibboleth refuses it
    (redirectLimit="exact"): its error page, no session."""
    aid, b64 = shib_saml.mint()
    r = post(guarded.post_url, b64, relay_state="https://evil.example/")
    assert r.status_code == 500 and not session_cookies(r), (r.status_code, r.text[:300])
    assert "Blocked unacceptable redirect location" in r.text
    assert claims(store) == [claim_key(shib_saml.idp.entity_id, aid)]
    assert handler_runs(guarded) == 1
    assert guarded.count_in_logs("Blocked unacceptable redirect location") == 1


@pytest.mark.backends("redis")
@pytest.mark.expect_log("check_refused", "AH10244")
@pytest.mark.parametrize("case", CORPUS, ids=CORPUS_IDS)
def test_guarded_corpus_refused_before_the_claim_shibboleth_never_called(guarded, shib_saml,
                                                                         store, case):
    """guard_corpus.json against Shibboleth SP: each case refused by the
    layer it names, nothing claimed, neither mod_shib's handler nor shibd
    reached, the fresh response still good afterwards."""
    run_corpus_case(case, guarded, shib_saml, store, shib_accepted,
                    lambda headers: any(k.lower() == "set-cookie"
                                        and v.startswith(shib.SESSION_COOKIE_PREFIX)
                                        for k, v in headers),
                    lambda f: handler_runs(f) + len(shibd_logins(f)))


@pytest.mark.expect_log("check_refused")
def test_guarded_chunked_body_refused(guarded, shib_saml, store):
    aid, b64 = shib_saml.mint()
    body = urllib.parse.urlencode({"SAMLResponse": b64}).encode()
    # straight to a replica: the balancer (mod_proxy) sends it on with a
    # Content-Length, which is no longer ambiguous
    r = requests.post(guarded.replicas[0].base_url + POST_RESPONSE,
                      data=iter([body[:100], body[100:]]),
                      headers={"Content-Type": "application/x-www-form-urlencoded"},
                      allow_redirects=False, timeout=30)
    assert r.status_code == 400 and claims(store) == []
    assert handler_runs(guarded) == 0 and shibd_logins(guarded) == []


@pytest.mark.expect_log("check_refused")
@pytest.mark.parametrize("case,check", [("tampered", "signature"), ("audience", "audience"),
                                        ("destination", "destination"),
                                        ("recipient", "recipient"),
                                        ("expired", "expired"), ("unknown_idp", "issuer")])
def test_guarded_invalid_response_refused_nothing_claimed(guarded, shib_saml, idps, testidp,
                                                           store, case, check):
    other_acs = guarded.public + "/Shibboleth.sso/SAML2/POST-SimpleSign"
    if case == "tampered":
        b64 = testidp.TestIdP.tamper(shib_saml.mint()[1])
    elif case == "audience":
        b64 = shib_saml.mint(audience="https://other-sp.example/")[1]
    elif case == "destination":
        b64 = shib_saml.mint(destination=other_acs)[1]
    elif case == "recipient":
        b64 = shib_saml.mint(recipient=other_acs)[1]
    elif case == "expired":
        b64 = shib_saml.mint(scd_not_on_or_after_offset=-120, not_on_or_after_offset=-120)[1]
    else:
        b64 = idps["unknown"].mint(SHIB_SP, guarded.post_url)
    r = post(guarded.post_url, b64)
    assert r.status_code == 400 and not session_cookies(r)
    lines = [l for ls in guarded.new_log_lines().values() for l in ls if "RSP01004" in l]
    assert len(lines) == 1 and "check=%s:" % check in lines[0], lines
    assert claims(store) == []
    assert handler_runs(guarded) == 0 and shibd_logins(guarded) == []


@pytest.mark.expect_log("claim_store_error")
def test_guarded_store_down_503(guarded, shib_saml, store):
    aid, b64 = shib_saml.mint()
    store.stop_all()
    try:
        r = post(guarded.post_url, b64)
        assert r.status_code == 503 and r.headers.get("Retry-After")
        assert not session_cookies(r)
    finally:
        store.start_all()
    assert handler_runs(guarded) == 0 and shibd_logins(guarded) == []


# --------------------------------------------------------------------------
# the negative control: Shibboleth alone
# --------------------------------------------------------------------------

@pytest.mark.backends("redis")
@pytest.mark.expect_log("Rejecting replayed message ID")
def test_without_guard_shibboleth_accepts_a_replay_once_per_replica(request, workdir, module_so,
                                                                    store, sp_keys, idps,
                                                                    testidp):
    f = start_fleet(request, "Shibboleth", ShibFleet(os.path.join(workdir, "shib-unguarded"), module_so,
                                       store, sp_keys, idps["idp1"], guard=False))
    m = Minter(idps["idp1"], testidp, SHIB_SP, f.post_url)
    aid, b64 = m.mint()
    targets = [f.post_url] + [h.base_url + POST_RESPONSE for h in f.replicas]
    results = [post(targets[i % len(targets)], b64) for i in range(30)]
    won = [r.headers.get("X-RSP-Replica") for r in results if shib_accepted(r)]
    print("unguarded: 30 sequential posts of one response -> %d accepted (%s)"
          % (len(won), ", ".join(sorted(won))))
    # each shibd's own replay cache refuses the second post it sees, not
    # the first: one sign-in per replica
    assert len(won) > 1, won
    assert sorted(won) == sorted(h.name for h in f.replicas), won
    for r in results:
        if not shib_accepted(r):
            assert "Rejecting replayed message ID" in r.text, (r.status_code, r.text[:300])
    assert claims(store) == []
    # what the guard's query-string rule is for: Shibboleth takes a
    # SAMLResponse from the query string before the one in the body
    _, fresh = m.mint(name_id="from-the-query")
    r = post(f.replicas[0].base_url + POST_RESPONSE + "?SAMLResponse="
             + urllib.parse.quote(fresh, safe=""), b64, relay_state=None)
    assert shib_accepted(r), (r.status_code, r.text[:300])
    page = requests.get(f.replicas[0].base_url + PAGE, cookies=session_cookies(r),
                        allow_redirects=False, timeout=30)
    assert page.status_code == 200 and page.headers.get("X-Shib-User") == "from-the-query"
    f.stop()
