"""The browser's side of the integration tests: plain HTTP with requests.

* ``post_acs`` (an HTTP-POST binding form to the ACS, redirects not
  followed), ``get``, ``acs`` (the ACS URL on a base URL);
* cookies: ``COOKIE_NAME`` (the module's session cookie),
  ``session_cookie``, ``set_cookie_headers``, ``parse_set_cookie``,
  ``binding_cookies``;
* SP-initiated sign-in: ``RelayState`` (the value and the binding cookies
  of the browser that started it), ``relay_of``;
* across the fleet: ``post_round_robin``, ``answers_after_failover``.

The headless Chromium of test_chromium.py is driven there.
"""

import time
import urllib.parse

from httpd_fleet import ENDPOINT

COOKIE_NAME = "replay_sp_session"


# --------------------------------------------------------------------------
# posting responses, reading cookies
# --------------------------------------------------------------------------

def acs(base_or_url):
    """The ACS URL on a given base URL (a full .../acs URL is kept)."""
    if base_or_url.endswith("/acs"):
        return base_or_url
    return base_or_url.rstrip("/") + ENDPOINT + "/acs"


def post_round_robin(fleet, i, b64, relay_state=None):
    """POST b64 to the ACS of replica i (modulo their number): the status."""
    return post_acs(fleet.replicas[i % len(fleet.replicas)].base_url, b64,
                    relay_state=relay_state).status_code


def answers_after_failover(fleet, responses, relay_state, bound):
    """Each response posted again (round robin), once the store answers for
    it. Right after the first sign-in on a promoted replica, the store may
    not yet answer everywhere (a cluster node that has not yet set its state
    back to ok answers CLUSTERDOWN, and the claim is released; a map read
    from a node that had not yet heard of the promotion; a reconnection
    under way): 503, fail closed, and nothing about the claim. So a 503 is
    asked again, for at most `bound` seconds in all."""
    deadline = time.monotonic() + bound
    out = []
    for i, m in enumerate(responses):
        while True:
            s = post_round_robin(fleet, i, m.b64, relay_state)
            if s != 503 or time.monotonic() >= deadline:
                break
            time.sleep(0.2)
        out.append(s)
    return out


class RelayState(str):
    """The RelayState an SP-initiated sign-in was started with, and the
    binding cookies (``cookies``: name -> value) the browser that started
    it got: ``post_acs`` sends them along, as that browser would. A plain
    str posts without them (another browser)."""

    def __new__(cls, value, cookies=None):
        o = str.__new__(cls, value)
        o.cookies = dict(cookies or {})
        return o

    def bare(self):
        return str(self)


def binding_cookies(resp):
    """name -> value of the binding cookies (ReplaySPBindRequests) a login
    answer set."""
    out = {}
    for h in set_cookie_headers(resp):
        name, _, value = h.split(";", 1)[0].strip().partition("=")
        if "_req_" in name:
            out[name] = value
    return out


def relay_of(resp):
    """The RelayState of a login answer's redirect to the IdP, with the
    binding cookies it set."""
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(resp.headers["Location"]).query)
    return RelayState(q["RelayState"][0], binding_cookies(resp))


def post_acs(url, b64, relay_state=None, cookie=None, fields=None, timeout=30,
             cookies=None):
    """POST an HTTP-POST binding form to the ACS; redirects are not followed.
    ``b64`` None omits SAMLResponse; ``cookie`` is a session cookie value;
    ``cookies`` more cookies (name -> value), besides those a RelayState
    carries."""
    import requests
    data = {}
    if b64 is not None:
        data["SAMLResponse"] = b64
    if relay_state is not None:
        data["RelayState"] = str(relay_state)
    data.update(fields or {})
    jar = dict(getattr(relay_state, "cookies", {}))
    jar.update(cookies or {})
    if cookie:
        jar[COOKIE_NAME] = cookie
    headers = {"Cookie": "; ".join("%s=%s" % kv for kv in jar.items())} if jar else {}
    return requests.post(acs(url), data=data, headers=headers,
                         allow_redirects=False, timeout=timeout)


def get(url, cookie=None, timeout=30):
    import requests
    headers = {"Cookie": "%s=%s" % (COOKIE_NAME, cookie)} if cookie else {}
    return requests.get(url, headers=headers, allow_redirects=False, timeout=timeout)


def set_cookie_headers(resp):
    """Every Set-Cookie header of a requests response, unmerged."""
    try:
        return list(resp.raw.headers.getlist("Set-Cookie"))
    except AttributeError:   # pragma: no cover - old urllib3
        v = resp.headers.get("Set-Cookie")
        return [v] if v else []


def parse_set_cookie(header):
    """'name=value; Attr; Attr=v' -> (name, value, {attr_lower: value_or_True})"""
    parts = [p.strip() for p in header.split(";")]
    name, _, value = parts[0].partition("=")
    attrs = {}
    for p in parts[1:]:
        if not p:
            continue
        k, eq, v = p.partition("=")
        attrs[k.strip().lower()] = v.strip() if eq else True
    return name.strip(), value.strip(), attrs


def session_cookie(resp, name=COOKIE_NAME):
    """(value, attrs) of our session cookie in the response, or (None, None)."""
    for h in set_cookie_headers(resp):
        n, v, attrs = parse_set_cookie(h)
        if n == name:
            return v, attrs
    return None, None
