"""The synthetic federation (federation.py) that the federation tests and
the benchmark share: its shape, its signature, its speed, the test IdPs
that sign as its IdPs, Shibboleth SP loading it with schema validation,
and the module trusting a signed aggregate of hundreds of IdPs (Redis
only: this is about metadata, not the store)."""

import os
import re
import subprocess
import time
import xml.etree.ElementTree as ET

import pytest

import federation
import shib
from http_client import post_acs

MD = "{%s}" % federation.MD_NS
DS = "{http://www.w3.org/2000/09/xmldsig#}"
SAML = "{urn:oasis:names:tc:SAML:2.0:assertion}"
PAGE = "/app/page.html"


@pytest.fixture(scope="module")
def fed_keys(workdir):
    return federation.make_keys(os.path.join(workdir, "federation-keys"), 4)


@pytest.fixture(scope="module")
def fed_signer(workdir, testidp):
    d = os.path.join(workdir, "federation-signer")
    key, cert = testidp.make_keypair(d, "signer", "rsp synthetic federation signer")
    os.chmod(key, 0o644)
    return key, cert


def xmlsec1_verify(path, cert, id_attr):
    r = subprocess.run(["xmlsec1", "--verify", "--pubkey-cert-pem", cert, "--id-attr:ID", id_attr,
                        path], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=60)
    return r.returncode, r.stdout.decode("utf-8", "replace")


def test_shape_of_the_aggregate(workdir, fed_keys):
    fed = federation.make(os.path.join(workdir, "fed-shape"), 45, 30, keys=fed_keys)
    with open(fed.path) as f:
        text = f.read()
    # namespaces declared once, on the root, as federations publish them
    assert text.count("xmlns:") == len(federation.NAMESPACES), text[:400]
    root = ET.fromstring(text)
    assert root.tag == MD + "EntitiesDescriptor" and root.get("validUntil") is None
    entities = root.findall(MD + "EntityDescriptor")
    assert len(entities) == 75
    # IdPs and SPs interleaved
    kinds = ["idp" if e.find(MD + "IDPSSODescriptor") is not None else "sp" for e in entities]
    assert kinds[:4] == ["idp", "sp", "idp", "sp"] and kinds[-15:] == ["idp"] * 15
    idps = [e for e in entities if e.find(MD + "IDPSSODescriptor") is not None]
    for i, (e, idp) in enumerate(zip(idps, fed.idps)):
        assert e.get("entityID") == idp.entity_id == federation.idp_entity_id(i)
        d = e.find(MD + "IDPSSODescriptor")
        sso = [s.get("Location") for s in d.findall(MD + "SingleSignOnService")]
        assert idp.sso_url in sso
        assert (d.find(MD + "SingleLogoutService") is not None) == (idp.slo_url is not None)
        signing = [k.find(DS + "KeyInfo/" + DS + "X509Data/" + DS + "X509Certificate")
                   .text.replace("\n", "") for k in d.findall(MD + "KeyDescriptor")
                   if k.get("use") == "signing"]
        assert signing[0] == federation.rsp_testidp._pem_body(idp.cert_file)
        assert len(signing) == len(idp.cert_files) == (2 if i % 20 == 10 else 1)
        assert d.find(MD + "Extensions/{urn:mace:shibboleth:metadata:1.0}Scope").text \
            == idp.scope
        values = [v.text for v in e.iter(SAML + "AttributeValue")]
        assert (federation.HIDE_FROM_DISCOVERY in values) == idp.hidden
        reg = e.find(MD + "Extensions/{urn:oasis:names:tc:SAML:metadata:rpi}RegistrationInfo")
        assert reg.get("registrationAuthority") == idp.registrar
    assert any(i.hidden for i in fed.idps)
    assert text.count("<mdui:Logo ") > 0 and text.count("<mdui:DisplayName ") > 75
    # round-robin keys
    assert {i.key_file for i in fed.idps} == {k for k, _ in fed_keys}
    # one IdP more: the same entities and the new one
    more = federation.make(os.path.join(workdir, "fed-shape"), 46, 30, keys=fed_keys,
                           filename="more.xml")
    assert [i.entity_id for i in more.idps[:45]] == [i.entity_id for i in fed.idps]


