#!/usr/bin/python3
"""A second, independent SAML 2.0 IdP for mod_replay_sp's interoperability
tests: pysaml2 (Debian's python3-pysaml2), which signs with the xmlsec1
binary, where every other test response is minted with python3-lasso (the
library the module itself uses).

Everything SAML here is pysaml2's own code: ``saml2.server.Server`` with a
configuration built in code (no config file), its metadata written by
``saml2.metadata`` from that configuration, responses built and signed by
``Server.create_authn_response``, AuthnRequests parsed by
``Server.parse_authn_request``, their HTTP-Redirect signatures checked
with pysaml2's signers (``saml2.sigver.verify_redirect_signature``, or over
the octets as received when the sender percent-encodes differently from
Python). This module adds only the plumbing: a key pair made with openssl,
a bound on every xmlsec1 run, and a few accessors on the resulting XML.

Run it with /usr/bin/python3 (Debian's pysaml2 is not visible to other
interpreters). No network: the SP metadata is given inline (text or a file
path); nothing is fetched.

::

    idp = Pysaml2IdP(workdir)                    # key pair + metadata file
    idp.metadata_path                             # -> ReplaySPIdPMetadataFile
    idp.add_sp_metadata(xml_text_or_path)         # the SP(s) it may answer
    b64 = idp.mint(sp_entity_id, acs_url, name_id="alice",
                   attributes={"mail": ["alice@example.org"]},
                   sign_assertion=True, sign_response=False)
    req_id, b64, acs = idp.answer_redirect(query_string_or_url)
    bad = tamper(b64)                             # one character changed
    enc = idp.mint(sp_entity_id, acs_url, encrypt_cert="sp-enc.crt",
                   encrypt_data="aes128-cbc", encrypt_key="rsa-oaep-mgf1p")

Encrypted assertions are pysaml2's own too: ``create_authn_response`` with
``encrypt_assertion=True`` and ``encrypt_cert_assertion`` (the assertion
signed first, if asked, then encrypted by ``CryptoBackendXmlSec1.
encrypt_assertion`` into the ``pre_encryption_part`` template, then the
Response signed, if asked).  pysaml2 7.0.1 always asks that template for
its defaults (tripledes-cbc, rsa-oaep-mgf1p, a des-192 session key); the
only change made here is to the algorithm URIs of that template and the
session key type, the two knobs ``pre_encryption_part(msg_enc, key_enc)``
and ``encrypt_assertion(key_type)`` have.
"""

import base64
import contextlib
import os
import re
import subprocess
import tempfile
import urllib.parse
import warnings
import xml.etree.ElementTree as ET
import zlib


