"""Attributes: kept in the session (so every replica has them), exported to
the application as environment variables, REMOTE_USER from a chosen
attribute, and `Require replay-sp-attribute NAME VALUE...`."""

import os

import pytest

import httpd_fleet
from http_client import get, post_acs, session_cookie
from httpd_fleet import Httpd

ATTRS = {"mail": ["alice@example.org"], "group": ["staff", "admins"],
         "urn:oid:1.3.6.1.4.1.5923.1.1.1.6": ["alice@example.org"]}

ENV_HEADERS = "\n".join(
    '    Header always set X-%s "expr=%%{reqenv:REPLAYSP_%s}"' % (h, v) for h, v in [
        ("Mail", "mail"), ("Group", "group"), ("Group0", "group_0"), ("Group1", "group_1"),
        ("GroupN", "group_N"), ("NameID", "NAME_ID"), ("IdP", "IDP"),
        ("Oid", "urn_oid_1_3_6_1_4_1_5923_1_1_1_6"), ("User", "USER_NONE"),
        ("Affil", "urn_oid_1_3_6_1_4_1_5923_1_1_1_9"),
        ("AffilN", "urn_oid_1_3_6_1_4_1_5923_1_1_1_9_N"), ("Scoped", "urn_example_scoped")])


def instance(workdir, module_so, redis, sp_config, name, location_extra=""):
    h = Httpd(os.path.join(workdir, name), name, modules=[("replay_sp_module", module_so)],
              log_level="warn replay_sp:info", threads=4, start_servers=1)
    h.body = httpd_fleet.sp_conf_body(redis.url, sp_config, location_extra=location_extra) + (
        "<Location /env>\n%s\n</Location>\n"
        "<Location /staff>\n    Require replay-sp-attribute group staff auditors\n</Location>\n"
        "<Location /wheel>\n    Require replay-sp-attribute group wheel\n</Location>\n"
        % ENV_HEADERS)
    for page in ("env", "staff", "wheel"):
        h.write_file(page, "%s\n" % page)
    return h


def sign_in(h, idp, sp_config, **kw):
    acs = h.base_url + httpd_fleet.ENDPOINT + "/acs"
    r = post_acs(acs, idp.mint(sp_config["entity_id"], acs, **kw))
    return r


@pytest.mark.expect_log("AH01631")
def test_attributes_exported_and_required(workdir, module_so, redis, sp_config, idps):
    h = instance(workdir, module_so, redis, sp_config, "attrs")
    h.start()
    try:
        r = sign_in(h, idps["idp1"], sp_config, name_id="alice", attributes=ATTRS)
        assert r.status_code == 303
        cookie, _ = session_cookie(r)
        e = get(h.base_url + "/env", cookie=cookie)
        assert e.status_code == 200
        assert e.headers["X-Mail"] == "alice@example.org"
        assert e.headers["X-Group"] == "staff"
        assert e.headers["X-Group0"] == "staff"
        assert e.headers["X-Group1"] == "admins"
        assert e.headers["X-GroupN"] == "2"
        assert e.headers["X-NameID"] == "alice"
        assert e.headers["X-IdP"] == idps["idp1"].entity_id
        assert e.headers["X-Oid"] == "alice@example.org"
        assert e.headers.get("X-User", "") == ""
        assert e.headers["X-RSP-User"] == httpd_fleet.qualified_user(
            idps["idp1"].entity_id, sp_config["entity_id"], "alice")
        assert get(h.base_url + "/staff", cookie=cookie).status_code == 200
        assert get(h.base_url + "/wheel", cookie=cookie).status_code == 401
        assert get(h.base_url + "/staff").status_code == 302          # no session: to the IdP
        # Someone else, without the group.
        r = sign_in(h, idps["idp1"], sp_config, name_id="bob", attributes={"group": ["guests"]})
        other, _ = session_cookie(r)
        assert get(h.base_url + "/staff", cookie=other).status_code == 401
        e = get(h.base_url + "/env", cookie=other)
        assert e.headers["X-GroupN"] == "1" and e.headers.get("X-Mail", "") == ""
    finally:
        h.stop()


@pytest.mark.expect_log("check_refused")
def test_remote_user_from_a_chosen_attribute(workdir, module_so, redis, sp_config, idps):
    h = instance(workdir, module_so, redis, sp_config, "userattr",
                 location_extra="ReplaySPUserAttribute mail")
    h.start()
    try:
        r = sign_in(h, idps["idp1"], sp_config, name_id="opaque-id-42", attributes=ATTRS)
        assert r.status_code == 303
        cookie, _ = session_cookie(r)
        e = get(h.base_url + "/env", cookie=cookie)
        assert e.headers["X-RSP-User"] == "alice@example.org"
        assert e.headers["X-NameID"] == "opaque-id-42"
        # An assertion without that attribute is refused, and not claimed.
        r = sign_in(h, idps["idp1"], sp_config, attributes={"group": ["staff"]})
        assert r.status_code == 400 and session_cookie(r)[0] is None
        assert any("check=user-attribute" in l for l in h.new_log_lines())
    finally:
        h.stop()


