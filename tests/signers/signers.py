"""Two more independent signers for the tests, as test IdPs:

* ``SamlifyIdP``: samlify (npm; signatures by xml-crypto, encryption by
  @authenio/xml-encryption), run as one long-lived node process
  (``node/samlify_idp.js``, dependencies installed with ``npm ci`` from
  ``node/package-lock.json``);
* ``JdkIdP``: the JDK's own XML-DSig (``javax.xml.crypto.dsig``), one
  long-lived JVM (``java/JdkSigner.java``, compiled with ``javac`` into the
  IdP's work directory).

Neither uses Lasso, xmlsec1 or libxml2 to sign. Each has its own key pair
(openssl) and metadata, and mints base64 SAML Responses for an SP; each
keeps its child process for many responses (a JVM or node start costs
0.5-2 s) and stops it by PID (``close()``). Every wait on a child is
bounded. Both import nothing of the rest of the tests.

Helpers: ``shape_of(b64)`` says what a response is (which elements are
signed, with which prefix and KeyInfo, encrypted with what), and the
one-byte tampering functions ``tamper_text``, ``tamper_attribute`` and
``tamper_cipher_value``.
"""

import base64
import json
import os
import re
import secrets
import select
import shutil
import signal
import subprocess
import threading
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
NODE_DIR = os.path.join(HERE, "node")
JAVA_SRC = os.path.join(HERE, "java", "JdkSigner.java")

SAMLP_NS = "urn:oasis:names:tc:SAML:2.0:protocol"
SAML_NS = "urn:oasis:names:tc:SAML:2.0:assertion"
MD_NS = "urn:oasis:names:tc:SAML:2.0:metadata"
DS_NS = "http://www.w3.org/2000/09/xmldsig#"
XENC_NS = "http://www.w3.org/2001/04/xmlenc#"
BEARER = "urn:oasis:names:tc:SAML:2.0:cm:bearer"
REDIRECT = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"
UNSPECIFIED = "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified"
EMAIL = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"
ENTITY = "urn:oasis:names:tc:SAML:2.0:nameid-format:entity"
SUCCESS = "urn:oasis:names:tc:SAML:2.0:status:Success"

START_TIMEOUT = 60      # a child's first answer (a JVM start under load)
ANSWER_TIMEOUT = 60     # any later answer
OPENSSL_TIMEOUT = 60


class SignerError(RuntimeError):
    """A signer could not be started, or answered with an error."""


def node_binary():
    return os.environ.get("RSP_NODE") or shutil.which("node") or "/usr/bin/node"


def java_binaries():
    java = os.environ.get("RSP_JAVA") or shutil.which("java") or "/usr/bin/java"
    javac = os.environ.get("RSP_JAVAC") or shutil.which("javac") or "/usr/bin/javac"
    return java, javac


def samlify_missing():
    """Why the samlify IdP cannot run here (None when it can)."""
    if not os.path.isfile(node_binary()):
        return "no node binary (scripts/install-deps.sh installs Debian's nodejs)"
    if not os.path.isdir(os.path.join(NODE_DIR, "node_modules", "samlify")):
        return ("samlify is not installed in %s (scripts/install-deps.sh runs "
                "npm ci there)" % NODE_DIR)
    return None


def jdk_missing():
    """Why the JDK signer cannot run here (None when it can)."""
    for b in java_binaries():
        if not os.path.isfile(b):
            return "no %s (scripts/install-deps.sh installs openjdk-17-jdk-headless)" % b
    return None


# --------------------------------------------------------------------------
# keys, times, IDs, metadata
# --------------------------------------------------------------------------

def _run(cmd, what, timeout=OPENSSL_TIMEOUT, cwd=None):
    r = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout, cwd=cwd)
    if r.returncode != 0:
        raise SignerError("%s failed (%d): %s" % (what, r.returncode,
                                                  r.stderr.decode(errors="replace")[-2000:]))
    return r.stdout


def make_keypair(directory, cn):
    """idp.key (PEM), idp.crt (self-signed, SHA-256) and idp.pk8.der (the key
    as PKCS#8 DER, for the JDK) in directory; reused when present."""
    key, crt, der = (os.path.join(directory, n) for n in ("idp.key", "idp.crt", "idp.pk8.der"))
    if not (os.path.isfile(key) and os.path.isfile(crt) and os.path.isfile(der)):
        _run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256",
              "-days", "3650", "-subj", "/CN=" + cn, "-keyout", key, "-out", crt], "openssl req")
        _run(["openssl", "pkcs8", "-topk8", "-nocrypt", "-in", key, "-outform", "DER",
              "-out", der], "openssl pkcs8")
    return key, crt, der


