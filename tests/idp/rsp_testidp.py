#!/usr/bin/python3
"""Test SAML 2.0 identity provider for mod_replay_sp's tests and demo.

It mints SAML 2.0 ``Response`` messages that are really signed (RSA-SHA256,
XML-DSig, exclusive c14n) with Debian's python3-lasso, with every field the
SP checks under the caller's control, so that tests can build both good and
subtly bad responses.

Importable module and command line tool (run with /usr/bin/python3: the
Debian python3-lasso package is not visible to other interpreters)::

    rsp_testidp.py mint  --workdir D --sp-entity-id X --acs-url Y [...]
                         [--encrypt-cert C [--encrypt-data A] [--encrypt-key K]
                          [--encrypt-engine xmlsec1|lasso]]
                         [--signature-method rsa-sha256|rsa-sha1]
    rsp_testidp.py serve --workdir D --sp-entity-id X --acs-url Y [--port 0]
                         [--sp-metadata-url U | --sp-metadata-path F]
                         [--want-authn-requests-signed] [--slo-url U]

How signing works
-----------------
The Assertion and Response element trees are built from Lasso node objects
(``lasso.Saml2Assertion``, ``lasso.Samlp2Response``...) with exactly the
values the caller asked for.  Signatures are attached the way Lasso's own IdP
code attaches them:

* assertion: ``lasso.Server.saml2AssertionSetupSignature(assertion)``;
* response: an IdP-side ``lasso.Login`` (IdP-initiated request for the SP,
  ``validateRequestMsg``) whose ``response`` is our node, then
  ``buildAuthnResponseMsg`` with signature hint FORCE (signed) or FORBID
  (unsigned).

Lasso computes the signatures when the tree is serialised, so the values we
set after ``buildAuthnResponseMsg`` (it overwrites ``Destination`` with the
ACS URL from the SP metadata) are what gets signed: the final XML is
``login.response.exportToXml()``.  We never call ``Login.buildAssertion``:
it would override Recipient, NameID and SessionIndex.

Encrypted assertions
--------------------
``mint_xml(..., encrypt=Encryption(sp_cert, ...))`` replaces assertions by
``saml:EncryptedAssertion`` elements.  Each assertion is built (and, with
``sign_assertion``, signed) by Lasso as above and serialised on its own;
that serialisation is encrypted either by the xmlsec1 command line
(``--encrypt --binary-data`` with a template written here: EncryptedData
Type=#Element, its EncryptedKey in its KeyInfo) or by Lasso
(``Provider.saml2NodeEncrypt`` for a provider whose encryption key is the
SP certificate).  Lasso then exports the Response unsigned, the encrypted
assertions take the places of their plaintext twins, and, with
``sign_response``, the xmlsec1 command line signs the Response with a
template shaped like Lasso's own signature (exclusive c14n, enveloped,
the same SignatureMethod/DigestMethod, KeyInfo/X509Data), so the Response
signature covers the EncryptedAssertion.  Every xmlsec1 run has a timeout
and works in a private temporary directory.

Single Logout (HTTP-Redirect binding)
-------------------------------------
The metadata has an HTTP-Redirect SingleLogoutService (``slo_url``,
default next to the SSO URL).  Given the SP's metadata (its certificate and
SingleLogoutService), ``TestIdP`` builds and checks logout messages whose
query signatures (RSA-SHA256; the signed string is SAMLRequest or
SAMLResponse, RelayState, SigAlg, URL-encoded as sent) are made and
verified by Lasso:

* ``logout_request_url``: IdP-initiated LogoutRequest to the SP;
* ``process_logout_response``: the SP's answer to it;
* ``answer_logout_request``: SP-initiated LogoutRequest -> LogoutResponse;
* ``verify_authn_request``: the redirect signature of an AuthnRequest.

The IdP keeps no session: Lasso's Logout profile wants one (initRequest
takes the NameID from it, validateRequest checks the SessionIndex against
it), so requests are built from a throw-away lasso.Session and responses
from a LogoutResponse node handed to Logout.buildResponseMsg.  Serve mode
adds /idp/slo, /idp/logout and /idp/slo-log.
"""

import argparse
import base64
import collections
import fcntl
import html
import http.client
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

try:
    import lasso
except ImportError as exc:  # pragma: no cover - environment problem
    raise ImportError(
        "rsp_testidp needs Debian's python3-lasso: run it with /usr/bin/python3 "
        "(%s)" % exc) from exc

__all__ = ["make_keypair", "sp_metadata", "idp_metadata", "parse_sp_metadata",
           "TestIdP", "Encryption", "SAMLMessageError", "SignatureError",
           "redirect_query", "decode_redirect_message", "redirect_message_xml",
           "SAML_NS", "SAMLP_NS", "MD_NS", "DS_NS", "XENC_NS", "XENC11_NS",
           "BEARER", "SIG_ALG_RSA_SHA256", "SIG_ALG_RSA_SHA1",
           "DIGEST_SHA256", "DIGEST_SHA1", "SIGNATURE_METHODS",
           "ENC_AES128_GCM", "ENC_AES192_GCM", "ENC_AES256_GCM",
           "ENC_AES128_CBC", "ENC_AES192_CBC", "ENC_AES256_CBC",
           "OAEP_DIGESTS", "OAEP_MGFS", "KEY_INFOS", "CORRUPTIONS", "ENC_TRIPLEDES_CBC", "KEY_RSA_OAEP_MGF1P",
           "KEY_RSA_1_5", "KEY_RSA_OAEP", "ENC_TYPE_ELEMENT",
           "DATA_ALGORITHMS", "KEY_ALGORITHMS", "ENCRYPTION_ENGINES",
           "STATUS_SUCCESS", "STATUS_REQUESTER",
           "STATUS_RESPONDER", "STATUS_REQUEST_DENIED", "STATUS_PARTIAL_LOGOUT"]

SAML_NS = "urn:oasis:names:tc:SAML:2.0:assertion"
SAMLP_NS = "urn:oasis:names:tc:SAML:2.0:protocol"
SHIBMD_NS = "urn:mace:shibboleth:metadata:1.0"
MD_NS = "urn:oasis:names:tc:SAML:2.0:metadata"
DS_NS = "http://www.w3.org/2000/09/xmldsig#"
BEARER = "urn:oasis:names:tc:SAML:2.0:cm:bearer"
BINDING_POST = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"
BINDING_REDIRECT = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"
NAMEID_UNSPECIFIED = "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified"
NAMEID_TRANSIENT = "urn:oasis:names:tc:SAML:2.0:nameid-format:transient"
NAMEID_PERSISTENT = "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent"
ATTRNAME_BASIC = "urn:oasis:names:tc:SAML:2.0:attrname-format:basic"
AC_PPT = "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport"
STATUS_SUCCESS = "urn:oasis:names:tc:SAML:2.0:status:Success"
STATUS_REQUESTER = "urn:oasis:names:tc:SAML:2.0:status:Requester"
STATUS_RESPONDER = "urn:oasis:names:tc:SAML:2.0:status:Responder"
STATUS_REQUEST_DENIED = "urn:oasis:names:tc:SAML:2.0:status:RequestDenied"
STATUS_PARTIAL_LOGOUT = "urn:oasis:names:tc:SAML:2.0:status:PartialLogout"
NAMEID_ENTITY = "urn:oasis:names:tc:SAML:2.0:nameid-format:entity"
# The HTTP-Redirect binding's SigAlg for RSA-SHA256 (the only one accepted
# by default; see TestIdP.accepted_sig_algs).
SIG_ALG_RSA_SHA256 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"
# XML-DSig SignatureMethod/DigestMethod of minted Responses and Assertions
# (mint_xml's signature_method; RSA-SHA1 only for weak-signature tests).
SIG_ALG_RSA_SHA1 = "http://www.w3.org/2000/09/xmldsig#rsa-sha1"
DIGEST_SHA256 = "http://www.w3.org/2001/04/xmlenc#sha256"
DIGEST_SHA1 = "http://www.w3.org/2000/09/xmldsig#sha1"
SIGNATURE_METHODS = {          # name -> (SignatureMethod, DigestMethod)
    "rsa-sha256": (SIG_ALG_RSA_SHA256, DIGEST_SHA256),
    "rsa-sha1": (SIG_ALG_RSA_SHA1, DIGEST_SHA1),
}
C14N_EXCL = "http://www.w3.org/2001/10/xml-exc-c14n#"
ENVELOPED = "http://www.w3.org/2000/09/xmldsig#enveloped-signature"

# XML Encryption (EncryptedAssertion)
XENC_NS = "http://www.w3.org/2001/04/xmlenc#"
XENC11_NS = "http://www.w3.org/2009/xmlenc11#"
ENC_TYPE_ELEMENT = XENC_NS + "Element"
ENC_AES128_GCM = XENC11_NS + "aes128-gcm"
ENC_AES192_GCM = XENC11_NS + "aes192-gcm"
ENC_AES256_GCM = XENC11_NS + "aes256-gcm"
ENC_AES128_CBC = XENC_NS + "aes128-cbc"
ENC_AES192_CBC = XENC_NS + "aes192-cbc"
ENC_AES256_CBC = XENC_NS + "aes256-cbc"
ENC_TRIPLEDES_CBC = XENC_NS + "tripledes-cbc"
KEY_RSA_OAEP_MGF1P = XENC_NS + "rsa-oaep-mgf1p"
KEY_RSA_1_5 = XENC_NS + "rsa-1_5"
KEY_RSA_OAEP = XENC11_NS + "rsa-oaep"
DATA_ALGORITHMS = {            # Encryption(data=...) -> EncryptionMethod URI
    "aes128-gcm": ENC_AES128_GCM,
    "aes192-gcm": ENC_AES192_GCM,
    "aes256-gcm": ENC_AES256_GCM,
    "aes128-cbc": ENC_AES128_CBC,
    "aes192-cbc": ENC_AES192_CBC,
    "aes256-cbc": ENC_AES256_CBC,
    "tripledes-cbc": ENC_TRIPLEDES_CBC,
}
KEY_ALGORITHMS = {             # Encryption(key=...) -> EncryptionMethod URI
    "rsa-oaep-mgf1p": KEY_RSA_OAEP_MGF1P,
    "rsa-1_5": KEY_RSA_1_5,
    "rsa-oaep": KEY_RSA_OAEP,
}
# RSA-OAEP digests (ds:DigestMethod) and MGFs (xenc11:MGF) by name.
OAEP_DIGESTS = {
    "sha1": DS_NS + "sha1",
    "sha224": "http://www.w3.org/2001/04/xmldsig-more#sha224",
    "sha256": XENC_NS + "sha256",
    "sha384": "http://www.w3.org/2001/04/xmldsig-more#sha384",
    "sha512": XENC_NS + "sha512",
}
OAEP_MGFS = {name: XENC11_NS + "mgf1" + name for name in OAEP_DIGESTS}
# How the EncryptedKey's KeyInfo names the recipient's key (engine
# "cryptography"): its certificate, issuer and serial number, subject name,
# a KeyName, or nothing.
KEY_INFOS = ("cert", "issuer-serial", "subject-name", "key-name", "none")
# What engine "cryptography" can break on purpose (Encryption(corrupt=...)).
CORRUPTIONS = ("tag", "padding", "truncate", "data", "key", "key-size",
               "label")
# What each engine can produce (data names, key names).
ENCRYPTION_ENGINES = {
    "xmlsec1": (("aes128-gcm", "aes256-gcm", "aes128-cbc", "aes256-cbc",
                 "tripledes-cbc"), tuple(KEY_ALGORITHMS)),
    "lasso": (("aes128-cbc", "aes256-cbc", "tripledes-cbc"),
              ("rsa-oaep-mgf1p", "rsa-1_5")),
    # python3-cryptography: every AES, every key transport, every OAEP
    # parameter (a third implementation beside xmlsec and Lasso)
    "cryptography": (tuple(d for d in DATA_ALGORITHMS if d.startswith("aes")),
                     tuple(KEY_ALGORITHMS)),
}
KEY_PLACEMENTS = ("keyinfo", "sibling")

OPENSSL_TIMEOUT = 60          # seconds, key generation
XMLSEC1 = "xmlsec1"
XMLSEC1_TIMEOUT = 30          # seconds, one xmlsec1 run (encrypt or sign)
HTTP_MAX_QUERY = 8192         # bytes of a request line's query we accept
HTTP_MAX_BODY = 64 * 1024     # bytes of a POST body we accept
HTTP_SOCKET_TIMEOUT = 10      # seconds a client may keep a handler busy
MAX_REDIRECT_QUERY = 64 * 1024  # bytes of an HTTP-Redirect query we parse
MAX_METADATA = 1024 * 1024    # bytes of SP metadata we read or fetch
SP_METADATA_TIMEOUT = 5       # seconds, fetching the SP metadata (serve mode)
SLO_LOG_MAX = 100             # entries kept by serve mode's /idp/slo-log
SLO_LOG_FIELD_MAX = 2048      # characters of one logged string
SENT_REQUESTS_MAX = 256       # IdP-initiated LogoutRequest IDs remembered

# Lasso and libxml2 keep global state; one mint at a time per process.
_LASSO_LOCK = threading.Lock()


def _xml_escape(value):
    return html.escape(str(value), quote=True)


def _pem_body(cert_path):
    """The base64 body of a PEM certificate, as used in ds:X509Certificate."""
    with open(cert_path, "r", encoding="ascii") as f:
        pem = f.read()
    m = re.search(r"-----BEGIN CERTIFICATE-----(.*?)-----END CERTIFICATE-----",
                  pem, re.S)
    if not m:
        raise ValueError("no PEM certificate in %s" % cert_path)
    return "".join(m.group(1).split())


def _key_descriptor(cert_path, use="signing"):
    return (
        '    <md:KeyDescriptor use="%s">\n'
        '      <ds:KeyInfo xmlns:ds="%s">\n'
        '        <ds:X509Data><ds:X509Certificate>%s</ds:X509Certificate></ds:X509Data>\n'
        '      </ds:KeyInfo>\n'
        '    </md:KeyDescriptor>\n' % (use, DS_NS, _pem_body(cert_path)))


