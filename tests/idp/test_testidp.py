"""Self-tests of the test IdP (tests/idp/rsp_testidp.py).

Run:  /usr/bin/python3 -m pytest tests/idp -q

Signatures are checked by verifiers independent of the minting code:
a Lasso *SP-side* login (lasso.Server for an SP that knows the IdP's
metadata, Login.processAuthnResponseMsg) and the xmlsec1 command line tool
with the IdP certificate as the only trusted key.  Every wait is bounded.
"""

import base64
import html as html_mod
import http.client
import concurrent.futures
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import types
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
import zlib

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import lasso  # noqa: E402
import rsp_testidp as tidp  # noqa: E402
from rsp_testidp import TestIdP, make_keypair, sp_metadata  # noqa: E402

SP = "https://sp.test.example/saml"
ACS = "https://sp.test.example/saml/postResponse"
PYTHON = "/usr/bin/python3"
SCRIPT = os.path.join(HERE, "rsp_testidp.py")
NS = {"samlp": tidp.SAMLP_NS, "saml": tidp.SAML_NS, "md": tidp.MD_NS,
      "ds": tidp.DS_NS}
XMLSEC_TIMEOUT = 30
CLI_TIMEOUT = 60
SERVE_START_TIMEOUT = 30
SERVE_STOP_TIMEOUT = 10
HTTP_TIMEOUT = 10
T0 = 1_800_000_000          # 2027-01-15T08:00:00Z, a fixed "now"


# --------------------------------------------------------------------------
# fixtures and independent verifiers
# --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def idp(tmp_path_factory):
    return TestIdP(str(tmp_path_factory.mktemp("idp")))


@pytest.fixture(scope="module")
def sp_files(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("sp"))
    key, crt = make_keypair(d, "sp", "rsp test sp")
    md = os.path.join(d, "sp-metadata.xml")
    with open(md, "w") as f:
        f.write(sp_metadata(SP, ACS, crt))
    return md, key, crt


def lasso_sp_login(sp_files, idp_metadata_path, b64):
    """SP-side Lasso processing; raises lasso.Error if Lasso refuses."""
    md, key, crt = sp_files
    server = lasso.Server(md, key, None, crt)
    server.addProvider(lasso.PROVIDER_ROLE_IDP, idp_metadata_path)
    login = lasso.Login(server)
    login.processAuthnResponseMsg(b64)
    return login


def xmlsec_verify(tmp_path, xml, cert, xpath):
    """True if xmlsec1 verifies the ds:Signature selected by xpath with cert's
    key.  --enabled-key-data key-name: ignore keys/certs carried in the
    signature's KeyInfo; only the given certificate counts."""
    path = tmp_path / ("msg-%d.xml" % time.monotonic_ns())
    path.write_text(xml)
    res = subprocess.run(
        ["xmlsec1", "--verify", "--enabled-key-data", "key-name",
         "--pubkey-cert-pem", cert,
         "--id-attr:ID", "urn:oasis:names:tc:SAML:2.0:assertion:Assertion",
         "--id-attr:ID", "urn:oasis:names:tc:SAML:2.0:protocol:Response",
         "--node-xpath", xpath, str(path)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, timeout=XMLSEC_TIMEOUT)
    return res.returncode == 0


RESP_SIG = "/*[local-name()='Response']/*[local-name()='Signature']"


def assertion_sig(aid):
    return ("//*[local-name()='Assertion'][@ID='%s']/*[local-name()='Signature']"
            % aid)


def parse(xml):
    return ET.fromstring(xml)


def sigs(root):
    """(response signed?, [assertion IDs that carry a Signature])"""
    resp = root.find("ds:Signature", NS) is not None
    signed = [a.get("ID") for a in root.findall("saml:Assertion", NS)
              if a.find("ds:Signature", NS) is not None]
    return resp, signed


def iso(epoch):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


# --------------------------------------------------------------------------
# keys and metadata
# --------------------------------------------------------------------------

def test_make_keypair(tmp_path):
    key, crt = make_keypair(str(tmp_path / "k"), "x", "some cn/with slash")
    assert key == str(tmp_path / "k" / "x.key")
    assert crt == str(tmp_path / "k" / "x.crt")
    text = subprocess.run(["openssl", "x509", "-in", crt, "-noout", "-text"],
                          capture_output=True, text=True, timeout=30,
                          check=True).stdout
    assert "Public-Key: (2048 bit)" in text
    assert "sha256WithRSAEncryption" in text
    assert "some cn/with slash" in text

    def modulus(kind, path):
        return subprocess.run(["openssl", kind, "-in", path, "-noout", "-modulus"],
                              capture_output=True, text=True, timeout=30,
                              check=True).stdout
    assert modulus("rsa", key) == modulus("x509", crt)


def test_sp_metadata(tmp_path, sp_files):
    root = parse(sp_metadata(SP, ACS))
    assert root.tag == "{%s}EntityDescriptor" % tidp.MD_NS
    assert root.get("entityID") == SP
    acs = root.findall("md:SPSSODescriptor/md:AssertionConsumerService", NS)
    assert [(a.get("Binding"), a.get("Location")) for a in acs] == \
        [(tidp.BINDING_POST, ACS)]
    assert root.find(".//md:KeyDescriptor", NS) is None
    with_cert = parse(sp_metadata(SP, ACS, sp_files[2]))
    kd = with_cert.find("md:SPSSODescriptor/md:KeyDescriptor", NS)
    assert kd.get("use") == "signing"
    assert kd.find(".//ds:X509Certificate", NS).text.strip()
    # Lasso accepts it as an SP.
    server = lasso.Server(sp_files[0], sp_files[1], None, sp_files[2])
    assert server.providerId == SP


def test_idp_metadata_and_key_reuse(tmp_path):
    wd = str(tmp_path / "idp")
    a = TestIdP(wd, entity_id="https://idp.example/x",
                sso_url="http://127.0.0.1:1234/idp/sso")
    assert a.entity_id == "https://idp.example/x"
    assert a.key_path == os.path.join(wd, "idp.key")
    assert a.cert_path == os.path.join(wd, "idp.crt")
    root = ET.parse(a.metadata_path).getroot()
    assert root.get("entityID") == "https://idp.example/x"
    desc = root.find("md:IDPSSODescriptor", NS)
    kd = desc.find("md:KeyDescriptor", NS)
    assert kd.get("use") == "signing"
    pem = open(a.cert_path).read()
    body = "".join(pem.split("-----")[2].split())
    assert "".join(kd.find(".//ds:X509Certificate", NS).text.split()) == body
    sso = desc.findall("md:SingleSignOnService", NS)
    assert [(s.get("Binding"), s.get("Location")) for s in sso] == \
        [(tidp.BINDING_REDIRECT, "http://127.0.0.1:1234/idp/sso")]
    # Lasso loads it as an IdP.
    s = lasso.Server()
    s.addProvider(lasso.PROVIDER_ROLE_IDP, a.metadata_path)
    assert "https://idp.example/x" in s.providers.keys()
    # Same workdir again: key and certificate reused.
    key_before = open(a.key_path).read()
    b = TestIdP(wd)
    assert open(b.key_path).read() == key_before
    assert open(b.cert_path).read() == pem
    assert b.entity_id == "https://idp.test.example/idp"


# --------------------------------------------------------------------------
# signatures
# --------------------------------------------------------------------------

def test_signed_response_verifies(idp, sp_files, tmp_path):
    xml = idp.mint_xml(SP, ACS, assertion_id="_a1")
    root = parse(xml)
    assert sigs(root) == (True, ["_a1"])
    assert 'Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"' in xml
    assert 'Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"' in xml
    # Each signature references its own element.
    refs = [r.get("URI") for r in root.iter("{%s}Reference" % tidp.DS_NS)]
    assert refs == ["#" + root.get("ID"), "#_a1"]
    assert xmlsec_verify(tmp_path, xml, idp.cert_path, RESP_SIG)
    assert xmlsec_verify(tmp_path, xml, idp.cert_path, assertion_sig("_a1"))
    b64 = base64.b64encode(xml.encode()).decode()
    login = lasso_sp_login(sp_files, idp.metadata_path, b64)
    assert login.response.assertion[0].id == "_a1"
    assert login.response.assertion[0].issuer.content == idp.entity_id
    assert login.response.assertion[0].subject.nameId.content == "alice"


def test_mint_is_base64_of_signed_xml(idp, sp_files):
    b64 = idp.mint(SP, ACS, assertion_id="_b64")
    assert re.fullmatch(r"[A-Za-z0-9+/]+={0,2}", b64)
    xml = base64.b64decode(b64, validate=True).decode("utf-8")
    assert parse(xml).find("saml:Assertion", NS).get("ID") == "_b64"
    lasso_sp_login(sp_files, idp.metadata_path, b64)


def test_unsigned_is_refused(idp, sp_files):
    b64 = idp.mint(SP, ACS, sign_response=False, sign_assertion=False)
    xml = base64.b64decode(b64).decode()
    assert sigs(parse(xml)) == (False, [])
    assert "Signature" not in xml
    with pytest.raises(lasso.Error):
        lasso_sp_login(sp_files, idp.metadata_path, b64)


def test_only_assertion_signed(idp, sp_files, tmp_path):
    xml = idp.mint_xml(SP, ACS, assertion_id="_oa", sign_response=False)
    assert sigs(parse(xml)) == (False, ["_oa"])
    assert xmlsec_verify(tmp_path, xml, idp.cert_path, assertion_sig("_oa"))
    login = lasso_sp_login(sp_files, idp.metadata_path,
                           base64.b64encode(xml.encode()).decode())
    assert login.response.assertion[0].id == "_oa"


def test_only_response_signed(idp, sp_files, tmp_path):
    xml = idp.mint_xml(SP, ACS, assertion_id="_or", sign_assertion=False)
    assert sigs(parse(xml)) == (True, [])
    assert xmlsec_verify(tmp_path, xml, idp.cert_path, RESP_SIG)
    login = lasso_sp_login(sp_files, idp.metadata_path,
                           base64.b64encode(xml.encode()).decode())
    assert login.response.assertion[0].id == "_or"


SIGNING = [dict(), dict(sign_response=False), dict(sign_assertion=False)]


@pytest.mark.parametrize("kw", SIGNING, ids=["both", "assertion", "response"])
def test_tamper_breaks_verification(idp, sp_files, tmp_path, kw):
    b64 = idp.mint(SP, ACS, assertion_id="_t", name_id="alice", **kw)
    lasso_sp_login(sp_files, idp.metadata_path, b64)       # sane before
    bad = TestIdP.tamper(b64)
    xml = base64.b64decode(bad).decode()
    nid = parse(xml).find("saml:Assertion/saml:Subject/saml:NameID", NS).text
    assert nid != "alice"
    with pytest.raises(lasso.Error):
        lasso_sp_login(sp_files, idp.metadata_path, bad)
    resp_signed, signed = sigs(parse(xml))
    if resp_signed:
        assert not xmlsec_verify(tmp_path, xml, idp.cert_path, RESP_SIG)
    if signed:
        assert not xmlsec_verify(tmp_path, xml, idp.cert_path, assertion_sig("_t"))


@pytest.mark.parametrize("kw", SIGNING, ids=["both", "assertion", "response"])
def test_same_entity_other_key_fails(idp, sp_files, tmp_path, kw):
    rogue = TestIdP(str(tmp_path / "rogue"), entity_id=idp.entity_id)
    assert open(rogue.cert_path).read() != open(idp.cert_path).read()
    b64 = rogue.mint(SP, ACS, assertion_id="_r", **kw)
    # Good under its own metadata, refused under the real IdP's.
    lasso_sp_login(sp_files, rogue.metadata_path, b64)
    with pytest.raises(lasso.Error):
        lasso_sp_login(sp_files, idp.metadata_path, b64)
    xml = base64.b64decode(b64).decode()
    resp_signed, signed = sigs(parse(xml))
    if resp_signed:
        assert not xmlsec_verify(tmp_path, xml, idp.cert_path, RESP_SIG)
        assert xmlsec_verify(tmp_path, xml, rogue.cert_path, RESP_SIG)
    if signed:
        assert not xmlsec_verify(tmp_path, xml, idp.cert_path, assertion_sig("_r"))
        assert xmlsec_verify(tmp_path, xml, rogue.cert_path, assertion_sig("_r"))


# --------------------------------------------------------------------------
# fields
# --------------------------------------------------------------------------

def test_fields_as_asked(idp, sp_files, tmp_path):
    xml = idp.mint_xml(
        SP, ACS, assertion_id="_fields", name_id="bob", now=T0 + 0.9,
        issue_instant_offset=-7, not_before_offset=-60,
        not_on_or_after_offset=600, scd_not_on_or_after_offset=120,
        scd_not_before_offset=-5, audience="https://aud.example/",
        recipient="https://rcpt.example/acs",
        destination="https://dest.example/acs",
        session_not_on_or_after_offset=3600, session_index="_sess1",
        in_response_to="_req42", issuer="https://other-issuer.example/",
        confirmation_method="urn:oasis:names:tc:SAML:2.0:cm:holder-of-key",
        attributes={"mail": ["bob@example.org", "b@example.net"],
                    "role": ["admin"]})
    r = parse(xml)
    assert r.get("Version") == "2.0"
    assert r.get("IssueInstant") == iso(T0 - 7)
    assert r.get("Destination") == "https://dest.example/acs"
    assert r.get("InResponseTo") == "_req42"
    assert r.find("saml:Issuer", NS).text == "https://other-issuer.example/"
    assert r.find("samlp:Status/samlp:StatusCode", NS).get("Value") == \
        "urn:oasis:names:tc:SAML:2.0:status:Success"
    (a,) = r.findall("saml:Assertion", NS)
    assert a.get("ID") == "_fields"
    assert a.get("Version") == "2.0"
    assert a.get("IssueInstant") == iso(T0 - 7)
    assert a.find("saml:Issuer", NS).text == "https://other-issuer.example/"
    assert a.find("saml:Subject/saml:NameID", NS).text == "bob"
    sc = a.find("saml:Subject/saml:SubjectConfirmation", NS)
    assert sc.get("Method") == "urn:oasis:names:tc:SAML:2.0:cm:holder-of-key"
    scd = sc.find("saml:SubjectConfirmationData", NS)
    assert scd.attrib == {"NotBefore": iso(T0 - 5),
                          "NotOnOrAfter": iso(T0 + 120),
                          "Recipient": "https://rcpt.example/acs",
                          "InResponseTo": "_req42"}
    cond = a.find("saml:Conditions", NS)
    assert cond.attrib == {"NotBefore": iso(T0 - 60),
                           "NotOnOrAfter": iso(T0 + 600)}
    assert [x.text for x in cond.findall("saml:AudienceRestriction/saml:Audience", NS)] \
        == ["https://aud.example/"]
    st = a.find("saml:AuthnStatement", NS)
    assert st.get("SessionIndex") == "_sess1"
    assert st.get("SessionNotOnOrAfter") == iso(T0 + 3600)
    assert st.get("AuthnInstant") == iso(T0 - 7)
    attrs = {at.get("Name"): [v.text for v in at.findall("saml:AttributeValue", NS)]
             for at in a.findall("saml:AttributeStatement/saml:Attribute", NS)}
    assert attrs == {"mail": ["bob@example.org", "b@example.net"],
                     "role": ["admin"]}
    # All of it is under the signatures.
    assert xmlsec_verify(tmp_path, xml, idp.cert_path, RESP_SIG)
    assert xmlsec_verify(tmp_path, xml, idp.cert_path, assertion_sig("_fields"))


def test_defaults(idp):
    before = int(time.time())
    r = parse(idp.mint_xml(SP, ACS))
    after = int(time.time())
    a = r.find("saml:Assertion", NS)
    assert re.fullmatch(r"_[0-9a-f]{32}", a.get("ID"))
    assert re.fullmatch(r"_[0-9a-f]{32}", r.get("ID"))
    assert r.get("ID") != a.get("ID")
    assert r.get("Destination") == ACS
    assert "InResponseTo" not in r.attrib
    assert r.find("saml:Issuer", NS).text == idp.entity_id
    assert a.find("saml:Issuer", NS).text == idp.entity_id
    assert a.find("saml:Subject/saml:NameID", NS).text == "alice"
    sc = a.find("saml:Subject/saml:SubjectConfirmation", NS)
    assert sc.get("Method") == tidp.BEARER
    scd = sc.find("saml:SubjectConfirmationData", NS)
    assert set(scd.attrib) == {"NotOnOrAfter", "Recipient"}
    assert scd.get("Recipient") == ACS
    cond = a.find("saml:Conditions", NS)
    assert cond.find("saml:AudienceRestriction/saml:Audience", NS).text == SP
    st = a.find("saml:AuthnStatement", NS)
    assert re.fullmatch(r"_[0-9a-f]{32}", st.get("SessionIndex"))
    assert "SessionNotOnOrAfter" not in st.attrib
    assert a.find("saml:AttributeStatement", NS) is None
    # Times: whole seconds, UTC "Z", offsets applied.
    for value in (r.get("IssueInstant"), cond.get("NotBefore"),
                  cond.get("NotOnOrAfter"), scd.get("NotOnOrAfter")):
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", value)
    ii = r.get("IssueInstant")
    assert iso(before) <= ii <= iso(after)
    assert iso(before - 30) <= cond.get("NotBefore") <= iso(after - 30)
    assert iso(before + 300) <= cond.get("NotOnOrAfter") <= iso(after + 300)
    assert iso(before + 300) <= scd.get("NotOnOrAfter") <= iso(after + 300)
    # Fresh IDs every time.
    a2 = parse(idp.mint_xml(SP, ACS)).find("saml:Assertion", NS)
    assert a2.get("ID") != a.get("ID")


def test_omissions(idp, sp_files, tmp_path):
    xml = idp.mint_xml(SP, ACS, assertion_id="_om", now=T0,
                       not_before_offset=None, not_on_or_after_offset=None,
                       scd_not_on_or_after_offset=None, audience="")
    a = parse(xml).find("saml:Assertion", NS)
    cond = a.find("saml:Conditions", NS)
    assert cond.attrib == {}
    assert cond.find("saml:AudienceRestriction", NS) is None
    scd = a.find("saml:Subject/saml:SubjectConfirmation/saml:SubjectConfirmationData", NS)
    assert scd.attrib == {"Recipient": ACS}
    assert xmlsec_verify(tmp_path, xml, idp.cert_path, assertion_sig("_om"))
    lasso_sp_login(sp_files, idp.metadata_path,
                   base64.b64encode(xml.encode()).decode())


def test_assertion_count(idp, sp_files, tmp_path):
    xml0 = idp.mint_xml(SP, ACS, assertions=0)
    assert parse(xml0).findall("saml:Assertion", NS) == []
    with pytest.raises(lasso.Error):
        lasso_sp_login(sp_files, idp.metadata_path,
                       base64.b64encode(xml0.encode()).decode())
    xml2 = idp.mint_xml(SP, ACS, assertion_id="_first", assertions=2)
    ids = [a.get("ID") for a in parse(xml2).findall("saml:Assertion", NS)]
    assert len(ids) == 2 and ids[0] == "_first" and ids[1] != ids[0]
    assert sigs(parse(xml2)) == (True, ids)
    for aid in ids:
        assert xmlsec_verify(tmp_path, xml2, idp.cert_path, assertion_sig(aid))
    assert xmlsec_verify(tmp_path, xml2, idp.cert_path, RESP_SIG)
    with pytest.raises(ValueError):
        idp.mint_xml(SP, ACS, assertions=3)


# --------------------------------------------------------------------------
# command line
# --------------------------------------------------------------------------

def run_cli(*args):
    res = subprocess.run([PYTHON, SCRIPT] + list(args), stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=CLI_TIMEOUT)
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_cli_mint(tmp_path, sp_files):
    wd = str(tmp_path / "cli")
    out = run_cli("mint", "--workdir", wd, "--sp-entity-id", SP, "--acs-url", ACS,
                  "--assertion-id", "_cli1", "--name-id", "carol",
                  "--not-before-offset", "none", "--attribute", "mail=c@x")
    b64 = out.strip()
    assert "\n" not in b64
    xml = base64.b64decode(b64).decode()
    a = parse(xml).find("saml:Assertion", NS)
    assert a.get("ID") == "_cli1"
    assert a.find("saml:Subject/saml:NameID", NS).text == "carol"
    assert "NotBefore" not in a.find("saml:Conditions", NS).attrib
    md = os.path.join(wd, "idp-metadata.xml")
    lasso_sp_login(sp_files, md, b64)

    unsigned = run_cli("mint", "--workdir", wd, "--sp-entity-id", SP,
                       "--acs-url", ACS, "--unsigned").strip()
    assert "Signature" not in base64.b64decode(unsigned).decode()
    with pytest.raises(lasso.Error):
        lasso_sp_login(sp_files, md, unsigned)


# --------------------------------------------------------------------------
# serve mode
# --------------------------------------------------------------------------

def read_line(proc, timeout):
    """One stdout line of proc, waiting at most timeout seconds."""
    deadline = time.monotonic() + timeout
    buf = b""
    fd = proc.stdout.fileno()
    while not buf.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no line from the IdP within %ss" % timeout)
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 1)
            if not chunk:
                raise EOFError("IdP exited: rc=%s" % proc.poll())
            buf += chunk
    return buf.decode()


