"""Sign-in in a real browser: headless Chromium (Debian's chromium and
chromium-driver, through python3-selenium) against a fleet served over
https (a throwaway CA and certificate made by the test, trusted through
the browser's own NSS database) and the test IdP serving its
auto-submitting form over http: a cross-site POST, as in production.

Shown here: protected page → IdP → ACS → page, the session cookie
(SameSite=Lax, Secure) sent on the first page after the cross-site POST,
the binding cookie (SameSite=None; Secure) sent with that POST and
expired afterwards; and login CSRF refused: an attacker's page that
auto-posts the attacker's own response into the victim's browser gets 400
(check=request-browser), no session, and the victim then signs in as
themselves in that same browser."""

import http.server
import os
import shutil
import subprocess
import threading
import time
import urllib.parse

import pytest
import requests

import common
import http_client
import httpd_fleet

PAGE = "/app/page.html"
IDP_ENTITY = "https://chromium-idp.test.example/idp"


@pytest.fixture(scope="module")
def pki(workdir):
    from tls_stores import Pki
    return Pki(os.path.join(workdir, "chromium-pki"))


@pytest.fixture(scope="module")
def http_idp(workdir, testidp):
    """The test IdP on a port of its own (over http), answering the fleet's
    ACS; the fleet's public URL is fixed before it starts."""
    port = common.free_port()
    acs = "https://localhost:%d%s/acs" % (port, httpd_fleet.ENDPOINT)
    box, ready = {}, threading.Event()

    def on_ready(httpd):
        box["httpd"] = httpd
        ready.set()

    t = threading.Thread(target=testidp.serve, daemon=True, kwargs=dict(
        workdir=os.path.join(workdir, "chromium-idp"), sp_entity_id=None, acs_url=acs,
        entity_id=IDP_ENTITY, quiet=True, ready=on_ready))
    t.start()
    assert ready.wait(30), "the test IdP did not start"
    httpd = box["httpd"]
    httpd.balancer_port = port
    yield httpd
    httpd.shutdown()
    t.join(10)


@pytest.fixture(scope="module")
def bfleet(workdir, module_so, redis, sp_config, pki, http_idp):
    sp = dict(sp_config, idp_metadata=[http_idp.idp.metadata_path], default_idp=None)
    # the IdP knows the ACS (the balancer's port) and mints for this SP
    http_idp.sp_entity_id = sp["entity_id"]
    f = httpd_fleet.started_fleet(os.path.join(workdir, "chromium-fleet"), module=module_so,
                                  store_url=redis.url, sp=sp, n_replicas=2, threads=8,
                                  start_servers=1, tls=pki.server,
                                  balancer_port=http_idp.balancer_port)
    assert f.acs_url == http_idp.acs_url
    yield f
    f.stop()


@pytest.fixture(scope="module")
def browser_home(workdir, pki):
    """A HOME whose NSS database trusts the test CA (and nothing else of
    ours): how Chromium on Linux learns a local CA."""
    home = common.make_dir(os.path.join(workdir, "chromium-home"))
    db = common.make_dir(os.path.join(home, ".pki", "nssdb"))
    subprocess.run(["certutil", "-d", "sql:" + db, "-N", "--empty-password"],
                   check=True, capture_output=True, timeout=60)
    subprocess.run(["certutil", "-d", "sql:" + db, "-A", "-t", "C,,", "-n", "rsp-test-ca",
                    "-i", pki.ca], check=True, capture_output=True, timeout=60)
    return home


@pytest.fixture
def browser(browser_home, workdir):
    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        pytest.fail("chromium and chromium-driver are not installed "
                    "(scripts/install-deps.sh)", pytrace=False)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    o = webdriver.ChromeOptions()
    o.binary_location = shutil.which("chromium")
    profile = common.make_dir(os.path.join(workdir, "chromium-profile-%d" % time.time_ns()))
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--no-first-run", "--user-data-dir=" + profile):
        o.add_argument(a)
    env = dict(os.environ, HOME=browser_home)
    d = webdriver.Chrome(service=Service(shutil.which("chromedriver"), env=env), options=o)
    d.set_page_load_timeout(30)
    yield d
    d.quit()


