"""The fleet's single-use cases with two more independent signers
(tests/signers, see its README): responses made by samlify (npm; signed
by xml-crypto, encrypted by @authenio/xml-encryption) and signed by the
JDK's own XML-DSig (javax.xml.crypto.dsig), neither of which shares code
with Lasso, xmlsec1 or libxml2 on the signing side.

Shapes (``SHAPES``): samlify's Response-, Assertion- and both-signed
responses, plaintext, AES-128-GCM and AES-256-CBC (key transport
rsa-oaep-mgf1p, SHA-1), always encrypt-then-sign; the JDK's Response-,
Assertion- and both-signed (saml2p:/saml2: markup, ds: signatures,
9-digit fractional seconds, base64 wrapped with &#13;), Microsoft Entra
ID's shape (default namespaces, an unprefixed Signature, assertion only,
a 65-minute window) and a Response signed without KeyInfo.

For every shape, on Redis and one memcached: a fresh response signs in
once (the session on every replica, the claim under the signer's issuer
and assertion ID, for the window plus the skew), then 30 sequential
posts through the balancer and to each replica directly are refused;
50 concurrent identical posts through the balancer make one session;
the same assertion in a new Response is a replay; a twin with one byte
changed after signing is refused with its check= and claims nothing,
while the untouched response still signs in. Per signer: the first
responses of every shape are still refused after 60 other sign-ins.
samlify's RSA-1.5 key transport is refused by design.

A fleet of its own per backend (module scope), trusting only the two
signers; each signer is one long-lived child process for the whole file.
"""

import concurrent.futures
import os
import sys
import threading
import time

import pytest

import common
import httpd_fleet
from common import HarnessError
from http_client import get, post_acs, session_cookie, set_cookie_headers
from httpd_fleet import TAGS, Fleet, bad_log_lines
from stores import claim_key

SIGNERS_DIR = os.path.join(common.REPO, "tests", "signers")
if SIGNERS_DIR not in sys.path:
    sys.path.insert(0, SIGNERS_DIR)
import signers  # noqa: E402 (after the sys.path line above)

PAGE = "/app/page.html"
SKEW = 60           # ReplaySPClockSkew's default
SEQUENTIAL = 30
BURST = 50
CHURN = 60

pytestmark = pytest.mark.backends("redis", "memcached1")

ENV_HEADERS = 'Header always set X-Mail "expr=%{reqenv:REPLAYSP_mail}"'


# --------------------------------------------------------------------------
# the shapes
# --------------------------------------------------------------------------

class Shape:
    """One kind of response from one signer."""

    def __init__(self, signer, name, **kw):
        self.signer = signer
        self.name = name
        self.kw = kw
        self.id = "%s-%s" % (signer, name)

    @property
    def encrypted(self):
        return bool(self.kw.get("data"))

    @property
    def response_signed(self):
        if self.signer == "samlify":
            return self.kw["sign"] in ("response", "both")
        return "R" in signers.JDK_SHAPES[self.name]["flags"]

    @property
    def assertion_signed(self):
        if self.signer == "samlify":
            return self.kw["sign"] in ("assertion", "both")
        return "A" in signers.JDK_SHAPES[self.name]["flags"]

    def expected(self):
        """What signers.shape_of must say of this shape's responses."""
        if self.signer == "samlify":
            enc = None
            if self.encrypted:
                enc = {"data": {"aes128-gcm": "http://www.w3.org/2009/xmlenc11#aes128-gcm",
                                "aes256-cbc": "http://www.w3.org/2001/04/xmlenc#aes256-cbc"}
                       [self.kw["data"]],
                       "key": "http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p",
                       "digest": "http://www.w3.org/2000/09/xmldsig#sha1"}
            # samlify's assertion signature is inside the ciphertext
            return {"response_signed": self.response_signed,
                    "assertion_signed": None if enc else self.assertion_signed,
                    "keyinfo": True, "encrypted": enc,
                    "signature_prefixes": ["ds:"] if self.response_signed or not enc else []}
        flags = signers.JDK_SHAPES[self.name]["flags"]
        return {"response_signed": "R" in flags, "assertion_signed": "A" in flags,
                "keyinfo": "K" in flags, "encrypted": None,
                "signature_prefixes": ["ds:"] if "P" in flags else [""]}


