"""Federation metadata: ReplaySPIdPMetadataFile naming an aggregate
(EntitiesDescriptor, as federations publish them) with several IdPs and
SPs; each response is checked against the IdP its Issuer names (Redis
only: this is about metadata, not the store)."""

import os
import re
import time

import pytest
import requests

import http_client
import httpd_fleet
import stores
from http_client import post_acs

pytestmark = pytest.mark.backends("redis")
PAGE = "/app/page.html"


def aggregate(path, *metadata_files, sp_entity="https://some-sp.federation.example/sp",
              signed_by=None, valid_days=7):
    """An aggregate of metadata_files (the first nested) and an SP, written
    to path; signed_by (key, certificate): signed with its root ID and a
    validUntil valid_days away, as a federation publishes it."""
    bodies = []
    for f in metadata_files:
        with open(f) as fh:
            bodies.append(re.sub(r"^<\?xml[^>]*\?>\s*", "", fh.read()))
    sp = ('<md:EntityDescriptor entityID="%s"><md:SPSSODescriptor '
          'protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">'
          '<md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" '
          'Location="https://some-sp.federation.example/acs" index="0"/>'
          '</md:SPSSODescriptor></md:EntityDescriptor>' % sp_entity)
    root = ('<md:EntitiesDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" '
            'Name="urn:test:federation"')
    if signed_by:
        until = time.gmtime(time.time() + valid_days * 86400)
        root += ' ID="_fed%d" validUntil="%s"' % (time.time_ns(),
                                                 time.strftime("%Y-%m-%dT%H:%M:%SZ", until))
    text = ('<?xml version="1.0"?>\n' + root + '>\n'
            + sp + "\n<md:EntitiesDescriptor Name=\"urn:test:nested\">\n" + bodies[0]
            + "\n</md:EntitiesDescriptor>\n" + "\n".join(bodies[1:])
            + "\n</md:EntitiesDescriptor>\n")
    if signed_by:
        import rsp_testidp
        text = rsp_testidp.sign_metadata(text, *signed_by)
    with open(path, "w") as fh:
        fh.write(text)
    os.chmod(path, 0o644)
    return path


@pytest.mark.expect_log("check_refused", "replay_refused")
def test_aggregate_metadata_each_response_checked_against_its_issuer(fleet, saml, store, idps,
                                                                     sp_config, workdir):
    agg = aggregate(os.path.join(workdir, "federation.xml"), idps["idp1"].metadata_path,
                    idps["idp2"].metadata_path)
    fleet.restart_replicas(sp=dict(sp_config, idp_metadata=[agg]))
    fleet.mark_logs()
    for idp in ("idp1", "idp2"):
        m = saml.mint(idp)
        r = post_acs(fleet.public, m.b64, relay_state=PAGE)
        assert r.status_code == 303, (idp, r.status_code, r.text[:300])
        assert post_acs(fleet.public, m.b64).status_code == 403
    # idp1's entity ID signed with another key: checked against idp1's key
    bad = saml.mint("rogue")
    assert post_acs(fleet.public, bad.b64).status_code == 400
    assert fleet.count_in_logs("check=signature") == 1
    # an IdP the aggregate does not list
    unknown = saml.mint("unknown")
    assert post_acs(fleet.public, unknown.b64).status_code == 400
    assert fleet.count_in_logs("check=issuer") == 1
    # the first IdP of the first file is the default one (SP-initiated)
    g = http_client.get(fleet.public + PAGE)
    assert g.status_code == 302 and g.headers["Location"].startswith(idps["idp1"].sso_url)


def test_aggregate_without_an_idp_refused_at_configtest(make_bad_instance, workdir):
    path = os.path.join(workdir, "sp-only-federation.xml")
    with open(path, "w") as fh:
        fh.write('<md:EntitiesDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata">'
                 '<md:EntityDescriptor entityID="https://sp.example/"><md:SPSSODescriptor '
                 'protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"/>'
                 '</md:EntityDescriptor></md:EntitiesDescriptor>')
    h = make_bad_instance(path)
    rc, out = h.configtest()
    assert rc != 0 and "ReplaySPIdPMetadataFile" in out and "no entity with an IDPSSODescriptor" \
        in out, out


def test_same_idp_in_two_files_refused_at_configtest(make_bad_instance, workdir, idps):
    agg = aggregate(os.path.join(workdir, "federation-dup.xml"), idps["idp1"].metadata_path,
                    idps["idp2"].metadata_path)
    h = make_bad_instance(agg, idps["idp2"].metadata_path)
    rc, out = h.configtest()
    assert rc != 0 and "already configured" in out, out


