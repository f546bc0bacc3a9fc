#!/usr/bin/python3
"""Test SAML 2.0 identity provider for mod_replay_sp's tests and demo.

It mints SAML 2.0 ``Response`` messages that are really signed (RSA-SHA256,
XML-DSig, exclusive c14n) with Debian's python3-lasso, with every field the
SP checks under the caller's control, so that tests can build both good and
subtly bad responses.

Importable module and command line tool (run with /usr/bin/python3: the
Debian python3-lasso package is not visible to other interpreters)::

    rsp_testidp.py mint  --workdir D --sp-entity-id X --acs-url Y [...]
    rsp_testidp.py serve --workdir D --sp-entity-id X --acs-url Y [--port 0]

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
"""

import argparse
import base64
import fcntl
import html
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
import xml.etree.ElementTree as ET
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

try:
    import lasso
except ImportError as exc:  # pragma: no cover - environment problem
    raise ImportError(
        "rsp_testidp needs Debian's python3-lasso: run it with /usr/bin/python3 "
        "(%s)" % exc) from exc

__all__ = ["make_keypair", "sp_metadata", "idp_metadata", "TestIdP",
           "SAML_NS", "SAMLP_NS", "MD_NS", "DS_NS", "BEARER"]

SAML_NS = "urn:oasis:names:tc:SAML:2.0:assertion"
SAMLP_NS = "urn:oasis:names:tc:SAML:2.0:protocol"
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

OPENSSL_TIMEOUT = 60          # seconds, key generation
HTTP_MAX_QUERY = 8192         # bytes of a request line's query we accept
HTTP_MAX_BODY = 64 * 1024     # bytes of a POST body we accept
HTTP_SOCKET_TIMEOUT = 10      # seconds a client may keep a handler busy

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


def sp_metadata(entity_id, acs_url, cert_path=None):
    """Minimal SAML 2.0 SP metadata: SPSSODescriptor with one HTTP-POST
    AssertionConsumerService at acs_url, and a signing KeyDescriptor if a
    certificate is given."""
    kd = _key_descriptor(cert_path) if cert_path else ""
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


def idp_metadata(entity_id, sso_url, cert_path):
    """SAML 2.0 IdP metadata: IDPSSODescriptor with a signing KeyDescriptor
    and an HTTP-Redirect SingleSignOnService at sso_url."""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<md:EntityDescriptor xmlns:md="%(md)s" entityID="%(eid)s">\n'
        '  <md:IDPSSODescriptor WantAuthnRequestsSigned="false"'
        ' protocolSupportEnumeration="%(samlp)s">\n'
        '%(kd)s'
        '    <md:NameIDFormat>%(nif)s</md:NameIDFormat>\n'
        '    <md:NameIDFormat>%(nif2)s</md:NameIDFormat>\n'
        '    <md:SingleSignOnService Binding="%(redir)s" Location="%(sso)s"/>\n'
        '  </md:IDPSSODescriptor>\n'
        '</md:EntityDescriptor>\n'
        % {"md": MD_NS, "eid": _xml_escape(entity_id), "samlp": SAMLP_NS,
           "kd": _key_descriptor(cert_path), "nif": NAMEID_UNSPECIFIED,
           "nif2": NAMEID_TRANSIENT, "redir": BINDING_REDIRECT,
           "sso": _xml_escape(sso_url)})


def _write_atomic(path, text):
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def _check_shape(xml, sign_response, sign_assertion, assertions):
    """Lasso reports a signing failure only as a GLib warning and drops the
    element it failed to sign: check that we got what was asked for."""
    if not xml:
        raise RuntimeError("Lasso could not export/sign the response")
    root = ET.fromstring(xml)
    sig = "{%s}Signature" % DS_NS
    if root.tag != "{%s}Response" % SAMLP_NS:
        raise RuntimeError("Lasso produced no Response")
    if (root.find(sig) is not None) != bool(sign_response):
        raise RuntimeError("response signature: wanted %s" % bool(sign_response))
    found = root.findall("{%s}Assertion" % SAML_NS)
    if len(found) != assertions:
        raise RuntimeError("wanted %d assertions, Lasso produced %d"
                           % (assertions, len(found)))
    for a in found:
        if (a.find(sig) is not None) != bool(sign_assertion):
            raise RuntimeError("assertion signature: wanted %s"
                               % bool(sign_assertion))