def http_get(url):
    try:
        with urllib.request.urlopen(url, timeout=HTTP_TIMEOUT) as r:
            return r.status, r.headers.get("Content-Type"), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type"), e.read().decode()


@pytest.fixture
def served(tmp_path):
    wd = str(tmp_path / "served")
    proc = subprocess.Popen(
        [PYTHON, SCRIPT, "serve", "--workdir", wd, "--sp-entity-id", SP,
         "--acs-url", ACS, "--port", "0", "--entity-id", "https://idp.served/",
         "--quiet"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    try:
        line = read_line(proc, SERVE_START_TIMEOUT)
        m = re.fullmatch(r"PORT (\d+)\n", line)
        assert m, line
        yield proc, "http://127.0.0.1:%s" % m.group(1), wd
    finally:
        if proc.poll() is None:
            proc.kill()                       # by PID (Popen object)
            proc.wait(timeout=SERVE_STOP_TIMEOUT)
        proc.stdout.close()


def test_serve(served, sp_files):
    proc, base, wd = served
    md_path = os.path.join(wd, "idp-metadata.xml")

    status, ctype, body = http_get(base + "/idp/metadata")
    assert status == 200 and ctype.startswith("application/samlmetadata+xml")
    assert body == open(md_path).read()
    root = parse(body)
    assert root.get("entityID") == "https://idp.served/"
    assert root.find(".//md:SingleSignOnService", NS).get("Location") == \
        base + "/idp/sso"

    # IdP-initiated sign-in: auto-POST form to the ACS.
    status, ctype, page = http_get(base + "/idp/sso?user=bob&RelayState=%2Fx%3Fa%3D1%26b")
    assert status == 200 and ctype.startswith("text/html")
    assert re.search(r'<form method="post" action="%s">' % re.escape(ACS), page)
    assert "document.forms[0].submit()" in page
    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"/>', page))
    assert set(fields) == {"SAMLResponse", "RelayState"}
    assert html_mod.unescape(fields["RelayState"]) == "/x?a=1&b"
    b64 = html_mod.unescape(fields["SAMLResponse"])
    login = lasso_sp_login(sp_files, md_path, b64)
    assert login.response.assertion[0].subject.nameId.content == "bob"
    assert login.response.assertion[0].issuer.content == "https://idp.served/"

    # Plain mint endpoint with a chosen assertion ID.
    status, ctype, body = http_get(base + "/idp/mint?user=alice&id=_abc")
    assert status == 200 and ctype.startswith("text/plain")
    login = lasso_sp_login(sp_files, md_path, body.strip())
    assert login.response.assertion[0].id == "_abc"

    # SP-initiated (HTTP-Redirect AuthnRequest): InResponseTo follows the request.
    req = ('<samlp:AuthnRequest xmlns:samlp="%s" ID="_req77" Version="2.0" '
           'IssueInstant="2027-01-01T00:00:00Z" AssertionConsumerServiceURL="%s"/>'
           % (tidp.SAMLP_NS, ACS))
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    sreq = base64.b64encode(c.compress(req.encode()) + c.flush()).decode()
    status, _, page = http_get(base + "/idp/sso?" + urllib.parse.urlencode(
        {"SAMLRequest": sreq, "RelayState": "r"}))
    assert status == 200
    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"/>', page))
    xml = base64.b64decode(fields["SAMLResponse"]).decode()
    r = parse(xml)
    assert r.get("InResponseTo") == "_req77"
    assert r.find(".//saml:SubjectConfirmationData", NS).get("InResponseTo") == "_req77"

    # Bad input is refused, not crashed on.
    assert http_get(base + "/idp/mint?id=not%20an%20id")[0] == 400
    assert http_get(base + "/idp/sso?SAMLRequest=%%%")[0] == 400
    assert http_get(base + "/nope")[0] == 404
    assert http_get(base + "/idp/mint?x=" + "a" * 9000)[0] == 414

    # Concurrent requests all get a verifiable response.
    with concurrent.futures.ThreadPoolExecutor(8) as ex:
        got = list(ex.map(lambda i: http_get(base + "/idp/mint?user=u%d" % i),
                          range(16)))
    assert [g[0] for g in got] == [200] * 16
    lasso_sp_login(sp_files, md_path, got[-1][2].strip())

    # Stops on SIGTERM, by PID, within a bound, with status 0, even with an
    # idle client connection open.
    port = urllib.parse.urlsplit(base).port
    idle = socket.create_connection(("127.0.0.1", port), timeout=HTTP_TIMEOUT)
    t = time.monotonic()
    os.kill(proc.pid, signal.SIGTERM)
    try:
        assert proc.wait(timeout=SERVE_STOP_TIMEOUT) == 0
        assert time.monotonic() - t < SERVE_STOP_TIMEOUT
    finally:
        idle.close()


def test_cli_mint_keeps_served_metadata(served):
    """A `mint` in the workdir of a running `serve` keeps its entityID/SSO URL."""
    proc, base, wd = served
    before = open(os.path.join(wd, "idp-metadata.xml")).read()
    run_cli("mint", "--workdir", wd, "--sp-entity-id", SP, "--acs-url", ACS)
    assert open(os.path.join(wd, "idp-metadata.xml")).read() == before


def test_tools_present():
    assert shutil.which("xmlsec1") and shutil.which("openssl")


# --------------------------------------------------------------------------
# Single Logout (HTTP-Redirect binding) and signed AuthnRequests
#
# python3-lasso plays the SP: a lasso.Server for the SP (its own key pair,
# metadata with an HTTP-Redirect SingleLogoutService) that knows the IdP's
# metadata; lasso.Login / lasso.Logout on its side.  Query signatures are
# also checked by an independent verifier: openssl dgst over the signed
# string (SAMLRequest|SAMLResponse, RelayState, SigAlg as sent).
# --------------------------------------------------------------------------

SLO = "https://sp.test.example/saml/slo"
SHA256 = tidp.SIG_ALG_RSA_SHA256
SHA1 = "http://www.w3.org/2000/09/xmldsig#rsa-sha1"
OPENSSL_TIMEOUT = 30


@pytest.fixture(scope="module")
def slo_sp(tmp_path_factory):
    """(SP metadata with SLO, key, cert) for the SLO tests."""
    d = str(tmp_path_factory.mktemp("slo-sp"))
    key, crt = make_keypair(d, "sp", "rsp test sp slo")
    return sp_metadata(SP, ACS, crt, slo_url=SLO), key, crt


@pytest.fixture(scope="module")
def other_key(tmp_path_factory):
    """A key pair the SP metadata does not name (a forger's)."""
    return make_keypair(str(tmp_path_factory.mktemp("forger")), "forger", "forger")


def lasso_sp_server(slo_sp, idp_md, key=None, crt=None, sig=lasso.SIGNATURE_METHOD_RSA_SHA256):
    """The SP as a lasso.Server; key/crt override the metadata's key pair
    (to sign with a key the IdP does not know)."""
    md, k, c = slo_sp
    with open(key or k) as f:
        key_pem = f.read()
    with open(crt or c) as f:
        crt_pem = f.read()
    server = lasso.Server.newFromBuffers(md, key_pem, None, crt_pem)
    server.signatureMethod = sig
    server.addProviderFromBuffer(lasso.PROVIDER_ROLE_IDP, idp_md)
    return server


def sp_session(server, idp, session_index="_sess1", name_id="alice"):
    """A Lasso SP session dump after a real sign-in with a minted response."""
    login = lasso.Login(server)
    login.processAuthnResponseMsg(idp.mint(SP, ACS, name_id=name_id,
                                           session_index=session_index))
    login.acceptSso()
    return login.session.dump()


def sp_logout_request(server, idp, session_dump, relay=None, hint=None):
    """SP-initiated LogoutRequest URL the way the module builds it
    (Logout.initRequest on a session, HTTP-Redirect)."""
    logout = lasso.Logout(server)
    if hint is not None:
        logout.setSignatureHint(hint)
    logout.setSessionFromDump(session_dump)
    logout.initRequest(idp.entity_id, lasso.HTTP_METHOD_REDIRECT)
    if relay is not None:
        logout.msgRelayState = relay
    logout.buildRequestMsg()
    return logout, logout.msgUrl


def query_of(url):
    return urllib.parse.urlsplit(url).query


def params_of(url):
    return dict(urllib.parse.parse_qsl(query_of(url), keep_blank_values=True))


def message_root(url):
    return parse(tidp.redirect_message_xml(url)[1])


def openssl_verify_query(tmp_path, url, cert):
    """Independent check of an HTTP-Redirect signature (RSA-SHA256 only):
    openssl dgst -sha256 -verify over 'FIELD=..&RelayState=..&SigAlg=..'
    taken raw from the query, with the public key of cert."""
    raw = {}
    for part in query_of(url).split("&"):
        name, _, value = part.partition("=")
        raw.setdefault(name, value)
    field = "SAMLRequest" if "SAMLRequest" in raw else "SAMLResponse"
    if urllib.parse.unquote_plus(raw.get("SigAlg", "")) != SHA256:
        return False
    signed = "&".join("%s=%s" % (n, raw[n]) for n in (field, "RelayState", "SigAlg")
                      if n in raw)
    stamp = time.monotonic_ns()
    data = tmp_path / ("signed-%d" % stamp)
    sig = tmp_path / ("sig-%d" % stamp)
    pub = tmp_path / ("pub-%d.pem" % stamp)
    data.write_bytes(signed.encode("ascii"))
    sig.write_bytes(base64.b64decode(urllib.parse.unquote_plus(raw["Signature"])))
    pub.write_text(subprocess.run(["openssl", "x509", "-in", cert, "-pubkey", "-noout"],
                                  capture_output=True, text=True, check=True,
                                  timeout=OPENSSL_TIMEOUT).stdout)
    res = subprocess.run(["openssl", "dgst", "-sha256", "-verify", str(pub),
                          "-signature", str(sig), str(data)],
                         stdin=subprocess.DEVNULL, capture_output=True,
                         timeout=OPENSSL_TIMEOUT)
    return res.returncode == 0


# -- metadata ---------------------------------------------------------------

def test_default_slo_url():
    assert tidp.default_slo_url("http://127.0.0.1:1234/idp/sso") == \
        "http://127.0.0.1:1234/idp/slo"
    assert tidp.default_slo_url("https://idp.example/a/b/sso?x=1") == \
        "https://idp.example/a/b/slo"
    assert tidp.default_slo_url("http://h") == "http://h/slo"


def test_idp_metadata_slo_and_want_signed(tmp_path):
    wd = str(tmp_path / "idp")
    a = TestIdP(wd, sso_url="http://127.0.0.1:1234/idp/sso")
    desc = parse(a.metadata).find("md:IDPSSODescriptor", NS)
    assert desc.get("WantAuthnRequestsSigned") == "false"
    slo = desc.findall("md:SingleLogoutService", NS)
    assert [(s.get("Binding"), s.get("Location")) for s in slo] == \
        [(tidp.BINDING_REDIRECT, "http://127.0.0.1:1234/idp/slo")]
    assert a.slo_url == "http://127.0.0.1:1234/idp/slo"
    # Schema order: SingleLogoutService before NameIDFormat and SSO.
    names = [c.tag.split("}")[1] for c in desc]
    assert names.index("SingleLogoutService") < names.index("NameIDFormat") \
        < names.index("SingleSignOnService")

    b = TestIdP(wd, slo_url="https://idp.example/logout?x=<1>",
                want_authn_requests_signed=True)
    assert open(b.metadata_path).read() == b.metadata
    desc = parse(b.metadata).find("md:IDPSSODescriptor", NS)
    assert desc.get("WantAuthnRequestsSigned") == "true"
    assert desc.find("md:SingleLogoutService", NS).get("Location") == \
        "https://idp.example/logout?x=<1>"
    # Lasso (SP side) sees the SLO endpoint.
    s = lasso.Server()
    s.addProviderFromBuffer(lasso.PROVIDER_ROLE_IDP, b.metadata)
    prov = s.providers[b.entity_id]
    assert prov.getMetadataOne("SingleLogoutService HTTP-Redirect") == \
        "https://idp.example/logout?x=<1>"


def test_sp_metadata_slo_and_parse(slo_sp):
    md = slo_sp[0]
    desc = parse(md).find("md:SPSSODescriptor", NS)
    names = [c.tag.split("}")[1] for c in desc]
    assert names == ["KeyDescriptor", "SingleLogoutService", "AssertionConsumerService"]
    slo = desc.find("md:SingleLogoutService", NS)
    assert (slo.get("Binding"), slo.get("Location")) == (tidp.BINDING_REDIRECT, SLO)
    assert tidp.parse_sp_metadata(md) == {
        "entity_id": SP, "slo_url": SLO, "slo_response_url": SLO,
        "acs_urls": [(tidp.BINDING_POST, ACS)], "signing_certificates": 1}
    assert tidp.parse_sp_metadata(md.encode())["entity_id"] == SP
    plain = tidp.parse_sp_metadata(sp_metadata(SP, ACS))
    assert plain["slo_url"] is None and plain["signing_certificates"] == 0
    with_resp = md.replace('Location="%s"/>' % SLO,
                           'Location="%s" ResponseLocation="%s/r"/>' % (SLO, SLO))
    assert tidp.parse_sp_metadata(with_resp)["slo_response_url"] == SLO + "/r"
    for bad in ("", "<x/>", "not xml", '<!DOCTYPE x []><x/>',
                '<md:EntityDescriptor xmlns:md="%s" entityID="e"/>' % tidp.MD_NS):
        with pytest.raises(tidp.SAMLMessageError):
            tidp.parse_sp_metadata(bad)
    # Lasso takes it as an SP with a SingleLogoutService.
    s = lasso.Server()
    s.addProviderFromBuffer(lasso.PROVIDER_ROLE_SP, md)
    assert s.providers[SP].getMetadataOne("SingleLogoutService HTTP-Redirect") == SLO


def _saml_schema():
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))
    try:
        import saml_schema
    except ImportError as exc:    # pragma: no cover - tree layout
        pytest.skip("tests/integration/saml_schema.py not importable: %s" % exc)
    finally:
        sys.path.pop(0)
    return saml_schema