def saml_time(epoch):
    """xs:dateTime in UTC with a "Z", whole seconds (floor)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(epoch // 1)))


def random_id():
    return "_" + secrets.token_hex(16)


# --------------------------------------------------------------------------
# Keys and metadata
# --------------------------------------------------------------------------

def make_keypair(directory, name, cn):
    """RSA 2048 key + self-signed certificate (SHA-256, 10 years), PEM.

    Writes <directory>/<name>.key and <directory>/<name>.crt (created if
    needed) and returns (key_path, cert_path).  Existing files are replaced.
    """
    os.makedirs(directory, exist_ok=True)
    key_path = os.path.join(directory, name + ".key")
    cert_path = os.path.join(directory, name + ".crt")
    # "/" in a CN would start a new RDN in -subj syntax; escape it.
    subj = "/CN=" + cn.replace("\\", "\\\\").replace("/", "\\/")
    tmp_key, tmp_crt = key_path + ".tmp", cert_path + ".tmp"
    cmd = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
           "-sha256", "-days", "3650", "-subj", subj,
           "-keyout", tmp_key, "-out", tmp_crt]
    res = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, timeout=OPENSSL_TIMEOUT)
    if res.returncode != 0:
        raise RuntimeError("openssl req failed (%d): %s"
                           % (res.returncode, res.stderr.decode(errors="replace")))
    os.chmod(tmp_key, 0o600)
    os.replace(tmp_key, key_path)
    os.replace(tmp_crt, cert_path)
    return key_path, cert_path


def sp_metadata(entity_id, acs_url, cert_path=None, slo_url=None,
                enc_cert_path=None):
    """Minimal SAML 2.0 SP metadata: SPSSODescriptor with one HTTP-POST
    AssertionConsumerService at acs_url, a signing KeyDescriptor if a
    certificate is given (and an encryption one for enc_cert_path), and an
    HTTP-Redirect SingleLogoutService at slo_url if one is given (schema
    order: before the ACS)."""
    kd = _key_descriptor(cert_path) if cert_path else ""
    if enc_cert_path:
        kd += _key_descriptor(enc_cert_path, "encryption")
    if slo_url:
        kd += ('    <md:SingleLogoutService Binding="%s" Location="%s"/>\n'
               % (BINDING_REDIRECT, _xml_escape(slo_url)))
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<md:EntityDescriptor xmlns:md="%(md)s" entityID="%(eid)s">\n'
        '  <md:SPSSODescriptor AuthnRequestsSigned="false" WantAssertionsSigned="true"'
        ' protocolSupportEnumeration="%(samlp)s">\n'
        '%(kd)s'
        '    <md:AssertionConsumerService index="0" isDefault="true"'
        ' Binding="%(post)s" Location="%(acs)s"/>\n'
        '  </md:SPSSODescriptor>\n'
        '</md:EntityDescriptor>\n'
        % {"md": MD_NS, "eid": _xml_escape(entity_id), "samlp": SAMLP_NS,
           "kd": kd, "post": BINDING_POST, "acs": _xml_escape(acs_url)})


def default_slo_url(sso_url):
    """The SingleLogoutService URL next to an SSO URL: its last path segment
    replaced by "slo" (http://h:p/idp/sso -> http://h:p/idp/slo)."""
    u = urllib.parse.urlsplit(sso_url)
    path = u.path.rsplit("/", 1)[0] + "/slo" if "/" in u.path else "/slo"
    return urllib.parse.urlunsplit((u.scheme, u.netloc, path, "", ""))


def idp_metadata(entity_id, sso_url, cert_path, slo_url=None,
                 want_authn_requests_signed=False, scopes=()):
    """SAML 2.0 IdP metadata: IDPSSODescriptor with a signing KeyDescriptor,
    an HTTP-Redirect SingleLogoutService at slo_url (if given) and an
    HTTP-Redirect SingleSignOnService at sso_url.  WantAuthnRequestsSigned
    says want_authn_requests_signed. scopes: the shibmd:Scope elements of
    its Extensions, each a string (literal) or (text, True) (regexp)."""
    ext = ""
    if scopes:
        ext = "    <md:Extensions>\n%s    </md:Extensions>\n" % "".join(
            '      <shibmd:Scope xmlns:shibmd="%s" regexp="%s">%s</shibmd:Scope>\n'
            % (SHIBMD_NS, "true" if isinstance(s, tuple) and s[1] else "false",
               _xml_escape(s[0] if isinstance(s, tuple) else s))
            for s in scopes)
    slo = ""
    if slo_url:
        slo = ('    <md:SingleLogoutService Binding="%s" Location="%s"/>\n'
               % (BINDING_REDIRECT, _xml_escape(slo_url)))
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<md:EntityDescriptor xmlns:md="%(md)s" entityID="%(eid)s">\n'
        '  <md:IDPSSODescriptor WantAuthnRequestsSigned="%(want)s"'
        ' protocolSupportEnumeration="%(samlp)s">\n'
        '%(ext)s'
        '%(kd)s'
        '%(slo)s'
        '    <md:NameIDFormat>%(nif)s</md:NameIDFormat>\n'
        '    <md:NameIDFormat>%(nif2)s</md:NameIDFormat>\n'
        '    <md:SingleSignOnService Binding="%(redir)s" Location="%(sso)s"/>\n'
        '  </md:IDPSSODescriptor>\n'
        '</md:EntityDescriptor>\n'
        % {"md": MD_NS, "eid": _xml_escape(entity_id), "samlp": SAMLP_NS,
           "kd": _key_descriptor(cert_path), "nif": NAMEID_UNSPECIFIED,
           "want": "true" if want_authn_requests_signed else "false", "slo": slo,
           "nif2": NAMEID_TRANSIENT, "redir": BINDING_REDIRECT,
           "sso": _xml_escape(sso_url), "ext": ext})


def _write_atomic(path, text):
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def _check_signature(elem, wanted, signature_method, what):
    """elem (Response or Assertion) carries an enveloped ds:Signature of its
    own ID iff wanted, with the SignatureMethod/DigestMethod of
    signature_method."""
    sig = elem.find("{%s}Signature" % DS_NS)
    if (sig is not None) != bool(wanted):
        raise RuntimeError("%s signature: wanted %s" % (what, bool(wanted)))
    if sig is None:
        return
    sig_alg, digest = SIGNATURE_METHODS[signature_method]
    si = "{%s}SignedInfo" % DS_NS
    sm = sig.find("%s/{%s}SignatureMethod" % (si, DS_NS))
    refs = sig.findall("%s/{%s}Reference" % (si, DS_NS))
    if sm is None or sm.get("Algorithm") != sig_alg:
        raise RuntimeError("%s signature: wanted SignatureMethod %s" % (what, sig_alg))
    if len(refs) != 1 or refs[0].get("URI") != "#%s" % elem.get("ID"):
        raise RuntimeError("%s signature does not reference the %s's ID"
                           % (what, what))
    dm = refs[0].find("{%s}DigestMethod" % DS_NS)
    if dm is None or dm.get("Algorithm") != digest:
        raise RuntimeError("%s signature: wanted DigestMethod %s" % (what, digest))


def _check_shape(xml, sign_response, sign_assertion, assertions, encrypt=None,
                 signature_method="rsa-sha256"):
    """Lasso reports a signing failure only as a GLib warning and drops the
    element it failed to sign: check that we got what was asked for.

    encrypt: None, or one entry per assertion (None = plaintext, else the
    Encryption whose shape the EncryptedAssertion in that place must have).
    Signatures are checked for presence and for the SignatureMethod/
    DigestMethod of signature_method; the signatures of assertions that are
    encrypted are checked before encryption (_check_plain_assertion)."""
    if not xml:
        raise RuntimeError("Lasso could not export/sign the response")
    root = ET.fromstring(xml)
    if root.tag != "{%s}Response" % SAMLP_NS:
        raise RuntimeError("Lasso produced no Response")
    _check_signature(root, sign_response, signature_method, "response")
    plan = [None] * assertions if encrypt is None else list(encrypt)
    plain_tag = "{%s}Assertion" % SAML_NS
    enc_tag = "{%s}EncryptedAssertion" % SAML_NS
    found = [c for c in root if c.tag in (plain_tag, enc_tag)]
    if len(found) != assertions:
        raise RuntimeError("wanted %d assertions, Lasso produced %d"
                           % (assertions, len(found)))
    for i, (a, enc) in enumerate(zip(found, plan)):
        if enc is None:
            if a.tag != plain_tag:
                raise RuntimeError("assertion %d: wanted a plaintext Assertion" % i)
            _check_signature(a, sign_assertion, signature_method, "assertion")
        else:
            if a.tag != enc_tag:
                raise RuntimeError("assertion %d: wanted an EncryptedAssertion" % i)
            enc.check(a)


def _check_plain_assertion(xml, aid, sign_assertion, signature_method):
    """The serialised assertion about to be encrypted is the one asked for
    (ID, signature as asked)."""
    if not xml:
        raise RuntimeError("Lasso could not export/sign the assertion")
    a = ET.fromstring(xml)
    if a.tag != "{%s}Assertion" % SAML_NS or a.get("ID") != aid:
        raise RuntimeError("Lasso exported no Assertion %r" % aid)
    _check_signature(a, sign_assertion, signature_method, "assertion")


# --------------------------------------------------------------------------
# Encrypted assertions
# --------------------------------------------------------------------------

_SESSION_KEYS = {"aes128-gcm": "aes-128", "aes256-gcm": "aes-256",
                 "aes128-cbc": "aes-128", "aes256-cbc": "aes-256",
                 "aes192-gcm": "aes-192", "aes192-cbc": "aes-192",
                 "tripledes-cbc": "des-192"}
_LASSO_SYM_KEYS = {"aes128-cbc": lasso.ENCRYPTION_SYM_KEY_TYPE_AES_128,
                   "aes256-cbc": lasso.ENCRYPTION_SYM_KEY_TYPE_AES_256,
                   "tripledes-cbc": lasso.ENCRYPTION_SYM_KEY_TYPE_3DES}
_LASSO_KEY_METHODS = {"rsa-oaep-mgf1p": lasso.KEY_ENCRYPTION_METHOD_OAEP,
                      "rsa-1_5": lasso.KEY_ENCRYPTION_METHOD_PKCS1}
_XML_DECL_RE = re.compile(r"^\s*<\?xml[^>]*\?>\s*")


