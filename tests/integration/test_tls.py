"""TLS to the store: rediss:// and memcaches:// against a real
redis-server and a real memcached with TLS listeners, certificates made by a
throwaway CA (openssl; tls_stores.py). Each store also listens in
plaintext, for the tests' own client only: the module is given the TLS
port alone.

What is shown: sign-ins and replays over TLS on both backends (on two
replicas); a certificate from another CA, and a valid certificate for
another name (DNS or IP), refused (503 and the monitor's alarm, with the
reason); mutual TLS given when the server requires it; a store that stalls
in the handshake answered with 503 within the timeout; bad TLS settings
refused at configtest; connections reused, and a new connection resuming
the TLS session.
"""

import os
import re
import subprocess
import threading
import time

import pytest

import common
import httpd_fleet
import redis_nodes
from common import HarnessError, free_port
from http_client import post_acs, session_cookie
from httpd_fleet import TAGS, Httpd, sp_conf_body
from idp_tools import Saml
from test_fleet import PAGE
from tls_stores import Pki, StallingServer, TlsMemcached, TlsRedis, tls_cluster

TIMEOUT_MS = 500
ALARM = {"unreachable": "RSP02008", "reachable": "RSP02009"}
TLS_DEBUG = "TLS connection ("


# --------------------------------------------------------------------------
# fixtures: one PKI, the TLS stores, one two-replica fleet
# --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pki(workdir):
    return Pki(os.path.join(workdir, "tls-pki"))


@pytest.fixture(scope="module")
def tls_redis(workdir, pki):
    r = TlsRedis(os.path.join(workdir, "tls-redis"), pki.server, pki.ca)
    r.start()
    yield r
    r.stop()


@pytest.fixture(scope="module")
def tls_memcached(workdir, pki):
    m = TlsMemcached(os.path.join(workdir, "tls-memcached"), pki.server)
    m.start()
    yield m
    m.stop()


def tls_extra(ca=None, cert=None, key=None, debug=False, monitor=False):
    lines = ["ReplaySPStoreTimeout %d" % TIMEOUT_MS]
    if ca:
        lines.append('ReplaySPStoreTLSCAFile "%s"' % ca)
    if cert:
        lines.append('ReplaySPStoreTLSCertFile "%s"' % cert)
    if key:
        lines.append('ReplaySPStoreTLSKeyFile "%s"' % key)
    if debug:
        lines.append("LogLevel warn replay_sp:debug")
    if monitor:
        lines.append("ReplaySPMonitorInterval 1")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def tls_fleet(workdir, module_so, sp_config, tls_redis, pki):
    f = httpd_fleet.started_fleet(os.path.join(workdir, "tls-fleet"), module=module_so,
                                  store_url=tls_redis.tls_url(), sp=sp_config, n_replicas=2,
                                  threads=8, start_servers=1, server_extra=tls_extra(ca=pki.ca))
    yield f
    f.stop()


@pytest.fixture
def fleet_tls(tls_fleet):
    """The fleet back on its own configuration after each test."""
    tls_fleet.mark_logs()
    yield tls_fleet
    if tls_fleet.modified:
        tls_fleet.reset_replicas()


@pytest.fixture
def mint(idps, tls_fleet, testidp):
    return Saml(idps, tls_fleet.entity_id, tls_fleet.acs_url, testidp).mint


def reconfigure(fleet, store_url, **tls):
    fleet.restart_replicas(store_url=store_url, server_extra=tls_extra(**tls))
    fleet.mark_logs()


def lines_with(fleet, needle):
    return [l for ls in fleet.new_log_lines().values() for l in ls if needle in l]


def assert_signs_in_once(fleet, m):
    """m signs in on the first replica; its replay is refused on every
    replica (the claim is in the TLS store)."""
    a, b = fleet.replicas
    r = post_acs(a.base_url, m.b64, relay_state=PAGE)
    assert r.status_code == 303, (r.status_code, r.text[:300])
    assert session_cookie(r)[0]
    for h in (b, a):
        r = post_acs(h.base_url, m.b64, relay_state=PAGE)
        assert r.status_code == 403, (h.name, r.status_code, r.text[:300])
        assert session_cookie(r)[0] is None


