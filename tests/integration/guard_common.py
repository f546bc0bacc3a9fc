"""What the guard's tests in front of mod_auth_mellon (test_guard.py) and
Shibboleth SP (test_guard_shib.py) share: minting for the guarded SP,
posting forms (raw or not) with redirects not followed, starting a peer
fleet with the error-log gate, and the ambiguous inputs."""

import urllib.parse

import pytest
import requests

from harness import HarnessError, bad_log_lines

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


# Inputs the guard and the SP could read differently: each is refused (400,
# check=ambiguous) before either reads the response.
AMBIGUOUS = [
    ("query_saml_response", lambda b64: dict(query="SAMLResponse=" + urllib.parse.quote(b64),
                                             raw=urllib.parse.urlencode({"SAMLResponse": b64}))),
    ("query_relay_state", lambda b64: dict(query="RelayState=%2Fapp",
                                           raw=urllib.parse.urlencode({"SAMLResponse": b64}))),
    ("saml_response_twice", lambda b64: dict(raw="SAMLResponse=%s&SAMLResponse=%s" % (
        urllib.parse.quote(b64, safe=""), urllib.parse.quote(b64, safe="")))),
    ("relay_state_twice", lambda b64: dict(raw="SAMLResponse=%s&RelayState=%%2Fa&RelayState=%%2Fb"
                                           % urllib.parse.quote(b64, safe=""))),
    ("encoded_name", lambda b64: dict(raw="SAMLRespons%%65=%s" % urllib.parse.quote(b64, safe=""))),
    ("other_spelling", lambda b64: dict(raw="samlresponse=x&SAMLResponse=%s"
                                        % urllib.parse.quote(b64, safe=""))),
    ("content_type", lambda b64: dict(raw=urllib.parse.urlencode({"SAMLResponse": b64}),
                                      headers={"Content-Type": "text/plain"})),
    ("multipart", lambda b64: dict(raw=urllib.parse.urlencode({"SAMLResponse": b64}),
                                   headers={"Content-Type": "multipart/form-data; boundary=x"})),
]