@pytest.mark.parametrize("engine", ["xmlschema", "xmllint"])
def test_metadata_schema_valid(tmp_path, slo_sp, engine):
    schema = _saml_schema()
    idp = TestIdP(str(tmp_path / "idp"), want_authn_requests_signed=True)
    try:
        for doc in (idp.metadata, slo_sp[0], sp_metadata(SP, ACS)):
            assert schema.validate_metadata(doc, engine=engine) == [], doc
        # Negative control: SLO after the ACS is out of schema order.
        md = slo_sp[0]
        slo_line = re.search(r"    <md:SingleLogoutService[^\n]*\n", md).group(0)
        bad = md.replace(slo_line, "").replace("  </md:SPSSODescriptor>",
                                               slo_line + "  </md:SPSSODescriptor>")
        assert bad != md
        assert schema.validate_metadata(bad, engine=engine) != []
    except schema.SchemaSetupError as exc:
        pytest.skip("schema validator unavailable: %s" % exc)


# -- IdP-initiated logout ---------------------------------------------------

def test_idp_initiated_logout_round_trip(idp, slo_sp, tmp_path):
    md, key, crt = slo_sp
    sps = lasso_sp_server(slo_sp, idp.metadata)
    session = sp_session(sps, idp, session_index="_sess1")

    url, rid = idp.logout_request_url(md, "alice", "_sess1", relay_state="/after?x=1&y")
    assert url.startswith(SLO + "?")
    p = params_of(url)
    assert set(p) == {"SAMLRequest", "RelayState", "SigAlg", "Signature"}
    assert p["SigAlg"] == SHA256 and p["RelayState"] == "/after?x=1&y"
    assert openssl_verify_query(tmp_path, url, idp.cert_path)
    assert not openssl_verify_query(tmp_path, url, crt)       # not the SP's key
    r = message_root(url)
    assert r.tag == "{%s}LogoutRequest" % tidp.SAMLP_NS
    assert r.get("ID") == rid and re.fullmatch(r"_[0-9A-Fa-f]{32}", rid)
    assert r.get("Destination") == SLO and r.get("Version") == "2.0"
    assert r.find("saml:Issuer", NS).text == idp.entity_id
    nid = r.find("saml:NameID", NS)
    assert (nid.text, nid.get("Format")) == ("alice", tidp.NAMEID_UNSPECIFIED)
    assert [e.text for e in r.findall("samlp:SessionIndex", NS)] == ["_sess1"]
    assert r.find("ds:Signature", NS) is None      # query-signed, not XML-signed

    # The SP (Lasso) verifies it, finds the session, answers.
    logout = lasso.Logout(sps)
    logout.setSessionFromDump(session)
    logout.processRequestMsg(query_of(url))
    assert logout.request.id == rid
    assert logout.msgRelayState == "/after?x=1&y"
    logout.validateRequest()
    logout.buildResponseMsg()
    back = logout.msgUrl
    assert back.startswith(idp.slo_url + "?")
    assert params_of(back)["RelayState"] == "/after?x=1&y"
    assert openssl_verify_query(tmp_path, back, crt)

    info = idp.process_logout_response(md, back)
    assert info["in_response_to"] == rid
    assert info["status"] == tidp.STATUS_SUCCESS and info["sub_status"] is None
    assert info["relay_state"] == "/after?x=1&y"
    assert info["issuer"] == SP
    assert info["destination"] == idp.slo_url
    assert info["sig_alg"] == SHA256
    # A bare query (no URL) is accepted too.
    assert idp.process_logout_response(md, query_of(back)) == info
    assert idp.process_logout_response(md, "?" + query_of(back)) == info


def test_idp_initiated_logout_options(idp, slo_sp):
    md = slo_sp[0]
    url, rid = idp.logout_request_url(md, "bob", ["_a", "_b"],
                                      name_id_format=tidp.NAMEID_PERSISTENT)
    r = message_root(url)
    assert [e.text for e in r.findall("samlp:SessionIndex", NS)] == ["_a", "_b"]
    assert r.find("saml:NameID", NS).get("Format") == tidp.NAMEID_PERSISTENT
    assert "RelayState" not in params_of(url)
    url, rid2 = idp.logout_request_url(md, "bob", name_id_format="")
    r = message_root(url)
    assert rid2 != rid
    assert r.findall("samlp:SessionIndex", NS) == []
    assert "Format" not in r.find("saml:NameID", NS).attrib
    url, _ = idp.logout_request_url(md, "bob", sign=False)
    assert set(params_of(url)) == {"SAMLRequest"}
    with pytest.raises(tidp.SAMLMessageError):     # the SP has no SLO endpoint
        idp.logout_request_url(sp_metadata(SP, ACS, slo_sp[2]), "bob")
    with pytest.raises(ValueError):
        idp.logout_request_url(md, "")


def test_idp_initiated_logout_no_session_index(idp, slo_sp):
    """Without SessionIndex the SP (Lasso) logs out every session of the
    NameID; its validateRequest accepts that from an IdP."""
    md = slo_sp[0]
    sps = lasso_sp_server(slo_sp, idp.metadata)
    session = sp_session(sps, idp, session_index="_whatever")
    url, rid = idp.logout_request_url(md, "alice")
    logout = lasso.Logout(sps)
    logout.setSessionFromDump(session)
    logout.processRequestMsg(query_of(url))
    logout.validateRequest()
    logout.buildResponseMsg()
    info = idp.process_logout_response(md, logout.msgUrl)
    assert (info["status"], info["in_response_to"], info["relay_state"]) == \
        (tidp.STATUS_SUCCESS, rid, None)


def test_sp_without_lasso_session_denies(idp, slo_sp):
    """Lasso quirk the module must handle: Logout.validateRequest needs a
    session holding the IdP's assertion (NameID + SessionIndex), else the SP
    answers Responder/RequestDenied.  A session rebuilt from the stored
    NameID/SessionIndex (Session.addAssertion) is enough."""
    md = slo_sp[0]
    sps = lasso_sp_server(slo_sp, idp.metadata)
    url, rid = idp.logout_request_url(md, "alice", "_s9")

    logout = lasso.Logout(sps)
    logout.processRequestMsg(query_of(url))
    with pytest.raises(lasso.Error):
        logout.validateRequest()
    logout.buildResponseMsg()
    info = idp.process_logout_response(md, logout.msgUrl)
    assert (info["status"], info["sub_status"], info["in_response_to"]) == \
        (tidp.STATUS_RESPONDER, tidp.STATUS_REQUEST_DENIED, rid)

    a = lasso.Saml2Assertion()
    subject = lasso.Saml2Subject()
    nid = lasso.Saml2NameID()
    nid.content = "alice"
    nid.format = tidp.NAMEID_UNSPECIFIED
    subject.nameId = nid
    a.subject = subject
    st = lasso.Saml2AuthnStatement()
    st.sessionIndex = "_s9"
    a.authnStatement = (st,)
    rebuilt = lasso.Session()
    rebuilt.addAssertion(idp.entity_id, a)
    logout = lasso.Logout(sps)
    logout.setSessionFromDump(rebuilt.dump())
    logout.processRequestMsg(query_of(url))
    logout.validateRequest()
    logout.buildResponseMsg()
    assert idp.process_logout_response(md, logout.msgUrl)["status"] == tidp.STATUS_SUCCESS

    # A different SessionIndex is refused by Lasso (UnknownPrincipal path).
    url2, _ = idp.logout_request_url(md, "alice", "_other")
    logout = lasso.Logout(sps)
    logout.setSessionFromDump(rebuilt.dump())
    logout.processRequestMsg(query_of(url2))
    with pytest.raises(lasso.Error):
        logout.validateRequest()


def test_sp_refuses_tampered_or_foreign_logout_request(idp, slo_sp, tmp_path):
    md = slo_sp[0]
    sps = lasso_sp_server(slo_sp, idp.metadata)
    url, _ = idp.logout_request_url(md, "alice", "_s1", relay_state="r")
    lasso.Logout(sps).processRequestMsg(query_of(url))      # sane before
    bad = TestIdP.tamper_redirect(url)
    assert bad != url
    assert params_of(bad)["Signature"] == params_of(url)["Signature"]
    assert message_root(bad).get("ID") != message_root(url).get("ID")
    assert not openssl_verify_query(tmp_path, bad, idp.cert_path)
    with pytest.raises(lasso.Error):
        lasso.Logout(sps).processRequestMsg(query_of(bad))
    # Same entityID, another key.
    rogue = TestIdP(str(tmp_path / "rogue"), entity_id=idp.entity_id)
    rurl, _ = rogue.logout_request_url(md, "alice", "_s1")
    assert openssl_verify_query(tmp_path, rurl, rogue.cert_path)
    assert not openssl_verify_query(tmp_path, rurl, idp.cert_path)
    with pytest.raises(lasso.Error):
        lasso.Logout(sps).processRequestMsg(query_of(rurl))
    # Unsigned.
    uurl, _ = idp.logout_request_url(md, "alice", "_s1", sign=False)
    with pytest.raises(lasso.Error):
        lasso.Logout(sps).processRequestMsg(query_of(uurl))


