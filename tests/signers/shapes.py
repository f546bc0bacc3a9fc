"""The field-shape corpus: responses shaped as the IdPs of the field send
them (each row names its sources: the IdP's code or documentation, or
the issue where a field response was shown), minted by the independent
signers of signers.py, as data a test iterates over.

``IDPS``: one test IdP per field IdP (its entity ID written as that IdP
writes its own, its signer, a key pair of its own). ``SP_SECTIONS``: the
SP sections of the fleet that trusts them (an SP-side setting a shape
needs, e.g. ``ReplaySPUserAttribute`` for AD FS without a NameID, gets a
section of its own). ``SHAPES``: one row per shape, each with

* ``source``: where the shape comes from;
* ``signer``: who signs (``jdk`` or ``samlify``), who encrypts (samlify's
  encryption library, @authenio/xml-encryption, for the JDK's assertions:
  the JDK does not encrypt) and why that signer;
* ``sign``: which elements are signed;
* ``gen``: the generator switches (``signers.response_xml``'s markup
  switches and JdkSigner's flags; or ``SamlifyIdP.mint``'s);
* ``encrypt``: None, or the data algorithm, the EncryptedKey's placement,
  Recipient and how it names the SP's key;
* ``sp``: the SP section it is posted to, and ``user``: what REMOTE_USER
  is (the NameID, qualified by the issuer; or an attribute);
* ``tamper`` and ``check``: the one byte changed after signing and the
  check= that refuses it; ``logs``: the warnings its sign-in logs (e.g.
  RSP01039 for a SHA-1 signature the SP section allows);
* ``gap``: None when the module accepts the shape; else the exact refusal
  it gets today (check= and a phrase of the detail), the twin's when that
  differs from ``check`` (``twin``), and why: a known gap the test asserts
  as it is, so that it flips when the module learns it.

``mint(shape, idps, sp)`` makes a response of a shape; ``features_of(b64)``
says what a response is, and ``Shape.expected()`` what it must be.
"""

import base64
import re
import time
import xml.etree.ElementTree as ET

import signers
from signers import DS_NS, EMAIL, SAML_NS, SAMLP_NS, XENC_NS

TRANSIENT = "urn:oasis:names:tc:SAML:2.0:nameid-format:transient"
ADFS_UPN = "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/upn"
ENTRA_MAIL = "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress"
CONSENT_UNSPECIFIED = "urn:oasis:names:tc:SAML:2.0:consent:unspecified"
AC_UNSPECIFIED = "urn:oasis:names:tc:SAML:2.0:ac:classes:unspecified"
EC_NS = "http://www.w3.org/2001/10/xml-exc-c14n#"

# name: (signer, entity ID as that IdP writes its own)
IDPS = {
    "entra": ("jdk", "https://sts.windows.net/0b7f6a4e-3c1d-4e2f-9a8b-7c6d5e4f3a2b/"),
    "adfs": ("jdk", "http://adfs.example.org/adfs/services/trust"),
    "pingfederate": ("jdk", "https://sso.example.com/pingfederate"),
    "google": ("samlify", "https://accounts.google.com/o/saml2?idpid=C03xk1q2w"),
    "okta": ("jdk", "http://www.okta.com/exk1fxp4bqNXZ5d7t0h8"),
    "keycloak": ("jdk", "https://keycloak.example.org/realms/demo"),
    "shibboleth": ("jdk", "https://idp.example.org/idp/shibboleth"),
    "opensaml": ("jdk", "https://idp.example.net/opensaml/idp"),
    "swedenconnect": ("jdk", "https://idp.eid.example.se/idp"),
    "simplesamlphp": ("samlify",
                      "https://ssp.example.org/simplesaml/module.php/saml/idp/metadata"),
}

