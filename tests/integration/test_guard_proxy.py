"""The guard in front of an application SP behind mod_proxy, when the
application fails: a server error without a session (the application's
500, mod_proxy's 502 for a connection the application dropped, its 503 when
the application is down) does not burn the assertion: the user's retry of
the same response signs in, exactly once however many retries race; an
answer that made a session (whatever its status) and the SP's own refusal
are terminal; a post while the SP is still answering is refused without
taking the claim over.

Beside it, a location in report mode (ReplaySPGuard Report) in front of the
same application: it checks and claims as On does, logs what On would
refuse (same tag, same check=, marked not enforced) and passes every post
on; its counters are not the enforced ones.

The application is flaky_sp.py (its answers queued by the test, every body it
received kept), proxied by each of the three replicas behind the
balancer, on each store application."""

import concurrent.futures
import os
import re
import signal
import subprocess
import sys
import time
import urllib.parse

import pytest
import requests

import common
from httpd_fleet import PROXY_MODULES, Fleet
from stores import claim_key

SP = "https://sp.app.test.example/saml"
ACS = "/app/acs"
REPORT_ACS = "/report/acs"
NOT_ENFORCED = "[not enforced: ReplaySPGuard Report, passed on to the SP]"
HERE = os.path.dirname(os.path.abspath(__file__))


class Application:
    """flaky_sp.py on a port of its own; stopped and started again on the
    same port."""

    def __init__(self):
        self.port = common.free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "flaky_sp.py"),
                                      str(self.port)])
        deadline = time.time() + 15
        while time.time() < deadline:
            try:
                requests.get(self.url + "/", timeout=1)
                return self
            except requests.RequestException:
                time.sleep(0.1)
        raise AssertionError("flaky_sp.py did not start on %d" % self.port)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=15)
        self.proc = None

    def queue(self, answer, count=1):
        r = requests.post(self.url + "/ctl/queue", data={"answer": answer, "count": count},
                          timeout=10)
        assert r.status_code == 204, r.status_code

    def received(self):
        return requests.get(self.url + "/ctl/received", timeout=10).json()

    def reset(self):
        assert requests.post(self.url + "/ctl/reset", timeout=10).status_code == 204


class ProxyFleet(Fleet):
    """Three replicas, each proxying the application's assertion consumer
    (ProxyPass, connections not reused) with the guard over it."""

    def __init__(self, workdir, module, store, idp, application):
        self.idp, self.application = idp, application
        super().__init__(workdir, module=module, store_url=store.url,
                         sp={"entity_id": SP}, server_extra=store.server_extra)

    def replica_body(self, store_url=None, server_extra=None, location_extra=None,
                     sp=None, unsolicited=None):
        return "\n".join([
            "ReplaySPStore %s" % self.store_url,
            "ReplaySPMonitorInterval 0",
            self.server_extra if server_extra is None else server_extra,
            "ProxyRequests Off",
            "<Location %s>" % ACS,
            "    ReplaySPGuard On",
            '    ReplaySPEntityID "%s"' % SP,
            '    ReplaySPIdPMetadataFile "%s"' % self.idp.metadata_path,
            '    ProxyPass "%s/acs" disablereuse=On timeout=10' % self.application.url,
            "</Location>",
            "<Location %s>" % REPORT_ACS,
            "    ReplaySPGuard Report",
            '    ReplaySPEntityID "%s"' % SP,
            '    ReplaySPIdPMetadataFile "%s"' % self.idp.metadata_path,
            '    ProxyPass "%s/acs" disablereuse=On timeout=10' % self.application.url,
            "</Location>",
            "<Location /rsp-status>",
            "    SetHandler replay-sp-status",
            "</Location>",
        ]) + "\n"

    def metrics(self, i):
        text = requests.get(self.replicas[i].base_url + "/rsp-status", timeout=10).text
        return {m.group(1): float(m.group(2))
                for m in re.finditer(r"^(replay_sp_\w+) (\S+)$", text, re.M)}

    def _configure_replicas(self, **kw):
        super()._configure_replicas(**kw)
        for h in self.replicas:
            h.modules = h.modules + [m for m in PROXY_MODULES if m in ("proxy", "proxy_http")]


