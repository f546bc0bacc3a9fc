"""Encrypted assertions through the fleet (three replicas behind the
balancer), on every store backend: the algorithms and shapes IdPs use are
accepted exactly once fleet-wide; what must not be decrypted is refused
before anything is, with nothing claimed; key rollover; SHA-1.

The encrypted responses are made by the test IdP with the xmlsec1 command
line (every algorithm), with Lasso's own encryption (AES-CBC) and with
python3-cryptography (the key transports xmlsec1 1.2.37 cannot unwrap:
OAEP with SHA-2 digests and MGFs, labels; AES-192; the recipient's key
named by issuer and serial or KeyName; peer keys; other recipients);
pysaml2's are in test_interop.py. Without ReplaySPEncryptionKeyFile (the
fleet's default configuration) the SP's signing pair decrypts.
"""

import concurrent.futures
import os
import threading

import pytest

import common
import httpd_fleet
from http_client import get, post_acs, session_cookie

PAGE = "/app/page.html"
BURST = 50

DATA_ALGS = ("aes128-gcm", "aes256-gcm", "aes128-cbc", "aes256-cbc")
# Shibboleth IdP: a signed Response around an unsigned encrypted assertion.
# Microsoft Entra: an unsigned Response around an encrypted signed assertion.
SHAPES = {
    "signed-response": dict(sign_response=True, sign_assertion=False),
    "signed-assertion": dict(sign_response=False, sign_assertion=True),
}


@pytest.fixture(scope="session")
def enc_pairs(workdir, testidp):
    """Key pairs of their own: enc1 and enc2 (the rollover pairs) and
    other (a key the SP never has)."""
    d = common.make_dir(os.path.join(workdir, "enc-keys"))
    out = {}
    for name in ("enc1", "enc2", "other"):
        key, cert = testidp.make_keypair(d, name, "rsp test " + name)
        os.chmod(key, 0o644)   # test key; children run as www-data
        out[name] = (key, cert)
    return out


def encryption(testidp, cert, data="aes128-gcm", key="rsa-oaep-mgf1p", engine="xmlsec1"):
    return testidp.Encryption(cert, data=data, key=key, engine=engine)


# What the field sends that Debian 12's xmlsec1 cannot unwrap, and shapes
# around it (engine "cryptography"); other: the certificate of "other" (an
# EncryptedKey for another recipient first).
VARIANTS = {
    # Sweden Connect / eIDAS OpenSAML: rsa-oaep-mgf1p with SHA-256, AES-GCM
    "mgf1p-sha256": dict(key="rsa-oaep-mgf1p", digest="sha256", data="aes128-gcm"),
    # ITfoxtec's field sample: xmlenc11#rsa-oaep, SHA-256, MGF1-SHA256
    "oaep-sha256-mgf1sha256": dict(key="rsa-oaep", digest="sha256", mgf="sha256",
                                   data="aes256-gcm"),
    "oaep-sha512-mgf1sha384-label": dict(key="rsa-oaep", digest="sha512", mgf="sha384",
                                         label=b"urn:example:label", data="aes192-gcm"),
    "oaep-sha224-mgf1sha512": dict(key="rsa-oaep", digest="sha224", mgf="sha512",
                                   data="aes192-cbc"),
    # AD FS: aes256-cbc, rsa-oaep-mgf1p SHA-1, the key named by issuer and serial
    "adfs-issuer-serial": dict(key="rsa-oaep-mgf1p", digest="sha1", data="aes256-cbc",
                               key_info="issuer-serial"),
    "key-name": dict(key="rsa-oaep", digest="sha384", key_info="key-name",
                     data="aes128-cbc", cbc_padding="random"),
    "peer": dict(key="rsa-oaep", digest="sha256", mgf="sha256", key_placement="sibling",
                 key_info="none"),
    "two-recipients": dict(key="rsa-oaep", digest="sha256", key_info="cert", others="other"),
}


