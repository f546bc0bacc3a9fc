"""Discovery, scopes and qualified users with a federation of thousands of
IdPs: one signed aggregate of the synthetic federation
(tests/integration/federation.py) with N_IDPS IdPs, a few of them added
with markup and quotes in their DisplayName, read by a fleet (https in
front, for the browser) that trusts all of them and names no default IdP.

Shown through the real fleet: PATH/DiscoFeed lists every IdP not hidden
from discovery, with the names and logos the generator gave it;
PATH/discovery filters on the server (no JavaScript needed), says when
nothing matches, escapes names, and stays small without a filter; the
4,000th IdP, chosen as the page's links do, signs in (REMOTE_USER
qualified IdP!SP!NameID) and lands on the page first asked for, and is
offered first next time; each IdP keeps scoped values in its own scope
only (another IdP's scope is dropped, RSP01052, and refused as the user
attribute with check=scope before anything is claimed); and the same in
headless Chromium, with JavaScript on and off, a screenshot kept.

Figures (feed and page size and time) are printed and written to
RSP_ARTIFACTS/discovery-federation.txt. Redis only: this is about
metadata, not the store."""

import html
import json
import os
import threading
import time
import urllib.parse

import pytest
import requests

import common
import federation
import httpd_fleet
from http_client import get, post_acs, relay_of, session_cookie
from httpd_fleet import Httpd
from test_discovery import Page

pytestmark = pytest.mark.backends("redis")

N_IDPS = 5000
N_SPS = 50
CHOSEN = 4000            # the IdP the sign-in goes through (served over http)
PAGE = "/app/page.html?from=disco"
EPPN = "urn:oid:1.3.6.1.4.1.5923.1.1.1.6"
EPPN_ENV = "urn_oid_1_3_6_1_4_1_5923_1_1_1_6"
ENDPOINT = httpd_fleet.ENDPOINT
# IdPs added after the generated ones, whose names are markup
EVIL_NAMES = ('Evil <script>alert("x")</script> University',
              "O'Brien & \"Partners\" <b>College</b>",
              "</span></a><img src=x onerror=alert(1)>")
ARTIFACTS = os.environ.get("RSP_ARTIFACTS", os.path.join(common.REPO, "test-artifacts"))
FIGURES = {}


def figure(name, text):
    """A measured figure: printed (shown with -rA) and kept in
    RSP_ARTIFACTS/discovery-federation.txt."""
    FIGURES[name] = text
    print("figure: %s: %s" % (name, text))
    os.makedirs(ARTIFACTS, exist_ok=True)
    with open(os.path.join(ARTIFACTS, "discovery-federation.txt"), "w") as f:
        f.write("".join("%s: %s\n" % kv for kv in sorted(FIGURES.items())))


class Fed:
    """The aggregate: federation.Federation plus the added IdPs."""

    def __init__(self, fed, evil, path, idp_port):
        self.fed, self.evil, self.path, self.idp_port = fed, evil, path, idp_port
        self.all = fed.idps + evil
        self.listed = [i for i in self.all if not i.hidden]

    def sso_url(self, i):
        if i == CHOSEN:
            return "http://127.0.0.1:%d/idp/sso" % self.idp_port
        return self.all[i].sso_url