@pytest.mark.expect_log("check_refused", "replay_refused")
def test_a_user_without_a_name_id(workdir, module_so, redis, sp_config, idps):
    """AD FS without a NameID rule sends none: with ReplaySPUserAttribute the
    attribute names the user (the session works, once; logout is local: a
    LogoutRequest would have no NameID to name); without the attribute, or
    without the directive, the response is refused with its check=."""
    idp = idps["idp1"]
    h = instance(workdir, module_so, redis, sp_config, "nonameid",
                 location_extra="ReplaySPUserAttribute upn")
    plain = instance(workdir, module_so, redis, sp_config, "nonameid-plain")
    h.start()
    plain.start()
    try:
        acs = h.base_url + httpd_fleet.ENDPOINT + "/acs"
        b64 = idp.mint(sp_config["entity_id"], acs, name_id=None,
                       attributes={"upn": ["alice@example.org"]})
        r = post_acs(acs, b64)
        assert r.status_code == 303, r.text[:300]
        cookie, _ = session_cookie(r)
        e = get(h.base_url + "/env", cookie=cookie)
        assert e.status_code == 200
        assert e.headers["X-RSP-User"] == "alice@example.org"
        assert e.headers.get("X-NameID", "") == ""
        assert any("sign-in accepted" in l and "user=alice@example.org" in l
                   for l in h.new_log_lines())
        assert post_acs(acs, b64).status_code == 403        # once
        out = get(h.base_url + httpd_fleet.ENDPOINT + "/logout?ReturnTo=%2Fbye",
                  cookie=cookie)
        assert out.status_code == 302 and out.headers["Location"] == "/bye"
        assert any("signed out" in l and "user=-" in l and "slo=none" in l
                   for l in h.new_log_lines())
        assert get(h.base_url + "/env", cookie=cookie).status_code == 302
        # neither a NameID nor the attribute
        r = post_acs(acs, idp.mint(sp_config["entity_id"], acs, name_id=None,
                                   attributes={"mail": ["alice@example.org"]}))
        assert r.status_code == 400 and session_cookie(r)[0] is None
        assert any("check=user-attribute" in l for l in h.new_log_lines())
        # no ReplaySPUserAttribute: a NameID is required
        acs2 = plain.base_url + httpd_fleet.ENDPOINT + "/acs"
        r = post_acs(acs2, idp.mint(sp_config["entity_id"], acs2, name_id=None,
                                    attributes={"upn": ["alice@example.org"]}))
        assert r.status_code == 400 and session_cookie(r)[0] is None
        assert any("check=subject" in l and "no NameID" in l
                   for l in plain.new_log_lines())
    finally:
        h.stop()
        plain.stop()


def test_require_attribute_needs_a_name_and_a_value(workdir, module_so, redis, sp_config):
    h = Httpd(os.path.join(workdir, "badrequire"), "badrequire",
              modules=[("replay_sp_module", module_so)])
    h.body = httpd_fleet.sp_conf_body(redis.url, sp_config) + (
        "<Location /x>\n    Require replay-sp-attribute group\n</Location>\n")
    rc, out = h.configtest()
    assert rc != 0 and "replay-sp-attribute needs an attribute name" in out, out


EPPN = "urn:oid:1.3.6.1.4.1.5923.1.1.1.6"
AFFILIATION = "urn:oid:1.3.6.1.4.1.5923.1.1.1.9"