# --------------------------------------------------------------------------
# The IdP
# --------------------------------------------------------------------------

class TestIdP:
    """A SAML 2.0 IdP with its own key pair, living in ``workdir``.

    Files: idp.key, idp.crt (reused when both exist), idp-metadata.xml
    (rewritten on every construction, as entity_id/sso_url may change).
    """

    __test__ = False   # not a pytest test class, despite its name

    def __init__(self, workdir, entity_id="https://idp.test.example/idp",
                 sso_url="http://127.0.0.1/idp/sso"):
        self.workdir = os.path.abspath(workdir)
        os.makedirs(self.workdir, exist_ok=True)
        self.entity_id = entity_id
        self.sso_url = sso_url
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
        self.metadata = idp_metadata(entity_id, sso_url, self.cert_path)
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
                 name_id_format=NAMEID_UNSPECIFIED):
        """The Response XML (signed as asked), as a str.

        Offsets are seconds relative to ``now`` (epoch seconds, default
        time.time()); an offset of None omits that attribute.  Extra
        keywords beyond the documented API: ``response_id`` (Response ID,
        default random) and ``name_id_format``.
        """
        if assertions not in (0, 1, 2):
            raise ValueError("assertions must be 0, 1 or 2")
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

            nodes = []
            for i in range(assertions):
                a = self._assertion(
                    assertion_id if i == 0 else random_id(),
                    issuer=issuer, issue_instant=issue_instant,
                    name_id=name_id, name_id_format=name_id_format,
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

            login = lasso.Login(server)
            login.initIdpInitiatedAuthnRequest(sp_entity_id)
            login.request.protocolBinding = BINDING_POST
            login.request.nameIdPolicy.format = NAMEID_TRANSIENT
            login.request.nameIdPolicy.allowCreate = True
            login.processAuthnRequestMsg(None)
            login.validateRequestMsg(True, True)

            resp = login.response
            resp.assertion = tuple(nodes)
            login.setSignatureHint(lasso.PROFILE_SIGNATURE_HINT_FORCE
                                   if sign_response else
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
        _check_shape(xml, sign_response, sign_assertion, assertions)
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

    @staticmethod
    def _issuer(value):
        n = lasso.Saml2NameID()
        n.content = value
        n.format = "urn:oasis:names:tc:SAML:2.0:nameid-format:entity"
        return n

    def _assertion(self, aid, *, issuer, issue_instant, name_id,
                   name_id_format, confirmation_method, recipient,
                   in_response_to, scd_not_before, scd_not_on_or_after,
                   not_before, not_on_or_after, audience, authn_instant,
                   session_index, session_not_on_or_after, attributes):
        a = lasso.Saml2Assertion()
        a.id = aid
        a.version = "2.0"
        a.issueInstant = issue_instant
        a.issuer = self._issuer(issuer)

        subject = lasso.Saml2Subject()
        nid = lasso.Saml2NameID()
        nid.content = name_id
        if name_id_format:
            nid.format = name_id_format
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

    def _send(self, code, body, ctype="text/plain; charset=utf-8"):
        data = body.encode("utf-8")
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        self.close_connection = True

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


class IdPHTTPServer(ThreadingHTTPServer):
    """ThreadingHTTPServer with bounded concurrency (excess connections are
    closed at once) and daemon handler threads (shutdown never waits on a
    stuck client)."""
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    max_threads = 32

    def __init__(self, addr, idp=None, sp_entity_id=None, acs_url=None,
                 attributes=None, quiet=False):
        super().__init__(addr, _Handler)
        self.idp = idp
        self.sp_entity_id = sp_entity_id
        self.acs_url = acs_url
        self.attributes = attributes
        self.quiet = quiet
        self._slots = threading.BoundedSemaphore(self.max_threads)

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
          sso_url=None, attributes=None, quiet=False, ready=None):
    """Run the HTTP IdP on 127.0.0.1:port until SIGTERM/SIGINT (main thread)
    or until ``ready(httpd)``'s caller calls httpd.shutdown()."""
    httpd = IdPHTTPServer(("127.0.0.1", port), quiet=quiet)
    try:
        real_port = httpd.server_address[1]
        kw = {}
        if entity_id:
            kw["entity_id"] = entity_id
        kw["sso_url"] = sso_url or "http://127.0.0.1:%d/idp/sso" % real_port
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


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------

def _existing_metadata(workdir):
    """(entityID, SSO Location) of workdir/idp-metadata.xml, or (None, None)."""
    path = os.path.join(workdir, "idp-metadata.xml")
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None, None
    sso = root.find(".//{%s}SingleSignOnService" % MD_NS)
    return root.get("entityID"), (sso.get("Location") if sso is not None else None)


def _idp_from_args(args):
    """TestIdP for the CLI: without --entity-id/--sso-url, keep what the
    workdir's metadata already says (a running `serve` may have written it)."""
    old_eid, old_sso = _existing_metadata(args.workdir)
    kw = {}
    eid = args.entity_id or old_eid
    sso = args.sso_url or old_sso
    if eid:
        kw["entity_id"] = eid
    if sso:
        kw["sso_url"] = sso
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
    m.add_argument("--xml", action="store_true", help="print the XML, not base64")

    s = sub.add_parser("serve", help="HTTP IdP on 127.0.0.1")
    common(s)
    s.add_argument("--port", type=int, default=0, help="0 = choose (printed as PORT <n>)")
    s.add_argument("--quiet", action="store_true", help="no access log on stderr")

    md = sub.add_parser("metadata", help="write the IdP metadata, print its path")
    common(md, sp=False)

    spm = sub.add_parser("sp-metadata", help="print minimal SP metadata")
    spm.add_argument("--sp-entity-id", required=True)
    spm.add_argument("--acs-url", required=True)
    spm.add_argument("--cert", help="SP signing certificate (PEM)")

    kp = sub.add_parser("keypair", help="make <dir>/<name>.key and .crt")
    kp.add_argument("--dir", required=True)
    kp.add_argument("--name", required=True)
    kp.add_argument("--cn", required=True)
    return ap


def main(argv=None):
    args = _parser().parse_args(argv)
    if args.cmd == "sp-metadata":
        sys.stdout.write(sp_metadata(args.sp_entity_id, args.acs_url, args.cert))
        return 0
    if args.cmd == "keypair":
        print("%s\n%s" % make_keypair(args.dir, args.name, args.cn))
        return 0
    if args.cmd == "metadata":
        print(_idp_from_args(args).metadata_path)
        return 0
    attrs = _attributes(args.attribute)
    if args.cmd == "mint":
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
            attributes=attrs, assertions=args.assertions)
        if args.tamper:
            b64 = TestIdP.tamper(b64)
        if args.xml:
            sys.stdout.write(base64.b64decode(b64).decode("utf-8") + "\n")
        else:
            print(b64)
        return 0
    if args.cmd == "serve":
        if args.entity_id is None:
            args.entity_id = _existing_metadata(args.workdir)[0]

        def ready(httpd):
            print("PORT %d" % httpd.server_address[1], flush=True)

        return serve(args.workdir, args.sp_entity_id, args.acs_url,
                     port=args.port, entity_id=args.entity_id,
                     sso_url=args.sso_url, attributes=attrs,
                     quiet=args.quiet, ready=ready)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (ValueError, RuntimeError, OSError, subprocess.SubprocessError,
            lasso.Error) as exc:
        sys.stderr.write("rsp_testidp: error: %s\n" % exc)
        sys.exit(1)
