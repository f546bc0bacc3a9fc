"""Logout across the fleet: <path>/logout ends the session in the shared
store (refused on every replica afterwards) and sends the IdP a signed
LogoutRequest; the IdP's LogoutResponse at <path>/slo leads back; an IdP's
own LogoutRequest ends the sessions it names (found through the logout
index in the store) and is answered with a signed LogoutResponse."""

import base64
import os
import re
import time
import urllib.parse

import pytest

import http_client
import httpd_fleet
from http_client import get, post_acs, session_cookie
from idp_tools import IDP1_ENTITY_ID
from stores import KEY_PREFIX, session_key

PAGE = "/app/page.html"


def sp_metadata(fleet):
    r = get(fleet.public + httpd_fleet.ENDPOINT + "/metadata")
    assert r.status_code == 200
    return r.text


def sign_in(fleet, saml, idp="idp1", name_id="alice", session_index=None):
    m = saml.mint(idp, name_id=name_id, session_index=session_index)
    r = post_acs(fleet.public, m.b64, relay_state=PAGE)
    assert r.status_code == 303, r.text[:300]
    cookie, _ = session_cookie(r)
    assert cookie
    return cookie


def signed_in_everywhere(fleet, cookie, user, idp=IDP1_ENTITY_ID):
    """On every replica and the balancer, cookie is user's session (a NameID
    from idp: REMOTE_USER qualified, the fleet trusting two IdPs)."""
    want = httpd_fleet.qualified_user(idp, fleet.entity_id, user)
    for name, base in fleet.targets():
        g = get(base + PAGE, cookie=cookie)
        if g.status_code != 200 or g.headers.get("X-RSP-User") != want:
            return False
    return True


def refused_everywhere(fleet, saml, cookie):
    """Every replica sends the browser to the IdP again (302 to its SSO)."""
    sso = saml.idps["idp1"].sso_url
    for name, base in fleet.targets():
        g = get(base + PAGE, cookie=cookie)
        if g.status_code != 302 or not g.headers["Location"].startswith(sso + "?"):
            return False
    return True


def local(url, base):
    """A URL of the fleet's public origin, sent to base instead."""
    u = urllib.parse.urlsplit(url)
    return base + u.path + ("?" + u.query if u.query else "")


def expired_cookie(resp, name=http_client.COOKIE_NAME):
    for h in resp.raw.headers.getlist("Set-Cookie"):
        if h.startswith(name + "=;") and "Max-Age=0" in h:
            return True
    return False


# --------------------------------------------------------------------------
# SP-initiated
# --------------------------------------------------------------------------

@pytest.mark.expect_log("RSP01004")
def test_logout_on_one_replica_ends_the_session_everywhere_and_slo_round_trip(
        fleet, saml, store):
    idp = saml.idps["idp1"]
    cookie = sign_in(fleet, saml, session_index="SI-one")
    other = sign_in(fleet, saml, name_id="bob")
    assert signed_in_everywhere(fleet, cookie, "alice")
    r1, r2, r3 = fleet.replicas

    r = get(r1.base_url + httpd_fleet.ENDPOINT + "/logout?ReturnTo=" +
            urllib.parse.quote(PAGE + "?bye=1", safe=""), cookie=cookie)
    assert r.status_code == 302
    assert expired_cookie(r)
    loc = r.headers["Location"]
    assert loc.startswith(idp.slo_url + "?"), loc[:200]
    assert not store.exists(session_key(cookie))
    assert refused_everywhere(fleet, saml, cookie)
    assert signed_in_everywhere(fleet, other, "bob")      # only that session
    assert fleet.count_in_logs("RSP01033") == 1
    assert fleet.count_in_logs("slo=sent") == 1

    # the IdP checks our signed request and answers; the answer lands on
    # another replica and leads back to ReturnTo
    back, info = idp.answer_logout_request(sp_metadata(fleet), loc)
    assert info["name_id"] == "alice" and info["session_indexes"] == ["SI-one"]
    assert info["issuer"] == fleet.entity_id
    assert info["sig_alg"].endswith("rsa-sha256")
    done = get(local(back, r2.base_url))
    assert done.status_code == 302, done.text[:300]
    assert done.headers["Location"] == PAGE + "?bye=1"
    # the same LogoutResponse again: its request is used up
    again = get(local(back, r3.base_url))
    assert again.status_code == 400
    assert fleet.count_in_logs("check=request-used") == 1


