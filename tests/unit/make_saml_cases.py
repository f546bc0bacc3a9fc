#!/usr/bin/python3
"""The signed fixtures of the SAML unit suites (rsp_unit_saml.c runs it
for each), made by the test IdP (tests/idp) when the suite runs, never
edited by hand:

    /usr/bin/python3 tests/unit/make_saml_cases.py DIR [DTD_PORT [GROUPS]]

Writes into DIR: sp.key, sp.crt (the SP's pair), idp-metadata.xml (the
IdP the SP trusts), and what GROUPS names (comma-separated; all of them
when not given):

    responses  cases/NAME.b64, one base64 SAMLResponse per case, minted
               now for the SP and ACS below (test_rsp_saml_response.c)
    encrypted  the same for the responses with an EncryptedAssertion,
               and other.key, other.crt: another SP's pair
               (test_rsp_saml_decrypt.c)
    variants   the same, encrypted by python3-cryptography (the test IdP's
               engine "cryptography", not xmlsec nor Lasso): each key
               transport, OAEP digest, MGF and label, each AES, each way
               of naming the recipient's key, inline and peer keys, and
               what a broken IdP or an attacker sends (test_rsp_saml_decrypt.c)
    ids        the same for responses whose assertion's Subject has an
               EncryptedID, encrypted by python3-cryptography (and xmlsec1,
               and Lasso): each key transport, AES, key name and placement,
               the signatures around it, and what does not decrypt
               (test_rsp_saml_decrypt.c)
    logout     logout/NAME.txt, one raw HTTP-Redirect query per case: the
               IdP's LogoutRequests, signed or not (test_rsp_saml_messages.c)
    keys       nothing more (test_rsp_saml_metadata.c)

The attacks are made from responses the IdP really signed, changed
afterwards as an attacker would (as text: re-serialising would change
what the signatures cover). DTD_PORT: where the external-entity and
CipherReference cases point (the suites listen there and check that
nothing connects).
"""
import base64
import os
import re
import subprocess
import sys
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "idp"))

import rsp_testidp as tidp  # noqa: E402

SP = "https://sp.unit.example/saml"        # rsp_unit_saml.h: SP_ENTITY
ACS = SP + "/acs"
SLO = SP + "/slo"
IDP = "https://idp.unit.example/idp"       # rsp_unit_saml.h: IDP_ENTITY

ASSERTION = re.compile(r"<saml:Assertion\b.*?</saml:Assertion>", re.S)
SIGNATURE = re.compile(r"<(?:ds:)?Signature\b.*?</(?:ds:)?Signature>", re.S)
DSIG = "http://www.w3.org/2000/09/xmldsig#"
GROUPS = ("responses", "encrypted", "variants", "ids", "logout", "keys",
          "metadata")


def b64(xml):
    return base64.b64encode(xml.encode("utf-8")).decode("ascii")


def one(pattern, text):
    found = pattern.findall(text)
    if len(found) != 1:
        raise SystemExit("make_saml_cases: expected one match of %s, got %d"
                         % (pattern.pattern[:30], len(found)))
    return found[0]


def evil_copy(assertion, new_id, user="mallory"):
    """The assertion with another ID and NameID, and no signature: what an
    attacker writes."""
    a = SIGNATURE.sub("", assertion)
    a = re.sub(r'\bID="[^"]*"', 'ID="%s"' % new_id, a, count=1)
    return re.sub(r"(<saml:NameID\b[^>]*>)[^<]*(<)", r"\g<1>%s\2" % user, a, count=1)


DECRYPTED_MAX_SIZE = 128 * 1024     # rsp_saml_shape.h: RSP_DECRYPTED_MAX_SIZE
DECRYPTED_MAX_DEPTH = 64            # RSP_DECRYPTED_MAX_DEPTH
DECRYPTED_MAX_ELEMENTS = 4096       # RSP_DECRYPTED_MAX_ELEMENTS
DECRYPTED_MAX_ATTRIBUTES = 64       # RSP_DECRYPTED_MAX_ATTRIBUTES
ENCRYPTED_ASSERTION = re.compile(
    r"<saml:EncryptedAssertion\b.*?</saml:EncryptedAssertion>", re.S)


class Plaintext(tidp.Encryption):
    """Encrypts, as the test IdP does, what change(assertion) makes of the
    assertion it serialised (and signed) on its own: what an attacker with
    the SP's published certificate can send, or (re-signed) what an IdP
    could. kw: Encryption's."""

    def __init__(self, cert_path, change, **kw):
        super().__init__(cert_path, **kw)
        self.change = change

    def encrypt_serialised(self, assertion_xml, recipient=None):
        return super().encrypt_serialised(self.change(assertion_xml), recipient)


