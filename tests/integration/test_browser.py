"""A browser's whole life cycle over HTTP, each step on another replica,
with the test IdP running as an HTTP server (its SingleSignOnService and
SingleLogoutService are real URLs): protected page → IdP → ACS → page with
the session and attributes; logout → IdP → back; IdP-initiated logout."""

import html
import os
import re
import threading
import urllib.parse

import pytest
import requests

import http_client
import httpd_fleet
from http_client import get, session_cookie

PAGE = "/app/page.html?from=browser"
ATTRS = {"mail": ["alice@example.org"], "group": ["staff", "admins"]}
ENV_HEADERS = "\n".join([
    'Header always set X-Mail "expr=%{reqenv:REPLAYSP_mail}"',
    'Header always set X-Group1 "expr=%{reqenv:REPLAYSP_group_1}"',
    'Header always set X-GroupN "expr=%{reqenv:REPLAYSP_group_N}"',
])

pytestmark = pytest.mark.backends("redis", "memcached2")


@pytest.fixture
def http_idp(workdir, fleet, testidp):
    """The test IdP serving on a port of its own, knowing the fleet's SP
    metadata URL; the replicas restarted to trust it (first IdP)."""
    box = {}
    ready = threading.Event()

    def on_ready(httpd):
        box["httpd"] = httpd
        ready.set()

    t = threading.Thread(target=testidp.serve, daemon=True, kwargs=dict(
        workdir=os.path.join(workdir, "http-idp"), sp_entity_id=fleet.entity_id,
        acs_url=fleet.acs_url, entity_id="https://http-idp.test.example/idp",
        attributes=ATTRS, quiet=True, ready=on_ready,
        sp_metadata_url=fleet.public + httpd_fleet.ENDPOINT + "/metadata"))
    t.start()
    assert ready.wait(30), "the test IdP did not start"
    httpd = box["httpd"]
    try:
        sp = dict(fleet.sp, idp_metadata=[httpd.idp.metadata_path] + fleet.sp["idp_metadata"],
                  default_idp=httpd.idp.entity_id)
        fleet.restart_replicas(sp=sp, location_extra=ENV_HEADERS)
        yield httpd
    finally:
        httpd.shutdown()
        t.join(10)


def browse(url, cookie=None):
    """One GET, no redirect followed (the test follows them itself)."""
    return get(url, cookie=cookie)


def autopost(page):
    fields = dict(re.findall(r'name="(SAMLResponse|RelayState)"\s+value="([^"]*)"', page))
    action = re.search(r'<form method="post" action="([^"]*)"', page).group(1)
    return html.unescape(action), {k: html.unescape(v) for k, v in fields.items()}


def on(base, url):
    """url's path and query, sent to base (a given replica)."""
    u = urllib.parse.urlsplit(url)
    return base + u.path + ("?" + u.query if u.query else "")


def test_browser_sign_in_each_step_on_another_replica_then_logout(fleet, store, http_idp):
    r1, r2, r3 = fleet.replicas
    idp_base = "http://127.0.0.1:%d" % http_idp.server_address[1]

    # 1. the protected page, on replica 1: to the IdP
    r = browse(r1.base_url + PAGE)
    assert r.status_code == 302
    to_idp = r.headers["Location"]
    assert to_idp.startswith(idp_base + "/idp/sso?")
    # 2. the IdP answers with its auto-posting form
    page = requests.get(to_idp + "&user=alice", timeout=30)
    assert page.status_code == 200, page.text[:300]
    action, fields = autopost(page.text)
    assert action == fleet.acs_url
    # 3. the form is posted to replica 2, by the browser that started the
    # sign-in (its binding cookie)
    p = requests.post(on(r2.base_url, action), data=fields, allow_redirects=False, timeout=30,
                      cookies=http_client.binding_cookies(r))
    assert p.status_code == 303, p.text[:300]
    cookie, _ = session_cookie(p)
    assert cookie and p.headers["Location"] == PAGE
    # 4. back to the page, on replica 3, with the session and attributes
    g = browse(r3.base_url + p.headers["Location"], cookie=cookie)
    assert g.status_code == 200
    assert g.headers["X-RSP-User"] == httpd_fleet.qualified_user(
        "https://http-idp.test.example/idp", fleet.entity_id, "alice")
    assert g.headers["X-Mail"] == "alice@example.org"
    assert g.headers["X-Group1"] == "admins" and g.headers["X-GroupN"] == "2"

    # logout on replica 1 → the IdP's SLO → its answer on replica 2 → ReturnTo
    out = browse(r1.base_url + httpd_fleet.ENDPOINT + "/logout?ReturnTo=%2Fbye", cookie=cookie)
    assert out.status_code == 302
    assert out.headers["Location"].startswith(idp_base + "/idp/slo?SAMLRequest=")
    back = requests.get(out.headers["Location"], allow_redirects=False, timeout=30)
    assert back.status_code == 302, back.text[:300]
    done = browse(on(r2.base_url, back.headers["Location"]))
    assert done.status_code == 302 and done.headers["Location"] == "/bye"
    for name, base in fleet.targets():
        again = browse(base + PAGE, cookie=cookie)
        assert again.status_code == 302 and \
            again.headers["Location"].startswith(idp_base + "/idp/sso?"), name
    log = requests.get(idp_base + "/idp/slo-log", timeout=30).json()["entries"]
    assert [e["type"] for e in log if e["direction"] == "received"] == ["LogoutRequest"]


def test_browser_idp_initiated_logout(fleet, store, http_idp):
    r1, r2, r3 = fleet.replicas
    idp_base = "http://127.0.0.1:%d" % http_idp.server_address[1]
    r = browse(r1.base_url + PAGE)
    page = requests.get(r.headers["Location"] + "&user=alice", timeout=30)
    action, fields = autopost(page.text)
    p = requests.post(on(r2.base_url, action), data=fields, allow_redirects=False, timeout=30,
                      cookies=http_client.binding_cookies(r))
    cookie, _ = session_cookie(p)
    assert cookie
    # the IdP sends the browser to the SP's SLO with a LogoutRequest
    start = requests.get(idp_base + "/idp/logout?user=alice&relay=r9",
                         allow_redirects=False, timeout=30)
    assert start.status_code == 302, start.text[:300]
    assert start.headers["Location"].startswith(fleet.public + httpd_fleet.ENDPOINT + "/slo?")
    answer = browse(on(r3.base_url, start.headers["Location"]))
    assert answer.status_code == 302
    assert answer.headers["Location"].startswith(idp_base + "/idp/slo?SAMLResponse=")
    got = requests.get(answer.headers["Location"], allow_redirects=False, timeout=30)
    assert got.status_code == 200, got.text[:300]
    entries = requests.get(idp_base + "/idp/slo-log", timeout=30).json()["entries"]
    received = [e for e in entries if e["direction"] == "received"]
    assert received and received[-1]["type"] == "LogoutResponse" and received[-1]["ok"]
    for name, base in fleet.targets():
        assert browse(base + PAGE, cookie=cookie).status_code == 302, name
