"""The guard in front of an application SP behind mod_proxy, when the
application fails: a server error without a session (the application's
500, mod_proxy's 502 for a connection the application dropped, its 503 when
the application is down) does not burn the assertion: the user's retry of
the same response signs in, exactly once however many retries race; an
answer that made a session (whatever its status) and the SP's own refusal
are terminal; a post while the SP is still answering is refused without
taking the claim over.

The application is flaky_sp.py (its answers queued by the test, every body it
received kept), proxied by each of the three replicas behind the
balancer, on each store application."""

import concurrent.futures
import os
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
        ]) + "\n"

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


def response(idps, testidp, fleet):
    aid = testidp.random_id()
    return aid, idps["idp1"].mint(SP, fleet.public + ACS, assertion_id=aid)


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