# The fleet's SP sections: name -> (path prefix of the section, directives).
# "default" is the fleet's <Location />; the others are sections of their
# own (an SP each, its endpoints under PATH/saml).
SP_SECTIONS = {
    "default": ("", {}),
    "upn": ("/upn", {"ReplaySPUserAttribute": ADFS_UPN}),
    "allow-sha1": ("/sha1", {"ReplaySPAllowSHA1": IDPS["okta"][1]}),
}

# ID shapes (for the check of what a response is)
ID_PATTERNS = {"hex": r"_[0-9a-f]{32}", "guid": r"_[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}",
               "okta": r"id[0-9]{25}", "keycloak": r"ID_[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}",
               "ssp": r"_[0-9a-f]{42}", "ping": r"(?!id[0-9]{25})[A-Za-z][A-Za-z0-9]{26}"}


class Shape:
    """One row of the corpus (see the module's docstring)."""

    def __init__(self, id, idp, signer, why, sign, gen, tamper, check, *, encrypt=None,
                 sp="default", user="name_id", attributes=None, name_id="alice", gap=None,
                 logs=(), source=""):
        self.id = id
        self.idp = idp
        self.signer = signer
        self.why = why
        self.sign = sign
        self.gen = gen
        self.encrypt = encrypt
        self.sp = sp
        self.user = user
        self.attributes = attributes or {}
        self.name_id = name_id
        self.tamper = tamper
        self.check = check
        self.gap = gap
        self.logs = tuple(logs)
        self.source = source
        assert source, id
        assert signer == IDPS[idp][0], (id, signer)
        assert sp in SP_SECTIONS, sp
        assert sign in ("assertion", "response", "both"), sign

    def __repr__(self):
        return "Shape(%s)" % self.id

    @property
    def window(self):
        """Seconds from issue to the window's end: the earlier of the
        Conditions' and the SubjectConfirmationData's NotOnOrAfter."""
        nooa = self.gen.get("not_on_or_after_offset", 300)
        scd = self.gen.get("scd_not_on_or_after_offset")
        return min(nooa, scd) if scd is not None else nooa

    def expected(self):
        """What features_of must say of this shape's responses."""
        g = self.gen
        flags = g.get("flags", "")
        enc = None
        if self.encrypt:
            e = self.encrypt
            enc = {"data": signers.DATA_URIS[e["data"]],
                   "key": signers.KEY_URIS[e.get("key", "rsa-oaep-mgf1p")],
                   "digest": signers.OAEP_DIGESTS[e.get("digest", "sha1")],
                   "mgf": e.get("mgf") if e.get("key") == "rsa-oaep" else None,
                   "placement": e.get("placement", "inline"),
                   "recipient": e.get("recipient"),
                   "key_naming": e.get("key_naming", "cert")}
        if self.signer == "jdk":
            prefix = "dsig:" if "D" in flags else ("ds:" if "P" in flags else "")
            keyinfo = (["KeyName"] if "N" in flags else []) + (["X509Data"] if "K" in flags
                                                               else [])
            markup = signers.MARKUPS[g.get("markup", "saml2")][1]
            ids = g.get("ids", "hex")
        else:
            prefix, keyinfo = "ds:", ["X509Data"]
            markup = "saml2" if g.get("prefixes") == "saml2" else "saml"
            ids = g.get("ids", "hex")
        out = {
            "response_signed": self.sign in ("response", "both"),
            "assertion_signed": None if enc else self.sign in ("assertion", "both"),
            "signature_prefixes": [prefix],
            "keyinfo": keyinfo,
            "prefix_lists": ["xs"] * ((self.sign == "both") + 1) if "X" in flags else [],
            "assertion_prefix": markup,
            "issuer_format": signers.ENTITY if g.get("issuer_format") else None,
            "consent": g.get("consent"),
            "name_id": None if enc else (self.name_id is not None),
            "one_time_use": None if enc else bool(g.get("one_time_use")),
            "signature_methods": [] if enc and self.sign == "assertion" else
            ["rsa-sha1" if "S" in flags else "rsa-sha256"],
            "ids": ids,
            "digits": g.get("digits", 9) if self.signer == "jdk" else 3,
            "encrypted": enc,
        }
        if enc and self.sign == "assertion":
            out["signature_prefixes"] = []   # inside the ciphertext
            out["keyinfo"] = []
        return out