def variant(testidp, cert, enc_pairs, **kw):
    if kw.get("others") == "other":
        kw["others"] = (enc_pairs["other"][1],)
    return testidp.Encryption(cert, engine="cryptography", **kw)


def claims(store):
    return store.claim_keys()


def accepted_once(fleet, store, m):
    """m signs in through the balancer (303 and a session cookie, its claim
    under issuer + assertion ID), then is refused on every replica and the
    balancer (403)."""
    r = post_acs(fleet.public, m.b64, relay_state=PAGE)
    assert r.status_code == 303, (r.status_code, r.text[:300])
    cookie, _ = session_cookie(r)
    assert cookie
    assert store.exists(m.key), "claim %s not found; claims: %r" % (m.key, claims(store))
    page = get(fleet.public + PAGE, cookie=cookie)
    assert page.status_code == 200, page.status_code
    for name, base in fleet.targets():
        again = post_acs(base, m.b64, relay_state=PAGE)
        assert again.status_code == 403, (name, again.status_code)
        assert "Set-Cookie" not in again.headers
    return cookie


def refused(fleet, store, b64, check):
    """400 with RSP01004 check=<check>, and nothing claimed."""
    before = fleet.count_in_logs("check=%s:" % check)
    r = post_acs(fleet.public, b64, relay_state=PAGE)
    assert r.status_code == 400, (r.status_code, r.text[:300])
    assert "Set-Cookie" not in r.headers
    assert fleet.count_in_logs("check=%s:" % check) == before + 1, \
        "no check=%s line: %r" % (check, fleet.new_log_lines())
    assert claims(store) == [], claims(store)
    assert store.session_keys() == []


def log_lines_with(fleet, needle):
    return [line for lines in fleet.new_log_lines().values() for line in lines
            if needle in line]


# --------------------------------------------------------------------------
# accepted once, every algorithm and shape
# --------------------------------------------------------------------------

@pytest.mark.expect_log("replay_refused")
@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("data", DATA_ALGS)
def test_encrypted_accepted_once_fleet_wide(fleet, saml, store, sp_keys, testidp, data, shape):
    m = saml.mint(name_id="enc-" + data, encrypt=encryption(testidp, sp_keys[1], data=data),
                  **SHAPES[shape])
    cookie = accepted_once(fleet, store, m)
    r = get(fleet.public + PAGE, cookie=cookie)
    assert r.headers.get("X-RSP-User") == saml.user("enc-" + data)


@pytest.mark.expect_log("replay_refused")
@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("data", ("aes128-cbc", "aes256-cbc"))
def test_encrypted_by_lasso_accepted_once(fleet, saml, store, sp_keys, testidp, data, shape):
    m = saml.mint(encrypt=encryption(testidp, sp_keys[1], data=data, engine="lasso"),
                  **SHAPES[shape])
    accepted_once(fleet, store, m)


@pytest.mark.expect_log("replay_refused")
@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_field_key_transports_accepted_once(fleet, saml, store, sp_keys, enc_pairs, testidp,
                                            name, shape):
    """Encrypted by python3-cryptography as the field does where xmlsec1
    1.2.37 cannot unwrap the key: signed in once fleet-wide, as the user
    the assertion names."""
    m = saml.mint(name_id="v-" + name, encrypt=variant(testidp, sp_keys[1], enc_pairs,
                                                       **VARIANTS[name]),
                  **SHAPES[shape])
    cookie = accepted_once(fleet, store, m)
    r = get(fleet.public + PAGE, cookie=cookie)
    assert r.headers.get("X-RSP-User") == saml.user("v-" + name)


# EncryptedIDs in the assertion's Subject, as the field encrypts them
# (python3-cryptography), decrypted by the module itself once the
# signatures are verified: Sweden Connect's OAEP with SHA-256, Keycloak's
# xmlenc11#rsa-oaep with MGF1-SHA256.
ID_VARIANTS = {
    "mgf1p-sha256": dict(key="rsa-oaep-mgf1p", digest="sha256", data="aes128-gcm"),
    "oaep-sha256-mgf1sha256": dict(key="rsa-oaep", digest="sha256", mgf="sha256",
                                   data="aes256-cbc", key_info="cert"),
}