def _run_xmlsec1(args, what):
    """Run the xmlsec1 command line (bounded in time); RuntimeError if it
    fails or does not finish."""
    try:
        res = subprocess.run([XMLSEC1] + list(args), stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             timeout=XMLSEC1_TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError("xmlsec1 %s did not finish within %d s"
                           % (what, XMLSEC1_TIMEOUT)) from exc
    if res.returncode != 0:
        raise RuntimeError("xmlsec1 %s failed (%d): %s"
                           % (what, res.returncode,
                              res.stderr.decode(errors="replace")[-2000:]))


def sign_metadata(xml, key_path, cert_path, signature_method="rsa-sha256",
                  reference=None):
    """Metadata (an EntitiesDescriptor or EntityDescriptor whose root has an
    ID) signed by key_path, as a federation signs its aggregate: an
    enveloped ds:Signature, the root's first child, exclusive c14n, whose
    Reference is the root ("#" its ID; reference: another URI instead).
    Signed with the xmlsec1 command line."""
    root = re.search(r"<(?:[\w-]+:)?(EntitiesDescriptor|EntityDescriptor)\b[^>]*>", xml)
    rid = re.search(r'\bID="([^"]*)"', root.group(0)).group(1)
    sig_alg, digest = SIGNATURE_METHODS[signature_method]
    tmpl = (
        '<ds:Signature xmlns:ds="%(ds)s"><ds:SignedInfo>'
        '<ds:CanonicalizationMethod Algorithm="%(c14n)s"/>'
        '<ds:SignatureMethod Algorithm="%(sig)s"/>'
        '<ds:Reference URI="%(uri)s"><ds:Transforms>'
        '<ds:Transform Algorithm="%(env)s"/><ds:Transform Algorithm="%(c14n)s"/>'
        '</ds:Transforms><ds:DigestMethod Algorithm="%(digest)s"/>'
        '<ds:DigestValue></ds:DigestValue></ds:Reference></ds:SignedInfo>'
        '<ds:SignatureValue></ds:SignatureValue>'
        '<ds:KeyInfo><ds:X509Data><ds:X509Certificate/></ds:X509Data></ds:KeyInfo>'
        '</ds:Signature>'
        % {"ds": DS_NS, "c14n": C14N_EXCL, "sig": sig_alg, "env": ENVELOPED,
           "digest": digest, "uri": reference if reference is not None else "#" + rid})
    body = xml[:root.end()] + tmpl + xml[root.end():]
    return _xmlsec1_file(
        ["--sign", "--privkey-pem", "%s,%s" % (key_path, cert_path),
         "--id-attr:ID", "%s:%s" % (MD_NS, root.group(1)),
         "--id-attr:ID", "%s:EntityDescriptor" % MD_NS,
         "--node-xpath", "/*/*[local-name()='Signature']", "md.xml"],
        "--sign", {"md.xml": body})


def _xmlsec1_file(args, what, inputs, output="out.xml"):
    """Write inputs ({name: text}) to a private temporary directory, run
    xmlsec1 with args (names replaced by their paths) and --output, and
    return the output document (str, XML declaration removed)."""
    with tempfile.TemporaryDirectory(prefix="rsp-testidp-") as d:
        paths = {}
        for name, text in inputs.items():
            paths[name] = os.path.join(d, name)
            with open(paths[name], "w", encoding="utf-8") as f:
                f.write(text)
        out = os.path.join(d, output)
        args = [paths.get(a, a) for a in args]
        _run_xmlsec1(args[:1] + ["--output", out] + args[1:], what)
        with open(out, "r", encoding="utf-8") as f:
            return _XML_DECL_RE.sub("", f.read(), count=1)


class Encryption:
    """How one assertion is encrypted for an SP (``mint_xml(encrypt=...)``).

    cert_path: the SP's encryption certificate (PEM).
    data: the content encryption: "aes128-gcm", "aes192-gcm", "aes256-gcm"
    (XML Enc 1.1), "aes128-cbc", "aes192-cbc", "aes256-cbc",
    "tripledes-cbc" (XML Enc 1.0).
    key: the key transport: "rsa-oaep-mgf1p" (with DigestMethod SHA-1),
    "rsa-1_5", "rsa-oaep" (XML Enc 1.1, DigestMethod SHA-1, default MGF
    mgf1sha1).
    engine: "xmlsec1" (the command line with our template; every data x
    key but AES-192), "lasso" (Provider.saml2NodeEncrypt: aes128-cbc,
    aes256-cbc, tripledes-cbc with rsa-oaep-mgf1p or rsa-1_5) or
    "cryptography" (python3-cryptography, written here: every AES and every
    key transport, with the options below).
    key_placement: "keyinfo" (EncryptedKey in EncryptedData's KeyInfo, as
    Shibboleth IdP and Lasso do) or "sibling" (EncryptedKey after
    EncryptedData in the EncryptedAssertion, with Ids, a ds:RetrievalMethod
    in EncryptedData's KeyInfo and a ReferenceList in the EncryptedKey).

    Engine "cryptography" only:
    digest: the OAEP digest, a name of OAEP_DIGESTS, written as
    ds:DigestMethod; None: no DigestMethod (SHA-1 by the standard).
    mgf: MGF1's digest, a name of OAEP_DIGESTS, written as xenc11:MGF (with
    rsa-oaep-mgf1p too, which fixes MGF1-SHA1: what a receiver must refuse
    unless it is sha1); None: no MGF element (MGF1-SHA1).
    label: bytes, the OAEP label, written as xenc:OAEPparams; None: none.
    key_info: how the EncryptedKey names the key, one of KEY_INFOS; with
    "key-name", key_name is the KeyName (default: the certificate's
    subject common name).
    others: certificates (PEM paths) of other recipients: an EncryptedKey
    for each, before the SP's, the session key wrapped the same way and
    named the same way (with rsa-1_5 for none of them: they are OAEP).
    cbc_padding: "pkcs7", or "random" (random padding bytes, the last one
    the count: XML Encryption's rule).
    corrupt: None, or one of CORRUPTIONS, what a broken IdP or an attacker
    sends: "tag" (a GCM tag byte changed), "padding" (a CBC padding count
    of 0), "truncate" (the data's last 16 bytes dropped), "data" (a byte in
    the middle of the data's ciphertext changed), "key" (a byte of the
    wrapped key changed), "key-size" (a session key of another size
    wrapped: 16 bytes for a 24- or 32-byte algorithm, else 32), "label"
    (the key wrapped with a label that is not written).

    A combination the engine cannot produce raises ValueError here.

    xmlsec1 1.2.37 has no xmlenc11#rsa-oaep transform: for key="rsa-oaep"
    it wraps the key with rsa-oaep-mgf1p, DigestMethod SHA-1 (RSAES-OAEP,
    SHA-1, MGF1 with SHA-1, empty label): the very computation
    xmlenc11#rsa-oaep specifies with DigestMethod SHA-1 and no MGF element,
    and the EncryptionMethod URI is then written as xmlenc11#rsa-oaep.
    """

    def __init__(self, cert_path, data="aes128-gcm", key="rsa-oaep-mgf1p",
                 engine="xmlsec1", key_placement="keyinfo", *, digest=None,
                 mgf=None, label=None, key_info="cert", key_name=None,
                 others=(), cbc_padding="pkcs7", corrupt=None):
        if engine not in ENCRYPTION_ENGINES:
            raise ValueError("engine must be one of %s, not %r"
                             % (", ".join(ENCRYPTION_ENGINES), engine))
        if data not in DATA_ALGORITHMS:
            raise ValueError("data must be one of %s, not %r"
                             % (", ".join(DATA_ALGORITHMS), data))
        if key not in KEY_ALGORITHMS:
            raise ValueError("key must be one of %s, not %r"
                             % (", ".join(KEY_ALGORITHMS), key))
        datas, keys = ENCRYPTION_ENGINES[engine]
        if data not in datas:
            raise ValueError("engine %r cannot encrypt data with %s (it does %s)"
                             % (engine, data, ", ".join(datas)))
        if key not in keys:
            raise ValueError("engine %r cannot transport the key with %s "
                             "(it does %s)" % (engine, key, ", ".join(keys)))
        if key_placement not in KEY_PLACEMENTS:
            raise ValueError("key_placement must be one of %s, not %r"
                             % (", ".join(KEY_PLACEMENTS), key_placement))
        custom = dict(digest=digest, mgf=mgf, label=label, key_name=key_name,
                      corrupt=corrupt)
        if engine != "cryptography" and (
                any(v is not None for v in custom.values()) or others
                or key_info != "cert" or cbc_padding != "pkcs7"):
            raise ValueError("digest, mgf, label, key_info, key_name, others, "
                             "cbc_padding and corrupt need engine "
                             "'cryptography'")
        for name, value in (("digest", digest), ("mgf", mgf)):
            if value is not None and value not in OAEP_DIGESTS:
                raise ValueError("%s must be one of %s, not %r"
                                 % (name, ", ".join(OAEP_DIGESTS), value))
        if key == "rsa-1_5" and (digest or mgf or label is not None):
            raise ValueError("rsa-1_5 takes no digest, mgf or label")
        if label is not None and not isinstance(label, bytes):
            raise ValueError("label must be bytes")
        if key_info not in KEY_INFOS:
            raise ValueError("key_info must be one of %s, not %r"
                             % (", ".join(KEY_INFOS), key_info))
        if cbc_padding not in ("pkcs7", "random"):
            raise ValueError("cbc_padding must be pkcs7 or random")
        if corrupt is not None and corrupt not in CORRUPTIONS:
            raise ValueError("corrupt must be one of %s, not %r"
                             % (", ".join(CORRUPTIONS), corrupt))
        gcm = data.endswith("-gcm")
        if (corrupt == "tag" and not gcm) or (corrupt == "padding" and gcm):
            raise ValueError("corrupt=%r does not go with %s" % (corrupt, data))
        if corrupt == "label" and key == "rsa-1_5":
            raise ValueError("rsa-1_5 has no label")
        self.cert_path = os.path.abspath(os.fspath(cert_path))
        self.cert_body = _pem_body(self.cert_path)     # ValueError if no cert
        self.others = tuple(os.path.abspath(os.fspath(o)) for o in others)
        for o in self.others:
            _pem_body(o)
        self.data, self.key, self.engine = data, key, engine
        self.key_placement = key_placement
        self.data_uri = DATA_ALGORITHMS[data]
        self.key_uri = KEY_ALGORITHMS[key]
        self.digest, self.mgf, self.label = digest, mgf, label
        self.key_info, self.key_name = key_info, key_name
        self.cbc_padding, self.corrupt = cbc_padding, corrupt

    def __repr__(self):
        extra = "".join(", %s=%r" % (k, getattr(self, k)) for k in (
            "digest", "mgf", "label", "key_name", "corrupt")
            if getattr(self, k) is not None)
        if self.engine == "cryptography":
            extra += ", key_info=%r, cbc_padding=%r" % (self.key_info,
                                                        self.cbc_padding)
        if self.others:
            extra += ", others=%r" % (self.others,)
        return ("Encryption(%r, data=%r, key=%r, engine=%r, key_placement=%r%s)"
                % (self.cert_path, self.data, self.key, self.engine,
                   self.key_placement, extra))

    def encrypt_serialised(self, assertion_xml, recipient=None):
        """EncryptedAssertion XML (str) of a serialised assertion, by the
        xmlsec1 or cryptography engine (Lasso's encrypts a node:
        encrypt_lasso).  Needs no lock."""
        if self.engine == "cryptography":
            return self.encrypt_cryptography(assertion_xml, recipient)
        return self.encrypt_xmlsec1(assertion_xml, recipient)

    # -- engines -----------------------------------------------------------

    def encrypt_xmlsec1(self, assertion_xml, recipient=None):
        """EncryptedAssertion XML (str) of a serialised assertion, encrypted
        by the xmlsec1 command line (--encrypt --binary-data, a fresh
        session key of the data algorithm's size, key transport to the
        certificate's public key).  Needs no lock."""
        ek_uri = KEY_RSA_OAEP_MGF1P if self.key == "rsa-oaep" else self.key_uri
        digest = ('<ds:DigestMethod Algorithm="%s"/>' % DIGEST_SHA1
                  if self.key in ("rsa-oaep-mgf1p", "rsa-oaep") else "")
        rcpt = ' Recipient="%s"' % _xml_escape(recipient) if recipient else ""
        tmpl = (
            '<saml:EncryptedAssertion xmlns:saml="%(saml)s">'
            '<xenc:EncryptedData xmlns:xenc="%(xenc)s" Id="%(ed)s" Type="%(type)s">'
            '<xenc:EncryptionMethod Algorithm="%(data)s"/>'
            '<ds:KeyInfo xmlns:ds="%(ds)s">'
            '<xenc:EncryptedKey Id="%(ek)s"%(rcpt)s>'
            '<xenc:EncryptionMethod Algorithm="%(key)s">%(digest)s</xenc:EncryptionMethod>'
            '<ds:KeyInfo><ds:X509Data><ds:X509Certificate/></ds:X509Data></ds:KeyInfo>'
            '<xenc:CipherData><xenc:CipherValue/></xenc:CipherData>'
            '</xenc:EncryptedKey>'
            '</ds:KeyInfo>'
            '<xenc:CipherData><xenc:CipherValue/></xenc:CipherData>'
            '</xenc:EncryptedData>'
            '</saml:EncryptedAssertion>'
            % {"saml": SAML_NS, "xenc": XENC_NS, "ds": DS_NS, "ed": random_id(),
               "ek": random_id(), "type": ENC_TYPE_ELEMENT, "data": self.data_uri,
               "key": ek_uri, "digest": digest, "rcpt": rcpt})
        xml = _xmlsec1_file(
            ["--encrypt", "--pubkey-cert-pem", self.cert_path,
             "--session-key", _SESSION_KEYS[self.data],
             "--binary-data", "assertion.xml", "template.xml"],
            "--encrypt", {"assertion.xml": assertion_xml, "template.xml": tmpl})
        if self.key == "rsa-oaep":
            old = 'Algorithm="%s"' % KEY_RSA_OAEP_MGF1P
            if xml.count(old) != 1:
                raise RuntimeError("xmlsec1 output has no single rsa-oaep-mgf1p "
                                   "EncryptionMethod")
            xml = xml.replace(old, 'Algorithm="%s"' % KEY_RSA_OAEP)
        return self._placed(xml)

    def encrypt_lasso(self, node, recipient):
        """EncryptedAssertion XML (str) of a Lasso assertion node, encrypted
        by Lasso (lasso_provider_saml2_node_encrypt: the node is serialised,
        and signed if it has a signature set up, then encrypted for the
        encryption KeyDescriptor of a provider made from this
        certificate).  Caller holds _LASSO_LOCK."""
        md = (
            '<md:EntityDescriptor xmlns:md="%(md)s" entityID="%(eid)s">\n'
            '  <md:SPSSODescriptor protocolSupportEnumeration="%(samlp)s">\n'
            '%(kd)s'
            '    <md:AssertionConsumerService index="0" Binding="%(post)s"'
            ' Location="https://encryption-recipient.invalid/acs"/>\n'
            '  </md:SPSSODescriptor>\n'
            '</md:EntityDescriptor>\n'
            % {"md": MD_NS, "eid": _xml_escape(recipient), "samlp": SAMLP_NS,
               "kd": _key_descriptor(self.cert_path, use="encryption"),
               "post": BINDING_POST})
        provider = lasso.Provider.newFromBuffer(lasso.PROVIDER_ROLE_SP, md)
        if provider is None:
            raise RuntimeError("Lasso refused the encryption certificate %s"
                               % self.cert_path)
        provider.setEncryptionSymKeyType(_LASSO_SYM_KEYS[self.data])
        provider.setKeyEncryptionMethod(_LASSO_KEY_METHODS[self.key])
        enc = provider.saml2NodeEncrypt(node)
        xml = enc.exportToXml() if enc is not None else None
        if not xml:
            raise RuntimeError("Lasso could not encrypt the assertion")
        # A bare Saml2EncryptedElement serialises as saml:EncryptedElement.
        xml, n1 = re.subn(r"^<saml:EncryptedElement\b", "<saml:EncryptedAssertion", xml)
        xml, n2 = re.subn(r"</saml:EncryptedElement>\s*$", "</saml:EncryptedAssertion>", xml)
        if (n1, n2) != (1, 1):
            raise RuntimeError("Lasso's encrypted element is not a "
                               "saml:EncryptedElement: %r" % xml[:200])
        return self._placed(xml)

    def encrypt_cryptography(self, assertion_xml, recipient=None):
        """EncryptedAssertion XML (str) of a serialised assertion, encrypted
        by python3-cryptography and written here: a fresh session key of
        the data algorithm's size, AES-GCM (12-byte IV first, 16-byte tag
        last) or AES-CBC (16-byte IV first, padding as cbc_padding says),
        the key wrapped for the certificate (and for each of others first)
        as key, digest, mgf and label say, each EncryptedKey's KeyInfo as
        key_info says, broken as corrupt says.  Needs no lock."""
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        hash_of = {"sha1": hashes.SHA1, "sha224": hashes.SHA224,
                   "sha256": hashes.SHA256, "sha384": hashes.SHA384,
                   "sha512": hashes.SHA512}
        b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
        plain = assertion_xml.encode("utf-8")
        size = {"128": 16, "192": 24, "256": 32}[self.data[3:6]]
        session = os.urandom(size)
        if self.data.endswith("-gcm"):
            iv = os.urandom(12)
            ct = iv + AESGCM(session).encrypt(iv, plain, None)
        else:
            iv = os.urandom(16)
            n = 16 - len(plain) % 16
            pad = (os.urandom(n - 1) if self.cbc_padding == "random"
                   else bytes([n]) * (n - 1))
            pad += bytes([0 if self.corrupt == "padding" else n])
            enc = Cipher(algorithms.AES(session), modes.CBC(iv)).encryptor()
            ct = iv + enc.update(plain + pad) + enc.finalize()
        if self.corrupt == "tag":
            ct = ct[:-1] + bytes([ct[-1] ^ 0x01])
        elif self.corrupt == "truncate":
            ct = ct[:-16]
        elif self.corrupt == "data":
            mid = len(ct) // 2
            ct = ct[:mid] + bytes([ct[mid] ^ 0x20]) + ct[mid + 1:]
        wrapped = session if self.corrupt != "key-size" else \
            os.urandom(16 if size != 16 else 32)
        if self.key == "rsa-1_5":
            pkcs = padding.PKCS1v15()
        else:
            label = self.label
            if self.corrupt == "label":
                label = (label or b"") + b"-not-the-label-written"
            pkcs = padding.OAEP(mgf=padding.MGF1(hash_of[self.mgf or "sha1"]()),
                                algorithm=hash_of[self.digest or "sha1"](),
                                label=label)
        method = ""
        if self.label is not None:
            method += "<xenc:OAEPparams>%s</xenc:OAEPparams>" % b64(self.label)
        if self.digest:
            method += '<ds:DigestMethod Algorithm="%s"/>' % OAEP_DIGESTS[self.digest]
        if self.mgf:
            method += '<xenc11:MGF Algorithm="%s"/>' % OAEP_MGFS[self.mgf]
        ed_id = random_id()
        keys = []
        for path in self.others + (self.cert_path,):
            with open(path, "rb") as f:
                cert = x509.load_pem_x509_certificate(f.read())
            ek = cert.public_key().encrypt(wrapped, pkcs)
            ours = path == self.cert_path
            if ours and self.corrupt == "key":
                mid = len(ek) // 2
                ek = ek[:mid] + bytes([ek[mid] ^ 0x01]) + ek[mid + 1:]
            if self.key_info == "cert":
                ki = "<ds:X509Data><ds:X509Certificate>%s</ds:X509Certificate></ds:X509Data>" \
                    % _pem_body(path)
            elif self.key_info == "issuer-serial":
                ki = ("<ds:X509Data><ds:X509IssuerSerial><ds:X509IssuerName>%s"
                      "</ds:X509IssuerName><ds:X509SerialNumber>%d"
                      "</ds:X509SerialNumber></ds:X509IssuerSerial></ds:X509Data>"
                      % (_xml_escape(cert.issuer.rfc4514_string()),
                         cert.serial_number))
            elif self.key_info == "subject-name":
                ki = "<ds:X509Data><ds:X509SubjectName>%s</ds:X509SubjectName></ds:X509Data>" \
                    % _xml_escape(cert.subject.rfc4514_string())
            elif self.key_info == "key-name":
                cn = cert.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)
                name = self.key_name if ours and self.key_name is not None else \
                    (cn[0].value if cn else "")
                ki = "<ds:KeyName>%s</ds:KeyName>" % _xml_escape(name)
            else:
                ki = None
            ek_id = random_id()
            rcpt = ' Recipient="%s"' % _xml_escape(recipient) if ours and recipient else ""
            keys.append((ek_id, (
                '<xenc:EncryptedKey Id="%s"%s>'
                '<xenc:EncryptionMethod Algorithm="%s">%s</xenc:EncryptionMethod>'
                '%s<xenc:CipherData><xenc:CipherValue>%s</xenc:CipherValue>'
                '</xenc:CipherData>%s</xenc:EncryptedKey>'
                % (ek_id, rcpt, self.key_uri, method,
                   "<ds:KeyInfo>%s</ds:KeyInfo>" % ki if ki else "", b64(ek),
                   '<xenc:ReferenceList><xenc:DataReference URI="#%s"/>'
                   '</xenc:ReferenceList>' % ed_id
                   if self.key_placement == "sibling" else ""))))
        if self.key_placement == "keyinfo":
            inline, beside = "".join(k for _, k in keys), ""
        else:
            inline = "".join('<ds:RetrievalMethod Type="%sEncryptedKey" URI="#%s"/>'
                             % (XENC_NS, i) for i, _ in keys)
            beside = "".join(k for _, k in keys)
        data = b64(ct)
        data = "\n".join(data[i:i + 76] for i in range(0, len(data), 76))
        return (
            '<saml:EncryptedAssertion xmlns:saml="%s" xmlns:xenc="%s" xmlns:ds="%s"'
            ' xmlns:xenc11="%s"><xenc:EncryptedData Id="%s" Type="%s">'
            '<xenc:EncryptionMethod Algorithm="%s"/><ds:KeyInfo>%s</ds:KeyInfo>'
            '<xenc:CipherData><xenc:CipherValue>%s</xenc:CipherValue></xenc:CipherData>'
            '</xenc:EncryptedData>%s</saml:EncryptedAssertion>'
            % (SAML_NS, XENC_NS, DS_NS, XENC11_NS, ed_id, ENC_TYPE_ELEMENT,
               self.data_uri, inline, data, beside))

    def _placed(self, xml):
        """key_placement="sibling": the EncryptedKey moved from
        EncryptedData's KeyInfo to after EncryptedData (Ids added where
        missing, namespaces declared on it), a ds:RetrievalMethod to it left
        in the KeyInfo and a ReferenceList to the EncryptedData added."""
        if self.key_placement == "keyinfo":
            return xml
        ek = re.search(r"<((?:[A-Za-z_][\w.-]*:)?)EncryptedKey\b.*?</\1EncryptedKey>",
                       xml, re.S)
        ed = re.search(r"<((?:[A-Za-z_][\w.-]*:)?)EncryptedData\b[^>]*>", xml)
        if ek is None or ed is None:
            raise RuntimeError("no EncryptedData/EncryptedKey to rearrange")
        ed_tag = ed.group(0)
        m = re.search(r'\sId="([^"]*)"', ed_tag)
        ed_id = m.group(1) if m else random_id()
        if not m:
            ed_tag = ed_tag[:-1] + ' Id="%s">' % ed_id
        key_xml = ek.group(0)
        first = re.match(r"<[^>]*>", key_xml).group(0)
        m = re.search(r'\sId="([^"]*)"', first)
        ek_id = m.group(1) if m else random_id()
        extra = "" if m else ' Id="%s"' % ek_id
        prefix = ek.group(1)
        if prefix and ("xmlns:%s=" % prefix[:-1]) not in first:
            extra += ' xmlns:%s="%s"' % (prefix[:-1], XENC_NS)
        if "<ds:" in key_xml and "xmlns:ds=" not in first:
            extra += ' xmlns:ds="%s"' % DS_NS
        close = "</%sEncryptedKey>" % prefix
        key_xml = (first[:-1] + extra + ">" + key_xml[len(first):-len(close)]
                   + '<ReferenceList xmlns="%s"><DataReference URI="#%s"/>'
                   '</ReferenceList>' % (XENC_NS, ed_id) + close)
        retrieval = ('<RetrievalMethod xmlns="%s" Type="%sEncryptedKey" URI="#%s"/>'
                     % (DS_NS, XENC_NS, ek_id))
        out = xml[:ek.start()] + retrieval + xml[ek.end():]
        out = out.replace(ed.group(0), ed_tag, 1)
        end = re.search(r"</((?:[A-Za-z_][\w.-]*:)?)EncryptedData>", out)
        if end is None:
            raise RuntimeError("no end of EncryptedData")
        return out[:end.end()] + key_xml + out[end.end():]

    # -- shape -------------------------------------------------------------

    def check(self, ea):
        """RuntimeError unless the EncryptedAssertion element ea (ElementTree)
        has the standard shape with this object's algorithms and key
        placement, and non-empty ciphertexts."""
        x, ds = XENC_NS, DS_NS
        eds = ea.findall("{%s}EncryptedData" % x)
        if len(eds) != 1:
            raise RuntimeError("EncryptedAssertion: wanted one EncryptedData")
        ed = eds[0]
        if ed.get("Type") != ENC_TYPE_ELEMENT:
            raise RuntimeError("EncryptedData Type is %r" % ed.get("Type"))
        em = ed.find("{%s}EncryptionMethod" % x)
        if em is None or em.get("Algorithm") != self.data_uri:
            raise RuntimeError("EncryptedData: wanted EncryptionMethod %s"
                               % self.data_uri)
        inline = ed.findall("{%s}KeyInfo/{%s}EncryptedKey" % (ds, x))
        siblings = ea.findall("{%s}EncryptedKey" % x)
        n = 1 + len(self.others)
        if self.key_placement == "keyinfo":
            if len(inline) != n or siblings:
                raise RuntimeError("wanted %d EncryptedKey in EncryptedData's "
                                   "KeyInfo" % n)
            ek = inline[-1]
        else:
            rms = ed.findall("{%s}KeyInfo/{%s}RetrievalMethod" % (ds, ds))
            if len(siblings) != n or inline or len(rms) != n or \
                    [rm.get("URI") for rm in rms] != \
                    ["#%s" % k.get("Id") for k in siblings]:
                raise RuntimeError("wanted %d EncryptedKey next to EncryptedData, "
                                   "each referenced by a RetrievalMethod" % n)
            ek = siblings[-1]
        kem = ek.find("{%s}EncryptionMethod" % x)
        if kem is None or kem.get("Algorithm") != self.key_uri:
            raise RuntimeError("EncryptedKey: wanted EncryptionMethod %s"
                               % self.key_uri)
        for where, elem in (("EncryptedData", ed), ("EncryptedKey", ek)):
            cv = elem.find("{%s}CipherData/{%s}CipherValue" % (x, x))
            if cv is None or not "".join((cv.text or "").split()):
                raise RuntimeError("%s has no CipherValue" % where)