# The one byte changed after signing: ("text", element) its text's first
# character; ("attribute", element, attribute) the attribute's last
# digit; ("cipher", "key") the EncryptedKey's ciphertext.
SHAPES = [
    Shape("entra", "entra", "jdk",
          "the JDK signs the default-namespace markup samlify's template cannot write",
          "assertion",
          dict(flags="AK", markup="default-ns", ids="guid", digits=7, issuer_format=False,
               name_id_format=EMAIL, typed_values=False, attributes_first=True,
               authn_context=signers.AC_PASSWORD, not_before_offset=-300,
               not_on_or_after_offset=3600),
          ("attribute", "Conditions", "NotOnOrAfter"), "signature",
          name_id="alice@example.org", attributes={ENTRA_MAIL: "alice@example.org"},
          source=(
              "learn.microsoft.com certificate-signing-options (assertion signed); "
              "SuiteCRM#8537 and HENNGE/minisaml#15 field responses (default namespaces, "
              "unprefixed Signature, 65-minute window); java-saml#298")),
    Shape("adfs", "adfs", "jdk",
          "the JDK signs the assertion, samlify's encryption library encrypts it (the JDK "
          "does not encrypt; samlify cannot sign a NameID-less default-namespace assertion)",
          "assertion",
          dict(flags="AKP", markup="default-ns", ids="guid", digits=3, issuer_format=False,
               typed_values=False, consent=CONSENT_UNSPECIFIED, not_before_offset=0,
               not_on_or_after_offset=3600, scd_not_on_or_after_offset=300),
          ("cipher", "key"), "decrypt",
          encrypt=dict(data="aes256-cbc", key_naming="issuer-serial"),
          sp="upn", user=ADFS_UPN, name_id=None, attributes={ADFS_UPN: "alice@example.org"},
          source=(
              "Clever/saml2#85 and onelogin/java-saml#163 field responses (aes256-cbc, "
              "rsa-oaep-mgf1p SHA-1, X509IssuerSerial, Consent, default namespaces); no "
              "NameID without a claim rule (vendor guides); ruby-saml#276")),
    Shape("pingfederate", "pingfederate", "jdk",
          "samlify always writes KeyInfo; the JDK signs without it", "response",
          dict(flags="RP", markup="saml", ids="ping", digits=3, issuer_format=False,
               not_before_offset=-300),
          ("text", "NameID"), "signature",
          source=(
              "docs.pingidentity.com PingFederate 10.3 signature policy (Response signed) and "
              "10.0 signing certificate step (certificate in KeyInfo only when ticked)")),
    Shape("okta-sha1", "okta", "jdk",
          "as okta, signed with RSA-SHA1 and SHA-1 digests (Okta apps made before 2017), "
          "posted to an SP section whose ReplaySPAllowSHA1 names the IdP", "both",
          dict(flags="ARKPXS", markup="saml2", ids="okta", digits=3, issuer_format=True,
               xs_on="response", not_before_offset=-300),
          ("text", "AttributeValue"), "signature", sp="allow-sha1", logs=("RSP01039",),
          name_id="alice@example.org", attributes={"email": "alice@example.org"},
          source=(
              "XML-Security/signxml#40 (RSA-SHA1 from Okta apps, 2016)")),
    Shape("google-assertion", "google", "samlify",
          "samlify's own Assertion-only signing (Google's default)", "assertion",
          dict(prefixes="saml2", name_id_format=EMAIL),
          ("text", "NameID"), "signature", name_id="alice@example.org",
          source=(
              "goauthentik/authentik#22811, OCA/server-auth#321, node-saml/passport-saml#852 "
              "(assertion only by default; Response only with \"Signed response\", never "
              "both); node-saml#378 (IDs)")),
    Shape("google-response", "google", "samlify",
          "samlify's own Response-only signing (Google's \"Signed response\")", "response",
          dict(prefixes="saml2", name_id_format=EMAIL),
          ("text", "NameID"), "signature", name_id="alice@example.org",
          source=(
              "as google-assertion")),
    Shape("okta", "okta", "jdk",
          "the JDK writes the InclusiveNamespaces PrefixList; samlify cannot be asked to",
          "both",
          dict(flags="ARKPX", markup="saml2", ids="okta", digits=3, issuer_format=True,
               xs_on="response", not_before_offset=-300),
          ("text", "AttributeValue"), "signature",
          name_id="alice@example.org", attributes={"email": "alice@example.org"},
          source=(
              "ansible/awx#13493 (InclusiveNamespaces PrefixList=\"xs\"), passport-saml#283 "
              "and directus/docs#303 (IDs, Issuer Format, xmlns:xs); app defaults sign "
              "Response and Assertion")),
    Shape("keycloak", "keycloak", "jdk",
          "the JDK writes a KeyName beside the certificate; samlify cannot", "response",
          dict(flags="RKND", markup="saml", ids="keycloak", digits=3, issuer_format=False,
               one_time_use=True, not_before_offset=0, not_on_or_after_offset=60,
               scd_not_on_or_after_offset=300, session_not_on_or_after_offset=36000,
               authn_context=AC_UNSPECIFIED),
          ("text", "Audience"), "signature",
          source=(
              "Keycloak SamlProtocol and SAML2LoginResponseBuilder (Conditions = "
              "accessCodeLifespan 60 s, confirmation 300 s, OneTimeUse, ID_ IDs), its KeyName "
              "commit (key ID beside the certificate)")),
    Shape("keycloak-encrypted", "keycloak", "jdk",
          "as keycloak; samlify's encryption library encrypts, the EncryptedKey's KeyInfo "
          "left out as Keycloak's XMLEncryptionUtil does", "response",
          dict(flags="RKND", markup="saml", ids="keycloak", digits=3, issuer_format=False,
               not_before_offset=0, not_on_or_after_offset=60,
               scd_not_on_or_after_offset=300, authn_context=AC_UNSPECIFIED),
          ("attribute", "Response", "IssueInstant"), "signature",
          encrypt=dict(data="aes128-cbc", key_naming="none"),
          source=(
              "Keycloak saml-core XMLEncryptionUtil and "
              "BaseSAML2BindingBuilder.encryptDocument (aes128-cbc, rsa-oaep-mgf1p SHA-1, "
              "EncryptedKey inline without a certificate)")),
    Shape("shibboleth", "shibboleth", "jdk",
          "samlify's encryption library encrypts, the JDK signs the Response after the "
          "Recipient is written (samlify signs before it could be added)", "response",
          dict(flags="RKP", markup="saml2", ids="hex", digits=3, issuer_format=False,
               name_id_format=TRANSIENT, not_before_offset=0),
          ("attribute", "Response", "IssueInstant"), "signature",
          encrypt=dict(data="aes128-gcm", recipient=True), name_id=signers.random_id(),
          source=(
              "Shibboleth IdP 4/5 defaults: signResponses, "
              "DefaultSecurityConfigurationBootstrap (AES-128-GCM, RSAOAEPParameters(SHA1, "
              "MGF1_SHA1)), AbstractEncryptAction (KeyPlacement.INLINE, Recipient)")),
    Shape("opensaml-peer", "opensaml", "jdk",
          "as shibboleth, the EncryptedKey moved beside the EncryptedData before the JDK "
          "signs", "response",
          dict(flags="RKP", markup="saml2", ids="hex", digits=3, issuer_format=False,
               name_id_format=TRANSIENT, not_before_offset=0),
          ("attribute", "Response", "IssueInstant"), "signature",
          encrypt=dict(data="aes128-gcm", recipient=True, placement="peer"),
          name_id=signers.random_id(),
          source=(
              "OpenSAML Encrypter's default KeyPlacement.PEER (RetrievalMethod, "
              "ReferenceList)")),
    Shape("swedenconnect", "swedenconnect", "jdk",
          "as shibboleth, the key wrapped by python3-cryptography: samlify's encryption "
          "library has only SHA-1 OAEP", "response",
          dict(flags="RKP", markup="saml2", ids="hex", digits=3, issuer_format=False,
               name_id_format=TRANSIENT, not_before_offset=0),
          ("attribute", "Response", "IssueInstant"), "signature",
          encrypt=dict(engine="cryptography", data="aes256-gcm", digest="sha256",
                       recipient=True),
          name_id=signers.random_id(),
          source=(
              "swedenconnect/opensaml-security-ext SAML2IntSecurityConfiguration "
              "(RSAOAEPParameters(SHA256, MGF1_SHA1), AES-GCM)")),
    Shape("keycloak-oaep11", "keycloak", "jdk",
          "as keycloak-encrypted, the key wrapped by python3-cryptography: samlify's "
          "encryption library has no xmlenc11#rsa-oaep", "response",
          dict(flags="RKND", markup="saml", ids="keycloak", digits=3, issuer_format=False,
               not_before_offset=0, not_on_or_after_offset=60,
               scd_not_on_or_after_offset=300, authn_context=AC_UNSPECIFIED),
          ("attribute", "Response", "IssueInstant"), "signature",
          encrypt=dict(engine="cryptography", data="aes256-gcm", key="rsa-oaep",
                       digest="sha256", mgf="sha256", key_naming="none"),
          source=(
              "keycloak#19689 (saml.encryption.keyAlgorithm and digestMethod, Keycloak 21); "
              "ITfoxtec.Identity.Saml2#140 field response (aes256-gcm, xmlenc11#rsa-oaep, "
              "SHA-256, MGF1-SHA256, inline)")),
    Shape("simplesamlphp2", "simplesamlphp", "samlify",
          "samlify's own both-signed responses, with the Issuer Format SimpleSAMLphp 2 writes",
          "both",
          dict(issuer_format=True, name_id_format=TRANSIENT, ids="ssp",
               session_not_on_or_after_offset=28800),
          ("attribute", "AuthnStatement", "SessionNotOnOrAfter"), "signature",
          name_id=signers.ssp_id(),
          source=(
              "SimpleSAMLphp 2 modules/saml/src/IdP/SAML2.php (saml20.sign.response and "
              ".assertion default true, transient NameID fallback, assertion.lifetime 300 s), "
              "Issuer Format entity in 2.x")),
]