def wait_url(d, want, timeout=20):
    """Wait (bounded) until the browser is at want (its path or URL)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        u = d.current_url
        if u == want or urllib.parse.urlsplit(u).path == want:
            return u
        time.sleep(0.1)
    raise AssertionError("browser at %s, not %s; page: %s"
                         % (d.current_url, want, d.page_source[:300]))


class AttackerSite:
    """A page on another origin that auto-posts a given form (the
    attacker's own SAML response) to the ACS when opened."""

    def __init__(self, html):
        body = html.encode("utf-8")

        class H(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = "http://127.0.0.1:%d/win-a-prize" % self.httpd.server_address[1]
        self.t = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.2},
                                  daemon=True)
        self.t.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.t.join(10)


def sign_in(d, fleet):
    d.get(fleet.public + PAGE)
    wait_url(d, PAGE)
    assert "app page on replica" in d.page_source, d.page_source[:300]


@pytest.mark.expect_log("RSP01004")
def test_sign_in_in_a_real_browser_over_https(bfleet, browser, redis):
    bfleet.mark_logs()
    sign_in(browser, bfleet)
    # the session cookie came with the 303 and went with the first page
    # after the cross-site POST (SameSite=Lax); the binding cookie is gone
    cookies = {c["name"]: c for c in browser.get_cookies()}
    s = cookies[http_client.COOKIE_NAME]
    assert s["secure"] and s["httpOnly"] and s["sameSite"] == "Lax", s
    assert not [n for n in cookies if "_req_" in n], cookies
    accepted = [l for ls in bfleet.new_log_lines().values() for l in ls if "RSP01002" in l]
    assert len(accepted) == 1 and "user=alice" in accepted[0], accepted
    # and the next page too, without the IdP
    browser.get(bfleet.public + PAGE + "?again=1")
    wait_url(browser, PAGE)
    assert browser.current_url.endswith("?again=1")


@pytest.mark.expect_log("RSP01004")
def test_login_csrf_refused_in_a_real_browser(bfleet, browser, pki, http_idp):
    # the attacker starts a sign-in in their own browser and gets their own
    # response, with the binding cookie that goes with it
    r = requests.get(bfleet.public + PAGE, allow_redirects=False, timeout=30, verify=pki.ca)
    assert r.status_code == 302, r.status_code
    bind = [h for h in http_client.set_cookie_headers(r) if "_req_" in h]
    assert len(bind) == 2, bind      # https: SameSite=None; Secure, and its twin
    assert "SameSite=None" in bind[0] and "Secure" in bind[0] and "HttpOnly" in bind[0]
    assert "_l=" in bind[1] and "SameSite" not in bind[1] and "Secure" in bind[1]
    form = requests.get(r.headers["Location"] + "&user=mallory", timeout=30).text
    assert "SAMLResponse" in form and "document.forms[0].submit()" in form
    site = AttackerSite(form)
    try:
        bfleet.mark_logs()
        # the victim's browser opens the attacker's page: it posts the
        # attacker's response to the ACS, without the attacker's cookie
        browser.get(site.url)
        wait_url(browser, httpd_fleet.ENDPOINT + "/acs")
        assert "400" in browser.title or "Bad Request" in browser.page_source, \
            browser.page_source[:300]
    finally:
        site.close()
    logs = [l for ls in bfleet.new_log_lines().values() for l in ls]
    assert sum("check=request-browser" in l for l in logs) == 1, logs[-5:]
    assert not [l for l in logs if "RSP01002" in l], "signed in as the attacker"
    assert http_client.COOKIE_NAME not in {c["name"] for c in browser.get_cookies()}
    # the victim signs in as themselves in the same browser
    bfleet.mark_logs()
    sign_in(browser, bfleet)
    accepted = [l for ls in bfleet.new_log_lines().values() for l in ls if "RSP01002" in l]
    assert len(accepted) == 1 and "user=alice" in accepted[0], accepted


