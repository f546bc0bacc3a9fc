"""The SP's metadata (<ReplaySPEndpointPath>/metadata, default /saml/metadata).

* It is valid against the SAML 2.0 metadata schema
  (saml-schema-metadata-2.0.xsd), checked offline by two independent
  validators (saml_schema.py: python3-xmlschema and xmllint --nonet), on
  every replica and through the balancer.
* It says what the SP is: the configured entityID, an HTTP-POST ACS and an
  HTTP-Redirect and HTTP-POST SingleLogoutService at the public URLs (ServerName +
  UseCanonicalName + endpoint path), the configured certificate in its
  signing KeyDescriptor; served as application/samlmetadata+xml.
* Negative controls: the same document, broken in one way at a time, is
  reported invalid by each validator, for that reason (a validator that
  cannot fail proves nothing); and, still schema-valid but with a wrong
  entityID, ACS, SLO or certificate, refused by the content checks.
* An instance of our own with ReplaySPEndpointPath /auth/sp, an https
  ServerName and an entityID that needs XML escaping: the URLs follow.

Metadata does not touch the store: the fleet tests run on Redis only.
"""

import base64
import os
import ssl
import xml.etree.ElementTree as ET

import pytest

import httpd_fleet
from common import HarnessError
from http_client import get
from httpd_fleet import Httpd, sp_conf_body
import saml_schema
from saml_schema import DS_NS, ENGINES, MD_NS, SchemaSetupError, validate_metadata

MD = "{%s}" % MD_NS
DS = "{%s}" % DS_NS
HTTP_POST = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"
HTTP_REDIRECT = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"
SAML2_PROTOCOL = "urn:oasis:names:tc:SAML:2.0:protocol"
CONTENT_TYPE = "application/samlmetadata+xml"

on_redis = pytest.mark.backends("redis")


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------

def media_type(resp):
    return resp.headers.get("Content-Type", "").split(";")[0].strip().lower()


def fetch_metadata(url):
    """GET a metadata URL; assert 200; return the body. (The media type has
    tests of its own, so that a wrong one does not hide other defects.)"""
    r = get(url)
    assert r.status_code == 200, (url, r.status_code, r.text[:300])
    return r.content


def cert_der(cert_file):
    with open(cert_file) as f:
        return ssl.PEM_cert_to_DER_cert(f.read())


def parse(xml_bytes):
    root = ET.fromstring(xml_bytes)
    assert root.tag == MD + "EntityDescriptor", root.tag
    return root


def sp_descriptor(root):
    sps = root.findall(MD + "SPSSODescriptor")
    assert len(sps) == 1, "expected one SPSSODescriptor, found %d" % len(sps)
    return sps[0]


def certificates(key_descriptor):
    """The DER of every ds:X509Certificate in a KeyDescriptor."""
    out = []
    for c in key_descriptor.iter(DS + "X509Certificate"):
        out.append(base64.b64decode("".join((c.text or "").split()), validate=True))
    return out


# What the SP decrypts, in the order its metadata offers them.
ENCRYPTION_METHODS = [
    "http://www.w3.org/2009/xmlenc11#aes256-gcm",
    "http://www.w3.org/2009/xmlenc11#aes128-gcm",
    "http://www.w3.org/2001/04/xmlenc#aes256-cbc",
    "http://www.w3.org/2001/04/xmlenc#aes128-cbc",
    "http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p",
    "http://www.w3.org/2009/xmlenc11#rsa-oaep",
]