# --------------------------------------------------------------------------
# the IdPs and minting
# --------------------------------------------------------------------------

def start_idps(workdir):
    """{name: JdkIdP or SamlifyIdP} for IDPS, each with its own key pair and
    metadata: one JVM and one node process for all of them. The caller
    closes them (close_idps)."""
    import os
    out = {}
    owners = {}
    try:
        for name, (signer, entity_id) in IDPS.items():
            d = os.path.join(workdir, name)
            cls = signers.JdkIdP if signer == "jdk" else signers.SamlifyIdP
            out[name] = cls(d, entity_id=entity_id,
                            sso_url="http://127.0.0.1:9/%s/sso" % name,
                            share=owners.get(signer))
            owners.setdefault(signer, out[name])
        if "samlify" not in owners:     # the encryptor of the JDK's shapes
            out["_samlify"] = owners["samlify"] = signers.SamlifyIdP(
                os.path.join(workdir, "_samlify"))
    except BaseException:
        close_idps(out)
        raise
    return out


def close_idps(idps):
    for idp in idps.values():       # sharers first: only an owner stops a child
        if not idp.owner:
            idp.close()
    for idp in idps.values():
        if idp.owner:
            idp.close()


def encryptor(idps):
    return next(i for i in idps.values() if isinstance(i, signers.SamlifyIdP))


