"""Metadata re-read without a restart (ReplaySPMetadataRefresh): a signed
aggregate of a synthetic federation (tests/integration/federation.py) is
replaced under the running fleet; every replica takes the new generation
(an IdP added signs in, one removed cannot, a rolled-over key is the one
that verifies), a refused file (tampered, expired) keeps the last good
generation with an error-level alarm, and sign-ins running across a
refresh all succeed. Redis only: this is about metadata, not the store."""

import os
import re
import threading
import time

import pytest
import requests

import federation
from http_client import post_acs

pytestmark = pytest.mark.backends("redis")
PAGE = "/app/page.html"
N = 20


@pytest.fixture(scope="module")
def keys(workdir):
    """Two sets of IdP keys: before and after a rollover."""
    return (federation.make_keys(os.path.join(workdir, "refresh-keys-a"), 2),
            federation.make_keys(os.path.join(workdir, "refresh-keys-b"), 2))


@pytest.fixture(scope="module")
def signer(workdir, testidp):
    key, cert = testidp.make_keypair(os.path.join(workdir, "refresh-signer"), "signer",
                                     "rsp refresh federation signer")
    os.chmod(key, 0o644)
    return key, cert


def publish(workdir, n_idps, keys, signer, name, **kw):
    """Make an aggregate in a directory of its own and put it in place of
    the one the fleet reads (an atomic rename, as operators do)."""
    fed = federation.make(os.path.join(workdir, "refresh-" + name), n_idps, 5, keys=keys,
                          signed_by=signer, **kw)
    live = os.path.join(workdir, "refresh-live.xml")
    tmp = live + ".new"
    with open(fed.path, "rb") as src, open(tmp, "wb") as dst:
        dst.write(src.read())
    os.chmod(tmp, 0o644)
    os.replace(tmp, live)
    return fed, live


STATUS = ("<If \"%{REQUEST_URI} == '/rsp-status'\">\n"
          "    SetHandler replay-sp-status\n    Require all granted\n</If>")


def source_figures(h):
    """A replica's replay_sp_metadata_source_* figures of its one metadata
    source: {name: (labels, value)}."""
    text = requests.get(h.base_url + "/rsp-status", timeout=10).text
    found = re.findall(r"^replay_sp_metadata_source_(\w+)\{([^}]*)\} (-?\d+)$", text, re.M)
    assert len({dict(re.findall(r'(\w+)="([^"]*)"', l))["source"] for _, l, _ in found}) == 1, text
    return {name: (dict(re.findall(r'(\w+)="([^"]*)"', labels)), int(value))
            for name, labels, value in found}


def sources_until(fleet, holds, seconds=20):
    """Until holds(figures) on every replica; the figures of the last round."""
    deadline = time.monotonic() + seconds
    while True:
        got = [source_figures(h) for h in fleet.replicas]
        if all(holds(f) for f in got) or time.monotonic() > deadline:
            return got
        time.sleep(0.3)


def failing(reason):
    return lambda f: f["failing"][1] == 1 and f["failing"][0]["reason"] == reason


def sign_in(fleet, url, idp, tag):
    b64 = idp.mint(fleet.entity_id, fleet.acs_url, assertion_id="_%s_%d" % (tag, time.time_ns()))
    return post_acs(url, b64, relay_state=PAGE).status_code


def on_every_replica(fleet, idp, tag, want, seconds=20):
    """Until a fresh response from idp gets want on every replica (each
    asked directly); the statuses of the last round."""
    deadline = time.monotonic() + seconds
    while True:
        got = [sign_in(fleet, h.base_url, idp, tag) for h in fleet.replicas]
        if all(g == want for g in got) or time.monotonic() > deadline:
            return got
        time.sleep(0.3)