@pytest.mark.expect_log("replay_refused")
@pytest.mark.parametrize("shape", sorted(SHAPES) + ["encrypted-assertion"])
@pytest.mark.parametrize("name", sorted(ID_VARIANTS))
def test_encrypted_id_in_the_subject_signs_in_once(fleet, saml, store, sp_keys, enc_pairs,
                                                   testidp, name, shape):
    """The user is the NameID the EncryptedID holds; signed in once
    fleet-wide (plaintext assertion signed, or the Response; or the
    assertion itself encrypted too)."""
    kw = dict(SHAPES.get(shape, dict(sign_response=False, sign_assertion=True)))
    if shape == "encrypted-assertion":
        kw["encrypt"] = variant(testidp, sp_keys[1], enc_pairs, **ID_VARIANTS[name])
    m = saml.mint(name_id="eid-" + name, encrypt_name_id=variant(
        testidp, sp_keys[1], enc_pairs, **ID_VARIANTS[name]), **kw)
    cookie = accepted_once(fleet, store, m)
    r = get(fleet.public + PAGE, cookie=cookie)
    assert r.headers.get("X-RSP-User") == saml.user("eid-" + name)


@pytest.mark.expect_log("check_refused")
def test_encrypted_id_that_does_not_decrypt_is_one_refusal(fleet, saml, store, sp_keys,
                                                           enc_pairs, testidp):
    """Another SP's key, a changed GCM tag, bad CBC padding: check=decrypt
    with one detail per data mode, nothing claimed; RSA-1.5 refused before
    anything is decrypted."""
    other = enc_pairs["other"][1]
    for data, broken in (("aes128-gcm", (dict(cert=other), dict(corrupt="tag"),
                                         dict(corrupt="key"))),
                         ("aes128-cbc", (dict(cert=other), dict(corrupt="padding"),
                                         dict(corrupt="truncate")))):
        details = set()
        for b in broken:
            b = dict(b)
            cert = b.pop("cert", sp_keys[1])
            m = saml.mint(encrypt_name_id=variant(
                testidp, cert, enc_pairs, key="rsa-oaep", digest="sha256", mgf="sha256",
                data=data, **b), sign_response=False)
            refused(fleet, store, m.b64, "decrypt")
            details |= {line.split("check=decrypt:", 1)[1]
                        for line in log_lines_with(fleet, "check=decrypt:")
                        if "(data %s," % data in line}
        assert len(details) == 1, "\n".join(sorted(details))
    m = saml.mint(encrypt_name_id=variant(testidp, sp_keys[1], enc_pairs, key="rsa-1_5"),
                  sign_response=False)
    refused(fleet, store, m.b64, "encryption-algorithm")


@pytest.mark.expect_log("replay_refused")
def test_encrypted_burst_of_identical_posts_one_session(fleet, saml, store, sp_keys, testidp):
    m = saml.mint(encrypt=encryption(testidp, sp_keys[1], data="aes256-gcm"),
                  sign_response=True, sign_assertion=False)
    barrier = threading.Barrier(BURST, timeout=30)

    def post(_):
        barrier.wait()
        return post_acs(fleet.public, m.b64, relay_state=PAGE).status_code

    with concurrent.futures.ThreadPoolExecutor(max_workers=BURST) as ex:
        codes = list(ex.map(post, range(BURST)))
    assert codes.count(303) == 1, codes
    assert codes.count(403) == BURST - 1, codes
    assert len(store.session_keys()) == 1
    assert claims(store) == [m.key]