def resign_assertion(assertion, idp):
    """The standalone assertion's signature made again by the IdP's key
    (xmlsec1, a template like Lasso's), over what it holds now."""
    aid = re.search(r'\bID="([^"]*)"', assertion).group(1)
    sig_alg, digest = tidp.SIGNATURE_METHODS["rsa-sha256"]
    tmpl = (
        '<Signature xmlns="%(ds)s"><SignedInfo>'
        '<CanonicalizationMethod Algorithm="%(c14n)s"/>'
        '<SignatureMethod Algorithm="%(sig)s"/>'
        '<Reference URI="#%(id)s"><Transforms>'
        '<Transform Algorithm="%(env)s"/><Transform Algorithm="%(c14n)s"/>'
        '</Transforms><DigestMethod Algorithm="%(digest)s"/>'
        '<DigestValue></DigestValue></Reference></SignedInfo>'
        '<SignatureValue></SignatureValue>'
        '<KeyInfo><X509Data><X509Certificate/></X509Data></KeyInfo>'
        '</Signature>'
        % {"ds": DSIG, "c14n": tidp.C14N_EXCL, "sig": sig_alg,
           "env": tidp.ENVELOPED, "digest": digest, "id": aid})
    body = SIGNATURE.sub("", assertion, count=1).replace(
        "</saml:Issuer>", "</saml:Issuer>" + tmpl, 1)
    return tidp._xmlsec1_file(
        ["--sign", "--privkey-pem", "%s,%s" % (idp.key_path, idp.cert_path),
         "--id-attr:ID", "%s:Assertion" % tidp.SAML_NS,
         "--node-xpath", "/*[local-name()='Assertion']/*[local-name()='Signature']",
         "assertion.xml"], "--sign", {"assertion.xml": body})


def in_value(assertion, xml):
    """The assertion with xml at the start of its first AttributeValue."""
    return re.sub(r"(<saml:AttributeValue\b[^>]*>)", lambda m: m.group(1) + xml,
                  assertion, count=1)


def nested(levels):
    return "<a>" * levels + "</a>" * levels


def encrypted_cases(out, idp, cert, cipher_port):
    """Responses with an EncryptedAssertion (an unsigned Response: what is
    decrypted before any signature is checked), really encrypted for the
    SP's certificate, each named for what its plaintext is."""
    other_key, other_cert = tidp.make_keypair(out, "other", "another sp")
    attrs = {"mail": ["alice@example.org"]}
    # levels of a value's content at depth d: Assertion 1, AttributeStatement
    # 2, Attribute 3, AttributeValue 4
    value_depth = 4

    def mint(change=None, cert_path=cert, **kw):
        enc = Plaintext(cert_path, change or (lambda a: a))
        kw.setdefault("sign_response", False)
        return idp.mint_xml(SP, ACS, encrypt=enc, attributes=attrs, **kw)

    def other(name_id):
        """Another assertion the IdP signed, standalone, for a second one."""
        got = []
        mint(lambda a: got.append(a) or a, name_id=name_id)
        return got[0]

    mallory = other("mallory")

    def padded(total):
        return lambda a: a + " " * (total - len(a.encode()))

    cases = {
        "enc-good": mint(),
        "enc-good-response-signed": mint(sign_response=True, sign_assertion=False),
        "enc-another-key": mint(cert_path=other_cert),
        # depth: the issue's 18,000 levels; one past the limit; at it
        "enc-deep-18000": mint(lambda a: nested(18000)),
        "enc-deep-over": mint(lambda a: in_value(
            a, nested(DECRYPTED_MAX_DEPTH - value_depth + 1))),
        "enc-deep-at-limit": mint(lambda a: resign_assertion(in_value(
            a, nested(DECRYPTED_MAX_DEPTH - value_depth)), idp)),
        # size: at the limit (whitespace after the assertion), one byte
        # past it, far past it (refused before the private key is used)
        "enc-size-at-limit": mint(padded(DECRYPTED_MAX_SIZE)),
        "enc-size-over": mint(padded(DECRYPTED_MAX_SIZE + 1)),
        "enc-size-large": mint(lambda a: in_value(a, "x" * (2 * DECRYPTED_MAX_SIZE))),
        "enc-many-elements": mint(lambda a: in_value(
            a, "<a/>" * DECRYPTED_MAX_ELEMENTS)),
        "enc-many-attributes": mint(lambda a: in_value(a, "<a %s/>" % " ".join(
            'a%d=""' % i for i in range(DECRYPTED_MAX_ATTRIBUTES + 1)))),
        # exactly one Assertion comes out, and nothing else
        "enc-two-genuine-first": mint(lambda a: a + mallory),
        "enc-two-genuine-second": mint(lambda a: mallory + a),
        "enc-other-element-after": mint(
            lambda a: a + '<saml:Issuer xmlns:saml="%s">x</saml:Issuer>' % tidp.SAML_NS),
        "enc-not-an-assertion": mint(
            lambda a: '<saml:Issuer xmlns:saml="%s">x</saml:Issuer>' % tidp.SAML_NS),
        "enc-comment-after": mint(lambda a: a + "<!-- more -->"),
        "enc-text-after": mint(lambda a: a + "more"),
        "enc-whitespace-around": mint(lambda a: "\n  " + a + "\n"),
    }
    # The data's ciphertext by reference: xmlsec would fetch it.
    good = cases["enc-good"]
    i = good.rfind("<xenc:CipherData>")
    j = good.index("</xenc:CipherData>", i) + len("</xenc:CipherData>")
    cases["enc-cipher-reference"] = (
        good[:i] + '<xenc:CipherData><xenc:CipherReference URI="http://127.0.0.1:'
        '%d/cipher"/></xenc:CipherData>' % cipher_port + good[j:])
    return cases


