#!/usr/bin/python3
"""mod_replay_sp's benchmark: prints figures, asserts nothing.

Everything runs on 127.0.0.1 (a redis-server, httpd instances loading the
built module, the test IdP minting really signed responses) and is stopped
by PID at the end.

Sections (all by default; --only picks some):

  instructions  one ``httpd -X`` under valgrind's callgrind: instructions
                per operation (the stable figure on a noisy machine) for a
                static GET, an unsolicited sign-in with Response and
                Assertion signed, one with the Assertion signed only, the
                login GET and the ACS POST of an SP-initiated sign-in, a
                protected request with a session; also the first sign-in
                after a start. Store commands per operation come from
                Redis's own ``INFO commandstats``.
  syscalls      one ``httpd -X`` under strace: system calls per unsolicited
                sign-in, and how many touch /etc/localtime.
  fleet         three replicas behind a balancer, 8 concurrent clients
                posting fresh responses: sign-ins/s, ACS wall time p50/p99
                and CPU per sign-in (httpd and Redis), for the first burst
                after a start and for a steady-state burst; protected
                requests/s with a session.
  decryption    one httpd: the wall time (loopback: the server's time) of
                a genuine sign-in with an EncryptedAssertion, and of a
                hostile POST anyone holding the SP's certificate can send:
                an unsigned Response whose EncryptedAssertion decrypts to an
                assertion 18,000 levels deep (refused, check=xml-depth or
                decrypted-size); also in the instructions section.
  store         per sign-in wall time with a plaintext and a TLS Redis,
                each with and without ReplaySPStoreReplicas 1 (a real
                replica), and a Redis Cluster with and without it,
                interleaved in one run: what TLS, WAIT and a cluster add.
  federation    what N IdPs cost (bench_federation.py): a synthetic
                aggregate of N IdPs and N SPs, one httpd, mod_replay_sp
                and Shibboleth SP 3 side by side, and the one-IdP
                configuration: configtest, start until answering and
                until a sign-in works, memory of each process, sign-in
                latency from the first IdP and IdP N-1, graceful restart,
                a changed file picked up. --sizes 500,5000 by default
                (--sizes 500,5000,20000 takes about ten minutes more).

Usage: scripts/bench.sh [--only instructions|syscalls|fleet|decryption|store|federation]
                        [--quick] [--keep] [--sizes N,N,...]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))
sys.path.insert(0, os.path.join(REPO, "tests", "idp"))

import harness  # noqa: E402
import rsp_testidp  # noqa: E402

SP_ENTITY_ID = "https://sp.bench.example/saml/metadata"
IDP_ENTITY_ID = "https://idp.bench.example/idp"
SIGNING_IDP_ENTITY_ID = "https://signed-requests.bench.example/idp"
CLIENTS = 8
VALGRIND_START_TIMEOUT = 180.0
# The function whose every call is one request (httpd 2.4, any MPM).
REQUEST_FN = "ap_process_async_request"


def say(fmt, *args):
    sys.stdout.write((fmt % args if args else fmt) + "\n")
    sys.stdout.flush()


# -- the store's own count of commands --------------------------------------

def redis_calls(client):
    """{command: calls} from INFO commandstats (the INFO itself excluded)."""
    out = {}
    for line in client.call("INFO", "commandstats").decode().splitlines():
        m = re.match(r"cmdstat_([\w|]+):calls=(\d+)", line)
        if m and m.group(1) != "info":
            out[m.group(1)] = int(m.group(2))
    return out


def calls_delta(before, after):
    return {k: after.get(k, 0) - before.get(k, 0)
            for k in after if after.get(k, 0) != before.get(k, 0)}


# -- the test IdP and the SP's key material -----------------------------------

HOSTILE_LEVELS = 18000


class Plaintext(rsp_testidp.Encryption):
    """Encrypts what change(assertion) makes of the assertion the test IdP
    serialised (and signed) on its own."""

    def __init__(self, cert_path, change):
        super().__init__(cert_path)
        self.change = change

    def encrypt_xmlsec1(self, assertion_xml, recipient=None):
        return super().encrypt_xmlsec1(self.change(assertion_xml), recipient)


class Setup:
    def __init__(self, workdir):
        self.workdir = workdir
        self.redis = harness.RedisServer(os.path.join(workdir, "redis")).start()
        self.rc = self.redis.client()
        self.idp = rsp_testidp.TestIdP(os.path.join(workdir, "idp"),
                                       entity_id=IDP_ENTITY_ID)
        # an IdP whose metadata asks for signed AuthnRequests
        self.signing_idp = rsp_testidp.TestIdP(os.path.join(workdir, "idp-signed"),
                                               entity_id=SIGNING_IDP_ENTITY_ID,
                                               want_authn_requests_signed=True)
        d = harness.make_dir(os.path.join(workdir, "sp"))
        key, cert = rsp_testidp.make_keypair(d, "sp", "bench sp")
        os.chmod(key, 0o644)   # children run as www-data
        self.sp = {"entity_id": SP_ENTITY_ID, "key_file": key, "cert_file": cert,
                   "idp_metadata": [self.idp.metadata_path, self.signing_idp.metadata_path],
                   "default_idp": IDP_ENTITY_ID}   # /saml/login goes there

    def mint(self, acs_url, **kw):
        return self.idp.mint(SP_ENTITY_ID, acs_url,
                             assertion_id=rsp_testidp.random_id(), **kw)

    def mint_encrypted(self, acs_url, change=None, mail="alice@example.org"):
        """A sign-in with an EncryptedAssertion in an unsigned Response (the
        assertion signed, inside), encrypted for the SP's certificate;
        change(assertion) makes the plaintext of the assertion serialised."""
        enc = Plaintext(self.sp["cert_file"], change or (lambda a: a))
        return self.mint(acs_url, sign_response=False, encrypt=enc,
                         attributes={"mail": [mail]})

    def mint_deep(self, acs_url, levels=HOSTILE_LEVELS):
        """The hostile POST: the assertion's first AttributeValue holds
        levels nested elements (no signature need verify: the plaintext is
        parsed before any is checked)."""
        return self.mint_encrypted(acs_url, lambda a: re.sub(
            r"(<saml:AttributeValue\b[^>]*>)",
            lambda m: m.group(1) + "<a>" * levels + "</a>" * levels, a, count=1))

    def close(self):
        self.rc.close()
        self.redis.stop()


# -- instructions: one httpd -X under callgrind --------------------------------

class Callgrind:
    def __init__(self, setup, module, workdir, threads):
        self.setup = setup
        self.dir = harness.make_dir(os.path.join(workdir, "callgrind"))
        os.chmod(self.dir, 0o777)
        self.h = harness.Httpd(os.path.join(workdir, "cg-httpd"), "cg-httpd",
                               modules=[("replay_sp_module", module)],
                               threads=threads, start_servers=1,
                               body=harness.sp_conf_body(setup.redis.url, setup.sp)
                               + '<Location "/static">\n    AuthType None\n'
                               '    Require all granted\n</Location>\n')
        self.h.write_file("static/index.html", "<html>static</html>\n")
        self.h.write_file("app/page.html", "<html>page</html>\n")
        self.proc = None
        self.dumps = 0

    def start(self):
        self.h.write_config()
        self.out = os.path.join(self.dir, "cg.out")
        # Collected inside ap_process_async_request only, one dump after
        # each: every dump is one request's cost, whatever the MPM's other
        # threads do meanwhile, and no debugger interface is needed.
        self.proc = subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + self.out,
             "--collect-atstart=no", "--toggle-collect=" + REQUEST_FN,
             "--dump-after=" + REQUEST_FN,
             harness.APACHE2, "-X", "-f", self.h.conf_path],
            env=harness.httpd_env(), cwd=self.h.root, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(self.dir, "valgrind.log"), "w"))
        harness.wait_for(lambda: harness.port_open(self.h.port) or self.proc.poll() is not None,
                         VALGRIND_START_TIMEOUT, interval=0.5, what="httpd under callgrind")
        if self.proc.poll() is not None:
            raise harness.HarnessError("httpd under callgrind exited: see %s" % self.dir)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(120)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(30)

    def _dump_total(self, number):
        path = "%s.%d" % (self.out, number)
        harness.wait_for(lambda: os.path.exists(path), 60, what="callgrind dump " + path)
        deadline = time.time() + 60
        while time.time() < deadline:
            with open(path) as f:
                for line in f:
                    if line.startswith(("totals:", "summary:")):
                        return int(line.split()[1])
            time.sleep(0.1)
        raise harness.HarnessError("no totals in " + path)

    def request(self, method, url, **kw):
        """Every request to this httpd goes through here: one dump each."""
        import requests
        kw.setdefault("allow_redirects", False)
        kw.setdefault("timeout", 120)
        try:
            return requests.request(method, url, **kw)
        finally:
            self.dumps += 1

    def measure(self, op, n):
        """(instructions per op, store commands per op) over n calls of op."""
        before = redis_calls(self.setup.rc)
        first = self.dumps + 1
        for _ in range(n):
            op()
        after = redis_calls(self.setup.rc)
        total = sum(self._dump_total(i) for i in range(first, self.dumps + 1))
        delta = calls_delta(before, after)
        return total / n, {k: v / n for k, v in delta.items()}


def section_instructions(setup, module, workdir, quick):
    n = 3 if quick else 10
    cg = Callgrind(setup, module, workdir, threads=2)
    base = cg.h.base_url
    acs = base + "/saml/acs"
    results = []

    def post(b64, relay=None, expect=303):
        data = {"SAMLResponse": b64}
        headers = {}
        if relay:
            data["RelayState"] = str(relay)
            headers["Cookie"] = "; ".join("%s=%s" % kv for kv in relay.cookies.items())
        r = cg.request("POST", acs, data=data, headers=headers)
        if r.status_code != expect:
            raise harness.HarnessError("ACS answered %d, not %d" % (r.status_code, expect))
        return r

    def get(path, expect=200, cookie=None):
        headers = {"Cookie": "%s=%s" % (harness.COOKIE_NAME, cookie)} if cookie else {}
        r = cg.request("GET", base + path, headers=headers)
        if r.status_code != expect:
            raise harness.HarnessError("GET %s answered %d, not %d" % (path, r.status_code, expect))
        return r

    def login():
        """An SP-initiated sign-in's first step; (request ID, RelayState)."""
        import urllib.parse
        r = get("/saml/login", expect=302)
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(r.headers["Location"]).query)
        req_id, _ = rsp_testidp.parse_redirect_authn_request(q["SAMLRequest"][0])
        return req_id, harness.relay_of(r)   # with the binding cookies

    both = [setup.mint(acs) for _ in range(n + 2)]
    one = [setup.mint(acs, sign_response=False) for _ in range(n + 1)]
    encrypted = [setup.mint_encrypted(acs) for _ in range(n + 1)]
    hostile = setup.mint_deep(acs)
    cg.start()
    try:
        # The very first sign-in: whatever a worker still builds on first use.
        results.append(("first sign-in after start",
                        cg.measure(lambda: post(both.pop()), 1)))
        get("/static/index.html")
        results.append(("static GET", cg.measure(lambda: get("/static/index.html"), n)))
        post(both.pop())
        results.append(("unsolicited sign-in, Response+Assertion signed",
                        cg.measure(lambda: post(both.pop()), n)))
        post(one.pop())
        results.append(("unsolicited sign-in, Assertion signed",
                        cg.measure(lambda: post(one.pop()), n)))
        pending = []
        results.append(("SP-initiated: login GET",
                        cg.measure(lambda: pending.append(login()), n)))
        import urllib.parse
        signed_login = "/saml/login?IdP=" + urllib.parse.quote(SIGNING_IDP_ENTITY_ID, safe="")
        get(signed_login, expect=302)
        results.append(("SP-initiated: login GET, AuthnRequest signed",
                        cg.measure(lambda: get(signed_login, expect=302), n)))
        answers = [(setup.mint(acs, in_response_to=rid), relay) for rid, relay in pending]
        results.append(("SP-initiated: ACS POST",
                        cg.measure(lambda: post(*answers.pop()), n)))
        cookie = harness.session_cookie(post(setup.mint(acs)))[0]
        results.append(("protected GET with a session",
                        cg.measure(lambda: get("/app/page.html", cookie=cookie), n)))
        post(encrypted.pop())
        results.append(("unsolicited sign-in, EncryptedAssertion",
                        cg.measure(lambda: post(encrypted.pop()), n)))
        post(hostile, expect=400)
        results.append(("hostile EncryptedAssertion, %d levels (refused)"
                        % HOSTILE_LEVELS,
                        cg.measure(lambda: post(hostile, expect=400), n)))
    finally:
        cg.stop()
    say("")
    say("== instructions per request (callgrind, inside %s; httpd -X, Redis)", REQUEST_FN)
    say("%-50s %12s   %s", "operation", "instructions", "Redis commands per operation")
    for name, (ins, calls) in results:
        say("%-50s %10.2f M   %s", name, ins / 1e6,
            " ".join("%s=%g" % kv for kv in sorted(calls.items())) or "-")


