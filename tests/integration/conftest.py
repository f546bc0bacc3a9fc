"""Fixtures for mod_replay_sp's integration tests (see README.md here).

Session scope: a work directory, Redis, the test IdPs, the SP key pair,
the store backend and the fleet (three replicas + a balancer) on it.
Every test that uses ``fleet`` (or ``store``/``backend``) runs once per
backend: ``redis``, ``memcached1`` (one memcached), ``memcached2`` (two
memcached servers), and ``cluster`` (Redis Cluster: three masters with a
replica each) for the tests marked ``also_cluster``;
``@pytest.mark.backends("redis")`` narrows a test to some of them, the
RSP_BACKENDS environment variable narrows the run.
Function scope: ``fleet`` (store up and empty, replicas back on the
default configuration, log marks set) and the autouse error-log gate.
"""

import os
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import common  # noqa: E402 (after the sys.path line above)
import httpd_fleet
from common import HarnessError
from httpd_fleet import TAGS, Fleet, Httpd, bad_log_lines
from idp_tools import (IDP1_ENTITY_ID, IDP2_ENTITY_ID, SP_ENTITY_ID, UNKNOWN_ENTITY_ID, Saml,
                       import_testidp)
from memcached_nodes import MemcachedServer
from redis_nodes import RedisCluster, RedisServer
from stores import ClusterStore, MemcachedStore, RedisStore

# The store backends the fleet suite runs on, in this order.
BACKENDS = ("redis", "memcached1", "memcached2", "cluster")
# Backends a test runs on only when marked for them.
OPT_IN = {"cluster": "also_cluster"}
# memcached fleets: ReplaySPStoreTimeout (ms), short so hung-server tests are quick.
MEMCACHED_TIMEOUT_MS = 500


def selected_backends():
    """BACKENDS, narrowed by RSP_BACKENDS (comma-separated) when set."""
    env = os.environ.get("RSP_BACKENDS", "").strip()
    if not env:
        return list(BACKENDS)
    wanted = [b.strip() for b in env.split(",") if b.strip()]
    unknown = [b for b in wanted if b not in BACKENDS]
    if unknown:
        raise pytest.UsageError("RSP_BACKENDS: unknown backend(s) %s; known: %s"
                                % (", ".join(unknown), ", ".join(BACKENDS)))
    return [b for b in BACKENDS if b in wanted]


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "expect_log(*tags): error-log lines (warn and above) this test may cause; "
        "each argument is a key of httpd_fleet.TAGS (e.g. 'replay_refused') or a "
        "literal substring (e.g. 'RSP01001')")
    config.addinivalue_line(
        "markers",
        "backends(*names): run this test only on these store backends "
        "(of %s); without it, a test that uses the fleet runs on all" % ", ".join(BACKENDS))
    config.addinivalue_line(
        "markers",
        "also_cluster: run this fleet test on the Redis Cluster backend too")
    # test_guard.py: the SP the guard is in front of (its guarded_sp parameter)
    config.addinivalue_line(
        "markers", "only_sp(*names): run this guard test only for these SPs")
    config.addinivalue_line(
        "markers", "per_sp(argname, **values): a guard test parameter whose values "
        "depend on the SP (values: SP name -> list)")
    config.addinivalue_line(
        "markers", "sp_expect_log(**tags): expect_log for one SP's run of a guard test "
        "(SP name -> tuple of tags)")
    # test_guard_apps.py
    config.addinivalue_line(
        "markers", "heavy: an application guard test run on the HTTP applications only")


def pytest_generate_tests(metafunc):
    """One run per backend for every test that (indirectly) uses the
    ``backend`` fixture, grouped by pytest so each backend's fleet starts
    once (session scope)."""
    if "backend" not in metafunc.fixturenames:
        return
    names = selected_backends()
    names = [b for b in names if b not in OPT_IN
             or any(True for _ in metafunc.definition.iter_markers(OPT_IN[b]))]
    for m in metafunc.definition.iter_markers("backends"):
        names = [b for b in names if b in m.args]
    metafunc.parametrize("backend", names, indirect=True, scope="session")


# Parameters (module scope) that choose a fleet of a test module's own:
# test_guard.py's guarded_sp, the SP the guard is in front of;
# test_guard_apps.py's app_sp, the application SP behind mod_proxy.
FLEET_PARAMS = ("guarded_sp", "app_sp")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    """Group the tests by backend (pytest's own grouping of session-scoped
    parameters is greedy per module and would start some fleets twice):
    first the tests that use no backend, then every test on redis, then on
    memcached1, then on memcached2; within a backend, the tests of each
    value of a FLEET_PARAMS parameter together (after the others), so that
    the fleet it chooses starts once; the order within a group is kept."""
    def params(item):
        cs = getattr(item, "callspec", None)
        return cs.params if cs is not None else {}
    firsts = {}
    for item in items:
        for p in FLEET_PARAMS:
            if p in params(item):
                firsts.setdefault((p, params(item)[p]), len(firsts))

    def rank(item):
        ps = params(item)
        b = ps.get("backend")
        return (BACKENDS.index(b) + 1 if b in BACKENDS else 0,
                tuple(firsts.get((p, ps.get(p)), -1) for p in FLEET_PARAMS))
    items[:] = sorted(items, key=rank)


