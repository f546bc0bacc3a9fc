"""Fleet tests a-f: three replicas behind a balancer, on every store
backend (Redis, one memcached, two memcached servers, Redis Cluster): each
test here runs once per backend, through the ``store`` fixture
(harness.Store).

The error-log gate (conftest.py) fails any test that causes a warn-or-worse
line it did not declare with @pytest.mark.expect_log.
"""

import base64
import concurrent.futures
import math
import threading
import time
import urllib.parse

import pytest

from http_client import COOKIE_NAME, get, post_acs, session_cookie, set_cookie_headers
from httpd_fleet import TAGS
from stores import session_key

PAGE = "/app/page.html"

pytestmark = pytest.mark.also_cluster


def sessions(store):
    return store.session_keys()


def claims(store):
    return store.claim_keys()


def location_path(resp, fleet):
    """The Location of a redirect as a local path (an absolute Location must
    point at the public origin)."""
    loc = resp.headers.get("Location")
    assert loc, "no Location header"
    u = urllib.parse.urlsplit(loc)
    if u.scheme or u.netloc:
        assert "%s://%s" % (u.scheme, u.netloc) == fleet.public, "off-site Location %r" % loc
    path = u.path + ("?" + u.query if u.query else "")
    return path


def sign_in(fleet, m, target=None, relay_state=PAGE):
    """POST m to the ACS (balancer by default); assert success; return the
    cookie value."""
    r = post_acs(target or fleet.public, m.b64, relay_state=relay_state)
    assert r.status_code == 303, (r.status_code, r.text[:500])
    cookie, attrs = session_cookie(r)
    assert cookie, "no %s cookie in %r" % (COOKIE_NAME, set_cookie_headers(r))
    return cookie


def assert_login_redirect(resp, saml, idp="idp1"):
    """A 302 to the IdP's SingleSignOnService carrying an AuthnRequest."""
    assert resp.status_code == 302, (resp.status_code, resp.text[:300])
    loc = resp.headers.get("Location", "")
    sso = saml.idps[idp].sso_url
    assert loc.startswith(sso + "?"), (loc[:200], sso)
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(loc).query)
    assert "SAMLRequest" in q and "RelayState" in q, loc[:200]
    return True


def assert_session_key(store, cookie):
    """The session record is stored under <prefix>s:base64url(SHA-256(cookie)),
    never under the cookie value itself."""
    k = session_key(cookie)
    assert store.exists(k), "no session record under %s; sessions: %r" % (k, sessions(store))
    assert not [s for s in sessions(store) if cookie in s]
    return k


# --------------------------------------------------------------------------
# a. a fresh response -> exactly one session; its cookie works everywhere
# --------------------------------------------------------------------------

def test_a_fresh_response_one_session_cookie_works_on_every_replica(fleet, saml, store):
    m = saml.mint(name_id="alice")
    assert sessions(store) == [] and claims(store) == []

    r = post_acs(fleet.public, m.b64, relay_state=PAGE)
    assert r.status_code == 303, r.text[:500]
    assert location_path(r, fleet) == PAGE
    cookies = [h for h in set_cookie_headers(r) if h.startswith(COOKIE_NAME + "=")]
    assert len(cookies) == 1, cookies
    cookie, attrs = session_cookie(r)
    assert cookie
    assert attrs.get("path") == "/"
    assert attrs.get("httponly") is True
    assert str(attrs.get("samesite", "")).lower() == "lax"
    assert "secure" not in attrs           # plain http

    # exactly one session and one claim in the store
    assert claims(store) == [m.key]
    assert len(sessions(store)) == 1
    assert_session_key(store, cookie)
    assert fleet.count_in_logs(TAGS["sign_in_accepted"]) == 1
    # never a cookie value (or the raw assertion ID) in an error log
    logged = [line for lines in fleet.new_log_lines().values() for line in lines]
    assert not [line for line in logged if cookie in line or m.assertion_id in line]

    # the cookie works on every replica directly, and through the balancer
    for name, base in fleet.targets():
        g = get(base + PAGE, cookie=cookie)
        assert g.status_code == 200, (name, g.status_code)
        assert "app page" in g.text
        assert g.headers.get("X-RSP-User") == saml.user("alice"), name
        assert g.headers.get("X-RSP-Auth-Type") == "ReplaySP", name
        if name != "balancer":
            assert g.headers.get("X-RSP-Replica") == name
        # no session, or a made-up cookie: a GET is sent to the IdP
        assert_login_redirect(get(base + PAGE), saml), name
        assert_login_redirect(get(base + PAGE, cookie="x" * 43), saml), name
    assert len(sessions(store)) == 1