@pytest.fixture
def make_bad_instance(workdir, module_so, sp_config):
    made = []

    def make(*metadata):
        sp = dict(sp_config, idp_metadata=list(metadata), default_idp=None)
        h = httpd_fleet.Httpd(os.path.join(workdir, "federation-cfg-%d" % len(made)),
                              "fed-cfg-%d" % len(made), modules=[("replay_sp_module", module_so)],
                              log_level="warn replay_sp:info", threads=4, start_servers=1,
                              body=httpd_fleet.sp_conf_body("redis://127.0.0.1:6379/0", sp))
        made.append(h)
        return h
    yield make


@pytest.mark.expect_log("replay_refused")
def test_guard_with_aggregate_metadata(workdir, module_so, redis, sp_keys, idps, testidp):
    """A guard section names a federation aggregate too: a response from
    the second IdP in it is validated and claimed, its replay refused. (No
    SP behind this guard: what the guard passes gets httpd's 404.)"""
    agg = aggregate(os.path.join(workdir, "federation-guard.xml"), idps["idp1"].metadata_path,
                    idps["idp2"].metadata_path)
    h = httpd_fleet.Httpd(os.path.join(workdir, "federation-guard"), "fed-guard",
                          modules=[("replay_sp_module", module_so)],
                          log_level="warn replay_sp:info", threads=4, start_servers=1)
    sp = "https://sp.guarded.federation.example/sp"
    h.body = "\n".join([
        "ReplaySPStore %s" % redis.url, "ReplaySPMonitorInterval 0",
        "<Location /sp/postResponse>", "    ReplaySPGuard On",
        '    ReplaySPEntityID "%s"' % sp, '    ReplaySPIdPMetadataFile "%s"' % agg,
        "    Require all granted", "</Location>"]) + "\n"
    h.start()
    try:
        url = h.base_url + "/sp/postResponse"
        aid = testidp.random_id()
        b64 = idps["idp2"].mint(sp, url, assertion_id=aid)
        first = requests.post(url, data={"SAMLResponse": b64}, allow_redirects=False,
                              timeout=30)
        assert first.status_code == 404, (first.status_code, first.text[:200])
        c = redis.client()
        try:
            assert c.exists(stores.claim_key(idps["idp2"].entity_id, aid))
        finally:
            c.close()
        again = requests.post(url, data={"SAMLResponse": b64}, allow_redirects=False,
                              timeout=30)
        assert again.status_code == 403
    finally:
        h.stop()


@pytest.fixture(scope="module")
def federation_key(workdir, testidp):
    d = os.path.join(workdir, "federation-key")
    os.makedirs(d, exist_ok=True)
    key, cert = testidp.make_keypair(d, "fed", "rsp test federation")
    os.chmod(key, 0o644)
    return key, cert


@pytest.mark.expect_log("replay_refused")
def test_a_signed_aggregate_verified_then_its_idps_sign_in(fleet, saml, store, idps, sp_config,
                                                          workdir, federation_key):
    """ReplaySPIdPMetadataFile PATH CERTFILE: the aggregate's signature and
    validUntil checked when httpd starts; its IdPs sign in once."""
    agg = aggregate(os.path.join(workdir, "federation-signed.xml"), idps["idp1"].metadata_path,
                    idps["idp2"].metadata_path, signed_by=federation_key)
    fleet.restart_replicas(
        sp=dict(sp_config, idp_metadata=[(agg, federation_key[1])]),
        location_extra="<If \"%{REQUEST_URI} == '/rsp-status'\">\n"
                       "    SetHandler replay-sp-status\n    Require all granted\n</If>")
    status = requests.get(fleet.replicas[0].base_url + "/rsp-status", timeout=10).text
    figures = dict(re.findall(r"^(replay_sp_metadata_\w+) (\d+)$", status, re.M))
    assert figures["replay_sp_metadata_idps"] == "2", status
    until = int(figures["replay_sp_metadata_valid_until_timestamp_seconds"])
    assert 6 * 86400 < until - time.time() <= 7 * 86400, (until, time.time())
    for idp in ("idp1", "idp2"):
        m = saml.mint(idp)
        r = post_acs(fleet.public, m.b64, relay_state=PAGE)
        assert r.status_code == 303, (idp, r.status_code, r.text[:300])
        assert post_acs(fleet.replicas[1].base_url, m.b64, relay_state=PAGE).status_code == 403


