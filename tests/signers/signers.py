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
    trusts (``metadata_path``) is samlify's getMetadata()."""

    def __init__(self, workdir, entity_id="https://samlify-idp.test.example/idp",
                 sso_url="http://127.0.0.1:9/samlify-idp/sso"):
        missing = samlify_missing()
        if missing:
            raise SignerError(missing)
        self.workdir = os.path.abspath(workdir)
        os.makedirs(self.workdir, exist_ok=True)
        self.entity_id = entity_id
        self.sso_url = sso_url
        self.key_path, self.cert_path, _ = make_keypair(self.workdir, "rsp samlify idp")
        self.child = LineChild([node_binary(), os.path.join(NODE_DIR, "samlify_idp.js")],
                               os.path.join(self.workdir, "node.log"), cwd=NODE_DIR,
                               what="samlify IdP (node)")
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
             attributes=None, encrypt_then_sign=True):
        """A base64 Response for the SP whose metadata is ``sp_metadata``
        (text, as the SP serves it: samlify takes its ACS, entity ID and
        encryption certificate from it). ``sign``: response, assertion or
        both; ``data``: None (plaintext) or one of SAMLIFY_DATA; ``key``:
        the key transport (SAMLIFY_KEYS). ``encrypt_then_sign=False`` is
        samlify's own default: the Response signed before the assertion is
        encrypted (a signature that no longer verifies)."""
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
            "encrypt_then_sign": bool(encrypt_then_sign)})
        return out["b64"]

    def close(self):
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

_PREFIXED = (
    '<saml2p:Response xmlns:saml2p="%(samlp)s" Destination="%(dest)s" ID="%(rid)s"'
    '%(irt)s IssueInstant="%(ii)s" Version="2.0">'
    '<saml2:Issuer xmlns:saml2="%(saml)s" Format="%(entity)s">%(issuer)s</saml2:Issuer>'
    '<saml2p:Status><saml2p:StatusCode Value="%(success)s"/></saml2p:Status>'
    '<saml2:Assertion xmlns:saml2="%(saml)s" xmlns:xs="http://www.w3.org/2001/XMLSchema"'
    ' ID="%(aid)s" IssueInstant="%(ii)s" Version="2.0">'
    '<saml2:Issuer Format="%(entity)s">%(issuer)s</saml2:Issuer>'
    '<saml2:Subject><saml2:NameID Format="%(nif)s">%(name_id)s</saml2:NameID>'
    '<saml2:SubjectConfirmation Method="%(bearer)s"><saml2:SubjectConfirmationData'
    '%(irt)s NotOnOrAfter="%(scd_nooa)s" Recipient="%(acs)s"/></saml2:SubjectConfirmation>'
    '</saml2:Subject>'
    '<saml2:Conditions NotBefore="%(nb)s" NotOnOrAfter="%(nooa)s"><saml2:AudienceRestriction>'
    '<saml2:Audience>%(audience)s</saml2:Audience></saml2:AudienceRestriction></saml2:Conditions>'
    '<saml2:AuthnStatement AuthnInstant="%(ii)s" SessionIndex="%(si)s"><saml2:AuthnContext>'
    '<saml2:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport'
    '</saml2:AuthnContextClassRef></saml2:AuthnContext></saml2:AuthnStatement>'
    '%(attrs)s</saml2:Assertion></saml2p:Response>')
_PREFIXED_ATTR = ('<saml2:Attribute Name="%s"><saml2:AttributeValue'
                  ' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="xs:string">'
                  '%s</saml2:AttributeValue></saml2:Attribute>')

_ENTRA = (
    '<samlp:Response ID="%(rid)s" Version="2.0" IssueInstant="%(ii)s" Destination="%(dest)s"'
    '%(irt)s xmlns:samlp="%(samlp)s">'
    '<Issuer xmlns="%(saml)s">%(issuer)s</Issuer>'
    '<samlp:Status><samlp:StatusCode Value="%(success)s"/></samlp:Status>'
    '<Assertion ID="%(aid)s" IssueInstant="%(ii)s" Version="2.0" xmlns="%(saml)s">'
    '<Issuer>%(issuer)s</Issuer>'
    '<Subject><NameID Format="%(nif)s">%(name_id)s</NameID>'
    '<SubjectConfirmation Method="%(bearer)s"><SubjectConfirmationData%(irt)s'
    ' NotOnOrAfter="%(scd_nooa)s" Recipient="%(acs)s"/></SubjectConfirmation></Subject>'
    '<Conditions NotBefore="%(nb)s" NotOnOrAfter="%(nooa)s"><AudienceRestriction>'
    '<Audience>%(audience)s</Audience></AudienceRestriction></Conditions>'
    '%(attrs)s'
    '<AuthnStatement AuthnInstant="%(ii)s" SessionIndex="%(si)s"><AuthnContext>'
    '<AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:Password'
    '</AuthnContextClassRef></AuthnContext></AuthnStatement>'
    '</Assertion></samlp:Response>')