# What the variants share unless they say otherwise: XML Encryption 1.1
# RSA-OAEP with SHA-256 and MGF1-SHA-256 (ITfoxtec's field sample, which
# xmlsec 1.2.37 cannot unwrap), AES-128-GCM, the EncryptedKey naming no key.
VARIANT = dict(engine="cryptography", key="rsa-oaep", digest="sha256",
               mgf="sha256", key_info="none")
DIGESTS = tuple(tidp.OAEP_DIGESTS)
AES = ("aes128-gcm", "aes192-gcm", "aes256-gcm", "aes128-cbc", "aes192-cbc",
       "aes256-cbc")


def variant_cases(out, idp, cert):
    """Responses with an EncryptedAssertion encrypted by python3-cryptography
    for the SP's certificate (or another's), unsigned around a signed
    assertion unless the name says otherwise. x-...: accepted as alice;
    r-...: refused (test_rsp_saml_decrypt.c has the check= of each)."""
    other_key, other_cert = tidp.make_keypair(out, "third", "a third sp")
    attrs = {"mail": ["alice@example.org"]}

    def mint(change=None, sign_response=False, sign_assertion=True, **kw):
        enc = Plaintext(kw.pop("cert_path", cert), change or (lambda a: a),
                        **dict(VARIANT, **kw))
        return idp.mint_xml(SP, ACS, encrypt=enc, attributes=attrs,
                            sign_response=sign_response,
                            sign_assertion=sign_assertion)

    cases = {}
    # key transport: rsa-oaep-mgf1p with each digest (and none: SHA-1),
    # rsa-oaep with each digest and each MGF (and neither), a label
    for d in DIGESTS:
        cases["x-mgf1p-%s" % d] = mint(key="rsa-oaep-mgf1p", digest=d, mgf=None)
        for m in DIGESTS:
            cases["x-oaep-%s-mgf1%s" % (d, m)] = mint(digest=d, mgf=m)
    cases["x-mgf1p-nodigest"] = mint(key="rsa-oaep-mgf1p", digest=None, mgf=None)
    cases["x-mgf1p-mgf1sha1"] = mint(key="rsa-oaep-mgf1p", digest="sha256",
                                     mgf="sha1")
    cases["x-oaep-nodigest-nomgf"] = mint(digest=None, mgf=None)
    cases["x-mgf1p-label"] = mint(key="rsa-oaep-mgf1p", digest="sha256",
                                  mgf=None, label=b"mod_replay_sp label")
    cases["x-oaep-label"] = mint(label=bytes(range(256)))
    # data: every AES; CBC with random padding bytes (only the last counts)
    for a in AES:
        cases["x-%s" % a] = mint(data=a)
    cases["x-aes256-cbc-random-padding"] = mint(data="aes256-cbc",
                                                cbc_padding="random")
    # which key: named by certificate, issuer and serial, subject, KeyName
    # (the common name, the SHA-256 fingerprint), or not at all
    for ki in ("cert", "issuer-serial", "subject-name", "key-name"):
        cases["x-ki-%s" % ki] = mint(key_info=ki)
    fp = subprocess.run(["openssl", "x509", "-noout", "-fingerprint", "-sha256",
                         "-in", cert], capture_output=True, text=True, check=True,
                        timeout=30).stdout.strip().split("=", 1)[1]
    cases["x-ki-key-name-sha256"] = mint(key_info="key-name", key_name=fp)
    cases["x-ki-key-name-unknown"] = mint(key_info="key-name",
                                          key_name="a name nobody gave")
    # another recipient's EncryptedKey first
    for ki in ("cert", "issuer-serial", "none"):
        cases["x-others-%s" % ki] = mint(others=(other_cert,), key_info=ki)
    # peer: the EncryptedKeys beside the EncryptedData, a RetrievalMethod
    cases["x-peer-mgf1p"] = mint(key_placement="sibling", key="rsa-oaep-mgf1p",
                                 digest="sha1", mgf=None, key_info="cert")
    cases["x-peer-oaep"] = mint(key_placement="sibling", data="aes256-cbc")
    cases["x-peer-others"] = mint(key_placement="sibling", others=(other_cert,),
                                  key_info="cert")
    # signatures: a signed Response around an unsigned assertion
    # (Shibboleth's) and around a signed one; neither signed
    cases["x-response-signed"] = mint(sign_response=True, sign_assertion=False)
    cases["x-both-signed"] = mint(sign_response=True)
    cases["r-neither-signed"] = mint(sign_assertion=False)
    # a signed Response around an assertion changed after it was signed:
    # the assertion's own signature is still verified
    tampered = lambda a: re.sub(r"(<saml:NameID\b[^>]*>)[^<]*<",  # noqa: E731
                                r"\g<1>mallory<", a, count=1)
    cases["r-response-signed-assertion-broken"] = mint(tampered, sign_response=True)
    # refused before anything is decrypted
    cases["r-rsa-1_5"] = mint(key="rsa-1_5", digest=None, mgf=None)
    cases["r-mgf1p-mgf1sha256"] = mint(key="rsa-oaep-mgf1p", mgf="sha256")
    md5 = "http://www.w3.org/2001/04/xmldsig-more#md5"
    cases["r-digest-md5"] = mint().replace(tidp.OAEP_DIGESTS["sha256"], md5, 1)
    cases["r-mgf-unknown"] = mint().replace(
        tidp.OAEP_MGFS["sha256"], tidp.XENC11_NS + "mgf1md5", 1)
    cases["r-too-many-keys"] = mint(others=(other_cert,) * 4)
    # what does not decrypt: the same refusal, the same words, whatever
    # broke (each data mode: every case of a mode has one detail)
    for mode, data in (("gcm", "aes128-gcm"), ("cbc", "aes128-cbc")):
        for c in tidp.CORRUPTIONS:
            if (c, mode) in (("tag", "cbc"), ("padding", "gcm")):
                continue
            cases["u-%s-%s" % (mode, c)] = mint(data=data, corrupt=c)
        cases["u-%s-wrong-key" % mode] = mint(data=data, cert_path=other_cert)
        cases["u-%s-wrong-cert" % mode] = mint(data=data, cert_path=other_cert,
                                               key_info="cert")
        good = mint(data=data)
        values = list(re.finditer(r"<xenc:CipherValue>([^<]*)<", good))
        v = values[-1]
        cases["u-%s-not-base64" % mode] = good[:v.start(1)] + v.group(1)[:-3] + \
            good[v.end(1):]
        cases["u-%s-iv-only" % mode] = good[:v.start(1)] + \
            base64.b64encode(os.urandom(12 if mode == "gcm" else 16)).decode() + \
            good[v.end(1):]
        # two assertions inside: with GCM that is said, with CBC it is the
        # one refusal too
        cases["u-%s-two-assertions" % mode] = mint(lambda a: a + a, data=data)
    return cases


