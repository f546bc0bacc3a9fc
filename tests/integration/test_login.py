"""SP-initiated login across the fleet: the redirect to the IdP, the
pending request in the shared store, InResponseTo consumed once, RelayState
as an opaque key to the stored return URL, unsolicited responses, and the
redirect-target rules of /saml/login."""

import time
import urllib.parse

import pytest

from http_client import COOKIE_NAME, get, post_acs, relay_of, session_cookie, set_cookie_headers
from stores import KEY_PREFIX

PAGE = "/app/page.html?x=1&y=%2F"
ENV_HEADERS = "\n".join([
    'Header always set X-Mail "expr=%{reqenv:REPLAYSP_mail}"',
    'Header always set X-GroupN "expr=%{reqenv:REPLAYSP_group_N}"',
])


def pending(store):
    return store.keys(KEY_PREFIX + "q:")


def used(store):
    return store.keys(KEY_PREFIX + "u:")


def sessions(store):
    return store.session_keys()


def authn_request_of(resp, saml, idp="idp1"):
    """(request ID, ACS URL asked for, RelayState) of a redirect to the IdP."""
    assert resp.status_code == 302, (resp.status_code, resp.text[:300])
    loc = resp.headers["Location"]
    sso = saml.idps[idp].sso_url
    assert loc.startswith(sso + "?"), (loc[:200], sso)
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(loc).query)
    assert len(q["SAMLRequest"]) == 1 and len(q["RelayState"]) == 1
    req_id, acs = saml.testidp.parse_redirect_authn_request(q["SAMLRequest"][0])
    return req_id, acs, relay_of(resp)   # with the binding cookies


def start(fleet, saml, base=None, path=PAGE, idp="idp1"):
    return authn_request_of(get((base or fleet.public) + path), saml, idp)


def answer(saml, req_id, idp="idp1", **kw):
    return saml.mint(idp, in_response_to=req_id, **kw)


def location(resp):
    return resp.headers.get("Location")


# --------------------------------------------------------------------------
# the whole flow, each step on another replica
# --------------------------------------------------------------------------

@pytest.mark.expect_log("RSP01001", "RSP01004")
def test_flow_each_step_on_another_replica(fleet, saml, store):
    fleet.restart_replicas(location_extra=ENV_HEADERS)
    r1, r2, r3 = fleet.replicas
    # 1. a protected URL, no session: to the IdP, with an AuthnRequest
    req_id, acs, relay = start(fleet, saml, base=r1.base_url)
    assert acs == fleet.acs_url
    # RelayState is an opaque token, not the URL
    assert "app" not in relay and "/" not in relay and len(relay) >= 32
    assert len(pending(store)) == 1 and used(store) == []
    # 2. the IdP's answer lands on another replica
    m = answer(saml, req_id, name_id="alice",
               attributes={"mail": ["alice@example.org"], "group": ["a", "b"]})
    r = post_acs(r2.base_url, m.b64, relay_state=relay)
    assert r.status_code == 303, r.text[:300]
    assert location(r) == PAGE
    cookie, _ = session_cookie(r)
    assert cookie and len(sessions(store)) == 1 and len(used(store)) == 1
    # 3. back to the page on a third replica, with the session
    g = get(r3.base_url + PAGE, cookie=cookie)
    assert g.status_code == 200, g.status_code
    assert g.headers["X-RSP-User"] == saml.user("alice")
    assert g.headers["X-Mail"] == "alice@example.org"
    assert g.headers["X-GroupN"] == "2"
    # the same response again, anywhere: a replay
    for name, base in fleet.targets():
        assert post_acs(base, m.b64, relay_state=relay).status_code == 403, name
    # another response to the same request: the request is used up
    m2 = answer(saml, req_id, name_id="alice")
    r = post_acs(r1.base_url, m2.b64, relay_state=relay)
    assert r.status_code == 400 and session_cookie(r)[0] is None
    assert fleet.count_in_logs("check=request-used") == 1
    assert len(sessions(store)) == 1


def test_login_endpoint_and_second_idp(fleet, saml, store):
    r = get(fleet.public + "/saml/login?ReturnTo=%2Fapp%2Fpage.html&IdP="
            + urllib.parse.quote(saml.idps["idp2"].entity_id, safe=""))
    req_id, acs, relay = authn_request_of(r, saml, "idp2")
    assert r.headers.get("Cache-Control") == "no-store"
    p = post_acs(fleet.public, answer(saml, req_id, "idp2").b64, relay_state=relay)
    assert p.status_code == 303 and location(p) == "/app/page.html"
    # no ReturnTo: back to /; no IdP: the first configured
    req_id, _, relay = authn_request_of(get(fleet.public + "/saml/login"), saml, "idp1")
    p = post_acs(fleet.public, answer(saml, req_id).b64, relay_state=relay)
    assert p.status_code == 303 and location(p) == "/"