@pytest.fixture(scope="module")
def big_fed(workdir, testidp):
    """N_IDPS generated IdPs (CHOSEN's SSO service is the test IdP served
    on a port of its own) and len(EVIL_NAMES) more whose DisplayName is
    markup, signed as one aggregate."""
    d = os.path.join(workdir, "discofed")
    signer = testidp.make_keypair(os.path.join(d, "signer"), "signer", "rsp discofed signer")
    os.chmod(signer[0], 0o644)
    port = common.free_port()
    served = "http://127.0.0.1:%d/idp/SAML2" % port
    t0 = time.monotonic()
    fed = federation.make(d, N_IDPS, N_SPS, keys=4, filename="unsigned.xml",
                          valid_until=time.time() + 7 * 86400,
                          sso_base=lambda i: served if i == CHOSEN else
                          "https://idp.org%05d.example.org/idp/profile/SAML2" % i)
    with open(fed.path, encoding="utf-8") as f:
        text = f.read()
    text = text.replace('"%s/Redirect/SSO"' % served, '"http://127.0.0.1:%d/idp/sso"' % port)
    pems = {crt: federation._pem_bodies([(k, crt)])[0] for k, crt in fed.keys}
    evil = [federation._idp(N_IDPS + k, fed.keys, None)._replace(display_name=name)
            for k, name in enumerate(EVIL_NAMES)]
    assert not any(e.hidden for e in evil)
    text = text.replace("</md:EntitiesDescriptor>", "".join(
        federation._idp_entity(e, [pems[c] for c in e.cert_files]) for e in evil)
        + "</md:EntitiesDescriptor>")
    text = text.replace("<md:EntitiesDescriptor ", '<md:EntitiesDescriptor ID="_discofed" ', 1)
    path = os.path.join(d, "federation.xml")
    federation._write(path, federation.sign(text, *signer))
    figure("aggregate", "%d IdPs (%d hidden from discovery), %d SPs, %.1f MB, made and "
           "signed in %.1f s" % (len(fed.idps) + len(evil), sum(i.hidden for i in fed.idps),
                                 N_SPS, os.path.getsize(path) / 1e6, time.monotonic() - t0))
    return Fed(fed, evil, path, port), signer


@pytest.fixture(scope="module")
def pki(workdir):
    from tls_stores import Pki
    return Pki(os.path.join(workdir, "discofed-pki"))


@pytest.fixture(scope="module")
def served_idp(workdir, testidp, big_fed, sp_config):
    """IdP CHOSEN, served over http (its own key) for the browser, answering
    the fleet's ACS (the balancer's port, fixed before the fleet starts)."""
    fed, _ = big_fed
    bport = common.free_port()
    wd = os.path.join(workdir, "discofed-served")
    fed.fed.test_idp(CHOSEN, wd)      # its key and certificate, in wd
    box, ready = {}, threading.Event()

    def on_ready(httpd):
        box["httpd"] = httpd
        ready.set()

    t = threading.Thread(target=testidp.serve, daemon=True, kwargs=dict(
        workdir=wd, sp_entity_id=sp_config["entity_id"],
        acs_url="https://localhost:%d%s/acs" % (bport, ENDPOINT), port=fed.idp_port,
        entity_id=fed.all[CHOSEN].entity_id, sso_url=fed.sso_url(CHOSEN), quiet=True,
        ready=on_ready))
    t.start()
    assert ready.wait(30), "the test IdP did not start"
    httpd = box["httpd"]
    httpd.balancer_port = bport
    yield httpd
    httpd.shutdown()
    t.join(10)


@pytest.fixture(scope="module")
def dfleet(workdir, module_so, redis, sp_config, big_fed, pki, served_idp):
    fed, signer = big_fed
    sp = dict(sp_config, idp_metadata=[(fed.path, signer[1])], default_idp=None)
    t0 = time.monotonic()
    f = httpd_fleet.started_fleet(
        os.path.join(workdir, "discofed-fleet"), module=module_so, store_url=redis.url, sp=sp,
        n_replicas=2, threads=8, start_servers=1, tls=pki.server,
        balancer_port=served_idp.balancer_port,
        location_extra='Header always set X-EPPN "expr=%%{reqenv:REPLAYSP_%s}"' % EPPN_ENV)
    figure("fleet start", "2 replicas and a balancer reading the aggregate: %.1f s"
           % (time.monotonic() - t0))
    yield f
    f.stop()


def timed_get(url, **kw):
    t0 = time.monotonic()
    r = requests.get(url, timeout=30, **kw)
    return r, time.monotonic() - t0


def disco(fleet, query=None, cookies=None, base=None):
    url = ((base or fleet.replicas[0].base_url) + ENDPOINT + "/discovery?ReturnTo="
           + urllib.parse.quote(PAGE, safe=""))
    if query is not None:
        url += "&q=" + urllib.parse.quote(query, safe="")
    r, seconds = timed_get(url, cookies=cookies)
    assert r.status_code == 200, (r.status_code, r.text[:300])
    return r, Page(r.text), seconds