def test_logout_without_session_goes_back(fleet, store):
    r = get(fleet.public + httpd_fleet.ENDPOINT + "/logout?ReturnTo=%2Fx")
    assert r.status_code == 302 and r.headers["Location"] == "/x"
    assert expired_cookie(r)
    r = get(fleet.public + httpd_fleet.ENDPOINT + "/logout")
    assert r.status_code == 302 and r.headers["Location"] == "/"


@pytest.mark.expect_log("RSP01031")
@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/",
                                    "/\\evil.example", "javascript:alert(1)"])
def test_logout_return_to_open_redirect_refused_session_kept(fleet, saml, store, target):
    cookie = sign_in(fleet, saml)
    r = get(fleet.public + httpd_fleet.ENDPOINT + "/logout?ReturnTo=" +
            urllib.parse.quote(target, safe=""), cookie=cookie)
    assert r.status_code == 400 and "Location" not in r.headers
    assert store.exists(session_key(cookie))


@pytest.mark.expect_log("RSP01004")
def test_logout_response_checks(fleet, saml, store):
    """A LogoutResponse must be signed, answer a pending logout of this
    fleet, and carry its RelayState; a non-Success status is logged."""
    idp = saml.idps["idp1"]
    md = sp_metadata(fleet)

    def start():
        cookie = sign_in(fleet, saml)
        r = get(fleet.public + httpd_fleet.ENDPOINT + "/logout?ReturnTo=%2Fdone", cookie=cookie)
        assert r.status_code == 302
        return r.headers["Location"]

    # tampered: the signature no longer verifies
    back, _ = idp.answer_logout_request(md, start())
    r = get(local(idp.tamper_redirect(back), fleet.public))
    assert r.status_code == 400
    assert fleet.count_in_logs("check=signature") == 1
    # unsigned
    back, _ = idp.answer_logout_request(md, start(), sign=False)
    assert get(local(back, fleet.public)).status_code == 400
    # the pending logout expired (gone from the store): unknown
    loc = start()
    back, _ = idp.answer_logout_request(md, loc)
    for k in store.keys(KEY_PREFIX + "l:"):
        store.delete(k)
    assert get(local(back, fleet.public)).status_code == 400
    assert fleet.count_in_logs("check=request-unknown") == 1


@pytest.mark.expect_log("RSP01037")
def test_logout_response_not_success_is_logged(fleet, saml, store):
    idp = saml.idps["idp1"]
    cookie = sign_in(fleet, saml)
    r = get(fleet.public + httpd_fleet.ENDPOINT + "/logout?ReturnTo=%2Fdone", cookie=cookie)
    back, _ = idp.answer_logout_request(sp_metadata(fleet), r.headers["Location"],
                                        status=saml.testidp.STATUS_RESPONDER)
    done = get(local(back, fleet.public))
    assert done.status_code == 302 and done.headers["Location"] == "/done"
    assert fleet.count_in_logs("RSP01037") == 1
    assert refused_everywhere(fleet, saml, cookie)


