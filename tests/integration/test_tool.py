"""The replay-sp command-line tool against real Redis and memcached
servers and the fleet's own store: check (as advised, evicting, no
persistence, unreachable, wrong password, memcached without -M, each shard
of a Redis Cluster), lookup of
a claim the fleet made, sessions --end signing a user out of every
replica, capacity against the operations guide's figures, help and usage
errors."""

import base64
import hashlib
import json
import os
import re
import subprocess
import time
import urllib.parse

import pytest

import common
import redis_nodes
from common import free_port
from http_client import get, post_acs, session_cookie
from memcached_nodes import MemcachedServer
from redis_nodes import RedisServer
from stores import KEY_PREFIX

TOOL = os.path.join(common.REPO, "tools", "replay-sp")
PAGE = "/app/page.html"


def run(*args, timeout=30):
    if not os.access(TOOL, os.X_OK):
        pytest.fail("%s is not built (scripts/build.sh)" % TOOL, pytrace=False)
    return subprocess.run([TOOL] + list(args), capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


class TunedRedis(RedisServer):
    """The harness's redis-server with some options replaced."""

    def __init__(self, workdir, **options):
        super().__init__(workdir)
        self.options = options

    def argv(self):
        argv = super().argv()
        for name, value in self.options.items():
            flag = "--" + name.replace("_", "-")
            if flag in argv:
                argv[argv.index(flag) + 1] = value
            else:
                argv += [flag, value]
        return argv


@pytest.fixture
def own_redis(workdir):
    made = []

    def make(name, **options):
        r = TunedRedis(os.path.join(workdir, "tool", name), **options)
        made.append(r)
        return r.start()
    yield make
    for r in made:
        r.stop()


# --------------------------------------------------------------------------
# check
# --------------------------------------------------------------------------

def test_check_store_configured_as_advised(own_redis):
    r = own_redis("advised", appendonly="yes")
    out = run("check", r.url)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "nothing the monitor would alarm on" in out.stdout
    assert "verdict: ok" in out.stdout
    j = json.loads(run("check", r.url, "--json").stdout)
    assert j["verdict"] == "ok" and j["servers"][0]["findings"] == []
    assert j["servers"][0]["policy"] == "maxmemory-policy noeviction"
    assert j["servers"][0]["aof"] is True and j["servers"][0]["replicas"] == 0


def test_check_evicting_store_fails_and_says_why(own_redis):
    r = own_redis("lru", maxmemory_policy="allkeys-lru", appendonly="yes")
    out = run("check", r.url)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "allkeys-lru" in out.stdout and "error:" in out.stdout
    assert "could lose claims" in out.stdout
    j = json.loads(run("check", "--json", r.url).stdout)
    assert j["verdict"] == "could-lose-claims" and j["servers"][0]["evicting"] is True
    assert [f["level"] for f in j["servers"][0]["findings"]] == ["error"]


def test_check_no_memory_limit_fails(own_redis):
    r = own_redis("nolimit", maxmemory="0", appendonly="yes")
    out = run("check", r.url)
    assert out.returncode == 1 and "no maxmemory" in out.stdout, out.stdout


def test_check_without_persistence_warns(own_redis):
    r = own_redis("noaof")
    out = run("check", r.url)
    assert out.returncode == 0, out.stdout
    assert "warning: no append-only file" in out.stdout


def test_check_headroom_warns(own_redis):
    r = own_redis("headroom", appendonly="yes", maxmemory="4mb")
    out = run("check", r.url, "--headroom-warn", "10")
    assert out.returncode == 0, out.stdout
    assert re.search(r"warning: .*memory", out.stdout), out.stdout


def test_check_unreachable_store(workdir):
    url = "redis://127.0.0.1:%d/0" % free_port()
    out = run("check", url, "--timeout", "300")
    assert out.returncode == 2, out.stdout + out.stderr
    assert "NOT REACHABLE" in out.stdout and "Connection refused" in out.stdout
    assert json.loads(run("check", "--json", url).stdout)["verdict"] == "unreachable"


def test_check_wrong_password(own_redis):
    r = own_redis("auth", appendonly="yes")
    c = r.client()
    c.call("CONFIG", "SET", "requirepass", "right-password")
    c.close()
    bad = run("check", "redis://:wrong@127.0.0.1:%d/0" % r.port)
    assert bad.returncode == 2, bad.stdout + bad.stderr
    assert "WRONGPASS" in bad.stdout or "invalid" in bad.stdout.lower(), bad.stdout
    assert "wrong" not in bad.stdout.replace("WRONGPASS", ""), "password echoed"
    good = run("check", "redis://:right-password@127.0.0.1:%d/0" % r.port)
    assert good.returncode == 0, good.stdout
    assert "right-password" not in good.stdout + good.stderr


def test_check_memcached(workdir):
    ok = MemcachedServer(os.path.join(workdir, "tool", "mc-ok"))
    evicting = MemcachedServer(os.path.join(workdir, "tool", "mc-evicting"),
                               options=("-U", "0", "-m", "64"))
    try:
        ok.start()
        evicting.start()
        out = run("check", ok.url)
        assert out.returncode == 0, out.stdout + out.stderr
        out = run("check", "memcache://%s,%s" % (ok.address, evicting.address))
        assert out.returncode == 1, out.stdout
        assert "-M" in out.stdout and evicting.address in out.stdout
    finally:
        ok.stop()
        evicting.stop()


def test_check_cluster_reports_each_shard(workdir):
    c = redis_nodes.RedisCluster(os.path.join(workdir, "tool", "cluster"), name="tcl", replicas=0)
    try:
        c.start()
        j = json.loads(run("check", c.url, "--json").stdout)
        names = sorted(s["server"] for s in j["servers"])
        assert len(names) == 3, j
        for lo, hi in ((0, 5460), (5461, 10921), (10922, 16383)):
            assert any(n.endswith("slots %d-%d" % (lo, hi)) for n in names), names
        assert all(s["policy"] == "maxmemory-policy noeviction" for s in j["servers"]), j
        # a master down: that shard, and only it, unreachable
        c.nodes[1].stop()
        out = run("check", c.url, "--timeout", "500")
        assert out.returncode != 0, out.stdout
        assert "slots 5461-10921" in out.stdout and "127.0.0.1:%d" % c.nodes[1].port \
            in out.stdout, out.stdout
    finally:
        c.stop()


@pytest.mark.parametrize("url,why", [
    ("http://127.0.0.1:6379/0", "unknown scheme"),
    ("redis://127.0.0.1:99999/0", "port"),
    ("memcache://127.0.0.1", "port"),
])
def test_check_bad_url(url, why):
    out = run("check", url)
    assert out.returncode == 2 and why in out.stderr, out.stderr


# --------------------------------------------------------------------------
# lookup and sessions, on the fleet's store (every backend)
# --------------------------------------------------------------------------

@pytest.mark.expect_log("replay_refused")
def test_lookup_reports_the_fleets_claim(fleet, saml, store):
    m = saml.mint(name_id="lookup-user")
    r = post_acs(fleet.public, m.b64, relay_state=PAGE)
    assert r.status_code == 303
    assert post_acs(fleet.replicas[0].base_url, m.b64).status_code == 403
    raw = store.get(m.key)
    raw = raw.decode() if isinstance(raw, bytes) else raw
    replica = urllib.parse.unquote(re.search(r"(?:^|&)r=([^&]*)", raw).group(1))
    assert replica.endswith(tuple(":%d" % h.port for h in fleet.replicas)), replica
    out = run("lookup", store.url, "--issuer", m.issuer, "--assertion-id", m.assertion_id)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "by replica: %s" % replica in out.stdout, out.stdout
    assert "the sign-in completed; user lookup-user" in out.stdout, out.stdout
    j = json.loads(run("lookup", store.url, "--json", "--issuer", m.issuer,
                       "--assertion-id", m.assertion_id).stdout)
    assert j["claimed"] is True and j["replica"] == replica and j["session_live"] is True
    ttl = store.ttl_seconds(m.key)
    assert abs(j["expires_in_ms"] / 1000 - ttl) <= 2, (j["expires_in_ms"], ttl)
    assert j["key"] == m.key
    # an assertion never posted
    out = run("lookup", store.url, "--issuer", m.issuer, "--assertion-id", "_never-posted")
    assert out.returncode == 1 and out.stdout.startswith("not claimed"), out.stdout
    # another prefix finds nothing
    out = run("lookup", store.url, "--prefix", "other:", "--issuer", m.issuer,
              "--assertion-id", m.assertion_id)
    assert out.returncode == 1


def test_sessions_end_signs_the_user_out_of_every_replica(fleet, saml, store):
    def sign_in(name):
        r = post_acs(fleet.public, saml.mint(name_id=name).b64, relay_state=PAGE)
        assert r.status_code == 303
        return session_cookie(r)[0]
    dora = [sign_in("dora"), sign_in("dora")]
    erin = sign_in("erin")
    issuer = saml.idps["idp1"].entity_id
    out = run("sessions", store.url, "--issuer", issuer, "--name-id", "dora")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 sessions of dora" in out.stdout, out.stdout
    j = json.loads(run("sessions", store.url, "--json", "--issuer", issuer,
                       "--name-id", "dora").stdout)
    assert len(j["sessions"]) == 2 and j["ended"] == 0
    ended = run("sessions", store.url, "--issuer", issuer, "--name-id", "dora", "--end")
    assert ended.returncode == 0, ended.stdout + ended.stderr
    assert ended.stderr.count("replay-sp: ended session") == 2, ended.stderr
    assert "2 ended" in ended.stdout
    for name, base in fleet.targets():
        for c in dora:
            g = get(base + PAGE, cookie=c)
            assert g.status_code == 302, (name, g.status_code)
        g = get(base + PAGE, cookie=erin)
        assert g.status_code == 200 and g.headers.get("X-RSP-User") == saml.user("erin"), name
    again = run("sessions", store.url, "--issuer", issuer, "--name-id", "dora")
    assert "0 sessions of dora" in again.stdout, again.stdout
    # dora's NameID entry is dropped on every server that had a copy (with
    # several memcached servers each sign-in writes it on its claim's
    # server), erin's stays
    def name_id_entry(name):
        digest = hashlib.sha256(("%s\0%s" % (issuer, name)).encode()).digest()
        return KEY_PREFIX + "n:" + base64.urlsafe_b64encode(digest).decode().rstrip("=")
    by_server = (store.keys_by_server(KEY_PREFIX + "n:") if hasattr(store, "keys_by_server")
                 else {0: store.keys(KEY_PREFIX + "n:")})
    assert not [i for i, ks in by_server.items() if name_id_entry("dora") in ks], by_server
    assert [i for i, ks in by_server.items() if name_id_entry("erin") in ks], by_server


# --------------------------------------------------------------------------
# capacity, help, usage
# --------------------------------------------------------------------------

def test_capacity_matches_the_operations_guide():
    with open(os.path.join(common.REPO, "docs", "operations.md")) as f:
        guide = f.read()
    # the guide's example: 50 sign-ins per second, 5-minute assertions, 60 s
    # skew -> 18,000 claims ~ 7 MB; 100,000 eight-hour sessions ~ 60 MB
    assert "18,000\nclaims ≈ 7 MB" in guide or "18,000 claims ≈ 7 MB" in guide
    assert "100,000 eight-hour sessions ≈ 60 MB" in guide
    j = json.loads(run("capacity", "--sign-ins-per-second", "50", "--window", "300",
                       "--skew", "60", "--sessions", "100000", "--json").stdout)
    lines = {l["what"]: l for l in j["lines"]}
    assert lines["claims"]["count"] == 18000
    assert round(lines["claims"]["bytes"] / 1e6) == 7
    assert lines["sessions"]["count"] == 100000
    assert round(lines["sessions"]["bytes"] / 1e6) == 60
    assert lines["logout index entries"]["count"] == 200000
    assert "pending requests" not in lines
    assert j["total_bytes"] == sum(l["bytes"] for l in j["lines"])
    # SP-initiated: 50/s x 300 s of each, as in the guide
    assert "15,000 of each ≈ 10 MB" in guide.replace("\n", " ")
    sp = json.loads(run("capacity", "--sign-ins-per-second", "50", "--window", "300",
                        "--sessions", "100000", "--sp-initiated", "--json").stdout)
    lines = {l["what"]: l for l in sp["lines"]}
    assert lines["pending requests"]["count"] == 15000
    assert round((lines["pending requests"]["bytes"] + lines["request uses"]["bytes"])
                 / 1e6) == 10
    mc = json.loads(run("capacity", "--sign-ins-per-second", "50", "--window", "300",
                        "--sessions", "100000", "--memcached", "--json").stdout)
    assert mc["total_bytes"] == 2 * j["total_bytes"]
    text = run("capacity", "--sign-ins-per-second", "50", "--window", "300",
               "--sessions", "100000").stdout
    assert "50/s x (window 300 s + skew 60 s) = 18000 x 400 B = 7.2 MB" in text, text
    # Entra's window: the default ReplaySPMaxAssertionWindow, the tool's
    # default window
    assert "198,000 claims ≈ 79 MB" in guide.replace("\n", " ")
    for args in ((), ("--window", "3900")):
        e = json.loads(run("capacity", "--sign-ins-per-second", "50", *args,
                           "--json").stdout)
        claims = {l["what"]: l for l in e["lines"]}["claims"]
        assert claims["count"] == 198000 and round(claims["bytes"] / 1e6) == 79, claims


@pytest.mark.parametrize("command", ["check", "capacity", "lookup", "sessions"])
def test_help_for_each_command(command):
    out = run(command, "--help")
    assert out.returncode == 0 and out.stdout.startswith("usage: replay-sp " + command)
    assert len(out.stdout.splitlines()) >= 3


@pytest.mark.parametrize("args,message", [
    ((), "usage: replay-sp COMMAND"),
    (("frobnicate",), "unknown command"),
    (("check",), "give one STORE-URL"),
    (("check", "redis://127.0.0.1:1/0", "--bogus"), "unknown option --bogus"),
    (("check", "redis://127.0.0.1:1/0", "--timeout", "0"), "--timeout"),
    (("lookup", "redis://127.0.0.1:1/0", "--issuer", "x"), "--assertion-id is required"),
    (("sessions", "redis://127.0.0.1:1/0", "--name-id", "x"), "--issuer is required"),
    (("capacity",), "--sign-ins-per-second is required"),
    (("capacity", "--sign-ins-per-second", "-3"), "expected a number above 0"),
    (("capacity", "--sign-ins-per-second", "5", "--window", "0"), "--window"),
    (("capacity", "--sign-ins-per-second", "5", "--skew", "1", "--skew", "2"), "given twice"),
])
def test_usage_errors(args, message):
    out = run(*args)
    assert out.returncode == 64, (args, out.returncode, out.stderr)
    assert message in out.stderr, (args, out.stderr)


@pytest.mark.backends("redis", "memcached2")
@pytest.mark.skipif(not os.path.exists("/usr/bin/valgrind"), reason="valgrind not installed")
def test_tool_runs_clean_under_valgrind(own_redis, fleet, saml, store):
    """No invalid access, nothing definitely lost, in the commands that
    talk to a store and in the one that does not."""
    r = own_redis("valgrind", appendonly="yes")
    m = saml.mint(name_id="vg")
    assert post_acs(fleet.public, m.b64, relay_state=PAGE).status_code == 303
    issuer = saml.idps["idp1"].entity_id
    for args in (("check", r.url), ("check", "--json", store.url),
                 ("capacity", "--sign-ins-per-second", "5", "--sp-initiated"),
                 ("lookup", store.url, "--issuer", issuer, "--assertion-id", m.assertion_id),
                 ("sessions", store.url, "--issuer", issuer, "--name-id", "vg", "--end")):
        out = subprocess.run(["valgrind", "-q", "--leak-check=full",
                              "--errors-for-leak-kinds=definite", "--error-exitcode=99",
                              TOOL] + list(args), capture_output=True, text=True,
                             timeout=120, stdin=subprocess.DEVNULL)
        assert out.returncode in (0, 1), (args, out.returncode, out.stderr[-2000:])


def test_metadata_reads_a_file_as_the_module_does(workdir, idps, testidp):
    """replay-sp metadata FILE [--cert CERTFILE]: the signature verdict, the
    IdPs the module would trust; exit status 1 for a file the module
    refuses."""
    d = common.make_dir(os.path.join(workdir, "tool-metadata"))
    key, cert = testidp.make_keypair(d, "fed", "rsp tool federation")
    until = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 7 * 86400))
    entities = []
    for name in ("idp1", "idp2"):
        with open(idps[name].metadata_path) as f:
            entities.append(re.sub(r"^<\?xml[^>]*\?>\s*", "", f.read()))
    agg = ('<md:EntitiesDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" '
           'ID="_tool1" validUntil="%s">%s</md:EntitiesDescriptor>' % (until, "".join(entities)))
    good = os.path.join(d, "fed.xml")
    with open(good, "w") as f:
        f.write(testidp.sign_metadata(agg, key, cert))
    out = run("metadata", good, "--cert", cert)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "signature: verified" in out.stdout and "2 IdPs" in out.stdout
    assert idps["idp1"].entity_id in out.stdout and idps["idp2"].entity_id in out.stdout
    j = json.loads(run("metadata", good, "--cert", cert, "--json").stdout)
    assert j["trusted"] and j["signature"] == "verified" and j["valid_until"]
    assert [(i["entity_id"], i["scopes"]) for i in j["idps"]] == [
        (idps["idp1"].entity_id, 1), (idps["idp2"].entity_id, 2)]
    # unchecked without --cert; refused when tampered or too long-lived
    assert "not checked" in run("metadata", good).stdout
    bad = os.path.join(d, "tampered.xml")
    with open(good) as f, open(bad, "w") as g:
        g.write(f.read().replace("idp.test.example", "idp.tesT.example", 1))
    out = run("metadata", bad, "--cert", cert)
    assert out.returncode == 1 and "does not verify" in out.stdout, out.stdout
    out = run("metadata", good, "--cert", cert, "--max-validity", "3600")
    assert out.returncode == 1 and "ReplaySPMetadataMaxValidity" in out.stdout, out.stdout
    assert run("metadata").returncode == 64
    assert run("metadata", os.path.join(d, "missing.xml")).returncode == 2


