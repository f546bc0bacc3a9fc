"""A rolling upgrade: the fleet's replicas run the module of the base
revision (BASE below: the main branch this code replaces, built here from
git) and the one under test side by side, on one store. Users sign in
through either, their sessions work on both, and every replay is refused
across versions: each version reads the records the other writes (claims,
pending requests, sessions, their logout index), or a record one of them
cannot read fails closed.

Keep this test for every change of a record, and move BASE forward to the
main branch each change replaces."""

import concurrent.futures
import os
import subprocess
import urllib.parse

import pytest

import common
import httpd_fleet
from http_client import get, post_acs, relay_of, session_cookie

# main when the records were last checked across versions
BASE = "7ccc9ed"

# one memcached server is the two-server case's simpler half
pytestmark = pytest.mark.backends("redis", "memcached2")
PAGE = "/app/page.html"


@pytest.fixture(scope="session")
def base_module(workdir):
    """mod_replay_sp.so of BASE, built from `git archive` in the work
    directory (bounded: 10 minutes)."""
    git = ["git", "-C", common.REPO]
    shallow = subprocess.run(git + ["rev-parse", "--is-shallow-repository"],
                             capture_output=True, text=True, timeout=30)
    if shallow.stdout.strip() == "true":
        pytest.skip("a shallow clone has no %s to build" % BASE)
    d = common.make_dir(os.path.join(workdir, "base-module"))
    archive = subprocess.run(git + ["archive", BASE], capture_output=True, timeout=60)
    assert archive.returncode == 0, archive.stderr.decode()[-500:]
    subprocess.run(["tar", "-x", "-C", d], input=archive.stdout, check=True, timeout=60)
    for cmd in (["./autogen.sh"], ["./configure", "-q"],
                ["make", "-j%d" % (os.cpu_count() or 2), "mod_replay_sp/mod_replay_sp.la"]):
        r = subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, (cmd, r.stdout[-1000:], r.stderr[-2000:])
    so = os.path.join(d, "mod_replay_sp", ".libs", "mod_replay_sp.so")
    assert os.path.exists(so), so
    return so


def on_base(fleet, base_module, location_extra=""):
    """replica1 and replica3 on BASE, replica2 on the module under test.
    BASE does not know ReplaySPDefaultIdP: the fleet's default IdP is given
    to the version that does (<IfDirective>); BASE goes to its first IdP,
    the same one."""
    fleet.restart_replicas(
        modules=[base_module, fleet.module, base_module], sp=dict(fleet.sp, default_idp=None),
        location_extra="<IfDirective ReplaySPDefaultIdP>\n    ReplaySPDefaultIdP \"%s\"\n"
                       "</IfDirective>\n%s" % (fleet.sp["default_idp"], location_extra))


@pytest.fixture
def mixed(fleet, base_module):
    """replica1 and replica3 on BASE, replica2 on the module under test."""
    on_base(fleet, base_module)
    old, new = fleet.replicas[0], fleet.replicas[1]
    for h, so in ((old, base_module), (new, fleet.module)):
        with open(h.conf_path) as f:
            assert "LoadModule replay_sp_module %s" % so in f.read(), h.name
    return fleet, old.base_url, new.base_url


def sign_in(saml, base, **kw):
    m = saml.mint(**kw)
    r = post_acs(base, m.b64, relay_state=PAGE)
    assert r.status_code == 303, (base, r.status_code, r.text[:300])
    return m, session_cookie(r)[0]


@pytest.mark.expect_log("RSP01001", "RSP01026")
def test_sign_in_through_either_replay_refused_by_the_other(mixed, saml, store):
    fleet, old, new = mixed
    for first, second in ((old, new), (new, old)):
        m, cookie = sign_in(saml, first)
        # the session works on both versions
        for base in (old, new):
            g = get(base + PAGE, cookie=cookie)
            assert g.status_code == 200, (first, base, g.status_code)
        # a replay is refused by the other version, and by the same
        for base in (second, first):
            r = post_acs(base, m.b64, relay_state=PAGE)
            assert r.status_code == 403, (first, base, r.status_code)
        # the winner's own re-post: the other version tells it from a
        # replay by the session the claim records
        again = post_acs(second, m.b64, relay_state=PAGE, cookie=cookie)
        assert again.status_code == 303 and session_cookie(again)[0] is None, \
            (first, again.status_code)
    assert fleet.count_in_logs("RSP01001") == 4