@pytest.mark.expect_log("check_refused", "replay_refused", "metadata_refused")
def test_metadata_replaced_under_a_running_fleet(fleet, sp_config, workdir, keys, signer):
    old_keys, new_keys = keys
    fed, live = publish(workdir, N, old_keys, signer, "v1")
    fleet.restart_replicas(sp=dict(sp_config, idp_metadata=[(live, signer[1])],
                                   default_idp=None),
                           location_extra="ReplaySPMetadataRefresh 1")
    first = fed.test_idp(0, os.path.join(workdir, "refresh-idp0-a"))
    assert on_every_replica(fleet, first, "v1", 303, seconds=0) == [303] * 3
    # an IdP the aggregate does not list yet
    fed2 = federation.make(os.path.join(workdir, "refresh-v2-probe"), N + 1, 5, keys=old_keys)
    added = fed2.test_idp(N, os.path.join(workdir, "refresh-idp-added"))
    fleet.mark_logs()
    assert sign_in(fleet, fleet.public, added, "early") == 400
    assert fleet.count_in_logs("check=issuer") == 1

    # added: signs in on every replica, without a restart
    publish(workdir, N + 1, old_keys, signer, "v2")
    assert on_every_replica(fleet, added, "added", 303) == [303] * 3
    assert fleet.count_in_logs("RSP01054") >= 3   # each replica read it again

    # tampered after signing: refused with the alarm, the last good kept
    with open(live) as f:
        text = f.read()
    victim = fed.idps[3].entity_id
    bad = text.replace('entityID="%s"' % victim, 'entityID="%s.evil"' % victim, 1)
    assert bad != text
    with open(live + ".new", "w") as f:
        f.write(bad)
    os.replace(live + ".new", live)
    deadline = time.monotonic() + 20
    while fleet.count_in_logs("RSP01055") < 3 and time.monotonic() < deadline:
        time.sleep(0.3)
    lines = [l for ls in fleet.new_log_lines().values() for l in ls if "RSP01055" in l]
    assert len(lines) >= 3, lines
    assert all(":error]" in l and "signature" in l for l in lines), lines
    assert on_every_replica(fleet, added, "kept", 303, seconds=0) == [303] * 3

    # expired: refused the same way
    fleet.mark_logs()
    publish(workdir, N, old_keys, signer, "v-expired", valid_until=time.time() - 60)
    deadline = time.monotonic() + 20
    while fleet.count_in_logs("RSP01055") < 3 and time.monotonic() < deadline:
        time.sleep(0.3)
    assert fleet.count_in_logs("RSP01055") >= 3
    assert on_every_replica(fleet, added, "kept2", 303, seconds=0) == [303] * 3

    # removed: refused on every replica
    fleet.mark_logs()
    publish(workdir, N, old_keys, signer, "v3")
    got = on_every_replica(fleet, added, "removed", 400)
    assert got == [400] * 3, got

    # keys rolled over: the old key no longer verifies, the new one does
    fed4, _ = publish(workdir, N, new_keys, signer, "v4")
    rolled = fed4.test_idp(0, os.path.join(workdir, "refresh-idp0-b"))
    assert on_every_replica(fleet, rolled, "rolled", 303) == [303] * 3
    assert on_every_replica(fleet, first, "old-key", 400, seconds=0) == [400] * 3