# --------------------------------------------------------------------------
# the built-in discovery page, in a real browser
# --------------------------------------------------------------------------

ARTIFACTS = os.environ.get("RSP_ARTIFACTS", os.path.join(common.REPO, "test-artifacts"))


def browser_without_javascript(browser_home, workdir):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    o = webdriver.ChromeOptions()
    o.binary_location = shutil.which("chromium")
    profile = common.make_dir(os.path.join(workdir, "chromium-nojs-%d" % time.time_ns()))
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--no-first-run", "--user-data-dir=" + profile):
        o.add_argument(a)
    o.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    d = webdriver.Chrome(service=Service(shutil.which("chromedriver"),
                                         env=dict(os.environ, HOME=browser_home)), options=o)
    d.set_page_load_timeout(30)
    return d


@pytest.fixture
def discovery_fleet(bfleet, http_idp, idps, sp_config):
    """The browser fleet trusting the served IdP and idp2, without a
    default IdP: a browser without a session chooses on PATH/discovery."""
    sp = dict(sp_config, default_idp=None,
              idp_metadata=[http_idp.idp.metadata_path, idps["idp2"].metadata_path])
    bfleet.restart_replicas(sp=sp)
    yield bfleet
    bfleet.reset_replicas()


def idp_links(d):
    from selenium.webdriver.common.by import By
    return [(a.text, a.get_attribute("href"))
            for a in d.find_elements(By.CSS_SELECTOR, "ul.idps a")]


def test_choosing_an_idp_on_the_discovery_page_in_a_real_browser(discovery_fleet, browser,
                                                                 browser_home, workdir,
                                                                 idps):
    """The page lists the IdPs, its search filters them with JavaScript on
    and off (the page has none: the server filters), and choosing the
    served IdP signs in through it and lands on the page first asked for.
    A screenshot of the page is kept (RSP_ARTIFACTS, default
    test-artifacts/)."""
    from selenium.webdriver.common.by import By
    fleet = discovery_fleet
    browser.get(fleet.public + PAGE)
    wait_url(browser, httpd_fleet.ENDPOINT + "/discovery")
    assert [t for t, _ in idp_links(browser)] == [IDP_ENTITY, idps["idp2"].entity_id]
    assert browser.find_element(By.CSS_SELECTOR, "label[for=q]").text == "Search"
    os.makedirs(ARTIFACTS, exist_ok=True)
    assert browser.save_screenshot(os.path.join(ARTIFACTS, "discovery-page.png"))
    # the search, in both browsers
    page = browser.current_url
    nojs = browser_without_javascript(browser_home, workdir)
    try:
        for d in (browser, nojs):
            d.get(page)
            box = d.find_element(By.ID, "q")
            box.clear()
            box.send_keys("chromium")
            box.submit()
            deadline = time.monotonic() + 20
            while "q=chromium" not in d.current_url and time.monotonic() < deadline:
                time.sleep(0.1)
            assert [t for t, _ in idp_links(d)] == [IDP_ENTITY], d.page_source[:500]
            assert "1 of 2 organisations" in d.find_element(By.ID, "count").text
    finally:
        nojs.quit()
    # the choice signs in through the served IdP and comes back to the page
    browser.find_element(By.CSS_SELECTOR, "ul.idps a").click()
    wait_url(browser, PAGE)
    assert "app page on replica" in browser.page_source, browser.page_source[:300]
    assert urllib.parse.urlsplit(browser.current_url).path == PAGE
    # and it is offered first next time
    browser.delete_cookie(http_client.COOKIE_NAME)
    browser.get(fleet.public + PAGE + "?next=1")
    wait_url(browser, httpd_fleet.ENDPOINT + "/discovery")
    last = browser.find_elements(By.CSS_SELECTOR, "ul.last a")
    assert [a.text for a in last] == [IDP_ENTITY]
