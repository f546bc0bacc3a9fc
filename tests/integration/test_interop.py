"""Interoperability: the module accepts SAML responses minted by a second,
independent SAML 2.0 implementation, pysaml2 (Debian's python3-pysaml2,
signing with the xmlsec1 binary), and refuses its broken ones with the same
answers as Lasso-minted ones. Every other test's responses come from
tests/idp/rsp_testidp.py, built on python3-lasso: the library the module
itself uses to check them.

The pysaml2 IdP (tests/interop/pysaml2_idp.py) has its own entity ID and
key pair; its metadata is pysaml2's own rendering of its configuration, and
the SP metadata it trusts is what the module serves at /saml/metadata.

A fleet of its own (three replicas behind a balancer, module scope, on
Redis only: this is about SAML, not the store), built by harness.Fleet with
the session SP settings plus the pysaml2 IdP's metadata file, so its
configuration is harness.sp_conf_body's, whatever defaults that gives.
"""

import base64
import os
import sys
import time
import urllib.parse

import pytest

import common
import http_client
import httpd_fleet
from common import HarnessError
from http_client import COOKIE_NAME, get, post_acs, session_cookie, set_cookie_headers
from httpd_fleet import TAGS, Fleet, bad_log_lines
from idp_tools import window_end_of
from stores import claim_key

INTEROP_DIR = os.path.join(common.REPO, "tests", "interop")
PAGE = "/app/page.html"
OTHER_SP_ENTITY_ID = "https://other-sp.test.example/saml/metadata"
ATTRS = {"mail": ["alice@example.org"], "group": ["staff", "admins"],
         "urn:oid:1.3.6.1.4.1.5923.1.1.1.6": ["alice@example.org"]}

# The session as the application sees it (ReplaySPEnvPrefix REPLAYSP_),
# exposed as response headers on every page under <Location />.
ENV_HEADERS = "\n".join(
    'Header always set X-%s "expr=%%{reqenv:REPLAYSP_%s}"' % (h, v) for h, v in [
        ("Mail", "mail"), ("Group", "group"), ("Group0", "group_0"), ("Group1", "group_1"),
        ("GroupN", "group_N"), ("NameID", "NAME_ID"), ("IdP", "IDP"),
        ("SessionIndex", "SESSION_INDEX"), ("Oid", "urn_oid_1_3_6_1_4_1_5923_1_1_1_6")])


pytestmark = pytest.mark.backends("redis")


def p2user(fleet, p2idp, name_id):
    """REMOTE_USER of name_id from the pysaml2 IdP (the fleet trusts more
    than one IdP)."""
    return httpd_fleet.qualified_user(p2idp.entity_id, fleet.entity_id, name_id)


# --------------------------------------------------------------------------
# fixtures
# --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def p2lib():
    if INTEROP_DIR not in sys.path:
        sys.path.insert(0, INTEROP_DIR)
    try:
        import pysaml2_idp
    except ImportError as e:
        pytest.fail("cannot import tests/interop/pysaml2_idp.py (python3-pysaml2, "
                    "run with /usr/bin/python3): %s" % e, pytrace=False)
    return pysaml2_idp


@pytest.fixture(scope="module")
def p2idp(workdir, p2lib):
    """The pysaml2 IdP (no SP metadata yet: the interop fleet adds it)."""
    d = common.make_dir(os.path.join(workdir, "interop", "pysaml2-idp"))
    return p2lib.Pysaml2IdP(d, sso_url="http://127.0.0.1:9/pysaml2-idp/sso")