def test_a_deleted_session_is_refused_on_every_replica(fleet, saml, store):
    cookie = sign_in(fleet, saml.mint())
    k = assert_session_key(store, cookie)
    for name, base in fleet.targets():
        assert get(base + PAGE, cookie=cookie).status_code == 200, name
    assert store.delete(k) is True
    for name, base in fleet.targets():
        assert assert_login_redirect(get(base + PAGE, cookie=cookie), saml), name


def test_a_expired_session_is_refused_on_every_replica(fleet, saml, store):
    """SessionNotOnOrAfter 3 s ahead caps the session; after it, 401 everywhere."""
    cookie = sign_in(fleet, saml.mint(session_not_on_or_after_offset=3))
    for name, base in fleet.targets():
        assert get(base + PAGE, cookie=cookie).status_code == 200, name
    time.sleep(4.2)
    for name, base in fleet.targets():
        assert assert_login_redirect(get(base + PAGE, cookie=cookie), saml), name


@pytest.mark.parametrize("relay_state,expected", [
    (None, "/"),
    ("/", "/"),
    ("/app/page.html?x=1&y=2", "/app/page.html?x=1&y=2"),
])
def test_a_relay_state_local_paths_followed(fleet, saml, relay_state, expected):
    r = post_acs(fleet.public, saml.mint().b64, relay_state=relay_state)
    assert r.status_code == 303
    assert location_path(r, fleet) == expected


@pytest.mark.expect_log("RSP01004")
@pytest.mark.parametrize("relay_state", [
    "https://evil.example/steal", "//evil.example/steal", "/\\evil.example/x",
    "javascript:alert(1)", "app/page.html", "/a\r\nSet-Cookie: x=y",
])
def test_a_relay_state_open_redirect_refused(fleet, saml, store, relay_state):
    """The RelayState of an unsolicited response is a redirect target: an
    off-site or malformed one refuses the response (400), before any claim."""
    m = saml.mint()
    r = post_acs(fleet.public, m.b64, relay_state=relay_state)
    assert r.status_code == 400
    assert "Location" not in r.headers
    assert claims(store) == [] and sessions(store) == []
    assert fleet.count_in_logs("check=relay-state") == 1


@pytest.mark.parametrize("sign_response,sign_assertion", [(True, False), (False, True), (True, True)])
def test_a_signed_response_or_assertion_is_enough(fleet, saml, store, sign_response, sign_assertion):
    m = saml.mint(sign_response=sign_response, sign_assertion=sign_assertion)
    sign_in(fleet, m)
    assert store.exists(m.key)


def test_a_metadata_without_session_on_every_replica(fleet):
    for name, base in fleet.targets():
        r = get(base + "/saml/metadata")
        assert r.status_code == 200, name
        assert fleet.entity_id in r.text, name
        assert fleet.acs_url in r.text, name        # the public ACS URL
        assert "EntityDescriptor" in r.text


def test_a_attributes_and_session_lifetime_cap(fleet, saml, store):
    """SessionNotOnOrAfter caps the session record's lifetime."""
    m = saml.mint(name_id="bob", session_not_on_or_after_offset=120,
                  attributes={"mail": "bob@example.org"})
    cookie = sign_in(fleet, m)
    k = assert_session_key(store, cookie)
    ttl = store.ttl_seconds(k)
    assert 0 < ttl <= 121 + store.expiry_margin_s, ttl
    g = get(fleet.replicas[0].base_url + PAGE, cookie=cookie)
    assert g.status_code == 200 and g.headers.get("X-RSP-User") == saml.user("bob")


