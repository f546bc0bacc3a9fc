"""Per-entity metadata (ReplaySPIdPMetadataQuery, the MDQ protocol) through
the fleet: IdPs of a synthetic federation (tests/integration/federation.py)
answered for one by one by a test MDQ server (md_server: the /mdq/ route
of tests/unit/md_http_server.py), each entity's document signed by a
federation key the test makes. An IdP the server answers for signs in on
every replica, the host asking the server once; an unknown one, one signed
by another key, one describing another entity and an expired one are
refused for that IdP only (check=issuer, nothing cached) and not asked for
again at once; a rolled-over key is taken after the entity's refresh; with
the server down, the host's copies keep their IdPs signing in and the
others fail closed. Redis only: this is about metadata, not the store."""

import hashlib
import json
import os
import re
import time

import pytest
import requests

import federation
from http_client import post_acs

pytestmark = pytest.mark.backends("redis")
PAGE = "/app/page.html"
N = 8
STATUS = ("<If \"%{REQUEST_URI} == '/rsp-status'\">\n"
          "    SetHandler replay-sp-status\n    Require all granted\n</If>")


@pytest.fixture(scope="module")
def feds(workdir):
    """One federation's IdPs with their first keys, and the same IdPs with
    other keys (after a rollover); the aggregates are not served."""
    a = federation.make_keys(os.path.join(workdir, "mdq-keys-a"), 2)
    b = federation.make_keys(os.path.join(workdir, "mdq-keys-b"), 2)
    return (federation.make(os.path.join(workdir, "mdq-fed-a"), N, 1, keys=a),
            federation.make(os.path.join(workdir, "mdq-fed-b"), N, 1, keys=b))


@pytest.fixture(scope="module")
def signers(workdir, testidp):
    """The MDQ service's signing key pair, and another one."""
    out = []
    for name in ("mdq-signer", "mdq-rogue"):
        key, cert = testidp.make_keypair(os.path.join(workdir, name), name, "rsp " + name)
        os.chmod(key, 0o644)
        out.append((key, cert))
    return out


def sha1(entity_id):
    return hashlib.sha1(entity_id.encode("utf-8")).hexdigest()


def publish(md_server, entity_id, text):
    """What the MDQ server answers for entity_id from now on (None: 404)."""
    d = os.path.join(md_server["mddir"], "mdq")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, sha1(entity_id) + ".xml")
    if text is None:
        if os.path.exists(path):
            os.unlink(path)
        return
    with open(path + ".new", "w") as f:
        f.write(text)
    os.replace(path + ".new", path)


def requests_for(md_server, entity_id):
    """The MDQ requests the server has had for entity_id (JSON lines)."""
    try:
        with open(md_server["requests"]) as f:
            lines = [json.loads(l) for l in f if l.strip()]
    except FileNotFoundError:
        return []
    return [l for l in lines if sha1(entity_id) in l["path"]]


def cache_dir(workdir, name):
    d = os.path.join(workdir, "mdq-cache-" + name)
    os.makedirs(d, exist_ok=True)
    os.chmod(d, 0o777)   # written by httpd's children: its user
    return d


def start(fleet, sp_config, md_server, signer, cache, idp_metadata=(), extra=""):
    """The replicas with ReplaySPIdPMetadataQuery (and idp_metadata beside
    it); a discovery service named, since MDQ alone knows no IdP before it
    is asked for one. The MDQ base URL."""
    base = "http://127.0.0.1:%d/mdq/" % md_server["http"]
    fleet.restart_replicas(
        sp=dict(sp_config, idp_metadata=list(idp_metadata), default_idp=None),
        location_extra="ReplaySPIdPMetadataQuery %s \"%s\" \"%s\"\n"
                       "ReplaySPDiscoveryURL https://ds.example.org/ds\n%s\n%s"
                       % (base, signer[1], cache, STATUS, extra))
    return base


def sign_in(fleet, url, idp, tag):
    b64 = idp.mint(fleet.entity_id, fleet.acs_url, assertion_id="_%s_%d" % (tag, time.time_ns()))
    return post_acs(url, b64, relay_state=PAGE).status_code


def every_replica(fleet, idp, tag):
    return [sign_in(fleet, h.base_url, idp, tag) for h in fleet.replicas]


def until_every_replica(fleet, idp, tag, want, seconds=20):
    deadline = time.monotonic() + seconds
    while True:
        got = every_replica(fleet, idp, tag)
        if got == [want] * len(got) or time.monotonic() > deadline:
            return got
        time.sleep(0.3)