@pytest.fixture(scope="module")
def interop_fleet(request, workdir, module_so, store, sp_config, p2idp, p2lib):
    """Three replicas + balancer trusting idp1, idp2 and the pysaml2 IdP;
    stopped at the end of the module (finalizer, by PID)."""
    sp = dict(sp_config)
    sp["idp_metadata"] = list(sp_config["idp_metadata"]) + [p2idp.metadata_path]
    f = Fleet(os.path.join(workdir, "interop", "fleet-" + store.name), module=module_so,
              store_url=store.url, sp=sp, server_extra=store.server_extra,
              location_extra=ENV_HEADERS)
    request.addfinalizer(f.stop)
    offsets = {h: h.log_size() for h in f.instances}
    try:
        f.start()
    except HarnessError as e:
        pytest.fail("the interop fleet did not start:\n%s" % e, pytrace=False)
    bad = {h.name: bad_log_lines(h._log_since(offsets[h]).splitlines()) for h in f.instances}
    bad = {k: v for k, v in bad.items() if v}
    if bad:
        pytest.fail("unexpected error-log lines at interop fleet start-up:\n%s" % bad,
                    pytrace=False)
    # pysaml2 learns our SP from the metadata the module serves.
    r = get(f.public + httpd_fleet.ENDPOINT + "/metadata")
    assert r.status_code == 200, (r.status_code, r.text[:300])
    f.sp_metadata = r.text
    p2idp.add_sp_metadata(r.text)
    # Another SP, at the same ACS URL: pysaml2 mints for it (audience test).
    p2idp.add_sp_metadata(p2lib.sp_metadata(OTHER_SP_ENTITY_ID, f.acs_url))
    return f


@pytest.fixture
def ifleet(interop_fleet, store):
    """The interop fleet with an empty, healthy store and fresh log marks."""
    store.heal()
    if not all(h.running() for h in interop_fleet.instances):
        pytest.fail("an interop fleet instance is not running", pytrace=False)
    interop_fleet.mark_logs()
    yield interop_fleet
    store.heal()


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------

def mint(p2idp, fleet, **kw):
    """(base64, response_info) of a pysaml2 response for the fleet's SP."""
    from pysaml2_idp import response_info
    b64 = p2idp.mint(fleet.entity_id, fleet.acs_url, **kw)
    return b64, response_info(b64)


def log_lines(fleet, tag):
    return [l for lines in fleet.new_log_lines().values() for l in lines if tag in l]


def location_path(resp, fleet):
    loc = resp.headers.get("Location")
    assert loc, "no Location header"
    u = urllib.parse.urlsplit(loc)
    if u.scheme or u.netloc:
        assert "%s://%s" % (u.scheme, u.netloc) == fleet.public, "off-site Location %r" % loc
    return u.path + ("?" + u.query if u.query else "")


def assert_refused(fleet, store, b64, check, targets=None):
    """POST b64 to the balancer and to replica1: 400 each, no cookie, nothing
    claimed, no session; each refusal logged with check=<check>."""
    targets = targets or [("balancer", fleet.public),
                          (fleet.replicas[0].name, fleet.replicas[0].base_url)]
    for name, base in targets:
        r = post_acs(base, b64, relay_state=PAGE)
        assert r.status_code == 400, (name, r.status_code, r.text[:300])
        assert session_cookie(r)[0] is None, (name, set_cookie_headers(r))
    assert store.claim_keys() == [] and store.session_keys() == []
    lines = log_lines(fleet, TAGS["check_refused"])
    assert len(lines) == len(targets), lines
    assert all("check=%s:" % check in l for l in lines), (check, lines)


def lasso_authn_request(fleet, sp_keys, idp, relay_state=None, sign=True):
    """An HTTP-Redirect AuthnRequest from our SP to the pysaml2 IdP, built
    by Lasso (the library the module uses) from the SP metadata the module
    serves and the SP key: (redirect URL, request ID)."""
    import lasso
    key, cert = sp_keys
    with open(key) as fk, open(cert) as fc:
        server = lasso.Server.newFromBuffers(fleet.sp_metadata, fk.read(), None, fc.read())
    server.signatureMethod = lasso.SIGNATURE_METHOD_RSA_SHA256
    server.addProviderFromBuffer(lasso.PROVIDER_ROLE_IDP, idp.metadata)
    login = lasso.Login(server)
    login.initAuthnRequest(idp.entity_id, lasso.HTTP_METHOD_REDIRECT)
    login.request.protocolBinding = lasso.SAML2_METADATA_BINDING_POST
    login.request.assertionConsumerServiceURL = fleet.acs_url
    login.setSignatureHint(lasso.PROFILE_SIGNATURE_HINT_FORCE if sign
                           else lasso.PROFILE_SIGNATURE_HINT_FORBID)
    if relay_state is not None:
        login.msgRelayState = relay_state
    login.buildAuthnRequestMsg()
    return login.msgUrl, login.request.id