# --------------------------------------------------------------------------
# error-log gate
# --------------------------------------------------------------------------

def allowed_for(item):
    allowed = []
    for m in item.iter_markers("expect_log"):
        for a in m.args:
            allowed.append(TAGS.get(a, a))
    return tuple(allowed)


def unexpected_log_lines(instances, allowed, offsets=None):
    """{instance name: [bad lines]} for lines after each instance's gate
    offset (or offsets[instance], keyed by the Httpd object) at warn level
    or above, not allowed."""
    out = {}
    for h in instances:
        off = h.gate_offset if offsets is None else offsets.get(h, h.gate_offset)
        bad = bad_log_lines(h._log_since(off).splitlines(), allowed)
        if bad:
            out[h.name] = bad
    return out


def format_bad(bad, limit=20):
    out = []
    for name, lines in bad.items():
        out.extend("%s: %s" % (name, line) for line in lines[:limit])
        if len(lines) > limit:
            out.append("%s: ... and %d more" % (name, len(lines) - limit))
    return "\n".join(out)


@pytest.fixture(autouse=True)
def _error_log_gate(request):
    """Every test: any [warn]/[error]/[crit]/[alert]/[emerg] line (or child
    crash, or raw GLib/libxml2 warning) in any httpd instance's error log
    that the test did not declare with @pytest.mark.expect_log fails it.
    The check after the test body runs in pytest_runtest_makereport (so the
    test itself is FAILED); lines written during teardown are checked here."""
    for h in Httpd.all_instances:
        h.gate_offset = h.log_size()
    yield
    time.sleep(0.05)
    bad = unexpected_log_lines(Httpd.all_instances, allowed_for(request.node),
                               offsets=getattr(request.node, "_rsp_gate_checked", None))
    if bad:
        pytest.fail("unexpected error-log lines during teardown:\n" + format_bad(bad),
                    pytrace=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.when != "call":
        return
    time.sleep(0.05)   # lines are written before the response; be generous
    item._rsp_gate_checked = {h: h.log_size() for h in Httpd.all_instances}
    bad = unexpected_log_lines(Httpd.all_instances, allowed_for(item))
    if not bad:
        return
    msg = ("error-log gate: unexpected lines (declare them with "
           "@pytest.mark.expect_log if the test means to cause them):\n" + format_bad(bad))
    if rep.passed:
        rep.outcome = "failed"
        rep.longrepr = msg
    else:
        rep.sections.append(("error-log gate", msg))


# --------------------------------------------------------------------------
# session fixtures
# --------------------------------------------------------------------------

@pytest.fixture(scope="session")
def workdir(request):
    d = common.make_workdir()
    yield d
    failed = request.session.testsfailed
    if os.environ.get("RSP_KEEP_TMP") or failed:
        sys.stderr.write("\nintegration work directory kept: %s\n" % d)
    else:
        common.rmtree_quiet(d)


@pytest.fixture(scope="session")
def module_so():
    try:
        return httpd_fleet.module_path()
    except HarnessError as e:
        pytest.fail(str(e), pytrace=False)


@pytest.fixture(scope="session")
def testidp():
    try:
        return import_testidp()
    except ImportError as e:
        pytest.fail("cannot import the test IdP from %s: %s" % (common.IDP_DIR, e), pytrace=False)


@pytest.fixture(scope="session")
def redis(workdir):
    r = RedisServer(os.path.join(workdir, "redis"))
    r.start()
    yield r
    r.stop()


@pytest.fixture(scope="session")
def idps(workdir, testidp):
    """idp1, idp2: configured IdPs (idp1's scope example.org, idp2's
    example.net and, by a regular expression, its subdomains); rogue: same
    entity ID as idp1 with another key (badly signed); unknown: an IdP the
    SP does not know."""
    d = common.make_dir(os.path.join(workdir, "idps"))
    return {
        "idp1": testidp.TestIdP(os.path.join(d, "idp1"), entity_id=IDP1_ENTITY_ID),
        "idp2": testidp.TestIdP(os.path.join(d, "idp2"), entity_id=IDP2_ENTITY_ID,
                                scopes=("example.net", (r"[a-z0-9-]+\.example\.net", True))),
        "rogue": testidp.TestIdP(os.path.join(d, "rogue"), entity_id=IDP1_ENTITY_ID),
        "unknown": testidp.TestIdP(os.path.join(d, "unknown"), entity_id=UNKNOWN_ENTITY_ID),
    }


@pytest.fixture(scope="session")
def sp_keys(workdir, testidp):
    d = common.make_dir(os.path.join(workdir, "sp"))
    key, cert = testidp.make_keypair(d, "sp", "rsp test sp")
    os.chmod(key, 0o644)   # test key; children run as www-data
    return key, cert


@pytest.fixture(scope="session")
def sp_config(sp_keys, idps):
    key, cert = sp_keys
    # idp1 is where a browser without a session goes (ReplaySPDefaultIdP):
    # with two IdPs and no default it would choose on the discovery page
    return {"entity_id": SP_ENTITY_ID, "key_file": key, "cert_file": cert,
            "idp_metadata": [idps["idp1"].metadata_path, idps["idp2"].metadata_path],
            "default_idp": idps["idp1"].entity_id}


@pytest.fixture(scope="session")
def backend(request):
    """The store backend's name (parametrized by pytest_generate_tests)."""
    return request.param


def memcached_servers(workdir, backend, n):
    return [MemcachedServer(os.path.join(workdir, "%s-%s" % (backend, "ab"[i])),
                            name="%s-%s" % (backend, "ab"[i])) for i in range(n)]


@pytest.fixture(scope="session")
def store(request, workdir, backend):
    """The fleet's store (stores.Store): RedisStore on the session Redis,
    or a MemcachedStore over one or two memcached servers of its own."""
    if backend == "redis":
        s = RedisStore(request.getfixturevalue("redis"))
        yield s
        s.close()
        return
    if backend == "cluster":
        c = RedisCluster(os.path.join(workdir, "cluster"))
        try:
            c.start()
        except HarnessError as e:
            c.stop()
            pytest.fail("the Redis Cluster did not start: %s" % e, pytrace=False)
        yield ClusterStore(c)
        c.stop()
        return
    n = {"memcached1": 1, "memcached2": 2}[backend]
    servers = memcached_servers(workdir, backend, n)
    try:
        for m in servers:
            m.start()
    except HarnessError as e:
        for m in servers:
            m.stop()
        pytest.fail("memcached did not start: %s" % e, pytrace=False)
    s = MemcachedStore(servers, backend, timeout_ms=MEMCACHED_TIMEOUT_MS)
    yield s
    s.close()
    for m in servers:
        m.stop()


@pytest.fixture(scope="session")
def fleet_session(workdir, module_so, store, sp_config):
    f = Fleet(os.path.join(workdir, "fleet-" + store.name), module=module_so,
              store_url=store.url, sp=sp_config, server_extra=store.server_extra)
    start_offsets = {h: h.log_size() for h in f.instances}   # in case the dir was used before
    try:
        f.start()
    except HarnessError as e:
        f.stop()
        pytest.fail("the fleet did not start:\n%s" % e, pytrace=False)
    bad = unexpected_log_lines(f.instances, (), offsets=start_offsets)
    if bad:
        f.stop()
        pytest.fail("unexpected error-log lines at fleet start-up:\n" + format_bad(bad),
                    pytrace=False)
    yield f
    f.stop()


@pytest.fixture
def fleet(fleet_session, store):
    """The fleet, with its store up, healthy and empty and the replicas on
    the default configuration; a test may restart_replicas(...) with other
    settings, they are put back afterwards."""
    store.heal()
    if fleet_session.modified or not all(h.running() for h in fleet_session.instances):
        for h in fleet_session.instances:
            if not h.running() and h is fleet_session.balancer:
                h.start()
        fleet_session.reset_replicas()
    fleet_session.mark_logs()
    yield fleet_session
    if fleet_session.modified:
        fleet_session.reset_replicas()
    store.heal()


@pytest.fixture
def md_server(workdir):
    """The metadata server of the unit tests (tests/unit/md_http_server.py):
    http and https (its own test CA) on loopback ports of its choosing,
    serving ROOT/mddir/NAME at /md/NAME with ETag and Last-Modified, and
    ROOT/mddir/mdq/HEX.xml to MDQ requests for {sha1}HEX; each request a
    JSON line of ROOT/requests.log."""
    root = os.path.join(workdir, "md-server-%d" % time.time_ns())
    mddir = os.path.join(root, "mddir")
    os.makedirs(mddir)
    script = os.path.join(os.path.dirname(__file__), "..", "unit", "md_http_server.py")
    proc = subprocess.Popen(["/usr/bin/python3", script, root, mddir],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    ports = os.path.join(root, "ports")
    deadline = time.monotonic() + 30
    while not os.path.exists(ports) and time.monotonic() < deadline:
        time.sleep(0.1)
    with open(ports) as f:
        http_port, https_port = (int(x) for x in f.read().split())
    yield {"proc": proc, "mddir": mddir, "https": https_port, "http": http_port,
           "ca": os.path.join(root, "tls", "ca.crt"),
           "requests": os.path.join(root, "requests.log")}
    if proc.poll() is None:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def rc(redis):
    """A RESP client on the test Redis (Redis-only tests)."""
    c = redis.client()
    yield c
    c.close()


@pytest.fixture
def saml(idps, fleet, testidp):
    return Saml(idps, fleet.entity_id, fleet.acs_url, testidp)