@pytest.mark.expect_log("check_refused", "replay_refused", "metadata_refused")
def test_wrapped_and_oversize_files_refused_last_good_kept(fleet, sp_config, workdir, keys,
                                                          signer):
    """The signed aggregate wrapped in an unsigned one that adds an IdP,
    and a file over the size limit: each refused on every replica with
    RSP01055, the IdPs in use kept, the added IdP never trusted."""
    old_keys, _ = keys
    fed, live = publish(workdir, N, old_keys, signer, "wrap-v1")
    fleet.restart_replicas(sp=dict(sp_config, idp_metadata=[(live, signer[1])],
                                   default_idp=None),
                           location_extra="ReplaySPMetadataRefresh 1\n" + STATUS)
    first = fed.test_idp(0, os.path.join(workdir, "wrap-idp0"))
    for f in sources_until(fleet, lambda f: f["idps"][1] == N):
        assert f["idps"] == ({"sp": fleet.entity_id, "source": live, "kind": "file"}, N), f
        assert f["failing"][1] == 0 and f["failing"][0]["reason"] == "", f
        assert f["generation"][1] == 1 and f["refresh_seconds"][1] == 1, f
        assert f["last_error_timestamp_seconds"][1] == 0, f
        assert 0 <= f["age_seconds"][1] <= 10, f
        assert 6 * 86400 < f["valid_until_timestamp_seconds"][1] - time.time() <= 8 * 86400, f
    evil = federation.make(os.path.join(workdir, "wrap-evil"), N + 1, 1, keys=old_keys)
    intruder = evil.test_idp(N, os.path.join(workdir, "wrap-intruder"))
    with open(live) as f:
        signed = f.read()
    with open(evil.path) as f:
        evil_text = f.read()
    start = evil_text.rindex("<md:EntityDescriptor", 0, evil_text.index(evil.idps[N].entity_id))
    end = evil_text.index("</md:EntityDescriptor>", start) + len("</md:EntityDescriptor>")
    decl = signed[signed.index("<md:EntitiesDescriptor"):signed.index(">", signed.index(
        "<md:EntitiesDescriptor"))]
    ns = " ".join(a for a in decl.split() if a.startswith("xmlns"))
    wrapped = ('<?xml version="1.0" encoding="UTF-8"?>\n<md:EntitiesDescriptor %s>\n%s\n%s\n'
               '</md:EntitiesDescriptor>\n'
               % (ns, signed.split("?>", 1)[1], evil_text[start:end]))

    def wrap():
        with open(live + ".new", "w") as f:
            f.write(wrapped)

    def oversize():
        with open(live + ".new", "w") as f:
            f.write(signed)
        os.truncate(live + ".new", 257 * 1024 * 1024)   # sparse: nothing written

    for name, write, says, reason in (("wrapped", wrap, "signature", "signature"),
                                      ("oversize", oversize, "large", "too-large")):
        fleet.mark_logs()
        write()
        os.replace(live + ".new", live)
        deadline = time.monotonic() + 20
        lines = []
        while time.monotonic() < deadline:
            lines = [l for ls in fleet.new_log_lines().values() for l in ls if "RSP01055" in l]
            if len(lines) >= 3:
                break
            time.sleep(0.3)
        assert len(lines) >= 3, (name, lines)
        assert all(says in l for l in lines), (name, lines)
        # the status handler says so, the generation in use kept
        for f in sources_until(fleet, failing(reason)):
            assert failing(reason)(f), (name, f)
            assert f["idps"][1] == N and f["generation"][1] == 1, (name, f)
            assert f["last_error_timestamp_seconds"][1] > time.time() - 60, (name, f)
        assert on_every_replica(fleet, first, "wrap-kept-" + name, 303, seconds=0) == [303] * 3
        assert on_every_replica(fleet, intruder, "wrap-in-" + name, 400, seconds=0) == [400] * 3
    os.unlink(live)


@pytest.mark.expect_log("check_refused")
def test_key_rollover_signs_in_throughout(fleet, sp_config, workdir, keys, signer):
    """IdP 10 rolls its signing key over as federations do: its old key
    alone, then both published, then the new one alone. Signed with the
    new key it signs in on every replica from the second step on, with the
    old key until the last; never a failure where its metadata has the
    key."""
    a, b = [keys[0][0]], [keys[1][0]]
    fed_a, live = publish(workdir, N, a, signer, "roll-a")
    fleet.restart_replicas(sp=dict(sp_config, idp_metadata=[(live, signer[1])],
                                   default_idp=None),
                           location_extra="ReplaySPMetadataRefresh 1")
    old = fed_a.test_idp(10, os.path.join(workdir, "roll-idp10-a"))
    fed_b = federation.make(os.path.join(workdir, "roll-b-probe"), N, 5, keys=b)
    new = fed_b.test_idp(10, os.path.join(workdir, "roll-idp10-b"))
    assert on_every_replica(fleet, old, "roll-old1", 303, seconds=0) == [303] * 3
    assert on_every_replica(fleet, new, "roll-new1", 400, seconds=0) == [400] * 3
    # both published: the new key is taken, the old one still is
    publish(workdir, N, a + b, signer, "roll-ab")
    assert on_every_replica(fleet, new, "roll-new2", 303) == [303] * 3
    assert on_every_replica(fleet, old, "roll-old2", 303, seconds=0) == [303] * 3
    # the new one alone: the new key signs in each round until the old
    # one is refused everywhere
    publish(workdir, N, b, signer, "roll-b")
    deadline = time.monotonic() + 20
    while True:
        assert on_every_replica(fleet, new, "roll-new3", 303, seconds=0) == [303] * 3
        got = on_every_replica(fleet, old, "roll-old3", 400, seconds=0)
        if got == [400] * 3 or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert got == [400] * 3, got