def test_signed_aggregate_verifies_with_the_federation_certificate(workdir, fed_keys,
                                                                    fed_signer):
    fed = federation.make(os.path.join(workdir, "fed-signed"), 30, 30, keys=fed_keys,
                          signed_by=fed_signer)
    root = ET.parse(fed.path).getroot()
    assert root.get("ID") and root.get("validUntil")
    assert root[0].tag == DS + "Signature"
    assert 6 * 86400 < fed.valid_until - time.time() <= 7 * 86400
    rc, out = xmlsec1_verify(fed.path, fed_signer[1],
                             "%s:EntitiesDescriptor" % federation.MD_NS)
    assert rc == 0 and "OK" in out, out
    rc, out = xmlsec1_verify(fed.path, fed_keys[0][1],
                             "%s:EntitiesDescriptor" % federation.MD_NS)
    assert rc != 0, out


def test_twenty_thousand_idps_and_sps_in_seconds(workdir, fed_keys):
    t0 = time.monotonic()
    fed = federation.make(os.path.join(workdir, "fed-large"), 20000, 20000, keys=fed_keys)
    took = time.monotonic() - t0
    try:
        assert len(fed.idps) == 20000 and fed.size > 50 << 20
        assert took < 30, took
    finally:
        os.unlink(fed.path)


def test_a_test_idp_signs_as_idp_number_i(workdir, fed_keys):
    fed = federation.make(os.path.join(workdir, "fed-mint"), 12, 2, keys=fed_keys)
    idp = fed.test_idp(10, os.path.join(workdir, "fed-mint", "idp10"))
    assert idp.entity_id == fed.idps[10].entity_id
    xml = idp.mint_xml("https://sp.example/sp", "https://sp.example/acs")
    assert re.search(r"<saml:Issuer[^>]*>%s</saml:Issuer>" % re.escape(idp.entity_id), xml)
    path = os.path.join(workdir, "fed-mint", "response.xml")
    with open(path, "w") as f:
        f.write(xml)
    rc, out = xmlsec1_verify(path, fed.idps[10].cert_file,
                             "urn:oasis:names:tc:SAML:2.0:protocol:Response")
    assert rc == 0, out
    # the key of another IdP (round-robin: IdP 11 has the next key) does not verify it
    rc, out = xmlsec1_verify(path, fed.idps[11].cert_file,
                             "urn:oasis:names:tc:SAML:2.0:protocol:Response")
    assert rc != 0, out
    single = fed.write_single(os.path.join(workdir, "fed-mint", "idp10.xml"), 10)
    root = ET.parse(single).getroot()
    assert root.tag == MD + "EntityDescriptor" and root.get("entityID") == idp.entity_id


@pytest.mark.skipif(not shib.available(), reason="libapache2-mod-shib (shibd) not installed")
def test_shibboleth_loads_the_signed_aggregate_with_schema_validation(workdir, fed_keys,
                                                                        fed_signer, sp_keys):
    fed = federation.make(os.path.join(workdir, "fed-shib"), 40, 40, keys=fed_keys,
                          signed_by=fed_signer)
    provider = ('<MetadataProvider type="XML" validate="true" path="%s">'
                '<MetadataFilter type="Signature" certificate="%s"/>'
                '<MetadataFilter type="RequireValidUntil" maxValidityInterval="2419200"/>'
                '</MetadataProvider>' % (fed.path, fed_signer[1]))
    sp = shib.ShibSP(os.path.join(workdir, "fed-shib", "sp"), "https://sp.shib.example/sp",
                     fed.idps[0].entity_id, fed.path, *sp_keys, metadata_provider=provider)
    sp.start()
    try:
        with open(sp.shibd_log) as f:
            log = f.read()
    finally:
        sp.stop()
    assert re.search(r"ERROR|CRIT|schema|invalid", log) is None, log[-3000:]


@pytest.mark.backends("redis")
@pytest.mark.expect_log("replay_refused")
def test_the_module_trusts_a_synthetic_signed_aggregate(fleet, sp_config, workdir, fed_keys,
                                                         fed_signer):
    """300 IdPs and 300 SPs, signed: the first IdP, one whose key is
    rolling over, one hidden from discovery and the last sign in, each
    once."""
    fed = federation.make(os.path.join(workdir, "fed-fleet"), 300, 300, keys=fed_keys,
                          signed_by=fed_signer)
    fleet.restart_replicas(sp=dict(sp_config, idp_metadata=[(fed.path, fed_signer[1])],
                                   default_idp=None))
    hidden = next(i.index for i in fed.idps if i.hidden)
    for n in (0, 10, hidden, 299):
        idp = fed.test_idp(n, os.path.join(workdir, "fed-fleet", "idp%d" % n))
        b64 = idp.mint(fleet.entity_id, fleet.acs_url,
                       assertion_id="_fed%d_%d" % (n, time.time_ns()))
        r = post_acs(fleet.public, b64, relay_state=PAGE)
        assert r.status_code == 303, (n, r.status_code, r.text[:300])
        assert post_acs(fleet.public, b64).status_code == 403