@pytest.fixture(scope="module")
def application():
    b = Application().start()
    yield b
    b.stop()


@pytest.fixture(scope="module")
def proxied(workdir, module_so, store, idps, application):
    f = ProxyFleet(os.path.join(workdir, "guard-proxy-%s" % store.name), module_so, store,
                   idps["idp1"], application)
    f.start()
    yield f
    f.stop()


@pytest.fixture
def app(proxied, application, store):
    """A clean start: the application up, nothing queued or received, no claims."""
    if application.proc is None:
        application.start()
    application.reset()
    store.flush()
    proxied.mark_logs()
    return proxied


def response(idps, testidp, fleet, acs=ACS):
    aid = testidp.random_id()
    return aid, idps["idp1"].mint(SP, fleet.public + acs, assertion_id=aid)


def post(url, b64):
    return requests.post(url, data={"SAMLResponse": b64, "RelayState": "/app/"},
                         allow_redirects=False, timeout=30)


def signed_in(r):
    return r.status_code == 302 and "app_session=" in r.headers.get("Set-Cookie", "")


def bodies(application, b64):
    """How many of the bodies the application received carry b64, each
    byte for byte as posted."""
    want = urllib.parse.urlencode({"SAMLResponse": b64, "RelayState": "/app/"})
    got = application.received()
    assert all(b == want for b in got), "a body reached the application changed"
    return len(got)


def replica(fleet, i):
    return fleet.replicas[i].base_url + ACS


@pytest.mark.expect_log("replay_refused", "AH01102", "AH00898")
@pytest.mark.parametrize("failure,status", [("error", 500), ("drop", 502)])
def test_a_server_error_without_a_session_is_retried_once(app, application, store, idps,
                                                          testidp, failure, status):
    aid, b64 = response(idps, testidp, app)
    application.queue(failure)
    first = post(replica(app, 0), b64)
    assert first.status_code == status, (first.status_code, first.text[:200])
    assert "app_session=" not in first.headers.get("Set-Cookie", "")
    assert app.count_in_logs("RSP01051") == 1
    assert store.exists(claim_key(idps["idp1"].entity_id, aid))
    # the user's retry, on another replica: signs in (the claim taken over)
    again = post(replica(app, 1), b64)
    assert signed_in(again), (again.status_code, again.headers)
    assert app.count_in_logs("RSP01044") == 1
    # and that was the last use of it
    for i in (2, 0):
        assert post(replica(app, i), b64).status_code == 403
    assert bodies(application, b64) == 2


@pytest.mark.expect_log("replay_refused")
def test_concurrent_retries_after_a_failure_one_signs_in(app, application, idps, testidp):
    aid, b64 = response(idps, testidp, app)
    application.queue("error")
    assert post(app.public + ACS, b64).status_code == 500
    with concurrent.futures.ThreadPoolExecutor(16) as ex:
        rs = list(ex.map(lambda i: post(replica(app, i % 3), b64), range(16), timeout=120))
    statuses = sorted(r.status_code for r in rs)
    assert statuses == [302] + [403] * 15, statuses
    assert sum(signed_in(r) for r in rs) == 1
    assert bodies(application, b64) == 2


@pytest.mark.expect_log("replay_refused")
@pytest.mark.parametrize("answer,status", [("error-cookie", 500), ("refuse", 400)])
def test_an_answer_with_a_session_or_a_refusal_is_terminal(app, application, idps, testidp,
                                                            answer, status):
    aid, b64 = response(idps, testidp, app)
    application.queue(answer)
    assert post(replica(app, 0), b64).status_code == status
    for i in (1, 2, 0):
        assert post(replica(app, i), b64).status_code == 403
    assert bodies(application, b64) == 1
    assert app.count_in_logs("RSP01051") == 0


@pytest.mark.expect_log("AH00957", "AH01114")
def test_the_application_down_then_up(app, application, idps, testidp):
    aid, b64 = response(idps, testidp, app)
    application.stop()
    down = post(replica(app, 0), b64)
    assert down.status_code == 503, down.status_code
    application.start()
    up = post(replica(app, 2), b64)
    assert signed_in(up), (up.status_code, up.headers)
    assert bodies(application, b64) == 1      # the first never reached it