def check_sp_metadata(xml_bytes, entity_id, public_base, cert_file,
                      enc_cert_file=None):
    """What the metadata of this SP must say, with the public endpoint base
    (scheme://host[:port]<endpoint path>). The encryption certificate is
    enc_cert_file, or the signing one (cert_file) when None."""
    root = parse(xml_bytes)
    assert root.get("entityID") == entity_id, root.get("entityID")
    sp = sp_descriptor(root)
    assert SAML2_PROTOCOL in sp.get("protocolSupportEnumeration", "").split()
    acs = sp.findall(MD + "AssertionConsumerService")
    assert [(a.get("Binding"), a.get("Location")) for a in acs] == \
        [(HTTP_POST, public_base + "/acs")], [a.attrib for a in acs]
    slo = [(s.get("Binding"), s.get("Location")) for s in sp.findall(MD + "SingleLogoutService")]
    assert slo == [(HTTP_REDIRECT, public_base + "/slo"),
                   (HTTP_POST, public_base + "/slo")], slo
    der = cert_der(cert_file)
    kds = sp.findall(MD + "KeyDescriptor")
    signing = [k for k in kds if k.get("use") in (None, "signing")]
    assert signing, "no signing KeyDescriptor: %r" % [k.attrib for k in kds]
    for k in signing:
        assert certificates(k) == [der], "signing KeyDescriptor is not the SP certificate"
    # exactly one encryption key (the IdP cannot be told which of several
    # to use), with the algorithms the SP decrypts
    enc = [k for k in kds if k.get("use") == "encryption"]
    assert len(enc) == 1, "encryption KeyDescriptors: %r" % [k.attrib for k in kds]
    want = cert_der(enc_cert_file or cert_file)
    assert certificates(enc[0]) == [want], "encryption KeyDescriptor is not %s" % (
        enc_cert_file or cert_file)
    methods = [m.get("Algorithm") for m in enc[0].findall(MD + "EncryptionMethod")]
    assert methods == ENCRYPTION_METHODS, methods
    return root


def serialize(root):
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


# --------------------------------------------------------------------------
# mutations for the negative controls: each breaks the schema in one way
# --------------------------------------------------------------------------

def _sp(root):
    return root.find(MD + "SPSSODescriptor")


def _acs(root):
    return _sp(root).find(MD + "AssertionConsumerService")


def _slo(root):
    return _sp(root).find(MD + "SingleLogoutService")


def _move_first(root, child):
    sp = _sp(root)
    sp.remove(child)
    sp.insert(0, child)


def _move_last(root, child):
    sp = _sp(root)
    sp.remove(child)
    sp.append(child)


def _insert_after_keys(root, elem):
    sp = _sp(root)
    last_kd = max(i for i, c in enumerate(sp) if c.tag == MD + "KeyDescriptor")
    sp.insert(last_kd + 1, elem)


def _set_cert_text(root, text):
    root.find(".//" + DS + "X509Certificate").text = text


MUTATIONS = {
    # name: (mutation, a word each validator's message must contain: the
    # document is refused for the reason the mutation gives, not another)
    # sequence order: KeyDescriptor*, ..., SingleLogoutService*, ..., ACS+
    "acs_before_keydescriptor": (lambda r: _move_first(r, _acs(r)), "KeyDescriptor"),
    "slo_after_acs": (lambda r: _move_last(r, _slo(r)), "SingleLogoutService"),
    "unknown_md_element": (lambda r: _insert_after_keys(r, ET.Element(MD + "Bogus")), "Bogus"),
    "unknown_attribute_on_acs": (lambda r: _acs(r).set("Bogus", "1"), "Bogus"),
    "unknown_attribute_on_descriptor": (lambda r: _sp(r).set("Bogus", "1"), "Bogus"),
    "no_entity_id": (lambda r: r.attrib.pop("entityID"), "entityID"),
    "entity_id_too_long": (lambda r: r.set("entityID", "https://sp.example/" + "x" * 1024), "1024"),
    "no_acs": (lambda r: _sp(r).remove(_acs(r)), "AssertionConsumerService"),
    "acs_without_index": (lambda r: _acs(r).attrib.pop("index"), "index"),
    "acs_negative_index": (lambda r: _acs(r).set("index", "-1"), "index"),
    "acs_is_default_not_boolean": (lambda r: _acs(r).set("isDefault", "yes"), "boolean"),
    "slo_without_location": (lambda r: _slo(r).attrib.pop("Location"), "Location"),
    "slo_without_binding": (lambda r: _slo(r).attrib.pop("Binding"), "Binding"),
    "keydescriptor_bad_use": (lambda r: _sp(r).find(MD + "KeyDescriptor").set("use", "sign"), "sign"),
    "no_protocol_support": (lambda r: _sp(r).attrib.pop("protocolSupportEnumeration"),
                            "protocolSupportEnumeration"),
    "certificate_not_base64": (lambda r: _set_cert_text(r, "this is not base64!"), "base64"),
    "text_in_descriptor": (lambda r: setattr(_sp(r), "text", "stray text"), "character"),
    "root_in_other_namespace": (
        lambda r: setattr(r, "tag", "{urn:example:not-metadata}EntityDescriptor"), "not-metadata"),
}


