"""Guard mode in front of Debian's mod_auth_mellon: three replicas, each
running mellon unchanged (its own per-host session cache) plus the module
with `ReplaySPGuard On` over mellon's postResponse, behind the balancer,
on every store backend. The same fleet without the guard is the negative
control: mellon alone accepts one response once per replica.

Each replica also runs the module's own SP at /own (its ACS at
/own/saml/acs): the guard and the ACS side by side on one server.
"""

import concurrent.futures
import os
import threading
import urllib.parse

import pytest
import requests

import httpd_fleet
from httpd_fleet import Fleet
from stores import claim_key
from guard_common import (BURST, CORPUS, CORPUS_IDS, PAGE, Minter, claims, post,
                          run_corpus_case, start_fleet)

MELLON_SO = os.path.join(httpd_fleet.APACHE_MODULES, "mod_auth_mellon.so")
MELLON_SP = "https://sp.mellon.test.example/mellon/metadata"
OWN_SP = "https://sp.rsp.test.example/own/metadata"
POST_RESPONSE = "/mellon/postResponse"
MELLON_COOKIE = "mellon-cookie"

pytestmark = pytest.mark.skipif(not os.path.exists(MELLON_SO),
                                reason="libapache2-mod-auth-mellon not installed")


def mellon_body(store_url, sp_keys, idp, guard, server_extra=""):
    key, cert = sp_keys
    lines = [
        "ReplaySPStore %s" % store_url,
        "ReplaySPMonitorInterval 0",
        server_extra,
        "<Location />",
        "    MellonEndpointPath /mellon",
        '    MellonSPentityId "%s"' % MELLON_SP,
        '    MellonSPPrivateKeyFile "%s"' % key,
        '    MellonSPCertFile "%s"' % cert,
        '    MellonIdPMetadataFile "%s"' % idp.metadata_path,
        "</Location>",
        "<Location /app>",
        "    AuthType Mellon",
        "    MellonEnable auth",
        "    Require valid-user",
        '    Header always set X-Mellon-User "expr=%{REMOTE_USER}"',
        "</Location>",
        "<Location /own>",
        "    AuthType ReplaySP",
        "    Require valid-user",
        '    ReplaySPEntityID "%s"' % OWN_SP,
        '    ReplaySPKeyFile "%s"' % key,
        '    ReplaySPCertFile "%s"' % cert,
        '    ReplaySPIdPMetadataFile "%s"' % idp.metadata_path,
        "    ReplaySPEndpointPath /own/saml",
        "    ReplaySPAllowUnsolicited On",
        '    Header always set X-RSP-User "expr=%{REMOTE_USER}"',
        "</Location>",
    ]
    if guard:
        lines += [
            "<Location %s>" % POST_RESPONSE,
            "    ReplaySPGuard On",
            '    ReplaySPEntityID "%s"' % MELLON_SP,
            '    ReplaySPIdPMetadataFile "%s"' % idp.metadata_path,
            "    # the key mellon decrypts with (its SP key): no certificate",
            '    ReplaySPEncryptionKeyFile "%s"' % key,
            "</Location>",
        ]
    return "\n".join(lines) + "\n"


class MellonFleet(Fleet):
    def __init__(self, workdir, module, store, sp_keys, idp, guard):
        self.idp = idp
        self.sp_keys = sp_keys
        self.guard = guard
        self.store_obj = store
        super().__init__(workdir, module=module, store_url=store.url,
                         sp={"entity_id": MELLON_SP}, server_extra=store.server_extra)
        for h in self.replicas:
            # mellon's debug trace names the handlers it enters: the
            # evidence that a refused request never reached it
            h.log_level = "warn replay_sp:info auth_mellon:debug"

    def replica_body(self, store_url=None, server_extra=None, location_extra=None,
                     sp=None, unsolicited=None):
        return mellon_body(self.store_url, self.sp_keys, self.idp, self.guard,
                           self.server_extra if server_extra is None else server_extra)

    def _configure_replicas(self, **kw):
        super()._configure_replicas(**kw)
        for h in self.replicas:
            h.modules = [("auth_mellon_module", MELLON_SO)] + h.modules

    def _write_htdocs(self):
        super()._write_htdocs()
        for h in self.replicas:
            h.write_file("own/page.html", "<html><body>own page on %s</body></html>\n" % h.name)

    @property
    def post_url(self):
        return self.public + POST_RESPONSE