def test_non_get_without_session_is_401(fleet, store):
    r = post_acs(fleet.public + "/app/page.html", "eA==")
    assert r.status_code == 401
    assert pending(store) == []


# --------------------------------------------------------------------------
# InResponseTo: unknown, expired, used, mismatched
# --------------------------------------------------------------------------

@pytest.mark.expect_log("RSP01004")
def test_unknown_request_refused(fleet, saml, store):
    _, _, relay = start(fleet, saml)
    m = answer(saml, saml.testidp.random_id())
    r = post_acs(fleet.public, m.b64, relay_state=relay)
    assert r.status_code == 400 and session_cookie(r)[0] is None
    assert fleet.count_in_logs("check=request-unknown") == 1
    assert sessions(store) == [] and used(store) == []


@pytest.mark.backends("redis")
@pytest.mark.expect_log("RSP01004")
def test_expired_request_refused(fleet, saml, store):
    fleet.restart_replicas(location_extra="ReplaySPRequestLifetime 5")
    req_id, _, relay = start(fleet, saml)
    ttl = store.ttl_seconds(pending(store)[0])
    assert 0 < ttl <= 5
    time.sleep(5.6)
    assert pending(store) == []
    r = post_acs(fleet.public, answer(saml, req_id).b64, relay_state=relay)
    assert r.status_code == 400
    assert fleet.count_in_logs("check=request-unknown") == 1
    assert sessions(store) == []


@pytest.mark.expect_log("RSP01004")
def test_relay_state_must_match_the_request(fleet, saml, store):
    req_id, _, relay = start(fleet, saml)
    _, _, other_relay = start(fleet, saml)
    for bad in (None, other_relay, relay + "x"):
        r = post_acs(fleet.public, answer(saml, req_id).b64, relay_state=bad)
        assert r.status_code == 400, bad
    assert fleet.count_in_logs("check=relay-state") == 3
    # the request was not used up by the refusals
    r = post_acs(fleet.public, answer(saml, req_id).b64, relay_state=relay)
    assert r.status_code == 303 and location(r) == PAGE


@pytest.mark.expect_log("RSP01004")
def test_sign_in_bound_to_the_browser_that_started_it(fleet, saml, store):
    """Login CSRF: the login answer gives the browser a cookie of its own
    for this request (HttpOnly, the endpoint path, the request's lifetime;
    plain http: no SameSite); the answer posted without it, or with
    another value, is refused (400, check=request-browser) and leaves the request
    to its own browser, which signs in and has the cookie expired."""
    r = get(fleet.public + PAGE)
    req_id, _, relay = authn_request_of(r, saml)
    (name, value), = relay.cookies.items()
    assert name.startswith(COOKIE_NAME + "_req_") and len(value) >= 32
    set_bind = [h for h in set_cookie_headers(r) if h.startswith(name + "=")]
    assert len(set_bind) == 1, set_cookie_headers(r)
    attrs = [a.strip() for a in set_bind[0].split(";")[1:]]
    assert sorted(attrs) == sorted(["Path=/saml", "Max-Age=300", "HttpOnly"]), attrs
    # another tab's sign-in: another cookie
    _, _, relay2 = start(fleet, saml)
    assert list(relay2.cookies) != [name]
    # another browser posting an answer to it: no cookie, another value,
    # the other tab's (each answer refused is used up, as any refused
    # answer: the request is not)
    for cookies in ({}, {name: value[:-1] + ("A" if value[-1] != "A" else "B")},
                    relay2.cookies):
        r = post_acs(fleet.public, answer(saml, req_id).b64, relay_state=relay.bare(),
                     cookies=cookies)
        assert r.status_code == 400, (cookies, r.status_code)
        assert session_cookie(r)[0] is None
    assert fleet.count_in_logs("check=request-browser") == 3
    assert used(store) == [] and sessions(store) == []
    # the browser that started it, on another replica
    r = post_acs(fleet.replicas[2].base_url, answer(saml, req_id).b64, relay_state=relay)
    assert r.status_code == 303 and location(r) == PAGE
    assert any(h.startswith(name + "=;") and "Max-Age=0" in h for h in set_cookie_headers(r))