class Minted:
    def __init__(self, b64, assertion_id, issuer, window_end, shape, user_value):
        self.b64 = b64
        self.assertion_id = assertion_id
        self.issuer = issuer
        self.window_end = window_end
        self.shape = shape
        self.user_value = user_value     # the NameID, or the user attribute's value


def mint(shape, idps, sp, now=None):
    """A base64 response of ``shape`` for ``sp`` (a dict: entity_id,
    acs_url, metadata (as the SP serves it), cert_path (its encryption
    certificate)): Minted."""
    now = time.time() if now is None else now
    idp = idps[shape.idp]
    g = dict(shape.gen)
    style = g.pop("ids", "hex")
    ids = signers.ID_STYLES[style]
    aid = ids()
    if shape.signer == "samlify":
        b64 = idp.mint(sp["metadata"], sign=shape.sign, assertion_id=aid, response_id=ids(),
                       session_index=ids(), name_id=shape.name_id, now=now,
                       attributes=shape.attributes, **g)
    else:
        flags = g.pop("flags")
        xml = signers.response_xml(issuer=idp.entity_id, destination=sp["acs_url"],
                                   audience=sp["entity_id"], now=now, assertion_id=aid,
                                   name_id=shape.name_id, attributes=shape.attributes,
                                   ids=style, **g)
        if "A" in flags:
            xml = idp.sign(xml, flags.replace("R", ""))
        if shape.encrypt:
            e = shape.encrypt
            _, assertion = signers.replace_assertion(xml, "")
            assertion = re.sub(r"^<\?xml[^>]*\?>", "", assertion)
            if e.get("engine") == "cryptography":
                ed = signers.oaep_encrypt(assertion, sp["cert_path"], data=e["data"],
                                          key=e.get("key", "rsa-oaep-mgf1p"),
                                          digest=e["digest"], mgf=e.get("mgf", "sha1"))
            else:
                ed = encryptor(idps).encrypt(assertion, sp["cert_path"], data=e["data"])
            inner = signers.reshape_encrypted_data(
                ed, placement=e.get("placement", "inline"),
                recipient=sp["entity_id"] if e.get("recipient") else None,
                key_naming=e.get("key_naming", "cert"), cert_path=sp["cert_path"])
            xml, _ = signers.replace_assertion(
                xml, signers.encrypted_assertion(inner, g.get("markup", "saml2")))
        if "R" in flags:
            xml = idp.sign(xml, flags.replace("A", ""))
        xml = re.sub(r"^<\?xml[^>]*\?>", "", xml)
        b64 = base64.b64encode(xml.encode()).decode()
    user_value = shape.name_id if shape.user == "name_id" else shape.attributes[shape.user]
    return Minted(b64, aid, idp.entity_id, now + shape.window, shape, user_value)