@pytest.fixture(scope="session")
def guarded_session(request, workdir, module_so, store, sp_keys, idps):
    return start_fleet(request, "mellon", MellonFleet(
        os.path.join(workdir, "mellon-guarded-" + store.name), module_so, store, sp_keys,
        idps["idp1"], guard=True))


@pytest.fixture
def guarded(guarded_session, store):
    store.heal()
    guarded_session.mark_logs()
    yield guarded_session
    store.heal()


@pytest.fixture
def mellon_saml(idps, testidp, guarded_session):
    return Minter(idps["idp1"], testidp, MELLON_SP, guarded_session.post_url)


def mellon_handler_runs(f):
    """Lines mellon logged since mark_logs(): at debug level it logs what
    it does with every request it handles (the URL it reconstructs, the
    IdP it loads, the cookie it sets), so none means it read nothing."""
    return f.count_in_logs("[auth_mellon:")


def mellon_accepted(resp):
    """mellon's answer to a response it accepted: a redirect with its
    session cookie."""
    return resp.status_code in (302, 303) and MELLON_COOKIE in resp.cookies


# --------------------------------------------------------------------------
# with the guard
# --------------------------------------------------------------------------

@pytest.mark.expect_log("replay_refused")
def test_guarded_fresh_response_gets_mellons_session(guarded, mellon_saml, store):
    aid, b64 = mellon_saml.mint(name_id="alice")
    r = post(guarded.post_url, b64)
    assert mellon_accepted(r), (r.status_code, r.headers, r.text[:300])
    assert r.headers["Location"].endswith(PAGE), r.headers["Location"]
    replica = r.headers.get("X-RSP-Replica")
    base = [h.base_url for h in guarded.replicas if h.name == replica][0]
    page = requests.get(base + PAGE, cookies={MELLON_COOKIE: r.cookies[MELLON_COOKIE]},
                        allow_redirects=False, timeout=30)
    assert page.status_code == 200 and page.headers.get("X-Mellon-User") == "alice"
    assert claims(store) == [claim_key(mellon_saml.idp.entity_id, aid)]
    assert guarded.count_in_logs("RSP01040") == 1
    again = post(guarded.post_url, b64)
    assert again.status_code == 403 and MELLON_COOKIE not in again.cookies


@pytest.mark.expect_log("replay_refused", "RSP01042")
def test_guarded_repost_by_the_same_browser_gets_mellons_answer_again(guarded, mellon_saml,
                                                                      store):
    """The guard records mellon's session cookie (by its hash) and its
    redirect in the claim: the browser holding that cookie gets the same
    redirect again on a re-post (mellon not called); anyone else 403."""
    import time
    aid, b64 = mellon_saml.mint(name_id="reposter")
    s = requests.Session()
    first = s.post(guarded.post_url, data={"SAMLResponse": b64, "RelayState": PAGE},
                   allow_redirects=False, timeout=30)
    assert mellon_accepted(first), (first.status_code, first.text[:300])
    key = claim_key(mellon_saml.idp.entity_id, aid)
    deadline = time.time() + 5
    while time.time() < deadline:
        rec = store.get(key)
        rec = rec.decode() if isinstance(rec, bytes) else rec
        if rec and "cn=" in rec:
            break
        time.sleep(0.05)
    assert "cn=mellon-cookie" in rec and "&l=" in rec, rec
    assert first.cookies[MELLON_COOKIE] not in rec, "cookie value stored"
    again = s.post(guarded.post_url, data={"SAMLResponse": b64, "RelayState": PAGE},
                   allow_redirects=False, timeout=30)
    assert again.status_code == 303, (again.status_code, again.text[:300])
    assert again.headers["Location"] == first.headers["Location"]
    assert "Set-Cookie" not in again.headers
    assert guarded.count_in_logs("RSP01042") == 1
    other = post(guarded.post_url, b64)
    assert other.status_code == 403
    # another browser with a made-up cookie of that name: still a replay
    forged = post(guarded.post_url, b64, cookies={MELLON_COOKIE: "0" * 32})
    assert forged.status_code == 403