# --------------------------------------------------------------------------
# the validator itself (no httpd): offline set-up, and it can say yes and no
# --------------------------------------------------------------------------

MINIMAL = b"""<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata"
    xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="https://sp.example/md">
 <md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
  <md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data>
   <ds:X509Certificate>QUJDRA==</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
  <md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"
      Location="https://sp.example/saml/slo"/>
  <md:AssertionConsumerService index="0" isDefault="true"
      Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"
      Location="https://sp.example/saml/acs"/>
 </md:SPSSODescriptor>
</md:EntityDescriptor>
"""


def test_schema_copies_name_no_remote_location():
    """Every import of the local copies points at a local copy; a remote
    location the helper does not know is refused, not fetched."""
    with saml_schema.local_schemas() as d:
        assert sorted(os.listdir(d)) == sorted(saml_schema.SCHEMA_FILES)
        for name in saml_schema.SCHEMA_FILES:
            with open(os.path.join(d, name), encoding="utf-8") as f:
                text = f.read()
            for m in saml_schema._SCHEMA_LOCATION_RE.finditer(text):
                assert m.group(3) in saml_schema.SCHEMA_FILES, (name, m.group(3))
    assert not os.path.exists(d)
    with pytest.raises(SchemaSetupError):
        saml_schema.localize('<import namespace="urn:x" schemaLocation="http://example.org/x.xsd"/>')


@pytest.mark.parametrize("engine", ENGINES)
def test_validator_accepts_a_minimal_sp_metadata(engine):
    assert validate_metadata(MINIMAL, engine=engine) == []


def test_validator_opens_no_socket(monkeypatch):
    """Building the schema and validating need no network: with every
    socket connect refused, the schema is rebuilt and a document checked."""
    import socket

    def refuse(*a, **kw):
        raise AssertionError("the validator tried to open a connection: %r" % (a,))
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    saml_schema.xmlschema_metadata_schema.cache_clear()
    try:
        for engine in ENGINES:
            assert validate_metadata(MINIMAL, engine=engine) == [], engine
            assert validate_metadata(MINIMAL.replace(b'index="0"', b""), engine=engine), engine
    finally:
        saml_schema.xmlschema_metadata_schema.cache_clear()


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("doc", [
    MINIMAL.replace(b' entityID="https://sp.example/md"', b""),
    MINIMAL.replace(b'index="0"', b'index="0" Bogus="1"'),
    MINIMAL.replace(b"QUJDRA==", b"not base64!"),
    # a schema-valid element, but not an entity's metadata
    b'<md:KeyDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata"/>',
    b"<md:EntityDescriptor",
    b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e "e">]><x>&e;</x>',
], ids=["no_entity_id", "unknown_attribute", "bad_base64", "other_root", "not_xml", "doctype"])
def test_validator_rejects_broken_documents(engine, doc):
    errors = validate_metadata(doc, engine=engine)
    assert errors, "accepted:\n%s" % doc.decode()


# --------------------------------------------------------------------------
# the fleet's metadata
# --------------------------------------------------------------------------

@on_redis
@pytest.mark.parametrize("engine", ENGINES)
def test_metadata_is_schema_valid_on_every_replica_and_the_balancer(fleet, engine):
    for name, base in fleet.targets():
        xml = fetch_metadata(base + httpd_fleet.ENDPOINT + "/metadata")
        errors = validate_metadata(xml, engine=engine)
        assert errors == [], "%s: metadata invalid (%s):\n%s\n%s" % (
            name, engine, "\n".join(errors), xml.decode("utf-8", "replace"))


@on_redis
def test_metadata_content_type_on_every_replica_and_the_balancer(fleet):
    for name, base in fleet.targets():
        r = get(base + httpd_fleet.ENDPOINT + "/metadata")
        assert r.status_code == 200, name
        assert media_type(r) == CONTENT_TYPE, (name, r.headers.get("Content-Type"))


