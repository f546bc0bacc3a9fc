#!/usr/bin/python3
"""Seeds of the SAML fuzz targets, made by the test IdP (tests/idp).

    /usr/bin/python3 tests/fuzz/gen-saml-corpus.py

Writes, under tests/fuzz/:
  saml/     the fixed key pairs (made once, kept: the seeds are signed with
            them) and the IdP's metadata
  corpus/fuzz_saml_response/   decoded Response XML, minted at FUZZ_MINTED
            (fuzz_saml.h) for the SP https://sp.fuzz.example/saml (some
            with an EncryptedAssertion whose plaintext is not one assertion)
  corpus/fuzz_redirect_sig/    raw HTTP-Redirect queries: the IdP's
            LogoutRequest and LogoutResponse, signed
  corpus/fuzz_decrypt/         decoded Response XML whose assertion
            python3-cryptography encrypted for the SP (each key transport,
            AES mode, way of naming the key, inline and peer keys, other
            recipients, broken ones)
  corpus/fuzz_decrypt_id/      EncryptedIDs of a NameID, encrypted for the
            SP (each key transport, AES mode, way of naming the key, peer
            keys, broken ones)
  corpus/fuzz_xenc/            binary inputs of the primitives' target
            (its header: algorithm, digest, MGF, flags)

Seeds that exist are replaced; the key pairs are kept.
"""
import base64
import os
import random
import subprocess
import sys
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "idp"))

import lasso  # noqa: E402  (Debian's python3-lasso)
import rsp_testidp as tidp  # noqa: E402
from rsp_testidp import Encryption, TestIdP, make_keypair, sp_metadata  # noqa: E402

SP = "https://sp.fuzz.example/saml"
ACS = SP + "/acs"
SLO = SP + "/slo"
IDP = "https://idp.test.example/idp"
MINTED = 1700000000          # FUZZ_MINTED in fuzz_saml.h
SHA1 = "http://www.w3.org/2000/09/xmldsig#rsa-sha1"

SAML = os.path.join(HERE, "saml")
CORPUS = os.path.join(HERE, "corpus")


def write(target, name, text):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "w") as f:
        f.write(text)


def query(url):
    return tidp.redirect_query(url)


def resign(url, key_path, digest, alg_uri):
    """The query re-signed with key_path (openssl), SigAlg alg_uri."""
    q = query(url)
    keep = [p for p in q.split("&")
            if not p.startswith(("SigAlg=", "Signature="))]
    signed = "&".join(keep + ["SigAlg=" + urllib.parse.quote(alg_uri, safe="")])
    sig = subprocess.run(["openssl", "dgst", "-" + digest, "-sign", key_path],
                         input=signed.encode(), capture_output=True,
                         check=True, timeout=30).stdout
    return "%s&Signature=%s" % (
        signed, urllib.parse.quote(base64.b64encode(sig).decode(), safe=""))


class Plaintext(Encryption):
    """Encrypts what change(assertion) makes of the assertion the IdP
    serialised (and signed) on its own: what an attacker holding the SP's
    certificate can send."""

    def __init__(self, cert_path, change):
        super().__init__(cert_path)
        self.change = change

    def encrypt_xmlsec1(self, assertion_xml, recipient=None):
        return super().encrypt_xmlsec1(self.change(assertion_xml), recipient)