@pytest.mark.expect_log("replay_refused")
def test_guarded_30_sequential_posts_one_accepted(guarded, mellon_saml, store):
    aid, b64 = mellon_saml.mint()
    targets = [guarded.post_url] + [h.base_url + POST_RESPONSE for h in guarded.replicas]
    codes = [post(targets[i % len(targets)], b64) for i in range(30)]
    accepted = sum(mellon_accepted(r) for r in codes)
    print("guarded: 30 sequential posts of one response -> %d accepted" % accepted)
    assert accepted == 1, [r.status_code for r in codes]
    assert sum(r.status_code == 403 for r in codes) == 29


@pytest.mark.expect_log("replay_refused")
def test_guarded_50_concurrent_posts_one_accepted(guarded, mellon_saml, store):
    aid, b64 = mellon_saml.mint()
    barrier = threading.Barrier(BURST, timeout=30)

    def one(_):
        barrier.wait()
        return post(guarded.post_url, b64)
    with concurrent.futures.ThreadPoolExecutor(max_workers=BURST) as ex:
        results = list(ex.map(one, range(BURST)))
    accepted = sum(mellon_accepted(r) for r in results)
    print("guarded: %d concurrent posts -> %d accepted" % (BURST, accepted))
    assert accepted == 1, sorted(r.status_code for r in results)
    assert sum(r.status_code == 403 for r in results) == BURST - 1


@pytest.mark.expect_log("replay_refused")
def test_guarded_same_assertion_in_a_new_envelope_refused(guarded, mellon_saml, store):
    aid, b64 = mellon_saml.mint()
    assert mellon_accepted(post(guarded.post_url, b64))
    _, again = mellon_saml.mint(assertion_id=aid)      # a new Response, same assertion
    assert again != b64
    r = post(guarded.post_url, again)
    assert r.status_code == 403


@pytest.mark.expect_log("replay_refused")
def test_guarded_first_response_still_refused_after_120_sign_ins(guarded, mellon_saml, store):
    """mellon's own replay record lives in its 100-entry session cache:
    after 120 other sign-ins it has forgotten; the claim has not."""
    aid, first = mellon_saml.mint(name_id="first")
    assert mellon_accepted(post(guarded.post_url, first))
    for i in range(120):
        _, b64 = mellon_saml.mint(name_id="user%d" % i)
        assert mellon_accepted(post(guarded.post_url, b64)), i
    for h in guarded.replicas:
        assert post(h.base_url + POST_RESPONSE, first).status_code == 403, h.name


def test_guarded_mellon_sp_initiated_flow(guarded, mellon_saml, testidp, store):
    """mellon's own AuthnRequest (with its cookie test), answered by the
    IdP with InResponseTo, posted through the guard to another replica."""
    s = requests.Session()
    r1 = guarded.replicas[0]
    url, loc = r1.base_url + PAGE, None
    for _ in range(3):      # the page -> mellon's login endpoint -> the IdP
        start = s.get(url, allow_redirects=False, timeout=30)
        assert start.status_code in (302, 303), (start.status_code, start.text[:300])
        loc = start.headers["Location"]
        if loc.startswith(mellon_saml.idp.sso_url):
            break
        u = urllib.parse.urlsplit(loc)
        url = r1.base_url + u.path + ("?" + u.query if u.query else "")
    assert loc.startswith(mellon_saml.idp.sso_url), loc
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(loc).query)
    rid, _ = testidp.parse_redirect_authn_request(q["SAMLRequest"][0])
    _, b64 = mellon_saml.mint(in_response_to=rid, name_id="sp-initiated")
    data = {"SAMLResponse": b64, "RelayState": q["RelayState"][0]}
    back = s.post(r1.base_url + POST_RESPONSE, data=data, allow_redirects=False, timeout=30)
    assert mellon_accepted(back), (back.status_code, back.text[:300])
    page = s.get(r1.base_url + PAGE, allow_redirects=False, timeout=30)
    assert page.status_code == 200 and page.headers.get("X-Mellon-User") == "sp-initiated"
    assert len(claims(store)) == 1