@pytest.mark.expect_log("RSP01004", "RSP01001")
def test_another_browsers_post_claims_nothing(fleet, saml, store):
    """A solicited response posted first by a browser that did not start
    the sign-in (someone who got hold of it in flight) is refused (400,
    check=request-browser) before its assertion is claimed: nothing in the
    store. The browser that started it then signs in with that same
    response, once; after that the response is a replay (403) for anyone
    else, and the winner's own re-post, its binding cookie expired, gets
    its page again without a new session."""
    req_id, _, relay = start(fleet, saml)
    m = answer(saml, req_id)
    for base in (fleet.public, fleet.replicas[1].base_url):
        r = post_acs(base, m.b64, relay_state=relay.bare())
        assert r.status_code == 400 and session_cookie(r)[0] is None, r.status_code
    assert fleet.count_in_logs("check=request-browser") == 2
    assert store.claim_keys() == [] and used(store) == [] and sessions(store) == []
    r = post_acs(fleet.replicas[2].base_url, m.b64, relay_state=relay)
    assert r.status_code == 303 and location(r) == PAGE, r.status_code
    cookie, _ = session_cookie(r)
    assert cookie and len(store.claim_keys()) == 1 and len(sessions(store)) == 1
    assert len(used(store)) == 1
    # now claimed: anyone else's post is a replay, with or without the
    # binding cookie
    replays = fleet.count_in_logs("RSP01001")
    assert post_acs(fleet.public, m.b64, relay_state=relay.bare()).status_code == 403
    assert post_acs(fleet.public, m.b64, relay_state=relay).status_code == 403
    assert fleet.count_in_logs("RSP01001") == replays + 2
    # the winner's re-post (a browser expired its binding cookie)
    again = post_acs(fleet.replicas[0].base_url, m.b64, relay_state=relay.bare(),
                     cookie=cookie)
    assert again.status_code == 303 and location(again) == PAGE, again.status_code
    assert session_cookie(again)[0] is None and len(sessions(store)) == 1
    assert fleet.count_in_logs("check=request-browser") == 2


@pytest.mark.expect_log("RSP01004")
def test_binding_off(fleet, saml, store):
    """ReplaySPBindRequests Off: no cookie, and the answer signs in from any
    browser."""
    fleet.restart_replicas(location_extra="ReplaySPBindRequests Off")
    r = get(fleet.public + PAGE)
    req_id, _, relay = authn_request_of(r, saml)
    assert relay.cookies == {} and not [h for h in set_cookie_headers(r) if "_req_" in h]
    p = post_acs(fleet.public, answer(saml, req_id).b64, relay_state=relay.bare())
    assert p.status_code == 303 and location(p) == PAGE


@pytest.mark.expect_log("RSP01004")
def test_request_answered_by_another_idp_refused(fleet, saml, store):
    req_id, _, relay = start(fleet, saml)        # sent to idp1
    r = post_acs(fleet.public, answer(saml, req_id, "idp2").b64, relay_state=relay)
    assert r.status_code == 400
    assert fleet.count_in_logs("check=request-mismatch") == 1
    assert sessions(store) == []


@pytest.mark.expect_log("RSP01001")
def test_repost_of_a_solicited_response_by_the_same_browser(fleet, saml, store):
    req_id, _, relay = start(fleet, saml)
    m = answer(saml, req_id)
    r = post_acs(fleet.public, m.b64, relay_state=relay)
    assert r.status_code == 303
    cookie, _ = session_cookie(r)
    again = post_acs(fleet.public, m.b64, relay_state=relay, cookie=cookie)
    assert again.status_code == 303 and location(again) == PAGE
    assert session_cookie(again)[0] is None
    assert len(sessions(store)) == 1
    assert post_acs(fleet.public, m.b64, relay_state=relay).status_code == 403


# --------------------------------------------------------------------------
# unsolicited responses
# --------------------------------------------------------------------------

@pytest.mark.expect_log("RSP01004", "RSP01001")
def test_unsolicited_refused_by_default_accepted_when_allowed(fleet, saml, store):
    fleet.restart_replicas(unsolicited=False)
    m = saml.mint()
    r = post_acs(fleet.public, m.b64, relay_state="/app/page.html")
    assert r.status_code == 400 and session_cookie(r)[0] is None
    assert fleet.count_in_logs("check=unsolicited") == 1
    assert sessions(store) == [] and store.claim_keys() == []
    # solicited still works with the default
    req_id, _, relay = start(fleet, saml)
    assert post_acs(fleet.public, answer(saml, req_id).b64,
                    relay_state=relay).status_code == 303
    # allowed: the same unsolicited response is accepted, and claimed
    fleet.restart_replicas(location_extra="ReplaySPAllowUnsolicited On", unsolicited=False)
    r = post_acs(fleet.public, m.b64, relay_state="/app/page.html")
    assert r.status_code == 303 and location(r) == "/app/page.html"
    assert m.key in store.claim_keys()
    assert post_acs(fleet.public, m.b64).status_code == 403