SIGNING = {"assertion": dict(sign_assertion=True, sign_response=False),
           "response": dict(sign_assertion=False, sign_response=True),
           "both": dict(sign_assertion=True, sign_response=True)}


# --------------------------------------------------------------------------
# tests
# --------------------------------------------------------------------------

def test_pysaml2_idp_metadata_and_our_sp_metadata(ifleet, p2idp):
    """Each side reads the other's metadata: the module loaded pysaml2's
    (the fleet started with it), pysaml2 finds our public ACS in ours."""
    from saml2 import BINDING_HTTP_POST
    md = p2idp.server.metadata
    acs = md.assertion_consumer_service(ifleet.entity_id, BINDING_HTTP_POST)
    assert [a["location"] for a in acs] == [ifleet.acs_url]
    assert md.certs(ifleet.entity_id, "spsso", "signing")
    with open(p2idp.metadata_path) as f:
        text = f.read()
    assert p2idp.entity_id in text and "IDPSSODescriptor" in text
    assert "HTTP-Redirect" in text and "X509Certificate" in text


@pytest.mark.parametrize("signing", sorted(SIGNING))
def test_pysaml2_response_signs_in_everywhere(ifleet, store, p2idp, signing):
    b64, info = mint(p2idp, ifleet, name_id="alice", attributes=ATTRS, **SIGNING[signing])
    assert info["assertion_signed"] == SIGNING[signing]["sign_assertion"]
    assert info["response_signed"] == SIGNING[signing]["sign_response"]
    assert info["issuer"] == p2idp.entity_id and info["in_response_to"] is None

    t0 = time.time()
    r = post_acs(ifleet.public, b64, relay_state=PAGE)
    assert r.status_code == 303, (r.status_code, r.text[:500], log_lines(ifleet, "RSP"))
    assert location_path(r, ifleet) == PAGE
    cookies = [h for h in set_cookie_headers(r) if h.startswith(COOKIE_NAME + "=")]
    assert len(cookies) == 1, cookies
    cookie, _ = session_cookie(r)
    assert cookie
    # Claimed under (pysaml2's issuer, pysaml2's assertion ID), kept for the
    # assertion's window + the 60 s default skew (the window is pysaml2's
    # NotOnOrAfter: now + 300 s).
    key = claim_key(p2idp.entity_id, info["assertion_id"])
    assert store.claim_keys() == [key]
    assert len(store.session_keys()) == 1
    expected_ttl = window_end_of(b64) - t0 + 60
    ttl = store.ttl_seconds(key)
    assert expected_ttl - 10 <= ttl <= expected_ttl + 1 + store.expiry_margin_s, (ttl, expected_ttl)
    assert len(log_lines(ifleet, TAGS["sign_in_accepted"])) == 1

    # The session works on every replica, each asked directly, with the
    # NameID and the attributes pysaml2 put in.
    for h in ifleet.replicas:
        g = get(h.base_url + PAGE, cookie=cookie)
        assert g.status_code == 200, (h.name, g.status_code)
        assert g.headers.get("X-RSP-Replica") == h.name
        assert g.headers.get("X-RSP-User") == p2user(ifleet, p2idp, "alice"), h.name
        assert g.headers.get("X-RSP-Auth-Type") == "ReplaySP", h.name
        assert g.headers.get("X-NameID") == "alice", h.name
        assert g.headers.get("X-IdP") == p2idp.entity_id, h.name
        assert g.headers.get("X-Mail") == "alice@example.org", h.name
        assert g.headers.get("X-Group") == "staff", h.name
        assert (g.headers.get("X-Group0"), g.headers.get("X-Group1"),
                g.headers.get("X-GroupN")) == ("staff", "admins", "2"), h.name
        assert g.headers.get("X-Oid") == "alice@example.org", h.name
        assert g.headers.get("X-SessionIndex"), h.name      # pysaml2 always sends one
    # ... and without the cookie there is no session (401; with SP-initiated
    # login, a 302 to an IdP).
    g = get(ifleet.replicas[0].base_url + PAGE)
    assert g.status_code == 302, g.status_code
    assert not g.headers.get("X-RSP-User")