def names(page, which="idps"):
    return [t for _, t in page.lists.get(which, [])]


def display_names(i):
    """What the generator gave IdP i (federation._idp_entity)."""
    want = [{"value": i.display_name, "lang": "en"}]
    if i.index % 3 == 0:
        want.append({"value": "Organisation %05d (de)" % i.index, "lang": "de"})
    return want


def choice_href(entity_id):
    return (ENDPOINT + "/login?ReturnTo=" + urllib.parse.quote(PAGE, safe="") + "&IdP="
            + urllib.parse.quote(entity_id, safe=""))


# --------------------------------------------------------------------------
# the feed
# --------------------------------------------------------------------------

def test_the_feed_lists_every_idp_not_hidden(dfleet, big_fed):
    fed, _ = big_fed
    r, seconds = timed_get(dfleet.replicas[0].base_url + ENDPOINT + "/DiscoFeed")
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("application/json")
    feed = json.loads(r.text)
    figure("DiscoFeed", "%d entries, %.0f kB, %.0f ms" % (len(feed), len(r.content) / 1e3,
                                                          seconds * 1e3))
    assert seconds < 10
    assert len(feed) == len(fed.listed) == len(fed.all) - sum(i.hidden for i in fed.all)
    by_id = {e["entityID"]: e for e in feed}
    assert len(by_id) == len(feed)
    assert set(by_id) == {i.entity_id for i in fed.listed}
    hidden = [i for i in fed.all if i.hidden]
    assert len(hidden) == N_IDPS // 100 and not any(i.entity_id in by_id for i in hidden)
    for i in fed.listed:
        e = by_id[i.entity_id]
        assert e["DisplayNames"] == display_names(i), e
        if i.index % 2 == 1:
            assert e["Logos"] == [{"value": "https://www.org%05d.example.org/logo.png" % i.index,
                                   "height": "60", "width": "80"}], e
        else:
            assert "Logos" not in e, e
    assert "<script>" not in r.text and "\\u003cscript\\u003e" in r.text


# --------------------------------------------------------------------------
# the page, without JavaScript
# --------------------------------------------------------------------------

def test_the_page_filters_on_the_server(dfleet, big_fed):
    fed, _ = big_fed
    # a university number: 04000..04009, of which 04003 is hidden
    r, page, seconds = disco(dfleet, "org0400")
    want = [i for i in fed.listed if "org0400" in i.entity_id]
    assert len(want) == 9
    assert page.lists["idps"] == [(choice_href(i.entity_id), i.display_name) for i in want]
    assert "9 of %d organisations matching" % len(fed.listed) in r.text
    figure("page, filtered (9 of %d)" % len(fed.listed),
           "%.1f kB, %.0f ms" % (len(r.content) / 1e3, seconds * 1e3))
    # by name, in any letter case, on the other replica
    _, page, _ = disco(dfleet, "organisation 01234", base=dfleet.replicas[1].base_url)
    assert names(page) == ["Organisation 01234"]
    # nothing matches: it says so
    r, page, _ = disco(dfleet, "no such university")
    assert names(page) == []
    assert "0 of %d organisations matching" % len(fed.listed) in r.text


def test_names_from_metadata_are_escaped(dfleet, big_fed):
    fed, _ = big_fed
    for q, want in (("script", [EVIL_NAMES[0]]), ("brien", [EVIL_NAMES[1]]),
                    ("onerror", [EVIL_NAMES[2]])):
        r, page, _ = disco(dfleet, q)
        assert names(page) == want, (q, names(page))
        assert page.scripts == 0 and "<script>" not in r.text and "<b>" not in r.text
        assert "<img src=x" not in r.text
        assert html.escape(want[0]).replace("&#x27;", "&#039;") in r.text, r.text[-900:]
    r, page, _ = disco(dfleet, "\"Partners\" <b>")
    assert names(page) == [EVIL_NAMES[1]]
    assert "<b>" not in r.text and "&quot;Partners&quot; &lt;b&gt;" in r.text