@pytest.mark.expect_log("replay_refused")
def test_no_sign_in_fails_across_a_refresh(fleet, sp_config, workdir, keys, signer):
    """Sign-ins from 4 clients through the balancer while the aggregate is
    replaced twice: each is accepted."""
    old_keys, _ = keys
    fed, live = publish(workdir, N, old_keys, signer, "burst-v1")
    fleet.restart_replicas(sp=dict(sp_config, idp_metadata=[(live, signer[1])],
                                   default_idp=None),
                           location_extra="ReplaySPMetadataRefresh 1")
    idps = [fed.test_idp(i, os.path.join(workdir, "burst-idp%d" % i)) for i in range(4)]
    fleet.mark_logs()
    stop = time.monotonic() + 8
    results = []
    lock = threading.Lock()

    def client(idp, k):
        n = 0
        while time.monotonic() < stop and n < 400:
            got = sign_in(fleet, fleet.public, idp, "burst%d_%d" % (k, n))
            with lock:
                results.append(got)
            n += 1

    threads = [threading.Thread(target=client, args=(idp, k)) for k, idp in enumerate(idps)]
    for t in threads:
        t.start()
    time.sleep(2)
    publish(workdir, N + 1, old_keys, signer, "burst-v2")
    time.sleep(3)
    publish(workdir, N + 2, old_keys, signer, "burst-v3")
    for t in threads:
        t.join(timeout=60)
    assert len(results) > 20, len(results)
    assert set(results) == {303}, {s: results.count(s) for s in set(results)}
    assert fleet.count_in_logs("RSP01054") >= 3


@pytest.mark.expect_log("check_refused", "replay_refused", "metadata_refused",
                        "metadata_not_fetched")