class IdOutput(tidp.Encryption):
    """Encrypts as the test IdP does, then change(xml) makes what it wants
    of the EncryptedID written (before the message is signed: what an IdP
    that is broken sends, its signature good)."""

    def __init__(self, cert_path, change, **kw):
        super().__init__(cert_path, **kw)
        self.change = change

    def encrypt_serialised(self, xml, recipient=None):
        return self.change(super().encrypt_serialised(xml, recipient))


def last_cipher_value(xml, value):
    """xml with the text of its last CipherValue (the data's) replaced by
    value(old text)."""
    v = list(re.finditer(r"<xenc:CipherValue>([^<]*)<", xml))[-1]
    return xml[:v.start(1)] + value(v.group(1)) + xml[v.end(1):]


NAME_ID = tidp.name_id_xml("alice", tidp.NAMEID_UNSPECIFIED)


def encrypted_id_cases(out, idp, cert):
    """Responses whose (signed) assertion's Subject has an EncryptedID,
    encrypted by python3-cryptography (or xmlsec1, or Lasso) for the SP's
    certificate: id-x-...: accepted as alice; id-r-...: refused;
    id-u-MODE-...: what does not decrypt (test_rsp_saml_decrypt.c)."""
    other_key, other_cert = tidp.make_keypair(out, "fourth", "a fourth sp")

    def mint(enc=None, sign_response=False, sign_assertion=True, encrypt=None,
             **kw):
        if enc is None:
            enc = tidp.Encryption(kw.pop("cert_path", cert), **dict(VARIANT, **kw))
        return idp.mint_xml(SP, ACS, encrypt_name_id=enc, encrypt=encrypt,
                            sign_response=sign_response,
                            sign_assertion=sign_assertion)

    def plain(text, **kw):
        """An EncryptedID of text (what a broken IdP encrypts)."""
        return mint(Plaintext(cert, lambda _: text, **dict(VARIANT, **kw)))

    cases = {}
    for d in DIGESTS:
        cases["id-x-mgf1p-%s" % d] = mint(key="rsa-oaep-mgf1p", digest=d, mgf=None)
        for m in DIGESTS:
            cases["id-x-oaep-%s-mgf1%s" % (d, m)] = mint(digest=d, mgf=m)
    cases["id-x-oaep-label"] = mint(label=b"mod_replay_sp label")
    for a in AES:
        cases["id-x-%s" % a] = mint(data=a)
    for ki in ("cert", "issuer-serial", "subject-name", "key-name"):
        cases["id-x-ki-%s" % ki] = mint(key_info=ki)
    cases["id-x-others"] = mint(others=(other_cert,), key_info="cert")
    cases["id-x-peer"] = mint(key_placement="sibling", key_info="cert")
    # the other engines: xmlsec1 (rsa-oaep-mgf1p, SHA-1), Lasso's own
    cases["id-x-xmlsec1"] = mint(tidp.Encryption(cert, data="aes256-cbc"))
    cases["id-x-lasso"] = mint(cert)
    # the signatures around it: a signed Response, the assertion unsigned;
    # both; the assertion inside an EncryptedAssertion
    cases["id-x-response-signed"] = mint(sign_response=True, sign_assertion=False)
    cases["id-x-both-signed"] = mint(sign_response=True)
    cases["id-x-in-encrypted-assertion"] = mint(encrypt=tidp.Encryption(
        cert, **VARIANT))
    cases["id-x-qualified"] = plain(tidp.name_id_xml(
        "alice", tidp.NAMEID_UNSPECIFIED, {"NameQualifier": IDP,
                                           "SPNameQualifier": SP}))
    # refused before anything is decrypted
    cases["id-r-rsa-1_5"] = mint(key="rsa-1_5", digest=None, mgf=None)
    cases["id-r-mgf1p-mgf1sha256"] = mint(key="rsa-oaep-mgf1p", mgf="sha256")
    md5 = "http://www.w3.org/2001/04/xmldsig-more#md5"
    cases["id-r-digest-md5"] = mint(IdOutput(cert, lambda x: x.replace(
        tidp.OAEP_DIGESTS["sha256"], md5, 1), **VARIANT))
    cases["id-r-aes-unknown"] = mint(IdOutput(cert, lambda x: x.replace(
        tidp.DATA_ALGORITHMS["aes128-gcm"], tidp.XENC11_NS + "aes128-ctr", 1),
        **VARIANT))
    cases["id-r-too-many-keys"] = mint(others=(other_cert,) * 4)
    # the signature checked first: the ciphertext changed after signing
    good = mint()
    cases["id-r-signature-broken"] = last_cipher_value(
        good, lambda v: ("B" if v[0] != "B" else "C") + v[1:])
    # with AES-GCM what it holds is said
    cases["id-r-gcm-base-id"] = plain(
        '<saml:BaseID xmlns:saml="%s">alice</saml:BaseID>' % tidp.SAML_NS)
    cases["id-r-gcm-two-name-ids"] = plain(NAME_ID + NAME_ID)
    cases["id-r-gcm-empty"] = plain(tidp.name_id_xml("", None))
    cases["id-r-gcm-comment"] = plain(NAME_ID.replace(">alice<", ">al<!-- -->ice<"))
    cases["id-r-gcm-too-large"] = plain(tidp.name_id_xml("a" * 5000))
    # what does not decrypt: one refusal per data mode
    for mode, data in (("gcm", "aes128-gcm"), ("cbc", "aes128-cbc")):
        for c in tidp.CORRUPTIONS:
            if (c, mode) in (("tag", "cbc"), ("padding", "gcm")):
                continue
            cases["id-u-%s-%s" % (mode, c)] = mint(data=data, corrupt=c)
        cases["id-u-%s-wrong-key" % mode] = mint(data=data, cert_path=other_cert)
        cases["id-u-%s-wrong-cert" % mode] = mint(data=data, cert_path=other_cert,
                                                  key_info="cert")
        cases["id-u-%s-not-base64" % mode] = mint(IdOutput(
            cert, lambda x: last_cipher_value(x, lambda v: v[:-3]),
            **dict(VARIANT, data=data)))
        cases["id-u-%s-iv-only" % mode] = mint(IdOutput(
            cert, lambda x, n=12 if mode == "gcm" else 16: last_cipher_value(
                x, lambda v: base64.b64encode(os.urandom(n)).decode()),
            **dict(VARIANT, data=data)))
        cases["id-u-%s-base-id" % mode] = plain(
            '<saml:BaseID xmlns:saml="%s">alice</saml:BaseID>' % tidp.SAML_NS,
            data=data)
    return cases