def test_the_unfiltered_page_stays_small(dfleet, big_fed):
    """Without a filter (or with one that matches thousands), the page
    lists the first RSP_DISCOVERY_MAX_SHOWN (200) in metadata order and asks
    for more of the name: tens of kilobytes, not the megabyte all of them
    would take."""
    fed, _ = big_fed
    r, page, seconds = disco(dfleet)
    figure("page, unfiltered (%d IdPs)" % len(fed.listed), "%d listed, %.0f kB, %.0f ms"
           % (len(page.lists["idps"]), len(r.content) / 1e3, seconds * 1e3))
    assert seconds < 10
    assert page.lists["idps"] == [(choice_href(i.entity_id), i.display_name)
                                  for i in fed.listed[:200]]
    assert len(r.content) < 100 << 10, len(r.content)
    assert ("The first 200 shown of %d of %d organisations: type more of the name to find "
            "yours" % (len(fed.listed), len(fed.listed))) in r.text
    # a filter that matches thousands: capped the same way
    r, page, seconds = disco(dfleet, "organisation 0")
    matched = [i for i in fed.listed if any(n["value"].lower().startswith("organisation 0")
                                            for n in display_names(i))]
    assert names(page) == [i.display_name for i in matched[:200]]
    assert "The first 200 shown of %d of %d organisations matching" % (
        len(matched), len(fed.listed)) in r.text, r.text[-300:]
    figure("page, filter matching %d" % len(matched), "%.0f kB, %.0f ms"
           % (len(r.content) / 1e3, seconds * 1e3))


# --------------------------------------------------------------------------
# choosing the 4,000th IdP
# --------------------------------------------------------------------------

def test_choosing_the_4000th_idp_signs_in_through_it(dfleet, big_fed, testidp, workdir,
                                                     sp_config):
    fed, _ = big_fed
    r1, r2 = dfleet.replicas
    chosen = fed.all[CHOSEN]
    # a protected page without a session: the built-in page
    r = get(r1.base_url + PAGE)
    assert r.status_code == 302 and r.headers["Location"] == (
        dfleet.public + ENDPOINT + "/discovery?ReturnTo=" + urllib.parse.quote(PAGE, safe=""))
    # its link for the 4,000th, as the form gives it
    _, page, _ = disco(dfleet, "%05d" % CHOSEN)
    assert page.lists["idps"] == [(choice_href(chosen.entity_id), chosen.display_name)]
    resp = get(r2.base_url + page.lists["idps"][0][0])
    assert resp.status_code == 302, (resp.status_code, resp.text[:300])
    loc = resp.headers["Location"]
    assert loc.startswith(fed.sso_url(CHOSEN) + "?SAMLRequest="), loc[:200]
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(loc).query)
    req_id, acs = testidp.parse_redirect_authn_request(q["SAMLRequest"][0])
    assert acs == dfleet.acs_url
    remembered = [c for c in resp.headers.get("Set-Cookie", "").split(", ")
                  if c.startswith("replay_sp_session_idp=")]
    assert remembered, resp.headers.get("Set-Cookie")
    # IdP 4000's signed answer, to the other replica
    idp = fed.fed.test_idp(CHOSEN, os.path.join(workdir, "discofed-idp-%d" % CHOSEN))
    b64 = idp.mint(sp_config["entity_id"], dfleet.acs_url, in_response_to=req_id,
                   name_id="n-4000")
    r = post_acs(r1.base_url, b64, relay_state=relay_of(resp))
    assert r.status_code == 303 and r.headers["Location"] == PAGE, (r.status_code,
                                                                    r.text[:300])
    g = get(r2.base_url + PAGE, cookie=session_cookie(r)[0])
    assert g.status_code == 200
    assert g.headers["X-RSP-User"] == "%s!%s!n-4000" % (chosen.entity_id,
                                                        sp_config["entity_id"])
    # next time it is offered first, above the list
    value = remembered[0].split(";")[0].split("=", 1)[1]
    r, page, seconds = disco(dfleet, cookies={"replay_sp_session_idp": value})
    assert page.lists["last"] == [(choice_href(chosen.entity_id), chosen.display_name)]
    assert r.text.index('class="last"') < r.text.index('class="idps"')