def _sp_response(server, url, session=None, hint=None):
    """The SP's (Lasso's) LogoutResponse URL to an IdP LogoutRequest; hint
    must be set before validateRequest, which sets up the signature."""
    logout = lasso.Logout(server)
    if hint is not None:
        logout.setSignatureHint(hint)
    if session:
        logout.setSessionFromDump(session)
    logout.processRequestMsg(query_of(url))
    try:
        logout.validateRequest()
    except lasso.Error:
        pass
    logout.buildResponseMsg()
    return logout.msgUrl


def test_process_logout_response_refusals(idp, slo_sp, other_key):
    md = slo_sp[0]
    sps = lasso_sp_server(slo_sp, idp.metadata)
    session = sp_session(sps, idp)
    url, rid = idp.logout_request_url(md, "alice", "_sess1")
    good = _sp_response(sps, url, session)
    assert idp.process_logout_response(md, good)["in_response_to"] == rid

    with pytest.raises(tidp.SignatureError):
        idp.process_logout_response(md, TestIdP.tamper_redirect(good))
    # A denied (non-Success) response is checked just the same.
    denied = _sp_response(sps, url)
    assert idp.process_logout_response(md, denied)["status"] == tidp.STATUS_RESPONDER
    with pytest.raises(tidp.SignatureError):
        idp.process_logout_response(md, TestIdP.tamper_redirect(denied))
    # Unsigned.
    unsigned = _sp_response(sps, url, session, hint=lasso.PROFILE_SIGNATURE_HINT_FORBID)
    assert "Signature" not in params_of(unsigned)
    with pytest.raises(tidp.SignatureError):
        idp.process_logout_response(md, unsigned)
    # Signature stripped off a good message.
    stripped = good.split("&SigAlg=")[0]
    with pytest.raises(tidp.SignatureError):
        idp.process_logout_response(md, stripped)
    # Signed with a key the SP metadata does not name.
    forger = lasso_sp_server(slo_sp, idp.metadata, key=other_key[0], crt=other_key[1])
    with pytest.raises(tidp.SignatureError):
        idp.process_logout_response(md, _sp_response(forger, url, session))
    # RSA-SHA1 is refused unless accepted explicitly.
    sha1_sp = lasso_sp_server(slo_sp, idp.metadata, sig=lasso.SIGNATURE_METHOD_RSA_SHA1)
    sha1 = _sp_response(sha1_sp, url, session)
    assert params_of(sha1)["SigAlg"] == SHA1
    with pytest.raises(tidp.SignatureError):
        idp.process_logout_response(md, sha1)
    lenient = TestIdP(idp.workdir, entity_id=idp.entity_id)
    lenient.accepted_sig_algs = (SHA256, SHA1)
    assert lenient.process_logout_response(md, sha1)["sig_alg"] == SHA1
    # Not a LogoutResponse / junk / duplicated parameters.
    with pytest.raises(tidp.SAMLMessageError):
        idp.process_logout_response(md, url)
    for junk in ("", "SAMLResponse=%%%", "SAMLResponse=AAAA", "x=1",
                 good + "&SAMLResponse=AAAA", good + "&SigAlg=x"):
        with pytest.raises(tidp.SAMLMessageError):
            idp.process_logout_response(md, junk)
    assert issubclass(tidp.SignatureError, tidp.SAMLMessageError)
    assert issubclass(tidp.SAMLMessageError, ValueError)


# -- SP-initiated logout ----------------------------------------------------

def test_sp_initiated_logout_round_trip(idp, slo_sp, tmp_path):
    md, key, crt = slo_sp
    sps = lasso_sp_server(slo_sp, idp.metadata)
    session = sp_session(sps, idp, session_index="_sp1", name_id="carol")
    logout, url = sp_logout_request(sps, idp, session, relay="/bye?a=1&b")
    assert url.startswith(idp.slo_url + "?")
    assert params_of(url)["SigAlg"] == SHA256
    assert openssl_verify_query(tmp_path, url, crt)

    back, info = idp.answer_logout_request(md, url)
    assert info["id"] == logout.request.id
    assert info["issuer"] == SP
    assert info["name_id"] == "carol"
    assert info["name_id_format"] == tidp.NAMEID_UNSPECIFIED
    assert info["session_indexes"] == ["_sp1"]
    assert info["relay_state"] == "/bye?a=1&b"
    assert info["destination"] == idp.slo_url
    assert info["sig_alg"] == SHA256
    assert info["status"] == tidp.STATUS_SUCCESS

    assert back.startswith(SLO + "?")
    p = params_of(back)
    assert set(p) == {"SAMLResponse", "RelayState", "SigAlg", "Signature"}
    assert p["RelayState"] == "/bye?a=1&b" and p["SigAlg"] == SHA256
    assert openssl_verify_query(tmp_path, back, idp.cert_path)
    assert not openssl_verify_query(tmp_path, back, crt)
    r = message_root(back)
    assert r.tag == "{%s}LogoutResponse" % tidp.SAMLP_NS
    assert r.get("InResponseTo") == logout.request.id
    assert r.get("ID") == info["response_id"]
    assert r.get("Destination") == SLO
    assert r.find("saml:Issuer", NS).text == idp.entity_id
    assert r.find("samlp:Status/samlp:StatusCode", NS).get("Value") == tidp.STATUS_SUCCESS

    # The SP (Lasso) accepts it; it does not check InResponseTo itself.
    logout.processResponseMsg(query_of(back))
    assert logout.response.inResponseTo == info["id"]
    assert logout.response.status.statusCode.value == tidp.STATUS_SUCCESS
    # ... and refuses it tampered.
    logout2, _ = sp_logout_request(sps, idp, session)
    with pytest.raises(lasso.Error):
        logout2.processResponseMsg(query_of(TestIdP.tamper_redirect(back)))


def test_sp_initiated_logout_denied_and_unsigned(idp, slo_sp):
    md = slo_sp[0]
    sps = lasso_sp_server(slo_sp, idp.metadata)
    session = sp_session(sps, idp)
    logout, url = sp_logout_request(sps, idp, session)
    back, info = idp.answer_logout_request(md, url, tidp.STATUS_RESPONDER,
                                           sub_status=tidp.STATUS_REQUEST_DENIED)
    assert "RelayState" not in params_of(back)
    code = message_root(back).find("samlp:Status/samlp:StatusCode", NS)
    assert code.get("Value") == tidp.STATUS_RESPONDER
    assert code.find("samlp:StatusCode", NS).get("Value") == tidp.STATUS_REQUEST_DENIED
    with pytest.raises(lasso.Error):        # Lasso reports the denial
        logout.processResponseMsg(query_of(back))
    assert logout.response.status.statusCode.value == tidp.STATUS_RESPONDER

    logout, url = sp_logout_request(sps, idp, session)
    back, _ = idp.answer_logout_request(md, url, sign=False)
    assert "Signature" not in params_of(back)
    with pytest.raises(lasso.Error):        # the SP refuses an unsigned answer
        logout.processResponseMsg(query_of(back))


def test_answer_logout_request_refusals(idp, slo_sp, other_key, tmp_path):
    md = slo_sp[0]
    sps = lasso_sp_server(slo_sp, idp.metadata)
    session = sp_session(sps, idp)
    _, url = sp_logout_request(sps, idp, session, relay="r")
    idp.answer_logout_request(md, url)                        # sane before
    idp.answer_logout_request(md, query_of(url))              # bare query too

    with pytest.raises(tidp.SignatureError):
        idp.answer_logout_request(md, TestIdP.tamper_redirect(url))
    # RelayState is covered by the signature.
    moved = url.replace("RelayState=r", "RelayState=evil")
    assert moved != url
    with pytest.raises(tidp.SignatureError):
        idp.answer_logout_request(md, moved)
    _, unsigned = sp_logout_request(sps, idp, session,
                                    hint=lasso.PROFILE_SIGNATURE_HINT_FORBID)
    assert "Signature" not in params_of(unsigned)
    with pytest.raises(tidp.SignatureError):
        idp.answer_logout_request(md, unsigned)
    forger = lasso_sp_server(slo_sp, idp.metadata, key=other_key[0], crt=other_key[1])
    _, forged = sp_logout_request(forger, idp, session)
    with pytest.raises(tidp.SignatureError):
        idp.answer_logout_request(md, forged)
    sha1_sp = lasso_sp_server(slo_sp, idp.metadata, sig=lasso.SIGNATURE_METHOD_RSA_SHA1)
    _, sha1 = sp_logout_request(sha1_sp, idp, session)
    with pytest.raises(tidp.SignatureError):
        idp.answer_logout_request(md, sha1)
    # Another SP's metadata (same entityID, the forger's certificate).
    md_other = sp_metadata(SP, ACS, other_key[1], slo_url=SLO)
    with pytest.raises(tidp.SignatureError):
        idp.answer_logout_request(md_other, url)
    # Wrong kind of message / no SLO endpoint for the answer.
    login = lasso.Login(sps)
    login.setSignatureHint(lasso.PROFILE_SIGNATURE_HINT_FORCE)
    login.initAuthnRequest(idp.entity_id, lasso.HTTP_METHOD_REDIRECT)
    login.buildAuthnRequestMsg()
    with pytest.raises(tidp.SAMLMessageError):
        idp.answer_logout_request(md, login.msgUrl)
    with pytest.raises(tidp.SAMLMessageError):
        idp.answer_logout_request(sp_metadata(SP, ACS, slo_sp[2]), url)
    with pytest.raises(ValueError):
        idp.answer_logout_request(md, url, status="")


# -- signed AuthnRequests ---------------------------------------------------

def sp_authn_request_url(server, idp, relay=None, hint=None):
    login = lasso.Login(server)
    if hint is not None:
        login.setSignatureHint(hint)
    login.initAuthnRequest(idp.entity_id, lasso.HTTP_METHOD_REDIRECT)
    if relay is not None:
        login.msgRelayState = relay
    login.buildAuthnRequestMsg()
    return login.request.id, login.msgUrl


def test_verify_authn_request(tmp_path, slo_sp, other_key):
    md = slo_sp[0]
    lax = TestIdP(str(tmp_path / "lax"))
    # Lasso's SP signs AuthnRequests on its own only when the IdP metadata
    # says WantAuthnRequestsSigned="true".
    _, url = sp_authn_request_url(lasso_sp_server(slo_sp, lax.metadata), lax)
    assert "Signature" not in params_of(url)
    with pytest.raises(tidp.SignatureError):
        lax.verify_authn_request(md, url)

    strict = TestIdP(str(tmp_path / "strict"), want_authn_requests_signed=True)
    sps = lasso_sp_server(slo_sp, strict.metadata)
    rid, url = sp_authn_request_url(sps, strict, relay="/here")
    assert params_of(url)["SigAlg"] == SHA256
    assert openssl_verify_query(tmp_path, url, slo_sp[2])
    info = strict.verify_authn_request(md, url)
    assert info["id"] == rid and info["issuer"] == SP
    assert info["relay_state"] == "/here" and info["sig_alg"] == SHA256
    assert info["destination"] == strict.sso_url
    assert strict.verify_authn_request(md, query_of(url)) == info

    with pytest.raises(tidp.SignatureError):
        strict.verify_authn_request(md, TestIdP.tamper_redirect(url))
    with pytest.raises(tidp.SignatureError):
        strict.verify_authn_request(md, url.replace("RelayState=%2Fhere", "RelayState=%2Fx"))
    forger = lasso_sp_server(slo_sp, strict.metadata, key=other_key[0], crt=other_key[1])
    with pytest.raises(tidp.SignatureError):
        strict.verify_authn_request(md, sp_authn_request_url(forger, strict)[1])
    sha1_sp = lasso_sp_server(slo_sp, strict.metadata, sig=lasso.SIGNATURE_METHOD_RSA_SHA1)
    with pytest.raises(tidp.SignatureError):
        strict.verify_authn_request(md, sp_authn_request_url(sha1_sp, strict)[1])
    # A signed LogoutRequest is not an AuthnRequest.
    _, lr = sp_logout_request(sps, strict, sp_session(sps, strict))
    with pytest.raises(tidp.SAMLMessageError):
        strict.verify_authn_request(md, lr)


# -- serve mode: Single Logout endpoints ------------------------------------

def raw_get(base, path):
    """GET base+path without following redirects: (status, Location, body)."""
    u = urllib.parse.urlsplit(base)
    assert u.hostname == "127.0.0.1"
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=HTTP_TIMEOUT)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, r.getheader("Location"), r.read().decode()
    finally:
        conn.close()


def path_of(url):
    u = urllib.parse.urlsplit(url)
    return u.path + "?" + u.query


def slo_log(base, clear=False):
    status, _, body = raw_get(base, "/idp/slo-log" + ("?clear=1" if clear else ""))
    assert status == 200
    return json.loads(body)["entries"]


@pytest.fixture
def serve_idp(tmp_path):
    """start(*extra_args) -> (proc, base_url, workdir): a `serve` process on
    a 127.0.0.1 port chosen by binding 0; all are killed (by PID) after."""
    procs = []

    def start(*extra):
        wd = str(tmp_path / ("served-%d" % len(procs)))
        proc = subprocess.Popen(
            [PYTHON, SCRIPT, "serve", "--workdir", wd, "--sp-entity-id", SP,
             "--acs-url", ACS, "--port", "0", "--entity-id", "https://idp.served/",
             "--quiet"] + list(extra),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
        procs.append(proc)
        m = re.fullmatch(r"PORT (\d+)\n", read_line(proc, SERVE_START_TIMEOUT))
        assert m
        return proc, "http://127.0.0.1:%s" % m.group(1), wd

    try:
        yield start
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=SERVE_STOP_TIMEOUT)
            proc.stdout.close()


class MetadataServer:
    """The SP's /saml/metadata on 127.0.0.1:<bound 0>, in a thread."""

    def __init__(self, text):
        import http.server
        self.text = text
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                data = outer.text.encode()
                code = 200 if self.path == "/saml/metadata" else 404
                self.send_response(code)
                self.send_header("Content-Type", "application/samlmetadata+xml")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.url = "http://127.0.0.1:%d/saml/metadata" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       kwargs={"poll_interval": 0.1}, daemon=True)
        self.thread.start()

    def stop(self):
        if self.thread.is_alive():
            self.httpd.shutdown()
            self.thread.join(timeout=SERVE_STOP_TIMEOUT)
        self.httpd.server_close()


