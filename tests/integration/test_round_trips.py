"""Store round trips per request, counted on the wire: a relay between the
module and a real Redis, or a real memcached, counts every exchange
(pipelined commands written together are one). The claim stays one SET NX PX whose reply is the
verdict; what goes with it rides in the same round trip, and everything
a won sign-in writes after it goes in one more."""

import os
import urllib.parse

import pytest

import http_client
import httpd_fleet
import memcached_nodes
from http_client import post_acs, session_cookie
from httpd_fleet import Httpd
from stores import RoundTripCounter


@pytest.fixture(params=["redis", "memcached"])
def counted(request, workdir, module_so, sp_config):
    if request.param == "redis":
        server = request.getfixturevalue("redis")
        url = "redis://127.0.0.1:%d/0"
    else:
        server = memcached_nodes.MemcachedServer(os.path.join(workdir, "round-trips-mc"))
        server.start()
        url = "memcache://127.0.0.1:%d"
    port = server.port
    relay = RoundTripCounter(port)
    h = Httpd(os.path.join(workdir, "round-trips-" + request.param), "round-trips",
              modules=[("replay_sp_module", module_so)], threads=2, start_servers=1,
              body=httpd_fleet.sp_conf_body(url % relay.port, sp_config))
    h.write_file("index.html", "counted\n")
    h.start()
    yield h, relay
    h.stop()
    relay.close()
    if request.param == "memcached":
        server.stop()


def trips(relay, action):
    before = relay.settled()
    result = action()
    return result, relay.settled() - before


@pytest.mark.expect_log("replay_refused")
def test_round_trips_per_request(counted, idps, sp_config, testidp):
    h, relay = counted
    idp = idps["idp1"]
    acs = h.base_url + httpd_fleet.ENDPOINT + "/acs"
    entity = sp_config["entity_id"]

    # A first sign-in on a fresh connection (and, once per Redis, the
    # append script sent by its text): not counted.
    assert post_acs(acs, idp.mint(entity, acs)).status_code == 303

    b64 = idp.mint(entity, acs)
    r, n = trips(relay, lambda: post_acs(acs, b64))
    assert r.status_code == 303
    assert n == 2, "unsolicited sign-in: %d round trips" % n

    r2, n = trips(relay, lambda: post_acs(acs, b64))
    assert r2.status_code == 403
    assert n == 1, "replay: %d round trips (the holder is read with the claim)" % n

    cookie = session_cookie(r)[0]
    g, n = trips(relay, lambda: http_client.get(h.base_url + "/index.html", cookie=cookie))
    assert g.status_code == 200
    assert n == 1, "protected request: %d round trips" % n

    login, n = trips(relay, lambda: http_client.get(h.base_url + httpd_fleet.ENDPOINT + "/login"))
    assert login.status_code == 302
    assert n == 1, "login GET: %d round trips" % n
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(login.headers["Location"]).query)
    req_id, _ = testidp.parse_redirect_authn_request(q["SAMLRequest"][0])
    answer = idp.mint(entity, acs, in_response_to=req_id)
    r3, n = trips(relay, lambda: post_acs(acs, answer, relay_state=http_client.relay_of(login)))
    assert r3.status_code == 303, r3.status_code
    # the request read and checked before the claim, the claim, the
    # request used up, the session's writes
    assert n == 4, "SP-initiated sign-in at the ACS: %d round trips" % n
