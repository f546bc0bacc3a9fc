"""The benchmark's federation section: what N IdPs cost, side by side with
Shibboleth SP 3 on the same file. Prints figures, asserts nothing.

For each N (``--sizes``, default 500,5000; and the one-IdP configuration
as the baseline) a synthetic aggregate of N IdPs and N SPs
(tests/integration/federation.py), signed by a federation key made here,
validUntil 7 days away. Then, one SP at a time, one httpd (event MPM, 2
children x 25 threads) on 127.0.0.1:

* mod_replay_sp (the module it is pointed at: RSP_MODULE or the build
  tree's), ``ReplaySPIdPMetadataFile AGGREGATE FEDERATION-CERT``, a Redis
  store;
* Shibboleth SP 3 (mod_shib and its own shibd), a MetadataProvider of the
  same file with reloadChanges, a Signature filter with the same
  certificate and RequireValidUntil.

Figures, each bounded in time (a limit that grows with N; what has not
happened by then is reported as such):

* configtest: wall time of ``apache2 -t`` with the configuration;
* start: from launching httpd (and shibd, at the same moment) until a 200
  from the SP's metadata endpoint, and until a first sign-in works (a
  response from an IdP in the middle of the aggregate);
* memory after start and after sign-ins (a burst from 16 clients): RSS of
  the parent and each child (and shibd), each child's private memory
  (Private_Clean + Private_Dirty of /proc/PID/smaps_rollup) and PSS;
* sign-in latency through the ACS (POST; responses signed by the test IdP
  code with that IdP's key), one keep-alive connection (one child): from
  the first IdP and from IdP N-1 on their first use, then the median of 5
  more each;
* graceful restart (SIGUSR1): until a request is answered by a child of
  the new generation, and the longest any request sent meanwhile waited
  (a new connection every 50 ms);
* a changed file (one IdP added, the file replaced atomically): until a
  sign-in from the new IdP works without a restart, or "no" after the
  limit; for shibd also its peak RSS meanwhile.

Memory is in MiB (2^20 bytes). The machine's other load makes wall times
noisy: compare figures of one run.
"""

import os
import re
import shutil
import signal
import statistics
import subprocess
import threading
import time

import requests

import federation
import harness
import rsp_testidp
import shib

SP_ENTITY_ID = "https://sp.bench.example/saml/metadata"
SHIB_SP_ENTITY_ID = "https://sp.shib.bench.example/shibboleth"
THREADS = 25
CHILDREN = 2
KEYS = 32
BURST = 160
BURST_CLIENTS = 16
AGAIN = 5


def say(fmt, *args):
    print(fmt % args if args else fmt, flush=True)


def start_limit(n):
    """Seconds a start (or a configtest, a graceful restart) may take at n IdPs."""
    return 30.0 + n * 0.006


def reload_limit(n):
    return 15.0 + n * 0.003


# -- processes and their memory ---------------------------------------------

def children_of(ppid):
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == ppid:
                        out.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return sorted(out)


def _kib_fields(path, names):
    out = {}
    try:
        with open(path) as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in names:
                    out[k] = int(v.split()[0])
    except OSError:
        pass
    return out


def memory(pid):
    """{rss, pss, private, threads} of a process (MiB, count); {} if gone."""
    st = _kib_fields("/proc/%d/status" % pid, ("VmRSS", "Threads"))
    sm = _kib_fields("/proc/%d/smaps_rollup" % pid, ("Pss", "Private_Clean", "Private_Dirty"))
    if "VmRSS" not in st:
        return {}
    return {"rss": st["VmRSS"] / 1024.0, "threads": st.get("Threads", 0),
            "pss": sm.get("Pss", 0) / 1024.0,
            "private": (sm.get("Private_Clean", 0) + sm.get("Private_Dirty", 0)) / 1024.0}


