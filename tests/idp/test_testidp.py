"""Self-tests of the test IdP (tests/idp/rsp_testidp.py).

Run:  /usr/bin/python3 -m pytest tests/idp -q

Signatures are checked by verifiers independent of the minting code:
a Lasso *SP-side* login (lasso.Server for an SP that knows the IdP's
metadata, Login.processAuthnResponseMsg) and the xmlsec1 command line tool
with the IdP certificate as the only trusted key.  Every wait is bounded.
"""

import base64
import html as html_mod
import concurrent.futures
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
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
