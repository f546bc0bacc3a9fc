"""Choosing among several IdPs: with ReplaySPDiscoveryURL, a browser
without a session (and no IdP chosen) is sent to the discovery service per
the SAML IdP Discovery Protocol and comes back to the login endpoint with
its choice, which signs it in through that IdP and lands on the page first
asked for; the SP's metadata names that return (idpdisc:DiscoveryResponse);
without a service, to the built-in page at PATH/discovery; with
ReplaySPDefaultIdP (the fleet's default configuration), straight to that
IdP. PATH/DiscoFeed lists the IdPs as a discovery service shows them."""

import html.parser
import json
import urllib.parse
import xml.etree.ElementTree as ET

import pytest
import requests

import httpd_fleet
from http_client import get, post_acs, relay_of, session_cookie
from test_login import authn_request_of, answer

DISCO = "https://disco.example.org/ds?lang=en"
PAGE = "/app/page.html?x=1"
IDPDISC = "urn:oasis:names:tc:SAML:profiles:SSO:idp-discovery-protocol"
MD = "urn:oasis:names:tc:SAML:2.0:metadata"


@pytest.fixture
def disco_fleet(fleet):
    fleet.restart_replicas(sp=dict(fleet.sp, default_idp=None),
                           location_extra="ReplaySPDiscoveryURL %s" % DISCO)
    return fleet


def to_discovery(resp):
    """The discovery request a redirect makes: its query, parsed."""
    assert resp.status_code == 302, (resp.status_code, resp.text[:300])
    loc = resp.headers["Location"]
    assert loc.startswith("https://disco.example.org/ds?lang=en&"), loc
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(loc).query, strict_parsing=True)
    assert all(len(v) == 1 for v in q.values()), q
    return {k: v[0] for k, v in q.items()}


@pytest.mark.parametrize("idp", ["idp1", "idp2"])
def test_a_protected_page_goes_to_discovery_and_the_choice_signs_in(disco_fleet, saml, idp):
    fleet = disco_fleet
    r1, r2, r3 = fleet.replicas
    q = to_discovery(get(r1.base_url + PAGE))
    assert q["entityID"] == fleet.entity_id and q["returnIDParam"] == "IdP"
    assert q["lang"] == "en"
    back = urllib.parse.urlsplit(q["return"])
    assert q["return"].startswith(fleet.public + httpd_fleet.ENDPOINT + "/login?")
    assert urllib.parse.parse_qs(back.query) == {"ReturnTo": [PAGE]}
    # the discovery service sends the browser back with its choice, to
    # another replica
    chosen = "%s&IdP=%s" % (q["return"], urllib.parse.quote(saml.idps[idp].entity_id, safe=""))
    resp = get(r2.base_url + urllib.parse.urlsplit(chosen).path + "?" +
               urllib.parse.urlsplit(chosen).query)
    req_id, acs, relay = authn_request_of(resp, saml, idp)
    m = answer(saml, req_id, idp=idp, name_id="dee")
    r = post_acs(r3.base_url, m.b64, relay_state=relay)
    assert r.status_code == 303 and r.headers["Location"] == PAGE, (r.status_code, r.text[:300])
    g = get(r1.base_url + PAGE, cookie=session_cookie(r)[0])
    assert g.status_code == 200 and g.headers["X-RSP-User"] == saml.user("dee", idp)


@pytest.mark.expect_log("RSP01030")
def test_the_login_endpoint_without_an_idp_goes_to_discovery(disco_fleet, saml):
    fleet = disco_fleet
    q = to_discovery(get(fleet.public + httpd_fleet.ENDPOINT + "/login?ReturnTo=%2Fapp%2F"))
    assert urllib.parse.parse_qs(urllib.parse.urlsplit(q["return"]).query) == {
        "ReturnTo": ["/app/"]}
    # a choice of an IdP the SP does not trust is refused
    bad = get(q["return"].replace(fleet.public, fleet.replicas[0].base_url)
              + "&IdP=https%3A%2F%2Fevil.example%2Fidp")
    assert bad.status_code == 400


def test_a_default_idp_goes_straight_there(fleet, saml):
    authn_request_of(get(fleet.public + PAGE), saml, "idp1")
    fleet.restart_replicas(sp=dict(fleet.sp, default_idp=saml.idps["idp2"].entity_id),
                           location_extra="ReplaySPDiscoveryURL %s" % DISCO)
    req_id, _, _ = authn_request_of(get(fleet.public + PAGE), saml, "idp2")


def test_metadata_names_the_discovery_response_only_with_discovery(disco_fleet):
    def responses(fleet):
        md = requests.get(fleet.public + httpd_fleet.ENDPOINT + "/metadata", timeout=10).text
        sp = ET.fromstring(md).find("{%s}SPSSODescriptor" % MD)
        return [(e.get("Binding"), e.get("Location"), e.get("index"))
                for e in sp.iter("{%s}DiscoveryResponse" % IDPDISC)]
    assert responses(disco_fleet) == [
        (IDPDISC, disco_fleet.public + httpd_fleet.ENDPOINT + "/login", "0")]
    disco_fleet.reset_replicas()
    assert responses(disco_fleet) == []