def assert_refused_503(fleet, m, reason):
    """503 on every replica, and the claim's error line gives the reason."""
    for h in fleet.replicas:
        t0 = time.monotonic()
        r = post_acs(h.base_url, m.b64, relay_state=PAGE)
        took = time.monotonic() - t0
        assert r.status_code == 503, (h.name, r.status_code, r.text[:300])
        assert session_cookie(r)[0] is None
        assert took < 3 * TIMEOUT_MS / 1000.0 + 2, (h.name, took)
    time.sleep(0.1)
    errs = lines_with(fleet, TAGS["claim_store_error"])
    assert len(errs) >= len(fleet.replicas), fleet.new_log_lines()
    assert all(reason in l for l in errs), errs


# --------------------------------------------------------------------------
# sign-ins and replays over TLS
# --------------------------------------------------------------------------

@pytest.mark.expect_log("replay_refused")
def test_redis_tls_sign_ins_and_replays(fleet_tls, mint, tls_redis):
    for _ in range(3):
        m = mint()
        assert_signs_in_once(fleet_tls, m)
        assert tls_redis.client().exists(m.key)
    # the module's connections are on the TLS port (the plaintext one is
    # the tests' own), kept and reused: not one per request
    before = tls_redis.tls_clients()
    assert before, "no client on the TLS port"
    for _ in range(4):
        assert_signs_in_once(fleet_tls, mint())
    after = tls_redis.tls_clients()
    ids = lambda cl: {re.search(r"\bid=(\d+)", l).group(1) for l in cl}
    assert len(after) <= 2 * 8, after              # at most a pool per child
    assert ids(before) & ids(after), (before, after)   # the same connections


@pytest.fixture(scope="module")
def tls_cl(workdir, pki):
    c = tls_cluster(os.path.join(workdir, "tls-cluster"), pki)
    yield c
    c.stop()


@pytest.mark.expect_log("replay_refused")
def test_cluster_over_tls(fleet_tls, mint, tls_cl, pki):
    """rediss+cluster://: the map's TLS ports, each node's certificate
    checked (127.0.0.1, as the nodes announce themselves), a slot moved
    while signing in (MOVED over TLS), every claim on its slot's master
    and none accepted twice."""
    fleet_tls.restart_replicas(store_url=tls_cl.tls_url, server_extra=tls_extra(ca=pki.ca))
    fleet_tls.mark_logs()
    ms = [mint() for _ in range(6)]
    for m in ms[:3]:
        assert_signs_in_once(fleet_tls, m)
    # move the slot of the next claim to another master: the module's map
    # is stale, MOVED (with the TLS port) is followed
    slot = tls_cl.slot_of(ms[3].key)
    src = tls_cl.owner(slot)
    dst = next(n for n in tls_cl.masters() if n is not src)
    moved = tls_cl.errorstats("MOVED")
    tls_cl.migrate(slot, src, dst)
    for m in ms[3:]:
        assert_signs_in_once(fleet_tls, m)
    assert tls_cl.errorstats("MOVED") > moved
    for m in ms:
        assert tls_cl.holds(m.key)
    tls_cl.migrate(slot, dst, src)   # back, for whoever comes next