def mdq_figures(h):
    """A replica's replay_sp_metadata_source_* figures of kind mdq."""
    text = requests.get(h.base_url + "/rsp-status", timeout=10).text
    out = {}
    for name, labels, value in re.findall(
            r"^replay_sp_metadata_source_(\w+)\{([^}]*)\} (-?\d+)$", text, re.M):
        lab = dict(re.findall(r'(\w+)="([^"]*)"', labels))
        if lab.get("kind") == "mdq":
            out[name] = (lab, int(value))
    return out


@pytest.mark.expect_log("check_refused", "RSP01030", "mdq_refused")
def test_an_idp_by_mdq_signs_in_on_every_replica_asked_once(fleet, sp_config, workdir, feds,
                                                           signers, md_server):
    """Only MDQ: an IdP the service answers for signs in on every replica;
    the host asks the service once (every other process reads the host's
    copy); login?IdP= sends the browser to it; the status handler has the
    MDQ source."""
    fed, _ = feds
    publish(md_server, fed.idps[0].entity_id, fed.entity_document(0, signers[0]))
    cache = cache_dir(workdir, "once")
    base = start(fleet, sp_config, md_server, signers[0], cache)
    idp = fed.test_idp(0, os.path.join(workdir, "mdq-idp0-a"))
    assert every_replica(fleet, idp, "once") == [303] * 3
    assert every_replica(fleet, idp, "twice") == [303] * 3
    asked = requests_for(md_server, fed.idps[0].entity_id)
    assert len(asked) == 1, asked
    assert asked[0]["path"] == "/mdq/entities/%7Bsha1%7D" + sha1(fed.idps[0].entity_id)
    assert asked[0]["accept"].startswith("application/samlmetadata+xml"), asked
    with open(os.path.join(cache, sha1(fed.idps[0].entity_id) + ".xml")) as f:
        assert fed.idps[0].entity_id in f.read()
    # login: to the IdP's SSO endpoint on every replica; an entity the
    # service does not know: 400
    for h in fleet.replicas:
        r = requests.get(h.base_url + "/saml/login", params={"IdP": fed.idps[0].entity_id,
                                                             "ReturnTo": PAGE},
                         allow_redirects=False, timeout=10)
        assert r.status_code == 302 and r.headers["Location"].startswith(
            fed.idps[0].sso_url + "?"), (r.status_code, r.headers)
    r = requests.get(fleet.replicas[0].base_url + "/saml/login",
                     params={"IdP": "https://nobody.example.org/idp"},
                     allow_redirects=False, timeout=10)
    assert r.status_code == 400
    # without IdP=: the discovery service
    r = requests.get(fleet.replicas[0].base_url + "/saml/login", allow_redirects=False,
                     timeout=10)
    assert r.status_code == 302 and r.headers["Location"].startswith(
        "https://ds.example.org/ds?"), r.headers
    # the status handler: one source of kind mdq, its base URL, not failing
    # (a 404 is an entity the service does not know, not its failure)
    for h in fleet.replicas:
        f = mdq_figures(h)
        assert f["idps"][0] == {"sp": fleet.entity_id, "source": base, "kind": "mdq"}, f
        assert f["failing"][1] == 0, f
        assert f["refresh_seconds"][1] == 300, f


@pytest.mark.expect_log("check_refused", "mdq_refused")
def test_refused_entities_fail_closed_for_that_idp_only(fleet, sp_config, workdir, feds,
                                                       signers, md_server):
    """An entity the service does not know (404), one signed by another
    key, one describing another entity, one expired: each refused with
    check=issuer on every replica and an error line with the reason,
    nothing written to the host's cache, asked for at most once per
    process in a minute; an IdP the service answers for still signs in."""
    fed, _ = feds
    e = [i.entity_id for i in fed.idps]
    publish(md_server, e[0], fed.entity_document(0, signers[0]))
    publish(md_server, e[1], None)
    publish(md_server, e[2], fed.entity_document(2, signers[1]))
    publish(md_server, e[3], fed.entity_document(4, signers[0]))
    publish(md_server, e[5], fed.entity_document(5, signers[0], valid_until=time.time() - 60))
    cache = cache_dir(workdir, "refused")
    start(fleet, sp_config, md_server, signers[0], cache)
    for i, reason in ((1, "fetch: HTTP status 404"), (2, "signature"),
                      (3, "malformed: it describes %s" % e[4]), (5, "expired")):
        fleet.mark_logs()
        idp = fed.test_idp(i, os.path.join(workdir, "mdq-refused-%d" % i))
        assert every_replica(fleet, idp, "refused%d" % i) == [400] * 3, i
        refusals = [l for ls in fleet.new_log_lines().values() for l in ls
                    if "RSP01004" in l and "check=issuer" in l]
        assert len(refusals) == 3, (i, refusals)
        lines = [l for ls in fleet.new_log_lines().values() for l in ls if "MDQ: " in l]
        assert lines and all(":error]" in l and "MDQ: %s: %s" % (e[i], reason) in l
                             for l in lines), (i, lines)
        # more tries: each process asks at most once in a minute (two
        # children per replica)
        for k in range(4):
            assert every_replica(fleet, idp, "again%d_%d" % (i, k)) == [400] * 3
        asked = len(requests_for(md_server, e[i]))
        assert 3 <= asked <= 6, (i, asked)
        assert not os.path.exists(os.path.join(cache, sha1(e[i]) + ".xml")), i
    good = fed.test_idp(0, os.path.join(workdir, "mdq-idp0-b"))
    assert every_replica(fleet, good, "good") == [303] * 3