# -- system calls: one httpd -X under strace -----------------------------------

def section_syscalls(setup, module, workdir, quick):
    """System calls per unsolicited sign-in (strace -c attached to a warm
    httpd -X, every thread), and how many of them touch /etc/localtime."""
    import requests
    import signal as sig
    n = 10 if quick else 40
    h = harness.Httpd(os.path.join(workdir, "sc-httpd"), "sc-httpd",
                      modules=[("replay_sp_module", module)], threads=2, start_servers=1,
                      body=harness.sp_conf_body(setup.redis.url, setup.sp))
    h.write_config()
    acs = h.base_url + "/saml/acs"
    proc = subprocess.Popen([harness.APACHE2, "-X", "-f", h.conf_path], env=harness.httpd_env(),
                            cwd=h.root, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    rows = {}
    localtime = 0
    try:
        harness.wait_for(lambda: harness.port_open(h.port), 30, what="httpd -X")
        for _ in range(3):
            requests.post(acs, data={"SAMLResponse": setup.mint(acs)}, allow_redirects=False,
                          timeout=60)
        for mode in ("count", "trace"):
            items = [setup.mint(acs) for _ in range(n)]
            out = os.path.join(workdir, "strace-" + mode)
            argv = ["strace", "-f", "-qq", "-p", str(proc.pid), "-o", out]
            argv += ["-c"] if mode == "count" else ["-e", "trace=%file"]
            st = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
            time.sleep(1.0)   # attached to every thread
            for b64 in items:
                r = requests.post(acs, data={"SAMLResponse": b64}, allow_redirects=False,
                                  timeout=60)
                if r.status_code != 303:
                    raise harness.HarnessError("sign-in answered %d" % r.status_code)
            st.send_signal(sig.SIGINT)
            st.wait(30)
            with open(out) as f:
                text = f.read()
            if mode == "count":
                for line in text.splitlines():
                    parts = line.split()
                    if len(parts) >= 5 and parts[-1] != "total" and parts[3].isdigit():
                        rows[parts[-1]] = int(parts[3]) / n
            else:
                localtime = sum(1 for line in text.splitlines()
                                if "/etc/localtime" in line) / n
    finally:
        proc.terminate()
        proc.wait(30)
    say("")
    say("== system calls per unsolicited sign-in (strace -c on httpd -X, every thread)")
    say("total %.1f: %s", sum(rows.values()), ", ".join(
        "%s %.1f" % kv for kv in sorted(rows.items(), key=lambda kv: -kv[1]) if kv[1] >= 0.5))
    say("of which touch /etc/localtime: %.1f", localtime)


# -- the fleet: throughput, wall time, CPU --------------------------------------

def proc_cpu(pids):
    """utime+stime in seconds of these processes and their children (live)."""
    tick = os.sysconf("SC_CLK_TCK")
    wanted = set(pids)
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid, ppid = int(entry), int(fields[1])
        if pid in wanted or ppid in wanted:
            total += int(fields[11]) + int(fields[12])
    return total / tick


def burst(urls, items, fn):
    """Run fn(url, item) for every item on CLIENTS threads; (seconds, walls)."""
    walls, lock = [], threading.Lock()
    it = iter(list(enumerate(items)))
    errors = []

    def worker():
        while True:
            with lock:
                try:
                    i, item = next(it)
                except StopIteration:
                    return
            t0 = time.perf_counter()
            try:
                fn(urls[i % len(urls)], item)
            except Exception as e:   # reported after the burst
                errors.append(e)
                return
            with lock:
                walls.append(time.perf_counter() - t0)
    threads = [threading.Thread(target=worker) for _ in range(CLIENTS)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    if errors:
        raise errors[0]
    return time.perf_counter() - t0, walls


def pct(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


def section_fleet(setup, module, workdir, quick):
    import requests
    f = harness.Fleet(os.path.join(workdir, "fleet"), module=module,
                      store_url=setup.redis.url, sp=setup.sp, threads=32)
    per = 10 if quick else 40
    rows = []
    f.start()
    try:
        acs = f.acs_url
        pids = [h.pid() for h in f.replicas]
        redis_pid = [setup.redis.pid]

        def signin(url, b64):
            r = requests.post(url, data={"SAMLResponse": b64}, allow_redirects=False,
                              timeout=60)
            if r.status_code != 303:
                raise harness.HarnessError("sign-in answered %d" % r.status_code)

        def run(label, n):
            items = [setup.mint(acs) for _ in range(n)]
            c0, r0 = proc_cpu(pids), proc_cpu(redis_pid)
            secs, walls = burst([acs], items, signin)
            c1, r1 = proc_cpu(pids), proc_cpu(redis_pid)
            rows.append((label, n / secs, statistics.median(walls) * 1e3,
                         pct(walls, 99) * 1e3, (c1 - c0) / n * 1e3, (r1 - r0) / n * 1e3))

        run("first burst after start", CLIENTS * per)
        run("steady state", CLIENTS * per)
        run("steady state (again)", CLIENTS * per)

        cookie = harness.session_cookie(requests.post(
            acs, data={"SAMLResponse": setup.mint(acs)}, allow_redirects=False, timeout=60))[0]
        page = f.public + "/app/page.html"

        def protected(url, _):
            r = requests.get(url, headers={"Cookie": "%s=%s" % (harness.COOKIE_NAME, cookie)},
                             allow_redirects=False, timeout=60)
            if r.status_code != 200:
                raise harness.HarnessError("protected page answered %d" % r.status_code)
        n = CLIENTS * per * 5
        secs, walls = burst([page], range(n), protected)
    finally:
        f.stop()
    say("")
    say("== fleet: 3 replicas behind a balancer, Redis, %d concurrent clients", CLIENTS)
    say("%-26s %10s %9s %9s %14s %14s", "burst", "sign-ins/s", "p50 ms", "p99 ms",
        "httpd CPU ms", "Redis CPU ms")
    for label, rate, p50, p99, cpu, rcpu in rows:
        say("%-26s %10.0f %9.1f %9.1f %14.2f %14.3f", label, rate, p50, p99, cpu, rcpu)
    say("protected requests/s with a session: %.0f (p50 %.1f ms, p99 %.1f ms)",
        n / secs, statistics.median(walls) * 1e3, pct(walls, 99) * 1e3)
    say("(CPU per sign-in: replicas' processes, balancer excluded; wall time through the balancer)")


def section_decryption(setup, module, workdir, quick):
    """Wall time per POST on loopback, one client, one httpd, bodies encoded
    beforehand: a genuine sign-in with an EncryptedAssertion, one as large
    as the hostile POST (an attribute value of 124,000 bytes), and the
    hostile POST of Setup.mint_deep, interleaved so that the machine's
    noise falls on all alike."""
    import requests
    import urllib.parse
    n = 10 if quick else 40
    h = harness.Httpd(os.path.join(workdir, "dec-httpd"), "dec-httpd",
                      modules=[("replay_sp_module", module)], threads=2,
                      start_servers=1,
                      body=harness.sp_conf_body(setup.redis.url, setup.sp))
    acs = h.base_url + harness.ENDPOINT + "/acs"
    kinds = [
        ("genuine sign-in, EncryptedAssertion", 303,
         [setup.mint_encrypted(acs) for _ in range(n + 3)]),
        ("genuine sign-in, EncryptedAssertion as large", 303,
         [setup.mint_encrypted(acs, mail="x" * 124000) for _ in range(n + 3)]),
        ("hostile, plaintext %d levels deep" % HOSTILE_LEVELS, 400,
         [setup.mint_deep(acs)] * (n + 3)),
    ]
    walls = {label: [] for label, _, _ in kinds}
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    h.start()
    try:
        for j in range(n + 3):
            for label, expect, items in kinds:
                body = urllib.parse.urlencode({"SAMLResponse": items[j]})
                t0 = time.perf_counter()
                r = requests.post(acs, data=body, headers=headers,
                                  allow_redirects=False, timeout=120)
                wall = time.perf_counter() - t0
                if r.status_code != expect:
                    raise harness.HarnessError("%s: answered %d, not %d"
                                               % (label, r.status_code, expect))
                if j >= 3:          # the first ones warm the worker up
                    walls[label].append(wall)
        with open(h.error_log) as f:
            checks = re.findall(r"check=([\w-]+)", f.read())
    finally:
        h.stop()
    say("")
    say("== decryption: wall time per POST on loopback, one client, %d each, "
        "interleaved", n)
    say("%-48s %9s %9s %9s", "POST", "bytes", "p50 ms", "p90 ms")
    for label, _, items in kinds:
        w = walls[label]
        say("%-48s %9d %9.2f %9.2f", label, len(items[0]),
            statistics.median(w) * 1e3, pct(w, 90) * 1e3)
    say("(the hostile POST refused with check=%s; before its plaintext was "
        "checked before Lasso read it, it took seconds: the time grew with the "
        "square of the depth)" % (checks[-1] if checks else "?"))


def section_store(setup, module, workdir, quick):
    """Per sign-in wall time over each kind of store connection, measured
    in one run: four httpd instances (plaintext Redis, TLS, plaintext with
    ReplaySPStoreReplicas 1, TLS with it) on one primary (a TLS port
    besides its plaintext one) and one replica, and two on a Redis Cluster
    (three masters, a replica each; without and with ReplaySPStoreReplicas
    1), sign-ins sent to them in turn by one client, so that the machine's
    noise falls on all alike."""
    import requests
    from tls_stores import Pki, TlsRedis
    from test_replicas import Replica, wait_online
    pki = Pki(os.path.join(workdir, "store-pki"))
    primary = TlsRedis(os.path.join(workdir, "store-primary"), pki.server, pki.ca).start()
    replica = Replica(os.path.join(workdir, "store-replica"), primary).start()
    wait_online(primary, 1)
    cluster = harness.RedisCluster(os.path.join(workdir, "store-cluster"), name="bcl").start()
    kinds = [("redis://", primary.url, ""),
             ("rediss://", primary.tls_url(), 'ReplaySPStoreTLSCAFile "%s"\n' % pki.ca),
             ("redis://, Replicas 1", primary.url, "ReplaySPStoreReplicas 1\n"),
             ("rediss://, Replicas 1", primary.tls_url(),
              'ReplaySPStoreTLSCAFile "%s"\nReplaySPStoreReplicas 1\n' % pki.ca),
             ("redis+cluster://", cluster.url, ""),
             ("redis+cluster://, Repl. 1", cluster.url, "ReplaySPStoreReplicas 1\n")]
    hs = []
    try:
        for i, (label, url, extra) in enumerate(kinds):
            h = harness.Httpd(os.path.join(workdir, "store-httpd%d" % i), "store%d" % i,
                              modules=[("replay_sp_module", module)], threads=4,
                              start_servers=1,
                              body=harness.sp_conf_body(url, setup.sp, extra))
            h.start()
            hs.append(h)
        n = 40 if quick else 200
        walls = {label: [] for label, _, _ in kinds}
        items = {label: [setup.mint(h.base_url + harness.ENDPOINT + "/acs")
                         for _ in range(n + 5)] for (label, _, _), h in zip(kinds, hs)}
        for j in range(n + 5):
            for (label, _, _), h in zip(kinds, hs):
                t0 = time.perf_counter()
                r = requests.post(h.base_url + harness.ENDPOINT + "/acs",
                                  data={"SAMLResponse": items[label][j]},
                                  allow_redirects=False, timeout=60)
                wall = time.perf_counter() - t0
                if r.status_code != 303:
                    raise harness.HarnessError("%s: sign-in answered %d" % (label, r.status_code))
                if j >= 5:           # the first ones make the connections
                    walls[label].append(wall)
    finally:
        for h in hs:
            h.stop()
        replica.stop()
        primary.stop()
        cluster.stop()
    say("")
    say("== store: per sign-in wall time, one client, %d sign-ins each, interleaved", n)
    say("%-24s %9s %9s %9s %12s", "store", "mean ms", "p50 ms", "p99 ms", "added p50 ms")
    base = statistics.median(walls[kinds[0][0]])
    for label, _, _ in kinds:
        w = walls[label]
        say("%-24s %9.2f %9.2f %9.2f %12.2f", label, statistics.mean(w) * 1e3,
            statistics.median(w) * 1e3, pct(w, 99) * 1e3, (statistics.median(w) - base) * 1e3)
    say("(loopback: a replica's acknowledgement and TLS's encryption cost little here; "
        "on a network add its round trip to WAIT)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=("instructions", "syscalls", "fleet", "decryption",
                                       "store", "federation"),
                    action="append")
    ap.add_argument("--sizes", default="500,5000",
                    help="federation: the numbers of IdPs (and of SPs) in the aggregates, "
                    "comma-separated (default 500,5000)")
    ap.add_argument("--quick", action="store_true", help="fewer operations per figure")
    ap.add_argument("--keep", action="store_true",
                    help="keep the work directory (callgrind's dumps: one per request, "
                    "for callgrind_annotate)")
    args = ap.parse_args()
    sections = args.only or ["instructions", "syscalls", "fleet", "decryption", "store",
                             "federation"]
    try:
        sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
    except ValueError:
        ap.error("--sizes: numbers separated by commas, e.g. 500,5000,20000")
    if any(n < 2 for n in sizes):
        ap.error("--sizes: each at least 2 (the one-IdP configuration is always measured)")
    module = harness.module_path()
    workdir = harness.make_workdir("rsp-bench-")
    say("mod_replay_sp benchmark: module %s", module)
    setup = Setup(workdir)
    try:
        if "instructions" in sections:
            section_instructions(setup, module, workdir, args.quick)
        if "syscalls" in sections:
            section_syscalls(setup, module, workdir, args.quick)
        if "fleet" in sections:
            section_fleet(setup, module, workdir, args.quick)
        if "decryption" in sections:
            section_decryption(setup, module, workdir, args.quick)
        if "store" in sections:
            section_store(setup, module, workdir, args.quick)
        if "federation" in sections:
            import bench_federation
            bench_federation.section(setup, module, workdir, sizes)
    finally:
        setup.close()
        if args.keep:
            say("work directory kept: %s", workdir)
        else:
            harness.rmtree_quiet(workdir)


if __name__ == "__main__":
    main()