def main(out, dtd_port, groups):
    os.makedirs(os.path.join(out, "cases"), exist_ok=True)
    key, cert = tidp.make_keypair(out, "sp", "rsp unit sp")
    idp = tidp.TestIdP(os.path.join(out, "idp"), entity_id=IDP)
    rogue = (tidp.TestIdP(os.path.join(out, "rogue"), entity_id=IDP)
             if {"responses", "logout"} & groups else None)
    with open(idp.metadata_path) as f, open(os.path.join(out, "idp-metadata.xml"), "w") as g:
        g.write(f.read())
    cases = {}
    if "responses" in groups:
        cases.update(response_cases(idp, rogue, dtd_port))
    if "encrypted" in groups:
        cases.update(encrypted_cases(out, idp, cert, dtd_port))
    if "variants" in groups:
        cases.update(variant_cases(out, idp, cert))
    if "ids" in groups:
        cases.update(encrypted_id_cases(out, idp, cert))
    for name, xml in cases.items():
        with open(os.path.join(out, "cases", name + ".b64"), "w") as f:
            f.write(b64(xml))
    if "logout" in groups:
        logout_requests(out, idp, rogue, cert)
    if "metadata" in groups:
        metadata_cases(out, idp)


def metadata_cases(out, idp):
    """A federation's aggregate holding the unit IdP, signed by a
    federation key (md/fed.crt), and each way it must be refused:
    md/NAME.xml."""
    import datetime
    d = os.path.join(out, "md")
    os.makedirs(d, exist_ok=True)
    fkey, fcert = tidp.make_keypair(d, "fed", "rsp unit federation")
    okey, ocert = tidp.make_keypair(d, "other", "rsp unit other")
    with open(idp.metadata_path) as f:
        entity = re.sub(r"<\?xml[^>]*\?>\s*", "", f.read())
    entity_id_attr = entity.replace("<md:EntityDescriptor ", '<md:EntityDescriptor ID="_e1" ', 1)
    now = datetime.datetime.now(datetime.timezone.utc)

    def until(days):
        return (now + datetime.timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def agg(valid_until="+7", inner=entity, rid="_fed1", extra="", attrs=""):
        vu = ' validUntil="%s"' % until(int(valid_until)) if valid_until else ""
        return ('<md:EntitiesDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" '
                'ID="%s" Name="urn:unit:federation"%s%s>%s%s</md:EntitiesDescriptor>'
                % (rid, vu, attrs, extra, inner))

    def sign(xml, **kw):
        return tidp.sign_metadata(xml, fkey, fcert, **kw)

    good = sign(agg())
    cases = {
        "good": good,
        "good-entity": tidp.sign_metadata(
            entity_id_attr.replace("<md:EntityDescriptor ",
                                   '<md:EntityDescriptor validUntil="%s" ' % until(3), 1),
            fkey, fcert),
        # a cacheDuration on the root (test_rsp_md_source.c)
        "good-cache": sign(agg(attrs=' cacheDuration=" PT6H "')),
        "tampered": good.replace("idp.unit.example", "idp.unlt.example", 1),
        "other-key": tidp.sign_metadata(agg(), okey, ocert),
        "sha1": sign(agg(), signature_method="rsa-sha1"),
        "unsigned": agg(),
        "doctype": '<!DOCTYPE md:EntitiesDescriptor [<!ENTITY x "y">]>' + good,
        "no-valid-until": sign(agg(valid_until=None)),
        "expired": sign(agg(valid_until="-1")),
        "too-long": sign(agg(valid_until="60")),
        # the signature covers an inner element, not the root
        "wrapped-reference": sign(agg(inner=entity_id_attr), reference="#_e1"),
        # a signed aggregate inside an unsigned one, beside another entity
        "wrapped-inside": agg(inner=good.replace("_fed1", "_fed2") + entity_id_attr,
                              rid="_outer"),
        "two-signatures": re.sub(r"(<ds:Signature .*?</ds:Signature>)", r"\1\1", good,
                                 count=1, flags=re.S),
        # (its signature broken too: the ID is given after signing)
        "duplicate-id": sign(agg(inner=entity_id_attr)).replace('ID="_e1"', 'ID="_fed1"', 1),
        "deep": sign(agg(extra="<md:Extensions>%s%s</md:Extensions>"
                         % ("<x:a xmlns:x='urn:x'>" * 70, "</x:a>" * 70))),
    }
    for name, xml in cases.items():
        with open(os.path.join(d, name + ".xml"), "w") as f:
            f.write(xml)


def response_cases(idp, rogue, dtd_port):
    """Responses with a plaintext assertion, signed by the IdP or not,
    each named for what it is."""
    def mint(who=idp, **kw):
        return who.mint_xml(SP, ACS, **kw)

    cases = {}
    # accepted: each signature alone, or both
    cases["good-both-signed"] = mint()
    cases["good-assertion-signed"] = mint(sign_response=False)
    cases["good-response-signed"] = mint(sign_assertion=False)
    # signatures
    cases["unsigned"] = mint(sign_response=False, sign_assertion=False)
    cases["another-key"] = mint(who=rogue)
    cases["broken-signature"] = base64.b64decode(
        tidp.TestIdP.tamper(b64(mint(sign_response=False)))).decode()
    # how many assertions
    cases["two-assertions"] = mint(assertions=2)
    cases["zero-assertions"] = mint(assertions=0)
    # signature wrapping, on a response whose assertion alone is signed
    base = mint(sign_response=False, name_id="alice")
    signed = one(ASSERTION, base)
    sid = re.search(r'\bID="([^"]*)"', signed).group(1)
    evil = evil_copy(signed, "_evil0123456789abcdef")
    cases["xsw-evil-before"] = base.replace(signed, evil + signed)
    cases["xsw-evil-after"] = base.replace(signed, signed + evil)
    cases["xsw-evil-inside"] = base.replace(
        signed, re.sub(r"(</saml:Issuer>)", r"\1" + evil.replace("\\", "\\\\"), signed,
                       count=1))
    # Extensions where the schema puts it: after the Response's Issuer
    moved = base.replace(signed, evil, 1)
    cases["xsw-signed-in-extensions"] = moved.replace(
        "</saml:Issuer>", "</saml:Issuer><samlp:Extensions>%s</samlp:Extensions>"
        % signed, 1)
    cases["xsw-signed-in-object"] = base.replace(
        signed, evil.replace("</saml:Issuer>",
                             '</saml:Issuer><Signature xmlns="%s"><Object>%s</Object>'
                             "</Signature>" % (DSIG, signed), 1))
    cases["xsw-duplicate-id"] = base.replace(signed, evil_copy(signed, sid) + signed)
    # the signed NameID's value, whatever comments and text nodes split it
    dotted = mint(sign_response=False, name_id="alice.admin@example.org")
    cases["nameid-comment"] = dotted.replace(
        ">alice.admin@example.org<", ">alice<!-- a comment -->.admin@example.org<", 1)
    # DOCTYPE: internal entities, an external DTD (never fetched)
    plain = mint(sign_response=False)
    body = plain.split("?>", 1)[1] if plain.startswith("<?xml") else plain
    cases["doctype-entity"] = (
        '<!DOCTYPE samlp:Response [<!ENTITY who "alice">]>' + body).replace(
        ">alice<", ">&who;<", 1)
    cases["doctype-external"] = (
        '<!DOCTYPE samlp:Response SYSTEM "http://127.0.0.1:%d/evil.dtd">' % dtd_port) + body
    # checks after the signatures
    cases["wrong-audience"] = mint(audience="https://other-sp.example/saml")
    cases["wrong-destination"] = mint(destination="https://other-sp.example/saml/acs")
    cases["expired"] = mint(issue_instant_offset=-900, not_before_offset=-930,
                            not_on_or_after_offset=-600, scd_not_on_or_after_offset=-600)
    cases["window-too-long"] = mint(not_on_or_after_offset=7200,
                                    scd_not_on_or_after_offset=7200)
    # AD FS without a NameID rule: the user only in an attribute
    cases["no-name-id"] = mint(name_id=None, attributes={
        "upn": ["alice@example.org"]})
    cases["empty-name-id"] = mint(name_id="", attributes={
        "upn": ["alice@example.org"]})
    # scoped attributes: the unit IdP's metadata declares example.org
    eppn, affiliation = ("urn:oid:1.3.6.1.4.1.5923.1.1.1.6",
                         "urn:oid:1.3.6.1.4.1.5923.1.1.1.9")
    cases["scoped-foreign"] = mint(attributes={
        "mail": ["mallory@evil.example"], eppn: ["mallory@evil.example"]})
    cases["scoped-mixed"] = mint(attributes={
        eppn: ["alice@example.org"],
        affiliation: ["staff@evil.example", "member@example.org"]})
    # Any Response: libxml2 2.9 checks an element's attributes pairwise;
    # the depth, on an element outside the signed assertion (Extensions)
    many = " ".join('a%d=""' % i for i in range(DECRYPTED_MAX_ATTRIBUTES + 1))
    for name, inner in (
            ("response-many-attributes", "<x %s/>" % many),
            # Response 1, Extensions 2: DECRYPTED_MAX_DEPTH + 1 is the limit
            ("response-deep-over", nested(DECRYPTED_MAX_DEPTH)),
            ("response-deep-at-limit", nested(DECRYPTED_MAX_DEPTH - 1))):
        cases[name] = base.replace(
            "</saml:Issuer>", "</saml:Issuer><samlp:Extensions>%s</samlp:Extensions>"
            % inner, 1)
    return cases


def resign(url, key_path, digest, alg_uri):
    """The query of url re-signed with key_path (openssl), SigAlg alg_uri."""
    keep = [p for p in tidp.redirect_query(url).split("&")
            if not p.startswith(("SigAlg=", "Signature="))]
    signed = "&".join(keep + ["SigAlg=" + urllib.parse.quote(alg_uri, safe="")])
    sig = subprocess.run(["openssl", "dgst", "-" + digest, "-sign", key_path],
                         input=signed.encode(), capture_output=True, check=True,
                         timeout=30).stdout
    return "%s&Signature=%s" % (signed, urllib.parse.quote(
        base64.b64encode(sig).decode(), safe=""))


def with_attributes(url, n):
    """The query with n more attributes on the root element of its
    SAMLRequest, SigAlg and Signature kept (no longer its signature: the
    message is refused before the signature is looked at)."""
    import zlib
    parts = tidp.redirect_query(url).split("&")
    for i, part in enumerate(parts):
        name, value = part.split("=", 1)
        if name != "SAMLRequest":
            continue
        xml = zlib.decompress(base64.b64decode(urllib.parse.unquote(value)),
                              -15).decode()
        xml = re.sub(r"^(<samlp:LogoutRequest\b)", lambda m: m.group(1) + "".join(
            ' a%d=""' % j for j in range(n)), xml, count=1)
        c = zlib.compressobj(9, zlib.DEFLATED, -15)
        raw = c.compress(xml.encode()) + c.flush()
        parts[i] = "SAMLRequest=" + urllib.parse.quote(
            base64.b64encode(raw).decode(), safe="")
    return "&".join(parts)


def logout_requests(out, idp, rogue, cert):
    os.makedirs(os.path.join(out, "logout"), exist_ok=True)
    md = tidp.sp_metadata(SP, ACS, cert, slo_url=SLO)
    url, _ = idp.logout_request_url(md, "alice", session_index="_s1",
                                    relay_state="/bye")
    q = {
        "good": tidp.redirect_query(url),
        "good-sha512": resign(url, idp.key_path, "sha512",
                              "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512"),
        "sha1": resign(url, idp.key_path, "sha1",
                       "http://www.w3.org/2000/09/xmldsig#rsa-sha1"),
        "tampered": tidp.redirect_query(tidp.TestIdP.tamper_redirect(url)),
        "unsigned": tidp.redirect_query(idp.logout_request_url(md, "alice", sign=False)[0]),
        "another-key": tidp.redirect_query(rogue.logout_request_url(md, "alice")[0]),
        "no-saml-request": "RelayState=%2Fbye",
        "many-attributes": with_attributes(url, DECRYPTED_MAX_ATTRIBUTES + 1),
        # the NameID as Lasso and Shibboleth IdPs send it
        "good-qualified": tidp.redirect_query(idp.logout_request_url(
            md, "alice", session_index="_s1", relay_state="/bye",
            qualifiers={"NameQualifier": idp.entity_id, "SPNameQualifier": SP,
                        "SPProvidedID": "alice-at-sp"})[0]),
        "good-encrypted": tidp.redirect_query(idp.logout_request_url(
            tidp.sp_metadata(SP, ACS, cert, slo_url=SLO, enc_cert_path=cert), "alice", session_index="_s1", relay_state="/bye",
            encrypt_name_id=True, qualifiers={"NameQualifier": idp.entity_id})[0]),
    }
    # EncryptedIDs as the field encrypts them (python3-cryptography): OAEP
    # with SHA-256 (Sweden Connect), XML Encryption 1.1 rsa-oaep with
    # MGF1-SHA256 (Keycloak), and what does not decrypt (one refusal)
    md_enc = tidp.sp_metadata(SP, ACS, cert, slo_url=SLO, enc_cert_path=cert)
    other_key, other_cert = tidp.make_keypair(out, "logout-other", "another sp")

    def enc_q(**kw):
        enc = tidp.Encryption(kw.pop("cert_path", cert), **dict(VARIANT, **kw))
        return tidp.redirect_query(idp.logout_request_url(
            md_enc, "alice", session_index="_s1", relay_state="/bye",
            encrypt_name_id=enc, qualifiers={"NameQualifier": idp.entity_id})[0])

    q.update({
        "good-encrypted-mgf1p-sha256": enc_q(key="rsa-oaep-mgf1p", mgf=None),
        "good-encrypted-oaep-sha256": enc_q(),
        "good-encrypted-aes256-cbc": enc_q(data="aes256-cbc", key_info="cert"),
        "encrypted-rsa-1_5": enc_q(key="rsa-1_5", digest=None, mgf=None),
        "encrypted-gcm-tag": enc_q(corrupt="tag"),
        "encrypted-gcm-truncate": enc_q(corrupt="truncate"),
        "encrypted-gcm-key": enc_q(corrupt="key"),
        "encrypted-gcm-wrong-key": enc_q(cert_path=other_cert),
        "encrypted-cbc-padding": enc_q(data="aes128-cbc", corrupt="padding"),
        "encrypted-cbc-wrong-key": enc_q(data="aes128-cbc", cert_path=other_cert),
    })
    # HTTP-POST: the SAMLRequest form value (the RelayState is the test's)
    md_post = tidp.sp_metadata(SP, ACS, cert, slo_url=SLO, enc_cert_path=cert).replace(
        "<md:AssertionConsumerService",
                         '<md:SingleLogoutService Binding="%s" Location="%s"/>\n'
                         "    <md:AssertionConsumerService"
                         % (tidp.BINDING_POST, SLO), 1)
    def post(who=idp, **kw):
        return who.logout_request_post(md_post, "alice", session_index="_s1",
                                       relay_state="/bye", **kw)[1]["SAMLRequest"]
    good = post()
    xml = base64.b64decode(good).decode()
    q.update({
        "post-good": good,
        "post-good-encrypted": post(encrypt_name_id=True, qualifiers={
            "NameQualifier": idp.entity_id}),
        "post-good-encrypted-mgf1p-sha256": post(encrypt_name_id=tidp.Encryption(
            cert, **dict(VARIANT, key="rsa-oaep-mgf1p", mgf=None)), qualifiers={
            "NameQualifier": idp.entity_id}),
        "post-good-encrypted-oaep-sha256": post(encrypt_name_id=tidp.Encryption(
            cert, **VARIANT), qualifiers={"NameQualifier": idp.entity_id}),
        "post-encrypted-gcm-tag": post(encrypt_name_id=tidp.Encryption(
            cert, **dict(VARIANT, corrupt="tag"))),
        "post-encrypted-cbc-wrong-key": post(encrypt_name_id=tidp.Encryption(
            other_cert, **dict(VARIANT, data="aes128-cbc"))),
        "post-tampered": base64.b64encode(
            xml.replace(">alice<", ">bob<").encode()).decode(),
        "post-unsigned": post(sign=False),
        "post-another-key": post(rogue),
        "post-not-base64": "%%% not base64 %%%",
        "post-not-logout-request": base64.b64encode(
            xml.replace("LogoutRequest", "AuthnRequest").encode()).decode(),
    })
    for name, query in q.items():
        with open(os.path.join(out, "logout", name + ".txt"), "w") as f:
            f.write(query)


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3, 4):
        raise SystemExit(__doc__)
    chosen = set(sys.argv[3].split(",")) if len(sys.argv) == 4 else set(GROUPS)
    if not chosen <= set(GROUPS):
        raise SystemExit("make_saml_cases: unknown group(s) %s (known: %s)"
                         % (", ".join(sorted(chosen - set(GROUPS))), ", ".join(GROUPS)))
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) >= 3 else 9, chosen)
