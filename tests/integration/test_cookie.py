"""The session cookie's attributes: Path=/, HttpOnly and SameSite=Lax
always; Secure exactly when the public URL (ServerName) is https."""

import os

import pytest

import httpd_fleet
from http_client import post_acs, session_cookie
from httpd_fleet import Httpd


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_cookie_attributes_follow_the_public_scheme(workdir, module_so, redis, sp_config, idps,
                                                    scheme):
    h = Httpd(os.path.join(workdir, "cookie-" + scheme), "cookie-" + scheme,
              modules=[("replay_sp_module", module_so)], log_level="warn replay_sp:info",
              threads=4, start_servers=1)
    # The public name says https (as behind a TLS-terminating balancer);
    # the test talks plain http to the replica itself.
    h.server_name = "%s://127.0.0.1:%d" % (scheme, h.port)
    h.body = httpd_fleet.sp_conf_body(redis.url, sp_config)
    public_acs = h.server_name + httpd_fleet.ENDPOINT + "/acs"
    h.start()
    try:
        b64 = idps["idp1"].mint(sp_config["entity_id"], public_acs)
        r = post_acs(h.base_url + httpd_fleet.ENDPOINT + "/acs", b64, relay_state="/x")
    finally:
        h.stop()
    assert r.status_code == 303, r.text[:300]
    value, attrs = session_cookie(r)
    assert value and len(value) == 43
    assert attrs.get("path") == "/"
    assert attrs.get("httponly") is True
    assert attrs.get("samesite") == "Lax"
    assert ("secure" in attrs) == (scheme == "https"), attrs