SAMLIFY_SHAPES = [Shape("samlify", "%s-%s" % (sign, data or "plain"), sign=sign, data=data)
                  for sign in ("response", "assertion", "both")
                  for data in (None, "aes128-gcm", "aes256-cbc")]
JDK_SHAPES = [Shape("jdk", name) for name in signers.JDK_SHAPES]
SHAPES = SAMLIFY_SHAPES + JDK_SHAPES
BY_SIGNER = {"samlify": SAMLIFY_SHAPES, "jdk": JDK_SHAPES}


class Minted:
    def __init__(self, b64, assertion_id, issuer, window_end, shape):
        self.b64 = b64
        self.assertion_id = assertion_id
        self.issuer = issuer
        self.window_end = window_end
        self.shape = shape

    @property
    def key(self):
        return claim_key(self.issuer, self.assertion_id)


def mint(idps, fleet, shape, assertion_id=None, name_id="alice", attributes=None):
    """A response of ``shape`` for the fleet's SP (samlify reads the SP's
    metadata as the module serves it)."""
    aid = assertion_id or signers.random_id()
    now = time.time()
    if shape.signer == "samlify":
        idp = idps["samlify"]
        b64 = idp.mint(fleet.sp_metadata, assertion_id=aid, name_id=name_id, now=now,
                       attributes=attributes, **shape.kw)
        end = now + 300
    else:
        idp = idps["jdk"]
        b64 = idp.mint(fleet.entity_id, fleet.acs_url, shape=shape.name, assertion_id=aid,
                       name_id=name_id, now=now, attributes=attributes)
        end = now + (3600 if signers.JDK_SHAPES[shape.name]["markup"] == "entra" else 300)
    return Minted(b64, aid, idp.entity_id, end, shape)


def again_in_a_new_response(idps, fleet, m):
    """The same assertion in a new Response: the JDK's signed Assertion
    byte for byte in a new envelope (re-signed when the shape signs the
    Response); samlify's minted again with the same assertion ID (a new
    Response ID, new signatures, a new ciphertext)."""
    if m.shape.signer == "jdk":
        return idps["jdk"].rewrap(m.b64, m.shape.name)
    return mint(idps, fleet, m.shape, assertion_id=m.assertion_id).b64


def tampered_twin(m):
    """(base64, check) of a copy with one byte changed after signing, and
    the check= that refuses it: the NameID of a plaintext assertion
    (covered by every signature); the Response's IssueInstant around an
    encrypted assertion (covered by the Response signature, read before
    anything is decrypted); the EncryptedKey's ciphertext when only the
    assertion inside is signed (the session key no longer unwraps)."""
    if not m.shape.encrypted:
        return signers.tamper_text(m.b64, "NameID"), "signature"
    if m.shape.response_signed:
        return signers.tamper_attribute(m.b64, "Response", "IssueInstant"), "signature"
    return signers.tamper_cipher_value(m.b64, "key"), "decrypt"


# --------------------------------------------------------------------------
# fixtures
# --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def signer_idps(workdir):
    """Both signers, one child process each for the whole module."""
    d = common.make_dir(os.path.join(workdir, "signers"))
    out = {}
    try:
        out["samlify"] = signers.SamlifyIdP(os.path.join(d, "samlify"))
        out["jdk"] = signers.JdkIdP(os.path.join(d, "jdk"))
    except signers.SignerError as e:
        for idp in out.values():
            idp.close()
        pytest.fail("a signer did not start: %s" % e, pytrace=False)
    sys.stderr.write("\nsigners: samlify (node) up in %.2f s; JDK signer compiled in %.2f s, "
                     "up in %.2f s\n" % (out["samlify"].startup_s, out["jdk"].compile_s,
                                         out["jdk"].startup_s))
    yield out
    for idp in out.values():
        idp.close()