def test_the_discovery_feed_lists_the_idps(fleet, saml):
    r = requests.get(fleet.public + httpd_fleet.ENDPOINT + "/DiscoFeed", timeout=10)
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith("application/json")
    assert r.headers.get("X-Content-Type-Options") == "nosniff"
    feed = json.loads(r.text)
    assert [e["entityID"] for e in feed] == [saml.idps["idp1"].entity_id,
                                             saml.idps["idp2"].entity_id]
    assert requests.post(fleet.public + httpd_fleet.ENDPOINT + "/DiscoFeed",
                         timeout=10).status_code == 405


UI = ('<md:Extensions><mdui:UIInfo xmlns:mdui="urn:oasis:names:tc:SAML:metadata:ui">'
      '<mdui:DisplayName xml:lang="en">Zwei &lt;b&gt;</mdui:DisplayName>'
      '<mdui:DisplayName xml:lang="de">Zwei DE</mdui:DisplayName>'
      '<mdui:Logo height="16" width="16">https://idp2.example/l.png</mdui:Logo>'
      '<mdui:Logo height="16" width="16">http://idp2.example/plain.png</mdui:Logo>'
      '</mdui:UIInfo></md:Extensions>')
HIDE = ('<md:Extensions><mdattr:EntityAttributes '
        'xmlns:mdattr="urn:oasis:names:tc:SAML:metadata:attribute">'
        '<saml:Attribute xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" '
        'Name="http://macedir.org/entity-category"><saml:AttributeValue>'
        'http://refeds.org/category/hide-from-discovery</saml:AttributeValue>'
        '</saml:Attribute></mdattr:EntityAttributes></md:Extensions>')


def with_ui(fleet, saml, testidp, workdir, **kw):
    """The fleet trusting idp1 (as it is), idp2 (with mdui:UIInfo) and
    "unknown" (hide-from-discovery), no default IdP."""
    import os
    d = os.path.join(workdir, "disco-md")
    os.makedirs(d, exist_ok=True)
    paths = []
    for name, edit in (("idp2", lambda md: md.replace(
            "<md:KeyDescriptor", UI + "<md:KeyDescriptor", 1)),
                       ("unknown", lambda md: md.replace(
            '">\n  <md:IDPSSODescriptor', '">\n' + HIDE + '<md:IDPSSODescriptor', 1))):
        i = saml.idps[name]
        md = testidp.idp_metadata(i.entity_id, i.sso_url, i.cert_path)
        path = os.path.join(d, name + ".xml")
        with open(path, "w") as f:
            f.write(edit(md))
        paths.append(path)
    fleet.restart_replicas(sp=dict(fleet.sp, default_idp=None,
                                   idp_metadata=[saml.idps["idp1"].metadata_path] + paths),
                           **kw)
    return fleet


def test_the_feed_shows_names_and_logos_and_leaves_hidden_idps_out(fleet, saml, testidp,
                                                                   workdir):
    """mdui:UIInfo as metadata gives it (markup escaped, https logos only);
    an IdP in the hide-from-discovery category is not listed (it still
    signs in when chosen by its entityID)."""
    with_ui(fleet, saml, testidp, workdir)
    feed = json.loads(requests.get(fleet.public + httpd_fleet.ENDPOINT + "/DiscoFeed",
                                   timeout=10).text)
    assert feed == [
        {"entityID": saml.idps["idp1"].entity_id},
        {"entityID": saml.idps["idp2"].entity_id,
         "DisplayNames": [{"value": "Zwei <b>", "lang": "en"}, {"value": "Zwei DE", "lang": "de"}],
         "Logos": [{"value": "https://idp2.example/l.png", "height": "16", "width": "16"}]},
    ], feed
    raw = requests.get(fleet.public + httpd_fleet.ENDPOINT + "/DiscoFeed", timeout=10).text
    assert "<b>" not in raw and "\\u003cb\\u003e" in raw


class Page(html.parser.HTMLParser):
    """The links (href, text) of the built-in page's lists, by list class."""

    def __init__(self, text):
        super().__init__()
        self.lists, self._ul, self._a, self.scripts = {}, None, None, 0
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "ul":
            self._ul = a.get("class")
            self.lists.setdefault(self._ul, [])
        elif tag == "a" and self._ul:
            self._a = [a["href"], ""]
        elif tag == "script":
            self.scripts += 1

    def handle_data(self, data):
        if self._a is not None:
            self._a[1] += data

    def handle_endtag(self, tag):
        if tag == "a" and self._a is not None:
            self.lists[self._ul].append((self._a[0], self._a[1].strip()))
            self._a = None
        elif tag == "ul":
            self._ul = None