@pytest.mark.expect_log("replay_refused")
def test_encrypted_claim_is_the_decrypted_assertions_id_and_window(fleet, saml, store, sp_keys,
                                                                    testidp):
    """The claim key is issuer + the decrypted assertion's ID, and its TTL
    follows the assertion's window exactly as for a plaintext one."""
    m = saml.mint(assertion_id="_enc-ttl-1", scd_not_on_or_after_offset=120,
                  not_on_or_after_offset=300,
                  encrypt=encryption(testidp, sp_keys[1]), sign_response=True,
                  sign_assertion=False)
    accepted_once(fleet, store, m)
    ttl = store.ttl_seconds(m.key)
    # window 120 s + skew 60 s (memcached rounds up to whole seconds, +1)
    assert 170 <= ttl <= 182, ttl


# --------------------------------------------------------------------------
# refused before anything is decrypted, nothing claimed
# --------------------------------------------------------------------------

@pytest.mark.expect_log("check_refused")
def test_rsa_1_5_key_transport_refused(fleet, saml, store, sp_keys, testidp):
    for engine in ("xmlsec1", "lasso"):
        m = saml.mint(encrypt=encryption(testidp, sp_keys[1], data="aes128-cbc", key="rsa-1_5",
                                         engine=engine))
        refused(fleet, store, m.b64, "encryption-algorithm")
    assert log_lines_with(fleet, "rsa-1_5 refused")


@pytest.mark.expect_log("check_refused")
def test_non_aes_data_encryption_refused(fleet, saml, store, sp_keys, testidp):
    m = saml.mint(encrypt=encryption(testidp, sp_keys[1], data="tripledes-cbc"))
    refused(fleet, store, m.b64, "encryption-algorithm")


@pytest.mark.expect_log("check_refused")
def test_unknown_key_transport_parameters_refused(fleet, saml, store, sp_keys, enc_pairs,
                                                  testidp):
    """An OAEP digest or MGF this SP does not know, or an MGF other than
    MGF1-SHA1 with rsa-oaep-mgf1p: refused before anything is decrypted."""
    import base64
    good = saml.mint(encrypt=variant(testidp, sp_keys[1], enc_pairs, key="rsa-oaep",
                                     digest="sha384", mgf="sha256"),
                     sign_response=False, sign_assertion=True)
    xml = base64.b64decode(good.b64).decode()
    assert xml.count(testidp.OAEP_DIGESTS["sha384"]) == 1
    md5 = xml.replace(testidp.OAEP_DIGESTS["sha384"],
                      "http://www.w3.org/2001/04/xmldsig-more#md5")
    refused(fleet, store, base64.b64encode(md5.encode()).decode(), "encryption-algorithm")
    m = saml.mint(encrypt=variant(testidp, sp_keys[1], enc_pairs, key="rsa-oaep-mgf1p",
                                  mgf="sha256"))
    refused(fleet, store, m.b64, "encryption-algorithm")
    assert log_lines_with(fleet, "with MGF mgf1sha256 refused")


# What does not decrypt, per data mode: one status, one check=, one detail.
BROKEN = {
    "aes128-gcm": ("tag", "truncate", "key", "key-size", "label", "wrong-key"),
    "aes256-cbc": ("padding", "truncate", "data", "key", "wrong-key"),
}


@pytest.mark.expect_log("check_refused")
@pytest.mark.parametrize("data", sorted(BROKEN))
def test_what_does_not_decrypt_is_one_refusal(fleet, saml, store, sp_keys, enc_pairs, testidp,
                                              data):
    """A bad GCM tag or CBC padding, a truncated or changed ciphertext, a
    changed wrapped key, a key of another size, another label, another
    SP's key: 400, check=decrypt, and the same detail word for word (no
    oracle); nothing claimed."""
    details = {}
    for how in BROKEN[data]:
        kw = dict(key="rsa-oaep", digest="sha256", mgf="sha256", data=data)
        if how == "wrong-key":
            enc = variant(testidp, enc_pairs["other"][1], enc_pairs, **kw)
        else:
            enc = variant(testidp, sp_keys[1], enc_pairs, corrupt=how, **kw)
        fleet.mark_logs()
        refused(fleet, store, saml.mint(encrypt=enc).b64, "decrypt")
        (line,) = log_lines_with(fleet, "check=decrypt:")
        details[how] = line.split("check=decrypt:", 1)[1].split(" (client ")[0]
    assert len(set(details.values())) == 1, details
    detail = details[BROKEN[data][0]]
    assert data in detail and "rsa-oaep (sha256, mgf1sha256)" in detail, detail
    assert ("AES-CBC is not authenticated" in detail) == data.endswith("-cbc"), detail