# --------------------------------------------------------------------------
# redirect targets of /saml/login
# --------------------------------------------------------------------------

@pytest.mark.expect_log("RSP01031", "RSP01030")
@pytest.mark.parametrize("return_to", [
    "https://evil.example/x", "//evil.example/x", "/\\evil.example/x",
    "javascript:alert(1)", "data:text/html,x", "page.html", "/a\r\nSet-Cookie: x=y",
    "https://127.0.0.1.evil.example/", "https://user@evil.example/",
    "http://127.0.0.1@evil.example/",
])
def test_login_return_to_open_redirects_refused(fleet, store, return_to):
    r = get(fleet.public + "/saml/login?ReturnTo=" + urllib.parse.quote(return_to, safe=""))
    assert r.status_code == 400, r.status_code
    assert "Location" not in r.headers
    assert pending(store) == []
    assert fleet.count_in_logs("RSP01031") == 1


@pytest.mark.expect_log("RSP01030")
def test_login_unknown_idp_or_repeated_argument_refused(fleet, saml, store):
    r = get(fleet.public + "/saml/login?IdP=" + urllib.parse.quote(
        saml.idps["unknown"].entity_id, safe=""))
    assert r.status_code == 400
    r = get(fleet.public + "/saml/login?ReturnTo=/a&ReturnTo=/b")
    assert r.status_code == 400
    assert pending(store) == []


def test_redirect_domains_allow_listed_hosts(fleet, saml, store):
    fleet.restart_replicas(location_extra="ReplaySPRedirectDomains app.example.com *.example.net")
    for target in ("https://app.example.com/x?y=1", "http://a.b.example.net/",
                   fleet.public + "/app/page.html"):
        r = get(fleet.public + "/saml/login?ReturnTo=" + urllib.parse.quote(target, safe=""))
        req_id, _, relay = authn_request_of(r, saml)
        p = post_acs(fleet.public, answer(saml, req_id).b64, relay_state=relay)
        assert p.status_code == 303 and location(p) == target


@pytest.mark.expect_log("RSP01031")
def test_redirect_domains_other_hosts_still_refused(fleet, store):
    fleet.restart_replicas(location_extra="ReplaySPRedirectDomains app.example.com *.example.net")
    for target in ("https://example.net/", "https://app.example.com.evil.example/",
                   "https://evil.example/"):
        r = get(fleet.public + "/saml/login?ReturnTo=" + urllib.parse.quote(target, safe=""))
        assert r.status_code == 400, target
    assert pending(store) == []


# --------------------------------------------------------------------------
# the store is down: no login starts (fail closed)
# --------------------------------------------------------------------------

@pytest.mark.backends("redis")
@pytest.mark.expect_log("RSP01028")
def test_store_down_login_not_started(fleet, store):
    store.stop_all()
    try:
        r = get(fleet.public + PAGE)
        assert r.status_code == 503 and r.headers.get("Retry-After")
        assert "Location" not in r.headers
    finally:
        store.start_all()
    assert fleet.count_in_logs("RSP01028") >= 1


def test_authn_request_signed_when_the_idp_wants_it(fleet, saml, store, workdir):
    """WantAuthnRequestsSigned="true": the AuthnRequest carries an
    RSA-SHA256 redirect signature the IdP verifies with our metadata."""
    import os
    idp = saml.testidp.TestIdP(os.path.join(workdir, "idp-wants-signed"),
                               entity_id="https://signed.idp.test.example/idp",
                               want_authn_requests_signed=True)
    sp = dict(fleet.sp, idp_metadata=[idp.metadata_path] + fleet.sp["idp_metadata"],
              default_idp=idp.entity_id)
    fleet.restart_replicas(sp=sp)
    r = get(fleet.public + PAGE)
    assert r.status_code == 302
    loc = r.headers["Location"]
    assert loc.startswith(idp.sso_url + "?")
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(loc).query)
    assert q["SigAlg"] == ["http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"]
    md = get(fleet.public + "/saml/metadata").text
    info = idp.verify_authn_request(md, loc)
    assert info["acs_url"] == fleet.acs_url
    # a tampered request does not verify
    with pytest.raises(Exception):
        idp.verify_authn_request(md, idp.tamper_redirect(loc))
    # and the answer signs in
    p = post_acs(fleet.public, idp.mint(fleet.entity_id, fleet.acs_url,
                                        in_response_to=info["id"]),
                 relay_state=relay_of(r))
    assert p.status_code == 303 and location(p) == PAGE


def test_authn_request_unsigned_by_default(fleet, saml):
    r = get(fleet.public + PAGE)
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(r.headers["Location"]).query)
    assert "Signature" not in q and "SigAlg" not in q