def test_metadata_by_url_fetched_verified_and_kept(fleet, sp_config, workdir, keys, signer,
                                                   md_server):
    """ReplaySPIdPMetadataURL over https: an IdP added at the URL signs in
    on every replica without a restart; a tampered copy and one with a
    DOCTYPE are refused with the alarm, the last good copy kept; with the
    server gone, a restart starts from the backing file."""
    old_keys, _ = keys
    served = os.path.join(md_server["mddir"], "fed.xml")

    def serve(n_idps, name, mangle=None):
        fed = federation.make(os.path.join(workdir, "url-" + name), n_idps, 5, keys=old_keys,
                              signed_by=signer)
        with open(fed.path) as f:
            text = f.read()
        with open(served + ".new", "w") as f:
            f.write(mangle(text) if mangle else text)
        os.replace(served + ".new", served)
        return fed

    fed = serve(N, "v1")
    backing_dir = os.path.join(workdir, "url-backing")
    os.makedirs(backing_dir, exist_ok=True)
    os.chmod(backing_dir, 0o777)   # the fetcher is a child: httpd's user
    backing = os.path.join(backing_dir, "federation.xml")
    url = "https://127.0.0.1:%d/md/fed.xml" % md_server["https"]
    extra = ("ReplaySPIdPMetadataURL %s \"%s\" \"%s\"\n"
             "ReplaySPMetadataCAFile \"%s\"\nReplaySPMetadataRefresh 1\n%s"
             % (url, signer[1], backing, md_server["ca"], STATUS))
    fleet.restart_replicas(sp=dict(sp_config, idp_metadata=[], default_idp=None),
                           location_extra=extra)
    assert os.path.exists(backing)
    first = fed.test_idp(0, os.path.join(workdir, "url-idp0"))
    assert on_every_replica(fleet, first, "url-v1", 303, seconds=0) == [303] * 3
    for f in sources_until(fleet, lambda f: f["idps"][1] == N):
        assert f["idps"] == ({"sp": fleet.entity_id, "source": url, "kind": "url"}, N), f
        assert f["failing"][1] == 0 and f["generation"][1] == 1, f
        assert 0 <= f["age_seconds"][1] <= 10 and f["refresh_seconds"][1] == 1, f

    # added at the URL: fetched, written to the backing file, read by all
    fleet.mark_logs()
    fed2 = serve(N + 1, "v2")
    added = fed2.test_idp(N, os.path.join(workdir, "url-idp-added"))
    assert on_every_replica(fleet, added, "url-added", 303) == [303] * 3
    for f in sources_until(fleet, lambda f: f["idps"][1] == N + 1):
        assert f["idps"][1] == N + 1 and f["generation"][1] >= 2, f

    # tampered, then a DOCTYPE: refused (one fetcher per host: at least one
    # line per replica), the last good copy kept
    victim = fed2.idps[3].entity_id
    before = None   # the reason of the copy served before this one
    for name, mangle, reason in (
            ("tampered", lambda t: t.replace('entityID="%s"' % victim,
                                             'entityID="%s.evil"' % victim, 1), "signature"),
            ("doctype", lambda t: t.replace('<?xml version="1.0" encoding="UTF-8"?>',
                                            '<?xml version="1.0" encoding="UTF-8"?>'
                                            '<!DOCTYPE x [<!ENTITY a "b">]>', 1), "malformed")):
        fleet.mark_logs()
        with open(backing, "rb") as f:
            kept = f.read()
        serve(N + 1, "v2-" + name, mangle)
        # a fetch that failed in transit (a busy machine: a reset or a
        # timeout) is an alarm of its own, "(fetch: ...)", and not what
        # is tested here; any other reason is a defect
        deadline = time.monotonic() + 30
        lines = refused = []
        while time.monotonic() < deadline:
            lines = [l for ls in fleet.new_log_lines().values() for l in ls if "RSP01056" in l]
            refused = [l for l in lines if "(%s: " % reason in l]
            if len(refused) >= 3:
                break
            time.sleep(0.3)
        in_transit = [l for l in lines if "(fetch: " in l]
        for l in in_transit:
            print("a fetch failed in transit:", l)
        # a failing source is fetched again every second here: the copy
        # served before this one may still be refused once more by a
        # fetcher that asked before it was replaced
        late = [l for l in lines if before and "(%s: " % before in l]
        assert len(refused) >= 3, "%s:\n%s" % (name, "\n".join(lines))
        others = [l for l in lines if l not in refused + in_transit + late]
        assert not others, "%s:\n%s" % (name, "\n".join(others))
        before = reason
        assert all(":error]" in l for l in refused), "%s:\n%s" % (name, "\n".join(refused))
        with open(backing, "rb") as f:
            assert f.read() == kept, name
        # every replica's status handler says so (the host's fetcher's
        # verdict, whichever child answers), the copy in use kept
        for f in sources_until(fleet, failing(reason)):
            assert failing(reason)(f), (name, f)
            assert f["idps"][1] == N + 1, (name, f)
            assert f["last_error_timestamp_seconds"][1] > time.time() - 60, (name, f)
        assert on_every_replica(fleet, added, "url-kept-" + name, 303, seconds=0) == [303] * 3

    # the server gone: a restart starts from the backing file
    md_server["proc"].terminate()
    md_server["proc"].wait(timeout=10)
    fleet.mark_logs()
    fleet.restart_replicas(sp=dict(sp_config, idp_metadata=[], default_idp=None),
                           location_extra=extra)
    assert on_every_replica(fleet, added, "url-backing", 303, seconds=0) == [303] * 3
    assert fleet.count_in_logs("RSP01056") >= 3
    # the copy in use is as old as its backing file, and the URL failing
    backing_age = time.time() - os.stat(backing).st_mtime
    for f in sources_until(fleet, failing("fetch")):
        assert failing("fetch")(f) and f["idps"][1] == N + 1, f
        assert backing_age - 5 <= f["age_seconds"][1] <= backing_age + 5, (backing_age, f)