# --------------------------------------------------------------------------
# b. the same response again -> refused everywhere, no Set-Cookie
# --------------------------------------------------------------------------

@pytest.mark.expect_log("replay_refused")
def test_b_repost_by_the_browser_that_claimed_it_gets_303_and_no_new_session(fleet, saml, store):
    """Back button or double submit: the browser holding the session the
    claim recorded gets the first answer again, on any replica, and no new
    session; anyone else posting the same response gets the replay's 403."""
    m = saml.mint()
    cookie = sign_in(fleet, m)
    before = sorted(sessions(store))
    for name, base in fleet.targets():
        r = post_acs(base, m.b64, relay_state=PAGE, cookie=cookie)
        assert r.status_code == 303, (name, r.status_code, r.text[:300])
        assert location_path(r, fleet) == PAGE
        assert session_cookie(r)[0] is None, name
    assert sorted(sessions(store)) == before
    assert fleet.count_in_logs("RSP01026") == len(fleet.targets())
    # Another client, without the cookie or with a session of its own.
    other = sign_in(fleet, saml.mint())
    for cookie_sent in (None, other, "x" * 43):
        r = post_acs(fleet.public, m.b64, relay_state=PAGE, cookie=cookie_sent)
        assert r.status_code == 403, (cookie_sent, r.status_code)
        assert session_cookie(r)[0] is None
    assert len(sessions(store)) == len(before) + 1


@pytest.mark.expect_log("replay_refused")
def test_b_replay_refused_on_every_replica_and_balancer(fleet, saml, store):
    m = saml.mint()
    sign_in(fleet, m)
    assert len(sessions(store)) == 1
    fleet.mark_logs()

    results = []
    targets = [(h.name, h.base_url) for h in fleet.replicas] + [("balancer", fleet.public)] * 3
    for name, base in targets:
        r = post_acs(base, m.b64, relay_state=PAGE)
        results.append((name, r.status_code, set_cookie_headers(r), r.headers.get("X-RSP-Replica")))
    for name, status, cookies, replica in results:
        assert status == 403, (name, status)
        assert not [c for c in cookies if c.startswith(COOKIE_NAME + "=")], (name, cookies)
    # the balancer's three posts went to the three replicas (round-robin)
    assert sorted(r[3] for r in results[3:]) == ["replica1", "replica2", "replica3"]
    assert len(sessions(store)) == 1
    assert claims(store) == [m.key]

    logs = fleet.new_log_lines()
    n = sum(1 for lines in logs.values() for line in lines if TAGS["replay_refused"] in line)
    assert n == len(targets), logs
    for h in fleet.replicas:   # each replica logged its own refusals, at error level
        mine = [line for line in logs[h.name] if TAGS["replay_refused"] in line]
        assert len(mine) == 2, (h.name, mine)
        assert all(":error]" in line for line in mine)
        assert all(m.issuer in line and "127.0.0.1" in line for line in mine), mine
        # never the raw assertion ID in the log
        assert not any(m.assertion_id in line for line in mine)
    print("test b [%s]: %d posts of a used response -> %s"
          % (store.name, len(results), [r[1] for r in results]))


# --------------------------------------------------------------------------
# c. 50 identical concurrent posts through the balancer, 20 times
# --------------------------------------------------------------------------

BURST = 50
ROUNDS = 20


def _burst(fleet, b64):
    barrier = threading.Barrier(BURST, timeout=30)

    def one(_):
        barrier.wait()
        r = post_acs(fleet.public, b64, relay_state=PAGE, timeout=60)
        cookie, _attrs = session_cookie(r)
        return r.status_code, cookie, r.headers.get("X-RSP-Replica")

    with concurrent.futures.ThreadPoolExecutor(max_workers=BURST) as ex:
        return list(ex.map(one, range(BURST), timeout=120))