@on_redis
def test_metadata_is_the_same_document_everywhere(fleet):
    """UseCanonicalName On + the public ServerName: every replica describes
    the public SP, not itself."""
    docs = {name: fetch_metadata(base + httpd_fleet.ENDPOINT + "/metadata")
            for name, base in fleet.targets()}
    assert len(set(docs.values())) == 1, docs


@on_redis
def test_metadata_names_entity_id_public_endpoints_and_certificate(fleet):
    public_base = "http://127.0.0.1:%d/saml" % fleet.balancer_port
    assert fleet.acs_url == public_base + "/acs"
    for name, base in fleet.targets():
        xml = fetch_metadata(base + httpd_fleet.ENDPOINT + "/metadata")
        try:
            check_sp_metadata(xml, fleet.entity_id, public_base, fleet.sp["cert_file"])
        except AssertionError as e:
            raise AssertionError("%s: %s\n%s" % (name, e, xml.decode("utf-8", "replace")))


@on_redis
def test_metadata_entity_id_is_the_configured_one(fleet, sp_config):
    from idp_tools import SP_ENTITY_ID
    root = parse(fetch_metadata(fleet.public + httpd_fleet.ENDPOINT + "/metadata"))
    assert root.get("entityID") == sp_config["entity_id"] == SP_ENTITY_ID


@on_redis
@pytest.mark.parametrize("engine", ENGINES)
def test_negative_control_unchanged_reserialized_document_stays_valid(fleet, engine):
    """The mutations below re-serialize with ElementTree: unchanged, that
    round trip must stay valid, so a rejection is the mutation's doing."""
    xml = fetch_metadata(fleet.public + httpd_fleet.ENDPOINT + "/metadata")
    again = serialize(ET.fromstring(xml))
    assert validate_metadata(again, engine=engine) == []


@on_redis
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_negative_control_broken_metadata_is_reported_invalid(fleet, engine, mutation):
    xml = fetch_metadata(fleet.public + httpd_fleet.ENDPOINT + "/metadata")
    root = ET.fromstring(xml)
    before = serialize(root)
    mutate, word = MUTATIONS[mutation]
    mutate(root)
    broken = serialize(root)
    assert broken != before, "mutation %s changed nothing" % mutation
    errors = validate_metadata(broken, engine=engine)
    assert errors, "%s: %s reports the broken document valid:\n%s" % (
        mutation, engine, broken.decode("utf-8", "replace"))
    assert any(word.lower() in e.lower() for e in errors), \
        "%s: %s refuses it, but not for that reason:\n%s" % (mutation, engine, "\n".join(errors))


def _replace_certificates(root, der):
    for c in root.iter(DS + "X509Certificate"):
        c.text = base64.b64encode(der).decode("ascii")


CONTENT_MUTATIONS = {
    "other_entity_id": lambda r, o: r.set("entityID", "https://other.example/md"),
    "acs_redirect_binding": lambda r, o: _acs(r).set("Binding", HTTP_REDIRECT),
    "acs_at_a_replica": lambda r, o: _acs(r).set("Location", o["replica_base"] + "/acs"),
    "slo_post_binding": lambda r, o: _slo(r).set("Binding", HTTP_POST),
    "slo_elsewhere": lambda r, o: _slo(r).set("Location", o["public_base"] + "/logout"),
    "another_certificate": lambda r, o: _replace_certificates(r, o["other_der"]),
    "no_signing_key": lambda r, o: [_sp(r).remove(k) for k in _sp(r).findall(MD + "KeyDescriptor")
                                    if k.get("use") != "encryption"],
    "no_encryption_key": lambda r, o: [_sp(r).remove(k) for k in _sp(r).findall(MD + "KeyDescriptor")
                                       if k.get("use") == "encryption"],
    "rsa_1_5_offered": lambda r, o: [m.set("Algorithm", "http://www.w3.org/2001/04/xmlenc#rsa-1_5")
                                     for m in r.iter(MD + "EncryptionMethod")
                                     if m.get("Algorithm").endswith("rsa-oaep-mgf1p")],
}