@pytest.mark.expect_log("replay_refused")
@pytest.mark.parametrize("data", ["aes256-gcm", "aes128-cbc"])
def test_guarded_encrypted_assertion_decrypted_by_both(guarded, mellon_saml, testidp, sp_keys,
                                                       store, data):
    """Encrypted to the SP's certificate: the guard decrypts with the same
    key (ReplaySPEncryptionKeyFile, no certificate) to claim it, mellon
    decrypts it again for its session."""
    enc = testidp.Encryption(sp_keys[1], data=data)
    aid, b64 = mellon_saml.mint(name_id="enc-" + data, encrypt=enc, sign_response=True,
                                sign_assertion=False)
    r = post(guarded.post_url, b64)
    assert mellon_accepted(r), (r.status_code, r.text[:300])
    assert claims(store) == [claim_key(mellon_saml.idp.entity_id, aid)]
    for h in guarded.replicas:
        assert post(h.base_url + POST_RESPONSE, b64).status_code == 403, h.name


def test_guarded_body_reaches_mellon_unchanged(guarded, mellon_saml, store):
    """RelayState preserved, a body just under the limit (262144 bytes by
    default) passes whole."""
    aid, b64 = mellon_saml.mint()
    fields = {"SAMLResponse": b64, "RelayState": "/app/page.html?x=1&y=%2F"}
    body = urllib.parse.urlencode(fields)
    pad = 262144 - len(body) - len("&pad=") - 10
    raw = body + "&pad=" + "A" * pad
    assert len(raw) < 262144
    r = post(guarded.post_url, raw=raw)
    assert mellon_accepted(r), (r.status_code, r.text[:300])
    assert r.headers["Location"].endswith("/app/page.html?x=1&y=%2F"), r.headers["Location"]


@pytest.mark.expect_log("check_refused", "body_too_large")
def test_guarded_body_over_the_limit_refused(guarded, mellon_saml, store):
    aid, b64 = mellon_saml.mint()
    raw = urllib.parse.urlencode({"SAMLResponse": b64}) + "&pad=" + "A" * 262144
    r = post(guarded.post_url, raw=raw)
    assert r.status_code == 413
    assert claims(store) == []


@pytest.mark.expect_log("auth_mellon:error")
def test_guard_passes_what_mellon_then_refuses_itself(guarded, mellon_saml, store):
    """The guard checks the response, not mellon's rules: an off-site
    RelayState passes the guard (claimed) and mellon refuses it."""
    aid, b64 = mellon_saml.mint()
    r = post(guarded.post_url, b64, relay_state="https://evil.example/")
    assert r.status_code >= 400 and not mellon_accepted(r), r.status_code
    assert r.status_code != 403
    assert claims(store) == [claim_key(mellon_saml.idp.entity_id, aid)]


@pytest.mark.backends("redis")
@pytest.mark.expect_log("check_refused", "AH10244")
@pytest.mark.parametrize("case", CORPUS, ids=CORPUS_IDS)
def test_guarded_corpus_refused_before_the_claim_mellon_never_called(guarded, mellon_saml,
                                                                     store, case):
    """guard_corpus.json against mellon: each case refused by the layer it
    names, nothing claimed, mellon's handler never entered, the fresh
    response still good afterwards."""
    run_corpus_case(case, guarded, mellon_saml, store, mellon_accepted,
                    lambda headers: any(k.lower() == "set-cookie" and MELLON_COOKIE in v
                                        for k, v in headers),
                    mellon_handler_runs)


@pytest.mark.expect_log("check_refused")
def test_guarded_chunked_body_refused(guarded, mellon_saml, store):
    aid, b64 = mellon_saml.mint()
    body = urllib.parse.urlencode({"SAMLResponse": b64}).encode()
    # straight to a replica: the balancer (mod_proxy) sends it on with a
    # Content-Length, which is no longer ambiguous
    r = requests.post(guarded.replicas[0].base_url + POST_RESPONSE,
                      data=iter([body[:100], body[100:]]),
                      headers={"Content-Type": "application/x-www-form-urlencoded"},
                      allow_redirects=False, timeout=30)
    assert r.status_code == 400 and claims(store) == []


@pytest.mark.expect_log("check_refused")
@pytest.mark.parametrize("case,check", [("tampered", "signature"), ("audience", "audience"),
                                        ("expired", "expired"), ("unknown_idp", "issuer")])