def decrypt_id_seeds(sp_crt, other_crt):
    """corpus/fuzz_decrypt_id/: EncryptedIDs of a NameID that
    python3-cryptography (and xmlsec1) encrypted for the SP: each key
    transport, AES mode, way of naming the key, inline and peer keys,
    other recipients, and broken ones."""
    def crypt(**kw):
        return Encryption(kw.pop("cert", sp_crt), engine=kw.pop("engine", "cryptography"),
                          **kw)

    name_id = tidp.name_id_xml("alice", tidp.NAMEID_UNSPECIFIED,
                               {"NameQualifier": IDP, "SPNameQualifier": SP})
    seeds = {
        "mgf1p-sha256": crypt(key="rsa-oaep-mgf1p", digest="sha256"),
        "oaep-sha256-mgf1sha256": crypt(key="rsa-oaep", digest="sha256", mgf="sha256",
                                        data="aes256-gcm"),
        "oaep-sha512-label": crypt(key="rsa-oaep", digest="sha512", mgf="sha384",
                                   label=b"label", data="aes192-cbc"),
        "ki-issuer-serial": crypt(key_info="issuer-serial", data="aes256-cbc"),
        "ki-key-name": crypt(key_info="key-name", key="rsa-oaep"),
        "peer-others": crypt(key_placement="sibling", others=(other_crt,),
                             key_info="cert"),
        "another-sp": crypt(cert=other_crt),
        "rsa-1_5": crypt(key="rsa-1_5"),
        "gcm-tag": crypt(corrupt="tag"),
        "cbc-padding": crypt(data="aes128-cbc", corrupt="padding"),
        "xmlsec1": crypt(engine="xmlsec1", data="aes128-cbc"),
    }
    for name, enc in seeds.items():
        write("fuzz_decrypt_id", name + ".xml", tidp.encrypted_id_xml(enc, name_id, SP))
    write("fuzz_decrypt_id", "base-id.xml", tidp.encrypted_id_xml(
        crypt(), '<saml:BaseID xmlns:saml="%s">alice</saml:BaseID>' % tidp.SAML_NS))


