"""What the guard's tests in front of mod_auth_mellon (test_guard.py) and
Shibboleth SP (test_guard_shib.py) share: minting for the guarded SP,
posting forms (raw or not) with redirects not followed, starting a peer
fleet with the error-log gate, and the ambiguous inputs."""

import json
import os
import socket
import urllib.parse

import pytest
import requests

from common import HarnessError
from httpd_fleet import bad_log_lines
from stores import claim_key

PAGE = "/app/page.html"
BURST = 50


def start_fleet(request, what, f):
    """Start f (stopped at the end of the session by its finalizer); fail
    the test when it does not start or logs anything at warn or above."""
    request.addfinalizer(f.stop)
    offsets = {h: h.log_size() for h in f.instances}
    try:
        f.start()
    except HarnessError as e:
        pytest.fail("the %s fleet did not start:\n%s" % (what, e), pytrace=False)
    bad = {h.name: bad_log_lines(h._log_since(offsets[h]).splitlines()) for h in f.instances}
    bad = {k: v for k, v in bad.items() if v}
    if bad:
        pytest.fail("unexpected error-log lines at %s fleet start-up:\n%s" % (what, bad),
                    pytrace=False)
    return f


class Minter:
    def __init__(self, idp, testidp, entity_id, acs_url):
        self.idp, self.testidp = idp, testidp
        self.entity_id, self.acs_url = entity_id, acs_url

    def mint(self, **kw):
        kw.setdefault("assertion_id", self.testidp.random_id())
        return kw["assertion_id"], self.idp.mint(self.entity_id, self.acs_url, **kw)


def post(url, b64=None, relay_state=PAGE, fields=None, raw=None, headers=None, cookies=None):
    """POST a form to url, redirects not followed; raw: the body as given."""
    h = dict(headers or {})
    if raw is not None:
        h.setdefault("Content-Type", "application/x-www-form-urlencoded")
        return requests.post(url, data=raw, headers=h, cookies=cookies,
                             allow_redirects=False, timeout=30)
    data = {}
    if b64 is not None:
        data["SAMLResponse"] = b64
    if relay_state is not None:
        data["RelayState"] = relay_state
    data.update(fields or {})
    return requests.post(url, data=data, headers=h, cookies=cookies,
                         allow_redirects=False, timeout=30)


def claims(store):
    return store.claim_keys()


# The attacker's corpus (guard_corpus.json): requests that the guard and
# some SP could read differently, each refused before anything is claimed
# and before the SP reads a byte.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "guard_corpus.json")) as _f:
    CORPUS = json.load(_f)["cases"]
CORPUS_IDS = [c["id"] for c in CORPUS]


def corpus_request(case, acs, used_b64, fresh_b64):
    """(request target, body, content type) of a corpus case: {A} the used
    response, {B} the fresh one, {ACS...} the guarded path's parts."""
    q = lambda v: urllib.parse.quote(v, safe="")
    d, leaf = acs.rsplit("/", 1)
    subst = {
        "{ACS_BUT_LAST}": acs[:-1], "{ACS_LAST_HEX}": "%02X" % ord(acs[-1]),
        "{ACS_DIR}": d, "{ACS_LEAF}": leaf, "{ACS_LOWER}": acs.lower(), "{ACS}": acs,
        "{A2}": q(q(used_b64)), "{A}": q(used_b64), "{B}": q(fresh_b64),
    }

    def fill(t):
        for k, v in subst.items():
            t = t.replace(k, v)
        return t
    target = fill(case["target"]) if "target" in case else acs + fill(case.get("path", ""))
    if "query" in case:
        target += "?" + fill(case["query"])
    body = fill(case.get("body", "SAMLResponse={B}"))
    return target, body, case.get("content_type", "application/x-www-form-urlencoded")


def raw_post(base_url, target, body, content_type, timeout=30):
    """POST with the request target sent byte for byte (no client
    normalises it): (status, [(header, value)])."""
    u = urllib.parse.urlsplit(base_url)
    req = ("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n"
           "Connection: close\r\n\r\n" % (target, u.netloc, content_type, len(body)))
    data = b""
    with socket.create_connection((u.hostname, u.port), timeout=timeout) as sock:
        sock.sendall(req.encode("latin-1") + body.encode("latin-1"))
        while len(data) < (1 << 20):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    status = int(head[0].split()[1])
    headers = [tuple(x.strip() for x in l.split(":", 1)) for l in head[1:] if ":" in l]
    return status, headers


def run_corpus_case(case, fleet, minter, store, accepted, cookie_set, reached):
    """One corpus case against a guarded fleet: a response accepted first
    (A), then the case sent with a fresh one (B) straight to another
    replica than A's; the case must be refused by the layer it names,
    with nothing claimed for B, no session from the SP, the SP not
    reached; B posted plainly afterwards is still good."""
    aid, used = minter.mint()
    first = post(fleet.post_url, used)
    assert accepted(first), (first.status_code, first.text[:300])
    other = [h for h in fleet.replicas if h.name != first.headers.get("X-RSP-Replica")][0]
    used_key = claim_key(minter.idp.entity_id, aid)
    assert claims(store) == [used_key]
    fleet.mark_logs()
    bid, fresh = minter.mint()
    acs = urllib.parse.urlsplit(fleet.post_url).path
    target, body, ctype = corpus_request(case, acs, used, fresh)
    status, headers = raw_post(other.base_url, target, body, ctype)
    layer, what = case["refused_by"].split(":")
    lines = [l for ls in fleet.new_log_lines().values() for l in ls if "RSP01004" in l]
    if layer == "guard":
        assert status == 400, (case["id"], target[:200], status)
        assert len(lines) == 1 and "check=%s:" % what in lines[0], (case["id"], lines)
    else:
        assert status == int(what), (case["id"], target[:200], status)
        assert lines == [], (case["id"], lines)
    assert not cookie_set(headers), (case["id"], headers)
    assert claims(store) == [used_key], (case["id"], "something was claimed")
    assert reached(fleet) == 0, (case["id"], "the SP read the request")
    # nothing was burned: the fresh response is still good
    again = post(fleet.post_url, fresh)
    assert accepted(again), (case["id"], again.status_code, again.text[:300])
    assert sorted(claims(store)) == sorted([used_key, claim_key(minter.idp.entity_id, bid)])