def name_id_xml(name_id, name_id_format=None, qualifiers=None):
    """A saml:NameID as an IdP serialises it to encrypt it (its namespace
    declared on it)."""
    attrs = ""
    if name_id_format:
        attrs += ' Format="%s"' % _xml_escape(name_id_format)
    for name in ("NameQualifier", "SPNameQualifier", "SPProvidedID"):
        if (qualifiers or {}).get(name) is not None:
            attrs += ' %s="%s"' % (name, _xml_escape(qualifiers[name]))
    return '<saml:NameID xmlns:saml="%s"%s>%s</saml:NameID>' % (
        SAML_NS, attrs, _xml_escape(name_id))


def encrypted_id_xml(enc, plaintext, recipient=None):
    """saml:EncryptedID XML (str): plaintext (a serialised NameID, or
    whatever a test wants decrypted) encrypted by enc (an Encryption,
    engine xmlsec1 or cryptography), as enc encrypts an assertion."""
    xml = enc.encrypt_serialised(plaintext, recipient)
    xml, n1 = re.subn(r"^<saml:EncryptedAssertion\b", "<saml:EncryptedID", xml)
    xml, n2 = re.subn(r"</saml:EncryptedAssertion>\s*$", "</saml:EncryptedID>", xml)
    if (n1, n2) != (1, 1):
        raise RuntimeError("no saml:EncryptedAssertion to make an EncryptedID "
                           "of: %r" % xml[:200])
    return xml


def encrypted_id_node(enc, plaintext, recipient=None):
    """The lasso.Saml2EncryptedElement of encrypted_id_xml, to put in a
    Lasso Subject or LogoutRequest before it is signed.  Caller holds
    _LASSO_LOCK."""
    subject = lasso.Node.newFromDump(
        '<saml:Subject xmlns:saml="%s">%s</saml:Subject>'
        % (SAML_NS, encrypted_id_xml(enc, plaintext, recipient)))
    if subject is None or subject.encryptedId is None:
        raise RuntimeError("Lasso did not read the EncryptedID")
    return subject.encryptedId


def _encryption_plan(encrypt, assertions):
    """encrypt (None, an Encryption, or one entry per assertion) as a list
    of assertions entries, each an Encryption or None."""
    if encrypt is None:
        return [None] * assertions
    if isinstance(encrypt, Encryption):
        return [encrypt] * assertions
    if isinstance(encrypt, (tuple, list)):
        plan = list(encrypt)
        if len(plan) != assertions:
            raise ValueError("encrypt has %d entries for %d assertions"
                             % (len(plan), assertions))
        for e in plan:
            if e is not None and not isinstance(e, Encryption):
                raise ValueError("encrypt entries must be Encryption or None, "
                                 "not %s" % type(e).__name__)
        return plan
    raise ValueError("encrypt must be None, an Encryption, or a tuple/list "
                     "with one entry per assertion")


_ASSERTION_RE = re.compile(r"<saml:Assertion\b.*?</saml:Assertion>", re.S)


def _substitute_assertions(xml, replacements):
    """The Response text with its n-th saml:Assertion replaced by
    replacements[n] where that is not None."""
    spans = list(_ASSERTION_RE.finditer(xml))
    if len(spans) != len(replacements):
        raise RuntimeError("the exported Response has %d assertions, wanted %d"
                           % (len(spans), len(replacements)))
    out, pos = [], 0
    for m, new in zip(spans, replacements):
        if new is not None:
            out.append(xml[pos:m.start()])
            out.append(new)
            pos = m.end()
    out.append(xml[pos:])
    return "".join(out)


def _sign_response_xmlsec1(xml, response_id, key_path, cert_path,
                           signature_method, root_name="Response"):
    """The Response signed by the xmlsec1 command line: a ds:Signature
    template like Lasso's own (after the Issuer; exclusive c14n, enveloped,
    SignatureMethod/DigestMethod of signature_method, KeyInfo with the
    certificate) over the Response's ID."""
    sig_alg, digest = SIGNATURE_METHODS[signature_method]
    tmpl = (
        '<Signature xmlns="%(ds)s">\n<SignedInfo>\n'
        '<CanonicalizationMethod Algorithm="%(c14n)s"/>\n'
        '<SignatureMethod Algorithm="%(sig)s"/>\n'
        '<Reference URI="#%(id)s">\n<Transforms>\n'
        '<Transform Algorithm="%(env)s"/>\n<Transform Algorithm="%(c14n)s"/>\n'
        '</Transforms>\n<DigestMethod Algorithm="%(digest)s"/>\n'
        '<DigestValue></DigestValue>\n</Reference>\n</SignedInfo>\n'
        '<SignatureValue></SignatureValue>\n'
        '<KeyInfo>\n<X509Data>\n<X509Certificate/>\n</X509Data>\n</KeyInfo>\n'
        '</Signature>'
        % {"ds": DS_NS, "c14n": C14N_EXCL, "sig": sig_alg, "env": ENVELOPED,
           "digest": digest, "id": _xml_escape(response_id)})
    root = re.match(r"\s*(?:<\?xml[^>]*\?>\s*)?<samlp:%s\b[^>]*>" % root_name, xml)
    if root is None:
        raise RuntimeError("the exported message does not start with samlp:%s"
                           % root_name)
    at = root.end()
    issuer = re.compile(r"<saml:Issuer\b[^>]*?(?:/>|>[^<]*</saml:Issuer>)").match(xml, at)
    if issuer is not None:
        at = issuer.end()
    doc = xml[:at] + tmpl + xml[at:]
    return _xmlsec1_file(
        ["--sign", "--privkey-pem", "%s,%s" % (key_path, cert_path),
         "--id-attr:ID", "%s:%s" % (SAMLP_NS, root_name),
         "--node-xpath", "/*[local-name()='%s']/*[local-name()='Signature']" % root_name,
         "response.xml"],
        "--sign", {"response.xml": doc})


# --------------------------------------------------------------------------
# HTTP-Redirect binding and SP metadata helpers
# --------------------------------------------------------------------------

class SAMLMessageError(ValueError):
    """A SAML message (or SP metadata) is malformed, of the wrong kind, or
    from the wrong party."""


class SignatureError(SAMLMessageError):
    """A message's signature is missing, does not verify with the sender's
    key from its metadata, or uses a signature algorithm not accepted."""


# Parameters covered by an HTTP-Redirect signature (and Signature itself):
# each may appear at most once in a query we accept.
_SIGNED_PARAMS = ("SAMLRequest", "SAMLResponse", "RelayState", "SigAlg",
                  "Signature")


def redirect_query(url_or_query):
    """The raw (still percent-encoded) query string of an HTTP-Redirect
    binding URL; a bare query ("SAMLRequest=..."; a leading "?" is dropped)
    is returned as is.  The raw form matters: the signature covers the
    parameters exactly as they were encoded."""
    if not isinstance(url_or_query, str):
        raise SAMLMessageError("expected a URL or query string, got %s"
                               % type(url_or_query).__name__)
    s = url_or_query.strip()
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", s) or s.startswith("/"):
        s = urllib.parse.urlsplit(s).query
    elif s.startswith("?"):
        s = s[1:]
    if len(s) > MAX_REDIRECT_QUERY:
        raise SAMLMessageError("query too long (%d bytes)" % len(s))
    return s


def _redirect_params(query, field=None):
    """{name: value} (decoded) of an HTTP-Redirect query; each signed
    parameter at most once; ``field`` (SAMLRequest/SAMLResponse) required."""
    try:
        pairs = urllib.parse.parse_qsl(query, keep_blank_values=True,
                                       max_num_fields=64)
    except ValueError as exc:
        raise SAMLMessageError("bad query: %s" % exc) from exc
    params = {}
    for name, value in pairs:
        if name in params and name in _SIGNED_PARAMS:
            raise SAMLMessageError("%s appears more than once" % name)
        params.setdefault(name, value)
    if field is not None and field not in params:
        raise SAMLMessageError("no %s in the query" % field)
    return params


def decode_redirect_message(value):
    """The XML root element (ElementTree) of an HTTP-Redirect SAMLRequest or
    SAMLResponse value (base64 of raw DEFLATE, already URL-decoded).
    Bounded; no DTDs; raises SAMLMessageError on junk."""
    try:
        raw = base64.b64decode(value, validate=False)
        d = zlib.decompressobj(-15)
        xml = d.decompress(raw, HTTP_MAX_BODY)
        if d.unconsumed_tail:
            raise ValueError("message too large")
        if b"<!DOCTYPE" in xml or b"<!ENTITY" in xml:
            raise ValueError("DTDs are not accepted")
        return ET.fromstring(xml)
    except (ValueError, TypeError, zlib.error, ET.ParseError) as exc:
        raise SAMLMessageError("bad HTTP-Redirect message: %s" % exc) from exc


def redirect_message_xml(url_or_query):
    """(field, xml) of an HTTP-Redirect URL or query: field is SAMLRequest
    or SAMLResponse, xml the inflated message as a str (for inspection)."""
    params = _redirect_params(redirect_query(url_or_query))
    for field in ("SAMLRequest", "SAMLResponse"):
        if field in params:
            root = decode_redirect_message(params[field])
            return field, ET.tostring(root, encoding="unicode")
    raise SAMLMessageError("no SAMLRequest or SAMLResponse in the query")


def _tag(root, name, ns=SAMLP_NS):
    return root.tag == "{%s}%s" % (ns, name)


def _text(elem):
    return None if elem is None else (elem.text or "")


def _status_codes(root):
    """(top-level StatusCode Value, second-level Value or None)."""
    code = root.find("{%s}Status/{%s}StatusCode" % (SAMLP_NS, SAMLP_NS))
    if code is None:
        return None, None
    sub = code.find("{%s}StatusCode" % SAMLP_NS)
    return code.get("Value"), (sub.get("Value") if sub is not None else None)


def _logout_request_info(root):
    nid = root.find("{%s}NameID" % SAML_NS)
    return {
        "id": root.get("ID"),
        "issuer": _text(root.find("{%s}Issuer" % SAML_NS)),
        "destination": root.get("Destination"),
        "issue_instant": root.get("IssueInstant"),
        "not_on_or_after": root.get("NotOnOrAfter"),
        "reason": root.get("Reason"),
        "name_id": _text(nid),
        "name_id_format": nid.get("Format") if nid is not None else None,
        "session_indexes": [_text(e) for e in
                            root.findall("{%s}SessionIndex" % SAMLP_NS)],
    }


def parse_sp_metadata(sp_metadata_xml):
    """What the IdP needs from SP metadata (an md:EntityDescriptor, str or
    bytes): {"entity_id", "slo_url" (HTTP-Redirect SingleLogoutService
    Location, or None), "slo_response_url" (its ResponseLocation, else its
    Location), "acs_urls" [(binding, location)], "signing_certificates"
    (count of KeyDescriptors usable for signing)}.  SAMLMessageError if it
    is not SP metadata."""
    if isinstance(sp_metadata_xml, bytes):
        sp_metadata_xml = sp_metadata_xml.decode("utf-8")
    if not isinstance(sp_metadata_xml, str) or not sp_metadata_xml.strip():
        raise SAMLMessageError("empty SP metadata")
    if len(sp_metadata_xml) > MAX_METADATA:
        raise SAMLMessageError("SP metadata too large")
    if "<!DOCTYPE" in sp_metadata_xml or "<!ENTITY" in sp_metadata_xml:
        raise SAMLMessageError("SP metadata with a DTD is not accepted")
    try:
        root = ET.fromstring(sp_metadata_xml)
    except ET.ParseError as exc:
        raise SAMLMessageError("SP metadata is not XML: %s" % exc) from exc
    if not _tag(root, "EntityDescriptor", MD_NS) or not root.get("entityID"):
        raise SAMLMessageError("SP metadata: root is not an md:EntityDescriptor "
                               "with an entityID")
    desc = root.find("{%s}SPSSODescriptor" % MD_NS)
    if desc is None:
        raise SAMLMessageError("SP metadata has no SPSSODescriptor")
    slo_url = slo_response_url = None
    for e in desc.findall("{%s}SingleLogoutService" % MD_NS):
        if e.get("Binding") == BINDING_REDIRECT and e.get("Location"):
            slo_url = e.get("Location")
            slo_response_url = e.get("ResponseLocation") or slo_url
            break
    certs = 0
    for kd in desc.findall("{%s}KeyDescriptor" % MD_NS):
        if kd.get("use") in (None, "signing") and \
                kd.find(".//{%s}X509Certificate" % DS_NS) is not None:
            certs += 1
    return {
        "entity_id": root.get("entityID"),
        "slo_url": slo_url,
        "slo_response_url": slo_response_url,
        "acs_urls": [(e.get("Binding"), e.get("Location")) for e in
                     desc.findall("{%s}AssertionConsumerService" % MD_NS)],
        "signing_certificates": certs,
    }