@pytest.mark.expect_log("check_refused")
def test_scoped_attributes_only_in_the_scopes_of_their_idp(workdir, module_so, redis,
                                                           sp_config, idps, testidp):
    """Each IdP may assert scoped values (eduPersonPrincipalName,
    eduPersonScopedAffiliation, those named by ReplaySPScopedAttribute)
    only in the scopes its metadata declares: idp1 example.org, idp2
    example.net and its subdomains. Other values are dropped with a notice
    (RSP01052: the scope, never the value); when the user attribute is one
    of them, the response is refused (check=scope) before anything is
    claimed."""
    from stores import claim_key
    h = instance(workdir, module_so, redis, sp_config, "scopes",
                 location_extra="ReplaySPUserAttribute %s\n"
                                "    ReplaySPScopedAttribute urn:example:scoped" % EPPN)
    h.start()
    try:
        h.mark_log()
        r = sign_in(h, idps["idp1"], sp_config, name_id="a7f3", attributes={
            EPPN: ["alice@example.org"],
            AFFILIATION: ["member@example.org", "staff@example.net", "faculty"],
            "urn:example:scoped": ["x@evil.example"]})
        assert r.status_code == 303, r.status_code
        cookie, _ = session_cookie(r)
        e = get(h.base_url + "/env", cookie=cookie)
        assert e.headers["X-RSP-User"] == "alice@example.org"
        assert e.headers["X-Affil"] == "member@example.org"
        assert e.headers["X-AffilN"] == "1"
        assert e.headers.get("X-Scoped", "") == ""
        drops = [l for l in h.new_log_lines() if "RSP01052" in l]
        assert len(drops) == 3, drops
        assert any("its scope example.net" in l for l in drops)
        assert any("no single scope" in l for l in drops)
        assert any("its scope evil.example" in l and "attribute=urn:example:scoped" in l
                   for l in drops)
        assert not any("staff@" in l or "faculty" in l or "x@" in l for l in drops)
        # idp2: its own scope and its subdomains, not idp1's
        r = sign_in(h, idps["idp2"], sp_config, name_id="b1",
                    attributes={EPPN: ["bob@dept.example.net"]})
        assert r.status_code == 303, r.status_code
        e = get(h.base_url + "/env", cookie=session_cookie(r)[0])
        assert e.headers["X-RSP-User"] == "bob@dept.example.net"
        for idp, user in (("idp2", "alice@example.org"), ("idp1", "bob@example.net"),
                          ("idp2", "eve@example.net.evil.example"), ("idp1", "eve")):
            aid = testidp.random_id()
            h.mark_log()
            r = sign_in(h, idps[idp], sp_config, name_id="x", assertion_id=aid,
                        attributes={EPPN: [user]})
            assert r.status_code == 400, (idp, user, r.status_code)
            refused = [l for l in h.new_log_lines() if "RSP01004" in l]
            assert len(refused) == 1 and "check=scope" in refused[0], refused
            assert user not in refused[0]
            assert not redis.client().exists(claim_key(idps[idp].entity_id, aid))
    finally:
        h.stop()


@pytest.mark.parametrize("qualify", [None, "On", "Off"])
def test_a_name_id_from_two_idps_is_two_users(workdir, module_so, redis, sp_config, idps,
                                              qualify):
    """A NameID is unique per IdP only: with more than one IdP trusted,
    REMOTE_USER is IdP!SP!NameID by default (ReplaySPQualifyUser), so the
    same NameID from two IdPs is two users; the NameID itself stays in
    REPLAYSP_NAME_ID. ReplaySPQualifyUser Off gives the plain NameID."""
    extra = "ReplaySPQualifyUser %s" % qualify if qualify else ""
    h = instance(workdir, module_so, redis, sp_config, "qualify-%s" % qualify,
                 location_extra=extra)
    h.start()
    try:
        users = []
        for idp in ("idp1", "idp2"):
            r = sign_in(h, idps[idp], sp_config, name_id="a7f3")
            assert r.status_code == 303, r.status_code
            e = get(h.base_url + "/env", cookie=session_cookie(r)[0])
            assert e.headers["X-NameID"] == "a7f3"
            assert e.headers["X-IdP"] == idps[idp].entity_id
            users.append(e.headers["X-RSP-User"])
        if qualify == "Off":
            assert users == ["a7f3", "a7f3"]
        else:
            assert users == [httpd_fleet.qualified_user(idps[i].entity_id,
                                                        sp_config["entity_id"], "a7f3")
                             for i in ("idp1", "idp2")]
    finally:
        h.stop()


def test_a_name_id_from_the_one_idp_is_the_user(workdir, module_so, redis, sp_config, idps):
    """One IdP trusted: REMOTE_USER is the plain NameID (by default), as
    before; ReplaySPQualifyUser On qualifies it all the same."""
    one = dict(sp_config, idp_metadata=[idps["idp1"].metadata_path])
    for qualify, want in (("", "alice"),
                          ("ReplaySPQualifyUser On", httpd_fleet.qualified_user(
                              idps["idp1"].entity_id, sp_config["entity_id"], "alice"))):
        h = instance(workdir, module_so, redis, one, "one-idp-%d" % len(qualify),
                     location_extra=qualify)
        h.start()
        try:
            r = sign_in(h, idps["idp1"], one, name_id="alice")
            e = get(h.base_url + "/env", cookie=session_cookie(r)[0])
            assert e.headers["X-RSP-User"] == want
        finally:
            h.stop()
