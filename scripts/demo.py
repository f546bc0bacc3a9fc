#!/usr/bin/python3
"""Replay a SAML response against a fleet and show that only one post wins.

Uses the integration harness (tests/integration; harness.py re-exports its
modules) for Redis and httpd, and the test IdP (tests/idp/rsp_testidp.py) as
a real HTTP server.
Everything runs on 127.0.0.1 and is stopped, by PID, before exit.
"""
import html
import os
import re
import subprocess
import sys
import time
import urllib.parse
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))
sys.path.insert(0, os.path.join(REPO, "tests", "idp"))

import requests  # noqa: E402

import harness  # noqa: E402
import rsp_testidp  # noqa: E402


def step(msg):
    print("\n== %s" % msg, flush=True)


def start_idp(workdir, sp_entity_id, acs_url, sp_metadata_url):
    """The test IdP as an HTTP server; returns (process, base URL)."""
    proc = subprocess.Popen(
        ["/usr/bin/python3", os.path.join(REPO, "tests", "idp", "rsp_testidp.py"),
         "serve", "--quiet", "--workdir", workdir, "--sp-entity-id", sp_entity_id,
         "--acs-url", acs_url, "--port", "0",
         "--sp-metadata-url", sp_metadata_url],
        stdout=subprocess.PIPE, text=True)
    deadline = time.time() + 30
    while time.time() < deadline:
        line = proc.stdout.readline()
        m = re.match(r"PORT (\d+)", line or "")
        if m:
            return proc, "http://127.0.0.1:%s" % m.group(1)
        if proc.poll() is not None:
            break
    proc.kill()
    raise RuntimeError("test IdP did not start")


def form_fields(page):
    """SAMLResponse and RelayState from the IdP's auto-submitting form."""
    fields = dict(re.findall(r'name="(SAMLResponse|RelayState)"\s+value="([^"]*)"', page))
    return {k: html.unescape(v) for k, v in fields.items()}


def main():
    work = harness.make_workdir("rsp-demo-")
    redis = fleet = idp_proc = None
    try:
        step("starting Redis, three replicas behind a balancer, and the test IdP")
        redis = harness.RedisServer(os.path.join(work, "redis"))
        redis.start()
        key, cert = rsp_testidp.make_keypair(work, "sp", "demo-sp")
        idp = rsp_testidp.TestIdP(os.path.join(work, "idp"))
        fleet = harness.Fleet(os.path.join(work, "fleet"), module=harness.module_path(),
                              store_url=redis.url,
                              sp={"entity_id": None, "key_file": key, "cert_file": cert,
                                  "idp_metadata": [idp.metadata_path]})
        fleet.sp["entity_id"] = fleet.public + "/saml/metadata"
        idp_proc, idp_url = start_idp(idp.workdir, fleet.entity_id, fleet.acs_url,
                                      fleet.public + "/saml/metadata")
        fleet.sp["idp_metadata"] = [idp.metadata_path]
        fleet._configure_replicas()
        fleet.start()
        fleet.mark_logs()
        print("Redis      %s" % redis.url)
        for name, url in fleet.targets():
            print("%-10s %s" % (name, url))
        print("test IdP   %s" % idp_url)

        step("signing in: a protected page sends the browser to the IdP with an "
             "AuthnRequest; the IdP posts a signed response to the ACS")
        start = requests.get(fleet.public + "/app/page.html", allow_redirects=False, timeout=10)
        print("GET /app/page.html (no session) -> %d, to %s..."
              % (start.status_code, start.headers.get("Location", "")[:60]))
        page = urllib.request.urlopen(start.headers["Location"] + "&user=alice",
                                      timeout=10).read().decode()
        fields = form_fields(page)
        # the browser that started the sign-in posts it, with the cookie
        # that binds the request to it (login CSRF)
        r = requests.post(fleet.acs_url, data=fields, cookies=harness.binding_cookies(start),
                          allow_redirects=False, timeout=10)
        cookie = r.cookies.get(harness.COOKIE_NAME)
        print("POST %s -> %d, Location %s, session cookie %s"
              % (fleet.acs_url, r.status_code, r.headers.get("Location"),
                 "set" if cookie else "NOT set"))
        if r.status_code != 303 or not cookie:
            for name, lines in fleet.new_log_lines().items():
                for line in lines:
                    print("%s: %s" % (name, line))
            raise RuntimeError("sign-in failed")
        for name, url in fleet.targets():
            g = requests.get(url + "/app/page.html", cookies={harness.COOKIE_NAME: cookie},
                             timeout=10)
            print("GET /app/page.html on %-9s -> %d as %s" % (name, g.status_code,
                                                              g.headers.get("X-RSP-User")))

        step("replaying the same response against every replica and the balancer")
        rows = []
        for name, url in fleet.targets():
            for attempt in (1, 2):
                p = requests.post(harness.acs(url), data=fields, allow_redirects=False,
                                  timeout=10)
                rows.append((name, attempt, p.status_code, p.headers.get("X-RSP-Replica", "-"),
                             "yes" if "Set-Cookie" in p.headers else "no"))
        print("%-10s %-7s %-6s %-12s %s" % ("target", "attempt", "status", "answered by",
                                            "Set-Cookie"))
        for row in rows:
            print("%-10s %-7s %-6s %-12s %s" % row)
        accepted = sum(1 for row in rows if row[2] == 303)
        print("%d replays, %d accepted, %d refused with 403"
              % (len(rows), accepted, sum(1 for row in rows if row[2] == 403)))

        step("signing out on one replica: the session is gone from the store, so "
             "every replica refuses the cookie")
        first = fleet.replicas[0]
        out = requests.get(first.base_url + "/saml/logout?ReturnTo=%2F",
                           cookies={harness.COOKIE_NAME: cookie}, allow_redirects=False,
                           timeout=10)
        print("GET /saml/logout on %s -> %d, to the IdP's single logout service"
              % (first.name, out.status_code))
        back = requests.get(out.headers["Location"], allow_redirects=False, timeout=10)
        done = requests.get(fleet.public + urllib.parse.urlsplit(back.headers["Location"]).path
                            + "?" + urllib.parse.urlsplit(back.headers["Location"]).query,
                            allow_redirects=False, timeout=10)
        print("the IdP's LogoutResponse -> %d, back to %s"
              % (done.status_code, done.headers.get("Location")))
        for name, url in fleet.targets():
            g = requests.get(url + "/app/page.html", cookies={harness.COOKIE_NAME: cookie},
                             allow_redirects=False, timeout=10)
            print("GET /app/page.html on %-9s -> %d (%s)"
                  % (name, g.status_code, "to the IdP" if g.status_code == 302 else "?"))

        step("what the replicas logged (the sign-in, every refusal, the sign-out)")
        time.sleep(0.2)
        for name, lines in fleet.new_log_lines().items():
            for line in lines:
                if "RSP0" in line:
                    print("%s: %s" % (name, line))
        claims = redis.client().keys(harness.KEY_PREFIX + "a:*")
        print("\nclaims in Redis: %d (one per assertion ever accepted)" % len(claims))
        return 0 if accepted == 0 else 1
    finally:
        step("stopping everything")
        if fleet:
            fleet.stop()
        if idp_proc:
            harness.terminate(idp_proc, 10)
        if redis:
            redis.stop()
        harness.rmtree_quiet(work)
        print("done")


if __name__ == "__main__":
    sys.exit(main())