def _check_redirect(url, field, signed):
    """Lasso reports some failures only as GLib warnings: check that the
    URL it built carries the message, signed or not as asked."""
    if not url:
        raise RuntimeError("Lasso built no %s URL" % field)
    params = _redirect_params(redirect_query(url), field)
    decode_redirect_message(params[field])
    if signed and (params.get("SigAlg") != SIG_ALG_RSA_SHA256
                   or not params.get("Signature")):
        raise RuntimeError("Lasso did not sign the %s with RSA-SHA256" % field)
    if not signed and ("Signature" in params or "SigAlg" in params):
        raise RuntimeError("Lasso signed a %s that should be unsigned" % field)


def _lasso_signature_status(profile):
    """profile.signature_status as an int (the binding raises for non-zero)."""
    try:
        profile.getSignatureStatus()
    except lasso.Error as exc:
        return exc.code or -1
    return 0


def _lasso_error_text(rc):
    try:
        return "%s (%d)" % (lasso._lasso.strError(rc), rc)
    except Exception:       # pragma: no cover - binding internals
        return "Lasso error %s" % rc


def _status_node(code, sub_code=None):
    status = lasso.Samlp2Status()
    top = lasso.Samlp2StatusCode()
    top.value = code
    if sub_code:
        sub = lasso.Samlp2StatusCode()
        sub.value = sub_code
        top.statusCode = sub
    status.statusCode = top
    return status


# --------------------------------------------------------------------------
# The IdP
# --------------------------------------------------------------------------