_ENTRA_ATTR = '<Attribute Name="%s"><AttributeValue>%s</AttributeValue></Attribute>'


class JdkIdP:
    """A test IdP whose signatures are the JDK's (JdkSigner in one JVM).
    The XML is built here from the shapes of real IdPs (JDK_SHAPES); the
    signer signs what it is handed, so a Response can also be re-wrapped:
    an assertion already signed put in a new Response (``rewrap``)."""

    def __init__(self, workdir, entity_id="https://jdk-idp.test.example/idp",
                 sso_url="http://127.0.0.1:9/jdk-idp/sso"):
        missing = jdk_missing()
        if missing:
            raise SignerError(missing)
        self.workdir = os.path.abspath(workdir)
        os.makedirs(self.workdir, exist_ok=True)
        self.entity_id = entity_id
        self.sso_url = sso_url
        self.key_path, self.cert_path, der = make_keypair(self.workdir, "rsp jdk idp")
        java, javac = java_binaries()
        classes = os.path.join(self.workdir, "classes")
        t0 = time.monotonic()
        if not os.path.isfile(os.path.join(classes, "JdkSigner.class")):
            os.makedirs(classes, exist_ok=True)
            _run([javac, "-d", classes, JAVA_SRC], "javac", timeout=180)
        self.compile_s = time.monotonic() - t0
        self.child = LineChild([java, "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp", classes,
                                "JdkSigner", der, self.cert_path],
                               os.path.join(self.workdir, "jvm.log"), what="JDK signer (java)")
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
        """xml (str) signed as ``flags`` say (see JdkSigner); str."""
        b64 = base64.b64encode(xml.encode()).decode()
        out = self.child.ask("%s %s" % (flags or "-", b64), timeout=timeout)
        if not out.startswith("OK "):
            raise SignerError("JdkSigner: %s" % out)
        return base64.b64decode(out[3:]).decode("utf-8")

    def unsigned_xml(self, sp_entity_id, acs_url, *, shape="both", assertion_id=None,
                     response_id=None, name_id="alice", now=None, not_before_offset=None,
                     not_on_or_after_offset=None, scd_not_on_or_after_offset=None,
                     session_index=None, in_response_to=None, attributes=None):
        entra = JDK_SHAPES[shape]["markup"] == "entra"
        now = time.time() if now is None else now
        # Entra: a 65-minute window from a NotBefore 5 minutes back;
        # otherwise 5 minutes, as most IdPs.
        nb = -300 if entra else -30
        nb = nb if not_before_offset is None else not_before_offset
        end = nb + 3900 if entra else 300
        nooa = end if not_on_or_after_offset is None else not_on_or_after_offset
        scd = nooa if scd_not_on_or_after_offset is None else scd_not_on_or_after_offset
        digits = 7 if entra else 9
        attr = _ENTRA_ATTR if entra else _PREFIXED_ATTR
        attrs = "".join(attr % (esc(k), esc(v)) for k, v in (attributes or {}).items())
        if attrs:
            attrs = ("<AttributeStatement>%s</AttributeStatement>" if entra else
                     "<saml2:AttributeStatement>%s</saml2:AttributeStatement>") % attrs
        ids = guid_id if entra else random_id
        v = {"samlp": SAMLP_NS, "saml": SAML_NS, "entity": ENTITY, "success": SUCCESS,
             "bearer": BEARER, "nif": EMAIL if entra else UNSPECIFIED,
             "dest": esc(acs_url), "acs": esc(acs_url), "audience": esc(sp_entity_id),
             "issuer": esc(self.entity_id), "name_id": esc(name_id),
             "rid": response_id or ids(), "aid": assertion_id or ids(),
             "si": session_index or ids(),
             "irt": ' InResponseTo="%s"' % esc(in_response_to) if in_response_to else "",
             "ii": xml_time(now, digits), "nb": xml_time(now + nb, digits),
             "nooa": xml_time(now + nooa, digits), "scd_nooa": xml_time(now + scd, digits),
             "attrs": attrs}
        return (_ENTRA if entra else _PREFIXED) % v

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
        self.child.close()


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