def served_sp(slo_sp, base):
    """(SP lasso.Server knowing the served IdP, the IdP's entity, a session
    from a real sign-in with a response from /idp/mint)."""
    status, _, idp_md = raw_get(base, "/idp/metadata")
    assert status == 200
    sps = lasso_sp_server(slo_sp, idp_md)
    status, _, b64 = raw_get(base, "/idp/mint?user=alice")
    assert status == 200
    login = lasso.Login(sps)
    login.processAuthnResponseMsg(b64.strip())
    login.acceptSso()
    sidx = login.response.assertion[0].authnStatement[0].sessionIndex
    entity = types.SimpleNamespace(entity_id=parse(idp_md).get("entityID"))
    return sps, entity, login.session.dump(), sidx, idp_md


def test_serve_slo_with_metadata_path(serve_idp, slo_sp, tmp_path):
    md_path = tmp_path / "sp-metadata.xml"
    md_path.write_text(slo_sp[0])
    proc, base, wd = serve_idp("--sp-metadata-path", str(md_path),
                               "--want-authn-requests-signed")
    sps, entity, session, sidx, idp_md = served_sp(slo_sp, base)
    desc = parse(idp_md).find("md:IDPSSODescriptor", NS)
    assert desc.get("WantAuthnRequestsSigned") == "true"
    assert desc.find("md:SingleLogoutService", NS).get("Location") == base + "/idp/slo"
    assert slo_log(base) == []

    # SP-initiated: LogoutRequest in, signed LogoutResponse redirect out.
    logout, url = sp_logout_request(sps, entity, session, relay="/bye?x=1")
    assert url.startswith(base + "/idp/slo?")
    status, location, _ = raw_get(base, path_of(url))
    assert status == 302 and location.startswith(SLO + "?")
    assert params_of(location)["RelayState"] == "/bye?x=1"
    assert openssl_verify_query(tmp_path, location, os.path.join(wd, "idp.crt"))
    logout.processResponseMsg(query_of(location))
    assert logout.response.inResponseTo == logout.request.id
    assert logout.response.status.statusCode.value == tidp.STATUS_SUCCESS
    (e,) = slo_log(base)
    assert (e["direction"], e["type"], e["ok"]) == ("received", "LogoutRequest", True)
    assert e["id"] == logout.request.id and e["name_id"] == "alice"
    assert e["session_indexes"] == [sidx] and e["relay_state"] == "/bye?x=1"
    assert e["issuer"] == SP and e["sig_alg"] == SHA256

    # Tampered or unsigned: 400, logged as refused.
    _, url = sp_logout_request(sps, entity, session)
    assert raw_get(base, path_of(TestIdP.tamper_redirect(url)))[0] == 400
    _, unsigned = sp_logout_request(sps, entity, session,
                                    hint=lasso.PROFILE_SIGNATURE_HINT_FORBID)
    assert raw_get(base, path_of(unsigned))[0] == 400
    refused = slo_log(base)[-2:]
    assert [(x["ok"], x["signature_error"]) for x in refused] == [(False, True)] * 2

    # IdP-initiated: /idp/logout -> 302 to the SP, whose answer is recorded.
    status, location, _ = raw_get(base, "/idp/logout?user=alice&session_index=%s&relay=%%2Fr"
                                  % urllib.parse.quote(sidx))
    assert status == 302 and location.startswith(SLO + "?")
    assert params_of(location)["RelayState"] == "/r"
    assert openssl_verify_query(tmp_path, location, os.path.join(wd, "idp.crt"))
    rid = message_root(location).get("ID")
    sp_logout = lasso.Logout(sps)
    sp_logout.setSessionFromDump(session)
    sp_logout.processRequestMsg(query_of(location))
    sp_logout.validateRequest()
    sp_logout.buildResponseMsg()
    back = sp_logout.msgUrl
    assert back.startswith(base + "/idp/slo?")
    status, _, body = raw_get(base, path_of(back))
    assert status == 200 and tidp.STATUS_SUCCESS in body
    sent, got = slo_log(base)[-2:]
    assert (sent["direction"], sent["type"], sent["id"]) == ("sent", "LogoutRequest", rid)
    assert sent["session_indexes"] == [sidx] and sent["relay_state"] == "/r"
    assert (got["direction"], got["type"], got["ok"]) == ("received", "LogoutResponse", True)
    assert got["in_response_to"] == rid and got["known_request"] is True
    assert got["status"] == tidp.STATUS_SUCCESS and got["relay_state"] == "/r"
    # A tampered LogoutResponse is refused.
    assert raw_get(base, path_of(TestIdP.tamper_redirect(back)))[0] == 400
    assert slo_log(base)[-1]["signature_error"] is True

    # Signed AuthnRequests are required: unsigned / tampered -> 400.
    rid, signed = sp_authn_request_url(sps, entity, relay="/r")
    assert "Signature" in params_of(signed)
    status, _, page = raw_get(base, path_of(signed))
    assert status == 200
    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"/>', page))
    xml = base64.b64decode(html_mod.unescape(fields["SAMLResponse"])).decode()
    assert parse(xml).get("InResponseTo") == rid
    assert raw_get(base, path_of(TestIdP.tamper_redirect(signed)))[0] == 400
    _, unsigned = sp_authn_request_url(sps, entity,
                                       hint=lasso.PROFILE_SIGNATURE_HINT_FORBID)
    assert "Signature" not in params_of(unsigned)
    status, _, body = raw_get(base, path_of(unsigned))
    assert status == 400 and "not signed" in body
    assert raw_get(base, "/idp/sso?user=bob")[0] == 200       # IdP-initiated: no request

    # Bad input.
    assert raw_get(base, "/idp/slo")[0] == 400
    assert raw_get(base, "/idp/slo?SAMLRequest=%%%")[0] == 400
    assert raw_get(base, "/idp/logout?user=%01")[0] == 400
    assert raw_get(base, "/idp/logout?user=a&session_index=%01")[0] == 400

    # The log: cleared on request, bounded.
    assert len(slo_log(base, clear=True)) > 0
    assert slo_log(base) == []
    n = tidp.SLO_LOG_MAX + 5
    for _ in range(n):
        assert raw_get(base, "/idp/slo?SAMLResponse=AAAA")[0] == 400
    entries = slo_log(base)
    assert len(entries) == tidp.SLO_LOG_MAX
    seqs = [x["seq"] for x in entries]
    assert seqs == sorted(seqs) and seqs[-1] - seqs[0] == tidp.SLO_LOG_MAX - 1

    os.kill(proc.pid, signal.SIGTERM)
    assert proc.wait(timeout=SERVE_STOP_TIMEOUT) == 0


def test_serve_slo_with_metadata_url(serve_idp, slo_sp, other_key, idp):
    mds = MetadataServer(slo_sp[0])
    try:
        proc, base, wd = serve_idp("--sp-metadata-url", mds.url)
        sps, entity, session, sidx, idp_md = served_sp(slo_sp, base)
        assert parse(idp_md).find("md:IDPSSODescriptor", NS).get(
            "WantAuthnRequestsSigned") == "false"
        status, location, _ = raw_get(base, "/idp/logout?user=alice")
        assert status == 302 and location.startswith(SLO + "?")
        assert message_root(location).findall("samlp:SessionIndex", NS) == []
        back = _sp_response(sps, location, session)
        assert raw_get(base, path_of(back))[0] == 200
        assert slo_log(base)[-1]["known_request"] is True
        # A (well signed) answer to a request this server never sent.
        other_url, other_rid = idp.logout_request_url(slo_sp[0], "alice")
        stray = _sp_response(lasso_sp_server(slo_sp, idp.metadata), other_url)
        assert raw_get(base, path_of(stray))[0] == 200
        e = slo_log(base)[-1]
        assert (e["ok"], e["known_request"], e["in_response_to"]) == (True, False, other_rid)
        _, url = sp_logout_request(sps, entity, session)
        assert raw_get(base, path_of(url))[0] == 302
        # Unsigned AuthnRequests are fine when not wanted (old behaviour).
        _, unsigned = sp_authn_request_url(sps, entity)
        assert "Signature" not in params_of(unsigned)
        assert raw_get(base, path_of(unsigned))[0] == 200
        # The metadata is fetched on use: a new SP key is followed at once.
        mds.text = sp_metadata(SP, ACS, other_key[1], slo_url=SLO)
        assert raw_get(base, path_of(url))[0] == 400
        forger = lasso_sp_server(slo_sp, idp_md, key=other_key[0], crt=other_key[1])
        _, url2 = sp_logout_request(forger, entity, session)
        assert raw_get(base, path_of(url2))[0] == 302
    finally:
        mds.stop()
    # SP down: 503, promptly.
    t = time.monotonic()
    assert raw_get(base, "/idp/logout?user=alice")[0] == 503
    assert raw_get(base, path_of(url))[0] == 503
    assert time.monotonic() - t < 2 * tidp.SP_METADATA_TIMEOUT + 1
    assert slo_log(base)[-1]["ok"] is False


def test_serve_without_sp_metadata(served):
    proc, base, wd = served
    assert raw_get(base, "/idp/logout?user=alice")[0] == 503
    assert raw_get(base, "/idp/slo?SAMLResponse=AAAA")[0] == 503
    assert raw_get(base, "/idp/slo-log")[0] == 200
    root = parse(raw_get(base, "/idp/metadata")[2])
    assert root.find(".//md:SingleLogoutService", NS).get("Location") == base + "/idp/slo"


def test_cli_slo_metadata(tmp_path, serve_idp):
    wd = str(tmp_path / "cli-slo")
    path = run_cli("metadata", "--workdir", wd, "--slo-url", "http://x.example/out",
                   "--want-authn-requests-signed").strip()
    desc = ET.parse(path).getroot().find("md:IDPSSODescriptor", NS)
    assert desc.get("WantAuthnRequestsSigned") == "true"
    assert desc.find("md:SingleLogoutService", NS).get("Location") == "http://x.example/out"
    before = open(path).read()
    run_cli("mint", "--workdir", wd, "--sp-entity-id", SP, "--acs-url", ACS)
    assert open(path).read() == before                   # kept
    run_cli("metadata", "--workdir", wd, "--no-want-authn-requests-signed",
            "--sso-url", "http://y.example/idp/sso")
    desc = ET.parse(path).getroot().find("md:IDPSSODescriptor", NS)
    assert desc.get("WantAuthnRequestsSigned") == "false"
    assert desc.find("md:SingleLogoutService", NS).get("Location") == \
        "http://y.example/idp/slo"                       # follows a new SSO URL
    out = run_cli("sp-metadata", "--sp-entity-id", SP, "--acs-url", ACS,
                  "--slo-url", SLO)
    assert tidp.parse_sp_metadata(out)["slo_url"] == SLO
    # A `mint` in a running want-signed serve's workdir keeps its metadata.
    proc, base, swd = serve_idp("--want-authn-requests-signed", "--slo-url",
                                "http://127.0.0.1:1/custom-slo")
    before = open(os.path.join(swd, "idp-metadata.xml")).read()
    assert 'WantAuthnRequestsSigned="true"' in before
    assert "http://127.0.0.1:1/custom-slo" in before
    run_cli("mint", "--workdir", swd, "--sp-entity-id", SP, "--acs-url", ACS)
    assert open(os.path.join(swd, "idp-metadata.xml")).read() == before


def test_tamper_redirect_keeps_url_shape(idp, slo_sp):
    url, _ = idp.logout_request_url(slo_sp[0], "alice", relay_state="r")
    bad = TestIdP.tamper_redirect(url + "#frag")
    assert bad.startswith(SLO + "?") and bad.endswith("#frag")
    q = TestIdP.tamper_redirect(query_of(url))
    assert q.startswith("SAMLRequest=")
    assert [p.split("=")[0] for p in q.split("&")] == \
        [p.split("=")[0] for p in query_of(url).split("&")]
    with pytest.raises(tidp.SAMLMessageError):
        TestIdP.tamper_redirect("RelayState=x")


def test_lasso_sp_side_quirks(idp, slo_sp):
    """What an SP built on Lasso 2.8 must check itself (documented here so
    that a Lasso upgrade that changes it is noticed)."""
    md = slo_sp[0]
    sps = lasso_sp_server(slo_sp, idp.metadata)
    # Lasso's default query-signature method is RSA-SHA1: set RSA-SHA256.
    fresh = lasso.Server.newFromBuffers(md, open(slo_sp[1]).read(), None,
                                        open(slo_sp[2]).read())
    assert fresh.signatureMethod == lasso.SIGNATURE_METHOD_RSA_SHA1
    session = sp_session(sps, idp)
    first, url1 = sp_logout_request(sps, idp, session)
    second, _ = sp_logout_request(sps, idp, session)
    back1, _ = idp.answer_logout_request(md, url1)
    # processResponseMsg does not compare InResponseTo with the request.
    second.processResponseMsg(query_of(back1))
    assert second.response.inResponseTo == first.request.id != second.request.id
    # It needs neither the request nor a session (stateless check works).
    stateless = lasso.Logout(sps)
    stateless.processResponseMsg(query_of(back1))
    assert stateless.response.inResponseTo == first.request.id
    # A non-Success response: the status error comes first, even when the
    # signature is bad; the verdict is in the profile's signature status.
    _, url3 = sp_logout_request(sps, idp, session)
    denied, _ = idp.answer_logout_request(md, url3, tidp.STATUS_RESPONDER,
                                          sub_status=tidp.STATUS_REQUEST_DENIED)
    third = lasso.Logout(sps)
    with pytest.raises(lasso.Error) as ei:
        third.processResponseMsg(query_of(TestIdP.tamper_redirect(denied)))
    assert not isinstance(ei.value, lasso.ProfileCannotVerifySignatureError)
    with pytest.raises(lasso.Error):
        third.getSignatureStatus()


# --------------------------------------------------------------------------
# Encrypted assertions, RSA-SHA1 signatures, a broken Response signature
#
# Independent checks: the xmlsec1 command line decrypts with the SP's
# private key as the only key (xmlsec1 --decrypt), openssl unwraps the
# session key on its own with the padding the EncryptedKey names, xmlsec1
# verifies the signatures, and a Lasso SP (lasso.Server.newFromBuffers with
# the SP key, which Lasso also uses as its decryption key) signs in.
# --------------------------------------------------------------------------

XENC = tidp.XENC_NS
NS_ENC = dict(NS, xenc=XENC)
ENC_COMBOS = [(engine, data, key)
              for engine, (datas, keys) in tidp.ENCRYPTION_ENGINES.items()
              for data in datas for key in keys]
SESSION_KEY_BYTES = {"aes128-gcm": 16, "aes192-gcm": 24, "aes256-gcm": 32,
                     "aes128-cbc": 16, "aes192-cbc": 24, "aes256-cbc": 32,
                     "tripledes-cbc": 24}
EA_PATH = "/*[local-name()='Response']/*[local-name()='EncryptedAssertion']"


@pytest.fixture(scope="module")
def sp_enc(sp_files):
    """The SP as (metadata path, key, cert, metadata text): its key pair
    both signs and decrypts."""
    md, key, crt = sp_files
    with open(md) as f:
        return md, key, crt, f.read()