@pytest.mark.expect_log("replay_refused")
@pytest.mark.parametrize("signing", ["assertion", "response"])
def test_pysaml2_response_replayed_on_every_replica_is_refused(ifleet, store, p2idp, signing):
    b64, info = mint(p2idp, ifleet, name_id="bob", **SIGNING[signing])
    r = post_acs(ifleet.public, b64, relay_state=PAGE)
    assert r.status_code == 303, (r.status_code, r.text[:500], log_lines(ifleet, "RSP"))
    first, _ = session_cookie(r)
    assert first
    key = claim_key(p2idp.entity_id, info["assertion_id"])
    # The same response, by someone without the winner's cookie, on each
    # replica and through the balancer: 403, no cookie, no new session.
    targets = [(h.name, h.base_url) for h in ifleet.replicas] + [("balancer", ifleet.public)]
    for name, base in targets:
        rr = post_acs(base, b64, relay_state=PAGE)
        assert rr.status_code == 403, (name, rr.status_code, rr.text[:300])
        assert session_cookie(rr)[0] is None, (name, set_cookie_headers(rr))
    assert store.claim_keys() == [key]
    assert len(store.session_keys()) == 1
    assert len(log_lines(ifleet, TAGS["replay_refused"])) == len(targets)
    assert len(log_lines(ifleet, TAGS["sign_in_accepted"])) == 1
    # The first session is still good.
    g = get(ifleet.replicas[-1].base_url + PAGE, cookie=first)
    assert g.status_code == 200 and g.headers.get("X-RSP-User") == p2user(ifleet, p2idp, "bob")


BROKEN = [
    # (case, signing, element whose text gets one character changed)
    ("assertion-signed-nameid", "assertion", "NameID"),
    ("assertion-signed-attribute", "assertion", "AttributeValue"),
    ("response-signed-nameid", "response", "NameID"),
    ("response-signed-audience", "response", "Audience"),
    ("both-signed-nameid", "both", "NameID"),
]


@pytest.mark.expect_log("check_refused")
@pytest.mark.parametrize("case,signing,where", BROKEN, ids=[b[0] for b in BROKEN])
def test_pysaml2_response_with_a_broken_signature_is_refused(ifleet, store, p2idp, p2lib,
                                                              case, signing, where):
    b64, info = mint(p2idp, ifleet, name_id="carol", attributes={"mail": ["carol@example.org"]},
                     **SIGNING[signing])
    bad = p2lib.tamper(b64, where)
    a, b = base64.b64decode(b64), base64.b64decode(bad)
    assert len(a) == len(b) and sum(x != y for x, y in zip(a, b)) == 1
    assert_refused(ifleet, store, bad, "signature")
    # The untouched response was never claimed: it still signs in, so the
    # refusal was the one changed character, not pysaml2's XML as such.
    r = post_acs(ifleet.public, b64, relay_state=PAGE)
    assert r.status_code == 303, (r.status_code, r.text[:300])
    assert store.claim_keys() == [claim_key(p2idp.entity_id, info["assertion_id"])]


@pytest.mark.expect_log("check_refused")
def test_pysaml2_response_without_any_signature_is_refused(ifleet, store, p2idp):
    b64, info = mint(p2idp, ifleet, sign_assertion=False, sign_response=False)
    assert not info["assertion_signed"] and not info["response_signed"]
    assert_refused(ifleet, store, b64, "signature")


@pytest.mark.expect_log("check_refused")
def test_pysaml2_response_for_another_audience_is_refused(ifleet, store, p2idp):
    """pysaml2 mints, correctly signed, for another SP (its Audience), but
    the response is posted to our ACS (Destination and Recipient are ours)."""
    from pysaml2_idp import response_info
    for signing in ("assertion", "response"):
        b64 = p2idp.mint(OTHER_SP_ENTITY_ID, ifleet.acs_url, **SIGNING[signing])
        info = response_info(b64)
        assert info["audiences"] == [OTHER_SP_ENTITY_ID]
        assert info["destination"] == info["recipient"] == ifleet.acs_url
        ifleet.mark_logs()
        assert_refused(ifleet, store, b64, "audience")