# --------------------------------------------------------------------------
# scopes
# --------------------------------------------------------------------------

def unsolicited(fleet, base, fed, i, workdir, **kw):
    idp = fed.fed.test_idp(i, os.path.join(workdir, "discofed-idp-%d" % i))
    acs = fleet.acs_url if fleet else base + ENDPOINT + "/acs"
    return post_acs(base, idp.mint(fleet.entity_id if fleet else kw.pop("sp"), acs, **kw))


@pytest.mark.expect_log("RSP01052")
def test_each_idp_keeps_its_own_scope_only(dfleet, big_fed, workdir):
    fed, _ = big_fed
    base = dfleet.replicas[0].base_url
    dfleet.mark_logs()
    r = unsolicited(dfleet, base, fed, 1234, workdir, name_id="u1",
                    attributes={EPPN: ["alice@org01234.example.org"]})
    assert r.status_code == 303, (r.status_code, r.text[:300])
    g = get(base + PAGE, cookie=session_cookie(r)[0])
    assert g.headers["X-EPPN"] == "alice@org01234.example.org"
    assert not dfleet.count_in_logs("RSP01052")
    # IdP 2345 asserting IdP 3456's scope: dropped, the sign-in goes on
    r = unsolicited(dfleet, base, fed, 2345, workdir, name_id="u2",
                    attributes={EPPN: ["mallory@org03456.example.org"]})
    assert r.status_code == 303, (r.status_code, r.text[:300])
    g = get(base + PAGE, cookie=session_cookie(r)[0])
    assert g.headers.get("X-EPPN", "") == ""
    drops = [l for ls in dfleet.new_log_lines().values() for l in ls if "RSP01052" in l]
    assert len(drops) == 1, drops
    assert ("its scope org03456.example.org" in drops[0]
            and fed.all[2345].entity_id in drops[0] and "mallory" not in drops[0]), drops


@pytest.mark.expect_log("check_refused")
def test_a_foreign_scoped_user_is_refused_before_any_claim(workdir, module_so, redis,
                                                           sp_config, big_fed, testidp):
    from stores import claim_key
    fed, signer = big_fed
    sp = dict(sp_config, idp_metadata=[(fed.path, signer[1])], default_idp=None)
    h = Httpd(os.path.join(workdir, "discofed-user-attr"), "discofed-user-attr",
              modules=[("replay_sp_module", module_so)], log_level="warn replay_sp:info",
              threads=4, start_servers=1)
    h.body = httpd_fleet.sp_conf_body(redis.url, sp, location_extra=(
        "ReplaySPUserAttribute %s" % EPPN))
    h.start()
    try:
        r = unsolicited(None, h.base_url, fed, 4321, workdir, sp=sp["entity_id"],
                        name_id="u3", attributes={EPPN: ["bob@org04321.example.org"]})
        assert r.status_code == 303, (r.status_code, r.text[:300])
        g = get(h.base_url + "/", cookie=session_cookie(r)[0])
        assert g.headers["X-RSP-User"] == "bob@org04321.example.org"
        aid = testidp.random_id()
        h.mark_log()
        r = unsolicited(None, h.base_url, fed, 4322, workdir, sp=sp["entity_id"],
                        name_id="u4", assertion_id=aid,
                        attributes={EPPN: ["bob@org04321.example.org"]})
        assert r.status_code == 400, r.status_code
        refused = [l for l in h.new_log_lines() if "RSP01004" in l]
        assert len(refused) == 1 and "check=scope" in refused[0], refused
        assert not redis.client().exists(claim_key(fed.all[4322].entity_id, aid))
    finally:
        h.stop()


# --------------------------------------------------------------------------
# in headless Chromium
# --------------------------------------------------------------------------

from test_chromium import idp_links, wait_url  # noqa: E402