def lasso_sp_decrypt_login(sp_enc, idp_md, b64, key=None, crt=None):
    """SP-side Lasso login whose server has the SP key (or key/crt) as its
    decryption key; raises lasso.Error if Lasso refuses."""
    _, k, c, md = sp_enc
    with open(key or k) as f:
        key_pem = f.read()
    with open(crt or c) as f:
        crt_pem = f.read()
    server = lasso.Server.newFromBuffers(md, key_pem, None, crt_pem)
    server.addProviderFromBuffer(lasso.PROVIDER_ROLE_IDP, idp_md)
    login = lasso.Login(server)
    login.processAuthnResponseMsg(b64)
    return login


def b64of(xml):
    return base64.b64encode(xml.encode("utf-8")).decode("ascii")


def xmlsec_decrypt(tmp_path, xml, key, index=1):
    """The document with its index-th EncryptedAssertion decrypted by
    xmlsec1 with key as the only key, or None if xmlsec1 fails.  An
    xmlenc11#rsa-oaep EncryptedKey (which xmlsec1 1.2.37 does not know) is
    relabelled rsa-oaep-mgf1p first: with DigestMethod SHA-1 and the
    default MGF1-SHA-1 the two are the same computation."""
    xml = xml.replace('Algorithm="%s"' % tidp.KEY_RSA_OAEP,
                      'Algorithm="%s"' % tidp.KEY_RSA_OAEP_MGF1P)
    stamp = time.monotonic_ns()
    src = tmp_path / ("enc-%d.xml" % stamp)
    out = tmp_path / ("dec-%d.xml" % stamp)
    src.write_text(xml)
    res = subprocess.run(
        ["xmlsec1", "--decrypt", "--privkey-pem", key,
         "--id-attr:Id", "EncryptedKey",
         "--node-xpath", "(%s)[%d]/*[local-name()='EncryptedData']" % (EA_PATH, index),
         "--output", str(out), str(src)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        timeout=XMLSEC_TIMEOUT)
    if res.returncode != 0:
        return None
    return out.read_text()


def decrypted_assertion(decrypted_xml, index=1):
    """The Assertion that took the place of the index-th EncryptedData."""
    root = parse(decrypted_xml)
    eas = root.findall("saml:EncryptedAssertion", NS)
    found = eas[index - 1].findall("saml:Assertion", NS)
    assert len(found) == 1 and not eas[index - 1].findall("xenc:EncryptedData", NS_ENC)
    return found[0]


def openssl_unwrap(tmp_path, ek, key, padding):
    """The session key in EncryptedKey element ek, unwrapped by openssl
    pkeyutl with padding "oaep" (SHA-1, MGF1-SHA-1) or "pkcs1"; None if
    openssl refuses."""
    stamp = time.monotonic_ns()
    src = tmp_path / ("ek-%d.bin" % stamp)
    src.write_bytes(base64.b64decode("".join(
        ek.find("xenc:CipherData/xenc:CipherValue", NS_ENC).text.split())))
    opts = ["-pkeyopt", "rsa_padding_mode:" + padding]
    if padding == "oaep":
        opts += ["-pkeyopt", "rsa_oaep_md:sha1", "-pkeyopt", "rsa_mgf1_md:sha1"]
    res = subprocess.run(["openssl", "pkeyutl", "-decrypt", "-inkey", key,
                          "-in", str(src)] + opts,
                         stdin=subprocess.DEVNULL, capture_output=True,
                         timeout=OPENSSL_TIMEOUT)
    return res.stdout if res.returncode == 0 else None


def enc_parts(ea):
    """(EncryptedData, EncryptedKey, "keyinfo"|"sibling") of an
    EncryptedAssertion element."""
    ed = ea.find("xenc:EncryptedData", NS_ENC)
    inline = ed.findall("ds:KeyInfo/xenc:EncryptedKey", NS_ENC)
    siblings = ea.findall("xenc:EncryptedKey", NS_ENC)
    assert len(inline) + len(siblings) == 1
    return ed, (inline or siblings)[0], "keyinfo" if inline else "sibling"


def sig_algs(elem):
    """(SignatureMethod, [DigestMethod]) of elem's own ds:Signature."""
    sig = elem.find("ds:Signature", NS)
    return (sig.find("ds:SignedInfo/ds:SignatureMethod", NS).get("Algorithm"),
            [d.get("Algorithm") for d in
             sig.findall("ds:SignedInfo/ds:Reference/ds:DigestMethod", NS)])


def ea_span(xml, index=0):
    return re.findall(r"<saml:EncryptedAssertion\b.*?</saml:EncryptedAssertion>",
                      xml, re.S)[index]


@pytest.mark.parametrize("engine,data,key", ENC_COMBOS,
                         ids=["-".join(c) for c in ENC_COMBOS])
def test_encryption_algorithms(idp, sp_enc, tmp_path, engine, data, key):
    aid = "_enc-%s-%s-%s" % (engine, data, key.replace("_", "-"))
    _, sp_key, sp_crt, _ = sp_enc
    enc = tidp.Encryption(sp_crt, data=data, key=key, engine=engine)
    xml = idp.mint_xml(SP, ACS, assertion_id=aid, name_id="carol", encrypt=enc)
    root = parse(xml)
    assert root.findall("saml:Assertion", NS) == []
    (ea,) = root.findall("saml:EncryptedAssertion", NS)
    ed, ek, placement = enc_parts(ea)
    assert placement == "keyinfo"
    assert ed.get("Type") == "http://www.w3.org/2001/04/xmlenc#Element"
    assert ed.find("xenc:EncryptionMethod", NS_ENC).get("Algorithm") == \
        tidp.DATA_ALGORITHMS[data]
    assert ek.find("xenc:EncryptionMethod", NS_ENC).get("Algorithm") == \
        tidp.KEY_ALGORITHMS[key]
    # The Response signature (RSA-SHA256) covers the EncryptedAssertion.
    assert sig_algs(root) == (tidp.SIG_ALG_RSA_SHA256, [tidp.DIGEST_SHA256])
    assert xmlsec_verify(tmp_path, xml, idp.cert_path, RESP_SIG)
    # The key transport is what the EncryptedKey says (openssl on its own).
    padding = "pkcs1" if key == "rsa-1_5" else "oaep"
    wrong = "oaep" if key == "rsa-1_5" else "pkcs1"
    session_key = openssl_unwrap(tmp_path, ek, sp_key, padding)
    assert session_key is not None and len(session_key) == SESSION_KEY_BYTES[data]
    assert openssl_unwrap(tmp_path, ek, sp_key, wrong) != session_key
    # xmlsec1 decrypts it with the SP key: the asked assertion, signed.
    dec = xmlsec_decrypt(tmp_path, xml, sp_key)
    assert dec is not None
    a = decrypted_assertion(dec)
    assert a.get("ID") == aid
    assert a.find("saml:Subject/saml:NameID", NS).text == "carol"
    assert sig_algs(a) == (tidp.SIG_ALG_RSA_SHA256, [tidp.DIGEST_SHA256])
    assert xmlsec_verify(tmp_path, dec, idp.cert_path, assertion_sig(aid))
    # Lasso's SP side (xmlsec 1.2.37 underneath) signs in, except with
    # xmlenc11#rsa-oaep, which it cannot unwrap.
    if key == "rsa-oaep":
        with pytest.raises(lasso.Error):
            lasso_sp_decrypt_login(sp_enc, idp.metadata, b64of(xml))
    else:
        login = lasso_sp_decrypt_login(sp_enc, idp.metadata, b64of(xml))
        assert [x.id for x in login.response.assertion] == [aid]
        assert login.response.assertion[0].subject.nameId.content == "carol"


SHAPES = [(True, True), (True, False), (False, True), (False, False)]
SHAPE_ENC = [("xmlsec1", "aes128-gcm", "keyinfo"), ("lasso", "aes256-cbc", "keyinfo"),
             ("xmlsec1", "aes256-cbc", "sibling"), ("lasso", "aes128-cbc", "sibling")]


@pytest.mark.parametrize("engine,data,placement", SHAPE_ENC,
                         ids=["-".join(c) for c in SHAPE_ENC])
@pytest.mark.parametrize("sign_response,sign_assertion", SHAPES,
                         ids=["both", "response", "assertion", "neither"])
def test_encrypted_signing_shapes(idp, sp_enc, tmp_path, engine, data, placement,
                                  sign_response, sign_assertion):
    """sign_assertion: the signature is inside the ciphertext (Entra's
    shape); sign_response: the Response signature covers the
    EncryptedAssertion (Shibboleth's); the IdP makes all four."""
    _, sp_key, sp_crt, _ = sp_enc
    enc = tidp.Encryption(sp_crt, data=data, engine=engine, key_placement=placement)
    xml = idp.mint_xml(SP, ACS, assertion_id="_shape", encrypt=enc,
                       sign_response=sign_response, sign_assertion=sign_assertion)
    root = parse(xml)
    (ea,) = root.findall("saml:EncryptedAssertion", NS)
    ed, ek, got_placement = enc_parts(ea)
    assert got_placement == placement
    if placement == "sibling":
        # next to EncryptedData, which points at it; it points back
        assert [c.tag.split("}")[1] for c in ea] == ["EncryptedData", "EncryptedKey"]
        rm = ed.find("ds:KeyInfo/ds:RetrievalMethod", NS)
        assert rm.get("URI") == "#" + ek.get("Id")
        assert rm.get("Type") == XENC + "EncryptedKey"
        assert ek.find("xenc:ReferenceList/xenc:DataReference", NS_ENC).get("URI") == \
            "#" + ed.get("Id")
    assert (root.find("ds:Signature", NS) is not None) == sign_response
    if sign_response:
        assert xmlsec_verify(tmp_path, xml, idp.cert_path, RESP_SIG)
    dec = xmlsec_decrypt(tmp_path, xml, sp_key)
    a = decrypted_assertion(dec)
    assert a.get("ID") == "_shape"
    assert (a.find("ds:Signature", NS) is not None) == sign_assertion
    if sign_assertion:
        assert xmlsec_verify(tmp_path, dec, idp.cert_path, assertion_sig("_shape"))
    if sign_response or sign_assertion:
        login = lasso_sp_decrypt_login(sp_enc, idp.metadata, b64of(xml))
        assert [x.id for x in login.response.assertion] == ["_shape"]
    else:
        with pytest.raises(lasso.Error):
            lasso_sp_decrypt_login(sp_enc, idp.metadata, b64of(xml))


def test_encrypted_fields_as_asked(idp, sp_enc, tmp_path):
    """Every field keyword works the same: the decrypted assertion is
    the plaintext one, byte for byte after c14n (RSA PKCS#1 v1.5
    signatures are deterministic), and the Response fields match."""
    kw = dict(
        assertion_id="_same", response_id="_resp_same", name_id="bob", now=T0 + 0.9,
        issue_instant_offset=-7, not_before_offset=-60, not_on_or_after_offset=600,
        scd_not_on_or_after_offset=120, scd_not_before_offset=-5,
        audience="https://aud.example/", recipient="https://rcpt.example/acs",
        destination="https://dest.example/acs", session_not_on_or_after_offset=3600,
        session_index="_sess1", in_response_to="_req42",
        issuer="https://other-issuer.example/",
        confirmation_method="urn:oasis:names:tc:SAML:2.0:cm:holder-of-key",
        attributes={"mail": ["bob@example.org", "b@example.net"], "role": ["admin"]},
        name_id_format=tidp.NAMEID_TRANSIENT)
    _, sp_key, sp_crt, _ = sp_enc
    plain = parse(idp.mint_xml(SP, ACS, **kw))
    for engine in ("xmlsec1", "lasso"):
        enc = tidp.Encryption(sp_crt, data="aes128-cbc", engine=engine)
        xml = idp.mint_xml(SP, ACS, encrypt=enc, **kw)
        r = parse(xml)
        assert r.attrib == plain.attrib
        assert r.find("saml:Issuer", NS).text == "https://other-issuer.example/"
        assert ET.tostring(r.find("samlp:Status", NS)) == \
            ET.tostring(plain.find("samlp:Status", NS))
        a = decrypted_assertion(xmlsec_decrypt(tmp_path, xml, sp_key))
        assert ET.canonicalize(ET.tostring(a)) == \
            ET.canonicalize(ET.tostring(plain.find("saml:Assertion", NS)))
        assert xmlsec_verify(tmp_path, xml, idp.cert_path, RESP_SIG)


def test_two_assertions_mixed(idp, sp_enc, other_key, tmp_path):
    """One entry per assertion, in order; each for its own certificate."""
    _, sp_key, sp_crt, _ = sp_enc
    mine = tidp.Encryption(sp_crt, data="aes256-gcm")
    theirs = tidp.Encryption(other_key[1], data="aes128-cbc", engine="lasso")
    xml = idp.mint_xml(SP, ACS, assertion_id="_one", assertions=2,
                       encrypt=(None, theirs))
    root = parse(xml)
    kids = [c.tag.split("}")[1] for c in root
            if c.tag.endswith("}Assertion") or c.tag.endswith("}EncryptedAssertion")]
    assert kids == ["Assertion", "EncryptedAssertion"]
    assert root.find("saml:Assertion", NS).get("ID") == "_one"
    assert xmlsec_verify(tmp_path, xml, idp.cert_path, RESP_SIG)
    assert xmlsec_verify(tmp_path, xml, idp.cert_path, assertion_sig("_one"))
    assert xmlsec_decrypt(tmp_path, xml, sp_key) is None
    assert xmlsec_decrypt(tmp_path, xml, other_key[0]) is not None

    xml = idp.mint_xml(SP, ACS, assertion_id="_first", assertions=2,
                       encrypt=[mine, None])
    root = parse(xml)
    kids = [c.tag.split("}")[1] for c in root
            if c.tag.endswith("}Assertion") or c.tag.endswith("}EncryptedAssertion")]
    assert kids == ["EncryptedAssertion", "Assertion"]
    assert xmlsec_verify(tmp_path, xml, idp.cert_path, RESP_SIG)
    assert decrypted_assertion(xmlsec_decrypt(tmp_path, xml, sp_key)).get("ID") == "_first"

    xml = idp.mint_xml(SP, ACS, assertion_id="_a", assertions=2, encrypt=mine)
    root = parse(xml)
    assert len(root.findall("saml:EncryptedAssertion", NS)) == 2
    assert root.findall("saml:Assertion", NS) == []
    ids = [decrypted_assertion(xmlsec_decrypt(tmp_path, xml, sp_key, i), i).get("ID")
           for i in (1, 2)]
    assert ids[0] == "_a" and ids[1] != "_a"
    assert len(ea_span(xml, 0)) and ea_span(xml, 0) != ea_span(xml, 1)
    # zero assertions: nothing to encrypt
    assert parse(idp.mint_xml(SP, ACS, assertions=0, encrypt=mine)).find(
        "saml:EncryptedAssertion", NS) is None


def test_other_sp_key_cannot_decrypt(idp, sp_enc, other_key, tmp_path):
    _, sp_key, sp_crt, _ = sp_enc
    for engine, key in (("xmlsec1", "rsa-oaep-mgf1p"), ("lasso", "rsa-1_5")):
        enc = tidp.Encryption(sp_crt, data="aes128-cbc", key=key, engine=engine)
        xml = idp.mint_xml(SP, ACS, assertion_id="_nokey", encrypt=enc)
        assert xmlsec_decrypt(tmp_path, xml, other_key[0]) is None
        _, ek, _ = enc_parts(parse(xml).find("saml:EncryptedAssertion", NS))
        assert openssl_unwrap(tmp_path, ek, other_key[0],
                              "pkcs1" if key == "rsa-1_5" else "oaep") is None
        with pytest.raises(lasso.Error):
            lasso_sp_decrypt_login(sp_enc, idp.metadata, b64of(xml),
                                   key=other_key[0], crt=other_key[1])
        assert xmlsec_decrypt(tmp_path, xml, sp_key) is not None


def test_encryption_refusals(idp, sp_enc, tmp_path):
    _, _, sp_crt, _ = sp_enc
    for kw in (dict(engine="lasso", data="aes128-gcm"),
               dict(engine="lasso", data="aes256-gcm"),
               dict(engine="lasso", data="aes128-cbc", key="rsa-oaep"),
               dict(data="aes192-cbc"), dict(key="rsa-oaep-sha256"),
               dict(engine="openssl"), dict(key_placement="elsewhere")):
        with pytest.raises(ValueError):
            tidp.Encryption(sp_crt, **kw)
    junk = tmp_path / "junk.crt"
    junk.write_text("not a certificate\n")
    with pytest.raises(ValueError):
        tidp.Encryption(str(junk))
    enc = tidp.Encryption(sp_crt)
    for bad in ((enc,), (enc, enc, enc), "yes", (enc, "x")):
        with pytest.raises(ValueError):
            idp.mint_xml(SP, ACS, assertions=2, encrypt=bad)
    with pytest.raises(ValueError):
        idp.mint_xml(SP, ACS, signature_method="rsa-md5")
    assert "Encryption" in tidp.__all__
    assert repr(enc).startswith("Encryption(")


def test_check_shape_catches_wrong_output(idp, sp_enc):
    """_check_shape raises when the mint is not what was asked."""
    _, _, sp_crt, _ = sp_enc
    gcm = tidp.Encryption(sp_crt)
    cbc = tidp.Encryption(sp_crt, data="aes128-cbc")
    xml = idp.mint_xml(SP, ACS, encrypt=gcm, sign_assertion=False)
    tidp._check_shape(xml, True, False, 1, encrypt=[gcm])
    for args, kw in (((xml, True, False, 1), {}),                   # plaintext wanted
                     ((xml, True, False, 1), {"encrypt": [cbc]}),   # other algorithm
                     ((xml, False, False, 1), {"encrypt": [gcm]}),  # unsigned wanted
                     ((xml, True, False, 1), {"encrypt": [gcm],
                                              "signature_method": "rsa-sha1"}),
                     ((xml, True, False, 1), {"encrypt": [tidp.Encryption(
                         sp_crt, key_placement="sibling")]})):
        with pytest.raises(RuntimeError):
            tidp._check_shape(*args, **kw)


def test_signature_method_rsa_sha1(idp, sp_enc, tmp_path):
    _, sp_key, sp_crt, _ = sp_enc
    sha1 = (tidp.SIG_ALG_RSA_SHA1, [tidp.DIGEST_SHA1])
    assert sha1 == ("http://www.w3.org/2000/09/xmldsig#rsa-sha1",
                    ["http://www.w3.org/2000/09/xmldsig#sha1"])
    xml = idp.mint_xml(SP, ACS, assertion_id="_sha1", signature_method="rsa-sha1")
    root = parse(xml)
    assert sig_algs(root) == sha1
    assert sig_algs(root.find("saml:Assertion", NS)) == sha1
    assert "sha256" not in xml
    assert xmlsec_verify(tmp_path, xml, idp.cert_path, RESP_SIG)
    assert xmlsec_verify(tmp_path, xml, idp.cert_path, assertion_sig("_sha1"))
    for engine in ("xmlsec1", "lasso"):
        enc = tidp.Encryption(sp_crt, data="aes128-cbc", engine=engine)
        xml = idp.mint_xml(SP, ACS, assertion_id="_sha1e", encrypt=enc,
                           signature_method="rsa-sha1")
        assert sig_algs(parse(xml)) == sha1
        assert xmlsec_verify(tmp_path, xml, idp.cert_path, RESP_SIG)
        dec = xmlsec_decrypt(tmp_path, xml, sp_key)
        assert sig_algs(decrypted_assertion(dec)) == sha1
        assert xmlsec_verify(tmp_path, dec, idp.cert_path, assertion_sig("_sha1e"))
    # The server's method is set per mint: the next default mint is SHA-256.
    root = parse(idp.mint_xml(SP, ACS))
    assert sig_algs(root) == (tidp.SIG_ALG_RSA_SHA256, [tidp.DIGEST_SHA256])
    assert sig_algs(root.find("saml:Assertion", NS))[0] == tidp.SIG_ALG_RSA_SHA256


@pytest.mark.parametrize("encrypted", [False, True], ids=["plaintext", "encrypted"])
def test_tamper_response_signature(idp, sp_enc, tmp_path, encrypted):
    _, sp_key, sp_crt, _ = sp_enc
    enc = tidp.Encryption(sp_crt, data="aes128-cbc") if encrypted else None
    b64 = idp.mint(SP, ACS, assertion_id="_trs", encrypt=enc, now=T0 + 59)
    lasso_sp_decrypt_login(sp_enc, idp.metadata, b64)               # sane before
    bad_b64 = TestIdP.tamper_response_signature(b64)
    xml = base64.b64decode(b64).decode()
    bad = base64.b64decode(bad_b64).decode()
    assert len(bad) == len(xml) and sum(x != y for x, y in zip(xml, bad)) == 1
    ii = parse(bad).get("IssueInstant")
    assert ii != parse(xml).get("IssueInstant")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:[0-5]\dZ", ii)
    assert not xmlsec_verify(tmp_path, bad, idp.cert_path, RESP_SIG)
    with pytest.raises(lasso.Error):
        lasso_sp_decrypt_login(sp_enc, idp.metadata, bad_b64)
    if encrypted:
        assert ea_span(bad) == ea_span(xml)
        dec = xmlsec_decrypt(tmp_path, bad, sp_key)
        assert decrypted_assertion(dec).get("ID") == "_trs"
        assert xmlsec_verify(tmp_path, dec, idp.cert_path, assertion_sig("_trs"))
    else:
        assert xmlsec_verify(tmp_path, bad, idp.cert_path, assertion_sig("_trs"))
    unsigned = idp.mint(SP, ACS, sign_response=False, encrypt=enc)
    with pytest.raises(ValueError):
        TestIdP.tamper_response_signature(unsigned)
    with pytest.raises(ValueError):
        TestIdP.tamper_response_signature(
            idp.mint(SP, ACS, issue_instant_offset=None, encrypt=enc))


def test_concurrent_encrypted_mints(idp, sp_enc, tmp_path):
    _, sp_key, sp_crt, _ = sp_enc
    encs = [tidp.Encryption(sp_crt, data="aes128-cbc", engine="lasso"),
            tidp.Encryption(sp_crt), None]

    def one(i):
        return i, idp.mint_xml(SP, ACS, assertion_id="_c%d" % i, encrypt=encs[i % 3],
                               signature_method=("rsa-sha1", "rsa-sha256")[i % 2])

    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        results = list(ex.map(one, range(9)))
    for i, xml in results:
        if encs[i % 3] is None:
            a = parse(xml).find("saml:Assertion", NS)
        else:
            a = decrypted_assertion(xmlsec_decrypt(tmp_path, xml, sp_key))
        assert a.get("ID") == "_c%d" % i
        assert xmlsec_verify(tmp_path, xml, idp.cert_path, RESP_SIG)


def test_cli_mint_encrypted(tmp_path, sp_enc):
    _, sp_key, sp_crt, _ = sp_enc
    wd = str(tmp_path / "cli-enc")
    xml = run_cli("mint", "--workdir", wd, "--sp-entity-id", SP, "--acs-url", ACS,
                  "--assertion-id", "_clienc", "--encrypt-cert", sp_crt,
                  "--encrypt-data", "aes256-cbc", "--encrypt-key", "rsa-1_5",
                  "--encrypt-engine", "lasso", "--encrypt-key-placement", "sibling",
                  "--signature-method", "rsa-sha1", "--xml")
    root = parse(xml)
    ed, ek, placement = enc_parts(root.find("saml:EncryptedAssertion", NS))
    assert placement == "sibling"
    assert ed.find("xenc:EncryptionMethod", NS_ENC).get("Algorithm") == tidp.ENC_AES256_CBC
    assert ek.find("xenc:EncryptionMethod", NS_ENC).get("Algorithm") == tidp.KEY_RSA_1_5
    assert sig_algs(root) == (tidp.SIG_ALG_RSA_SHA1, [tidp.DIGEST_SHA1])
    a = decrypted_assertion(xmlsec_decrypt(tmp_path, xml, sp_key))
    assert a.get("ID") == "_clienc"
    assert sig_algs(a) == (tidp.SIG_ALG_RSA_SHA1, [tidp.DIGEST_SHA1])
    md = os.path.join(wd, "idp-metadata.xml")
    assert xmlsec_verify(tmp_path, xml, os.path.join(wd, "idp.crt"), RESP_SIG)
    b64 = run_cli("mint", "--workdir", wd, "--sp-entity-id", SP, "--acs-url", ACS,
                  "--encrypt-cert", sp_crt, "--tamper-response-signature").strip()
    with pytest.raises(lasso.Error):
        lasso_sp_decrypt_login(sp_enc, open(md).read(), b64)
    res = subprocess.run([PYTHON, SCRIPT, "mint", "--workdir", wd, "--sp-entity-id", SP,
                          "--acs-url", ACS, "--encrypt-data", "aes128-cbc"],
                         stdin=subprocess.DEVNULL, capture_output=True, text=True,
                         timeout=CLI_TIMEOUT)
    assert res.returncode != 0 and "--encrypt-cert" in res.stderr


def test_lasso_sp_side_encryption_quirks(idp, sp_enc, other_key, tmp_path):
    """What Lasso 2.8's SP side does with encrypted assertions (recorded so
    that an upgrade that changes it is noticed; the module must not rely
    on Lasso for any of it)."""
    _, sp_key, sp_crt, _ = sp_enc
    # RSA-1.5 key transport and 3DES content encryption are accepted.
    for kw in (dict(key="rsa-1_5"), dict(data="tripledes-cbc")):
        xml = idp.mint_xml(SP, ACS, assertion_id="_q", encrypt=tidp.Encryption(sp_crt, **kw))
        assert lasso_sp_decrypt_login(sp_enc, idp.metadata, b64of(xml)).response.assertion
    # An EncryptedAssertion it cannot decrypt (for another key) next to a
    # good one is skipped with a log line; the login succeeds with the other.
    xml = idp.mint_xml(SP, ACS, assertion_id="_good", assertions=2,
                       encrypt=(tidp.Encryption(sp_crt), tidp.Encryption(other_key[1])))
    login = lasso_sp_decrypt_login(sp_enc, idp.metadata, b64of(xml))
    assert [a.id for a in login.response.assertion] == ["_good"]
    # Two decryptable ones: both end up in response.assertion.
    xml = idp.mint_xml(SP, ACS, assertion_id="_two", assertions=2,
                       encrypt=tidp.Encryption(sp_crt))
    login = lasso_sp_decrypt_login(sp_enc, idp.metadata, b64of(xml))
    assert len(login.response.assertion) == 2
    # Plaintext first, then the decrypted ones, whatever the document order.
    xml = idp.mint_xml(SP, ACS, assertion_id="_enc_first", assertions=2,
                       encrypt=(tidp.Encryption(sp_crt), None))
    login = lasso_sp_decrypt_login(sp_enc, idp.metadata, b64of(xml))
    assert [a.id for a in login.response.assertion][1] == "_enc_first"


# -- the pysaml2 IdP (tests/interop/pysaml2_idp.py) ------------------------

sys.path.insert(0, os.path.join(os.path.dirname(HERE), "interop"))
try:
    import pysaml2_idp as p2lib  # noqa: E402
except ImportError:     # pragma: no cover - environment problem
    p2lib = None

needs_pysaml2 = pytest.mark.skipif(p2lib is None, reason="python3-pysaml2 missing")
P2_COMBOS = [(d, k) for d in (p2lib.ENCRYPTION_DATA if p2lib else ())
             for k in (p2lib.ENCRYPTION_KEY if p2lib else ())]


@pytest.fixture(scope="module")
def p2idp(tmp_path_factory, sp_enc):
    idp = p2lib.Pysaml2IdP(str(tmp_path_factory.mktemp("p2idp")))
    idp.add_sp_metadata(sp_enc[3])
    return idp


@needs_pysaml2
@pytest.mark.parametrize("data,key", P2_COMBOS, ids=["-".join(c) for c in P2_COMBOS])
def test_pysaml2_encryption_algorithms(p2idp, sp_enc, tmp_path, data, key):
    _, sp_key, sp_crt, _ = sp_enc
    xml = p2idp.mint_xml(SP, ACS, name_id="dave", in_response_to="_rq",
                         encrypt_cert=sp_crt, encrypt_data=data, encrypt_key=key)
    info = p2lib.response_info(xml)
    assert info["assertion_id"] is None
    assert info["encrypted_assertions"] == [{"data": p2lib.ENCRYPTION_DATA[data][0],
                                             "key": p2lib.ENCRYPTION_KEY[key]}]
    assert info["in_response_to"] == "_rq"
    _, ek, placement = enc_parts(parse(xml).find("saml:EncryptedAssertion", NS))
    assert placement == "keyinfo"
    sk = openssl_unwrap(tmp_path, ek, sp_key, "pkcs1" if key == "rsa-1_5" else "oaep")
    assert sk is not None and len(sk) == SESSION_KEY_BYTES[data]
    dec = xmlsec_decrypt(tmp_path, xml, sp_key)
    a = decrypted_assertion(dec)
    assert a.find("saml:Subject/saml:NameID", NS).text == "dave"
    assert xmlsec_verify(tmp_path, dec, p2idp.cert_path, assertion_sig(a.get("ID")))
    login = lasso_sp_decrypt_login(sp_enc, p2idp.metadata, b64of(xml))
    assert login.response.assertion[0].id == a.get("ID")


@needs_pysaml2
@pytest.mark.parametrize("sign_response,sign_assertion", SHAPES,
                         ids=["both", "response", "assertion", "neither"])
def test_pysaml2_encrypted_signing_shapes(p2idp, sp_enc, other_key, tmp_path,
                                          sign_response, sign_assertion):
    _, sp_key, sp_crt, _ = sp_enc
    b64 = p2idp.mint(SP, ACS, encrypt_cert=sp_crt, encrypt_data="aes256-cbc",
                     sign_response=sign_response, sign_assertion=sign_assertion)
    xml = base64.b64decode(b64).decode()
    info = p2lib.response_info(b64)
    assert info["response_signed"] == sign_response
    if sign_response:
        assert xmlsec_verify(tmp_path, xml, p2idp.cert_path, RESP_SIG)
    a = decrypted_assertion(xmlsec_decrypt(tmp_path, xml, sp_key))
    assert (a.find("ds:Signature", NS) is not None) == sign_assertion
    if sign_assertion:
        assert xmlsec_verify(tmp_path, xmlsec_decrypt(tmp_path, xml, sp_key),
                             p2idp.cert_path, assertion_sig(a.get("ID")))
    assert xmlsec_decrypt(tmp_path, xml, other_key[0]) is None
    if sign_response or sign_assertion:
        lasso_sp_decrypt_login(sp_enc, p2idp.metadata, b64)
    else:
        with pytest.raises(lasso.Error):
            lasso_sp_decrypt_login(sp_enc, p2idp.metadata, b64)


@needs_pysaml2
def test_pysaml2_encryption_refusals(p2idp, sp_enc):
    _, _, sp_crt, _ = sp_enc
    with pytest.raises(ValueError):
        p2idp.mint_xml(SP, ACS, encrypt_cert=sp_crt, encrypt_key="rsa-oaep")
    with pytest.raises(ValueError):
        p2idp.mint_xml(SP, ACS, encrypt_cert=sp_crt, encrypt_data="aes192-gcm")
    # without encrypt_cert nothing is encrypted, as before
    info = p2lib.response_info(p2idp.mint(SP, ACS))
    assert info["encrypted_assertions"] == [] and info["assertion_signed"]


# --------------------------------------------------------------------------
# engine "cryptography": what each option writes, checked with openssl
# --------------------------------------------------------------------------

def openssl_unwrap_oaep(tmp_path, ek, key, md="sha1", mgf="sha1", label=None):
    """The session key in EncryptedKey ek unwrapped by openssl pkeyutl with
    RSA-OAEP, digest md, MGF1 with mgf, label (bytes); None if refused."""
    stamp = time.monotonic_ns()
    src = tmp_path / ("ek-%d.bin" % stamp)
    src.write_bytes(base64.b64decode("".join(
        ek.find("xenc:CipherData/xenc:CipherValue", NS_ENC).text.split())))
    opts = ["-pkeyopt", "rsa_padding_mode:oaep", "-pkeyopt", "rsa_oaep_md:" + md,
            "-pkeyopt", "rsa_mgf1_md:" + mgf]
    if label:
        opts += ["-pkeyopt", "rsa_oaep_label:" + label.hex()]
    res = subprocess.run(["openssl", "pkeyutl", "-decrypt", "-inkey", key,
                          "-in", str(src)] + opts,
                         stdin=subprocess.DEVNULL, capture_output=True,
                         timeout=OPENSSL_TIMEOUT)
    return res.stdout if res.returncode == 0 else None


def data_bytes(ed):
    return base64.b64decode("".join(
        ed.find("xenc:CipherData/xenc:CipherValue", NS_ENC).text.split()))


def openssl_cbc(tmp_path, data, session_key):
    """AES-CBC of data (IV first) decrypted by openssl enc, no padding
    removed; None if openssl refuses."""
    src = tmp_path / ("cbc-%d.bin" % time.monotonic_ns())
    src.write_bytes(data[16:])
    res = subprocess.run(["openssl", "enc", "-d", "-aes-%d-cbc" % (8 * len(session_key)),
                          "-K", session_key.hex(), "-iv", data[:16].hex(), "-nopad",
                          "-in", str(src)], stdin=subprocess.DEVNULL,
                         capture_output=True, timeout=OPENSSL_TIMEOUT)
    return res.stdout if res.returncode == 0 else None


def crypt_parts(idp, crt, aid, **kw):
    enc = tidp.Encryption(crt, engine="cryptography", **kw)
    xml = idp.mint_xml(SP, ACS, assertion_id=aid, name_id="dora", encrypt=enc,
                       sign_response=False)
    (ea,) = parse(xml).findall("saml:EncryptedAssertion", NS)
    return xml, ea


CRYPT_OAEP = [("rsa-oaep-mgf1p", None, None, None), ("rsa-oaep-mgf1p", "sha256", None, None),
              ("rsa-oaep-mgf1p", "sha512", None, b"a label"), ("rsa-oaep", None, None, None),
              ("rsa-oaep", "sha224", "sha384", None), ("rsa-oaep", "sha384", "sha512", b"\0\1")]


@pytest.mark.parametrize("key,digest,mgf,label", CRYPT_OAEP,
                         ids=["-".join(str(x) for x in c) for c in CRYPT_OAEP])
def test_cryptography_key_transport(idp, sp_enc, tmp_path, key, digest, mgf, label):
    """The EncryptionMethod says what was done, and openssl unwraps the key
    with exactly those parameters (and not with SHA-1 defaults where they
    differ); with DigestMethod SHA-1 and no MGF or label xmlsec1 decrypts
    it too."""
    _, sp_key, sp_crt, _ = sp_enc
    xml, ea = crypt_parts(idp, sp_crt, "_ck", key=key, digest=digest, mgf=mgf, label=label)
    ed, ek, placement = enc_parts(ea)
    assert placement == "keyinfo"
    em = ek.find("xenc:EncryptionMethod", NS_ENC)
    assert em.get("Algorithm") == tidp.KEY_ALGORITHMS[key]
    dm = em.find("ds:DigestMethod", NS)
    assert (dm.get("Algorithm") if dm is not None else None) == \
        (tidp.OAEP_DIGESTS[digest] if digest else None)
    mg = em.find("{%s}MGF" % tidp.XENC11_NS)
    assert (mg.get("Algorithm") if mg is not None else None) == \
        (tidp.OAEP_MGFS[mgf] if mgf else None)
    lb = em.find("xenc:OAEPparams", NS_ENC)
    assert (base64.b64decode(lb.text) if lb is not None else None) == label
    session = openssl_unwrap_oaep(tmp_path, ek, sp_key, digest or "sha1", mgf or "sha1", label)
    assert session is not None and len(session) == 16
    if digest not in (None, "sha1") or mgf not in (None, "sha1") or label:
        assert openssl_unwrap_oaep(tmp_path, ek, sp_key) is None
        assert xmlsec_decrypt(tmp_path, xml, sp_key) is None
    else:
        assert decrypted_assertion(xmlsec_decrypt(tmp_path, xml, sp_key)).get("ID") == "_ck"


@pytest.mark.parametrize("data", ["aes128-gcm", "aes192-gcm", "aes256-gcm", "aes128-cbc",
                                  "aes192-cbc", "aes256-cbc"])
@pytest.mark.parametrize("padding", ["pkcs7", "random"])
def test_cryptography_data(idp, sp_enc, tmp_path, data, padding):
    """Every AES: the key unwrapped by openssl decrypts the data to the
    assertion (CBC: openssl enc, the padding as asked; GCM: 12-byte IV,
    16-byte tag)."""
    if padding == "random" and data.endswith("gcm"):
        pytest.skip("no padding in GCM")
    _, sp_key, sp_crt, _ = sp_enc
    _, ea = crypt_parts(idp, sp_crt, "_cd", data=data, key="rsa-oaep", digest="sha256",
                        cbc_padding=padding)
    ed, ek, _ = enc_parts(ea)
    assert ed.find("xenc:EncryptionMethod", NS_ENC).get("Algorithm") == \
        tidp.DATA_ALGORITHMS[data]
    session = openssl_unwrap_oaep(tmp_path, ek, sp_key, "sha256")
    assert len(session) == SESSION_KEY_BYTES[data]
    ct = data_bytes(ed)
    if data.endswith("cbc"):
        plain = openssl_cbc(tmp_path, ct, session)
        n = plain[-1]
        assert 1 <= n <= 16 and (padding == "random" or plain[-n:] == bytes([n]) * n)
        plain = plain[:-n]
    else:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        plain = AESGCM(session).decrypt(ct[:12], ct[12:], None)
    a = ET.fromstring(plain)
    assert a.tag == "{%s}Assertion" % tidp.SAML_NS and a.get("ID") == "_cd"


def test_cryptography_key_info_and_recipients(idp, sp_enc, other_key, tmp_path):
    """How each EncryptedKey names its key (the values openssl reads from
    the certificate), other recipients' keys first (their keys unwrap the
    same session key), inline or peer."""
    _, sp_key, sp_crt, _ = sp_enc
    ssl = lambda *a: subprocess.run(["openssl", "x509", "-noout", "-in", sp_crt] + list(a),  # noqa: E731
                                    capture_output=True, text=True, check=True,
                                    timeout=OPENSSL_TIMEOUT).stdout.strip()
    serial = int(ssl("-serial").split("=", 1)[1], 16)
    cn = ssl("-subject", "-nameopt", "RFC2253").split("CN=", 1)[1].split(",")[0]
    for ki in tidp.KEY_INFOS:
        _, ea = crypt_parts(idp, sp_crt, "_ki", key_info=ki)
        _, ek, _ = enc_parts(ea)
        info = ek.find("ds:KeyInfo", NS)
        if ki == "none":
            assert info is None
            continue
        if ki == "cert":
            assert "".join(info.find("ds:X509Data/ds:X509Certificate", NS).text.split()) == \
                tidp._pem_body(sp_crt)
        elif ki == "issuer-serial":
            iss = info.find("ds:X509Data/ds:X509IssuerSerial", NS)
            assert int(iss.find("ds:X509SerialNumber", NS).text) == serial
            assert iss.find("ds:X509IssuerName", NS).text == "CN=" + cn
        elif ki == "subject-name":
            assert info.find("ds:X509Data/ds:X509SubjectName", NS).text == "CN=" + cn
        else:
            assert info.find("ds:KeyName", NS).text == cn
    _, ea = crypt_parts(idp, sp_crt, "_kn", key_info="key-name", key_name="enc-2027")
    assert enc_parts(ea)[1].find("ds:KeyInfo/ds:KeyName", NS).text == "enc-2027"
    for placement in tidp.KEY_PLACEMENTS:
        _, ea = crypt_parts(idp, sp_crt, "_ot", others=(other_key[1],), key="rsa-oaep",
                            key_placement=placement)
        ed = ea.find("xenc:EncryptedData", NS_ENC)
        eks = (ed.findall("ds:KeyInfo/xenc:EncryptedKey", NS_ENC) if placement == "keyinfo"
               else ea.findall("xenc:EncryptedKey", NS_ENC))
        assert len(eks) == 2
        assert eks[0].get("Recipient") is None and eks[1].get("Recipient") == SP
        theirs = openssl_unwrap_oaep(tmp_path, eks[0], other_key[0])
        ours = openssl_unwrap_oaep(tmp_path, eks[1], sp_key)
        assert theirs is not None and theirs == ours
        assert openssl_unwrap_oaep(tmp_path, eks[0], sp_key) is None
        if placement == "sibling":
            rms = ed.findall("ds:KeyInfo/ds:RetrievalMethod", NS)
            assert [r.get("URI") for r in rms] == ["#" + e.get("Id") for e in eks]


def test_cryptography_corruptions(idp, sp_enc, tmp_path):
    """Each corruption is what it says, as openssl and python3-cryptography
    see it."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    _, sp_key, sp_crt, _ = sp_enc

    def parts(data, corrupt):
        _, ea = crypt_parts(idp, sp_crt, "_cc", data=data, corrupt=corrupt, key="rsa-oaep")
        ed, ek, _ = enc_parts(ea)
        return data_bytes(ed), ek

    ct, ek = parts("aes128-gcm", "tag")
    with pytest.raises(InvalidTag):
        AESGCM(openssl_unwrap_oaep(tmp_path, ek, sp_key)).decrypt(ct[:12], ct[12:], None)
    ct, ek = parts("aes128-gcm", "data")
    with pytest.raises(InvalidTag):
        AESGCM(openssl_unwrap_oaep(tmp_path, ek, sp_key)).decrypt(ct[:12], ct[12:], None)
    ct, ek = parts("aes128-cbc", "padding")
    assert openssl_cbc(tmp_path, ct, openssl_unwrap_oaep(tmp_path, ek, sp_key))[-1] == 0
    ct, ek = parts("aes128-cbc", "truncate")
    assert len(ct) % 16 == 0 and len(ct) >= 32    # a block less, still blocks
    assert openssl_cbc(tmp_path, ct, openssl_unwrap_oaep(tmp_path, ek, sp_key)) is not None
    ct, ek = parts("aes256-gcm", "key")
    assert openssl_unwrap_oaep(tmp_path, ek, sp_key) is None
    ct, ek = parts("aes256-gcm", "key-size")
    assert len(openssl_unwrap_oaep(tmp_path, ek, sp_key)) == 16
    ct, ek = parts("aes128-gcm", "key-size")
    assert len(openssl_unwrap_oaep(tmp_path, ek, sp_key)) == 32
    ct, ek = parts("aes128-gcm", "label")
    assert ek.find("xenc:EncryptionMethod/xenc:OAEPparams", NS_ENC) is None
    assert openssl_unwrap_oaep(tmp_path, ek, sp_key) is None
    assert len(openssl_unwrap_oaep(tmp_path, ek, sp_key,
                                   label=b"-not-the-label-written")) == 16


def test_cryptography_refusals(sp_enc):
    _, _, sp_crt, _ = sp_enc
    for kw in (dict(digest="sha256"), dict(label=b"x"), dict(key_info="none"),
               dict(others=(sp_crt,)), dict(cbc_padding="random"), dict(corrupt="tag")):
        with pytest.raises(ValueError):
            tidp.Encryption(sp_crt, **kw)          # engine xmlsec1
    for kw in (dict(digest="md5"), dict(mgf="sha3"), dict(key="rsa-1_5", digest="sha1"),
               dict(label="text"), dict(key_info="ski"), dict(cbc_padding="zero"),
               dict(corrupt="everything"), dict(corrupt="tag", data="aes128-cbc"),
               dict(corrupt="padding"), dict(corrupt="label", key="rsa-1_5"),
               dict(data="tripledes-cbc")):
        with pytest.raises(ValueError):
            tidp.Encryption(sp_crt, engine="cryptography", **kw)
    enc = tidp.Encryption(sp_crt, engine="cryptography", digest="sha256", label=b"l")
    assert "digest='sha256'" in repr(enc) and "key_info='cert'" in repr(enc)