class Snapshot:
    """Memory of an httpd (parent, each child) and of a daemon (shibd)."""

    def __init__(self, parent, daemon=None):
        self.parent = memory(parent)
        self.children = [m for m in (memory(c) for c in children_of(parent)) if m]
        self.daemon = memory(daemon) if daemon else None

    def rss(self):
        s = "%.0f / %s" % (self.parent.get("rss", 0),
                           "+".join("%.0f" % c["rss"] for c in self.children) or "-")
        if self.daemon is not None:
            s += " / %.0f" % self.daemon.get("rss", 0)
        return s

    def private(self):
        return "+".join("%.0f/%.0f" % (c["private"], c["pss"]) for c in self.children) or "-"

    def total_pss(self):
        return (self.parent.get("pss", 0) + sum(c["pss"] for c in self.children)
                + (self.daemon.get("pss", 0) if self.daemon else 0))


# -- one httpd, launched in the foreground (its PID is ours from the start) --

class Server:
    def __init__(self, root, name, modules, body):
        self.h = harness.Httpd(root, name, modules=modules, threads=THREADS,
                               start_servers=CHILDREN, body=body)
        self.h.write_file("static/index.html", "<html>static</html>\n")
        self.proc = None

    @property
    def base(self):
        return self.h.base_url

    def configtest(self, limit):
        """(seconds, None) or (None, why)."""
        self.h.write_config()
        t0 = time.monotonic()
        try:
            r = subprocess.run([harness.APACHE2, "-t", "-f", self.h.conf_path],
                               env=harness.httpd_env(), cwd=self.h.root,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=limit)
        except subprocess.TimeoutExpired:
            return None, "> %.0f s" % limit
        if r.returncode != 0:
            out = r.stdout.decode("utf-8", "replace").splitlines()
            why = [x for x in out if "RSP0" in x or "rror" in x] or out or ["exit %d" % r.returncode]
            return None, re.sub(r"^\[[^]]*\] (\[[^]]*\] )*", "", why[0]).strip()
        return time.monotonic() - t0, None

    def launch(self):
        self.h.write_config()
        self.out = open(os.path.join(self.h.root, "logs", "stderr"), "ab")
        self.proc = subprocess.Popen(
            [harness.APACHE2, "-f", self.h.conf_path, "-DFOREGROUND"], env=harness.httpd_env(),
            cwd=self.h.root, stdin=subprocess.DEVNULL, stdout=self.out, stderr=self.out,
            start_new_session=True)
        return self

    @property
    def pid(self):
        return self.proc.pid

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def wait_children(self, deadline):
        """Until CHILDREN children run all their worker threads."""
        while time.monotonic() < deadline and self.alive():
            kids = [memory(c) for c in children_of(self.pid)]
            if len(kids) >= CHILDREN and all(k and k["threads"] >= THREADS + 2 for k in kids):
                time.sleep(0.5)
                return True
            time.sleep(0.1)
        return False

    def stop(self):
        if not self.alive():
            return
        # graceful stop once it has children (SIGTERM can race in mpm_event);
        # while it is still reading its configuration, SIGWINCH is ignored
        self.proc.send_signal(signal.SIGWINCH if children_of(self.pid) else signal.SIGTERM)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(self.pid, signal.SIGKILL)   # its own session: pgid == pid
            except ProcessLookupError:
                pass
            self.proc.wait(10)
        self.out.close()

    def pid_of_request(self, needle, timeout=2.0):
        """The child that logged the request whose line holds needle."""
        deadline = time.monotonic() + timeout
        rx = re.compile(re.escape(needle) + r".* pid=(\d+) ")
        while time.monotonic() < deadline:
            try:
                with open(self.h.access_log) as f:
                    for line in f:
                        m = rx.search(line)
                        if m:
                            return int(m.group(1))
            except OSError:
                pass
            time.sleep(0.05)
        return None


def wait_get(url, deadline, alive):
    """Poll GET url until 200; seconds of the end, or None."""
    while time.monotonic() < deadline and alive():
        try:
            r = requests.get(url, timeout=max(0.5, deadline - time.monotonic()),
                             allow_redirects=False)
            if r.status_code == 200:
                return time.monotonic()
        except requests.RequestException:
            pass
        time.sleep(0.05)
    return None