@pytest.mark.expect_log("check_refused")
@pytest.mark.parametrize("signed_request", [True, False], ids=["signed", "unsigned"])
def test_pysaml2_answers_an_authn_request_the_module_never_sent(ifleet, store, p2idp,
                                                                 sp_keys, signed_request):
    """A request this fleet did not send: Lasso builds an HTTP-Redirect
    AuthnRequest as our SP would (our served metadata and our key; a
    RelayState that Lasso and Python percent-encode differently), pysaml2
    parses it (and checks its signature) and answers it with InResponseTo =
    its ID at our ACS; the module refuses that answer: 400, no cookie, no
    session, and nothing claimed (check=request-unknown: the request is
    read before the claim), so that a second post is refused the same way,
    not as a replay."""
    url, req_id = lasso_authn_request(ifleet, sp_keys, p2idp, relay_state="/app/page.html?a=b c",
                                      sign=signed_request)
    assert url.startswith(p2idp.sso_url + "?")
    assert ("Signature=" in url) == signed_request
    req = p2idp.parse_redirect(url)
    assert req.message.id == req_id
    assert (req.redirect_signature_verified is not None) == signed_request
    rid, b64, acs = p2idp.answer_redirect(url, name_id="dave")
    from pysaml2_idp import response_info
    info = response_info(b64)
    assert rid == req_id and acs == ifleet.acs_url
    assert info["in_response_to"] == req_id and info["scd_in_response_to"] == req_id
    assert info["audiences"] == [ifleet.entity_id]
    key = claim_key(p2idp.entity_id, info["assertion_id"])
    r = post_acs(ifleet.public, b64, relay_state="/app/page.html?a=b c")
    assert r.status_code == 400, (r.status_code, r.text[:300])
    assert session_cookie(r)[0] is None
    lines = log_lines(ifleet, TAGS["check_refused"])
    assert len(lines) == 1 and "check=request-unknown:" in lines[0], lines
    assert store.claim_keys() == [] and store.session_keys() == [], key
    r = post_acs(ifleet.replicas[0].base_url, b64, relay_state="/app/page.html?a=b c")
    assert r.status_code == 400 and session_cookie(r)[0] is None
    assert len(log_lines(ifleet, TAGS["check_refused"])) == 2
    assert store.claim_keys() == [] and store.session_keys() == []
    # A changed signed field (RelayState) no longer verifies at pysaml2.
    if signed_request:
        bad = url.replace("RelayState=", "RelayState=x", 1)
        with pytest.raises(ValueError):
            p2idp.parse_redirect(bad)


@pytest.mark.expect_log("replay_refused")
def test_pysaml2_answers_the_modules_own_authn_request(ifleet, store, p2idp):
    """SP-initiated sign-in end to end: <path>/login through the balancer
    redirects to the pysaml2 IdP with the module's AuthnRequest (Lasso);
    pysaml2 parses it (checks its signature if any), answers it at the ACS
    the request names; the answer, posted with the RelayState the module
    sent, signs in (303 to ReturnTo), on every replica; posted again, 403."""
    r = get(ifleet.public + httpd_fleet.ENDPOINT + "/login?" + urllib.parse.urlencode(
        {"IdP": p2idp.entity_id, "ReturnTo": PAGE}))
    assert r.status_code == 302, (r.status_code, r.text[:300])
    loc = r.headers.get("Location", "")
    assert loc.startswith(p2idp.sso_url + "?"), loc[:200]
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(loc).query)
    relay = http_client.relay_of(r)   # with the binding cookies
    req = p2idp.parse_redirect(loc)
    assert req.message.issuer.text.strip() == ifleet.entity_id
    assert (req.redirect_signature_verified is not None) == ("Signature" in q)
    rid, b64, acs = p2idp.answer_redirect(loc, name_id="erin",
                                          attributes={"mail": ["erin@example.org"]})
    assert rid == req.message.id and acs == ifleet.acs_url
    r = post_acs(ifleet.public, b64, relay_state=relay)
    assert r.status_code == 303, (r.status_code, r.text[:300], log_lines(ifleet, "RSP"))
    assert location_path(r, ifleet) == PAGE
    cookie, _ = session_cookie(r)
    assert cookie
    for h in ifleet.replicas:
        g = get(h.base_url + PAGE, cookie=cookie)
        assert g.status_code == 200, (h.name, g.status_code)
        assert g.headers.get("X-RSP-User") == p2user(ifleet, p2idp, "erin") and \
            g.headers.get("X-Mail") == "erin@example.org", h.name
    r = post_acs(ifleet.replicas[1].base_url, b64, relay_state=relay)
    assert r.status_code == 403 and session_cookie(r)[0] is None
    assert len(store.session_keys()) == 1