class TestIdP:
    """A SAML 2.0 IdP with its own key pair, living in ``workdir``.

    Files: idp.key, idp.crt (reused when both exist), idp-metadata.xml
    (rewritten on every construction, as entity_id/sso_url/slo_url may
    change).

    The metadata has an HTTP-Redirect SingleLogoutService at ``slo_url``
    (default: the SSO URL's sibling ``.../slo``) and says
    WantAuthnRequestsSigned="``want_authn_requests_signed``" and declares
    ``scopes`` (shibmd:Scope; default example.org, the scope of the
    scoped attributes tests send).

    ``accepted_sig_algs``: the HTTP-Redirect SigAlg values accepted on
    incoming messages (default: RSA-SHA256 only); messages this IdP builds
    are always signed with RSA-SHA256.
    """

    __test__ = False   # not a pytest test class, despite its name

    def __init__(self, workdir, entity_id="https://idp.test.example/idp",
                 sso_url="http://127.0.0.1/idp/sso", slo_url=None,
                 want_authn_requests_signed=False, scopes=("example.org",)):
        self.workdir = os.path.abspath(workdir)
        os.makedirs(self.workdir, exist_ok=True)
        self.entity_id = entity_id
        self.sso_url = sso_url
        self.slo_url = slo_url or default_slo_url(sso_url)
        self.want_authn_requests_signed = bool(want_authn_requests_signed)
        self.accepted_sig_algs = (SIG_ALG_RSA_SHA256,)
        self.key_path = os.path.join(self.workdir, "idp.key")
        self.cert_path = os.path.join(self.workdir, "idp.crt")
        # flock: two processes starting on a fresh workdir must not end up
        # with one's key and the other's certificate.
        with open(os.path.join(self.workdir, ".idp.lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (os.path.isfile(self.key_path)
                    and os.path.isfile(self.cert_path)):
                make_keypair(self.workdir, "idp", "rsp test idp")
        self.metadata_path = os.path.join(self.workdir, "idp-metadata.xml")
        self.metadata = idp_metadata(
            entity_id, sso_url, self.cert_path, slo_url=self.slo_url,
            want_authn_requests_signed=self.want_authn_requests_signed,
            scopes=scopes)
        _write_atomic(self.metadata_path, self.metadata)

    # -- public API --------------------------------------------------------

    def mint(self, sp_entity_id, acs_url, **kw):
        """Signed SAML Response, base64 (standard alphabet, no newlines).
        See mint_xml for the keyword arguments."""
        xml = self.mint_xml(sp_entity_id, acs_url, **kw)
        return base64.b64encode(xml.encode("utf-8")).decode("ascii")

    def mint_xml(self, sp_entity_id, acs_url, *, assertion_id=None,
                 name_id="alice", now=None, issue_instant_offset=0,
                 not_before_offset=-30, not_on_or_after_offset=300,
                 scd_not_on_or_after_offset=300, scd_not_before_offset=None,
                 audience=None, recipient=None, destination=None,
                 session_not_on_or_after_offset=None, session_index=None,
                 in_response_to=None, sign_response=True, sign_assertion=True,
                 issuer=None, confirmation_method=BEARER, attributes=None,
                 assertions=1, response_id=None,
                 name_id_format=NAMEID_UNSPECIFIED, encrypt=None,
                 signature_method="rsa-sha256", encrypt_name_id=None):
        """The Response XML (signed as asked), as a str.

        Offsets are seconds relative to ``now`` (epoch seconds, default
        time.time()); an offset of None omits that attribute.  Extra
        keywords beyond the documented API: ``response_id`` (Response ID,
        default random) and ``name_id_format``.

        ``encrypt``: None (plaintext assertions), an Encryption (every
        assertion encrypted with it) or a tuple/list with one entry per
        assertion (None = that one stays plaintext); the Response's children
        keep the assertions' order.  ``sign_assertion`` signs each assertion
        before it is encrypted (the signature is inside the ciphertext);
        ``sign_response`` signs the Response after (its signature covers the
        EncryptedAssertion elements).

        ``signature_method``: "rsa-sha256" (RSA-SHA256, SHA-256 digests) or
        "rsa-sha1" (RSA-SHA1, SHA-1 digests), for every signature.

        ``encrypt_name_id``: the SP's encryption certificate (PEM path): the
        Subject carries an EncryptedID (Lasso's encryption: AES-128-CBC,
        rsa-oaep-mgf1p) instead of the NameID; or an Encryption (engine
        xmlsec1 or cryptography): the EncryptedID is its encryption of the
        NameID (any key transport and AES it has).
        """
        if assertions not in (0, 1, 2):
            raise ValueError("assertions must be 0, 1 or 2")
        if signature_method not in SIGNATURE_METHODS:
            raise ValueError("signature_method must be one of %s, not %r"
                             % (", ".join(SIGNATURE_METHODS), signature_method))
        plan = _encryption_plan(encrypt, assertions)
        encrypted = any(e is not None for e in plan)
        if now is None:
            now = time.time()
        issuer = self.entity_id if issuer is None else issuer
        audience = sp_entity_id if audience is None else audience
        recipient = acs_url if recipient is None else recipient
        destination = acs_url if destination is None else destination
        assertion_id = random_id() if assertion_id is None else assertion_id
        response_id = random_id() if response_id is None else response_id
        session_index = random_id() if session_index is None else session_index

        def t(offset):
            return None if offset is None else saml_time(now + offset)

        issue_instant = t(issue_instant_offset)

        with _LASSO_LOCK:
            server = self._server(sp_entity_id, acs_url)
            server.signatureMethod = (lasso.SIGNATURE_METHOD_RSA_SHA1
                                      if signature_method == "rsa-sha1" else
                                      lasso.SIGNATURE_METHOD_RSA_SHA256)

            nodes = []
            for i in range(assertions):
                a = self._assertion(
                    assertion_id if i == 0 else random_id(),
                    issuer=issuer, issue_instant=issue_instant,
                    name_id=name_id, name_id_format=name_id_format,
                    encrypt_name_id=encrypt_name_id and (
                        sp_entity_id, acs_url, encrypt_name_id),
                    confirmation_method=confirmation_method,
                    recipient=recipient, in_response_to=in_response_to,
                    scd_not_before=t(scd_not_before_offset),
                    scd_not_on_or_after=t(scd_not_on_or_after_offset),
                    not_before=t(not_before_offset),
                    not_on_or_after=t(not_on_or_after_offset),
                    audience=audience,
                    authn_instant=issue_instant,
                    session_index=session_index,
                    session_not_on_or_after=t(session_not_on_or_after_offset),
                    attributes=attributes)
                if sign_assertion:
                    server.saml2AssertionSetupSignature(a)
                nodes.append(a)

            # Assertions to encrypt: serialised (and signed) on their own now;
            # Lasso's engine encrypts here, under the lock, xmlsec1's below.
            encrypted_xml = [None] * assertions
            to_xmlsec1 = []
            for i, (a, enc) in enumerate(zip(nodes, plan)):
                if enc is None:
                    continue
                plain = a.exportToXml()
                _check_plain_assertion(plain, a.id, sign_assertion,
                                       signature_method)
                if enc.engine == "lasso":
                    encrypted_xml[i] = enc.encrypt_lasso(a, sp_entity_id)
                else:
                    to_xmlsec1.append((i, enc, plain))

            login = lasso.Login(server)
            login.initIdpInitiatedAuthnRequest(sp_entity_id)
            login.request.protocolBinding = BINDING_POST
            login.request.nameIdPolicy.format = NAMEID_TRANSIENT
            login.request.nameIdPolicy.allowCreate = True
            login.processAuthnRequestMsg(None)
            login.validateRequestMsg(True, True)

            resp = login.response
            resp.assertion = tuple(nodes)
            # With encrypted assertions the Response is signed by xmlsec1
            # once they are in place.
            login.setSignatureHint(lasso.PROFILE_SIGNATURE_HINT_FORCE
                                   if sign_response and not encrypted else
                                   lasso.PROFILE_SIGNATURE_HINT_FORBID)
            login.buildAuthnResponseMsg()
            # buildAuthnResponseMsg attached (or removed) the signature and
            # set Destination from the SP metadata; now set every field as
            # asked: signing happens in exportToXml.
            resp.id = response_id
            resp.version = "2.0"
            resp.issueInstant = issue_instant
            resp.issuer = self._issuer(issuer)
            resp.inResponseTo = in_response_to
            resp.destination = destination
            status = lasso.Samlp2Status()
            code = lasso.Samlp2StatusCode()
            code.value = STATUS_SUCCESS
            status.statusCode = code
            resp.status = status
            xml = resp.exportToXml()
        if encrypted:
            for i, enc, plain in to_xmlsec1:
                encrypted_xml[i] = enc.encrypt_serialised(plain, sp_entity_id)
            if not xml:
                raise RuntimeError("Lasso could not export the response")
            xml = _substitute_assertions(xml, encrypted_xml)
            if sign_response:
                xml = _sign_response_xmlsec1(xml, response_id, self.key_path,
                                             self.cert_path, signature_method)
        _check_shape(xml, sign_response, sign_assertion, assertions,
                     encrypt=plan, signature_method=signature_method)
        return xml

    @staticmethod
    def tamper(b64):
        """Change the text of every NameID of a minted response (after
        signing), so that its signatures no longer verify; base64 again."""
        xml = base64.b64decode(b64).decode("utf-8")
        pat = re.compile(r"(<(?:[A-Za-z_][\w.-]*:)?NameID\b[^>]*>)([^<]*)(<)")
        new, n = pat.subn(lambda m: m.group(1) + "mallory-" + m.group(2)
                          + m.group(3), xml)
        if n == 0:
            raise ValueError("no NameID to tamper with")
        return base64.b64encode(new.encode("utf-8")).decode("ascii")

    @staticmethod
    def tamper_response_signature(b64):
        """Change one digit of the Response's own IssueInstant (its seconds;
        still a valid xs:dateTime): covered by the Response signature,
        outside every (Encrypted)Assertion, so the Response signature no
        longer verifies while the assertions, encrypted or not, and their
        signatures are untouched.  ValueError if the Response is not signed
        or has no IssueInstant.  Returns base64."""
        xml = base64.b64decode(b64).decode("utf-8")
        try:
            root = ET.fromstring(xml)
        except ET.ParseError as exc:
            raise ValueError("not XML: %s" % exc) from exc
        if root.tag != "{%s}Response" % SAMLP_NS:
            raise ValueError("not a samlp:Response")
        if root.find("{%s}Signature" % DS_NS) is None:
            raise ValueError("the Response is not signed")
        tag = re.match(r"\s*(?:<\?xml[^>]*\?>\s*)?<(?:[A-Za-z_][\w.-]*:)?Response\b[^>]*>",
                       xml)
        attr = re.compile(r'\sIssueInstant="([^"]*)"').search(xml, 0, tag.end()) \
            if tag else None
        if attr is None:
            raise ValueError("the Response has no IssueInstant to change")
        digit = re.search(r"(\d)(?=(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?$)", attr.group(1))
        if digit is None:
            raise ValueError("IssueInstant %r is not an xs:dateTime" % attr.group(1))
        pos = attr.start(1) + digit.start(1)
        new = xml[:pos] + str((int(xml[pos]) + 1) % 10) + xml[pos + 1:]
        if ET.fromstring(new).get("IssueInstant") == root.get("IssueInstant"):
            raise RuntimeError("IssueInstant unchanged")   # pragma: no cover
        return base64.b64encode(new.encode("utf-8")).decode("ascii")

    @staticmethod
    def tamper_redirect(url_or_query):
        """An HTTP-Redirect URL (or query) whose SAMLRequest/SAMLResponse
        has its root ID changed, every other parameter (RelayState, SigAlg,
        Signature) kept byte for byte: the signature no longer verifies."""
        s = url_or_query.strip()
        query = redirect_query(s)
        if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", s) or s.startswith("/"):
            u = urllib.parse.urlsplit(s)

            def rebuild(q):
                return urllib.parse.urlunsplit(u._replace(query=q))
        else:
            def rebuild(q):
                return q
        parts = query.split("&")
        for i, part in enumerate(parts):
            name, sep, value = part.partition("=")
            if name in ("SAMLRequest", "SAMLResponse") and sep:
                root = decode_redirect_message(urllib.parse.unquote_plus(value))
                root.set("ID", (root.get("ID") or "_") + "x")
                xml = ET.tostring(root, encoding="utf-8")
                c = zlib.compressobj(9, zlib.DEFLATED, -15)
                b64 = base64.b64encode(c.compress(xml) + c.flush()).decode("ascii")
                parts[i] = name + "=" + urllib.parse.quote(b64, safe="")
                return rebuild("&".join(parts))
        raise SAMLMessageError("no SAMLRequest or SAMLResponse to tamper with")

    # -- Single Logout (HTTP-Redirect binding) -----------------------------
    #
    # Every method takes the SP's metadata (XML text): it names the SP, its
    # SingleLogoutService and the certificate its messages are verified
    # with.  Lasso does the signing and the verifying (query signatures,
    # RSA-SHA256); the IdP keeps no session state: see the notes in each
    # method for how Lasso's Logout profile is driven without one.

    def logout_request_url(self, sp_metadata_xml, name_id, session_index=None,
                           relay_state=None, name_id_format=None, *, sign=True,
                           qualifiers=None, encrypt_name_id=False, post=False):
        """IdP-initiated logout: (url, request_id), url being the SP's
        HTTP-Redirect SingleLogoutService with a LogoutRequest (signed with
        RSA-SHA256 unless sign=False) for ``name_id``.

        session_index: None (no SessionIndex), a string, or a list of them.
        name_id_format: None = unspecified (what mint() puts in assertions
        by default), "" = no Format attribute, else that URI.
        relay_state: sent as RelayState (covered by the signature).
        qualifiers: NameID attributes as IdPs send them ({"NameQualifier":
        ..., "SPNameQualifier": ..., "SPProvidedID": ...}).
        encrypt_name_id: an EncryptedID for the SP's encryption key (from
        its metadata) instead of the NameID, as Shibboleth IdP sends it
        (True: Lasso's encryption, rsa-oaep-mgf1p with SHA-1; an
        Encryption: its encryption of the NameID, e.g. OAEP with SHA-256).

        How: Lasso's Logout.initRequest takes the NameID from a session
        holding an assertion for this SP, so we hand it a throw-away session
        (lasso.Session.addAssertion; Lasso only indexes NameIDs that come
        with an AuthnStatement SessionIndex, hence a placeholder one), then
        put the asked SessionIndex list on the request before
        buildRequestMsg signs the query."""
        sp = parse_sp_metadata(sp_metadata_xml)
        if not sp["slo_url"] and not post:
            raise SAMLMessageError("the SP metadata has no HTTP-Redirect "
                                   "SingleLogoutService")
        if not isinstance(name_id, str) or not name_id:
            raise ValueError("name_id must be a non-empty string")
        fmt = NAMEID_UNSPECIFIED if name_id_format is None else (name_id_format or None)
        if session_index is None:
            indexes = ()
        elif isinstance(session_index, str):
            indexes = (session_index,)
        else:
            indexes = tuple(session_index)
        with _LASSO_LOCK:
            server = self._slo_server(sp_metadata_xml)
            session = lasso.Session()
            session.addAssertion(sp["entity_id"],
                                 self._session_assertion(name_id, fmt, qualifiers))
            custom = isinstance(encrypt_name_id, Encryption)
            server.getProvider(sp["entity_id"]).setEncryptionMode(
                lasso.ENCRYPTION_MODE_NAMEID if encrypt_name_id and not custom
                else lasso.ENCRYPTION_MODE_NONE)
            logout = lasso.Logout(server)
            logout.setSignatureHint(lasso.PROFILE_SIGNATURE_HINT_FORCE if sign
                                    else lasso.PROFILE_SIGNATURE_HINT_FORBID)
            logout.setSessionFromDump(session.dump())
            logout.initRequest(sp["entity_id"], lasso.HTTP_METHOD_POST if post
                               else lasso.HTTP_METHOD_REDIRECT)
            request = logout.request
            if custom:
                request.encryptedId = encrypted_id_node(
                    encrypt_name_id, name_id_xml(name_id, fmt, qualifiers),
                    sp["entity_id"])
                request.nameId = None
            request.setSessionIndexes(indexes)
            if relay_state is not None:
                logout.msgRelayState = relay_state
            logout.buildRequestMsg()
            url, body, request_id = logout.msgUrl, logout.msgBody, request.id
        if post:
            root = ET.fromstring(base64.b64decode(body))
            if sign != (root.find("{%s}Signature" % DS_NS) is not None):
                raise RuntimeError("Lasso's POST LogoutRequest is %ssigned"
                                   % ("not " if sign else ""))
        else:
            _check_redirect(url, "SAMLRequest", sign)
            root = decode_redirect_message(
                _redirect_params(redirect_query(url))["SAMLRequest"])
        got = _logout_request_info(root)
        if encrypt_name_id:
            if got["name_id"] is not None or root.find(
                    "{%s}EncryptedID" % SAML_NS) is None:
                raise RuntimeError("Lasso did not encrypt the NameID: %r" % got)
        elif got["name_id"] != name_id:
            raise RuntimeError("Lasso's LogoutRequest is not what was asked: %r"
                               % got)
        if got["session_indexes"] != list(indexes):
            raise RuntimeError("Lasso's LogoutRequest is not what was asked: %r"
                               % got)
        if post:
            fields = {"SAMLRequest": body}
            if relay_state is not None:
                fields["RelayState"] = relay_state
            return url, fields, request_id
        return url, request_id

    def logout_request_post(self, sp_metadata_xml, name_id, session_index=None,
                            relay_state=None, **kw):
        """logout_request_url over the HTTP-POST binding (the SP's
        metadata must have an HTTP-POST SingleLogoutService): (url, form
        fields {"SAMLRequest", "RelayState"}, request_id), the LogoutRequest
        carrying its own enveloped signature (unless sign=False)."""
        return self.logout_request_url(sp_metadata_xml, name_id, session_index,
                                       relay_state, post=True, **kw)

    def process_logout_response(self, sp_metadata_xml, url_or_query):
        """Check an SP's HTTP-Redirect LogoutResponse (a URL or its query)
        and return {"in_response_to", "status", "sub_status", "relay_state",
        "issuer", "id", "destination", "issue_instant", "sig_alg"}.

        Raises SignatureError when the signature is missing, does not verify
        with the SP's certificate, or its SigAlg is not accepted, and
        SAMLMessageError when it is not a LogoutResponse from this SP.  A
        non-Success status is returned, not raised.

        Lasso quirk: Logout.processResponseMsg returns the status error
        (e.g. RequestDenied) before it looks at the signature verdict, so
        the verdict is read from the profile's signature status, and the
        query signature is also verified on its own beforehand."""
        sp, query, params, root = self._incoming(
            sp_metadata_xml, url_or_query, "SAMLResponse", "LogoutResponse")
        sig, parsed, err = self._lasso_logout_response(sp_metadata_xml, query,
                                                       sp["entity_id"])
        if sig != 0:
            raise SignatureError("LogoutResponse signature refused by Lasso: %s"
                                 % _lasso_error_text(sig))
        if not parsed:
            raise SAMLMessageError("Lasso could not parse the LogoutResponse: %s"
                                   % err)
        status, sub_status = _status_codes(root)
        issuer = _text(root.find("{%s}Issuer" % SAML_NS))
        if issuer != sp["entity_id"]:
            raise SAMLMessageError("LogoutResponse Issuer %r is not the SP %r"
                                   % (issuer, sp["entity_id"]))
        if err is not None and status == STATUS_SUCCESS:
            raise SAMLMessageError("Lasso refused the LogoutResponse: %s" % err)
        return {
            "in_response_to": root.get("InResponseTo"),
            "status": status,
            "sub_status": sub_status,
            "relay_state": params.get("RelayState"),
            "issuer": issuer,
            "id": root.get("ID"),
            "destination": root.get("Destination"),
            "issue_instant": root.get("IssueInstant"),
            "sig_alg": params.get("SigAlg"),
        }

    def answer_logout_request(self, sp_metadata_xml, url_or_query,
                              status=STATUS_SUCCESS, *, sub_status=None,
                              sign=True):
        """SP-initiated logout: verify the SP's HTTP-Redirect LogoutRequest
        (a URL or its query) and answer it.  Returns (url, info): url is the
        SP's SingleLogoutService (ResponseLocation, else Location) with a
        LogoutResponse (signed with RSA-SHA256 unless sign=False;
        InResponseTo = the request's ID; the request's RelayState echoed;
        StatusCode ``status``, with a second-level ``sub_status`` if given).
        info: {"id", "issuer", "name_id", "name_id_format",
        "session_indexes", "relay_state", "destination", "issue_instant",
        "not_on_or_after", "reason", "sig_alg", "response_id", "status",
        "sub_status"}.

        Raises SignatureError (missing/bad signature, SigAlg not accepted)
        or SAMLMessageError (not a LogoutRequest from this SP) first: no
        response is built for a message that does not verify.

        How: Logout.processRequestMsg verifies the query signature
        (verify hint FORCE); Logout.validateRequest would then insist on a
        session holding the SP's assertion, which this stateless IdP does
        not have, so the LogoutResponse node is built here and handed to
        Logout.buildResponseMsg, which signs the query and picks the URL."""
        if not isinstance(status, str) or not status:
            raise ValueError("status must be a StatusCode URI")
        sp = parse_sp_metadata(sp_metadata_xml)
        if not sp["slo_url"]:
            raise SAMLMessageError("the SP metadata has no HTTP-Redirect "
                                   "SingleLogoutService")
        _, query, params, root = self._incoming(
            sp_metadata_xml, url_or_query, "SAMLRequest", "LogoutRequest", sp)
        info = _logout_request_info(root)
        with _LASSO_LOCK:
            server = self._slo_server(sp_metadata_xml)
            self._verify_query(server, sp["entity_id"], query)
            if info["issuer"] != sp["entity_id"]:
                raise SAMLMessageError("LogoutRequest Issuer %r is not the SP %r"
                                       % (info["issuer"], sp["entity_id"]))
            logout = lasso.Logout(server)
            logout.setSignatureVerifyHint(lasso.PROFILE_SIGNATURE_VERIFY_HINT_FORCE)
            try:
                logout.processRequestMsg(query)
            except lasso.Error as exc:
                sig = _lasso_signature_status(logout)
                if sig != 0:
                    raise SignatureError("LogoutRequest signature refused by "
                                         "Lasso: %s" % _lasso_error_text(sig)) from exc
                raise SAMLMessageError("Lasso refused the LogoutRequest: %s"
                                       % exc) from exc
            sig = _lasso_signature_status(logout)
            if sig != 0:
                raise SignatureError("LogoutRequest signature refused by Lasso: %s"
                                     % _lasso_error_text(sig))
            request = logout.request
            if not isinstance(request, lasso.Samlp2LogoutRequest) or \
                    request.id != info["id"]:
                raise SAMLMessageError("Lasso did not parse the LogoutRequest")
            response = lasso.Samlp2LogoutResponse()
            response.id = random_id()
            response.version = "2.0"
            response.issueInstant = saml_time(time.time())
            response.issuer = self._issuer(self.entity_id)
            response.inResponseTo = request.id
            response.status = _status_node(status, sub_status)
            logout.response = response
            logout.setSignatureHint(lasso.PROFILE_SIGNATURE_HINT_FORCE if sign
                                    else lasso.PROFILE_SIGNATURE_HINT_FORBID)
            logout.buildResponseMsg()
            url = logout.msgUrl
        _check_redirect(url, "SAMLResponse", sign)
        info.update(relay_state=params.get("RelayState"),
                    sig_alg=params.get("SigAlg"), response_id=response.id,
                    status=status, sub_status=sub_status)
        return url, info

    def answer_logout_request_post(self, sp_metadata_xml, url_or_query,
                                   status=STATUS_SUCCESS, **kw):
        """answer_logout_request over the HTTP-POST binding: (url, form
        fields {"SAMLResponse", "RelayState"}, info), the LogoutResponse
        signed (RSA-SHA256, enveloped, by the xmlsec1 command line) and
        posted to the SP's SingleLogoutService."""
        url, info = self.answer_logout_request(sp_metadata_xml, url_or_query,
                                               status, sign=False, **kw)
        params = _redirect_params(redirect_query(url))
        xml = zlib.decompressobj(-15).decompress(
            base64.b64decode(params["SAMLResponse"]), HTTP_MAX_BODY).decode()
        signed = _sign_response_xmlsec1(xml, info["response_id"], self.key_path,
                                        self.cert_path, "rsa-sha256",
                                        root_name="LogoutResponse")
        fields = {"SAMLResponse": base64.b64encode(
            signed.encode() if isinstance(signed, str) else signed).decode()}
        if params.get("RelayState") is not None:
            fields["RelayState"] = params["RelayState"]
        return url.split("?", 1)[0], fields, info

    def _lasso_logout_response(self, sp_metadata_xml, msg, query_from=None):
        """(signature status, parsed, Lasso's error or None) of Lasso's
        Logout.processResponseMsg on msg (a query, or a POST form value);
        query_from: the SP whose query signature is verified first."""
        with _LASSO_LOCK:
            server = self._slo_server(sp_metadata_xml)
            if query_from:
                self._verify_query(server, query_from, msg)
            logout = lasso.Logout(server)
            logout.setSignatureVerifyHint(lasso.PROFILE_SIGNATURE_VERIFY_HINT_FORCE)
            err = None
            try:
                logout.processResponseMsg(msg)
            except lasso.Error as exc:
                err = exc
            return (_lasso_signature_status(logout),
                    isinstance(logout.response, lasso.Samlp2StatusResponse), err)

    def process_logout_response_post(self, sp_metadata_xml, saml_response):
        """Check an SP's HTTP-POST LogoutResponse (the SAMLResponse form
        value): its enveloped signature verified by Lasso with the SP's
        certificate (SignatureError otherwise); returns {"in_response_to",
        "status", "issuer", "destination"}."""
        sp = parse_sp_metadata(sp_metadata_xml)
        root = ET.fromstring(base64.b64decode(saml_response))
        sig, _, err = self._lasso_logout_response(sp_metadata_xml, saml_response)
        if sig != 0 or root.find("{%s}Signature" % DS_NS) is None:
            raise SignatureError("LogoutResponse signature refused by Lasso: %s"
                                 % _lasso_error_text(sig))
        status, _ = _status_codes(root)
        issuer = _text(root.find("{%s}Issuer" % SAML_NS))
        if issuer != sp["entity_id"]:
            raise SAMLMessageError("LogoutResponse Issuer %r is not the SP %r"
                                   % (issuer, sp["entity_id"]))
        if err is not None and status == STATUS_SUCCESS:
            raise SAMLMessageError("Lasso refused the LogoutResponse: %s" % err)
        return {"in_response_to": root.get("InResponseTo"), "status": status,
                "issuer": issuer, "destination": root.get("Destination")}

    def verify_authn_request(self, sp_metadata_xml, query):
        """Check the HTTP-Redirect signature of an SP's AuthnRequest (a URL
        or its query): signed, with an accepted SigAlg, verifying with the
        SP's certificate (Lasso's query-signature check), Issuer = the SP.
        Returns {"id", "issuer", "acs_url", "protocol_binding",
        "destination", "relay_state", "sig_alg"}; raises SignatureError or
        SAMLMessageError."""
        sp, query, params, root = self._incoming(
            sp_metadata_xml, query, "SAMLRequest", "AuthnRequest")
        with _LASSO_LOCK:
            server = self._slo_server(sp_metadata_xml)
            self._verify_query(server, sp["entity_id"], query)
        issuer = _text(root.find("{%s}Issuer" % SAML_NS))
        if issuer != sp["entity_id"]:
            raise SAMLMessageError("AuthnRequest Issuer %r is not the SP %r"
                                   % (issuer, sp["entity_id"]))
        return {
            "id": root.get("ID"),
            "issuer": issuer,
            "acs_url": root.get("AssertionConsumerServiceURL"),
            "protocol_binding": root.get("ProtocolBinding"),
            "destination": root.get("Destination"),
            "relay_state": params.get("RelayState"),
            "sig_alg": params.get("SigAlg"),
        }

    # -- helpers -----------------------------------------------------------

    def _server(self, sp_entity_id, acs_url):
        """An IdP lasso.Server knowing this SP (cached; caller holds the
        lock).  The SP metadata only serves Lasso's IdP-side Login: every
        field it would derive from it is overwritten before signing."""
        cache = self.__dict__.setdefault("_servers", {})
        k = (sp_entity_id, acs_url)
        server = cache.get(k)
        if server is None:
            if len(cache) >= 16:
                cache.clear()
            server = lasso.Server(self.metadata_path, self.key_path, None,
                                  self.cert_path)
            server.signatureMethod = lasso.SIGNATURE_METHOD_RSA_SHA256
            server.addProviderFromBuffer(lasso.PROVIDER_ROLE_SP,
                                         sp_metadata(sp_entity_id, acs_url))
            cache[k] = server
        return server

    def _slo_server(self, sp_metadata_xml):
        """An IdP lasso.Server (this IdP's metadata, key and certificate,
        RSA-SHA256) knowing the SP from its metadata: the SP's certificate
        verifies its messages, its SingleLogoutService is where ours go.
        Cached by metadata text; caller holds _LASSO_LOCK."""
        cache = self.__dict__.setdefault("_slo_servers", {})
        k = (self.metadata, sp_metadata_xml)
        server = cache.get(k)
        if server is None:
            if len(cache) >= 16:
                cache.clear()
            with open(self.key_path, "r", encoding="ascii") as f:
                key_pem = f.read()
            with open(self.cert_path, "r", encoding="ascii") as f:
                cert_pem = f.read()
            server = lasso.Server.newFromBuffers(self.metadata, key_pem, None,
                                                 cert_pem)
            if server is None:
                raise RuntimeError("Lasso could not load the IdP's metadata/key")
            server.signatureMethod = lasso.SIGNATURE_METHOD_RSA_SHA256
            try:
                server.addProviderFromBuffer(lasso.PROVIDER_ROLE_SP,
                                             sp_metadata_xml)
            except lasso.Error as exc:
                raise SAMLMessageError("Lasso refused the SP metadata: %s"
                                       % exc) from exc
            cache[k] = server
        return server

    def _incoming(self, sp_metadata_xml, url_or_query, param, tag, sp=None):
        """(sp, query, params, root) of an SP's HTTP-Redirect message: the
        SP's metadata parsed, the query split, the message decoded and
        checked to be a ``tag``, the signature parameters present (their
        verdict is the caller's, under the Lasso lock)."""
        sp = sp or parse_sp_metadata(sp_metadata_xml)
        query = redirect_query(url_or_query)
        params = _redirect_params(query, param)
        root = decode_redirect_message(params[param])
        if not _tag(root, tag):
            raise SAMLMessageError("%s is not a%s %s"
                                   % (param, "n" if tag[0] in "AEIOU" else "", tag))
        self._require_signature_params(params)
        return sp, query, params, root

    def _require_signature_params(self, params):
        if "Signature" not in params or "SigAlg" not in params:
            raise SignatureError("message is not signed (no Signature/SigAlg)")
        if params["SigAlg"] not in self.accepted_sig_algs:
            raise SignatureError("SigAlg %r not accepted (want one of %s)"
                                 % (params["SigAlg"],
                                    ", ".join(self.accepted_sig_algs)))

    @staticmethod
    def _verify_query(server, sp_entity_id, query):
        """Lasso's HTTP-Redirect signature check of the raw query with the
        SP's key(s) (lasso_provider_verify_query_signature: the signed string
        is SAMLRequest|SAMLResponse, RelayState, SigAlg as they appear,
        still URL-encoded).  Caller holds _LASSO_LOCK."""
        provider = server.providers.get(sp_entity_id)
        if provider is None:
            raise SAMLMessageError("Lasso does not know the SP %r" % sp_entity_id)
        rc = provider.verifySignature(query, "ID", lasso.MESSAGE_FORMAT_QUERY)
        if rc != 0:
            raise SignatureError("signature does not verify with the SP's key: %s"
                                 % _lasso_error_text(rc))

    @staticmethod
    def _session_assertion(name_id, name_id_format, qualifiers=None):
        """A bare assertion about name_id for a throw-away lasso.Session (see
        logout_request_url)."""
        a = lasso.Saml2Assertion()
        a.id = random_id()
        a.version = "2.0"
        subject = lasso.Saml2Subject()
        nid = lasso.Saml2NameID()
        nid.content = name_id
        if name_id_format:
            nid.format = name_id_format
        for attr, value in (qualifiers or {}).items():
            setattr(nid, {"NameQualifier": "nameQualifier",
                          "SPNameQualifier": "spNameQualifier",
                          "SPProvidedID": "spProvidedId"}[attr], value)
        subject.nameId = nid
        a.subject = subject
        st = lasso.Saml2AuthnStatement()
        st.sessionIndex = "placeholder"
        a.authnStatement = (st,)
        return a

    @staticmethod
    def _issuer(value):
        n = lasso.Saml2NameID()
        n.content = value
        n.format = NAMEID_ENTITY
        return n

    def _assertion(self, aid, *, issuer, issue_instant, name_id,
                   name_id_format, confirmation_method, recipient,
                   encrypt_name_id=None,
                   in_response_to, scd_not_before, scd_not_on_or_after,
                   not_before, not_on_or_after, audience, authn_instant,
                   session_index, session_not_on_or_after, attributes):
        a = lasso.Saml2Assertion()
        a.id = aid
        a.version = "2.0"
        a.issueInstant = issue_instant
        a.issuer = self._issuer(issuer)

        subject = lasso.Saml2Subject()
        if name_id is not None:       # None: no NameID (AD FS without a rule)
            nid = lasso.Saml2NameID()
            nid.content = name_id
            if name_id_format:
                nid.format = name_id_format
            if encrypt_name_id and isinstance(encrypt_name_id[2], Encryption):
                sp_entity, _, enc = encrypt_name_id
                subject.encryptedId = encrypted_id_node(
                    enc, name_id_xml(name_id, name_id_format), sp_entity)
            elif encrypt_name_id:
                sp_entity, sp_acs, cert = encrypt_name_id
                sp = lasso.Provider.newFromBuffer(
                    lasso.PROVIDER_ROLE_SP,
                    sp_metadata(sp_entity, sp_acs, cert, enc_cert_path=cert))
                subject.encryptedId = sp.saml2NodeEncrypt(nid)
            else:
                subject.nameId = nid
        sc = lasso.Saml2SubjectConfirmation()
        sc.method = confirmation_method
        scd = lasso.Saml2SubjectConfirmationData()
        scd.recipient = recipient
        scd.inResponseTo = in_response_to
        scd.notBefore = scd_not_before
        scd.notOnOrAfter = scd_not_on_or_after
        sc.subjectConfirmationData = scd
        subject.subjectConfirmation = sc
        a.subject = subject

        cond = lasso.Saml2Conditions()
        cond.notBefore = not_before
        cond.notOnOrAfter = not_on_or_after
        if audience != "":
            ar = lasso.Saml2AudienceRestriction()
            ar.audience = audience
            cond.audienceRestriction = (ar,)
        a.conditions = cond

        st = lasso.Saml2AuthnStatement()
        st.authnInstant = authn_instant
        st.sessionIndex = session_index
        st.sessionNotOnOrAfter = session_not_on_or_after
        ctx = lasso.Saml2AuthnContext()
        ctx.authnContextClassRef = AC_PPT
        st.authnContext = ctx
        a.authnStatement = (st,)

        if attributes:
            attrs = []
            for name, values in attributes.items():
                if isinstance(values, str):
                    values = [values]
                at = lasso.Saml2Attribute()
                at.name = name
                at.nameFormat = ATTRNAME_BASIC
                vals = []
                for v in values:
                    txt = lasso.MiscTextNode.newWithString(str(v))
                    txt.textChild = True
                    av = lasso.Saml2AttributeValue()
                    av.any = (txt,)
                    vals.append(av)
                at.attributeValue = tuple(vals)
                attrs.append(at)
            ats = lasso.Saml2AttributeStatement()
            ats.attribute = tuple(attrs)
            a.attributeStatement = (ats,)
        return a


# --------------------------------------------------------------------------
# HTTP server (serve mode)
# --------------------------------------------------------------------------

_ID_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,255}$")   # an xs:ID (NCName)
_USER_RE = re.compile(r"^[^\x00-\x1f\x7f]{1,256}$")