def test_logout_idp_without_slo_goes_straight_back(fleet, saml, store, workdir):
    """An IdP whose metadata has no SingleLogoutService: local logout only."""
    idp2 = saml.idps["idp2"]
    md = re.sub(r"\s*<md:SingleLogoutService[^>]*/>", "", idp2.metadata)
    assert "SingleLogoutService" not in md
    path = os.path.join(workdir, "idp2-no-slo.xml")
    with open(path, "w") as f:
        f.write(md)
    sp = dict(fleet.sp, idp_metadata=[saml.idps["idp1"].metadata_path, path])
    fleet.restart_replicas(sp=sp)
    cookie = sign_in(fleet, saml, idp="idp2")
    r = get(fleet.public + httpd_fleet.ENDPOINT + "/logout?ReturnTo=%2Fdone", cookie=cookie)
    assert r.status_code == 302 and r.headers["Location"] == "/done"
    assert fleet.count_in_logs("slo=none") == 1
    assert not store.exists(session_key(cookie))


@pytest.mark.backends("redis")
@pytest.mark.expect_log("RSP01034")
def test_logout_store_down_fails_closed(fleet, saml, store):
    cookie = sign_in(fleet, saml)
    store.stop_all()
    try:
        r = get(fleet.public + httpd_fleet.ENDPOINT + "/logout", cookie=cookie)
        assert r.status_code == 503 and r.headers.get("Retry-After")
    finally:
        store.start_all()


# --------------------------------------------------------------------------
# IdP-initiated
# --------------------------------------------------------------------------

def test_idp_initiated_logout_ends_the_named_sessions_on_every_replica(fleet, saml, store):
    idp = saml.idps["idp1"]
    md = sp_metadata(fleet)
    a1 = sign_in(fleet, saml, session_index="SI-A")
    a2 = sign_in(fleet, saml, session_index="SI-A")     # same IdP session, 2nd browser
    a3 = sign_in(fleet, saml, session_index="SI-B")
    bob = sign_in(fleet, saml, name_id="bob", session_index="SI-A")
    r1, r2, r3 = fleet.replicas

    url, rid = idp.logout_request_url(md, "alice", session_index="SI-A", relay_state="rs-1")
    r = get(local(url, r3.base_url))
    assert r.status_code == 302, r.text[:300]
    info = idp.process_logout_response(md, r.headers["Location"])
    assert info["in_response_to"] == rid
    assert info["status"] == saml.testidp.STATUS_SUCCESS
    assert info["relay_state"] == "rs-1"
    assert info["issuer"] == fleet.entity_id
    assert refused_everywhere(fleet, saml, a1) and refused_everywhere(fleet, saml, a2)
    assert signed_in_everywhere(fleet, a3, "alice")
    assert signed_in_everywhere(fleet, bob, "bob")
    assert fleet.count_in_logs("sessions-ended=2") == 1

    # no SessionIndex: every session of the NameID
    url, rid = idp.logout_request_url(md, "alice")
    r = get(local(url, r1.base_url))
    assert r.status_code == 302
    assert idp.process_logout_response(md, r.headers["Location"])["status"] == \
        saml.testidp.STATUS_SUCCESS
    assert refused_everywhere(fleet, saml, a3)
    assert signed_in_everywhere(fleet, bob, "bob")
    assert fleet.count_in_logs("sessions-ended=1") == 1


# How Lasso and Shibboleth IdPs name the user in a LogoutRequest: the
# NameID with its qualifiers, or (Shibboleth IdP's default once the SP
# publishes an encryption key) an EncryptedID.
NAMED_AS = {
    "qualified": dict(qualifiers={"NameQualifier": "https://idp1.example/",
                                  "SPNameQualifier": "https://sp.example/"}),
    "sp-provided-id": dict(qualifiers={"NameQualifier": "https://idp1.example/",
                                       "SPProvidedID": "alice-at-sp"}),
    "encrypted": dict(encrypt_name_id=True),
    "encrypted-qualified": dict(encrypt_name_id=True,
                                qualifiers={"NameQualifier": "https://idp1.example/"}),
    # encrypted as Sweden Connect (OAEP with SHA-256) and Keycloak
    # (xmlenc11#rsa-oaep with MGF1-SHA256) do, which Debian 12's xmlsec1
    # cannot unwrap: the module decrypts it itself
    "encrypted-mgf1p-sha256": dict(encrypt_name_id=dict(
        key="rsa-oaep-mgf1p", digest="sha256", data="aes128-gcm"),
        qualifiers={"NameQualifier": "https://idp1.example/"}),
    "encrypted-oaep-sha256-mgf1sha256": dict(encrypt_name_id=dict(
        key="rsa-oaep", digest="sha256", mgf="sha256", data="aes256-cbc")),
}