# --------------------------------------------------------------------------
# encrypted assertions made by pysaml2 (its own template, xmlsec1)
# --------------------------------------------------------------------------

ENCRYPTED_SHAPES = {"signed-response": dict(sign_assertion=False, sign_response=True),
                    "signed-assertion": dict(sign_assertion=True, sign_response=False)}


@pytest.mark.expect_log("replay_refused")
@pytest.mark.parametrize("shape", sorted(ENCRYPTED_SHAPES))
@pytest.mark.parametrize("data", ["aes128-gcm", "aes256-gcm", "aes128-cbc", "aes256-cbc"])
def test_pysaml2_encrypted_assertion_signs_in_once(ifleet, store, p2idp, sp_keys, data, shape):
    b64, info = mint(p2idp, ifleet, name_id="carol", attributes=ATTRS,
                     encrypt_cert=sp_keys[1], encrypt_data=data,
                     encrypt_key="rsa-oaep-mgf1p", **ENCRYPTED_SHAPES[shape])
    assert info["assertion_id"] is None and len(info["encrypted_assertions"]) == 1
    assert info["encrypted_assertions"][0]["data"].endswith("#" + data)
    r = post_acs(ifleet.public, b64, relay_state=PAGE)
    assert r.status_code == 303, (r.status_code, r.text[:500], log_lines(ifleet, "RSP"))
    cookie, _ = session_cookie(r)
    assert len(store.claim_keys()) == 1 and len(store.session_keys()) == 1
    g = get(ifleet.replicas[1].base_url + PAGE, cookie=cookie)
    assert g.status_code == 200 and g.headers.get("X-RSP-User") == p2user(ifleet, p2idp, "carol")
    assert g.headers.get("X-Mail") == "alice@example.org"
    for name, base in [(h.name, h.base_url) for h in ifleet.replicas] + [("balancer",
                                                                         ifleet.public)]:
        rr = post_acs(base, b64, relay_state=PAGE)
        assert rr.status_code == 403, (name, rr.status_code)
    assert len(store.claim_keys()) == 1 and len(store.session_keys()) == 1


@pytest.mark.expect_log("check_refused")
def test_pysaml2_default_encryption_tripledes_refused(ifleet, store, p2idp, sp_keys):
    """pysaml2 7.0.1 encrypts with tripledes-cbc unless told otherwise: not
    AES, refused before anything is decrypted."""
    b64, info = mint(p2idp, ifleet, encrypt_cert=sp_keys[1], encrypt_data="tripledes-cbc",
                     **ENCRYPTED_SHAPES["signed-response"])
    assert info["encrypted_assertions"][0]["data"].endswith("#tripledes-cbc")
    assert_refused(ifleet, store, b64, "encryption-algorithm")


@pytest.mark.expect_log("check_refused")
def test_pysaml2_rsa_1_5_refused(ifleet, store, p2idp, sp_keys):
    b64, _ = mint(p2idp, ifleet, encrypt_cert=sp_keys[1], encrypt_data="aes128-cbc",
                  encrypt_key="rsa-1_5", **ENCRYPTED_SHAPES["signed-response"])
    assert_refused(ifleet, store, b64, "encryption-algorithm")