@pytest.mark.expect_log("check_refused")
def test_assertion_for_another_key_refused_naming_the_keys_tried(fleet, saml, store, sp_keys,
                                                               enc_pairs, testidp):
    m = saml.mint(encrypt=encryption(testidp, enc_pairs["other"][1], data="aes256-gcm"))
    refused(fleet, store, m.b64, "decrypt")
    line = log_lines_with(fleet, "check=decrypt:")[0]
    # the key tried, by its certificate's fingerprint; the IdP's algorithms
    assert harness_fingerprint(sp_keys[1]) in line, line
    assert "aes256-gcm" in line and "rsa-oaep-mgf1p" in line, line
    with open(sp_keys[0]) as f:
        body = "".join(f.read().split("\n")[1:3])
    assert body not in line, "key material in the log"


@pytest.mark.expect_log("check_refused")
def test_plaintext_assertion_next_to_an_undecryptable_one_refused(fleet, saml, store, sp_keys,
                                                                  enc_pairs, testidp):
    """Lasso would drop the one it cannot decrypt and go on with the other."""
    m = saml.mint(assertions=2, encrypt=(None, encryption(testidp, enc_pairs["other"][1])))
    refused(fleet, store, m.b64, "assertion-count")
    m = saml.mint(assertions=2, encrypt=(encryption(testidp, enc_pairs["other"][1]), None))
    refused(fleet, store, m.b64, "assertion-count")


@pytest.mark.expect_log("check_refused")
def test_two_encrypted_assertions_refused(fleet, saml, store, sp_keys, testidp):
    m = saml.mint(assertions=2, encrypt=encryption(testidp, sp_keys[1]))
    refused(fleet, store, m.b64, "assertion-count")


@pytest.mark.expect_log("check_refused")
def test_unsigned_response_around_unsigned_encrypted_assertion_refused(fleet, saml, store,
                                                                       sp_keys, testidp):
    m = saml.mint(encrypt=encryption(testidp, sp_keys[1]), sign_response=False,
                  sign_assertion=False)
    refused(fleet, store, m.b64, "signature")


@pytest.mark.expect_log("check_refused")
def test_broken_response_signature_refused_before_anything_is_decrypted(fleet, saml, store,
                                                                        sp_keys, testidp):
    """With LogLevel replay_sp:debug every decryption is announced just
    before Lasso is called: the good response's line is there (positive
    control), the broken one never reaches it. (The library logs through
    the server's log configuration: server scope.)"""
    fleet.restart_replicas(server_extra=fleet.server_extra + "\nLogLevel warn replay_sp:debug")
    fleet.mark_logs()
    good = saml.mint(encrypt=encryption(testidp, sp_keys[1]), sign_response=True,
                     sign_assertion=False)
    assert post_acs(fleet.public, good.b64, relay_state=PAGE).status_code == 303
    assert len(log_lines_with(fleet, "decrypting the EncryptedAssertion")) == 1
    store.flush()
    fleet.mark_logs()
    m = saml.mint(encrypt=encryption(testidp, sp_keys[1]), sign_response=True,
                  sign_assertion=False)
    bad = testidp.TestIdP.tamper_response_signature(m.b64)
    refused(fleet, store, bad, "signature")
    assert log_lines_with(fleet, "nothing was decrypted")
    assert log_lines_with(fleet, "decrypting the EncryptedAssertion") == []
    # the same response untampered is fine: the refusal was the signature's
    assert post_acs(fleet.public, m.b64, relay_state=PAGE).status_code == 303