def discovery_page(fleet, base, query="", cookies=None, lang=None):
    r = requests.get(base + httpd_fleet.ENDPOINT + "/discovery?ReturnTo=" +
                     urllib.parse.quote(PAGE, safe="") + query, cookies=cookies,
                     headers={"Accept-Language": lang} if lang else {}, timeout=10)
    assert r.status_code == 200, (r.status_code, r.text[:300])
    return r, Page(r.text)


def test_the_built_in_page_lists_filters_and_signs_in(fleet, saml, testidp, workdir):
    """Several IdPs, no service, no default: a protected page goes to
    PATH/discovery, which lists the IdPs (hidden ones out, names from
    metadata in the browser's language, escaped), filters them on the
    server, and each choice signs in through that IdP, landing on the page
    first asked for; the choice is offered first next time."""
    with_ui(fleet, saml, testidp, workdir)
    r1, r2, r3 = fleet.replicas
    r = get(r1.base_url + PAGE)
    assert r.status_code == 302
    assert r.headers["Location"] == (fleet.public + httpd_fleet.ENDPOINT + "/discovery?ReturnTo="
                                     + urllib.parse.quote(PAGE, safe=""))
    resp, page = discovery_page(fleet, r2.base_url)
    assert resp.headers["Content-Type"] == "text/html; charset=utf-8"
    csp = resp.headers["Content-Security-Policy"]
    assert csp.startswith("default-src 'none'; style-src 'sha256-") and "script" not in csp
    assert "frame-ancestors 'none'" in csp and "form-action 'self'" in csp
    assert resp.headers["Cache-Control"] == "no-store" and page.scripts == 0
    idp1, idp2 = saml.idps["idp1"].entity_id, saml.idps["idp2"].entity_id
    login = httpd_fleet.ENDPOINT + "/login?ReturnTo=" + urllib.parse.quote(PAGE, safe="")
    assert page.lists["idps"] == [
        (login + "&IdP=" + urllib.parse.quote(idp1, safe=""), idp1),
        (login + "&IdP=" + urllib.parse.quote(idp2, safe=""), "Zwei <b>")]
    assert "Zwei <b>" not in resp.text and "Zwei &lt;b&gt;" in resp.text
    assert "2 of 2 organisations" in resp.text and "last" not in page.lists
    # the browser's language
    _, page = discovery_page(fleet, r2.base_url, lang="de-CH, en;q=0.5")
    assert page.lists["idps"][1][1] == "Zwei DE"
    # the server-side filter
    resp, page = discovery_page(fleet, r3.base_url, "&q=ZWEI")
    assert [t for _, t in page.lists["idps"]] == ["Zwei <b>"]
    assert "1 of 2 organisations matching" in resp.text
    _, page = discovery_page(fleet, r3.base_url, "&q=%3Cscript%3E")
    assert page.lists["idps"] == [] and page.scripts == 0
    # choosing idp2 signs in through it, on other replicas
    href = [h for h, t in discovery_page(fleet, r1.base_url)[1].lists["idps"]
            if t == "Zwei <b>"][0]
    resp = get(r2.base_url + href)
    remembered = [c for c in resp.headers.get("Set-Cookie", "").split(", ")
                  if c.startswith("replay_sp_session_idp=")]
    assert remembered and "HttpOnly" in remembered[0] and "SameSite=Lax" in remembered[0]
    req_id, acs, relay = authn_request_of(resp, saml, "idp2")
    r = post_acs(r3.base_url, answer(saml, req_id, idp="idp2", name_id="dee").b64,
                 relay_state=relay)
    assert r.status_code == 303 and r.headers["Location"] == PAGE, (r.status_code, r.text[:300])
    g = get(r1.base_url + PAGE, cookie=session_cookie(r)[0])
    assert g.status_code == 200 and g.headers["X-RSP-User"] == saml.user("dee", "idp2")
    # next time: offered first
    value = remembered[0].split(";")[0].split("=", 1)[1]
    _, page = discovery_page(fleet, r1.base_url, cookies={"replay_sp_session_idp": value})
    assert [t for _, t in page.lists["last"]] == ["Zwei <b>"]
    # a hidden IdP, or one the SP does not trust, is never offered from the cookie
    for other in ("https://unknown.test.example/idp", "https://evil.example/idp"):
        _, page = discovery_page(fleet, r1.base_url, cookies={
            "replay_sp_session_idp": urllib.parse.quote(other, safe="")})
        assert "last" not in page.lists


@pytest.mark.expect_log("RSP01031", "RSP01030")
def test_the_built_in_page_refuses_what_login_refuses(fleet, saml, testidp, workdir):
    with_ui(fleet, saml, testidp, workdir)
    base = fleet.replicas[0].base_url + httpd_fleet.ENDPOINT + "/discovery"
    assert requests.get(base + "?ReturnTo=https%3A%2F%2Fevil.example%2F",
                        timeout=10).status_code == 400
    assert requests.get(base + "?q=a&q=b", timeout=10).status_code == 400
    assert requests.post(base, timeout=10).status_code == 405