class TlsSentinel:
    """redis-server --sentinel on a TLS port only, watching a master's TLS
    port (and talking TLS to it): it names that port."""

    def __init__(self, workdir, pki, master_tls_port, name="rspmaster"):
        self.dir = common.make_dir(workdir)
        self.port = free_port()
        self.conf = os.path.join(self.dir, "sentinel.conf")
        crt, key = pki.server
        with open(self.conf, "w") as f:
            f.write("port 0\ntls-port %d\nbind 127.0.0.1\ndaemonize no\ndir %s\n"
                    "logfile %s\ntls-cert-file %s\ntls-key-file %s\n"
                    "tls-ca-cert-file %s\ntls-auth-clients no\ntls-replication yes\n"
                    "sentinel monitor %s 127.0.0.1 %d 1\n"
                    % (self.port, self.dir, os.path.join(self.dir, "sentinel.log"), crt,
                       key, pki.ca, name, master_tls_port))
        self.proc = None

    def start(self):
        with open(os.path.join(self.dir, "stdout"), "ab") as out:
            self.proc = subprocess.Popen([redis_nodes.REDIS_SERVER, self.conf, "--sentinel"],
                                         stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        common.wait_for(lambda: common.port_open(self.port), 20,
                        what="TLS sentinel on port %d" % self.port)
        return self

    def stop(self):
        common.stop_server(self.proc, self.port, "sentinel", common.STOP_TIMEOUT)


@pytest.mark.expect_log("replay_refused")
def test_sentinel_over_tls(fleet_tls, mint, workdir, tls_redis, pki):
    """rediss+sentinel://: the sentinel asked over TLS (its certificate
    checked against localhost), the master it names reached over TLS."""
    s = TlsSentinel(os.path.join(workdir, "tls-sentinel"), pki, tls_redis.tls_port).start()
    try:
        fleet_tls.restart_replicas(
            store_url="rediss+sentinel://localhost:%d/rspmaster/0" % s.port,
            server_extra=tls_extra(ca=pki.ca))
        fleet_tls.mark_logs()
        for _ in range(3):
            m = mint()
            assert_signs_in_once(fleet_tls, m)
            assert tls_redis.client().exists(m.key)
        assert tls_redis.tls_clients(), "no client on the master's TLS port"
    finally:
        fleet_tls.reset_replicas()
        s.stop()


@pytest.mark.expect_log("replay_refused")
def test_redis_tls_by_ip_address(fleet_tls, mint, tls_redis, pki):
    """rediss://127.0.0.1: the certificate's IP address is what is checked."""
    reconfigure(fleet_tls, tls_redis.tls_url("127.0.0.1"), ca=pki.ca)
    assert_signs_in_once(fleet_tls, mint())


@pytest.mark.expect_log("replay_refused")
def test_memcached_tls_sign_ins_and_replays(fleet_tls, mint, tls_memcached, pki):
    reconfigure(fleet_tls, tls_memcached.tls_url(), ca=pki.ca)
    c = tls_memcached.client()
    try:
        for _ in range(3):
            m = mint()
            assert_signs_in_once(fleet_tls, m)
            assert c.exists(m.key)
        assert int(c.stats()["curr_connections"]) >= 2
    finally:
        c.close()


@pytest.mark.expect_log("replay_refused")
def test_new_connections_resume_the_tls_session(fleet_tls, mint, tls_redis, pki):
    """A burst that needs more connections than a child has (the store
    paused a moment, so that every request holds its own): each child's
    first connection is a full handshake, the later ones resume its
    session."""
    reconfigure(fleet_tls, tls_redis.tls_url(), ca=pki.ca, debug=True)
    a = fleet_tls.replicas[0]
    assert_signs_in_once(fleet_tls, mint())
    burst = [mint() for _ in range(6)]
    results = []

    def post(m):
        results.append(post_acs(a.base_url, m.b64, relay_state=PAGE).status_code)
    threads = [threading.Thread(target=post, args=(m,)) for m in burst]
    tls_redis.pause()
    try:
        for t in threads:
            t.start()
        time.sleep(0.2)
    finally:
        tls_redis.resume()
    for t in threads:
        t.join(30)
    assert sorted(results) == [303] * len(burst), results
    by_child = {}
    for line in lines_with(fleet_tls, TLS_DEBUG):
        pid = re.search(r"\[pid (\d+)", line).group(1)
        by_child.setdefault(pid, []).append("session resumed" in line)
    assert any(any(v) for v in by_child.values()), by_child
    for pid, resumed in by_child.items():
        assert resumed.count(False) <= 1, (pid, resumed)   # one full handshake per child


# --------------------------------------------------------------------------
# certificates that must not be accepted
# --------------------------------------------------------------------------

@pytest.mark.expect_log("claim_store_error", ALARM["unreachable"])
def test_certificate_from_another_ca_refused_with_alarm(fleet_tls, mint, tls_redis, pki):
    reconfigure(fleet_tls, tls_redis.tls_url(), ca=pki.rogue_ca, monitor=True)
    m = mint()
    assert_refused_503(fleet_tls, m, "certificate is not accepted")
    assert not tls_redis.client().exists(m.key)
    deadline = time.monotonic() + 8
    while time.monotonic() < deadline:
        alarms = lines_with(fleet_tls, ALARM["unreachable"])
        if len(alarms) >= len(fleet_tls.replicas):
            break
        time.sleep(0.2)
    assert len(alarms) >= len(fleet_tls.replicas), fleet_tls.new_log_lines()
    assert all(":error]" in l and "certificate is not accepted" in l for l in alarms), alarms


@pytest.mark.expect_log("claim_store_error")
@pytest.mark.parametrize("host,reason", [("localhost", "hostname mismatch"),
                                         ("127.0.0.1", "IP address mismatch")])
def test_valid_certificate_for_another_name_refused(fleet_tls, mint, workdir, pki, host, reason):
    """Our CA signed it, but for other.example: neither localhost nor
    127.0.0.1 is it, whatever the chain."""
    r = TlsRedis(os.path.join(workdir, "tls-redis-other-" + host), pki.other, pki.ca)
    r.start()
    try:
        reconfigure(fleet_tls, r.tls_url(host), ca=pki.ca)
        m = mint()
        assert_refused_503(fleet_tls, m, reason)
        assert not r.client().exists(m.key)
    finally:
        r.stop()


@pytest.mark.expect_log("replay_refused", "claim_store_error")
def test_mutual_tls_required_and_given(fleet_tls, mint, workdir, pki):
    """A server that requires a client certificate: given
    (ReplaySPStoreTLSCertFile/KeyFile) it works; without one, or with one
    from another CA, it is refused (503)."""
    r = TlsRedis(os.path.join(workdir, "tls-redis-mtls"), pki.server, pki.ca,
                 auth_clients="yes")
    r.start()
    try:
        crt, key = pki.client
        reconfigure(fleet_tls, r.tls_url(), ca=pki.ca, cert=crt, key=key)
        m = mint()
        assert_signs_in_once(fleet_tls, m)
        assert r.client().exists(m.key)
        # the key may also sit in the certificate file
        both = pki.path("client-both.pem")
        with open(both, "w") as f:
            f.write(open(crt).read() + open(key).read())
        reconfigure(fleet_tls, r.tls_url(), ca=pki.ca, cert=both)
        assert_signs_in_once(fleet_tls, mint())
        for tls in (dict(ca=pki.ca), dict(ca=pki.ca, cert=pki.client_rogue[0],
                                          key=pki.client_rogue[1])):
            reconfigure(fleet_tls, r.tls_url(), **tls)
            m = mint()
            for h in fleet_tls.replicas:
                resp = post_acs(h.base_url, m.b64, relay_state=PAGE)
                assert resp.status_code == 503, (tls, h.name, resp.status_code)
            assert not r.client().exists(m.key)
    finally:
        r.stop()


@pytest.mark.expect_log("claim_store_error")
def test_store_stalling_in_the_handshake_gets_503_within_the_timeout(fleet_tls, mint, pki):
    s = StallingServer()
    try:
        reconfigure(fleet_tls, "rediss://localhost:%d/0" % s.port, ca=pki.ca)
        assert_refused_503(fleet_tls, mint(), "TLS handshake: timed out")
        assert s.held, "the replicas never connected"
    finally:
        s.close()


@pytest.mark.expect_log("claim_store_error")
def test_plaintext_server_on_a_tls_url_refused(fleet_tls, mint, tls_redis, pki):
    """rediss:// pointed at a plaintext port: no downgrade, 503."""
    reconfigure(fleet_tls, "rediss://localhost:%d/0" % tls_redis.port, ca=pki.ca)
    assert_refused_503(fleet_tls, mint(), "TLS")


# --------------------------------------------------------------------------
# configuration: refused at configtest
# --------------------------------------------------------------------------

@pytest.fixture
def tls_instance(workdir, module_so, sp_config):
    made = []

    def make(name, store_url, extra):
        h = Httpd(os.path.join(workdir, "tls-config", name), "tls-cfg-" + name,
                  modules=[("replay_sp_module", module_so)], log_level="warn",
                  threads=2, start_servers=1,
                  body=sp_conf_body(store_url, sp_config, extra))
        made.append(h)
        return h
    yield make
    for h in made:
        h.stop()


def _bad_tls_cases(pki):
    crt, key = pki.client
    return [
        # (case, store URL, extra directives, what the message must say)
        ("ca_plaintext_url", "redis://127.0.0.1:6379/0", tls_extra(ca=pki.ca),
         "ReplaySPStoreTLSCAFile is set, but the store"),
        ("cert_plaintext_memcache", "memcache://127.0.0.1:11211", tls_extra(cert=crt, key=key),
         "not a TLS one"),
        ("key_without_cert", "rediss://localhost:6379/0", tls_extra(ca=pki.ca, key=key),
         "ReplaySPStoreTLSKeyFile is set without ReplaySPStoreTLSCertFile"),
        ("ca_missing", "rediss://localhost:6379/0", tls_extra(ca="/nonexistent/rsp/ca.pem"),
         "ReplaySPStoreTLSCAFile"),
        ("ca_garbage", "rediss://localhost:6379/0", tls_extra(ca=pki.garbage),
         "ReplaySPStoreTLSCAFile"),
        ("cert_garbage", "rediss://localhost:6379/0",
         tls_extra(ca=pki.ca, cert=pki.garbage, key=key), "ReplaySPStoreTLSCertFile"),
        ("key_mismatch", "rediss://localhost:6379/0",
         tls_extra(ca=pki.ca, cert=crt, key=pki.server[1]), "ReplaySPStoreTLSKeyFile"),
        ("key_not_in_cert_file", "memcaches://localhost:11211", tls_extra(ca=pki.ca, cert=crt),
         "ReplaySPStoreTLSKeyFile (unset"),
    ]


CASES = ["ca_plaintext_url", "cert_plaintext_memcache", "key_without_cert", "ca_missing",
         "ca_garbage", "cert_garbage", "key_mismatch", "key_not_in_cert_file"]


@pytest.mark.parametrize("case", CASES)
def test_bad_tls_settings_refused_at_configtest(tls_instance, pki, case):
    _, url, extra, says = {c[0]: c for c in _bad_tls_cases(pki)}[case]
    h = tls_instance(case, url, extra)
    rc, out = h.configtest()
    assert rc != 0, "%s: configtest passed:\n%s" % (case, out)
    assert says in out, "%s: configtest output lacks %r:\n%s" % (case, says, out)
    with pytest.raises(HarnessError):
        h.start()
    assert not h.running()
    h.gate_offset = h.log_size()


def test_good_tls_settings_pass_configtest(tls_instance, pki):
    crt, key = pki.client
    h = tls_instance("good", "rediss://localhost:6379/0", tls_extra(ca=pki.ca, cert=crt, key=key))
    rc, out = h.configtest()
    assert rc == 0 and "Syntax OK" in out, out


# --------------------------------------------------------------------------
# the operators' tool speaks TLS too
# --------------------------------------------------------------------------

def test_tool_check_over_tls(tls_redis, pki):
    tool = os.path.join(common.REPO, "tools", "replay-sp")

    def run(*args):
        return subprocess.run([tool] + list(args), capture_output=True, text=True, timeout=30)
    ok = run("check", tls_redis.tls_url(), "--tls-ca", pki.ca)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "reachable" in ok.stdout and "noeviction" in ok.stdout, ok.stdout
    rogue = run("check", tls_redis.tls_url(), "--tls-ca", pki.rogue_ca, "--timeout", "500")
    assert rogue.returncode == 2, rogue.stdout + rogue.stderr
    assert "certificate is not accepted" in rogue.stdout, rogue.stdout
    plain = run("check", tls_redis.url, "--tls-ca", pki.ca)
    assert plain.returncode != 0 and "rediss://" in plain.stderr, plain.stderr
    bad = run("check", tls_redis.tls_url(), "--tls-ca", pki.garbage)
    assert bad.returncode != 0 and "garbage.pem" in bad.stderr, bad.stderr