@pytest.mark.expect_log("check_refused")
def test_key_rolled_over_taken_after_the_entity_refresh(fleet, sp_config, workdir, feds,
                                                        signers, md_server):
    """ReplaySPMetadataRefresh 2: an IdP signs in with its key; the same
    document asked for again is a 304; once the service answers with the
    new key alone, the new key signs in on every replica and the old one
    is refused."""
    fed_a, fed_b = feds
    eid = fed_a.idps[6].entity_id
    publish(md_server, eid, fed_a.entity_document(6, signers[0]))
    start(fleet, sp_config, md_server, signers[0], cache_dir(workdir, "roll"),
          extra="ReplaySPMetadataRefresh 2")
    old = fed_a.test_idp(6, os.path.join(workdir, "mdq-roll-a"))
    new = fed_b.test_idp(6, os.path.join(workdir, "mdq-roll-b"))
    assert every_replica(fleet, old, "roll-old") == [303] * 3
    assert every_replica(fleet, new, "roll-new0") == [400] * 3
    time.sleep(2.5)
    assert every_replica(fleet, old, "roll-old2") == [303] * 3
    asked = requests_for(md_server, eid)
    # every process asks again conditionally (answered 304), those that
    # took the host's copy as well as the one that fetched it
    assert len(asked) >= 2 and all(a["inm"] for a in asked[1:]), asked
    publish(md_server, eid, fed_b.entity_document(6, signers[0]))
    assert until_every_replica(fleet, new, "roll-new", 303) == [303] * 3
    assert until_every_replica(fleet, old, "roll-old3", 400) == [400] * 3


@pytest.mark.expect_log("check_refused", "mdq_refused")
def test_service_down_host_copies_kept_others_fail_closed(fleet, sp_config, workdir, feds,
                                                         signers, md_server, idps):
    """An MDQ entity fetched, then the service stopped: it keeps signing in,
    even after a restart of every replica (the host's copy); an entity
    never fetched is refused; an IdP of a metadata file beside MDQ signs
    in throughout."""
    fed, _ = feds
    eid = fed.idps[7].entity_id
    publish(md_server, eid, fed.entity_document(7, signers[0]))
    cache = cache_dir(workdir, "down")
    files = sp_config["idp_metadata"]
    start(fleet, sp_config, md_server, signers[0], cache, idp_metadata=files)
    known = fed.test_idp(7, os.path.join(workdir, "mdq-down-7"))
    other = fed.test_idp(1, os.path.join(workdir, "mdq-down-1"))
    publish(md_server, fed.idps[1].entity_id, fed.entity_document(1, signers[0]))
    assert every_replica(fleet, known, "down-before") == [303] * 3
    md_server["proc"].terminate()
    md_server["proc"].wait(timeout=10)
    fleet.mark_logs()
    assert every_replica(fleet, known, "down-kept") == [303] * 3
    assert every_replica(fleet, other, "down-new") == [400] * 3
    lines = [l for ls in fleet.new_log_lines().values() for l in ls if "MDQ: " in l]
    assert lines and all("MDQ: %s: fetch: curl error" % fed.idps[1].entity_id in l
                         for l in lines), lines
    file_idp = idps["idp1"]
    b64 = file_idp.mint(fleet.entity_id, fleet.acs_url, assertion_id="_down_%d" % time.time_ns())
    assert post_acs(fleet.public, b64, relay_state=PAGE).status_code == 303
    # new processes, the service still down: the host's copy
    start(fleet, sp_config, md_server, signers[0], cache, idp_metadata=files)
    assert every_replica(fleet, known, "down-restart") == [303] * 3
    assert every_replica(fleet, other, "down-new2") == [400] * 3