@contextlib.contextmanager
def _quiet():
    """Debian's pysaml2 7.0.1 on Python 3.11 raises DeprecationWarnings of
    its own (typing.io, pathlib.Path as a context manager) while it imports
    and loads its schemas: nothing the tests can act on."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


with _quiet():
    try:
        from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT
        from saml2.attribute_converter import AttributeConverter
        from saml2.config import IdPConfig
        from saml2.metadata import entity_descriptor, metadata_tostring_fix
        from saml2.saml import NAMEID_FORMAT_UNSPECIFIED, NameID
        from saml2.server import Server
        from saml2.sigver import (SIGNER_ALGS, CryptoBackendXmlSec1, XmlsecError,
                                  extract_rsa_key_from_x509_cert, pem_format,
                                  verify_redirect_signature)
    except ImportError as exc:  # pragma: no cover - environment problem
        raise ImportError("pysaml2_idp needs Debian's python3-pysaml2: run it with "
                          "/usr/bin/python3 (%s)" % exc) from exc

__all__ = ["Pysaml2IdP", "make_keypair", "sp_metadata", "tamper", "response_info",
           "DEFAULT_ENTITY_ID", "SAML_NS", "SAMLP_NS", "DS_NS", "XENC_NS",
           "ENCRYPTION_DATA", "ENCRYPTION_KEY"]

DEFAULT_ENTITY_ID = "https://pysaml2-idp.test.example/idp"
DEFAULT_SSO_URL = "http://127.0.0.1/pysaml2-idp/sso"
XMLSEC1 = "/usr/bin/xmlsec1"
OPENSSL = "openssl"

SAML_NS = "urn:oasis:names:tc:SAML:2.0:assertion"
SAMLP_NS = "urn:oasis:names:tc:SAML:2.0:protocol"
MD_NS = "urn:oasis:names:tc:SAML:2.0:metadata"
DS_NS = "http://www.w3.org/2000/09/xmldsig#"
NAME_FORMAT_BASIC = "urn:oasis:names:tc:SAML:2.0:attrname-format:basic"
AC_PPT = "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport"
XENC_NS = "http://www.w3.org/2001/04/xmlenc#"
XENC11_NS = "http://www.w3.org/2009/xmlenc11#"
# What pysaml2 7.0.1 (through xmlsec1 1.2.37) can encrypt an assertion with:
# encrypt_data -> (EncryptedData EncryptionMethod, xmlsec1 --session-key)
ENCRYPTION_DATA = {
    "aes128-cbc": (XENC_NS + "aes128-cbc", "aes-128"),
    "aes256-cbc": (XENC_NS + "aes256-cbc", "aes-256"),
    "aes128-gcm": (XENC11_NS + "aes128-gcm", "aes-128"),
    "aes256-gcm": (XENC11_NS + "aes256-gcm", "aes-256"),
    "tripledes-cbc": (XENC_NS + "tripledes-cbc", "des-192"),   # pysaml2's default
}
# encrypt_key -> EncryptedKey EncryptionMethod (xmlenc11#rsa-oaep: xmlsec1
# 1.2.37 refuses it, so pysaml2 cannot produce it)
ENCRYPTION_KEY = {
    "rsa-oaep-mgf1p": XENC_NS + "rsa-oaep-mgf1p",            # pysaml2's default
    "rsa-1_5": XENC_NS + "rsa-1_5",
}

OPENSSL_TIMEOUT = 60      # seconds, key generation
XMLSEC_TIMEOUT = 30       # seconds, one xmlsec1 run (sign or verify)
MAX_SAML_REQUEST = 64 * 1024   # bytes of an inflated AuthnRequest we accept
MAX_QUERY = 16 * 1024          # characters of an HTTP-Redirect query we accept


class BoundedXmlSec1(CryptoBackendXmlSec1):
    """pysaml2's xmlsec1 backend, with every run of the binary bounded in
    time (pysaml2 waits for it without a limit)."""

    def _run_xmlsec(self, com_list, extra_args):
        with tempfile.NamedTemporaryFile(suffix=".xml") as ntf:
            com_list = list(com_list) + ["--output", ntf.name] + list(extra_args)
            try:
                res = subprocess.run(com_list, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     timeout=XMLSEC_TIMEOUT)
            except subprocess.TimeoutExpired as exc:
                raise XmlsecError("xmlsec1 did not finish within %d s" % XMLSEC_TIMEOUT) from exc
            out = res.stdout.decode("utf-8", "replace")
            err = res.stderr.decode("utf-8", "replace")
            if res.returncode != 0:
                raise XmlsecError("returncode=%d\nerror=%s\noutput=%s"
                                  % (res.returncode, err, out))
            ntf.seek(0)
            return out, err, ntf.read()


# --------------------------------------------------------------------------
# keys and metadata
# --------------------------------------------------------------------------

def make_keypair(directory, name="idp", cn="pysaml2 interop test idp"):
    """RSA 2048 key + self-signed certificate (SHA-256, 10 years), PEM,
    made with openssl: <directory>/<name>.key and .crt (replaced if they
    exist). Returns (key_path, cert_path)."""
    os.makedirs(directory, exist_ok=True)
    key_path = os.path.join(directory, name + ".key")
    cert_path = os.path.join(directory, name + ".crt")
    subj = "/CN=" + cn.replace("\\", "\\\\").replace("/", "\\/")
    tmp_key, tmp_crt = key_path + ".tmp", cert_path + ".tmp"
    res = subprocess.run([OPENSSL, "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                          "-sha256", "-days", "3650", "-subj", subj,
                          "-keyout", tmp_key, "-out", tmp_crt],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, timeout=OPENSSL_TIMEOUT)
    if res.returncode != 0:
        raise RuntimeError("openssl req failed (%d): %s"
                           % (res.returncode, res.stderr.decode("utf-8", "replace")))
    os.chmod(tmp_key, 0o600)
    os.replace(tmp_key, key_path)
    os.replace(tmp_crt, cert_path)
    return key_path, cert_path


def _pem_body(cert_path):
    with open(cert_path, encoding="ascii") as f:
        m = re.search(r"-----BEGIN CERTIFICATE-----(.*?)-----END CERTIFICATE-----",
                      f.read(), re.S)
    if not m:
        raise ValueError("no PEM certificate in %s" % cert_path)
    return "".join(m.group(1).split())


def _esc(v):
    return (str(v).replace("&", "&amp;").replace("<", "&lt;")
            .replace(">", "&gt;").replace('"', "&quot;"))


def sp_metadata(entity_id, acs_url, cert_path=None):
    """Minimal SP metadata (one HTTP-POST AssertionConsumerService), for an
    SP the tests only need the IdP to know about (e.g. another audience)."""
    kd = ""
    if cert_path:
        kd = ('    <md:KeyDescriptor use="signing"><ds:KeyInfo xmlns:ds="%s"><ds:X509Data>'
              "<ds:X509Certificate>%s</ds:X509Certificate></ds:X509Data></ds:KeyInfo>"
              "</md:KeyDescriptor>\n" % (DS_NS, _pem_body(cert_path)))
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<md:EntityDescriptor xmlns:md="%s" entityID="%s">\n'
            '  <md:SPSSODescriptor protocolSupportEnumeration="%s">\n%s'
            '    <md:AssertionConsumerService index="0" isDefault="true"'
            ' Binding="%s" Location="%s"/>\n'
            "  </md:SPSSODescriptor>\n</md:EntityDescriptor>\n"
            % (MD_NS, _esc(entity_id), SAMLP_NS, kd, BINDING_HTTP_POST, _esc(acs_url)))


def _write_atomic(path, text):
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


# --------------------------------------------------------------------------
# looking at what pysaml2 produced
# --------------------------------------------------------------------------

def _xml_of(b64_or_xml):
    if isinstance(b64_or_xml, bytes):
        b64_or_xml = b64_or_xml.decode("ascii")
    s = b64_or_xml.lstrip()
    return s if s.startswith("<") else base64.b64decode(s).decode("utf-8")


def response_info(b64_or_xml):
    """What a test needs to know about a Response (base64 or XML):
    {response_id, assertion_id, issuer (the assertion's), name_id,
    in_response_to (Response), scd_in_response_to, destination, recipient,
    audiences, response_signed, assertion_signed, attributes {name: [values]},
    encrypted_assertions [{"data": EncryptedData's EncryptionMethod, "key":
    its EncryptedKey's EncryptionMethod (None if no EncryptedKey inside
    EncryptedData's KeyInfo)}]}.  The assertion fields describe the
    plaintext Assertion child of the Response (None/empty/False when there
    is none, e.g. when the assertion is encrypted)."""
    root = ET.fromstring(_xml_of(b64_or_xml))
    if root.tag != "{%s}Response" % SAMLP_NS:
        raise ValueError("not a samlp:Response: %s" % root.tag)
    sig = "{%s}Signature" % DS_NS
    a = root.find("{%s}Assertion" % SAML_NS)
    info = {"response_id": root.get("ID"), "in_response_to": root.get("InResponseTo"),
            "destination": root.get("Destination"),
            "response_signed": root.find(sig) is not None,
            "assertion_id": None, "issuer": None, "name_id": None, "recipient": None,
            "scd_in_response_to": None, "audiences": [], "assertion_signed": False,
            "attributes": {}, "encrypted_assertions": []}
    for ea in root.findall("{%s}EncryptedAssertion" % SAML_NS):
        em = ea.find("{%s}EncryptedData/{%s}EncryptionMethod" % (XENC_NS, XENC_NS))
        kem = ea.find("{%s}EncryptedData/{%s}KeyInfo/{%s}EncryptedKey/{%s}EncryptionMethod"
                      % (XENC_NS, DS_NS, XENC_NS, XENC_NS))
        info["encrypted_assertions"].append(
            {"data": em.get("Algorithm") if em is not None else None,
             "key": kem.get("Algorithm") if kem is not None else None})
    if a is None:
        return info
    q = lambda *p: "/".join("{%s}%s" % (SAML_NS, x) for x in p)  # noqa: E731
    info["assertion_id"] = a.get("ID")
    info["assertion_signed"] = a.find(sig) is not None
    iss = a.find(q("Issuer"))
    info["issuer"] = iss.text.strip() if iss is not None and iss.text else None
    nid = a.find(q("Subject", "NameID"))
    info["name_id"] = nid.text if nid is not None else None
    scd = a.find(q("Subject", "SubjectConfirmation", "SubjectConfirmationData"))
    if scd is not None:
        info["recipient"] = scd.get("Recipient")
        info["scd_in_response_to"] = scd.get("InResponseTo")
    info["audiences"] = [x.text for x in a.findall(q("Conditions", "AudienceRestriction",
                                                       "Audience"))]
    for at in a.findall(q("AttributeStatement", "Attribute")):
        info["attributes"].setdefault(at.get("Name"), []).extend(
            v.text or "" for v in at.findall(q("AttributeValue")))
    return info


def tamper(b64, where="NameID"):
    """Change ONE character of the signed content of a minted response
    (base64 in, base64 out): the last character of the first ``where``
    element's text (NameID by default; or e.g. "AttributeValue",
    "Audience"). Every signature covering it no longer verifies; the XML
    stays well formed and every other byte is unchanged."""
    xml = _xml_of(b64)
    pat = re.compile(r"(<(?:[A-Za-z_][\w.-]*:)?%s\b[^>]*>)([^<]+)(<)" % re.escape(where))
    m = pat.search(xml)
    if not m:
        raise ValueError("no %s with text to tamper with" % where)
    text = m.group(2)
    last = text[-1]
    new_last = "Y" if last != "Y" else "Z"
    out = xml[:m.start(2)] + text[:-1] + new_last + xml[m.end(2):]
    assert len(out) == len(xml) and sum(x != y for x, y in zip(out, xml)) == 1
    return base64.b64encode(out.encode("utf-8")).decode("ascii")


def _encrypted_assertion_plaintext_info(statement):
    """{assertion_id, assertion_signed, scd_in_response_to} of the Assertion
    inside the EncryptedAssertion of the document pysaml2 handed to xmlsec1
    for encryption."""
    root = ET.fromstring(statement.encode("utf-8") if isinstance(statement, str)
                         else statement)
    a = root.find("{%s}EncryptedAssertion/{%s}Assertion" % (SAML_NS, SAML_NS))
    if a is None:
        raise RuntimeError("pysaml2 encrypted no EncryptedAssertion/Assertion")
    scd = a.find("/".join("{%s}%s" % (SAML_NS, x) for x in
                          ("Subject", "SubjectConfirmation", "SubjectConfirmationData")))
    return {"assertion_id": a.get("ID"),
            "assertion_signed": a.find("{%s}Signature" % DS_NS) is not None,
            "scd_in_response_to": scd.get("InResponseTo") if scd is not None else None}


def _choose_encryption_algorithms(sec):
    """Let mint_xml choose the algorithms of pysaml2's assertion encryption.

    pysaml2 7.0.1's Entity._encrypt_assertion always calls
    ``sec.encrypt_assertion(response, cert, pre_encryption_part(...))``
    with pre_encryption_part's defaults (tripledes-cbc, rsa-oaep-mgf1p) and
    encrypt_assertion's default session key (des-192).  This wraps the
    SecurityContext's encrypt_assertion: when ``sec.rsp_encryption`` is
    (data URI, session key type, key URI), the template's two
    EncryptionMethod URIs and the session key type are set to those before
    pysaml2 runs xmlsec1; the document handed over (the signed assertion
    in its EncryptedAssertion, in plaintext) is kept in
    ``sec.rsp_plaintext`` for mint_xml's checks."""
    original = sec.encrypt_assertion
    sec.rsp_encryption = None
    sec.rsp_plaintext = []

    def encrypt_assertion(statement, enc_key, template, key_type="des-192",
                          node_xpath=None):
        choice = sec.rsp_encryption
        if choice is not None:
            data_uri, key_type, key_uri = choice
            template.encryption_method.algorithm = data_uri
            eks = template.key_info.encrypted_key
            for ek in eks if isinstance(eks, list) else [eks]:
                ek.encryption_method.algorithm = key_uri
        sec.rsp_plaintext.append(statement if isinstance(statement, str)
                                 else str(statement))
        return original(statement, enc_key, template, key_type=key_type,
                        node_xpath=node_xpath)

    sec.encrypt_assertion = encrypt_assertion


# --------------------------------------------------------------------------
# the IdP
# --------------------------------------------------------------------------

class Pysaml2IdP:
    """A pysaml2 IdP living in ``workdir``: idp.key, idp.crt (made once with
    openssl, reused), idp-metadata.xml (written by pysaml2 from the
    configuration: an IDPSSODescriptor with the signing certificate and an
    HTTP-Redirect SingleSignOnService at ``sso_url``).

    The SPs it may answer are given as metadata (text or a file path) with
    ``sp_metadata=[...]`` or ``add_sp_metadata()``; the pysaml2 Server is
    (re)built from the configuration whenever that list changes.

    ``lifetime_s``: the assertion's Conditions and SubjectConfirmationData
    NotOnOrAfter are now + lifetime_s (pysaml2's policy ``lifetime``).
    Attributes are sent as given: Name = the key (no attribute map renames
    them), values as xs:string, pysaml2's default NameFormat (uri).
    """

    def __init__(self, workdir, entity_id=DEFAULT_ENTITY_ID, sso_url=DEFAULT_SSO_URL,
                 sp_metadata=(), lifetime_s=300, sign_alg=None, digest_alg=None):
        self.workdir = os.path.abspath(workdir)
        os.makedirs(self.workdir, exist_ok=True)
        self.entity_id = entity_id
        self.sso_url = sso_url
        self.lifetime_s = int(lifetime_s)
        self.sign_alg = sign_alg or "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"
        self.digest_alg = digest_alg or "http://www.w3.org/2001/04/xmlenc#sha256"
        self.key_path = os.path.join(self.workdir, "idp.key")
        self.cert_path = os.path.join(self.workdir, "idp.crt")
        if not (os.path.isfile(self.key_path) and os.path.isfile(self.cert_path)):
            make_keypair(self.workdir, "idp", "pysaml2 interop test idp")
        self.metadata_path = os.path.join(self.workdir, "idp-metadata.xml")
        self._sp_metadata = []
        self._server = None
        for md in sp_metadata:
            self._sp_metadata.append(self._md_text(md))
        self.metadata = self._metadata_xml()
        _write_atomic(self.metadata_path, self.metadata)

    # -- configuration -----------------------------------------------------

    @staticmethod
    def _md_text(md):
        if md.lstrip().startswith("<"):
            return md
        with open(md, encoding="utf-8") as f:
            return f.read()

    def config_dict(self):
        """The pysaml2 configuration, as a dict (built in code)."""
        conf = {
            "entityid": self.entity_id,
            "description": "mod_replay_sp interop test IdP (pysaml2)",
            "xmlsec_binary": XMLSEC1,
            "crypto_backend": "xmlsec1",
            "delete_tmpfiles": True,
            "key_file": self.key_path,
            "cert_file": self.cert_path,
            "allow_unknown_attributes": True,
            "service": {
                "idp": {
                    "name": "pysaml2 interop test IdP",
                    "scope": ["example.org"],
                    "endpoints": {
                        "single_sign_on_service": [(self.sso_url, BINDING_HTTP_REDIRECT)],
                    },
                    "name_id_format": [NAMEID_FORMAT_UNSPECIFIED],
                    "want_authn_requests_signed": False,
                    "sign_response": False,
                    "sign_assertion": True,
                    "policy": {
                        "default": {
                            "lifetime": {"seconds": self.lifetime_s},
                            "name_form": NAME_FORMAT_BASIC,
                            "attribute_restrictions": None,
                        },
                    },
                },
            },
            "metadata": {"inline": list(self._sp_metadata)} if self._sp_metadata else {},
        }
        return conf

    def _config(self):
        c = IdPConfig()
        c.load(self.config_dict())
        # Attributes exactly as given: one converter with empty maps, in the
        # policy's name form (pysaml2's own maps would rename "mail" & co.).
        ac = AttributeConverter(NAME_FORMAT_BASIC)
        ac.from_dict({"identifier": NAME_FORMAT_BASIC, "fro": {}, "to": {}})
        c.attribute_converters = [ac]
        return c

    def _metadata_xml(self):
        with _quiet():
            ed = entity_descriptor(self._config())
        xml = metadata_tostring_fix(ed, {"xs": "http://www.w3.org/2001/XMLSchema"})
        return xml.decode("utf-8") if isinstance(xml, bytes) else xml

    def write_metadata(self, path=None):
        """Write the IdP's metadata (pysaml2's own rendering of the
        configuration) to path (default: metadata_path); return the path."""
        path = path or self.metadata_path
        _write_atomic(path, self.metadata)
        return path

    def add_sp_metadata(self, md):
        """Trust one more SP: metadata text or a file path."""
        self._sp_metadata.append(self._md_text(md))
        self._server = None

    @property
    def server(self):
        """The saml2.server.Server (built lazily from the configuration)."""
        if self._server is None:
            if not self._sp_metadata:
                raise RuntimeError("no SP metadata given: add_sp_metadata() first")
            with _quiet():
                s = Server(config=self._config())
            backend = BoundedXmlSec1(XMLSEC1, delete_tmpfiles=True)
            s.sec.crypto = backend
            _choose_encryption_algorithms(s.sec)
            self._server = s
        return self._server

    # -- responses ---------------------------------------------------------

    def _identity(self, attributes):
        out = {}
        for k, v in (attributes or {}).items():
            out[k] = [v] if isinstance(v, str) else [str(x) for x in v]
        return out

    def mint_xml(self, sp_entity_id, acs_url, name_id="alice", attributes=None,
                 in_response_to=None, sign_assertion=True, sign_response=False,
                 name_id_format=NAMEID_FORMAT_UNSPECIFIED, encrypt_cert=None,
                 encrypt_data="aes128-cbc", encrypt_key="rsa-oaep-mgf1p"):
        """A Response from pysaml2's Server.create_authn_response: Destination
        and Recipient acs_url, Audience sp_entity_id (the SP must be in the
        metadata given), bearer confirmation, an AuthnStatement
        (PasswordProtectedTransport), the attributes given; InResponseTo
        (Response and SubjectConfirmationData) only when in_response_to is
        given. pysaml2 picks the IDs and the SessionIndex itself. Signed as
        asked (xmlsec1, RSA-SHA256; neither is allowed, for negative
        tests). Returns the XML.

        encrypt_cert: the path of the SP's encryption certificate (PEM):
        the assertion is then encrypted for it (pysaml2's
        encrypt_assertion, self-contained namespaces), with encrypt_data
        (a key of ENCRYPTION_DATA) and encrypt_key (a key of
        ENCRYPTION_KEY); sign_assertion signs it before encryption,
        sign_response signs the Response after."""
        if encrypt_cert is not None:
            if encrypt_data not in ENCRYPTION_DATA:
                raise ValueError("encrypt_data must be one of %s, not %r"
                                 % (", ".join(ENCRYPTION_DATA), encrypt_data))
            if encrypt_key not in ENCRYPTION_KEY:
                raise ValueError("encrypt_key must be one of %s, not %r (pysaml2 "
                                 "drives xmlsec1 1.2.37, which has no "
                                 "xmlenc11#rsa-oaep)"
                                 % (", ".join(ENCRYPTION_KEY), encrypt_key))
            with open(encrypt_cert, encoding="ascii") as f:
                cert_pem = f.read()
            if "-----BEGIN CERTIFICATE-----" not in cert_pem:
                raise ValueError("no PEM certificate in %s" % encrypt_cert)
        s = self.server
        nid = NameID(format=name_id_format, text=name_id)
        authn = {"class_ref": AC_PPT, "authn_auth": self.entity_id}
        enc_args = {}
        if encrypt_cert is not None:
            enc_args = {"encrypt_assertion": True, "encrypt_cert_assertion": cert_pem,
                        "encrypt_assertion_self_contained": True}
        s.sec.rsp_encryption = (ENCRYPTION_DATA[encrypt_data] + (ENCRYPTION_KEY[encrypt_key],)
                                if encrypt_cert is not None else None)
        s.sec.rsp_plaintext = []
        try:
            resp = s.create_authn_response(
                self._identity(attributes), in_response_to, acs_url, sp_entity_id,
                name_id=nid, authn=authn, sign_assertion=bool(sign_assertion),
                sign_response=bool(sign_response), sign_alg=self.sign_alg,
                digest_alg=self.digest_alg, **enc_args)
            plaintext = list(s.sec.rsp_plaintext)
        finally:
            s.sec.rsp_encryption = None
            s.sec.rsp_plaintext = []
        xml = str(resp)
        if not xml.lstrip().startswith("<"):
            raise RuntimeError("pysaml2 did not produce a Response: %r" % xml[:300])
        self._check_shape(xml, sign_assertion, sign_response, in_response_to,
                          encryption=(ENCRYPTION_DATA[encrypt_data][0],
                                      ENCRYPTION_KEY[encrypt_key])
                          if encrypt_cert is not None else None,
                          plaintext=plaintext)
        return xml

    def mint(self, sp_entity_id, acs_url, **kw):
        """As mint_xml, base64 (standard alphabet, no newlines): the value of
        the HTTP-POST binding's SAMLResponse field."""
        return base64.b64encode(self.mint_xml(sp_entity_id, acs_url, **kw).encode("utf-8")
                                ).decode("ascii")

    @staticmethod
    def _check_shape(xml, sign_assertion, sign_response, in_response_to,
                     encryption=None, plaintext=()):
        """pysaml2 must have produced what was asked for (a silently
        unsigned response would make a negative test pass for the wrong
        reason, a positive one fail for an unclear one).

        encryption: None, or the (data, key) EncryptionMethod URIs the one
        EncryptedAssertion must carry; the assertion inside is checked in
        plaintext: what pysaml2 handed to xmlsec1 to encrypt."""
        info = response_info(xml)
        if encryption is not None:
            if info["assertion_id"] is not None:
                raise RuntimeError("pysaml2 left a plaintext Assertion in the Response")
            want = [{"data": encryption[0], "key": encryption[1]}]
            if info["encrypted_assertions"] != want:
                raise RuntimeError("encrypted assertions: wanted %r, got %r"
                                   % (want, info["encrypted_assertions"]))
            if len(plaintext) != 1:
                raise RuntimeError("pysaml2 encrypted %d documents, wanted 1"
                                   % len(plaintext))
            inner = _encrypted_assertion_plaintext_info(plaintext[0])
            info.update((k, inner[k]) for k in ("assertion_id", "assertion_signed",
                                                "scd_in_response_to"))
        elif info["encrypted_assertions"]:
            raise RuntimeError("pysaml2 encrypted an assertion unasked")
        if info["assertion_id"] is None:
            raise RuntimeError("pysaml2 produced a Response without an Assertion")
        if info["assertion_signed"] != bool(sign_assertion):
            raise RuntimeError("assertion signature: wanted %s" % bool(sign_assertion))
        if info["response_signed"] != bool(sign_response):
            raise RuntimeError("response signature: wanted %s" % bool(sign_response))
        if info["in_response_to"] != in_response_to or \
                info["scd_in_response_to"] != in_response_to:
            raise RuntimeError("InResponseTo: wanted %r, got %r / %r" % (
                in_response_to, info["in_response_to"], info["scd_in_response_to"]))

    # -- SP-initiated: an HTTP-Redirect AuthnRequest -------------------------

    def parse_redirect(self, query):
        """Parse an HTTP-Redirect binding AuthnRequest with pysaml2: query is
        the query string (or a whole URL). When it carries a Signature, it
        is checked with pysaml2's signers against the signing certificate(s)
        the SP's metadata names (ValueError if it does not verify). Returns
        pysaml2's request object (``.message`` is the samlp:AuthnRequest),
        with ``redirect_signature_verified`` None (unsigned), "pysaml2" or
        "raw" (see _verify_redirect_signature)."""
        if "?" in query:
            query = urllib.parse.urlsplit(query).query
        if len(query) > MAX_QUERY:
            raise ValueError("query too long (%d characters)" % len(query))
        q = urllib.parse.parse_qs(query, keep_blank_values=True, strict_parsing=False)
        if len(q.get("SAMLRequest", [])) != 1:
            raise ValueError("the query has no (or more than one) SAMLRequest")
        s = self.server
        # bound the inflated size before pysaml2 inflates it without a limit
        d = zlib.decompressobj(-15)
        try:
            d.decompress(base64.b64decode(q["SAMLRequest"][0]), MAX_SAML_REQUEST)
        except zlib.error as exc:
            raise ValueError("SAMLRequest is not DEFLATE data: %s" % exc) from exc
        if d.unconsumed_tail:
            raise ValueError("SAMLRequest larger than %d bytes" % MAX_SAML_REQUEST)
        req = s.parse_authn_request(q["SAMLRequest"][0], BINDING_HTTP_REDIRECT)
        if req is None or req.message is None:
            raise ValueError("pysaml2 could not parse the AuthnRequest")
        if "Signature" in q:
            req.redirect_signature_verified = self._verify_redirect_signature(
                query, q, req.message.issuer.text.strip())
        else:
            req.redirect_signature_verified = None
        return req

    def _verify_redirect_signature(self, raw_query, q, sp_id):
        """Check an HTTP-Redirect signature with pysaml2's signers and the
        SP's signing certificate(s) from its metadata. Returns how it
        verified: "pysaml2" (pysaml2's verify_redirect_signature, which
        re-encodes the fields with urllib) or "raw" (over the octets as
        received, which is what SAML bindings 3.4.4.1 says is signed: a
        sender that percent-encodes differently from Python, as Lasso does
        with a space in RelayState, "%20" where Python writes "+", verifies
        only this way). ValueError if neither does."""
        s = self.server
        certs = s.metadata.certs(sp_id, "spsso", "signing")
        if not certs:
            raise ValueError("signed request from %s, whose metadata has no "
                             "signing certificate" % sp_id)
        if any(len(q.get(k, [])) > 1 for k in ("SAMLRequest", "RelayState", "SigAlg",
                                               "Signature")):
            raise ValueError("a signed query field is repeated")
        fields = {k: v[0] for k, v in q.items()}
        signer = SIGNER_ALGS.get(fields.get("SigAlg"))
        if signer is None:
            raise ValueError("unsupported SigAlg %r" % fields.get("SigAlg"))
        for cert in certs:
            if verify_redirect_signature(fields, s.sec.sec_backend, cert=cert):
                return "pysaml2"
        raw = {}
        for part in raw_query.split("&"):
            name = part.split("=", 1)[0]
            if name in ("SAMLRequest", "RelayState", "SigAlg"):
                raw[name] = part
        octets = "&".join(raw[k] for k in ("SAMLRequest", "RelayState", "SigAlg")
                          if k in raw).encode("ascii")
        sig = base64.b64decode(fields["Signature"])
        for cert in certs:
            key = extract_rsa_key_from_x509_cert(pem_format(cert))
            if signer.verify(octets, sig, key):
                return "raw"
        raise ValueError("the HTTP-Redirect signature does not verify")

    def answer_redirect(self, query, name_id="alice", attributes=None,
                        sign_assertion=True, sign_response=False, **encryption):
        """Answer an HTTP-Redirect AuthnRequest the way a pysaml2 IdP does
        (``Server.response_args`` picks the ACS from the request and the
        SP's metadata): returns (request ID, base64 Response with
        InResponseTo = that ID, ACS URL it is for).  ``encryption``:
        mint's encrypt_cert, encrypt_data, encrypt_key."""
        bad = set(encryption) - {"encrypt_cert", "encrypt_data", "encrypt_key"}
        if bad:
            raise TypeError("unexpected keyword(s): %s" % ", ".join(sorted(bad)))
        req = self.parse_redirect(query)
        args = self.server.response_args(req.message, [BINDING_HTTP_POST])
        sp_entity_id, acs = args["sp_entity_id"], args["destination"]
        b64 = self.mint(sp_entity_id, acs, name_id=name_id, attributes=attributes,
                        in_response_to=req.message.id, sign_assertion=sign_assertion,
                        sign_response=sign_response, **encryption)
        return req.message.id, b64, acs


def _main(argv=None):
    """Command line: write the metadata, or mint one response.
    pysaml2_idp.py metadata --workdir D [--entity-id E]
    pysaml2_idp.py mint --workdir D --sp-metadata F --sp-entity-id X --acs-url Y [--name-id N]
        [--sign-response] [--unsigned-assertion]
        [--encrypt-cert C [--encrypt-data ALG] [--encrypt-key ALG]]"""
    import argparse
    p = argparse.ArgumentParser(description=_main.__doc__)
    p.add_argument("cmd", choices=("metadata", "mint"))
    p.add_argument("--workdir", required=True)
    p.add_argument("--entity-id", default=DEFAULT_ENTITY_ID)
    p.add_argument("--sp-metadata", action="append", default=[])
    p.add_argument("--sp-entity-id")
    p.add_argument("--acs-url")
    p.add_argument("--name-id", default="alice")
    p.add_argument("--sign-response", action="store_true")
    p.add_argument("--unsigned-assertion", action="store_true")
    p.add_argument("--encrypt-cert", metavar="PATH",
                   help="encrypt the assertion for this SP certificate (PEM)")
    p.add_argument("--encrypt-data", choices=tuple(ENCRYPTION_DATA), default="aes128-cbc")
    p.add_argument("--encrypt-key", choices=tuple(ENCRYPTION_KEY), default="rsa-oaep-mgf1p")
    a = p.parse_args(argv)
    idp = Pysaml2IdP(a.workdir, entity_id=a.entity_id, sp_metadata=a.sp_metadata)
    if a.cmd == "metadata":
        print(idp.metadata_path)
        return 0
    if not (a.sp_entity_id and a.acs_url and a.sp_metadata):
        p.error("mint needs --sp-metadata, --sp-entity-id and --acs-url")
    print(idp.mint(a.sp_entity_id, a.acs_url, name_id=a.name_id,
                   sign_assertion=not a.unsigned_assertion, sign_response=a.sign_response,
                   encrypt_cert=a.encrypt_cert, encrypt_data=a.encrypt_data,
                   encrypt_key=a.encrypt_key))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