@pytest.mark.expect_log("RSP01001", "RSP01004")
def test_sp_initiated_across_versions(mixed, saml, store):
    """The request stored by one version is answered at the other, once:
    its record, its binding cookie and its use are read by both."""
    fleet, old, new = mixed
    for first, second in ((old, new), (new, old)):
        r = get(first + PAGE)
        assert r.status_code == 302, r.status_code
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(r.headers["Location"]).query)
        req_id, _ = saml.testidp.parse_redirect_authn_request(q["SAMLRequest"][0])
        relay = relay_of(r)
        m = saml.mint(in_response_to=req_id)
        p = post_acs(second, m.b64, relay_state=relay)
        assert p.status_code == 303 and p.headers["Location"] == PAGE, \
            (first, second, p.status_code)
        # the same answer again, on either version: a replay
        for base in (first, second):
            assert post_acs(base, m.b64, relay_state=relay.bare()).status_code == 403
        # another answer to the used request: refused, on either version
        for base in (first, second):
            again = post_acs(base, saml.mint(in_response_to=req_id).b64, relay_state=relay)
            assert again.status_code == 400, (base, again.status_code)


@pytest.mark.expect_log("RSP01001")
def test_concurrent_posts_across_versions_one_wins(mixed, saml, store):
    fleet, old, new = mixed
    m = saml.mint()
    targets = [old, new] * 8
    with concurrent.futures.ThreadPoolExecutor(8) as ex:
        statuses = list(ex.map(lambda b: post_acs(b, m.b64, relay_state=PAGE).status_code,
                               targets, timeout=120))
    assert sorted(statuses) == [303] + [403] * (len(targets) - 1), statuses
    assert len(store.claim_keys()) == 1


def test_logout_across_versions(mixed, saml, store):
    """A session made by one version is ended by the other's logout."""
    fleet, old, new = mixed
    for first, second in ((old, new), (new, old)):
        _, cookie = sign_in(saml, first)
        out = get(second + httpd_fleet.ENDPOINT + "/logout?ReturnTo=/", cookie=cookie)
        assert out.status_code in (302, 303), out.status_code
        g = get(first + PAGE, cookie=cookie)
        assert g.status_code == 302, (first, g.status_code)   # to the IdP again


@pytest.mark.expect_log("check_refused", "RSP01001", "RSP01020")
def test_a_session_without_name_id_fails_closed_on_the_base(fleet, base_module, saml, store):
    """A user named by ReplaySPUserAttribute, the IdP having sent no NameID
    (a session record without one, which BASE never wrote): BASE refuses
    the response (no NameID) and reads the session as none (the browser
    goes to the IdP again), never as another user; the new version signs
    the user in, once, fleet-wide."""
    on_base(fleet, base_module, location_extra="ReplaySPUserAttribute upn")
    old, new = fleet.replicas[0].base_url, fleet.replicas[1].base_url
    m = saml.mint(name_id=None, attributes={"upn": ["alice@example.org"]})
    r = post_acs(old, m.b64, relay_state=PAGE)
    assert r.status_code == 400 and not store.exists(m.key)
    r = post_acs(new, m.b64, relay_state=PAGE)
    assert r.status_code == 303, r.text[:300]
    cookie = session_cookie(r)[0]
    g = get(new + PAGE, cookie=cookie)
    assert g.status_code == 200 and g.headers["X-RSP-User"] == "alice@example.org"
    assert get(old + PAGE, cookie=cookie).status_code == 302
    assert fleet.count_in_logs("RSP01020") == 1      # read as no session
    for base in (old, new):
        assert post_acs(base, m.b64, relay_state=PAGE).status_code in (400, 403)