def tampered(m):
    """The twin of a Minted response with one byte changed (its shape's
    ``tamper``), base64."""
    kind, *what = m.shape.tamper
    if kind == "text":
        return signers.tamper_text(m.b64, what[0])
    if kind == "attribute":
        return signers.tamper_attribute(m.b64, what[0], what[1])
    return signers.tamper_cipher_value(m.b64, what[0])


# --------------------------------------------------------------------------
# what a response is
# --------------------------------------------------------------------------

def _mgf(ek):
    m = ek.find("{%s}EncryptionMethod/{%s}MGF" % (XENC_NS, signers.XENC11_NS))
    return None if m is None else m.get("Algorithm").rsplit("#mgf1", 1)[-1]


def _local(tag):
    return tag.rsplit("}", 1)[-1]


def features_of(b64):
    """What a base64 Response is, as Shape.expected() says it: which
    elements are signed, the Signature's prefixes, what its KeyInfo holds,
    InclusiveNamespaces PrefixLists, the assertion's prefix, the Issuer's
    Format, Consent, NameID and OneTimeUse (plaintext only), the ID style
    of the Response, the fractional digits of its IssueInstant, and the
    encryption (algorithms, where the
    EncryptedKey is, its Recipient and how it names the key)."""
    xml = base64.b64decode(b64).decode()
    root = ET.fromstring(xml)
    assert root.tag == "{%s}Response" % SAMLP_NS, root.tag
    sig = "{%s}Signature" % DS_NS
    a = root.find("{%s}Assertion" % SAML_NS)
    ea = root.find("{%s}EncryptedAssertion" % SAML_NS)
    sigs = [s for s in [root.find(sig), a.find(sig) if a is not None else None]
            if s is not None]
    keyinfo = sorted({_local(c.tag) for s in sigs for c in s.findall("{%s}KeyInfo/*" % DS_NS)})
    issuer = root.find("{%s}Issuer" % SAML_NS)
    m = re.search(r"<(\w+:)?(?:Encrypted)?Assertion\b", xml)
    ids = [k for k, p in ID_PATTERNS.items() if re.fullmatch(p, root.get("ID"))]
    out = {
        "response_signed": root.find(sig) is not None,
        "assertion_signed": None if a is None else a.find(sig) is not None,
        "signature_prefixes": sorted(set(re.findall(r"<(\w*:?)Signature[\s>]", xml))),
        "keyinfo": keyinfo,
        "prefix_lists": [e.get("PrefixList") for e in root.iter("{%s}InclusiveNamespaces"
                                                                % EC_NS)],
        "assertion_prefix": (m.group(1) or "")[:-1],
        "issuer_format": issuer.get("Format"),
        "consent": root.get("Consent"),
        "name_id": None if a is None else a.find(".//{%s}NameID" % SAML_NS) is not None,
        "one_time_use": None if a is None else
        a.find("{%s}Conditions/{%s}OneTimeUse" % (SAML_NS, SAML_NS)) is not None,
        "signature_methods": sorted({e.get("Algorithm").rsplit("#", 1)[-1] for e in
                                     root.iter("{%s}SignatureMethod" % DS_NS)}),
        "ids": ids[0] if len(ids) == 1 else ids,
        "digits": len(re.fullmatch(r"[^.]*(?:\.([0-9]*))?Z", root.get("IssueInstant"))
                      .group(1) or ""),
        "encrypted": None,
    }
    if ea is not None:
        ed = ea.find("{%s}EncryptedData" % XENC_NS)
        inline = ed.find("{%s}KeyInfo/{%s}EncryptedKey" % (DS_NS, XENC_NS))
        peer = ea.find("{%s}EncryptedKey" % XENC_NS)
        assert (inline is None) != (peer is None), "one EncryptedKey, inline or peer"
        ek = inline if inline is not None else peer
        if peer is not None:
            rm = ed.find("{%s}KeyInfo/{%s}RetrievalMethod" % (DS_NS, DS_NS))
            assert rm is not None and rm.get("URI") == "#" + peer.get("Id"), "RetrievalMethod"
            ref = peer.find("{%s}ReferenceList/{%s}DataReference" % (XENC_NS, XENC_NS))
            assert ref is not None and ref.get("URI") == "#" + ed.get("Id"), "ReferenceList"
        kd = ek.find("{%s}KeyInfo/{%s}X509Data" % (DS_NS, DS_NS))
        naming = [_local(c.tag) for c in kd] if kd is not None else []
        out["encrypted"] = {
            "data": ed.find("{%s}EncryptionMethod" % XENC_NS).get("Algorithm"),
            "key": ek.find("{%s}EncryptionMethod" % XENC_NS).get("Algorithm"),
            "digest": ek.find("{%s}EncryptionMethod/{%s}DigestMethod"
                              % (XENC_NS, DS_NS)).get("Algorithm"),
            "mgf": _mgf(ek),
            "placement": "inline" if inline is not None else "peer",
            "recipient": ek.get("Recipient") is not None or None,
            "key_naming": {("X509Certificate",): "cert", ("X509IssuerSerial",): "issuer-serial",
                           (): "none"}.get(tuple(naming), naming),
        }
    return out