def named_as_kw(named_as, testidp, sp_keys):
    """NAMED_AS[named_as] for logout_request_url: an EncryptedID's
    algorithms (a dict) made an Encryption for the SP's certificate."""
    kw = dict(NAMED_AS.get(named_as, {}))
    if isinstance(kw.get("encrypt_name_id"), dict):
        kw["encrypt_name_id"] = testidp.Encryption(
            sp_keys[1], engine="cryptography", **kw["encrypt_name_id"])
    return kw


@pytest.mark.parametrize("named_as", list(NAMED_AS))
def test_idp_logout_request_names_the_user_as_idps_do(fleet, saml, store, named_as,
                                                      testidp, sp_keys):
    """The sessions the LogoutRequest names end on every replica, other
    users' stay, and the IdP gets a signed LogoutResponse (Success) that
    answers its request."""
    idp = saml.idps["idp1"]
    md = sp_metadata(fleet)
    a1 = sign_in(fleet, saml, session_index="SI-Q")
    a2 = sign_in(fleet, saml, session_index="SI-R")
    bob = sign_in(fleet, saml, name_id="bob", session_index="SI-Q")
    url, rid = idp.logout_request_url(md, "alice", session_index="SI-Q",
                                      relay_state="rs-q",
                                      **named_as_kw(named_as, testidp, sp_keys))
    r = get(local(url, fleet.replicas[1].base_url))
    assert r.status_code == 302, (r.status_code, r.text[:300])
    info = idp.process_logout_response(md, r.headers["Location"])
    assert info["in_response_to"] == rid
    assert info["status"] == saml.testidp.STATUS_SUCCESS
    assert info["relay_state"] == "rs-q"
    assert refused_everywhere(fleet, saml, a1)
    assert signed_in_everywhere(fleet, a2, "alice")
    assert signed_in_everywhere(fleet, bob, "bob")
    assert fleet.count_in_logs("sessions-ended=1") == 1


def post_form(url, fields, base):
    """The browser posting an IdP's (or our) auto-submitted form to url,
    sent to base."""
    import requests
    return requests.post(local(url, base), data=fields, allow_redirects=False,
                         timeout=30)


def auto_post(page):
    """(action, {name: value}) of the form of an HTTP-POST binding page."""
    import html as html_mod
    action = re.search(r'<form method="post" action="([^"]*)"', page).group(1)
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page))
    return html_mod.unescape(action), {k: html_mod.unescape(v) for k, v in fields.items()}


@pytest.mark.expect_log("RSP01035")
@pytest.mark.parametrize("named_as", ["plain", "encrypted-qualified",
                                      "encrypted-mgf1p-sha256",
                                      "encrypted-oaep-sha256-mgf1sha256"])