def autopost_html(acs_url, saml_response, relay_state=None):
    """An HTML page whose form auto-POSTs SAMLResponse (+RelayState) to
    acs_url (the HTTP-POST binding).  Fields are plain
    ``<input type="hidden" name=".." value="..">`` elements."""
    fields = ['<input type="hidden" name="SAMLResponse" value="%s"/>'
              % _xml_escape(saml_response)]
    if relay_state is not None:
        fields.append('<input type="hidden" name="RelayState" value="%s"/>'
                      % _xml_escape(relay_state))
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"/>'
        '<title>rsp test IdP</title></head>\n'
        '<body onload="document.forms[0].submit()">\n'
        '<form method="post" action="%s">\n%s\n'
        '<noscript><button type="submit">Continue</button></noscript>\n'
        '</form>\n</body></html>\n'
        % (_xml_escape(acs_url), "\n".join(fields)))


def parse_redirect_authn_request(saml_request):
    """(ID, AssertionConsumerServiceURL) of an HTTP-Redirect SAMLRequest
    (base64 of raw DEFLATE).  Bounded; raises ValueError on junk."""
    try:
        raw = base64.b64decode(saml_request, validate=False)
        d = zlib.decompressobj(-15)
        xml = d.decompress(raw, HTTP_MAX_BODY)
        if d.unconsumed_tail:
            raise ValueError("SAMLRequest too large")
        root = ET.fromstring(xml)
    except (ValueError, zlib.error, ET.ParseError) as exc:
        raise ValueError("bad SAMLRequest: %s" % exc) from exc
    if root.tag != "{%s}AuthnRequest" % SAMLP_NS:
        raise ValueError("SAMLRequest is not an AuthnRequest")
    return root.get("ID"), root.get("AssertionConsumerServiceURL")


class _Handler(BaseHTTPRequestHandler):
    server_version = "rsp-testidp/1"
    timeout = HTTP_SOCKET_TIMEOUT     # per-socket timeout: a slow client cannot pin a thread

    def log_message(self, fmt, *args):
        if not self.server.quiet:
            sys.stderr.write("rsp-testidp: %s %s\n"
                             % (self.address_string(), fmt % args))

    def _send(self, code, body, ctype="text/plain; charset=utf-8",
              headers=()):
        data = body.encode("utf-8")
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        self.close_connection = True

    def _redirect(self, location):
        return self._send(302, "redirecting to %s\n" % location,
                          headers=[("Location", location)])

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        if len(url.query) > HTTP_MAX_QUERY:
            return self._send(414, "query too long\n")
        try:
            q = urllib.parse.parse_qs(url.query, keep_blank_values=True,
                                      max_num_fields=32)
        except ValueError:
            return self._send(400, "bad query\n")
        one = {k: v[0] for k, v in q.items()}
        srv = self.server
        if url.path == "/idp/metadata":
            return self._send(200, srv.idp.metadata,
                              "application/samlmetadata+xml")
        if url.path == "/idp/slo":
            return self._slo(url.query, one)
        if url.path == "/idp/logout":
            return self._logout(q, one)
        if url.path == "/idp/slo-log":
            entries = srv.slo_log_entries(clear=one.get("clear") == "1")
            return self._send(200, json.dumps({"entries": entries}, indent=1) + "\n",
                              "application/json")
        if url.path not in ("/idp/sso", "/idp/mint"):
            return self._send(404, "not found\n")

        user = one.get("user", "alice")
        aid = one.get("id")
        if not _USER_RE.match(user):
            return self._send(400, "bad user\n")
        if aid is not None and not _ID_RE.match(aid):
            return self._send(400, "bad id (must be an xs:ID / NCName)\n")
        irt = None
        if "SAMLRequest" in one:       # SP-initiated (HTTP-Redirect binding)
            try:
                irt, _acs = parse_redirect_authn_request(one["SAMLRequest"])
            except ValueError as exc:
                return self._send(400, "%s\n" % exc)
            if srv.idp.want_authn_requests_signed:
                try:
                    md = srv.sp_metadata_xml()
                except LookupError as exc:
                    return self._send(503, "cannot check the AuthnRequest "
                                      "signature: %s\n" % exc)
                try:
                    srv.idp.verify_authn_request(md, url.query)
                except (ValueError, lasso.Error) as exc:
                    return self._send(400, "AuthnRequest refused: %s\n" % exc)
            # The response always goes to the configured ACS URL, whatever
            # the request asks: no open redirector, even in a test.
        irt = one.get("in_response_to", irt)
        if irt is not None and not _ID_RE.match(irt):
            return self._send(400, "bad InResponseTo\n")
        try:
            b64 = srv.idp.mint(srv.sp_entity_id, srv.acs_url, assertion_id=aid,
                               name_id=user, in_response_to=irt,
                               attributes=srv.attributes)
        except Exception as exc:    # report, keep serving
            return self._send(500, "mint failed: %s\n" % exc)
        if url.path == "/idp/mint":
            return self._send(200, b64 + "\n")
        return self._send(200, autopost_html(srv.acs_url, b64,
                                             one.get("RelayState")),
                          "text/html; charset=utf-8")

    def _slo(self, raw_query, one):
        """/idp/slo: the IdP's SingleLogoutService (HTTP-Redirect)."""
        srv = self.server
        if "SAMLRequest" in one:
            kind = "LogoutRequest"
        elif "SAMLResponse" in one:
            kind = "LogoutResponse"
        else:
            return self._send(400, "no SAMLRequest or SAMLResponse\n")
        try:
            md = srv.sp_metadata_xml()
        except LookupError as exc:
            srv.slo_log_add(direction="received", type=kind, ok=False,
                            error="no SP metadata: %s" % exc)
            return self._send(503, "no SP metadata: %s\n" % exc)
        try:
            if kind == "LogoutRequest":
                location, info = srv.idp.answer_logout_request(md, raw_query)
            else:
                info = srv.idp.process_logout_response(md, raw_query)
        except Exception as exc:    # report, log, keep serving
            refused = isinstance(exc, (ValueError, lasso.Error))
            srv.slo_log_add(direction="received", type=kind, ok=False,
                            error=str(exc),
                            signature_error=isinstance(exc, SignatureError))
            return self._send(400 if refused else 500, "%s %s: %s\n" % (
                kind, "refused" if refused else "failed", exc))
        if kind == "LogoutRequest":
            srv.slo_log_add(direction="received", type=kind, ok=True, **info)
            return self._redirect(location)
        known = srv.sent_request_known(info["in_response_to"])
        srv.slo_log_add(direction="received", type=kind, ok=True,
                        known_request=known, **info)
        return self._send(200, "LogoutResponse received: %s\n" % info["status"])

    def _logout(self, q, one):
        """/idp/logout?user=..&session_index=..&relay=..: IdP-initiated
        logout, a 302 to the SP's SingleLogoutService."""
        srv = self.server
        user = one.get("user", "alice")
        if not _USER_RE.match(user):
            return self._send(400, "bad user\n")
        indexes = q.get("session_index", [])
        if any(not _USER_RE.match(i) for i in indexes):
            return self._send(400, "bad session_index\n")
        relay = one.get("relay") or None
        if relay is not None and not _USER_RE.match(relay):
            return self._send(400, "bad relay\n")
        fmt = one.get("name_id_format")
        if fmt is not None and (len(fmt) > 256 or (fmt and not _USER_RE.match(fmt))):
            return self._send(400, "bad name_id_format\n")
        try:
            md = srv.sp_metadata_xml()
        except LookupError as exc:
            return self._send(503, "no SP metadata: %s\n" % exc)
        try:
            location, rid = srv.idp.logout_request_url(
                md, user, session_index=indexes or None, relay_state=relay,
                name_id_format=fmt)
        except Exception as exc:    # report, keep serving
            return self._send(500, "cannot build the LogoutRequest: %s\n" % exc)
        srv.sent_request_add(rid)
        srv.slo_log_add(direction="sent", type="LogoutRequest", ok=True, id=rid,
                        name_id=user, session_indexes=indexes,
                        relay_state=relay, destination=location.split("?", 1)[0])
        return self._redirect(location)


def _bounded(value):
    """A JSON-able copy of a log value with every string cut to
    SLO_LOG_FIELD_MAX characters."""
    if isinstance(value, str):
        return value[:SLO_LOG_FIELD_MAX]
    if isinstance(value, (list, tuple)):
        return [_bounded(v) for v in value[:32]]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return str(value)[:SLO_LOG_FIELD_MAX]