@pytest.fixture(scope="module")
def signers_fleet(request, workdir, module_so, store, sp_config, signer_idps):
    """Three replicas + balancer trusting the two signers; stopped at the
    end of the module (finalizer, by PID)."""
    sp = dict(sp_config, default_idp=signer_idps["samlify"].entity_id)
    sp["idp_metadata"] = [signer_idps["samlify"].metadata_path,
                          signer_idps["jdk"].metadata_path]
    f = Fleet(os.path.join(workdir, "signers", "fleet-" + store.name), module=module_so,
              store_url=store.url, sp=sp, server_extra=store.server_extra,
              location_extra=ENV_HEADERS)
    request.addfinalizer(f.stop)
    offsets = {h: h.log_size() for h in f.instances}
    try:
        f.start()
    except HarnessError as e:
        pytest.fail("the signers' fleet did not start:\n%s" % e, pytrace=False)
    bad = {h.name: bad_log_lines(h._log_since(offsets[h]).splitlines()) for h in f.instances}
    bad = {k: v for k, v in bad.items() if v}
    if bad:
        pytest.fail("unexpected error-log lines at the signers' fleet start-up:\n%s" % bad,
                    pytrace=False)
    r = get(f.public + httpd_fleet.ENDPOINT + "/metadata")
    assert r.status_code == 200, (r.status_code, r.text[:300])
    f.sp_metadata = r.text
    return f


@pytest.fixture
def sfleet(signers_fleet, store):
    """The signers' fleet with an empty, healthy store and fresh log marks."""
    store.heal()
    if not all(h.running() for h in signers_fleet.instances):
        pytest.fail("a signers' fleet instance is not running", pytrace=False)
    signers_fleet.mark_logs()
    yield signers_fleet
    store.heal()


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------

def log_lines(fleet, tag):
    return [l for lines in fleet.new_log_lines().values() for l in lines if tag in l]


def refused_everywhere(fleet, b64, expected=403):
    """POST b64 to every replica directly and through the balancer: each
    ``expected``, never a session cookie."""
    for name, base in fleet.targets():
        r = post_acs(base, b64, relay_state=PAGE)
        assert r.status_code == expected, (name, r.status_code, r.text[:300])
        assert session_cookie(r)[0] is None, (name, set_cookie_headers(r))


# --------------------------------------------------------------------------
# tests
# --------------------------------------------------------------------------

@pytest.mark.expect_log("replay_refused")
@pytest.mark.parametrize("shape", SHAPES, ids=[s.id for s in SHAPES])
def test_signs_in_once_then_refused_sequentially_everywhere(sfleet, store, signer_idps, shape):
    m = mint(signer_idps, sfleet, shape, name_id="alice-" + shape.id,
             attributes={"mail": "alice@example.org"})
    assert signers.shape_of(m.b64) == shape.expected()

    t0 = time.time()
    r = post_acs(sfleet.public, m.b64, relay_state=PAGE)
    assert r.status_code == 303, (r.status_code, r.text[:300], log_lines(sfleet, "RSP"))
    cookie, _ = session_cookie(r)
    assert cookie
    assert store.claim_keys() == [m.key]
    assert len(store.session_keys()) == 1
    expected_ttl = m.window_end - t0 + SKEW
    ttl = store.ttl_seconds(m.key)
    assert expected_ttl - 10 <= ttl <= expected_ttl + 1 + store.expiry_margin_s, (ttl,
                                                                                expected_ttl)
    for h in sfleet.replicas:
        g = get(h.base_url + PAGE, cookie=cookie)
        assert g.status_code == 200, (h.name, g.status_code)
        assert g.headers.get("X-RSP-Replica") == h.name
        # two IdPs trusted: REMOTE_USER is qualified with the issuer
        assert g.headers.get("X-RSP-User") == httpd_fleet.qualified_user(
            m.issuer, sfleet.entity_id, "alice-" + shape.id), h.name
        assert g.headers.get("X-Mail") == "alice@example.org", h.name

    # 30 more posts, one after the other, through the balancer and to each
    # replica directly in turn
    targets = [sfleet.public] + [h.base_url for h in sfleet.replicas]
    codes = []
    for i in range(SEQUENTIAL):
        rr = post_acs(targets[i % len(targets)], m.b64, relay_state=PAGE)
        codes.append(rr.status_code)
        assert session_cookie(rr)[0] is None, (i, set_cookie_headers(rr))
    assert codes == [403] * SEQUENTIAL, codes
    assert store.claim_keys() == [m.key]
    assert len(store.session_keys()) == 1
    assert sfleet.count_in_logs(TAGS["replay_refused"]) == SEQUENTIAL
    assert sfleet.count_in_logs(TAGS["sign_in_accepted"]) == 1