@pytest.mark.parametrize("case,why", [
    ("tampered", "the signature does not verify with the certificate"),
    ("another_key", "the signature does not verify with the certificate"),
    ("unsigned", "not signed"),
    ("expired", "expired: validUntil"),
    ("too_long", "more than ReplaySPMetadataMaxValidity"),
])
def test_a_bad_signed_aggregate_is_refused_at_configtest(make_bad_instance, workdir, idps,
                                                         testidp, federation_key, case, why):
    key, cert = federation_key
    path = os.path.join(workdir, "federation-%s.xml" % case)
    if case == "another_key":
        d = os.path.join(workdir, "federation-other")
        os.makedirs(d, exist_ok=True)
        signer = testidp.make_keypair(d, "other", "rsp other signer")
    else:
        signer = federation_key
    aggregate(path, idps["idp1"].metadata_path, idps["idp2"].metadata_path,
              signed_by=None if case == "unsigned" else signer,
              valid_days={"expired": -1, "too_long": 60}.get(case, 7))
    if case == "tampered":
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text.replace("some-sp.federation.example", "some-sp.federatlon.example", 1))
    h = make_bad_instance((path, cert))
    rc, out = h.configtest()
    assert rc != 0, out
    assert "ReplaySPIdPMetadataFile" in out and path in out and why in out, out
    h.gate_offset = h.log_size()


def with_registrar(workdir, idp, authority):
    """idp's metadata with an mdrpi:RegistrationInfo naming authority."""
    with open(idp.metadata_path) as f:
        md = f.read()
    path = os.path.join(workdir, "registered-%d.xml" % time.time_ns())
    with open(path, "w") as f:
        f.write(md.replace(
            "<md:IDPSSODescriptor",
            '<md:Extensions><mdrpi:RegistrationInfo '
            'xmlns:mdrpi="urn:oasis:names:tc:SAML:metadata:rpi" '
            'registrationAuthority="%s"/></md:Extensions><md:IDPSSODescriptor' % authority, 1))
    return path


@pytest.mark.expect_log("check_refused")
def test_include_and_exclude_choose_the_idps_of_an_aggregate(fleet, saml, idps, sp_config,
                                                             workdir):
    """ReplaySPIdPInclude registrar=...: only the IdPs the federation
    registered; ReplaySPIdPExclude entity=...: all but one. An IdP left out
    is unknown to the SP (check=issuer)."""
    reg = with_registrar(workdir, idps["idp2"], "https://fed.test.example/")
    agg = aggregate(os.path.join(workdir, "federation-filtered.xml"),
                    idps["idp1"].metadata_path, reg)
    for extra, default, kept, left in (
            ("ReplaySPIdPInclude registrar=https://fed.test.example/", "idp2", "idp2", "idp1"),
            ("ReplaySPIdPExclude entity=%s" % idps["idp2"].entity_id, "idp1", "idp1", "idp2")):
        fleet.restart_replicas(sp=dict(sp_config, idp_metadata=[agg],
                                       default_idp=idps[default].entity_id),
                               location_extra=extra)
        fleet.mark_logs()
        r = post_acs(fleet.public, saml.mint(kept).b64, relay_state=PAGE)
        assert r.status_code == 303, (extra, r.status_code, r.text[:200])
        r = post_acs(fleet.public, saml.mint(left).b64, relay_state=PAGE)
        assert r.status_code == 400, (extra, r.status_code)
        assert fleet.count_in_logs("check=issuer") == 1, extra


def test_filters_that_leave_no_idp_are_refused_at_configtest(make_bad_instance, idps, workdir):
    agg = aggregate(os.path.join(workdir, "federation-none.xml"), idps["idp1"].metadata_path,
                    idps["idp2"].metadata_path)
    h = make_bad_instance(agg)
    h.body = h.body.replace("</Location>", "    ReplaySPIdPInclude category=http://x.example/\n"
                            "</Location>")
    rc, out = h.configtest()
    assert rc != 0 and "no IdP is left" in out, out
    h.gate_offset = h.log_size()
    h2 = make_bad_instance(agg)
    h2.body = h2.body.replace("</Location>", "    ReplaySPIdPExclude https://idp\n</Location>")
    rc, out = h2.configtest()
    assert rc != 0 and "ReplaySPIdPExclude" in out and "expected entity=" in out, out
    h2.gate_offset = h2.log_size()