@pytest.mark.expect_log("replay_refused")
def test_c_concurrent_identical_posts_exactly_one_wins(fleet, saml, store):
    totals = {"303": 0, "403": 0}
    per_replica = {}
    for i in range(ROUNDS):
        m = saml.mint()
        res = _burst(fleet, m.b64)
        statuses = [s for s, _, _ in res]
        winners = [(s, c) for s, c, _ in res if s == 303]
        assert len(winners) == 1, "round %d: %r" % (i, sorted(statuses))
        assert winners[0][1], "round %d: the 303 has no session cookie" % i
        assert statuses.count(403) == BURST - 1, "round %d: %r" % (i, sorted(statuses))
        assert all(c is None for s, c, _ in res if s != 303), "round %d: cookie on a refusal" % i
        assert store.exists(m.key)
        for _, _, rep in res:
            per_replica[rep] = per_replica.get(rep, 0) + 1
        totals["303"] += 1
        totals["403"] += statuses.count(403)
    assert len(sessions(store)) == ROUNDS
    assert len(claims(store)) == ROUNDS
    assert set(per_replica) == {"replica1", "replica2", "replica3"}, per_replica
    assert fleet.count_in_logs(TAGS["replay_refused"]) == ROUNDS * (BURST - 1)
    assert fleet.count_in_logs(TAGS["sign_in_accepted"]) == ROUNDS
    print("test c [%s]: %d rounds x %d concurrent posts: 303=%d 403=%d; per replica %r"
          % (store.name, ROUNDS, BURST, totals["303"], totals["403"], per_replica))


# --------------------------------------------------------------------------
# d. the claim's TTL = window end - now + skew
# --------------------------------------------------------------------------

def check_claim_ttl(store, m, skew, t0, t1, c0=None):
    """The claim's remaining TTL against the rule
    ttl = window_end - now + skew (rounded up), now being when the module
    handled the sign-in (between t0 and t1, the test's clock). Returns the
    residual TTL - (window_end - now_read): the skew, to within the store's
    resolution.

    Redis: PTTL counts down in ms from ttl_ms; the residual is the skew to
    within 1 s. memcached: the expiry is ceil(ttl_ms / 1000) whole seconds,
    plus the module's margin (store.expiry_margin_s), at the ``add``, and
    ``mg key t`` counts down on memcached's clock, which ticked ``ticks``
    times between c0 (store.clock() read before the sign-in) and a read
    after the TTL's: it must lie in [ceil(W + skew - t1) + margin - ticks,
    ceil(W + skew - t0) + margin] (normally one or two values: the rule
    within 1 s)."""
    t_read = time.time()
    ttl = store.ttl_seconds(m.key)
    ticks = 0 if c0 is None else store.clock(m.key) - c0
    assert ttl is not None and ttl > 0, "claim key %s: TTL %r" % (m.key, ttl)
    w = m.window_end
    residual = ttl - (w - t_read)
    if store.ttl_resolution < 1:
        assert abs(residual - skew) <= 1, "skew %d: residual %.3f" % (skew, residual)
    else:
        margin = store.expiry_margin_s
        lo = math.ceil(w + skew - t1) + margin - ticks
        hi = math.ceil(w + skew - t0) + margin
        assert lo <= ttl <= hi, ("skew %d: mg t says %r, the rule says %d..%d (%d ticks)"
                                 % (skew, ttl, lo, hi, ticks))
    return residual


def _claim_residual(fleet, saml, store, skew=60, **mint_kw):
    """Sign in; check the claim's TTL (check_claim_ttl); return
    (residual, minted, cookie)."""
    m = saml.mint(**mint_kw)
    c0 = store.clock(m.key)
    t0 = time.time()
    cookie = sign_in(fleet, m)
    t1 = time.time()
    return check_claim_ttl(store, m, skew, t0, t1, c0), m, cookie