def post(session, url, b64, ok=(302, 303)):
    """Wall seconds of one POST of a response; None if refused."""
    session.cookies.clear()
    t0 = time.perf_counter()
    r = session.post(url, data={"SAMLResponse": b64}, allow_redirects=False, timeout=60)
    wall = time.perf_counter() - t0
    return wall if r.status_code in ok else None


# -- a federation and the IdPs that sign in ---------------------------------

class Federated:
    def __init__(self, workdir, n, keys, fed_key):
        self.n = n
        d = os.path.join(workdir, "fed-%d" % n)
        if n == 1:
            full = federation.make(d, 1, 0, keys=keys)
            self.path = full.write_single(os.path.join(d, "idp.xml"), 0)
            self.cert = None
        else:
            full = federation.make(d, n, n, keys=keys, signed_by=fed_key)
            self.path, self.cert = full.path, fed_key[1]
        self.fed = full
        self.made = full.seconds
        self.size = os.path.getsize(self.path)
        self.idp_dir = os.path.join(d, "idps")
        self.mid = n // 2
        self.last = max(0, n - 2)          # IdP number N-1
        self._idps = {}
        self.next_path = None

    def idp(self, i):
        if i not in self._idps:
            self._idps[i] = self.fed.test_idp(i, os.path.join(self.idp_dir, str(i)))
        return self._idps[i]

    def mint(self, i, sp, acs):
        return self.idp(i).mint(sp, acs, assertion_id=rsp_testidp.random_id())

    def prepare_next(self, keys, fed_key):
        """The same aggregate with one IdP more (number N; a one-IdP file
        becomes an aggregate of two), not yet in place; the original kept."""
        d = os.path.dirname(self.path)
        self.orig_path = os.path.join(d, "original.xml")
        shutil.copyfile(self.path, self.orig_path)
        if self.n == 1:
            nxt = federation.make(d, 2, 0, keys=keys, filename="next.xml")
        else:
            nxt = federation.make(d, self.n + 1, self.n, keys=keys, signed_by=fed_key,
                                  filename="next.xml")
        self.next_path = nxt.path
        new = max(self.n, 1)
        self.new_idp = nxt.test_idp(new, os.path.join(self.idp_dir, "new"))

    def reset(self):
        """The original file back in place (before the next SP's run)."""
        shutil.copyfile(self.orig_path, self.path + ".tmp")
        os.replace(self.path + ".tmp", self.path)

    def put_next_in_place(self):
        """The file with one IdP more replaces the configured one
        (atomically); the monotonic time it did."""
        shutil.copyfile(self.next_path, self.path + ".tmp")
        t0 = time.monotonic()
        os.replace(self.path + ".tmp", self.path)
        return t0


# -- one SP at one N ----------------------------------------------------------

class Row:
    def __init__(self, sp, n):
        self.sp, self.n = sp, n
        self.f = {}

    def __setitem__(self, k, v):
        self.f[k] = v

    def get(self, k, default="-"):
        return self.f.get(k, default)