def test_metadata_asks_an_mdq_service_for_one_entity(workdir, testidp, md_server):
    """replay-sp metadata BASEURL --entity ENTITYID --cert CERTFILE: the
    entity asked for at BASEURL/entities/%7Bsha1%7DHEX, trusted when its
    signed answer describes it alone as an IdP; another entity's answer, a
    404 and a bad signature refused (exit status 1)."""
    import federation
    d = common.make_dir(os.path.join(workdir, "tool-mdq"))
    key, cert = testidp.make_keypair(d, "mdq", "rsp tool mdq")
    rogue = testidp.make_keypair(d, "rogue", "rsp tool rogue")
    fed = federation.make(os.path.join(d, "fed"), 3, 0, keys=1)
    mdq = common.make_dir(os.path.join(md_server["mddir"], "mdq"))

    def publish(i, text):
        h = hashlib.sha1(fed.idps[i].entity_id.encode()).hexdigest()
        with open(os.path.join(mdq, h + ".xml"), "w") as f:
            f.write(text)

    publish(0, fed.entity_document(0, (key, cert)))
    publish(1, fed.entity_document(2, (key, cert)))
    publish(2, fed.entity_document(2, rogue))
    base = "http://127.0.0.1:%d/mdq/" % md_server["http"]
    out = run("metadata", base, "--entity", fed.idps[0].entity_id, "--cert", cert)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "signature: verified" in out.stdout and fed.idps[0].entity_id in out.stdout
    assert "entities/%7Bsha1%7D" + hashlib.sha1(fed.idps[0].entity_id.encode()).hexdigest() \
        in out.stdout
    out = run("metadata", base, "--entity", fed.idps[1].entity_id, "--cert", cert)
    assert out.returncode == 1 and "not %s alone" % fed.idps[1].entity_id in out.stdout, out.stdout
    out = run("metadata", base, "--entity", fed.idps[2].entity_id, "--cert", cert)
    assert out.returncode == 1 and "signature: " in out.stderr \
        and "does not verify" in out.stderr, out.stderr
    out = run("metadata", base, "--entity", "https://nobody.example.org/idp", "--cert", cert)
    assert out.returncode == 1 and "HTTP status 404" in out.stderr, out.stderr
    assert run("metadata", "/etc/hosts", "--entity", "x").returncode == 64