def test_idp_logout_request_over_http_post(fleet, saml, store, named_as, testidp, sp_keys):
    """Shibboleth IdP and SimpleSAMLphp send LogoutRequests over HTTP-POST,
    signed inside: the named sessions end on every replica and the signed
    LogoutResponse goes back over HTTP-Redirect (the IdP has it), with the
    form's RelayState."""
    idp = saml.idps["idp1"]
    md = sp_metadata(fleet)
    a1 = sign_in(fleet, saml, session_index="SI-P")
    bob = sign_in(fleet, saml, name_id="bob", session_index="SI-P")
    url, fields, rid = idp.logout_request_post(
        md, "alice", session_index="SI-P", relay_state="rs-post",
        **named_as_kw(named_as, testidp, sp_keys))
    assert url == fleet.public + httpd_fleet.ENDPOINT + "/slo"
    r = post_form(url, fields, fleet.replicas[2].base_url)
    assert r.status_code == 302, (r.status_code, r.text[:300])
    info = idp.process_logout_response(md, r.headers["Location"])
    assert info["in_response_to"] == rid
    assert info["status"] == saml.testidp.STATUS_SUCCESS
    assert info["relay_state"] == "rs-post"
    assert refused_everywhere(fleet, saml, a1)
    assert signed_in_everywhere(fleet, bob, "bob")
    assert fleet.count_in_logs("binding=post answer=redirect") == 1
    # the same request again: taken once, fleet-wide
    assert post_form(url, fields, fleet.replicas[0].base_url).status_code == 400


@pytest.mark.expect_log("RSP01035")
def test_idp_logout_request_over_http_post_must_be_signed_by_the_idp(fleet, saml, store):
    idp = saml.idps["idp1"]
    md = sp_metadata(fleet)
    cookie = sign_in(fleet, saml, session_index="SI-PX")
    url, fields, _ = idp.logout_request_post(md, "alice", session_index="SI-PX")
    xml = base64.b64decode(fields["SAMLRequest"]).decode()
    tampered = dict(fields, SAMLRequest=base64.b64encode(
        xml.replace(">alice<", ">bob<").encode()).decode())
    assert tampered != fields
    cases = [
        (tampered, "signature"),
        (idp.logout_request_post(md, "alice", session_index="SI-PX", sign=False)[1],
         "signature"),
        (saml.idps["rogue"].logout_request_post(md, "alice", session_index="SI-PX")[1],
         "signature"),
        (saml.idps["unknown"].logout_request_post(md, "alice", session_index="SI-PX")[1],
         "issuer"),
        (dict(fields, SAMLRequest="%%% not base64"), "binding"),
    ]
    for bad, check in cases:
        before = fleet.count_in_logs("check=%s:" % check)
        r = post_form(url, bad, fleet.public)
        assert r.status_code == 400, (check, r.status_code)
        assert fleet.count_in_logs("check=%s:" % check) == before + 1, check
    # a message in the query beside the form, and a form that is not one
    both = fleet.public + httpd_fleet.ENDPOINT + "/slo?SAMLRequest=x"
    assert post_form(both, fields, fleet.public).status_code == 400
    import requests
    r = requests.post(fleet.public + httpd_fleet.ENDPOINT + "/slo",
                      data=fields["SAMLRequest"], timeout=30,
                      headers={"Content-Type": "text/plain"})
    assert r.status_code == 400
    assert fleet.count_in_logs("RSP01035") == len(cases) + 2
    assert signed_in_everywhere(fleet, cookie, "alice")