def main():
    os.makedirs(SAML, exist_ok=True)
    idp = TestIdP(SAML, entity_id=IDP, sso_url="https://idp.test.example/idp/sso")
    lock = os.path.join(SAML, ".idp.lock")
    if os.path.exists(lock):
        os.unlink(lock)
    sp_key = os.path.join(SAML, "sp.key")
    sp_crt = os.path.join(SAML, "sp.crt")
    if not (os.path.isfile(sp_key) and os.path.isfile(sp_crt)):
        make_keypair(SAML, "sp", "rsp fuzz sp")

    # ---- responses (decoded XML) ----
    t = "fuzz_saml_response"
    base = dict(now=MINTED, assertion_id="_a1", response_id="_r1",
                session_index="_s1")
    mint = lambda **kw: idp.mint_xml(SP, ACS, **dict(base, **kw))  # noqa: E731
    write(t, "signed-both.xml", mint())
    write(t, "signed-assertion.xml", mint(sign_response=False))
    write(t, "signed-response.xml", mint(sign_assertion=False))
    write(t, "attributes.xml", mint(
        sign_response=False, in_response_to="_req1",
        session_not_on_or_after_offset=3600,
        attributes={"mail": ["alice@example.org"],
                    "eduPersonAffiliation": ["member", "staff"]}))
    enc = Encryption(sp_crt)
    write(t, "encrypted.xml", mint(encrypt=enc, sign_response=False))
    write(t, "encrypted-response-signed.xml",
          mint(encrypt=enc, sign_assertion=False))
    write(t, "encrypted-cbc.xml", mint(
        encrypt=Encryption(sp_crt, data="aes256-cbc"), sign_response=False))
    # what a decryption yields, checked before Lasso reads it: two
    # assertions in one EncryptedAssertion, and one nested past the limit
    write(t, "encrypted-two-assertions.xml", mint(
        encrypt=Plaintext(sp_crt, lambda a: a + a), sign_response=False))
    write(t, "encrypted-deep.xml", mint(
        encrypt=Plaintext(sp_crt, lambda a: a.replace(
            "</saml:Issuer>", "</saml:Issuer>" + "<a>" * 70 + "</a>" * 70, 1)),
        sign_response=False))
    # the data's ciphertext by reference (xmlsec would fetch the URI)
    good = mint(encrypt=enc, sign_response=False)
    i = good.rfind("<xenc:CipherData>")
    j = good.index("</xenc:CipherData>", i) + len("</xenc:CipherData>")
    write(t, "encrypted-cipher-reference.xml", good[:i] + (
        '<xenc:CipherData><xenc:CipherReference URI="http://127.0.0.1:9/c"/>'
        "</xenc:CipherData>") + good[j:])
    write(t, "sha1.xml", mint(sign_response=False, signature_method="rsa-sha1"))
    write(t, "two-assertions.xml", mint(sign_response=False, assertions=2))
    write(t, "unsigned.xml", mint(sign_response=False, sign_assertion=False))
    write(t, "expired.xml", mint(sign_response=False, not_on_or_after_offset=-300,
                                 scd_not_on_or_after_offset=-300))
    write(t, "other-audience.xml", mint(sign_response=False,
                                        audience="https://other.example/sp"))
    tampered = TestIdP.tamper(base64.b64encode(mint().encode()).decode())
    write(t, "tampered.xml", base64.b64decode(tampered).decode())

    # ---- the decryption path on its own ----
    t = "fuzz_decrypt"
    other_key, other_crt = os.path.join(SAML, "other.key"), os.path.join(SAML, "other.crt")
    if not (os.path.isfile(other_key) and os.path.isfile(other_crt)):
        make_keypair(SAML, "other", "rsp fuzz other sp")

    def crypt(**kw):
        return Encryption(kw.pop("cert", sp_crt), engine="cryptography", **kw)

    seeds = {
        "mgf1p-sha1": crypt(key="rsa-oaep-mgf1p", digest="sha1"),
        "mgf1p-sha256-label": crypt(key="rsa-oaep-mgf1p", digest="sha256",
                                    label=b"label"),
        "oaep-sha512-mgf1sha384": crypt(key="rsa-oaep", digest="sha512",
                                        mgf="sha384", data="aes256-gcm"),
        "oaep-default": crypt(key="rsa-oaep", data="aes192-cbc"),
        "cbc-random-padding": crypt(key="rsa-oaep", digest="sha256",
                                    data="aes128-cbc", cbc_padding="random"),
        "ki-issuer-serial": crypt(key_info="issuer-serial", data="aes256-cbc"),
        "ki-subject-name": crypt(key_info="subject-name"),
        "ki-key-name": crypt(key_info="key-name", key="rsa-oaep", mgf="sha256"),
        "ki-none": crypt(key_info="none", data="aes192-gcm"),
        "peer": crypt(key_placement="sibling", key="rsa-oaep", digest="sha224"),
        "others": crypt(others=(other_crt,), key_info="cert"),
        "peer-others": crypt(key_placement="sibling", others=(other_crt,),
                             key_info="issuer-serial"),
        "another-sp": crypt(cert=other_crt),
        "rsa-1_5": crypt(key="rsa-1_5"),
        "gcm-tag": crypt(corrupt="tag"),
        "cbc-padding": crypt(data="aes128-cbc", corrupt="padding"),
        "key-size": crypt(corrupt="key-size"),
        "label": crypt(corrupt="label", key="rsa-oaep"),
    }
    for name, enc in seeds.items():
        write(t, name + ".xml", mint(encrypt=enc, sign_response=False))
    write(t, "response-signed.xml", mint(encrypt=crypt(key="rsa-oaep", digest="sha256"),
                                         sign_assertion=False))
    write(t, "both-signed.xml", mint(encrypt=crypt(key="rsa-oaep", digest="sha256")))
    # and through the whole response path (Lasso reading what was decrypted)
    write("fuzz_saml_response", "encrypted-oaep-sha256.xml", mint(
        encrypt=crypt(key="rsa-oaep", digest="sha256", mgf="sha256"),
        sign_response=False))
    write("fuzz_saml_response", "encrypted-oaep-response-signed.xml", mint(
        encrypt=crypt(key="rsa-oaep-mgf1p", digest="sha256", data="aes256-cbc"),
        sign_assertion=False))

    decrypt_id_seeds(sp_crt, other_crt)

    # ---- the primitives: header, key, IV, label, padding, plaintext ----
    t = "fuzz_xenc"
    rnd = random.Random(1700000000)
    for i in range(12):
        head = bytes([i % 6, i % 5, (i * 2) % 5, (1 | 8) if i % 2 else (2 | 4 | 8),
                      rnd.randrange(256), 16 + i])
        body = bytes(rnd.randrange(256) for _ in range(32 + 16 + 16 + i + 16))
        plain = ("<saml:Assertion ID='_%d'/>" % i).encode() * (i + 1)
        d = os.path.join(CORPUS, t)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "seed-%02d.bin" % i), "wb") as f:
            f.write(head + body + plain)

    # ---- HTTP-Redirect logout messages (raw queries) ----
    t = "fuzz_redirect_sig"
    md = sp_metadata(SP, ACS, sp_crt, slo_url=SLO)
    url, _ = idp.logout_request_url(md, "alice", session_index="_s1",
                                    relay_state="/bye?a=1&b")
    write(t, "logout-request.txt", query(url))
    url2, _ = idp.logout_request_url(md, "bob", session_index=["_s1", "_s2"],
                                     name_id_format="")
    write(t, "logout-request-two-indexes.txt", query(url2))
    url3, _ = idp.logout_request_url(md, "carol")
    write(t, "logout-request-no-index.txt", query(url3))
    write(t, "logout-request-sha1.txt", resign(url, idp.key_path, "sha1", SHA1))
    write(t, "logout-request-sha512.txt", resign(
        url, idp.key_path, "sha512",
        "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512"))
    write(t, "logout-request-tampered.txt", query(TestIdP.tamper_redirect(url)))
    unsigned, _ = idp.logout_request_url(md, "alice", sign=False)
    write(t, "logout-request-unsigned.txt", query(unsigned))
    # HTTP-POST: "POST\n" and the form (the SP's metadata with an HTTP-POST
    # SingleLogoutService, and an encryption key for the EncryptedID)
    md_post = sp_metadata(SP, ACS, sp_crt, slo_url=SLO, enc_cert_path=sp_crt).replace(
        "<md:AssertionConsumerService",
        '<md:SingleLogoutService Binding="%s" Location="%s"/>\n'
        "    <md:AssertionConsumerService" % (tidp.BINDING_POST, SLO), 1)
    for name, kw in (("logout-request-post.txt", {}),
                     ("logout-request-post-encrypted.txt",
                      dict(encrypt_name_id=True, qualifiers={"NameQualifier": IDP})),
                     ("logout-request-post-unsigned.txt", dict(sign=False))):
        _, fields, _ = idp.logout_request_post(md_post, "alice", session_index="_s1",
                                               relay_state="/bye", **kw)
        write(t, name, "POST\n" + urllib.parse.urlencode(fields))

    # The IdP's answers to a LogoutRequest of the SP (python3-lasso plays it).
    with open(sp_key) as f:
        key_pem = f.read()
    with open(sp_crt) as f:
        crt_pem = f.read()
    server = lasso.Server.newFromBuffers(md, key_pem, None, crt_pem)
    server.signatureMethod = lasso.SIGNATURE_METHOD_RSA_SHA256
    server.addProviderFromBuffer(lasso.PROVIDER_ROLE_IDP, idp.metadata)
    login = lasso.Login(server)
    login.processAuthnResponseMsg(idp.mint(SP, ACS, name_id="alice",
                                           session_index="_s1"))
    login.acceptSso()
    session = login.session.dump()
    for name, status in (("logout-response.txt", tidp.STATUS_SUCCESS),
                         ("logout-response-responder.txt",
                          tidp.STATUS_RESPONDER)):
        logout = lasso.Logout(server)
        logout.setSessionFromDump(session)
        logout.initRequest(IDP, lasso.HTTP_METHOD_REDIRECT)
        logout.msgRelayState = "/home"
        logout.buildRequestMsg()
        back, _ = idp.answer_logout_request(md, logout.msgUrl, status)
        write(t, name, query(back))
        if status == tidp.STATUS_SUCCESS:
            write(t, "logout-response-sha1.txt",
                  resign(back, idp.key_path, "sha1", SHA1))


if __name__ == "__main__":
    main()