@pytest.mark.expect_log("check_refused", "metadata_not_fetched")
def test_metadata_by_plain_http_trusted_for_its_signature(fleet, sp_config, workdir, keys,
                                                         signer, md_server):
    """ReplaySPIdPMetadataURL over http (no TLS, no CA file): the signature,
    not the transport, makes it trusted. A signed copy is taken and its
    IdPs sign in; a copy altered on the way (what plain http allows: an
    IdP added) is refused with reason signature, the added IdP never
    trusted, the copy in use kept."""
    old_keys, _ = keys
    served = os.path.join(md_server["mddir"], "fed.xml")
    fed = federation.make(os.path.join(workdir, "http-v1"), N, 5, keys=old_keys,
                          signed_by=signer)
    with open(fed.path) as f:
        signed = f.read()
    with open(served, "w") as f:
        f.write(signed)
    backing_dir = os.path.join(workdir, "http-backing")
    os.makedirs(backing_dir, exist_ok=True)
    os.chmod(backing_dir, 0o777)   # the fetcher is a child: httpd's user
    url = "http://127.0.0.1:%d/md/fed.xml" % md_server["http"]
    extra = ("ReplaySPIdPMetadataURL %s \"%s\" \"%s\"\nReplaySPMetadataRefresh 1\n%s"
             % (url, signer[1], os.path.join(backing_dir, "fed.xml"), STATUS))
    fleet.restart_replicas(sp=dict(sp_config, idp_metadata=[], default_idp=None),
                           location_extra=extra)
    first = fed.test_idp(0, os.path.join(workdir, "http-idp0"))
    assert on_every_replica(fleet, first, "http-v1", 303, seconds=0) == [303] * 3

    # an IdP slipped in on the way: the same document, one entity more
    evil = federation.make(os.path.join(workdir, "http-evil"), N + 1, 1, keys=old_keys)
    intruder = evil.test_idp(N, os.path.join(workdir, "http-intruder"))
    with open(evil.path) as f:
        evil_text = f.read()
    start = evil_text.rindex("<md:EntityDescriptor", 0, evil_text.index(evil.idps[N].entity_id))
    end = evil_text.index("</md:EntityDescriptor>", start) + len("</md:EntityDescriptor>")
    at = signed.rindex("</md:EntitiesDescriptor>")
    with open(served + ".new", "w") as f:
        f.write(signed[:at] + evil_text[start:end] + signed[at:])
    os.replace(served + ".new", served)
    for f in sources_until(fleet, failing("signature")):
        assert failing("signature")(f), f
        assert f["idps"] == ({"sp": fleet.entity_id, "source": url, "kind": "url"}, N), f
    assert on_every_replica(fleet, intruder, "http-intruder", 400, seconds=0) == [400] * 3
    assert on_every_replica(fleet, first, "http-kept", 303, seconds=0) == [303] * 3


def test_tool_reads_a_url_as_the_module_fetches_it(workdir, keys, signer, md_server):
    """replay-sp metadata URL --cert C [--ca-file]: fetched over https with
    the test CA, verified, its IdPs listed; refused without the CA (the
    system's do not know it), without --cert, and when tampered."""
    import json
    import subprocess
    import common
    tool = os.path.join(common.REPO, "tools", "replay-sp")
    old_keys, _ = keys
    fed = federation.make(os.path.join(workdir, "tool-url"), 7, 2, keys=old_keys,
                          signed_by=signer)
    served = os.path.join(md_server["mddir"], "fed.xml")
    with open(fed.path) as f:
        text = f.read()
    with open(served, "w") as f:
        f.write(text)
    url = "https://127.0.0.1:%d/md/fed.xml" % md_server["https"]

    def run(*args):
        return subprocess.run([tool, "metadata", url] + list(args), capture_output=True,
                              text=True, timeout=60, stdin=subprocess.DEVNULL)

    r = run("--cert", signer[1], "--ca-file", md_server["ca"], "--json")
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert j["signature"] == "verified" and j["trusted"] is True
    assert [i["entity_id"] for i in j["idps"]] == [i.entity_id for i in fed.idps]
    r = run("--cert", signer[1])
    assert r.returncode == 1 and "fetch" in r.stderr, r.stderr
    r = run()
    assert r.returncode == 64
    with open(served, "w") as f:
        f.write(text.replace(fed.idps[2].entity_id, fed.idps[2].entity_id + ".evil", 1))
    r = run("--cert", signer[1], "--ca-file", md_server["ca"])
    assert r.returncode == 1 and "signature" in r.stderr, r.stderr