def test_logout_over_http_post_to_an_idp_without_redirect(fleet, saml, store, workdir):
    """An IdP whose only SingleLogoutService is HTTP-POST: its LogoutRequest
    is answered by a page whose form posts the signed LogoutResponse to it;
    and our own LogoutResponse from an IdP over HTTP-POST leads back."""
    idp2 = saml.idps["idp2"]
    md_post = idp2.metadata.replace(
        "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect\" Location=\"%s"
        % idp2.slo_url,
        "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST\" Location=\"%s"
        % idp2.slo_url)
    assert md_post != idp2.metadata
    path = os.path.join(workdir, "idp2-post-slo.xml")
    with open(path, "w") as f:
        f.write(md_post)
    fleet.restart_replicas(sp=dict(fleet.sp, idp_metadata=[
        saml.idps["idp1"].metadata_path, path]))
    md = sp_metadata(fleet)
    cookie = sign_in(fleet, saml, idp="idp2", session_index="SI-2")
    url, fields, rid = idp2.logout_request_post(md, "alice", session_index="SI-2",
                                                relay_state="rs-2")
    r = post_form(url, fields, fleet.replicas[1].base_url)
    assert r.status_code == 200, (r.status_code, r.text[:300])
    assert r.headers["Content-Type"].startswith("text/html")
    assert r.headers.get("Cache-Control") == "no-store"
    action, answer = auto_post(r.text)
    assert action == idp2.slo_url
    assert answer["RelayState"] == "rs-2"
    info = idp2.process_logout_response_post(md, answer["SAMLResponse"])
    assert info["in_response_to"] == rid
    assert info["status"] == saml.testidp.STATUS_SUCCESS
    assert info["destination"] == idp2.slo_url
    assert refused_everywhere(fleet, saml, cookie)
    assert fleet.count_in_logs("binding=post answer=post") == 1
    # a forged answer (its signature broken) would not verify at the IdP
    forged = base64.b64encode(base64.b64decode(answer["SAMLResponse"]).replace(
        b"urn:oasis:names:tc:SAML:2.0:status:Success",
        b"urn:oasis:names:tc:SAML:2.0:status:Requester")).decode()
    with pytest.raises(saml.testidp.SignatureError):
        idp2.process_logout_response_post(md, forged)


@pytest.mark.expect_log("RSP01004")
def test_sp_initiated_logout_answered_over_http_post(fleet, saml, store):
    """The IdP answers our LogoutRequest with a LogoutResponse over
    HTTP-POST (signed inside): it leads back to ReturnTo, once."""
    idp = saml.idps["idp1"]
    cookie = sign_in(fleet, saml, session_index="SI-AP")
    r = get(fleet.public + httpd_fleet.ENDPOINT + "/logout?ReturnTo=%2Fdone-post",
            cookie=cookie)
    assert r.status_code == 302
    url, fields, info = idp.answer_logout_request_post(sp_metadata(fleet),
                                                       r.headers["Location"])
    assert info["name_id"] == "alice"
    done = post_form(url, fields, fleet.replicas[2].base_url)
    assert done.status_code == 302, done.text[:300]
    assert done.headers["Location"] == "/done-post"
    again = post_form(url, fields, fleet.replicas[0].base_url)
    assert again.status_code == 400
    assert fleet.count_in_logs("check=request-used") == 1


@pytest.mark.expect_log("RSP01035")
def test_idp_logout_request_must_be_signed_by_the_idp(fleet, saml, store):
    idp = saml.idps["idp1"]
    md = sp_metadata(fleet)
    cookie = sign_in(fleet, saml, session_index="SI-X")
    url, _ = idp.logout_request_url(md, "alice", session_index="SI-X")
    for bad in (idp.tamper_redirect(url),
                idp.logout_request_url(md, "alice", session_index="SI-X", sign=False)[0],
                saml.idps["rogue"].logout_request_url(md, "alice", session_index="SI-X")[0],
                saml.idps["unknown"].logout_request_url(md, "alice", session_index="SI-X")[0]):
        r = get(local(bad, fleet.public))
        assert r.status_code == 400, r.status_code
    assert fleet.count_in_logs("RSP01035") == 4
    assert signed_in_everywhere(fleet, cookie, "alice")
    # neither or both messages
    assert get(fleet.public + httpd_fleet.ENDPOINT + "/slo").status_code == 400
    assert fleet.count_in_logs("check=binding") == 1


def test_logout_of_a_session_without_session_index(fleet, saml, store):
    """An assertion without SessionIndex: the LogoutRequest names the NameID
    only, and the IdP's NameID-wide LogoutRequest finds the session."""
    idp = saml.idps["idp1"]
    md = sp_metadata(fleet)
    cookie = sign_in(fleet, saml, session_index="")
    r = get(fleet.public + httpd_fleet.ENDPOINT + "/logout", cookie=cookie)
    assert r.status_code == 302
    _, info = idp.answer_logout_request(md, r.headers["Location"])
    assert info["name_id"] == "alice" and info["session_indexes"] == []
    other = sign_in(fleet, saml, session_index="")
    url, _ = idp.logout_request_url(md, "alice")
    assert get(local(url, fleet.public)).status_code == 302
    assert refused_everywhere(fleet, saml, other)


