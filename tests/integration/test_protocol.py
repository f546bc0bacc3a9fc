"""What the module says to Redis, watched with MONITOR: the claim is one
``SET key value NX PX ttl`` with nothing read before it, and connections are
made per child and reused across requests, not one per request."""

import os
import re
import threading
import time

import pytest

import harness
from harness import Httpd, RedisClient, post_acs, session_cookie

# what clients send (the commands a script runs are listed as "[db lua]")
CMD_RE = re.compile(r'^\+?[\d.]+ \[\d+ (?!lua\])[^\]]+\] (.*)$')


def parse_args(rest):
    """'"SET" "k" "v"' -> ['SET', 'k', 'v'] (MONITOR quotes every argument)."""
    return [a.encode().decode("unicode_escape") for a in re.findall(r'"((?:[^"\\]|\\.)*)"', rest)]


class Monitor:
    """Redis MONITOR on its own connection; commands collected by a thread."""

    def __init__(self, redis):
        self.client = RedisClient(port=redis.port, timeout=0.5)
        assert self.client.call("MONITOR") == "OK"
        self.commands = []
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        deadline = time.time() + 120
        while not self._stop and time.time() < deadline:
            try:
                line = self.client._line().decode("utf-8", "replace")
            except OSError:
                continue          # read timeout: look at _stop again
            except ConnectionError:
                return
            m = CMD_RE.match(line)
            if m:
                self.commands.append(parse_args(m.group(1)))

    def stop(self):
        time.sleep(0.3)           # let the last commands arrive
        self._stop = True
        self._thread.join(timeout=5)
        self.client.close()
        return self.commands


def naming(commands, key):
    return [c for c in commands if key in c[1:]]


@pytest.mark.backends("redis")
@pytest.mark.expect_log("replay_refused")
def test_claim_is_one_set_nx_px_with_nothing_read_before(fleet, saml, redis):
    m = saml.mint()
    mon = Monitor(redis)
    try:
        first = post_acs(fleet.acs_url, m.b64)
        second = post_acs(fleet.acs_url, m.b64)
    finally:
        commands = mon.stop()
    assert (first.status_code, second.status_code) == (303, 403)
    on_claim = naming(commands, m.key)
    # Each post: SET NX PX on the claim key, whose reply is the verdict,
    # then a GET pipelined with it (to name the first claimant in a
    # replay's log line; never part of the verdict). Nothing before it. The
    # won sign-in completes its claim last, with a compare-and-set script.
    # (EVALSHA, and EVAL with the script's text when the server did not
    # have it yet)
    names = [c[0].upper() for c in on_claim]
    completion = names[2:-2]
    assert names[:2] == ["SET", "GET"] and names[-2:] == ["SET", "GET"], on_claim
    assert completion in (["EVALSHA"], ["EVALSHA", "EVAL"]), on_claim
    for c in (on_claim[0], on_claim[-2]):
        assert [a.upper() for a in c[3:5]] == ["NX", "PX"] and int(c[5]) > 0, c
    for c in on_claim[2:-2]:
        # EVAL[SHA] script 1 key expected new: ours, open -> completed
        assert c[3] == m.key and c[4] == on_claim[0][2] and "o=1" in c[4], c
        assert "o=1" not in c[5], c
    # The session is written after the claim was won, under the hash of the
    # cookie value, never the value itself.
    cookie, _ = session_cookie(first)
    sess_key = harness.session_key(cookie)
    order = [c[1] for c in commands if c[0].upper() == "SET"]
    assert order.index(m.key) < order.index(sess_key)
    assert not any(cookie in " ".join(c) for c in commands)


def test_connections_are_reused_across_requests(workdir, module_so, redis, sp_config, idps):
    """One child, two threads: however many requests, at most a couple of
    connections are ever made."""
    h = Httpd(os.path.join(workdir, "reuse"), "reuse", modules=[("replay_sp_module", module_so)],
              log_level="warn replay_sp:info", threads=2, start_servers=1)
    h.body = harness.sp_conf_body(redis.url, sp_config)
    h.write_file("index.html", "reuse\n")
    rc = redis.client()
    h.start()
    try:
        before = int(rc.info("stats")["total_connections_received"])
        acs = h.base_url + harness.ENDPOINT + "/acs"
        n = 25
        for _ in range(n):
            r = post_acs(acs, idps["idp1"].mint(sp_config["entity_id"], acs))
            assert r.status_code == 303
            cookie, _ = session_cookie(r)
            assert harness.get(h.base_url + "/index.html", cookie=cookie).status_code == 200
        after = int(rc.info("stats")["total_connections_received"])
    finally:
        h.stop()
        rc.close()
    # 75 commands over n requests; at most one connection per worker thread
    # (and per child, should the MPM start another).
    assert after - before <= 4, "%d connections for %d sign-ins" % (after - before, n)