def test_d_claim_ttl_is_window_end_minus_now_plus_skew(fleet, saml, store):
    # Comparing two residuals: each is exact to the store's resolution.
    tol = 1 if store.ttl_resolution < 1 else 2
    # Conditions NotOnOrAfter is the earlier one
    r1, m1, c1 = _claim_residual(fleet, saml, store, not_on_or_after_offset=240,
                                 scd_not_on_or_after_offset=300)
    # SubjectConfirmationData NotOnOrAfter is the earlier one
    r2, _, _ = _claim_residual(fleet, saml, store, not_on_or_after_offset=300,
                               scd_not_on_or_after_offset=200)
    # only one of them present
    r3, _, _ = _claim_residual(fleet, saml, store, not_on_or_after_offset=None,
                               scd_not_on_or_after_offset=200)
    r4, _, _ = _claim_residual(fleet, saml, store, not_on_or_after_offset=180,
                               scd_not_on_or_after_offset=None)
    # the default session lifetime (8 h) applies to the session, not the claim
    sk = assert_session_key(store, c1)
    assert abs(store.ttl_seconds(sk) - 28800) <= 5, store.ttl_seconds(sk)

    # another session lifetime: the claim's TTL does not change
    fleet.restart_replicas(location_extra="ReplaySPSessionLifetime 120")
    r5, _, c5 = _claim_residual(fleet, saml, store, not_on_or_after_offset=240,
                                scd_not_on_or_after_offset=300)
    assert abs(r5 - r1) <= tol, "session lifetime changed the claim TTL: %.3f vs %.3f" % (r5, r1)
    sk5 = assert_session_key(store, c5)
    assert 0 < store.ttl_seconds(sk5) <= 120 + store.expiry_margin_s

    # another skew: the claim's TTL changes by exactly the difference
    fleet.restart_replicas(location_extra="ReplaySPClockSkew 300")
    r6, _, _ = _claim_residual(fleet, saml, store, skew=300, not_on_or_after_offset=240,
                               scd_not_on_or_after_offset=300)
    assert abs((r6 - r1) - 240) <= tol, "skew 60 -> 300: residual %.3f -> %.3f" % (r1, r6)
    print("test d [%s]: residuals (TTL - (window_end - now)) skew60=%.3f %.3f %.3f %.3f "
          "lifetime120=%.3f skew300=%.3f" % (store.name, r1, r2, r3, r4, r5, r6))


@pytest.mark.expect_log("replay_refused", "check_refused")
def test_d_entra_window_from_an_idp_clock_ahead_signs_in_with_the_defaults(fleet, saml, store):
    """Microsoft Entra ID's window: Conditions and SubjectConfirmationData
    end 65 minutes after a NotBefore back-dated 5 minutes, here from an IdP
    whose clock is 30 s ahead of ours (60 min 30 s remaining on our clock),
    and the same 65 minutes not back-dated (65 min 30 s remaining): each
    signs in once with the default configuration, its claim held for the
    whole window plus the skew; 65 minutes from a clock 30 s further on
    than the skew tolerates is window-too-long, nothing claimed (30 s: the
    time between minting and the module's check must not bring it back
    within the limit, as 1 s once did on a loaded machine)."""
    ahead = 30
    for back in (300, 0):
        end = ahead - back + 65 * 60
        _, m, _ = _claim_residual(fleet, saml, store, issue_instant_offset=ahead,
                                  not_before_offset=ahead - back,
                                  not_on_or_after_offset=end, scd_not_on_or_after_offset=end)
        assert post_acs(fleet.public, m.b64).status_code == 403
    end = 65 * 60 + 60 + 30
    m = saml.mint(not_before_offset=-300, not_on_or_after_offset=end,
                  scd_not_on_or_after_offset=end)
    r = post_acs(fleet.public, m.b64)
    assert r.status_code == 400 and not store.exists(m.key)
    assert fleet.count_in_logs("check=window-too-long") >= 1


# --------------------------------------------------------------------------
# e. bad input -> refused with the documented code, and nothing claimed
# --------------------------------------------------------------------------

HOK = "urn:oasis:names:tc:SAML:2.0:cm:holder-of-key"
FAR = "http://127.0.0.1:1/saml/acs"