def measure(row, server, fed, acs, sp_entity, limit, daemon=None, before_launch=None,
            ready_url=None, reload_wait=None):
    """Everything but configtest, for one started-from-nothing server."""
    t0 = time.monotonic()
    deadline = t0 + limit
    if before_launch:
        before_launch()
    daemon = daemon() if daemon else None
    server.launch()
    ready = wait_get(ready_url, deadline, server.alive)
    if ready is None:
        row["ready"] = "no answer in %.0f s" % limit if server.alive() else "httpd exited"
        return
    row["ready"] = ready - t0
    s = requests.Session()
    items = {i: [fed.mint(i, sp_entity, acs) for _ in range(AGAIN + 1)]
             for i in sorted({fed.mid, 0, fed.last})}
    first = post(s, acs, fed.mint(fed.mid, sp_entity, acs))
    while first is None and time.monotonic() < deadline:
        time.sleep(0.1)
        first = post(s, acs, fed.mint(fed.mid, sp_entity, acs))
    if first is None:
        row["signin"] = "no sign-in in %.0f s" % limit
        return
    row["signin"] = time.monotonic() - t0
    if fed.n > 1:
        row["first0"] = post(s, acs, items[0].pop())
        row["firstL"] = post(s, acs, items[fed.last].pop())
    again0, againL = [], []
    for _ in range(AGAIN):
        again0.append(post(s, acs, items[0].pop()))
        if fed.n > 1:
            againL.append(post(s, acs, items[fed.last].pop()))
    row["again0"] = statistics.median(w for w in again0 if w) if any(again0) else None
    row["againL"] = (statistics.median(w for w in againL if w) if any(againL) else None) \
        if fed.n > 1 else "-"
    s.close()
    server.wait_children(deadline)
    row["mem_start"] = Snapshot(server.pid, daemon)

    # a burst from many clients: every worker thread of both children busy
    idps = sorted({(i * 7919) % fed.n for i in range(12)})
    burst_items = [fed.mint(idps[i % len(idps)], sp_entity, acs) for i in range(BURST)]
    it, lock, refused = iter(burst_items), threading.Lock(), []

    def client():
        while True:
            with lock:
                b64 = next(it, None)
            if b64 is None:
                return
            if post(requests.Session(), acs, b64) is None:
                refused.append(1)
    threads = [threading.Thread(target=client) for _ in range(BURST_CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    row["mem_signins"] = Snapshot(server.pid, daemon)
    row["burst_refused"] = len(refused)

    graceful(row, server, limit)
    if reload_wait:
        reload(row, fed, acs, sp_entity, reload_wait, daemon)


def graceful(row, server, limit):
    old = set(children_of(server.pid))
    probes = []
    t0 = time.monotonic()
    deadline = t0 + limit
    server.proc.send_signal(signal.SIGUSR1)
    k = 0
    new_at = None
    while time.monotonic() < deadline and new_at is None:
        k += 1
        needle = "/static/index.html?graceful=%d-%d" % (server.pid, k)
        sent = time.monotonic()
        try:
            r = requests.get(server.base + needle, timeout=max(0.5, deadline - sent))
            status = r.status_code
        except requests.RequestException:
            status = None
        done = time.monotonic()
        probes.append(done - sent)
        if status == 200:
            pid = server.pid_of_request(needle)
            if pid is not None and pid not in old:
                new_at = done
        time.sleep(max(0, 0.05 - (time.monotonic() - done)))
    row["graceful"] = (new_at - t0) if new_at else "no new generation in %.0f s" % limit
    row["graceful_wait"] = max(probes) if probes else None
    row["parent_after_graceful"] = memory(server.pid).get("rss")


def reload(row, fed, acs, sp_entity, wait, daemon):
    s = requests.Session()
    peak = memory(daemon).get("rss", 0) if daemon else None
    t0 = fed.put_next_in_place()
    picked = None
    while time.monotonic() - t0 < wait:
        b64 = fed.new_idp.mint(sp_entity, acs, assertion_id=rsp_testidp.random_id())
        if post(s, acs, b64) is not None:
            picked = time.monotonic() - t0
            break
        if daemon:
            peak = max(peak, memory(daemon).get("rss", 0))
        time.sleep(0.2)
    row["reload"] = picked if picked is not None else "no (%.0f s)" % wait
    if daemon:
        row["daemon_peak"] = max(peak, memory(daemon).get("rss", 0))


# -- the two SPs ---------------------------------------------------------------

def run_module(workdir, module, redis_url, sp, fed, limit, reload_wait):
    row = Row("mod_replay_sp", fed.n)
    md = (fed.path, fed.cert) if fed.cert else fed.path
    # files looked at every second, as Shibboleth's reloadChanges does
    body = harness.sp_conf_body(redis_url, dict(sp, entity_id=SP_ENTITY_ID, idp_metadata=[md],
                                                default_idp=None),
                                location_extra="ReplaySPMetadataRefresh 1")
    body += '<Location "/static">\n    AuthType None\n    Require all granted\n</Location>\n'
    server = Server(os.path.join(workdir, "rsp-%d" % fed.n), "rsp-%d" % fed.n,
                    [("replay_sp_module", module)], body)
    row["configtest"], why = server.configtest(limit)
    if why:
        row["configtest"], row["note"] = "refused", why
        return row
    acs = server.base + harness.ENDPOINT + "/acs"
    try:
        measure(row, server, fed, acs, SP_ENTITY_ID, limit,
                ready_url=server.base + harness.ENDPOINT + "/metadata",
                reload_wait=reload_wait)
    finally:
        server.stop()
    return row


def shib_provider(fed):
    q = '"%s"' % fed.path
    if not fed.cert:
        return '<MetadataProvider type="XML" validate="true" reloadChanges="true" path=%s/>' % q
    return ('<MetadataProvider type="XML" validate="true" reloadChanges="true" path=%s>\n'
            '            <MetadataFilter type="Signature" certificate="%s"/>\n'
            '            <MetadataFilter type="RequireValidUntil" maxValidityInterval="2419200"/>\n'
            '        </MetadataProvider>' % (q, fed.cert))


def run_shib(workdir, sp, fed, limit, reload_wait):
    row = Row("Shibboleth SP", fed.n)
    d = os.path.join(workdir, "shib-%d" % fed.n)
    sp_ = shib.ShibSP(os.path.join(d, "sp"), SHIB_SP_ENTITY_ID, federation.idp_entity_id(0),
                      fed.path, sp["key_file"], sp["cert_file"],
                      metadata_provider=shib_provider(fed))
    body = "\n".join([
        sp_.httpd_lines(),
        "<Location %s>" % shib.HANDLER, "    AuthType None", "    Require all granted",
        "</Location>"]) + "\n"
    server = Server(os.path.join(d, "httpd"), "shib-%d" % fed.n,
                    [("mod_shib", shib.MOD_SHIB)], body)
    row["configtest"], why = server.configtest(limit)
    if why:
        row["configtest"], row["note"] = "refused", why
        return row
    acs = server.base + shib.POST_PATH
    t0 = [None]

    def spawn_shibd():
        t0[0] = time.monotonic()
        sp_.spawn()

    try:
        def shibd_ready():
            try:
                sp_.wait_ready(limit)
                row["shibd_ready"] = time.monotonic() - t0[0]
            except harness.HarnessError as e:
                row["shibd_ready"] = "not ready: %s" % str(e).splitlines()[0][:60]
        waiter = threading.Thread(target=shibd_ready)

        def before():
            spawn_shibd()
            waiter.start()
        measure(row, server, fed, acs, SHIB_SP_ENTITY_ID, limit, daemon=lambda: sp_.pid,
                before_launch=before, ready_url=server.base + shib.HANDLER + "/Metadata",
                reload_wait=reload_wait)
        waiter.join(limit)
    finally:
        server.stop()
        sp_.stop()
    return row


# -- the section ---------------------------------------------------------------

def _s(v, fmt="%.2f"):
    if v is None:
        return "refused"
    return fmt % v if isinstance(v, (int, float)) else str(v)


def _ms(v):
    return _s(v * 1e3 if isinstance(v, float) else v, "%.1f")


def section(setup, module, workdir, sizes):
    keys = federation.make_keys(os.path.join(workdir, "fed-keys"), KEYS)
    fed_key = rsp_testidp.make_keypair(os.path.join(workdir, "fed-signer"), "federation",
                                       "bench federation signer")
    with_shib = shib.available()
    rows = []
    say("")
    say("== federation: one httpd (event MPM, %d children x %d threads) per SP, "
        "aggregates of N IdPs + N SPs", CHILDREN, THREADS)
    for n in [1] + list(sizes):
        fed = Federated(workdir, n, keys, fed_key)
        fed.prepare_next(keys, fed_key)
        say("N=%d: %s, %.1f MiB, made in %.1f s; limits: start %.0f s, reload %.0f s", n,
            "one IdP's EntityDescriptor" if n == 1 else "signed aggregate",
            fed.size / 1048576.0, fed.made, start_limit(n), reload_limit(n))
        runs = [lambda: run_module(workdir, module, setup.redis.url, setup.sp, fed,
                                   start_limit(n), reload_limit(n))]
        if with_shib:
            runs.append(lambda: run_shib(workdir, setup.sp, fed, start_limit(n),
                                         reload_limit(n)))
        for run in runs:
            fed.reset()
            row = run()
            rows.append(row)
            say("  %-14s configtest %s, ready %s, sign-in %s, graceful %s, reload %s",
                row.sp, _s(row.get("configtest")), _s(row.get("ready")),
                _s(row.get("signin")), _s(row.get("graceful")), _s(row.get("reload")))
        harness.rmtree_quiet(os.path.dirname(fed.path))
    print_tables(rows, with_shib)


def print_tables(rows, with_shib):
    def label(r):
        return "%s, N=%s" % (r.sp, "1 IdP" if r.n == 1 else "{:,}".format(r.n))

    say("")
    say("-- start and memory (seconds; MiB). RSS: parent / each child%s; "
        "private/PSS: each child's Private_Clean+Private_Dirty / Pss", " / shibd" if with_shib else "")
    hdr = ("%-28s %10s %8s %8s %7s | %-18s %-13s | %-18s %-13s %9s"
           % ("SP", "configtest", "ready", "sign-in", "shibd",
              "RSS after start", "private/PSS", "RSS after burst", "private/PSS", "total PSS"))
    say(hdr)
    for r in rows:
        a, b = r.get("mem_start", None), r.get("mem_signins", None)
        say("%-28s %10s %8s %8s %7s | %-18s %-13s | %-18s %-13s %9s", label(r),
            _s(r.get("configtest")), _s(r.get("ready")), _s(r.get("signin")),
            _s(r.get("shibd_ready")) if r.sp != "mod_replay_sp" else "-",
            a.rss() if a else "-", a.private() if a else "-",
            b.rss() if b else "-", b.private() if b else "-",
            "%.0f" % b.total_pss() if b else "-")
    say("")
    say("-- graceful restart, a changed file, sign-in latency (ms, through the ACS, one "
        "keep-alive connection)")
    say("%-28s %9s %9s %9s | %-14s %7s | %9s %9s %9s %9s" % (
        "SP", "graceful", "max wait", "parent", "changed file", "shibd",
        "1st first", "N-1 first", "1st again", "N-1 again"))
    for r in rows:
        say("%-28s %9s %9s %9s | %-14s %7s | %9s %9s %9s %9s", label(r),
            _s(r.get("graceful")), _s(r.get("graceful_wait")),
            _s(r.get("parent_after_graceful"), "%.0f"), _s(r.get("reload")),
            _s(r.get("daemon_peak"), "%.0f"),
            _ms(r.get("first0")), _ms(r.get("firstL")), _ms(r.get("again0")),
            _ms(r.get("againL")))
    say("(ready: a 200 from the SP's metadata endpoint; sign-in: a first sign-in working, "
        "both from launching httpd%s; graceful: SIGUSR1 until a child of the new "
        "generation answers, max wait: the longest a request sent meanwhile waited, "
        "parent: its RSS after; changed file: one IdP added, until it signs in, "
        "shibd: its peak RSS meanwhile; 1st / N-1: the aggregate's first IdP and IdP "
        "number N-1, on their first use and the median of %d more; "
        "'refused': the SP refused that sign-in)"
        % (" and shibd at once" if with_shib else "", AGAIN))
    for r in rows:
        if r.get("note", None):
            say("%s: configtest refused: %s", label(r), r.get("note"))
    if not with_shib:
        say("(Shibboleth SP not measured: libapache2-mod-shib and shibd are not installed)")