@on_redis
@pytest.mark.parametrize("mutation", sorted(CONTENT_MUTATIONS))
def test_negative_control_content_checks_refuse_a_wrong_document(fleet, idps, mutation):
    """check_sp_metadata accepts the served document and refuses it with a
    wrong entityID, ACS, SLO or certificate (all still schema-valid)."""
    public_base = fleet.public + httpd_fleet.ENDPOINT
    xml = fetch_metadata(fleet.public + httpd_fleet.ENDPOINT + "/metadata")
    check_sp_metadata(xml, fleet.entity_id, public_base, fleet.sp["cert_file"])
    root = ET.fromstring(xml)
    CONTENT_MUTATIONS[mutation](root, {
        "public_base": public_base,
        "replica_base": fleet.replicas[0].base_url + httpd_fleet.ENDPOINT,
        "other_der": cert_der(idps["idp1"].cert_path)})
    wrong = serialize(root)
    assert validate_metadata(wrong) == [], "the mutation should keep the document schema-valid"
    with pytest.raises(AssertionError):
        check_sp_metadata(wrong, fleet.entity_id, public_base, fleet.sp["cert_file"])


# --------------------------------------------------------------------------
# an instance of our own: ReplaySPEndpointPath /auth/sp, an https ServerName
# --------------------------------------------------------------------------

OWN_SERVER_NAME = "https://sp.rsp.test.example:8443"
OWN_ENDPOINT = "/auth/sp"
# a URI that needs escaping in XML (&)
OWN_ENTITY_ID = "https://sp.rsp.test.example/metadata?tenant=a&realm=b"


@pytest.fixture(scope="module")
def own_sp(request, workdir, module_so, redis, sp_config):
    """One httpd with the module, ServerName https://sp.rsp.test.example:8443,
    UseCanonicalName On, ReplaySPEndpointPath /auth/sp; stopped at the end
    of this module (finalizer registered before it starts)."""
    sp = dict(sp_config, entity_id=OWN_ENTITY_ID)
    h = Httpd(os.path.join(workdir, "metadata", "authsp"), "md-authsp",
              server_name=OWN_SERVER_NAME, canonical=True,
              modules=[("replay_sp_module", module_so)],
              log_level="warn replay_sp:info", threads=4, start_servers=1,
              body=sp_conf_body(redis.url, sp,
                                location_extra="ReplaySPEndpointPath %s" % OWN_ENDPOINT))
    request.addfinalizer(h.stop)
    start_off = h.log_size()
    try:
        h.start()
    except HarnessError as e:
        pytest.fail("own instance did not start:\n%s" % e, pytrace=False)
    bad = httpd_fleet.bad_log_lines(h._log_since(start_off).splitlines())
    if bad:
        pytest.fail("unexpected error-log lines at start-up:\n" + "\n".join(bad), pytrace=False)
    h.sp = sp
    return h


@pytest.mark.parametrize("engine", ENGINES)
def test_endpoint_path_metadata_is_schema_valid(own_sp, engine):
    xml = fetch_metadata(own_sp.base_url + OWN_ENDPOINT + "/metadata")
    errors = validate_metadata(xml, engine=engine)
    assert errors == [], "\n".join(errors) + "\n" + xml.decode("utf-8", "replace")


def test_endpoint_path_urls_follow_endpoint_and_server_name(own_sp):
    xml = fetch_metadata(own_sp.base_url + OWN_ENDPOINT + "/metadata")
    try:
        check_sp_metadata(xml, OWN_ENTITY_ID, OWN_SERVER_NAME + OWN_ENDPOINT,
                          own_sp.sp["cert_file"])
    except AssertionError as e:
        raise AssertionError("%s\n%s" % (e, xml.decode("utf-8", "replace")))
    assert b"&amp;realm=b" in xml   # escaped in the document, exact once parsed


def test_endpoint_path_content_type(own_sp):
    r = get(own_sp.base_url + OWN_ENDPOINT + "/metadata")
    assert r.status_code == 200 and media_type(r) == CONTENT_TYPE, \
        (r.status_code, r.headers.get("Content-Type"))


def test_endpoint_path_default_path_serves_no_metadata(own_sp):
    r = get(own_sp.base_url + httpd_fleet.ENDPOINT + "/metadata")
    assert r.status_code != 200, r.text[:300]
    assert CONTENT_TYPE not in r.headers.get("Content-Type", "")