def test_guarded_invalid_response_refused_nothing_claimed(guarded, mellon_saml, idps, testidp,
                                                           store, case, check):
    if case == "tampered":
        b64 = testidp.TestIdP.tamper(mellon_saml.mint()[1])
    elif case == "audience":
        b64 = mellon_saml.mint(audience="https://other-sp.example/")[1]
    elif case == "expired":
        b64 = mellon_saml.mint(scd_not_on_or_after_offset=-120, not_on_or_after_offset=-120)[1]
    else:
        b64 = idps["unknown"].mint(MELLON_SP, guarded.post_url)
    r = post(guarded.post_url, b64)
    assert r.status_code == 400 and MELLON_COOKIE not in r.cookies
    lines = [l for ls in guarded.new_log_lines().values() for l in ls if "RSP01004" in l]
    assert len(lines) == 1 and "check=%s:" % check in lines[0], lines
    assert claims(store) == []


@pytest.mark.expect_log("replay_refused")
def test_guard_and_own_acs_on_one_server(guarded, idps, store):
    """The module's own SP at /own and the guard at mellon's postResponse,
    in one httpd: both work, each with its own claims."""
    own_acs = guarded.public + "/own/saml/acs"
    b64 = idps["idp1"].mint(OWN_SP, own_acs, name_id="own-user")
    r = requests.post(own_acs, data={"SAMLResponse": b64, "RelayState": "/own/page.html"},
                      allow_redirects=False, timeout=30)
    assert r.status_code == 303, (r.status_code, r.text[:300])
    assert requests.post(own_acs, data={"SAMLResponse": b64},
                         allow_redirects=False, timeout=30).status_code == 403
    m = idps["idp1"].mint(MELLON_SP, guarded.post_url, name_id="mellon-user")
    assert mellon_accepted(post(guarded.post_url, m))
    assert len(claims(store)) == 2


@pytest.mark.expect_log("claim_store_error")
def test_guarded_store_down_503(guarded, mellon_saml, store):
    aid, b64 = mellon_saml.mint()
    store.stop_all()
    try:
        r = post(guarded.post_url, b64)
        assert r.status_code == 503 and r.headers.get("Retry-After")
        assert MELLON_COOKIE not in r.cookies
    finally:
        store.start_all()


@pytest.mark.backends("redis")
@pytest.mark.expect_log("RSP01025")
def test_guarded_fail_open_hands_on_without_claim_line(guarded, mellon_saml, store):
    """ReplaySPOnStoreFailure open, store down: the response reaches mellon
    without a claim, said once (RSP01025), and not also as a won claim."""
    aid, b64 = mellon_saml.mint()
    guarded.restart_replicas(server_extra=store.server_extra + "\nReplaySPOnStoreFailure open")
    try:
        guarded.mark_logs()
        store.stop_all()
        try:
            r = post(guarded.post_url, b64)
        finally:
            store.start_all()
        assert mellon_accepted(r), (r.status_code, r.text[:300])
        assert guarded.count_in_logs("RSP01025") == 1
        assert guarded.count_in_logs("RSP01040") == 0
    finally:
        guarded.reset_replicas()


# --------------------------------------------------------------------------
# the negative control: mellon alone
# --------------------------------------------------------------------------

@pytest.mark.backends("redis")
@pytest.mark.expect_log("has already been used")
def test_without_guard_mellon_accepts_a_replay_once_per_replica(request, workdir, module_so,
                                                                store, sp_keys, idps, testidp):
    f = start_fleet(request, "mellon", MellonFleet(os.path.join(workdir, "mellon-unguarded"), module_so,
                                         store, sp_keys, idps["idp1"], guard=False))
    m = Minter(idps["idp1"], testidp, MELLON_SP, f.post_url)
    aid, b64 = m.mint()
    targets = [f.post_url] + [h.base_url + POST_RESPONSE for h in f.replicas]
    accepted = sum(mellon_accepted(post(targets[i % len(targets)], b64)) for i in range(30))
    print("unguarded: 30 sequential posts of one response -> %d accepted" % accepted)
    assert accepted > 1, accepted
    f.stop()