@pytest.fixture(scope="module")
def browser_home(workdir, pki):
    """A HOME whose NSS database trusts this module's test CA (as
    test_chromium.py makes its own, in a directory of its own)."""
    import subprocess
    home = common.make_dir(os.path.join(workdir, "discofed-chromium-home"))
    db = common.make_dir(os.path.join(home, ".pki", "nssdb"))
    subprocess.run(["certutil", "-d", "sql:" + db, "-N", "--empty-password"],
                   check=True, capture_output=True, timeout=60)
    subprocess.run(["certutil", "-d", "sql:" + db, "-A", "-t", "C,,", "-n", "rsp-test-ca",
                    "-i", pki.ca], check=True, capture_output=True, timeout=60)
    return home


def chromium(home, workdir, javascript=True):
    """Headless Chromium as test_chromium.py starts it, whose resolver
    knows localhost only: the federation's logos (https://www.orgNNNNN...)
    fail at once instead of waiting on DNS, as they would offline."""
    import shutil
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        pytest.fail("chromium and chromium-driver are not installed "
                    "(scripts/install-deps.sh)", pytrace=False)
    o = webdriver.ChromeOptions()
    o.binary_location = shutil.which("chromium")
    profile = common.make_dir(os.path.join(workdir, "discofed-chromium-%d" % time.time_ns()))
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--no-first-run", "--user-data-dir=" + profile,
              "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"):
        o.add_argument(a)
    if not javascript:
        o.add_experimental_option(
            "prefs", {"profile.managed_default_content_settings.javascript": 2})
    d = webdriver.Chrome(service=Service(shutil.which("chromedriver"),
                                         env=dict(os.environ, HOME=home)), options=o)
    d.set_page_load_timeout(30)
    return d


@pytest.fixture
def browser(browser_home, workdir):
    d = chromium(browser_home, workdir)
    yield d
    d.quit()


def search(d, text):
    from selenium.webdriver.common.by import By
    box = d.find_element(By.ID, "q")
    box.clear()
    box.send_keys(text)
    box.submit()
    want = "q=" + urllib.parse.quote_plus(text)
    deadline = time.monotonic() + 20
    while want not in d.current_url and time.monotonic() < deadline:
        time.sleep(0.1)
    assert want in d.current_url, d.current_url


def test_choosing_among_thousands_in_a_real_browser(dfleet, big_fed, browser, browser_home,
                                                    workdir):
    """The page of the federation in Chromium (its load timed, a
    screenshot kept in RSP_ARTIFACTS), its search with JavaScript on and
    off (the page has none: the server filters), and the 4,000th IdP
    chosen: it signs in through that IdP (served over http, a cross-site
    POST back) and lands on the page first asked for."""
    from selenium.webdriver.common.by import By
    fed, _ = big_fed
    chosen = fed.all[CHOSEN]
    t0 = time.monotonic()
    browser.get(dfleet.public + PAGE)
    wait_url(browser, ENDPOINT + "/discovery")
    links = idp_links(browser)
    figure("page in Chromium (unfiltered)", "%d links, loaded in %.0f ms (redirect included)"
           % (len(links), (time.monotonic() - t0) * 1e3))
    assert [t for t, _ in links] == [i.display_name for i in fed.listed[:200]]
    assert "type more of the name" in browser.find_element(By.ID, "count").text
    os.makedirs(ARTIFACTS, exist_ok=True)
    assert browser.save_screenshot(os.path.join(ARTIFACTS, "discovery-federation-page.png"))
    page = browser.current_url
    nojs = chromium(browser_home, workdir, javascript=False)
    try:
        for d in (nojs, browser):
            d.get(page)
            search(d, "Organisation %05d" % CHOSEN)
            assert [t for t, _ in idp_links(d)] == [chosen.display_name], d.page_source[:500]
            assert "1 of %d organisations" % len(fed.listed) in d.find_element(
                By.ID, "count").text
    finally:
        nojs.quit()
    assert browser.save_screenshot(os.path.join(ARTIFACTS,
                                                "discovery-federation-filtered.png"))
    browser.find_element(By.CSS_SELECTOR, "ul.idps a").click()
    wait_url(browser, urllib.parse.urlsplit(PAGE).path)
    assert browser.current_url == dfleet.public + PAGE, browser.current_url
    assert "app page on replica" in browser.page_source, browser.page_source[:300]
