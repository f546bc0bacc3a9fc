"""No leak per request: one httpd process (-X) under valgrind serves many
sign-ins (unsolicited and SP-initiated), protected requests, replays,
refusals, logouts with their LogoutRequest/LogoutResponse, IdP-initiated
logouts, and encrypted sign-ins with the decryption refusals. Every block valgrind
reports as definitely lost must come from one-time start-up (Lasso's own
initialisation); none may come from request handling. Any invalid read or
write fails the test too."""

import os
import re
import shutil
import subprocess
import urllib.parse

import pytest

import common
import http_client
import httpd_fleet
import stores
from common import HarnessError
from http_client import post_acs, session_cookie
from httpd_fleet import Httpd

pytestmark = [
    pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed"),
    pytest.mark.skipif(bool(os.environ.get("RSP_HTTPD_PRELOAD")),
                       reason="valgrind cannot run a sanitizer build"),
]

ROUNDS = 12


def leak_records(log):
    """Each 'definitely lost' record of a valgrind log, as its text."""
    records, cur = [], None
    for line in log.splitlines():
        body = re.sub(r"^==\d+== ?", "", line)
        if "definitely lost in loss record" in body:
            cur = [body]
            records.append(cur)
        elif cur is not None and body.strip():
            cur.append(body)
        else:
            cur = None
    return ["\n".join(r) for r in records]


def harness_idp_request(saml_request):
    import rsp_testidp
    return rsp_testidp.parse_redirect_authn_request(saml_request)


def local(url, base):
    u = urllib.parse.urlsplit(url)
    return base + u.path + "?" + u.query


def start_under_valgrind(workdir, name, module_so, store_url, sp_config, server_extra=""):
    """One httpd -X under valgrind on store_url: (the Httpd, its process,
    the valgrind log's path), once it listens."""
    h = Httpd(os.path.join(workdir, name), name, modules=[("replay_sp_module", module_so)],
              log_level="warn replay_sp:info", threads=4, start_servers=1)
    h.body = httpd_fleet.sp_conf_body(store_url, sp_config, server_extra)
    h.write_file("index.html", "<html><body>under valgrind</body></html>\n")
    h.write_config()
    vg_log = os.path.join(h.root, "logs", "valgrind.log")
    proc = subprocess.Popen(
        ["valgrind", "--leak-check=full", "--errors-for-leak-kinds=definite",
         "--keep-debuginfo=yes",
         "--num-callers=40", "--log-file=" + vg_log, httpd_fleet.APACHE2, "-X", "-f", h.conf_path],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        cwd=h.root)
    try:
        common.wait_for(lambda: common.port_open(h.port), 120, interval=0.5,
                        what="httpd under valgrind")
    except HarnessError:
        common.terminate(proc, 120)
        raise
    return h, proc, vg_log


def unsolicited_rounds(h, idp, sp_config, n):
    """n sign-ins, each with a protected page, its replay and a refusal:
    their statuses."""
    acs = h.base_url + httpd_fleet.ENDPOINT + "/acs"
    outcomes = []
    for _ in range(n):
        b64 = idp.mint(sp_config["entity_id"], acs)
        r = post_acs(acs, b64, relay_state="/index.html", timeout=60)
        cookie, _ = session_cookie(r)
        g = http_client.get(h.base_url + "/index.html", cookie=cookie, timeout=60)
        again = post_acs(acs, b64, timeout=60)
        bad = post_acs(acs, idp.mint(sp_config["entity_id"], acs, audience="urn:other"),
                       timeout=60)
        outcomes.append((r.status_code, g.status_code, again.status_code, bad.status_code))
    return outcomes


def sp_initiated_flows(h, idp, sp_config, n):
    """n SP-initiated sign-ins with their logouts, and n IdP-initiated
    logouts of other sessions: their statuses."""
    acs = h.base_url + httpd_fleet.ENDPOINT + "/acs"
    md = http_client.get(h.base_url + httpd_fleet.ENDPOINT + "/metadata", timeout=60).text
    flows = []
    for i in range(n):
        # SP-initiated sign-in, then logout with the IdP's answer
        start = http_client.get(h.base_url + "/index.html?i=%d" % i, timeout=60)
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(start.headers["Location"]).query)
        rid, _ = harness_idp_request(q["SAMLRequest"][0])
        r = post_acs(acs, idp.mint(sp_config["entity_id"], acs, in_response_to=rid,
                                   session_index="SI-%d" % i),
                     relay_state=http_client.relay_of(start), timeout=60)
        cookie, _ = session_cookie(r)
        out = http_client.get(h.base_url + httpd_fleet.ENDPOINT + "/logout", cookie=cookie,
                              timeout=60)
        back, _ = idp.answer_logout_request(md, out.headers["Location"])
        done = http_client.get(local(back, h.base_url), timeout=60)
        # IdP-initiated logout of another session
        r2 = post_acs(acs, idp.mint(sp_config["entity_id"], acs, session_index="SJ-%d" % i),
                      timeout=60)
        url, _ = idp.logout_request_url(md, "alice", session_index="SJ-%d" % i)
        slo = http_client.get(local(url, h.base_url), timeout=60)
        flows.append((start.status_code, r.status_code, out.status_code, done.status_code,
                      r2.status_code, slo.status_code))
    return flows


def assert_no_leak_per_request(vg_log):
    with open(vg_log) as f:
        log = f.read()
    assert "ERROR SUMMARY" in log, "valgrind did not finish its report"
    invalid = [l for l in log.splitlines() if re.search(r"Invalid (read|write|free)|Mismatched free", l)]
    assert not invalid, "\n".join(invalid[:20])
    per_request = [r for r in leak_records(log) if "lasso_init" not in r]
    assert not per_request, "memory lost outside start-up:\n\n" + "\n\n".join(per_request[:5])