@pytest.mark.expect_log("replay_refused")
def test_a_post_while_the_application_answers_is_refused(app, application, idps, testidp):
    aid, b64 = response(idps, testidp, app)
    application.queue("slow")
    with concurrent.futures.ThreadPoolExecutor(1) as ex:
        first = ex.submit(post, replica(app, 0), b64)
        time.sleep(0.8)
        assert post(replica(app, 1), b64).status_code == 403
        assert signed_in(first.result(timeout=30))
    assert bodies(application, b64) == 1


def log_lines(fleet, tag):
    return [l for h in fleet.replicas for l in h.new_log_lines() if tag in l]


@pytest.mark.expect_log("replay_refused")
def test_report_mode_passes_a_replay_on_and_says_so(app, application, idps, testidp):
    aid, b64 = response(idps, testidp, app, REPORT_ACS)
    before = [app.metrics(i) for i in range(3)]
    first = post(app.replicas[0].base_url + REPORT_ACS, b64)
    assert signed_in(first), (first.status_code, first.headers)
    again = post(app.replicas[1].base_url + REPORT_ACS, b64)
    # passed on: the application answers the replay (it keeps no record)
    assert signed_in(again), (again.status_code, again.headers)
    assert bodies(application, b64) == 2
    lines = log_lines(app, "RSP01001")
    assert len(lines) == 1 and ":error]" in lines[0] and NOT_ENFORCED in lines[0], lines
    after = [app.metrics(i) for i in range(3)]
    delta = {k: sum(a[k] - b[k] for a, b in zip(after, before))
             for k in ("replay_sp_replays_reported_total", "replay_sp_replays_refused_total",
                       "replay_sp_guard_reported_total", "replay_sp_claims_won_total")}
    assert delta == {"replay_sp_replays_reported_total": 1,
                     "replay_sp_replays_refused_total": 0,
                     "replay_sp_guard_reported_total": 1,
                     "replay_sp_claims_won_total": 1}, delta


@pytest.mark.expect_log("check_refused")
def test_report_mode_passes_what_on_refuses_with_its_check(app, application, idps, testidp):
    """A response On refuses (another SP's audience) is logged with its
    check= and passed on; nothing is claimed for it."""
    aid = testidp.random_id()
    b64 = idps["idp1"].mint("https://elsewhere.example/sp", app.public + REPORT_ACS,
                            assertion_id=aid)
    r = post(app.replicas[0].base_url + REPORT_ACS, b64)
    assert r.status_code == 302, r.status_code    # flaky_sp.py signs anything in
    assert bodies(application, b64) == 1
    lines = log_lines(app, "RSP01004")
    assert len(lines) == 1 and "check=audience" in lines[0] and NOT_ENFORCED in lines[0], lines
    assert ":warn]" in lines[0]
    r = post(replica(app, 0), b64)
    assert r.status_code == 400 and bodies(application, b64) == 1
    assert NOT_ENFORCED not in log_lines(app, "RSP01004")[-1]


@pytest.mark.expect_log("check_refused")
def test_report_mode_path_spellings_said_and_passed_on(app, application, idps, testidp):
    """Another spelling of the report location's path: said with
    check=path, passed on; of the enforcing location's: refused."""
    aid, b64 = response(idps, testidp, app, REPORT_ACS)
    r = requests.post(app.replicas[0].base_url + "/report//acs",
                      data={"SAMLResponse": b64, "RelayState": "/app/"},
                      allow_redirects=False, timeout=30)
    assert r.status_code != 400, r.status_code
    lines = log_lines(app, "check=path")
    assert len(lines) == 1 and NOT_ENFORCED in lines[0], lines
    r = requests.post(app.replicas[0].base_url + "/app//acs",
                      data={"SAMLResponse": b64, "RelayState": "/app/"},
                      allow_redirects=False, timeout=30)
    assert r.status_code == 400
    lines = log_lines(app, "check=path")
    assert len(lines) == 2 and NOT_ENFORCED not in lines[1], lines