def resign(url, key_path, alg):
    """url with its SigAlg/Signature replaced: signed with key_path by
    openssl over the raw SAMLRequest[&RelayState]&SigAlg octets."""
    import base64
    import subprocess
    algs = {"sha1": "http://www.w3.org/2000/09/xmldsig#rsa-sha1",
            "sha512": "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512"}
    base, query = url.split("?", 1)
    keep = [p for p in query.split("&") if not p.startswith(("SigAlg=", "Signature="))]
    signed = "&".join(keep + ["SigAlg=" + urllib.parse.quote(algs[alg], safe="")])
    sig = subprocess.run(["openssl", "dgst", "-" + alg, "-sign", key_path],
                         input=signed.encode(), capture_output=True, check=True,
                         timeout=30).stdout
    return "%s?%s&Signature=%s" % (base, signed,
                                   urllib.parse.quote(base64.b64encode(sig).decode(), safe=""))


@pytest.mark.expect_log("RSP01035")
def test_idp_logout_request_signature_rules(fleet, saml, store):
    """RSA-SHA1 is refused; RelayState is covered by the signature; a
    parameter given twice is refused; a re-signed RSA-SHA512 request (the
    positive control of the re-signing) is accepted."""
    idp = saml.idps["idp1"]
    md = sp_metadata(fleet)
    cookie = sign_in(fleet, saml, session_index="SI-R")
    url, _ = idp.logout_request_url(md, "alice", session_index="SI-R", relay_state="keep")
    sha1 = resign(url, idp.key_path, "sha1")
    assert get(local(sha1, fleet.public)).status_code == 400
    assert fleet.count_in_logs("is not accepted") == 1
    moved = url.replace("RelayState=keep", "RelayState=kept")
    assert moved != url
    assert get(local(moved, fleet.public)).status_code == 400
    twice = url + "&RelayState=keep"
    assert get(local(twice, fleet.public)).status_code == 400
    assert fleet.count_in_logs("RSP01035") == 3
    assert signed_in_everywhere(fleet, cookie, "alice")
    ok = get(local(resign(url, idp.key_path, "sha512"), fleet.public))
    assert ok.status_code == 302
    assert refused_everywhere(fleet, saml, cookie)


@pytest.mark.backends("redis")
@pytest.mark.expect_log("RSP01039")
def test_idp_logout_request_rsa_sha1_accepted_where_allowed(fleet, saml, store):
    """ReplaySPAllowSHA1 naming the IdP: its RSA-SHA1 LogoutRequest is
    taken, and the exception is logged at warn (RSP01039)."""
    idp = saml.idps["idp1"]
    fleet.restart_replicas(location_extra='ReplaySPAllowSHA1 "%s"' % idp.entity_id)
    fleet.mark_logs()
    md = sp_metadata(fleet)
    cookie = sign_in(fleet, saml, session_index="SI-S1")
    url, _ = idp.logout_request_url(md, "alice", session_index="SI-S1")
    r = get(local(resign(url, idp.key_path, "sha1"), fleet.public))
    assert r.status_code == 302, r.text[:300]
    assert refused_everywhere(fleet, saml, cookie)
    lines = [l for ls in fleet.new_log_lines().values() for l in ls if "RSP01039" in l]
    assert len(lines) == 1 and "HTTP-Redirect signature uses rsa-sha1" in lines[0], lines