class IdPHTTPServer(ThreadingHTTPServer):
    """ThreadingHTTPServer with bounded concurrency (excess connections are
    closed at once) and daemon handler threads (shutdown never waits on a
    stuck client).

    Single Logout needs the SP's metadata: ``sp_metadata_path`` (read on
    every use) or ``sp_metadata_url`` (fetched on every use, timeout
    SP_METADATA_TIMEOUT, at most MAX_METADATA bytes, http/https only), so
    that an SP restarted with another key is followed at once."""
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    max_threads = 32

    def __init__(self, addr, idp=None, sp_entity_id=None, acs_url=None,
                 attributes=None, quiet=False, sp_metadata_url=None,
                 sp_metadata_path=None):
        super().__init__(addr, _Handler)
        self.idp = idp
        self.sp_entity_id = sp_entity_id
        self.acs_url = acs_url
        self.attributes = attributes
        self.quiet = quiet
        self.sp_metadata_url = sp_metadata_url
        self.sp_metadata_path = sp_metadata_path
        self._slots = threading.BoundedSemaphore(self.max_threads)
        self._log_lock = threading.Lock()
        self._slo_log = collections.deque(maxlen=SLO_LOG_MAX)
        self._slo_seq = 0
        self._sent = collections.OrderedDict()

    # -- SP metadata -------------------------------------------------------

    def sp_metadata_xml(self):
        """The SP metadata text; LookupError if none is configured or it
        cannot be read/fetched."""
        if self.sp_metadata_path:
            try:
                with open(self.sp_metadata_path, "r", encoding="utf-8") as f:
                    text = f.read(MAX_METADATA + 1)
            except OSError as exc:
                raise LookupError("cannot read %s: %s"
                                  % (self.sp_metadata_path, exc)) from exc
        elif self.sp_metadata_url:
            scheme = urllib.parse.urlsplit(self.sp_metadata_url).scheme.lower()
            if scheme not in ("http", "https"):
                raise LookupError("sp_metadata_url must be http(s)")
            try:
                with urllib.request.urlopen(self.sp_metadata_url,
                                            timeout=SP_METADATA_TIMEOUT) as r:
                    data = r.read(MAX_METADATA + 1)
                text = data.decode("utf-8")
            except (OSError, ValueError, http.client.HTTPException) as exc:
                raise LookupError("cannot fetch %s: %s"
                                  % (self.sp_metadata_url, exc)) from exc
        else:
            raise LookupError("no SP metadata configured (sp_metadata_url / "
                              "sp_metadata_path)")
        if len(text) > MAX_METADATA:
            raise LookupError("SP metadata larger than %d bytes" % MAX_METADATA)
        return text

    # -- logout bookkeeping ------------------------------------------------

    def slo_log_add(self, **entry):
        with self._log_lock:
            self._slo_seq += 1
            e = {"seq": self._slo_seq, "time": round(time.time(), 3)}
            e.update({k: _bounded(v) for k, v in entry.items()})
            self._slo_log.append(e)

    def slo_log_entries(self, clear=False):
        with self._log_lock:
            out = list(self._slo_log)
            if clear:
                self._slo_log.clear()
        return out

    def sent_request_add(self, request_id):
        with self._log_lock:
            self._sent[request_id] = True
            while len(self._sent) > SENT_REQUESTS_MAX:
                self._sent.popitem(last=False)

    def sent_request_known(self, request_id):
        with self._log_lock:
            return request_id is not None and request_id in self._sent

    # -- bounded concurrency -----------------------------------------------

    def process_request(self, request, client_address):
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except Exception:
            self._slots.release()
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


def serve(workdir, sp_entity_id, acs_url, port=0, entity_id=None,
          sso_url=None, attributes=None, quiet=False, ready=None,
          slo_url=None, want_authn_requests_signed=False,
          sp_metadata_url=None, sp_metadata_path=None):
    """Run the HTTP IdP on 127.0.0.1:port until SIGTERM/SIGINT (main thread)
    or until ``ready(httpd)``'s caller calls httpd.shutdown().

    slo_url: the metadata's SingleLogoutService (default: next to the SSO
    URL, http://127.0.0.1:<port>/idp/slo).  sp_metadata_url/_path: where
    Single Logout and signed-AuthnRequest checks get the SP's metadata."""
    httpd = IdPHTTPServer(("127.0.0.1", port), quiet=quiet,
                          sp_metadata_url=sp_metadata_url,
                          sp_metadata_path=sp_metadata_path)
    try:
        real_port = httpd.server_address[1]
        kw = {}
        if entity_id:
            kw["entity_id"] = entity_id
        kw["sso_url"] = sso_url or "http://127.0.0.1:%d/idp/sso" % real_port
        kw["slo_url"] = slo_url
        kw["want_authn_requests_signed"] = want_authn_requests_signed
        httpd.idp = TestIdP(workdir, **kw)
        httpd.sp_entity_id = sp_entity_id
        httpd.acs_url = acs_url
        httpd.attributes = attributes

        def stop(signum, frame):
            # shutdown() waits for serve_forever to return: not from the
            # thread running it.
            threading.Thread(target=httpd.shutdown, daemon=True).start()

        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, stop)
            signal.signal(signal.SIGINT, stop)
        if ready:
            ready(httpd)
        httpd.serve_forever(poll_interval=0.2)
    finally:
        httpd.server_close()
    return 0


# Command line
# --------------------------------------------------------------------------

def _existing_metadata(workdir):
    """What workdir/idp-metadata.xml says: {"entity_id", "sso_url",
    "slo_url", "want_authn_requests_signed"} (None for what is absent or
    when there is no readable file)."""
    out = dict.fromkeys(("entity_id", "sso_url", "slo_url",
                         "want_authn_requests_signed"))
    path = os.path.join(workdir, "idp-metadata.xml")
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return out
    out["entity_id"] = root.get("entityID")
    sso = root.find(".//{%s}SingleSignOnService" % MD_NS)
    slo = root.find(".//{%s}SingleLogoutService" % MD_NS)
    desc = root.find("{%s}IDPSSODescriptor" % MD_NS)
    out["sso_url"] = sso.get("Location") if sso is not None else None
    out["slo_url"] = slo.get("Location") if slo is not None else None
    if desc is not None and desc.get("WantAuthnRequestsSigned") is not None:
        out["want_authn_requests_signed"] = \
            desc.get("WantAuthnRequestsSigned") in ("true", "1")
    return out


def _idp_from_args(args):
    """TestIdP for the CLI: without --entity-id/--sso-url/--slo-url/
    --[no-]want-authn-requests-signed, keep what the workdir's metadata
    already says (a running `serve` may have written it).  A new --sso-url
    without --slo-url moves the SLO URL next to it."""
    old = _existing_metadata(args.workdir)
    kw = {}
    eid = args.entity_id or old["entity_id"]
    sso = args.sso_url or old["sso_url"]
    slo = args.slo_url or (None if args.sso_url else old["slo_url"])
    want = args.want_authn_requests_signed
    if want is None:
        want = bool(old["want_authn_requests_signed"])
    if eid:
        kw["entity_id"] = eid
    if sso:
        kw["sso_url"] = sso
    if slo:
        kw["slo_url"] = slo
    kw["want_authn_requests_signed"] = want
    return TestIdP(args.workdir, **kw)


def _offset(text):
    """An offset in seconds, or "none" for None (omit)."""
    if text.lower() in ("none", "omit", "-"):
        return None
    return float(text) if any(c in text for c in ".eE") else int(text)


def _attributes(pairs):
    if not pairs:
        return None
    out = {}
    for p in pairs:
        name, sep, value = p.partition("=")
        if not sep or not name:
            raise argparse.ArgumentTypeError("--attribute wants NAME=VALUE")
        out.setdefault(name, []).append(value)
    return out


def _parser():
    ap = argparse.ArgumentParser(
        prog="rsp_testidp.py",
        description="Test SAML 2.0 IdP for mod_replay_sp (signs with python3-lasso).")
    sub = ap.add_subparsers(dest="cmd", required=True)

    def common(p, sp=True):
        p.add_argument("--workdir", required=True,
                       help="IdP key, certificate and metadata live here")
        p.add_argument("--entity-id", help="IdP entityID (default: the workdir's "
                       "metadata, else https://idp.test.example/idp)")
        p.add_argument("--sso-url", help="SingleSignOnService Location in the metadata")
        p.add_argument("--slo-url", help="SingleLogoutService (HTTP-Redirect) Location "
                       "in the metadata (default: next to the SSO URL, .../slo)")
        p.add_argument("--want-authn-requests-signed",
                       action=argparse.BooleanOptionalAction, default=None,
                       help="WantAuthnRequestsSigned in the metadata; with serve, "
                       "/idp/sso refuses unsigned or badly signed AuthnRequests "
                       "(default: serve off; others keep the workdir's metadata)")
        if sp:
            p.add_argument("--sp-entity-id", required=True)
            p.add_argument("--acs-url", required=True)
        p.add_argument("--attribute", action="append", metavar="NAME=VALUE",
                       help="attribute value (repeatable; same NAME = more values)")

    m = sub.add_parser("mint", help="print one minted Response (base64)")
    common(m)
    m.add_argument("--assertion-id")
    m.add_argument("--response-id")
    m.add_argument("--name-id", default="alice")
    m.add_argument("--name-id-format", default=NAMEID_UNSPECIFIED)
    m.add_argument("--now", type=float, help="epoch seconds (default: now)")
    m.add_argument("--issue-instant-offset", type=_offset, default=0)
    m.add_argument("--not-before-offset", type=_offset, default=-30)
    m.add_argument("--not-on-or-after-offset", type=_offset, default=300)
    m.add_argument("--scd-not-on-or-after-offset", type=_offset, default=300)
    m.add_argument("--scd-not-before-offset", type=_offset, default=None)
    m.add_argument("--session-not-on-or-after-offset", type=_offset, default=None)
    m.add_argument("--session-index")
    m.add_argument("--audience", help='"" omits the AudienceRestriction')
    m.add_argument("--recipient")
    m.add_argument("--destination")
    m.add_argument("--in-response-to")
    m.add_argument("--issuer")
    m.add_argument("--confirmation-method", default=BEARER)
    m.add_argument("--assertions", type=int, choices=(0, 1, 2), default=1)
    m.add_argument("--unsigned", action="store_true",
                   help="sign neither the response nor the assertion")
    m.add_argument("--unsigned-response", action="store_true")
    m.add_argument("--unsigned-assertion", action="store_true")
    m.add_argument("--tamper", action="store_true",
                   help="alter the NameID after signing")
    m.add_argument("--tamper-response-signature", action="store_true",
                   help="alter the Response's IssueInstant after signing (the "
                   "Response signature breaks, the assertions stay intact)")
    m.add_argument("--signature-method", choices=tuple(SIGNATURE_METHODS),
                   default="rsa-sha256",
                   help="rsa-sha256 (default) or rsa-sha1 (SHA-1 digests too)")
    m.add_argument("--encrypt-cert", metavar="PATH",
                   help="encrypt every assertion for this SP certificate (PEM)")
    m.add_argument("--encrypt-data", choices=tuple(DATA_ALGORITHMS),
                   help="content encryption (default aes128-gcm)")
    m.add_argument("--encrypt-key", choices=tuple(KEY_ALGORITHMS),
                   help="key transport (default rsa-oaep-mgf1p)")
    m.add_argument("--encrypt-engine", choices=tuple(ENCRYPTION_ENGINES),
                   help="xmlsec1 (default) or lasso")
    m.add_argument("--encrypt-key-placement", choices=KEY_PLACEMENTS,
                   help="keyinfo (default) or sibling")
    m.add_argument("--xml", action="store_true", help="print the XML, not base64")

    s = sub.add_parser("serve", help="HTTP IdP on 127.0.0.1")
    common(s)
    s.add_argument("--port", type=int, default=0, help="0 = choose (printed as PORT <n>)")
    s.add_argument("--quiet", action="store_true", help="no access log on stderr")
    spmd = s.add_mutually_exclusive_group()
    spmd.add_argument("--sp-metadata-url",
                      help="SP metadata URL (e.g. http://127.0.0.1:8080/saml/metadata), "
                      "fetched when Single Logout or a signed AuthnRequest needs it")
    spmd.add_argument("--sp-metadata-path", help="SP metadata file (read when needed)")

    md = sub.add_parser("metadata", help="write the IdP metadata, print its path")
    common(md, sp=False)

    spm = sub.add_parser("sp-metadata", help="print minimal SP metadata")
    spm.add_argument("--sp-entity-id", required=True)
    spm.add_argument("--acs-url", required=True)
    spm.add_argument("--cert", help="SP signing certificate (PEM)")
    spm.add_argument("--slo-url", help="HTTP-Redirect SingleLogoutService Location")

    kp = sub.add_parser("keypair", help="make <dir>/<name>.key and .crt")
    kp.add_argument("--dir", required=True)
    kp.add_argument("--name", required=True)
    kp.add_argument("--cn", required=True)
    return ap


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.cmd == "sp-metadata":
        sys.stdout.write(sp_metadata(args.sp_entity_id, args.acs_url, args.cert,
                                     slo_url=args.slo_url))
        return 0
    if args.cmd == "keypair":
        print("%s\n%s" % make_keypair(args.dir, args.name, args.cn))
        return 0
    if args.cmd == "metadata":
        print(_idp_from_args(args).metadata_path)
        return 0
    attrs = _attributes(args.attribute)
    if args.cmd == "mint":
        enc_opts = {k: v for k, v in (("data", args.encrypt_data),
                                      ("key", args.encrypt_key),
                                      ("engine", args.encrypt_engine),
                                      ("key_placement", args.encrypt_key_placement))
                    if v is not None}
        if enc_opts and not args.encrypt_cert:
            _parser().error("--encrypt-data/-key/-engine/-key-placement need "
                            "--encrypt-cert")
        encrypt = Encryption(args.encrypt_cert, **enc_opts) if args.encrypt_cert \
            else None
        idp = _idp_from_args(args)
        b64 = idp.mint(
            args.sp_entity_id, args.acs_url, assertion_id=args.assertion_id,
            response_id=args.response_id, name_id=args.name_id,
            name_id_format=args.name_id_format, now=args.now,
            issue_instant_offset=args.issue_instant_offset,
            not_before_offset=args.not_before_offset,
            not_on_or_after_offset=args.not_on_or_after_offset,
            scd_not_on_or_after_offset=args.scd_not_on_or_after_offset,
            scd_not_before_offset=args.scd_not_before_offset,
            audience=args.audience, recipient=args.recipient,
            destination=args.destination,
            session_not_on_or_after_offset=args.session_not_on_or_after_offset,
            session_index=args.session_index,
            in_response_to=args.in_response_to,
            sign_response=not (args.unsigned or args.unsigned_response),
            sign_assertion=not (args.unsigned or args.unsigned_assertion),
            issuer=args.issuer, confirmation_method=args.confirmation_method,
            attributes=attrs, assertions=args.assertions, encrypt=encrypt,
            signature_method=args.signature_method)
        if args.tamper:
            b64 = TestIdP.tamper(b64)
        if args.tamper_response_signature:
            b64 = TestIdP.tamper_response_signature(b64)
        if args.xml:
            sys.stdout.write(base64.b64decode(b64).decode("utf-8") + "\n")
        else:
            print(b64)
        return 0
    if args.cmd == "serve":
        if args.entity_id is None:
            args.entity_id = _existing_metadata(args.workdir)["entity_id"]

        def ready(httpd):
            print("PORT %d" % httpd.server_address[1], flush=True)

        return serve(args.workdir, args.sp_entity_id, args.acs_url,
                     port=args.port, entity_id=args.entity_id,
                     sso_url=args.sso_url, attributes=attrs,
                     quiet=args.quiet, ready=ready, slo_url=args.slo_url,
                     want_authn_requests_signed=bool(args.want_authn_requests_signed),
                     sp_metadata_url=args.sp_metadata_url,
                     sp_metadata_path=args.sp_metadata_path)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (ValueError, RuntimeError, OSError, subprocess.SubprocessError,
            lasso.Error) as exc:
        sys.stderr.write("rsp_testidp: error: %s\n" % exc)
        sys.exit(1)