@pytest.mark.expect_log("check_refused")
def test_tampered_encrypted_assertion_refused(fleet, saml, store, sp_keys, testidp):
    """A changed byte of the assertion's ciphertext (the EncryptedData's
    CipherValue, the last one): AES-GCM's tag no longer verifies, so
    nothing decrypts."""
    import base64
    import re
    m = saml.mint(encrypt=encryption(testidp, sp_keys[1], data="aes128-gcm"),
                  sign_response=False, sign_assertion=True)
    xml = base64.b64decode(m.b64).decode()
    values = list(re.finditer(r"<(?:\w+:)?CipherValue>([^<]{40,})<", xml))
    assert len(values) == 2, "EncryptedKey and EncryptedData ciphertexts"
    at = values[-1].start(1) + 20
    flipped = xml[:at] + ("A" if xml[at] != "A" else "B") + xml[at + 1:]
    refused(fleet, store, base64.b64encode(flipped.encode()).decode(), "decrypt")


@pytest.mark.expect_log("replay_refused")
def test_encrypted_key_beside_the_encrypted_data_accepted_once(fleet, saml, store, sp_keys,
                                                              testidp):
    """The EncryptedKey as a sibling of the EncryptedData (SAML core 2.2.4
    allows both places)."""
    enc = testidp.Encryption(sp_keys[1], data="aes256-cbc", key_placement="sibling")
    accepted_once(fleet, store, saml.mint(encrypt=enc))


# --------------------------------------------------------------------------
# SHA-1
# --------------------------------------------------------------------------

@pytest.mark.expect_log("check_refused")
def test_sha1_signatures_refused_by_default(fleet, saml, store, sp_keys, testidp):
    m = saml.mint(signature_method="rsa-sha1")
    refused(fleet, store, m.b64, "weak-signature")
    m = saml.mint(signature_method="rsa-sha1", sign_response=False, sign_assertion=True)
    refused(fleet, store, m.b64, "weak-signature")
    # inside the encryption: found once decrypted
    m = saml.mint(signature_method="rsa-sha1", sign_response=False, sign_assertion=True,
                  encrypt=encryption(testidp, sp_keys[1]))
    refused(fleet, store, m.b64, "weak-signature")
    assert log_lines_with(fleet, "decrypted assertion signature uses rsa-sha1")


@pytest.mark.expect_log("replay_refused", "RSP01039")
def test_sha1_accepted_for_a_named_idp_and_logged(fleet, saml, store, sp_keys, testidp, idps):
    fleet.restart_replicas(location_extra='ReplaySPAllowSHA1 "%s"' % idps["idp1"].entity_id)
    fleet.mark_logs()
    m = saml.mint(signature_method="rsa-sha1")
    accepted_once(fleet, store, m)
    e = saml.mint(signature_method="rsa-sha1", sign_response=False, sign_assertion=True,
                  encrypt=encryption(testidp, sp_keys[1]))
    accepted_once(fleet, store, e)
    # once per message that passed validation with it: the two sign-ins and
    # the four replays of each (refused after validation, at the claim)
    warns = log_lines_with(fleet, "RSP01039")
    assert len(warns) == 2 * (1 + len(fleet.targets())), warns
    assert sum("the Response signature uses rsa-sha1" in w for w in warns) == 5, warns
    assert sum("decrypted assertion signature uses rsa-sha1" in w for w in warns) == 5, warns
    assert all("[warn]" in w or ":warn]" in w for w in warns), warns
    assert idps["idp1"].entity_id in warns[0]


@pytest.mark.expect_log("check_refused")
def test_sha1_allowance_is_per_idp(fleet, saml, store, idps):
    """Allowed for idp2 only: idp1's SHA-1 response is still refused."""
    fleet.restart_replicas(location_extra='ReplaySPAllowSHA1 "%s"' % idps["idp2"].entity_id)
    fleet.mark_logs()
    m = saml.mint(signature_method="rsa-sha1")
    refused(fleet, store, m.b64, "weak-signature")