def xml_time(epoch, digits=0):
    """xs:dateTime in UTC with "Z" and ``digits`` fractional digits."""
    whole = int(epoch // 1)
    s = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
    if digits:
        s += ".%0*d" % (digits, int((epoch - whole) * 10 ** digits))
    return s + "Z"


def random_id():
    return "_" + secrets.token_hex(16)


def guid_id():
    """An ID as Microsoft Entra ID writes them: "_" + a GUID."""
    h = secrets.token_hex(16)
    return "_%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


def esc(s):
    return (str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def pem_body(cert_path):
    with open(cert_path) as f:
        text = f.read()
    m = re.search(r"-----BEGIN CERTIFICATE-----(.*?)-----END CERTIFICATE-----", text, re.S)
    if not m:
        raise SignerError("no PEM certificate in %s" % cert_path)
    return "".join(m.group(1).split())


def idp_metadata(entity_id, sso_url, cert_path):
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<md:EntityDescriptor xmlns:md="%s" entityID="%s">\n'
        '  <md:IDPSSODescriptor WantAuthnRequestsSigned="false" protocolSupportEnumeration="%s">\n'
        '    <md:KeyDescriptor use="signing"><ds:KeyInfo xmlns:ds="%s"><ds:X509Data>'
        '<ds:X509Certificate>%s</ds:X509Certificate></ds:X509Data></ds:KeyInfo>'
        '</md:KeyDescriptor>\n'
        '    <md:NameIDFormat>%s</md:NameIDFormat>\n'
        '    <md:SingleSignOnService Binding="%s" Location="%s"/>\n'
        '  </md:IDPSSODescriptor>\n'
        '</md:EntityDescriptor>\n'
        % (MD_NS, esc(entity_id), SAMLP_NS, DS_NS, pem_body(cert_path), UNSPECIFIED,
           REDIRECT, esc(sso_url)))


# --------------------------------------------------------------------------
# a long-lived child answering one line per line
# --------------------------------------------------------------------------

class LineChild:
    """A child process that answers each request line with one line on
    stdout; stderr goes to ``log_path``. Requests are serialised (a lock);
    every wait is bounded; ``close()`` ends stdin, then SIGTERM and SIGKILL
    by PID, bounded."""

    def __init__(self, argv, log_path, cwd=None, what="signer"):
        self.what = what
        self.log_path = log_path
        self._log = open(log_path, "ab")
        self._lock = threading.Lock()
        self._buf = b""
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._log, cwd=cwd, start_new_session=True)
        self.started = time.monotonic()

    def _log_tail(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read()[-2000:].decode(errors="replace")
        except OSError:
            return ""

    def ask(self, line, timeout=ANSWER_TIMEOUT):
        if "\n" in line:
            raise ValueError("one line per request")
        with self._lock:
            if self.proc.poll() is not None:
                raise SignerError("the %s exited (%s): %s" % (self.what, self.proc.returncode,
                                                             self._log_tail()))
            try:
                self.proc.stdin.write(line.encode() + b"\n")
                self.proc.stdin.flush()
            except OSError as e:
                raise SignerError("the %s does not read its input: %s %s"
                                  % (self.what, e, self._log_tail()))
            deadline = time.monotonic() + timeout
            fd = self.proc.stdout.fileno()
            while b"\n" not in self._buf:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise SignerError("the %s gave no answer within %d s: %s"
                                      % (self.what, timeout, self._log_tail()))
                ready, _, _ = select.select([fd], [], [], min(left, 1.0))
                if ready:
                    chunk = os.read(fd, 1 << 20)
                    if not chunk:
                        raise SignerError("the %s closed its output (%s): %s" % (
                            self.what, self.proc.poll(), self._log_tail()))
                    self._buf += chunk
            out, self._buf = self._buf.split(b"\n", 1)
            return out.decode()

    def close(self, timeout=10):
        p = self.proc
        if p.poll() is None:
            try:
                p.stdin.close()
            except OSError:
                pass
            try:
                p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait(timeout=30)
        for f in (p.stdout, p.stdin):
            try:
                f.close()
            except (OSError, ValueError):
                pass
        self._log.close()


# --------------------------------------------------------------------------
# samlify
# --------------------------------------------------------------------------

SAMLIFY_DATA = ("aes128-gcm", "aes256-gcm", "aes128-cbc", "aes256-cbc")
SAMLIFY_KEYS = ("rsa-oaep-mgf1p", "rsa-1_5")
SIGNINGS = ("response", "assertion", "both")


class SamlifyIdP:
    """A test IdP whose responses are samlify's: its IdentityProvider, its
    ServiceProvider read from the SP's metadata as the SP serves it, its
    template and createLoginResponse (encryptThenSign). The metadata the SP
    trusts (``metadata_path``) is samlify's getMetadata(). ``share``:
    another SamlifyIdP whose node process serves this one too (each
    request names the IdP's entity ID and key pair); only the IdP that
    started it stops it."""

    def __init__(self, workdir, entity_id="https://samlify-idp.test.example/idp",
                 sso_url="http://127.0.0.1:9/samlify-idp/sso", share=None):
        missing = samlify_missing()
        if missing:
            raise SignerError(missing)
        self.workdir = os.path.abspath(workdir)
        os.makedirs(self.workdir, exist_ok=True)
        self.entity_id = entity_id
        self.sso_url = sso_url
        self.key_path, self.cert_path, _ = make_keypair(self.workdir, "rsp samlify idp")
        if share is not None:
            self.child, self.owner = share.child, False
        else:
            self.child, self.owner = LineChild(
                [node_binary(), os.path.join(NODE_DIR, "samlify_idp.js")],
                os.path.join(self.workdir, "node.log"), cwd=NODE_DIR,
                what="samlify IdP (node)"), True
        try:
            md = self._ask({"op": "metadata"}, timeout=START_TIMEOUT)["metadata"]
        except BaseException:
            self.close()
            raise
        self.startup_s = time.monotonic() - self.child.started
        self.metadata = md
        self.metadata_path = os.path.join(self.workdir, "idp-metadata.xml")
        with open(self.metadata_path, "w") as f:
            f.write(md)

    def _ask(self, req, timeout=ANSWER_TIMEOUT):
        req = dict(req, entity_id=self.entity_id, key_file=self.key_path,
                   cert_file=self.cert_path, sso_url=self.sso_url)
        out = json.loads(self.child.ask(json.dumps(req), timeout=timeout))
        if not out.get("ok"):
            raise SignerError("samlify: %s" % out.get("error"))
        return out

    def mint(self, sp_metadata, *, sign="both", data=None, key="rsa-oaep-mgf1p",
             assertion_id=None, response_id=None, name_id="alice", now=None,
             not_before_offset=-30, not_on_or_after_offset=300,
             scd_not_on_or_after_offset=300, session_index=None, in_response_to=None,
             attributes=None, encrypt_then_sign=True, prefixes=None, issuer_format=False,
             name_id_format=UNSPECIFIED, session_not_on_or_after_offset=None):
        """A base64 Response for the SP whose metadata is ``sp_metadata``
        (text, as the SP serves it: samlify takes its ACS, entity ID and
        encryption certificate from it). ``sign``: response, assertion or
        both; ``data``: None (plaintext) or one of SAMLIFY_DATA; ``key``:
        the key transport (SAMLIFY_KEYS). ``encrypt_then_sign=False`` is
        samlify's own default: the Response signed before the assertion is
        encrypted (a signature that no longer verifies). Markup switches,
        applied to samlify's template before it signs: ``prefixes``
        "saml2" (saml2p:/saml2: instead of samlp:/saml:), ``issuer_format``
        (Format="...:entity" on both Issuers), ``name_id_format``,
        ``session_not_on_or_after_offset`` (SessionNotOnOrAfter on the
        AuthnStatement)."""
        if prefixes not in (None, "saml2"):
            raise ValueError("prefixes: %r" % prefixes)
        if sign not in SIGNINGS:
            raise ValueError("sign: %r" % sign)
        if data is not None and data not in SAMLIFY_DATA:
            raise ValueError("data: %r" % data)
        if key not in SAMLIFY_KEYS:
            raise ValueError("key: %r" % key)
        now = time.time() if now is None else now
        out = self._ask({
            "op": "mint", "sp_metadata": sp_metadata, "sign": sign, "data": data, "key": key,
            "response_id": response_id or random_id(),
            "assertion_id": assertion_id or random_id(),
            "name_id": name_id, "issue_instant": xml_time(now, 3),
            "not_before": xml_time(now + not_before_offset, 3),
            "not_on_or_after": xml_time(now + not_on_or_after_offset, 3),
            "scd_not_on_or_after": xml_time(now + scd_not_on_or_after_offset, 3),
            "session_index": session_index or random_id(),
            "in_response_to": in_response_to, "attributes": attributes or {},
            "encrypt_then_sign": bool(encrypt_then_sign), "prefixes": prefixes,
            "issuer_format": bool(issuer_format), "name_id_format": name_id_format,
            "session_not_on_or_after": None if session_not_on_or_after_offset is None
            else xml_time(now + session_not_on_or_after_offset, 3)})
        return out["b64"]

    def encrypt(self, xml, cert_path, data="aes128-gcm", key="rsa-oaep-mgf1p"):
        """An xenc:EncryptedData (str) of ``xml`` (an element, e.g. a
        signed Assertion, str) for the certificate at ``cert_path``, made
        by samlify's encryption library (@authenio/xml-encryption): the
        EncryptedKey inline in its KeyInfo with the certificate, key
        transport with a SHA-1 DigestMethod. Reshape it with
        ``reshape_encrypted_data``."""
        if data not in SAMLIFY_DATA:
            raise ValueError("data: %r" % data)
        if key not in SAMLIFY_KEYS:
            raise ValueError("key: %r" % key)
        return self._ask({"op": "encrypt", "xml": xml,
                          "recipient_cert_file": os.path.abspath(cert_path),
                          "data": data, "key": key})["encrypted"]

    def close(self):
        if self.owner:
            self.child.close()


# --------------------------------------------------------------------------
# the JDK's XML-DSig
# --------------------------------------------------------------------------

# Shapes: which elements are signed, the markup, the signature's prefix and
# KeyInfo. "entra": Microsoft Entra ID's (assertion only; the Assertion and
# its children in the SAML namespace by default, no prefixes; an unprefixed
# Signature; IDs "_" + GUID; 7 fractional digits; a 65-minute window from
# a NotBefore 5 minutes back). "no-keyinfo": the Response signed without
# KeyInfo (PingFederate unless told to include the certificate).
JDK_SHAPES = {
    "response": dict(flags="RKP", markup="prefixed"),
    "assertion": dict(flags="AKP", markup="prefixed"),
    "both": dict(flags="ARKP", markup="prefixed"),
    "entra": dict(flags="AK", markup="entra"),
    "no-keyinfo": dict(flags="RP", markup="prefixed"),
}

# The markups of response_xml: (the protocol prefix, the assertion prefix;
# "" = the SAML assertion namespace by default, no prefix).
MARKUPS = {
    "saml2": ("saml2p", "saml2"),        # Okta, Shibboleth IdP, Google
    "saml": ("samlp", "saml"),           # Keycloak, PingFederate, samlify
    "default-ns": ("samlp", ""),         # Microsoft Entra ID, AD FS
}
AC_PPT = "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport"
AC_PASSWORD = "urn:oasis:names:tc:SAML:2.0:ac:classes:Password"
XS_NS = "http://www.w3.org/2001/XMLSchema"
XSI_NS = "http://www.w3.org/2001/XMLSchema-instance"


def okta_id():
    """An ID as Okta writes them: "id" + digits, no underscore."""
    return "id" + "".join(str(secrets.randbelow(10)) for _ in range(25))


def keycloak_id():
    """An ID as Keycloak writes them: "ID_" + a UUID."""
    return "ID" + guid_id()


def ssp_id():
    """An ID as SimpleSAMLphp writes them: "_" + 42 hex digits."""
    return "_" + secrets.token_hex(21)


def ping_id():
    """An ID as PingFederate writes them: 27 letters and digits, a letter first."""
    alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    return secrets.choice(alnum[:52]) + "".join(secrets.choice(alnum) for _ in range(26))


ID_STYLES = {"hex": random_id, "guid": guid_id, "okta": okta_id, "keycloak": keycloak_id,
             "ssp": ssp_id, "ping": ping_id}


def response_xml(*, issuer, destination, audience, recipient=None, markup="saml2", now=None,
                 digits=9, ids="hex", response_id=None, assertion_id=None, session_index=None,
                 in_response_to=None, name_id="alice", name_id_format=UNSPECIFIED,
                 issuer_format=True, not_before_offset=-30, not_on_or_after_offset=300,
                 scd_not_on_or_after_offset=None, session_not_on_or_after_offset=None,
                 one_time_use=False, consent=None, xs_on="assertion", attributes=None,
                 typed_values=True, authn_context=AC_PPT, attributes_first=False):
    """An unsigned SAML Response (str) with one plaintext Assertion, in
    the markup of one kind of IdP: ``markup`` (MARKUPS), ``ids`` (an
    ID_STYLES name), ``digits`` (fractional digits of every time),
    ``issuer_format`` (Format="...:entity" on both Issuers),
    ``name_id`` None (no NameID: AD FS without a NameID claim rule),
    offsets in seconds from ``now`` (the SubjectConfirmationData's
    NotOnOrAfter defaults to the Conditions'), ``one_time_use`` (a
    OneTimeUse condition), ``consent`` (the Response's Consent
    attribute), ``xs_on`` ("assertion" or "response": where xmlns:xs is
    declared; on the Response only, the assertion's exclusive c14n
    needs an InclusiveNamespaces PrefixList="xs" to cover it),
    ``typed_values`` (AttributeValues with xsi:type="xs:string"),
    ``attributes_first`` (the AttributeStatement before the
    AuthnStatement, as Entra ID writes it)."""
    pp, ap = MARKUPS[markup]
    now = time.time() if now is None else now
    new_id = ID_STYLES[ids]
    scd = not_on_or_after_offset if scd_not_on_or_after_offset is None else \
        scd_not_on_or_after_offset

    def t(offset):
        return xml_time(now + offset, digits)

    def el(name):
        return "%s:%s" % (ap, name) if ap else name

    def attrs_of(d):
        return "".join(' %s="%s"' % (k, esc(v)) for k, v in d if v is not None)

    ns_saml = ('xmlns:%s="%s"' % (ap, SAML_NS)) if ap else ('xmlns="%s"' % SAML_NS)
    xs_decl = ' xmlns:xs="%s"' % XS_NS
    fmt = ' Format="%s"' % ENTITY if issuer_format else ""
    irt = in_response_to
    out = ['<%s:Response xmlns:%s="%s"%s%s>' % (
        pp, pp, SAMLP_NS, xs_decl if xs_on == "response" else "",
        attrs_of([("Destination", destination), ("ID", response_id or new_id()),
                  ("InResponseTo", irt), ("IssueInstant", t(0)), ("Version", "2.0"),
                  ("Consent", consent)]))]
    out.append('<%s %s%s>%s</%s>' % (el("Issuer"), ns_saml, fmt, esc(issuer), el("Issuer")))
    out.append('<%s:Status><%s:StatusCode Value="%s"/></%s:Status>' % (pp, pp, SUCCESS, pp))
    out.append('<%s %s%s ID="%s" IssueInstant="%s" Version="2.0">' % (
        el("Assertion"), ns_saml,
        xs_decl if (xs_on == "assertion" and typed_values and attributes) else "",
        assertion_id or new_id(), t(0)))
    out.append('<%s%s>%s</%s>' % (el("Issuer"), fmt, esc(issuer), el("Issuer")))
    out.append('<%s>' % el("Subject"))
    if name_id is not None:
        out.append('<%s Format="%s">%s</%s>' % (el("NameID"), name_id_format, esc(name_id),
                                                el("NameID")))
    out.append('<%s Method="%s"><%s%s/></%s></%s>' % (
        el("SubjectConfirmation"), BEARER, el("SubjectConfirmationData"),
        attrs_of([("InResponseTo", irt), ("NotOnOrAfter", t(scd)),
                  ("Recipient", recipient or destination)]),
        el("SubjectConfirmation"), el("Subject")))
    out.append('<%s NotBefore="%s" NotOnOrAfter="%s"><%s><%s>%s</%s></%s>%s</%s>' % (
        el("Conditions"), t(not_before_offset), t(not_on_or_after_offset),
        el("AudienceRestriction"), el("Audience"), esc(audience), el("Audience"),
        el("AudienceRestriction"), "<%s/>" % el("OneTimeUse") if one_time_use else "",
        el("Conditions")))
    authn = '<%s%s><%s><%s>%s</%s></%s></%s>' % (
        el("AuthnStatement"),
        attrs_of([("AuthnInstant", t(0)), ("SessionIndex", session_index or new_id()),
                  ("SessionNotOnOrAfter", None if session_not_on_or_after_offset is None
                   else t(session_not_on_or_after_offset))]),
        el("AuthnContext"), el("AuthnContextClassRef"), authn_context,
        el("AuthnContextClassRef"), el("AuthnContext"), el("AuthnStatement"))
    statement = ""
    if attributes:
        value = ('<%s xmlns:xsi="%s" xsi:type="xs:string">%%s</%s>'
                 % (el("AttributeValue"), XSI_NS, el("AttributeValue")) if typed_values
                 else '<%s>%%s</%s>' % (el("AttributeValue"), el("AttributeValue")))
        statement = '<%s>%s</%s>' % (el("AttributeStatement"), "".join(
            '<%s Name="%s">%s</%s>' % (el("Attribute"), esc(k), value % esc(v),
                                      el("Attribute"))
            for k, v in attributes.items()), el("AttributeStatement"))
    out.extend([statement, authn] if attributes_first else [authn, statement])
    out.append('</%s></%s:Response>' % (el("Assertion"), pp))
    return "".join(out)


# JDK_SHAPES' markups as response_xml's switches.
_JDK_MARKUPS = {
    "prefixed": dict(markup="saml2", ids="hex", digits=9, issuer_format=True,
                     name_id_format=UNSPECIFIED, authn_context=AC_PPT),
    # a 65-minute window from a NotBefore 5 minutes back
    "entra": dict(markup="default-ns", ids="guid", digits=7, issuer_format=False,
                  name_id_format=EMAIL, typed_values=False, attributes_first=True,
                  authn_context=AC_PASSWORD, not_before_offset=-300,
                  not_on_or_after_offset=3600),
}


class JdkIdP:
    """A test IdP whose signatures are the JDK's (JdkSigner in one JVM).
    The XML is built here from the shapes of real IdPs (JDK_SHAPES,
    response_xml); the signer signs what it is handed, so a Response can
    also be re-wrapped: an assertion already signed put in a new Response
    (``rewrap``). ``share``: another JdkIdP whose JVM signs for this one
    too, with this IdP's own key pair (loaded into it); only the IdP that
    started the JVM stops it."""

    def __init__(self, workdir, entity_id="https://jdk-idp.test.example/idp",
                 sso_url="http://127.0.0.1:9/jdk-idp/sso", share=None):
        missing = jdk_missing()
        if missing:
            raise SignerError(missing)
        self.workdir = os.path.abspath(workdir)
        os.makedirs(self.workdir, exist_ok=True)
        self.entity_id = entity_id
        self.sso_url = sso_url
        self.key_path, self.cert_path, der = make_keypair(self.workdir, "rsp jdk idp")
        self.compile_s = 0.0
        if share is not None:
            self.child, self.owner = share.child, False
            out = self.child.ask("+ %s %s" % (der, self.cert_path))
            if not re.match(r"OK [0-9]$", out):
                raise SignerError("JdkSigner: %s" % out)
            self.key_index = int(out[3:])
            self.startup_s = 0.0
        else:
            java, javac = java_binaries()
            classes = os.path.join(self.workdir, "classes")
            t0 = time.monotonic()
            cls = os.path.join(classes, "JdkSigner.class")
            if not os.path.isfile(cls) or os.path.getmtime(cls) < os.path.getmtime(JAVA_SRC):
                os.makedirs(classes, exist_ok=True)
                _run([javac, "-d", classes, JAVA_SRC], "javac", timeout=180)
            self.compile_s = time.monotonic() - t0
            self.child = LineChild([java, "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp",
                                    classes, "JdkSigner", der, self.cert_path],
                                   os.path.join(self.workdir, "jvm.log"),
                                   what="JDK signer (java)")
            self.owner, self.key_index = True, 0
            try:
                # the first answer: the JVM is up and the key loaded
                self.sign("<x/>", "-", timeout=START_TIMEOUT)
            except BaseException:
                self.close()
                raise
            self.startup_s = time.monotonic() - self.child.started
        self.metadata = idp_metadata(entity_id, sso_url, self.cert_path)
        self.metadata_path = os.path.join(self.workdir, "idp-metadata.xml")
        with open(self.metadata_path, "w") as f:
            f.write(self.metadata)

    def sign(self, xml, flags, timeout=ANSWER_TIMEOUT):
        """xml (str) signed as ``flags`` say (see JdkSigner), with this
        IdP's key; str."""
        if re.search(r"[0-9+ ]", flags):
            raise ValueError("flags: %r (the key is this IdP's)" % flags)
        b64 = base64.b64encode(xml.encode()).decode()
        out = self.child.ask("%s%d %s" % (flags.replace("-", ""), self.key_index, b64),
                             timeout=timeout)
        if not out.startswith("OK "):
            raise SignerError("JdkSigner: %s" % out)
        return base64.b64decode(out[3:]).decode("utf-8")

    def unsigned_xml(self, sp_entity_id, acs_url, *, shape="both", assertion_id=None,
                     response_id=None, name_id="alice", now=None, not_before_offset=None,
                     not_on_or_after_offset=None, scd_not_on_or_after_offset=None,
                     session_index=None, in_response_to=None, attributes=None):
        kw = dict(_JDK_MARKUPS[JDK_SHAPES[shape]["markup"]])
        for k, v in (("not_before_offset", not_before_offset),
                     ("not_on_or_after_offset", not_on_or_after_offset),
                     ("scd_not_on_or_after_offset", scd_not_on_or_after_offset)):
            if v is not None:
                kw[k] = v
        return response_xml(issuer=self.entity_id, destination=acs_url, audience=sp_entity_id,
                            now=now, response_id=response_id, assertion_id=assertion_id,
                            session_index=session_index, in_response_to=in_response_to,
                            name_id=name_id, attributes=attributes, **kw)

    def mint_xml(self, sp_entity_id, acs_url, *, shape="both", **kw):
        return self.sign(self.unsigned_xml(sp_entity_id, acs_url, shape=shape, **kw),
                         JDK_SHAPES[shape]["flags"])

    def mint(self, sp_entity_id, acs_url, *, shape="both", **kw):
        """A base64 Response signed as ``shape`` (a JDK_SHAPES key) says."""
        xml = self.mint_xml(sp_entity_id, acs_url, shape=shape, **kw)
        return base64.b64encode(xml.encode()).decode()

    def rewrap(self, b64, shape, response_id=None):
        """The Assertion of a minted Response, byte for byte (signed or not),
        in a new Response (a new ID; the same Issuer, Destination and
        times) whose own signature, if ``shape`` (a JDK_SHAPES key) signs
        the Response, is made again by the JDK: base64."""
        xml = base64.b64decode(b64).decode()
        a = re.search(r"<(?:\w+:)?Assertion\b.*</(?:\w+:)?Assertion>", xml, re.S)
        if a is None:
            raise ValueError("no Assertion")
        head = xml[:a.start()]
        sig = re.search(r"<(?:\w+:)?Signature\b.*?</(?:\w+:)?Signature>", head, re.S)
        if sig is not None:
            head = head[:sig.start()] + head[sig.end():]
        head, n = re.subn(r'(<(?:\w+:)?Response\b[^>]*?\sID=")[^"]*(")',
                          lambda m: m.group(1) + (response_id or random_id()) + m.group(2),
                          head, count=1)
        if n != 1:
            raise ValueError("no Response ID")
        new = re.sub(r"^<\?xml[^>]*\?>", "", head + a.group(0) + xml[a.end():])
        flags = JDK_SHAPES[shape]["flags"].replace("A", "")
        if "R" in flags:
            new = self.sign(new, flags)
        return base64.b64encode(new.encode()).decode()

    def close(self):
        if self.owner:
            self.child.close()


# --------------------------------------------------------------------------
# an EncryptedData reshaped as an IdP places and names its key
# --------------------------------------------------------------------------

KEY_PLACEMENTS = ("inline", "peer")
KEY_NAMINGS = ("cert", "issuer-serial", "none")
_EK_RE = re.compile(r"<(\w+:)?EncryptedKey\b.*?</\1EncryptedKey>", re.S)


OAEP_DIGESTS = {"sha1": DS_NS + "sha1", "sha256": "http://www.w3.org/2001/04/xmlenc#sha256"}
XENC11_NS = "http://www.w3.org/2009/xmlenc11#"
KEY_URIS = {"rsa-oaep-mgf1p": XENC_NS + "rsa-oaep-mgf1p", "rsa-oaep": XENC11_NS + "rsa-oaep"}
DATA_URIS = {"aes128-gcm": XENC11_NS + "aes128-gcm", "aes256-gcm": XENC11_NS + "aes256-gcm",
             "aes128-cbc": XENC_NS + "aes128-cbc", "aes256-cbc": XENC_NS + "aes256-cbc"}


def oaep_encrypt(xml, cert_path, data="aes128-gcm", key="rsa-oaep-mgf1p", digest="sha256",
                 mgf="sha1"):
    """An xenc:EncryptedData of ``xml`` (str) for the certificate at
    ``cert_path``, in the markup samlify's encryption library writes (so
    that reshape_encrypted_data applies), for the key transports it cannot
    make: RSA-OAEP with a SHA-256 ``digest`` (and MGF1 with ``mgf``), as
    ``key`` "rsa-oaep-mgf1p" (the MGF is then MGF1-SHA1 by definition) or
    "rsa-oaep" (XML Encryption 1.1, with an xenc11:MGF element unless
    MGF1-SHA1). Made with python3-cryptography (OpenSSL), not xmlsec."""
    import os as _os
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, padding as sym_padding
    from cryptography.hazmat.primitives.asymmetric import padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    if key == "rsa-oaep-mgf1p" and mgf != "sha1":
        raise ValueError("rsa-oaep-mgf1p is MGF1 with SHA-1")
    hashes_ = {"sha1": hashes.SHA1, "sha256": hashes.SHA256}
    with open(cert_path, "rb") as f:
        cert = x509.load_pem_x509_certificate(f.read())
    size = 32 if "256" in data else 16
    session = _os.urandom(size)
    plain = xml.encode()
    if data.endswith("gcm"):
        iv = _os.urandom(12)
        cipher = iv + AESGCM(session).encrypt(iv, plain, None)
    else:
        iv = _os.urandom(16)
        padder = sym_padding.PKCS7(128).padder()
        enc = Cipher(algorithms.AES(session), modes.CBC(iv)).encryptor()
        cipher = iv + enc.update(padder.update(plain) + padder.finalize()) + enc.finalize()
    wrapped = cert.public_key().encrypt(session, padding.OAEP(
        mgf=padding.MGF1(algorithm=hashes_[mgf]()), algorithm=hashes_[digest](), label=None))
    mgf_el = ('<xenc11:MGF xmlns:xenc11="%s" Algorithm="%smgf1%s"/>' % (XENC11_NS, XENC11_NS, mgf)
              if key == "rsa-oaep" and mgf != "sha1" else "")
    return (
        '<xenc:EncryptedData Type="%sElement" xmlns:xenc="%s">'
        '<xenc:EncryptionMethod Algorithm="%s"/>'
        '<KeyInfo xmlns="%s"><e:EncryptedKey xmlns:e="%s">'
        '<e:EncryptionMethod Algorithm="%s"><DigestMethod Algorithm="%s"/>%s</e:EncryptionMethod>'
        '<KeyInfo><X509Data><X509Certificate>%s</X509Certificate></X509Data></KeyInfo>'
        '<e:CipherData><e:CipherValue>%s</e:CipherValue></e:CipherData>'
        '</e:EncryptedKey></KeyInfo>'
        '<xenc:CipherData><xenc:CipherValue>%s</xenc:CipherValue></xenc:CipherData>'
        '</xenc:EncryptedData>'
        % (XENC_NS, XENC_NS, DATA_URIS[data], DS_NS, XENC_NS, KEY_URIS[key],
           OAEP_DIGESTS[digest], mgf_el, pem_body(cert_path),
           base64.b64encode(wrapped).decode(), base64.b64encode(cipher).decode()))


def cert_issuer_serial(cert_path):
    """(issuer DN as RFC 2253 writes it, serial number as an int) of a PEM
    certificate (openssl)."""
    out = _run(["openssl", "x509", "-noout", "-nameopt", "RFC2253", "-issuer", "-serial",
                "-in", cert_path], "openssl x509").decode()
    issuer = re.search(r"^issuer=\s*(.*)$", out, re.M).group(1).strip()
    serial = int(re.search(r"^serial=\s*([0-9A-Fa-f]+)$", out, re.M).group(1), 16)
    return issuer, serial


def reshape_encrypted_data(ed, *, placement="inline", recipient=None, key_naming="cert",
                           cert_path=None):
    """samlify's EncryptedData (``SamlifyIdP.encrypt``: the EncryptedKey
    inline, in the EncryptedData's KeyInfo, naming its key by the
    certificate) reshaped, outside any signature: ``recipient`` adds the
    EncryptedKey's Recipient attribute (OpenSAML's: the SP's entity ID);
    ``key_naming`` "issuer-serial" names the key by the certificate's
    X509IssuerSerial instead of the certificate (AD FS; ``cert_path``
    needed), "none" leaves its KeyInfo out (Keycloak); ``placement``
    "peer" moves the EncryptedKey out, to follow the EncryptedData (a
    peer in the EncryptedAssertion, as OpenSAML's
    Encrypter does by default), with an Id, a ReferenceList naming the
    EncryptedData, and a RetrievalMethod to it in the EncryptedData's
    KeyInfo. Returns the XML (str) to put in the EncryptedAssertion."""
    if placement not in KEY_PLACEMENTS:
        raise ValueError("placement: %r" % placement)
    if key_naming not in KEY_NAMINGS:
        raise ValueError("key_naming: %r" % key_naming)
    ek = _EK_RE.search(ed)
    if ek is None or len(_EK_RE.findall(ed)) != 1:
        raise ValueError("not one EncryptedKey in the EncryptedData")
    key = ek.group(0)
    pre = ek.group(1) or ""
    if recipient is not None:
        key = key.replace("<%sEncryptedKey" % pre, '<%sEncryptedKey Recipient="%s"'
                          % (pre, esc(recipient)), 1)
    if key_naming == "issuer-serial":
        issuer, serial = cert_issuer_serial(cert_path)
        key, n = re.subn(r"<X509Data>\s*<X509Certificate>[^<]*</X509Certificate>\s*</X509Data>",
                         '<ds:X509Data xmlns:ds="%s"><ds:X509IssuerSerial><ds:X509IssuerName>'
                         '%s</ds:X509IssuerName><ds:X509SerialNumber>%d</ds:X509SerialNumber>'
                         '</ds:X509IssuerSerial></ds:X509Data>' % (DS_NS, esc(issuer), serial),
                         key)
        if n != 1:
            raise ValueError("no X509Certificate in the EncryptedKey's KeyInfo")
    elif key_naming == "none":
        key, n = re.subn(r"<KeyInfo>\s*<X509Data>.*?</X509Data>\s*</KeyInfo>\s*", "", key,
                         flags=re.S)
        if n != 1:
            raise ValueError("no KeyInfo in the EncryptedKey")
    if placement == "inline":
        return ed[:ek.start()] + key + ed[ek.end():]
    ed_id, ek_id = random_id(), random_id()
    # the key leaves the KeyInfo whose default namespace (xmldsig) its
    # unprefixed DigestMethod and KeyInfo children were in: declared on it
    key = key.replace("<%sEncryptedKey" % pre, '<%sEncryptedKey xmlns="%s" Id="%s"'
                      % (pre, DS_NS, ek_id), 1)
    close = "</%sEncryptedKey>" % pre
    key = (key[:-len(close)] + '<%sReferenceList xmlns:%s="%s"><%sDataReference URI="#%s"/>'
           '</%sReferenceList>' % (pre, pre[:-1] or "xenc", XENC_NS, pre, ed_id, pre) + close) \
        if pre else (key[:-len(close)] + '<ReferenceList xmlns="%s"><DataReference URI="#%s"/>'
                     '</ReferenceList>' % (XENC_NS, ed_id) + close)
    retrieval = ('<RetrievalMethod Type="%sEncryptedKey" URI="#%s"/>' % (XENC_NS, ek_id))
    out = ed[:ek.start()] + retrieval + ed[ek.end():]
    out, n = re.subn(r"<((?:\w+:)?)EncryptedData\b", lambda m: '<%sEncryptedData Id="%s"'
                     % (m.group(1), ed_id), out, count=1)
    if n != 1:
        raise ValueError("no EncryptedData")
    return out.strip() + key


def encrypted_assertion(inner, markup="saml2"):
    """An EncryptedAssertion around ``inner`` (reshape_encrypted_data's
    XML), in the markup of response_xml (MARKUPS)."""
    ap = MARKUPS[markup][1]
    if ap:
        return '<%s:EncryptedAssertion xmlns:%s="%s">%s</%s:EncryptedAssertion>' % (
            ap, ap, SAML_NS, inner.strip(), ap)
    return '<EncryptedAssertion xmlns="%s">%s</EncryptedAssertion>' % (SAML_NS, inner.strip())


def replace_assertion(xml, new):
    """The Response ``xml`` with its (one) Assertion element replaced by
    ``new``; also returns the Assertion's text: (xml, assertion)."""
    m = re.search(r"<((?:\w+:)?)Assertion\b.*</\1Assertion>", xml, re.S)
    if m is None:
        raise ValueError("no Assertion")
    return xml[:m.start()] + new + xml[m.end():], m.group(0)


# --------------------------------------------------------------------------
# what a response is, and one-byte changes
# --------------------------------------------------------------------------

def _signature(elem):
    """(has KeyInfo, reference URI) of elem's own Signature, or None."""
    for c in elem:
        if c.tag == "{%s}Signature" % DS_NS:
            ref = c.find("{%s}SignedInfo/{%s}Reference" % (DS_NS, DS_NS))
            return (c.find("{%s}KeyInfo" % DS_NS) is not None,
                    ref.get("URI") if ref is not None else None)
    return None


def shape_of(b64):
    """What a base64 Response is: {"response_signed", "assertion_signed"
    (None when encrypted), "keyinfo" (every signature has KeyInfo),
    "signature_prefixes" (the prefixes the Signature elements are written
    with, "" for none), "encrypted": None or {"data", "key", "digest"}}.
    Raises AssertionError when a signature references another element."""
    xml = base64.b64decode(b64).decode()
    root = ET.fromstring(xml)
    assert root.tag == "{%s}Response" % SAMLP_NS, root.tag
    out = {"response_signed": False, "assertion_signed": None, "keyinfo": True,
           "encrypted": None,
           "signature_prefixes": sorted(set(re.findall(r"<(\w*:?)Signature[\s>]", xml)))}
    rs = _signature(root)
    if rs:
        assert rs[1] == "#" + root.get("ID"), (rs, root.get("ID"))
        out["response_signed"] = True
        out["keyinfo"] &= rs[0]
    a = root.find("{%s}Assertion" % SAML_NS)
    if a is not None:
        s = _signature(a)
        out["assertion_signed"] = bool(s)
        if s:
            assert s[1] == "#" + a.get("ID"), (s, a.get("ID"))
            out["keyinfo"] &= s[0]
    ea = root.find("{%s}EncryptedAssertion" % SAML_NS)
    if ea is not None:
        ed = ea.find("{%s}EncryptedData" % XENC_NS)
        ek = ed.find(".//{%s}EncryptedKey" % XENC_NS) if ed is not None else None
        if ek is None:
            ek = ea.find("{%s}EncryptedKey" % XENC_NS)
        digest = ek.find(".//{%s}DigestMethod" % DS_NS)
        out["encrypted"] = {
            "data": ed.find("{%s}EncryptionMethod" % XENC_NS).get("Algorithm"),
            "key": ek.find("{%s}EncryptionMethod" % XENC_NS).get("Algorithm"),
            "digest": digest.get("Algorithm") if digest is not None else None}
    return out


def _flip(xml, pos):
    c = xml[pos]
    new = "B" if c == "A" else ("1" if c == "0" else ("0" if c.isdigit() else "A"))
    return xml[:pos] + new + xml[pos + 1:]


def _b64(xml):
    return base64.b64encode(xml.encode()).decode()


def tamper_text(b64, local_name):
    """One character of the first <[prefix:]local_name> element's text
    changed (its first character)."""
    xml = base64.b64decode(b64).decode()
    m = re.search(r"<(?:\w+:)?%s\b[^>]*>([^<])" % re.escape(local_name), xml)
    if m is None:
        raise ValueError("no %s text" % local_name)
    return _b64(_flip(xml, m.start(1)))


def tamper_attribute(b64, local_name, attribute):
    """One digit of the first <local_name>'s attribute changed (its last
    digit: for a time, a valid xs:dateTime still)."""
    xml = base64.b64decode(b64).decode()
    m = re.search(r'<(?:\w+:)?%s\b[^>]*?\s%s="([^"]*)"' % (re.escape(local_name),
                                                           re.escape(attribute)), xml)
    if m is None:
        raise ValueError("no %s %s" % (local_name, attribute))
    digits = [i for i, c in enumerate(m.group(1)) if c.isdigit()]
    if not digits:
        raise ValueError("no digit in %s %s" % (local_name, attribute))
    pos = m.start(1) + digits[-1]
    new = xml[:pos] + str((int(xml[pos]) + 1) % 10) + xml[pos + 1:]
    return _b64(new)


def tamper_cipher_value(b64, which="key"):
    """One character of a CipherValue changed, in its middle: ``which`` is
    "key" (the EncryptedKey's, the first one when it is inside the
    EncryptedData's KeyInfo: the session key no longer unwraps) or "data"
    (the EncryptedData's own, the last one)."""
    xml = base64.b64decode(b64).decode()
    values = list(re.finditer(r"<(?:\w+:)?CipherValue>\s*([^<]{40,}?)\s*<", xml))
    if len(values) != 2:
        raise ValueError("%d CipherValues" % len(values))
    v = values[0] if which == "key" else values[-1]
    return _b64(_flip(xml, v.start(1) + len(v.group(1)) // 2))


def one_byte_apart(b64a, b64b):
    """True when the two base64 documents differ in exactly one byte."""
    a, b = base64.b64decode(b64a), base64.b64decode(b64b)
    return len(a) == len(b) and sum(x != y for x, y in zip(a, b)) == 1