def _case(saml, name):
    """(SAMLResponse or None, expected status, (issuer, assertion_id) or None,
    extra form fields)"""
    aid = saml.testidp.random_id()
    i1 = saml.idps["idp1"].entity_id

    def mint(idp="idp1", **kw):
        m = saml.mint(idp=idp, assertion_id=aid, **kw)
        return m.b64, (m.issuer, aid)

    if name == "unsigned":
        b, k = mint(sign_response=False, sign_assertion=False)
    elif name == "badly_signed":
        b, k = mint(idp="rogue")
    elif name == "tampered":
        b, k = mint()
        b = saml.testidp.TestIdP.tamper(b)
    elif name == "wrong_audience":
        b, k = mint(audience="https://other-sp.example/saml")
    elif name == "no_audience":
        b, k = mint(audience="")
    elif name == "wrong_recipient":
        b, k = mint(recipient=FAR)
    elif name == "wrong_destination":
        b, k = mint(destination=FAR)
    elif name == "expired":
        b, k = mint(issue_instant_offset=-900, not_before_offset=-930,
                    not_on_or_after_offset=-600, scd_not_on_or_after_offset=-600)
    elif name == "not_yet_valid":
        b, k = mint(not_before_offset=600, not_on_or_after_offset=900,
                    scd_not_on_or_after_offset=900)
    elif name == "unknown_issuer":
        b, k = mint(idp="unknown")
    elif name == "issuer_not_matching_key":
        b, k = mint(idp="idp1", issuer=saml.idps["unknown"].entity_id)
    elif name == "holder_of_key":
        b, k = mint(confirmation_method=HOK)
    elif name == "two_assertions":
        b, k = mint(assertions=2)
    elif name == "no_assertion":
        b, k = mint(assertions=0)
    elif name == "missing_window":
        b, k = mint(not_on_or_after_offset=None, scd_not_on_or_after_offset=None)
    elif name == "window_too_long":
        b, k = mint(not_on_or_after_offset=7200, scd_not_on_or_after_offset=7200)
    elif name == "malformed_base64":
        return "%%% this is not base64 %%%", 400, None, None
    elif name == "malformed_xml":
        xml = b'<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="_x"><unclosed>'
        return base64.b64encode(xml).decode(), 400, None, None
    elif name == "not_a_response":
        return base64.b64encode(b"hello, world").decode(), 400, None, None
    elif name == "missing_samlresponse":
        return None, 400, None, None
    elif name == "oversized_body":
        return "A" * (262144 + 4096), 413, None, None
    else:
        raise AssertionError(name)
    assert k[0] in (i1, saml.idps["idp2"].entity_id, saml.idps["unknown"].entity_id)
    return b, 400, k, None


BAD_CASES = [
    "unsigned", "badly_signed", "tampered", "wrong_audience", "no_audience",
    "wrong_recipient", "wrong_destination", "expired", "not_yet_valid",
    "unknown_issuer", "issuer_not_matching_key", "holder_of_key",
    "two_assertions", "no_assertion", "missing_window", "window_too_long",
    "malformed_base64", "malformed_xml", "not_a_response",
    "missing_samlresponse", "oversized_body",
]


@pytest.mark.expect_log("check_refused", "body_too_large")
@pytest.mark.parametrize("case", BAD_CASES)
def test_e_bad_input_refused_and_nothing_claimed(fleet, saml, store, case):
    b64, expected, key_parts, fields = _case(saml, case)
    for name, base in [("balancer", fleet.public), (fleet.replicas[0].name, fleet.replicas[0].base_url)]:
        r = post_acs(base, b64, relay_state=PAGE, fields=fields)
        assert r.status_code == expected, (case, name, r.status_code, r.text[:300])
        assert session_cookie(r)[0] is None, (case, name)
    if key_parts:
        from stores import claim_key
        assert not store.exists(claim_key(*key_parts)), "%s: claim key exists" % case
    assert claims(store) == [], case
    assert sessions(store) == [], case
    tag = TAGS["body_too_large" if expected == 413 else "check_refused"]
    lines = [line for lines in fleet.new_log_lines().values() for line in lines if tag in line]
    assert len(lines) == 2 and all("check=" in line for line in lines), (case, lines)


def test_e_acs_wants_a_form_post(fleet):
    import requests
    r = requests.get(fleet.public + "/saml/acs", allow_redirects=False, timeout=30)
    assert r.status_code == 405
    assert "POST" in r.headers.get("Allow", "")


@pytest.mark.expect_log("check_refused")
def test_e_acs_refuses_other_content_types(fleet, saml, store):
    import requests
    m = saml.mint()
    r = requests.post(fleet.public + "/saml/acs", allow_redirects=False, timeout=30,
                      files={"SAMLResponse": ("r", m.b64)})     # multipart/form-data
    assert r.status_code == 400
    assert session_cookie(r)[0] is None and not store.exists(m.key)