# --------------------------------------------------------------------------
# key rollover
# --------------------------------------------------------------------------

def harness_fingerprint(cert):
    import subprocess
    out = subprocess.run(["openssl", "x509", "-noout", "-fingerprint", "-sha256", "-in", cert],
                         capture_output=True, text=True, check=True, timeout=30).stdout
    return out.strip().split("=", 1)[1]


def published_encryption_cert(fleet):
    import base64
    import xml.etree.ElementTree as ET
    md = get(fleet.public + httpd_fleet.ENDPOINT + "/metadata")
    assert md.status_code == 200
    root = ET.fromstring(md.content)
    ns = {"md": "urn:oasis:names:tc:SAML:2.0:metadata",
          "ds": "http://www.w3.org/2000/09/xmldsig#"}
    kds = root.findall(".//md:KeyDescriptor[@use='encryption']", ns)
    assert len(kds) == 1
    text = kds[0].find(".//ds:X509Certificate", ns).text
    return base64.b64decode("".join(text.split()))


def cert_der(path):
    import ssl
    with open(path) as f:
        return ssl.PEM_cert_to_DER_cert(f.read())


def rollover_extra(enc_pairs, publish=None):
    lines = []
    for name in ("enc1", "enc2"):
        key, cert = enc_pairs[name]
        lines.append('ReplaySPEncryptionKeyFile "%s"' % key)
        lines.append('ReplaySPEncryptionCertFile "%s"%s' % (cert, " publish" if publish == name
                                                               else ""))
    return "\n".join(lines)


@pytest.mark.backends("redis", "memcached2")
@pytest.mark.expect_log("replay_refused", "check_refused")
def test_key_rollover_both_keys_decrypt_metadata_publishes_one(fleet, saml, store, sp_keys,
                                                                enc_pairs, testidp):
    # default: the signing certificate is published for encryption
    assert published_encryption_cert(fleet) == cert_der(sp_keys[1])
    fleet.restart_replicas(location_extra=rollover_extra(enc_pairs))
    fleet.mark_logs()
    assert published_encryption_cert(fleet) == cert_der(enc_pairs["enc1"][1])
    for name in ("enc1", "enc2"):
        for data in ("aes128-gcm", "aes256-cbc"):
            accepted_once(fleet, store, saml.mint(encrypt=encryption(
                testidp, enc_pairs[name][1], data=data)))
    # with pairs of its own the signing key no longer decrypts
    store.flush()
    m = saml.mint(encrypt=encryption(testidp, sp_keys[1]))
    refused(fleet, store, m.b64, "decrypt")
    line = log_lines_with(fleet, "check=decrypt:")[-1]
    assert harness_fingerprint(enc_pairs["enc1"][1]) in line
    assert harness_fingerprint(enc_pairs["enc2"][1]) in line
    assert harness_fingerprint(sp_keys[1]) not in line
    # step 2 of the rollover: the new pair published, the old one still decrypts
    fleet.restart_replicas(location_extra=rollover_extra(enc_pairs, publish="enc2"))
    fleet.mark_logs()
    assert published_encryption_cert(fleet) == cert_der(enc_pairs["enc2"][1])
    for name in ("enc1", "enc2"):
        accepted_once(fleet, store, saml.mint(encrypt=encryption(testidp, enc_pairs[name][1])))
    # the second key found by what names it, or tried after the first
    for ki in ("issuer-serial", "key-name", "none", "cert"):
        accepted_once(fleet, store, saml.mint(encrypt=variant(
            testidp, enc_pairs["enc2"][1], enc_pairs, key="rsa-oaep", digest="sha256",
            key_info=ki)))
    # plaintext sign-ins are unaffected
    accepted_once(fleet, store, saml.mint())