@pytest.mark.expect_log("replay_refused", "check_refused")
def test_no_leak_per_request_under_valgrind(workdir, module_so, redis, sp_config, idps):
    h, proc, vg_log = start_under_valgrind(workdir, "valgrind", module_so, redis.url, sp_config)
    try:
        acs = h.base_url + httpd_fleet.ENDPOINT + "/acs"
        idp = idps["idp1"]
        assert unsolicited_rounds(h, idp, sp_config, ROUNDS) == [(303, 200, 403, 400)] * ROUNDS
        assert sp_initiated_flows(h, idp, sp_config, ROUNDS // 2) == \
            [(302, 303, 302, 302, 303, 302)] * (ROUNDS // 2)
        # encrypted assertions (both shapes), and the decryption refusals:
        # another key, RSA-1.5, a broken Response signature
        import rsp_testidp
        enc = rsp_testidp.Encryption(sp_config["cert_file"], data="aes256-gcm")
        other = rsp_testidp.Encryption(idp.cert_path, data="aes128-cbc")
        pkcs1 = rsp_testidp.Encryption(sp_config["cert_file"], data="aes128-cbc", key="rsa-1_5")
        encrypted = []
        for i in range(ROUNDS // 2):
            shape = dict(sign_response=True, sign_assertion=False) if i % 2 else \
                dict(sign_response=False, sign_assertion=True)
            b64 = idp.mint(sp_config["entity_id"], acs, encrypt=enc, **shape)
            r = post_acs(acs, b64, relay_state="/index.html", timeout=60)
            again = post_acs(acs, b64, timeout=60)
            wrong = post_acs(acs, idp.mint(sp_config["entity_id"], acs, encrypt=other),
                             timeout=60)
            oracle = post_acs(acs, idp.mint(sp_config["entity_id"], acs, encrypt=pkcs1),
                              timeout=60)
            broken = post_acs(acs, rsp_testidp.TestIdP.tamper_response_signature(
                idp.mint(sp_config["entity_id"], acs, encrypt=enc)), timeout=60)
            encrypted.append((r.status_code, again.status_code, wrong.status_code,
                              oracle.status_code, broken.status_code))
        assert encrypted == [(303, 403, 400, 400, 400)] * (ROUNDS // 2)
        # the key transports the module unwraps itself (python3-cryptography):
        # OAEP SHA-256 / MGF1-SHA256 with a label, peer keys, another
        # recipient first; a bad GCM tag, bad CBC padding, RSA-1.5
        crypt = lambda **kw: rsp_testidp.Encryption(  # noqa: E731
            sp_config["cert_file"], engine="cryptography", key="rsa-oaep", digest="sha256",
            **kw)
        variants = []
        for i in range(ROUNDS // 2):
            shape = dict(sign_response=True, sign_assertion=False) if i % 2 else \
                dict(sign_response=False, sign_assertion=True)
            good = crypt(mgf="sha256", label=b"l", data="aes192-cbc" if i % 2 else "aes256-gcm",
                         key_placement="sibling" if i % 3 else "keyinfo",
                         others=(idp.cert_path,) if i % 3 == 1 else ())
            b64 = idp.mint(sp_config["entity_id"], acs, encrypt=good, **shape)
            r = post_acs(acs, b64, relay_state="/index.html", timeout=60)
            tag = post_acs(acs, idp.mint(sp_config["entity_id"], acs,
                                         encrypt=crypt(corrupt="tag")), timeout=60)
            pad = post_acs(acs, idp.mint(sp_config["entity_id"], acs, encrypt=crypt(
                data="aes128-cbc", corrupt="padding", key_info="issuer-serial")), timeout=60)
            variants.append((r.status_code, tag.status_code, pad.status_code))
        assert variants == [(303, 400, 400)] * (ROUNDS // 2)
    finally:
        common.terminate(proc, 120)
    assert_no_leak_per_request(vg_log)


@pytest.fixture(scope="module")
def leak_tls_cluster(workdir):
    from tls_stores import Pki, tls_cluster
    pki = Pki(os.path.join(workdir, "leak-pki"))
    c = tls_cluster(os.path.join(workdir, "leak-tls-cluster"), pki)
    c.pki = pki
    yield c
    c.stop()


@pytest.mark.expect_log("replay_refused", "check_refused")
def test_no_leak_per_request_on_a_tls_cluster(workdir, module_so, leak_tls_cluster, sp_config,
                                              idps):
    """The same on rediss+cluster://: TLS connections and sessions, the
    cluster's map read and a slot's MOVED followed, per request nothing
    lost."""
    c = leak_tls_cluster
    h, proc, vg_log = start_under_valgrind(
        workdir, "valgrind-cluster", module_so, c.tls_url, sp_config,
        'ReplaySPStoreTLSCAFile "%s"\nReplaySPStoreTimeout 5000\n' % c.pki.ca)
    try:
        idp = idps["idp1"]
        n = ROUNDS // 2
        assert unsolicited_rounds(h, idp, sp_config, n) == [(303, 200, 403, 400)] * n
        # the slot of the NameID's logout index (every sign-in appends to
        # it) moved to another master: MOVED
        slot = c.slot_of(stores.logout_index_key(idp.entity_id, "alice"))
        src = c.owner(slot)
        c.migrate(slot, src, next(m for m in c.masters() if m is not src))
        moved = c.errorstats("MOVED")
        assert unsolicited_rounds(h, idp, sp_config, n) == [(303, 200, 403, 400)] * n
        assert sp_initiated_flows(h, idp, sp_config, 3) == [(302, 303, 302, 302, 303, 302)] * 3
        assert c.errorstats("MOVED") > moved
    finally:
        common.terminate(proc, 120)
    assert_no_leak_per_request(vg_log)