@pytest.mark.expect_log("malformed_session")
def test_a_malformed_session_record_is_no_session(fleet, saml, store):
    cookie = sign_in(fleet, saml.mint())
    k = assert_session_key(store, cookie)
    assert store.set(k, "garbage", 60)
    for name, base in fleet.targets():
        assert assert_login_redirect(get(base + PAGE, cookie=cookie), saml), name


# --------------------------------------------------------------------------
# f. two IdPs, same assertion ID -> both accepted
# --------------------------------------------------------------------------

@pytest.mark.expect_log("replay_refused")
def test_f_two_idps_same_assertion_id_both_accepted(fleet, saml, store):
    aid = saml.testidp.random_id()
    m1 = saml.mint(idp="idp1", assertion_id=aid, name_id="alice")
    m2 = saml.mint(idp="idp2", assertion_id=aid, name_id="alice2")
    assert m1.key != m2.key
    c1 = sign_in(fleet, m1)
    c2 = sign_in(fleet, m2)
    assert c1 != c2
    assert claims(store) == sorted([m1.key, m2.key])
    assert get(fleet.replicas[1].base_url + PAGE, cookie=c1).headers.get("X-RSP-User") \
        == saml.user("alice", "idp1")
    assert get(fleet.replicas[2].base_url + PAGE, cookie=c2).headers.get("X-RSP-User") \
        == saml.user("alice2", "idp2")
    # and each is still single use
    assert post_acs(fleet.public, m1.b64).status_code == 403
    assert post_acs(fleet.public, m2.b64).status_code == 403


# --------------------------------------------------------------------------
# the per-location options
# --------------------------------------------------------------------------

@pytest.mark.expect_log("check_refused", "body_too_large")
def test_options_endpoint_cookie_window_and_body_size(fleet, saml, store):
    fleet.restart_replicas(location_extra="\n".join([
        "ReplaySPEndpointPath /sso",
        "ReplaySPCookieName rsp_other",
        "ReplaySPMaxAssertionWindow 7200",
        "ReplaySPMaxBodySize 4096",
    ]))
    acs_url = fleet.public + "/sso/acs"
    idp = saml.idps["idp1"]
    aid = saml.testidp.random_id()
    # a response for the new ACS URL, with a window the default maximum refuses
    b64 = idp.mint(saml.sp_entity_id, acs_url, assertion_id=aid,
                   not_on_or_after_offset=5400, scd_not_on_or_after_offset=5400)
    assert len(b64) > 4096
    # too big for ReplaySPMaxBodySize 4096
    r = post_acs(acs_url, b64)
    assert r.status_code == 413 and not claims(store)
    fleet.restart_replicas(location_extra="\n".join([
        "ReplaySPEndpointPath /sso",
        "ReplaySPCookieName rsp_other",
        "ReplaySPMaxAssertionWindow 7200",
    ]))
    # the old endpoint is no longer the ACS: protected like any other path
    assert post_acs(fleet.public + "/saml/acs", b64).status_code == 401
    r = post_acs(acs_url, b64, relay_state=PAGE)
    assert r.status_code == 303, r.text[:300]
    cookie, attrs = session_cookie(r, name="rsp_other")
    assert cookie and session_cookie(r)[0] is None
    assert store.exists(claim_key_of(idp.entity_id, aid))
    import requests
    for name, base in fleet.targets():
        g = requests.get(base + PAGE, headers={"Cookie": "rsp_other=" + cookie},
                         allow_redirects=False, timeout=30)
        assert g.status_code == 200, name
        assert get(base + "/sso/metadata").status_code == 200
        assert acs_url in get(base + "/sso/metadata").text
    # a response for the old ACS URL is refused (Destination/Recipient)
    m = saml.mint()
    assert post_acs(acs_url, m.b64).status_code == 400
    assert not store.exists(m.key)


def claim_key_of(issuer, aid):
    from stores import claim_key
    return claim_key(issuer, aid)