@pytest.mark.expect_log("replay_refused")
@pytest.mark.parametrize("shape", SHAPES, ids=[s.id for s in SHAPES])
def test_concurrent_identical_posts_one_wins(sfleet, store, signer_idps, shape):
    m = mint(signer_idps, sfleet, shape)
    barrier = threading.Barrier(BURST, timeout=30)

    def one(_):
        barrier.wait()
        r = post_acs(sfleet.public, m.b64, relay_state=PAGE, timeout=60)
        return r.status_code, session_cookie(r)[0], r.headers.get("X-RSP-Replica")

    with concurrent.futures.ThreadPoolExecutor(max_workers=BURST) as ex:
        res = list(ex.map(one, range(BURST), timeout=120))
    statuses = sorted(s for s, _, _ in res)
    assert statuses == [303] + [403] * (BURST - 1), statuses
    assert all(c for s, c, _ in res if s == 303)
    assert not [c for s, c, _ in res if s != 303 and c]
    assert {rep for _, _, rep in res} == {"replica1", "replica2", "replica3"}
    assert store.claim_keys() == [m.key]
    assert len(store.session_keys()) == 1
    assert sfleet.count_in_logs(TAGS["replay_refused"]) == BURST - 1


@pytest.mark.expect_log("replay_refused")
@pytest.mark.parametrize("shape", SHAPES, ids=[s.id for s in SHAPES])
def test_same_assertion_in_a_new_response_is_a_replay(sfleet, store, signer_idps, shape):
    """The re-wrapped response first (it signs in: it is valid), then the
    original, on each replica and through the balancer: a replay."""
    m = mint(signer_idps, sfleet, shape)
    again = again_in_a_new_response(signer_idps, sfleet, m)
    assert again != m.b64
    assert signers.shape_of(again) == shape.expected()
    r = post_acs(sfleet.replicas[0].base_url, again, relay_state=PAGE)
    assert r.status_code == 303, (r.status_code, r.text[:300], log_lines(sfleet, "RSP"))
    assert store.claim_keys() == [m.key]
    refused_everywhere(sfleet, m.b64)
    refused_everywhere(sfleet, again)
    assert len(store.session_keys()) == 1
    assert sfleet.count_in_logs(TAGS["replay_refused"]) == 2 * len(sfleet.targets())


@pytest.mark.expect_log("check_refused")
@pytest.mark.parametrize("shape", SHAPES, ids=[s.id for s in SHAPES])
def test_tampered_twin_refused_with_its_check(sfleet, store, signer_idps, shape):
    m = mint(signer_idps, sfleet, shape)
    bad, check = tampered_twin(m)
    assert signers.one_byte_apart(m.b64, bad)
    for name, base in [("balancer", sfleet.public),
                       (sfleet.replicas[0].name, sfleet.replicas[0].base_url)]:
        r = post_acs(base, bad, relay_state=PAGE)
        assert r.status_code == 400, (name, r.status_code, r.text[:300])
        assert session_cookie(r)[0] is None, name
    assert store.claim_keys() == [] and store.session_keys() == []
    lines = log_lines(sfleet, TAGS["check_refused"])
    assert len(lines) == 2, lines
    assert all("check=%s:" % check in l for l in lines), (check, lines)
    if shape.encrypted and check == "signature":
        # the Response signature is verified before anything is decrypted
        assert all("nothing was decrypted" in l for l in lines), lines
    # the untouched response was never claimed, and signs in
    r = post_acs(sfleet.public, m.b64, relay_state=PAGE)
    assert r.status_code == 303, (r.status_code, r.text[:300])
    assert store.claim_keys() == [m.key]