@pytest.mark.expect_log("RSP01035")
def test_idp_logout_request_taken_once(fleet, saml, store):
    """The same LogoutRequest again (a captured one) is refused, even for a
    session made after it; the first one worked."""
    idp = saml.idps["idp1"]
    md = sp_metadata(fleet)
    sign_in(fleet, saml, session_index="SI-once")
    url, _ = idp.logout_request_url(md, "alice", session_index="SI-once")
    assert get(local(url, fleet.replicas[0].base_url)).status_code == 302
    again = sign_in(fleet, saml, session_index="SI-once")
    r = get(local(url, fleet.replicas[1].base_url))
    assert r.status_code == 400
    assert fleet.count_in_logs("check=replayed") == 1
    assert signed_in_everywhere(fleet, again, "alice")
    assert len(store.keys(KEY_PREFIX + "i:")) == 1


@pytest.mark.backends("redis")
@pytest.mark.expect_log("RSP01035")
def test_idp_logout_request_must_be_fresh(fleet, saml, store):
    """A LogoutRequest older than ReplaySPRequestLifetime + skew is refused
    (here 5 s + 0 s)."""
    fleet.restart_replicas(location_extra="ReplaySPRequestLifetime 5\nReplaySPClockSkew 0")
    idp = saml.idps["idp1"]
    md = sp_metadata(fleet)
    cookie = sign_in(fleet, saml, session_index="SI-old")
    url, _ = idp.logout_request_url(md, "alice", session_index="SI-old")
    time.sleep(6.2)
    r = get(local(url, fleet.public))
    assert r.status_code == 400
    assert fleet.count_in_logs("check=expired") == 1
    assert signed_in_everywhere(fleet, cookie, "alice")
    # a fresh one works
    url, _ = idp.logout_request_url(md, "alice", session_index="SI-old")
    assert get(local(url, fleet.public)).status_code == 302
    assert refused_everywhere(fleet, saml, cookie)


def _redirect(xml):
    import base64
    import zlib
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    raw = c.compress(xml.encode()) + c.flush()
    return urllib.parse.quote(base64.b64encode(raw).decode(), safe="")


@pytest.mark.expect_log("RSP01035")
def test_malformed_logout_request_refused_before_lasso(fleet, saml, store):
    """Messages Lasso would abort the whole process on (anything that is not
    a LogoutRequest with exactly one identifier) are refused (400, check=xml)
    before Lasso reads them, signed or not, and the children live on (the
    error-log gate fails the test on a child that died)."""
    ns = ('xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" '
          'xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion"')
    issuer = "<saml:Issuer>%s</saml:Issuer>" % saml.idps["idp1"].entity_id
    bad = ["<x/>",
           '<samlp:LogoutRequest %s ID="l1" Version="2.0" IssueInstant="2026-12-01T00:00:00Z">'
           '%s</samlp:LogoutRequest>' % (ns, issuer),
           '<samlp:LogoutRequest %s ID="l2" Version="2.0" IssueInstant="2026-12-01T00:00:00Z">'
           '%s<saml:NameID>a</saml:NameID><saml:NameID>b</saml:NameID>'
           '</samlp:LogoutRequest>' % (ns, issuer)]
    sig = ("&SigAlg=" + urllib.parse.quote("http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
                                           safe="") + "&Signature=AAAA")
    pids = {h.name: h.pid() for h in fleet.replicas}
    for xml in bad:
        for h in fleet.replicas:
            r = get(h.base_url + httpd_fleet.ENDPOINT + "/slo?SAMLRequest=" + _redirect(xml) + sig)
            assert r.status_code == 400, (h.name, r.status_code)
    assert fleet.count_in_logs("check=xml") == len(bad) * len(fleet.replicas)
    assert {h.name: h.pid() for h in fleet.replicas} == pids
    # and a good one still works
    md = sp_metadata(fleet)
    cookie = sign_in(fleet, saml, session_index="SI-M")
    url, _ = saml.idps["idp1"].logout_request_url(md, "alice", session_index="SI-M")
    assert get(local(url, fleet.public)).status_code == 302
    assert refused_everywhere(fleet, saml, cookie)