@pytest.mark.expect_log("replay_refused")
@pytest.mark.parametrize("signer", sorted(BY_SIGNER))
def test_first_responses_still_refused_after_churn(sfleet, store, signer_idps, signer):
    shapes = BY_SIGNER[signer]
    firsts = [mint(signer_idps, sfleet, s, name_id="first") for s in shapes]
    for m in firsts:
        assert post_acs(sfleet.public, m.b64, relay_state=PAGE).status_code == 303, m.shape.id
    for i in range(CHURN):
        m = mint(signer_idps, sfleet, shapes[i % len(shapes)], name_id="user%d" % i)
        r = post_acs(sfleet.public, m.b64, relay_state=PAGE)
        assert r.status_code == 303, (i, m.shape.id, r.status_code)
    assert len(store.claim_keys()) == len(shapes) + CHURN
    sfleet.mark_logs()
    for m in firsts:
        refused_everywhere(sfleet, m.b64)
        assert store.exists(m.key), m.shape.id
    assert len(store.session_keys()) == len(shapes) + CHURN
    assert sfleet.count_in_logs(TAGS["replay_refused"]) == len(firsts) * len(sfleet.targets())


@pytest.mark.expect_log("check_refused")
def test_samlify_rsa_1_5_key_transport_refused(sfleet, store, signer_idps):
    """samlify's other key transport, RSA-1.5 (a decryption oracle), is
    refused before anything is decrypted, nothing claimed."""
    b64 = signer_idps["samlify"].mint(sfleet.sp_metadata, sign="response", data="aes128-gcm",
                                      key="rsa-1_5")
    assert signers.shape_of(b64)["encrypted"]["key"] == "http://www.w3.org/2001/04/xmlenc#rsa-1_5"
    for name, base in [("balancer", sfleet.public),
                       (sfleet.replicas[0].name, sfleet.replicas[0].base_url)]:
        r = post_acs(base, b64, relay_state=PAGE)
        assert r.status_code == 400, (name, r.status_code, r.text[:300])
    assert store.claim_keys() == [] and store.session_keys() == []
    lines = log_lines(sfleet, TAGS["check_refused"])
    assert len(lines) == 2 and all("check=encryption-algorithm:" in l for l in lines), lines


@pytest.mark.expect_log("check_refused")
def test_samlify_sign_then_encrypt_refused(sfleet, store, signer_idps):
    """Without encryptThenSign (samlify's default), the Response is signed
    around the plaintext assertion, which is then encrypted: the signature
    no longer covers what is sent and the response is refused, nothing
    decrypted or claimed (the same response encrypt-then-signed signs in:
    test_signs_in_once_then_refused_sequentially_everywhere)."""
    b64 = signer_idps["samlify"].mint(sfleet.sp_metadata, sign="response", data="aes128-gcm",
                                      encrypt_then_sign=False)
    shape = signers.shape_of(b64)
    assert shape["response_signed"] and shape["encrypted"]
    for name, base in [("balancer", sfleet.public),
                       (sfleet.replicas[0].name, sfleet.replicas[0].base_url)]:
        r = post_acs(base, b64, relay_state=PAGE)
        assert r.status_code == 400, (name, r.status_code, r.text[:300])
    assert store.claim_keys() == [] and store.session_keys() == []
    lines = log_lines(sfleet, TAGS["check_refused"])
    assert len(lines) == 2 and all("check=signature:" in l for l in lines), lines
    assert all("nothing was decrypted" in l for l in lines), lines
