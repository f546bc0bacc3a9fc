"""Process harness for mod_replay_sp's integration tests.

Real processes on 127.0.0.1 only, each in its own directory, each started
and stopped by PID (never by name):

* ``RedisServer``  a redis-server (TCP port from binding port 0, plus a unix
  socket), no persistence, ``maxmemory-policy noeviction``.
* ``RedisClient``  a tiny RESP client (python3-redis is not a dependency).
* ``MemcachedServer`` a memcached (``-U 0 -m 64 -M -o no_slab_reassign`` by
  default), its own directory and port; pause()/resume() by SIGSTOP/SIGCONT.
* ``MemcacheClient`` a tiny text/meta-protocol client (get, mg with flags,
  set/add, delete, flush_all, stats, ``lru_crawler metadump hash|all``);
  python3-pymemcache is not a dependency.
* ``RedisStore``, ``MemcachedStore`` one ``Store`` interface over the
  fleet's store (exists, TTL, claim and session keys, delete, flush, heal),
  so the fleet tests run unchanged on every backend; for memcached, which
  server holds a key, by the module's rule and by asking every server.
* ``Httpd``        one httpd instance: its own ServerRoot with conf/, logs/,
  htdocs/, run/; started with ``apache2 -f conf -k start``, stopped with
  SIGTERM to its PidFile's pid; ``configtest()``; an error-log reader.
* ``Fleet``        three event-MPM replicas loading mod_replay_sp, plus a
  fourth httpd in front as a mod_proxy_balancer (byrequests, no stickiness).

Everything here is bounded in time: every wait has a deadline.
"""

import atexit
import base64
import collections
import hashlib
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
IDP_DIR = os.path.join(REPO, "tests", "idp")

APACHE2 = os.environ.get("RSP_APACHE2", "/usr/sbin/apache2")
APACHE_MODULES = os.environ.get("RSP_APACHE_MODULES", "/usr/lib/apache2/modules")
REDIS_SERVER = os.environ.get("RSP_REDIS_SERVER", "/usr/bin/redis-server")
MEMCACHED = os.environ.get("RSP_MEMCACHED", "/usr/bin/memcached")
DEFAULT_MODULE = os.path.join(REPO, "mod_replay_sp", ".libs", "mod_replay_sp.so")

# The module's log message tags, in ONE place: they may still be renumbered.
TAGS = {
    "replay_refused": "RSP01001",         # error: claim already taken
    "sign_in_accepted": "RSP01002",       # notice
    "claim_store_error": "RSP01003",      # error: store failed on the claim
    "check_refused": "RSP01004",          # warn: "check=<name>"
    "session_store_after_claim": "RSP01005",  # session store failed after claim
    "session_read_store_error": "RSP01006",   # error: store failed reading a session
    "body_too_large": "RSP01015",         # warn: check=size, body > ReplaySPMaxBodySize
    "malformed_session": "RSP01020",      # warn: session record unreadable -> no session
}

COOKIE_NAME = "replay_sp_session"
KEY_PREFIX = "rsp:"
ENDPOINT = "/saml"

# Error-log levels that the gate refuses unless a test declares them.
GATE_LEVELS = ("emerg", "alert", "crit", "error", "warn")
_LEVEL_RE = re.compile(r"^\[[^\]]*\] \[(?:[\w.-]+:)?(emerg|alert|crit|error|warn)\] ")
# GLib / Lasso / libxml2 messages written straight to stderr (= error log).
_GLIB_RE = re.compile(r"(-(?:WARNING|CRITICAL|ERROR) \*\*|^\*\*\s*\(|^(?:\w+ )?error : )")
# A child that died on a signal is logged at notice level: still a failure.
_CRASH_RE = re.compile(r"AH00052|exit signal|AH00060|seems to have exited|AddressSanitizer|runtime error:")

# A store configured as the operations guide asks (a limit, noeviction):
# anything else makes the module's store monitor raise its policy alarm.
REDIS_MAXMEMORY = "256mb"

START_TIMEOUT = 20.0
STOP_TIMEOUT = 20.0


class HarnessError(RuntimeError):
    pass


# --------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------

_recent_ports = collections.deque(maxlen=1024)


def free_port():
    """A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0),
    and not one this process was given lately: once its socket is closed,
    bind(0) can offer the same port again, and ports are often taken
    several at a time before the servers that bind them start (a cluster
    node's bus port once came back as another node's port)."""
    held = []
    try:
        for _ in range(32):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            held.append(s)
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
            if port not in _recent_ports:
                _recent_ports.append(port)
                return port
        raise HarnessError("no port on 127.0.0.1 that was not handed out lately")
    finally:
        for s in held:
            s.close()


def tail(path, n):
    """The last n lines of a file ("" when it cannot be read)."""
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


def port_open(port, host="127.0.0.1", timeout=0.5):
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def wait_for(predicate, timeout, interval=0.05, what="condition"):
    """Poll predicate() until it is truthy; bounded by timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        v = predicate()
        if v:
            return v
        if time.monotonic() >= deadline:
            raise HarnessError("timed out after %.1fs waiting for %s" % (timeout, what))
        time.sleep(interval)


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (our own exited child not yet reaped) counts as gone.
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def terminate(proc, timeout):
    """Stop a child process we started (a subprocess.Popen): SIGTERM, a
    bounded wait, then SIGKILL."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


def stop_server(proc, port, what, timeout):
    """Stop a store server we started (a Popen, possibly paused by a test):
    SIGCONT, then terminate(); then wait, bounded, until its port is free."""
    if proc is None:
        return
    if proc.poll() is None:
        try:
            os.kill(proc.pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
        terminate(proc, timeout)
    wait_for(lambda: not port_open(port, timeout=0.2), 5,
             what="%s port %d to close" % (what, port))


def make_workdir(prefix="rsp-it-"):
    """A fresh directory www-data can traverse (pytest's tmp dirs are 0700)."""
    base = os.environ.get("RSP_TEST_TMPDIR") or None
    d = tempfile.mkdtemp(prefix=prefix, dir=base)
    os.chmod(d, 0o755)
    return d


def make_dir(path, mode=0o755):
    os.makedirs(path, exist_ok=True)
    os.chmod(path, mode)
    return path


def b64url_nopad(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def claim_key(issuer, assertion_id, prefix=KEY_PREFIX):
    """<prefix>a: + base64url(SHA-256(issuer || 0x00 || id)), no padding."""
    if isinstance(issuer, str):
        issuer = issuer.encode("utf-8")
    if isinstance(assertion_id, str):
        assertion_id = assertion_id.encode("utf-8")
    return prefix + "a:" + b64url_nopad(hashlib.sha256(issuer + b"\x00" + assertion_id).digest())


def logout_index_key(issuer, name_id, session_index=None, prefix=KEY_PREFIX):
    """<prefix>n: + base64url(SHA-256(issuer 0x00 name_id [0x00 session_index])):
    the logout index entries a sign-in appends to (with session_index "" when
    the assertion has none, and None for the NameID-wide one)."""
    data = issuer.encode("utf-8") + b"\x00" + name_id.encode("utf-8")
    if session_index is not None:
        data += b"\x00" + session_index.encode("utf-8")
    return prefix + "n:" + b64url_nopad(hashlib.sha256(data).digest())


def session_key(cookie_value, prefix=KEY_PREFIX):
    """<prefix>s: + base64url(SHA-256(cookie value)), no padding."""
    return prefix + "s:" + b64url_nopad(hashlib.sha256(cookie_value.encode("utf-8")).digest())


def module_path():
    """Path of the built DSO (env RSP_MODULE overrides); HarnessError if absent.
    The harness never builds it."""
    path = os.environ.get("RSP_MODULE") or DEFAULT_MODULE
    if not os.path.isfile(path):
        raise HarnessError(
            "mod_replay_sp DSO not found at %s: build it first "
            "(scripts/build.sh, i.e. ./autogen.sh && ./configure && make at the "
            "repository root) or point RSP_MODULE at a built mod_replay_sp.so" % path)
    return os.path.abspath(path)


# --------------------------------------------------------------------------
# Redis: a tiny RESP2 client and a server process
# --------------------------------------------------------------------------

class LineClient:
    """One socket and a buffered reader of CRLF-framed replies (what the
    Redis and memcached clients share). Subclasses connect (_connect sets
    self._sock) and name the server (WHAT) for errors."""

    WHAT = "the server"

    def __init__(self, timeout):
        self.timeout = timeout
        self._sock = None
        self._buf = b""

    def close(self):
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock, self._buf = None, b""

    def _fill(self):
        chunk = self._sock.recv(65536)
        if not chunk:
            raise ConnectionError("%s closed the connection" % self.WHAT)
        self._buf += chunk

    def _raw_line(self):
        while b"\r\n" not in self._buf:
            self._fill()
        line, self._buf = self._buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        """n bytes of data and the CRLF after them."""
        while len(self._buf) < n + 2:
            self._fill()
        data, self._buf = self._buf[:n], self._buf[n + 2:]
        return data


class RedisError(Exception):
    """An error reply (-ERR ..., -OOM ..., -READONLY ...)."""


class RedisClient(LineClient):
    """Minimal RESP2 client over TCP or a unix socket. One connection,
    reconnects lazily after an I/O error. Not thread-safe."""

    WHAT = "redis"

    def __init__(self, host="127.0.0.1", port=None, unix_path=None, timeout=5.0):
        super().__init__(timeout)
        self.host, self.port, self.unix_path = host, port, unix_path

    def _connect(self):
        if self.unix_path:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(self.timeout)
            s.connect(self.unix_path)
        else:
            s = socket.create_connection((self.host, self.port), timeout=self.timeout)
        self._sock, self._buf = s, b""

    @staticmethod
    def _encode(args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            if isinstance(a, str):
                a = a.encode("utf-8")
            elif isinstance(a, int):
                a = str(a).encode("ascii")
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        return b"".join(out)

    _line = LineClient._raw_line

    def _reply(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t == b"+":
            return rest.decode("utf-8", "replace")
        if t == b"-":
            return RedisError(rest.decode("utf-8", "replace"))
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self._reply() for _ in range(n)]
        raise ConnectionError("unexpected RESP reply %r" % line[:80])

    def call(self, *args):
        """Send one command, return its reply (bytes for bulk strings);
        an error reply raises RedisError."""
        if self._sock is None:
            self._connect()
        try:
            self._sock.sendall(self._encode(args))
            r = self._reply()
        except (OSError, ConnectionError, ValueError):
            self.close()
            raise
        if isinstance(r, RedisError):
            raise r
        return r

    # conveniences
    def ping(self):
        return self.call("PING") == "PONG"

    def exists(self, key):
        return self.call("EXISTS", key) == 1

    def pttl(self, key):
        return self.call("PTTL", key)

    def get(self, key):
        return self.call("GET", key)

    def keys(self, pattern):
        return sorted(k.decode("utf-8") for k in self.call("KEYS", pattern))

    def flushall(self):
        return self.call("FLUSHALL")

    def info(self, section=None):
        raw = self.call("INFO", section) if section else self.call("INFO")
        out = {}
        for line in raw.decode("utf-8", "replace").splitlines():
            if line and not line.startswith("#") and ":" in line:
                k, v = line.split(":", 1)
                out[k] = v
        return out


class RoundTripCounter:
    """A TCP relay on 127.0.0.1 in front of a store that counts round
    trips: a round trip starts with the client's first bytes after the
    server last answered (pipelined commands written together are one).
    ``count`` is the total over every connection; ``url_for(scheme)`` the
    address to give the module. Threads are daemons, every wait bounded."""

    BUF = 65536

    def __init__(self, upstream_port, upstream_host="127.0.0.1"):
        self.upstream = (upstream_host, upstream_port)
        self.count = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self._sock.settimeout(0.2)
        self.port = self._sock.getsockname()[1]
        self._threads = [threading.Thread(target=self._accept, daemon=True)]
        self._threads[0].start()

    def _accept(self):
        while not self._stop.is_set():
            try:
                client, _ = self._sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            t = threading.Thread(target=self._relay, args=(client,), daemon=True)
            t.start()
            self._threads.append(t)

    def _relay(self, client):
        import select
        try:
            server = socket.create_connection(self.upstream, timeout=5)
        except OSError:
            client.close()
            return
        answered = True     # the next client bytes start a round trip
        try:
            while not self._stop.is_set():
                ready, _, _ = select.select([client, server], [], [], 0.2)
                for s in ready:
                    data = s.recv(self.BUF)
                    if not data:
                        return
                    if s is client:
                        if answered:
                            with self._lock:
                                self.count += 1
                            answered = False
                        server.sendall(data)
                    else:
                        answered = True
                        client.sendall(data)
        except OSError:
            return
        finally:
            client.close()
            server.close()

    def settled(self, quiet=0.3, timeout=5.0):
        """The count once nothing has moved for ``quiet`` seconds."""
        deadline = time.monotonic() + timeout
        last = self.count
        while time.monotonic() < deadline:
            time.sleep(quiet)
            if self.count == last:
                return last
            last = self.count
        return self.count

    def close(self):
        self._stop.set()
        self._sock.close()
        for t in self._threads:
            t.join(2)


class RedisServer:
    """redis-server on 127.0.0.1:<free port> plus a unix socket, in its own
    directory; started as our child, stopped by PID."""

    def __init__(self, workdir, port=None):
        self.dir = make_dir(workdir)
        self.port = port or free_port()
        self.unix_path = os.path.join(self.dir, "redis.sock")
        self.log_path = os.path.join(self.dir, "redis.log")
        self.proc = None
        self.paused = False

    @property
    def url(self):
        return "redis://127.0.0.1:%d/0" % self.port

    @property
    def unix_url(self):
        return "redis+unix://%s?db=0" % self.unix_path

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def argv(self):
        return [REDIS_SERVER,
                "--port", str(self.port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no",
                "--maxmemory", REDIS_MAXMEMORY, "--maxmemory-policy", "noeviction",
                "--unixsocket", self.unix_path, "--unixsocketperm", "777",
                "--dir", self.dir, "--logfile", self.log_path,
                "--daemonize", "no", "--protected-mode", "yes"]

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def start(self, timeout=START_TIMEOUT):
        if self.running():
            return self
        with open(os.path.join(self.dir, "redis.stdout"), "ab") as out:
            self.proc = subprocess.Popen(self.argv(), stdin=subprocess.DEVNULL,
                                         stdout=out, stderr=subprocess.STDOUT,
                                         start_new_session=True)

        def up():
            if self.proc.poll() is not None:
                raise HarnessError("redis-server exited with %s; see %s"
                                   % (self.proc.returncode, self.log_path))
            try:
                c = self.client(timeout=0.5)
                try:
                    return c.ping()
                finally:
                    c.close()
            except (OSError, ConnectionError, RedisError):
                return False
        wait_for(up, timeout, what="redis-server on port %d" % self.port)
        return self

    def stop(self, timeout=STOP_TIMEOUT):
        stop_server(self.proc, self.port, "redis", timeout)
        self.paused = False

    def restart(self):
        self.stop()
        return self.start()

    def pause(self):
        """SIGSTOP: the server accepts TCP connections but never answers."""
        os.kill(self.proc.pid, signal.SIGSTOP)
        self.paused = True

    def resume(self):
        os.kill(self.proc.pid, signal.SIGCONT)
        self.paused = False

    def client(self, timeout=5.0, unix=False):
        if unix:
            return RedisClient(unix_path=self.unix_path, timeout=timeout)
        return RedisClient(port=self.port, timeout=timeout)


# --------------------------------------------------------------------------
# Redis Cluster: nodes, a topology, and the Store over it
# --------------------------------------------------------------------------

CLUSTER_SLOTS = 16384
CLUSTER_NODE_TIMEOUT_MS = 1000


class ClusterNode(RedisServer):
    """redis-server in cluster mode: its cluster bus on a port of its own,
    its nodes.conf in its directory (kept across restarts: it rejoins)."""

    def __init__(self, workdir, port=None):
        super().__init__(workdir, port)
        self.bus_port = free_port()
        self.node_id = None

    def argv(self):
        return super().argv() + [
            "--cluster-enabled", "yes",
            "--cluster-config-file", os.path.join(self.dir, "nodes.conf"),
            "--cluster-node-timeout", str(CLUSTER_NODE_TIMEOUT_MS),
            "--cluster-port", str(self.bus_port),
            # replicas stay with their masters: a replica the cluster
            # moved to a master left without one (after a failover) would
            # leave another master short of its replicas
            "--cluster-allow-replica-migration", "no"]

    def start(self, timeout=START_TIMEOUT):
        super().start(timeout)
        c = self.client()
        try:
            self.node_id = c.call("CLUSTER", "MYID").decode()
        finally:
            c.close()
        return self

    def call(self, *args):
        c = self.client(timeout=5)
        try:
            return c.call(*args)
        finally:
            c.close()

    def cluster_info(self):
        raw = self.call("CLUSTER", "INFO").decode()
        return dict(l.split(":", 1) for l in raw.split("\r\n") if ":" in l)


def parse_cluster_nodes(raw):
    """CLUSTER NODES: [{id, port, flags, master, slots: [(lo, hi)]}]."""
    out = []
    for line in raw.decode().splitlines():
        f = line.split()
        if len(f) < 8:
            continue
        slots = []
        for r in f[8:]:
            if r.startswith("["):
                continue   # a slot being migrated
            lo, _, hi = r.partition("-")
            slots.append((int(lo), int(hi or lo)))
        out.append({"id": f[0], "port": int(f[1].split("@")[0].rsplit(":", 1)[1]),
                    "flags": f[2].split(","), "master": f[3], "slots": slots})
    return out


class RedisCluster:
    """n_masters masters, each with `replicas` replicas, on 127.0.0.1:
    slots split evenly. Nodes keep their ports; after a failover the roles
    move."""

    def __init__(self, workdir, n_masters=3, name="cluster", replicas=1, make_node=None):
        self.dir = make_dir(workdir)
        make_node = make_node or ClusterNode
        self.nodes = [make_node(os.path.join(self.dir, "%s-%d" % (name, i)))
                      for i in range((1 + replicas) * n_masters)]
        self.n_masters = n_masters
        self.replicas = replicas

    def start(self):
        for n in self.nodes:
            n.start()
        m = self.n_masters
        for i in range(m):
            lo, hi = i * CLUSTER_SLOTS // m, (i + 1) * CLUSTER_SLOTS // m - 1
            self.nodes[i].call("CLUSTER", "ADDSLOTSRANGE", lo, hi)
        hub = self.nodes[0]

        def met():
            # The hub meets every node it does not know (at first, all).
            # A handshake not answered within the node timeout is dropped
            # and nobody else knows the node: on a loaded machine the hub
            # can forget a node it was told to meet. It meets it again.
            known = {e["port"] for e in parse_cluster_nodes(hub.call("CLUSTER", "NODES"))}
            missing = [n for n in self.nodes[1:] if n.port not in known]
            for n in missing:
                hub.call("CLUSTER", "MEET", "127.0.0.1", n.port, n.bus_port)
            return not missing and all(
                n.cluster_info().get("cluster_known_nodes") == str(len(self.nodes))
                for n in self.nodes)
        try:
            wait_for(met, 30, interval=0.1, what="cluster nodes met")
        except HarnessError as e:
            raise HarnessError("%s; the hub knows:\n%s\nits log ends:\n%s" % (
                e, hub.call("CLUSTER", "NODES").decode(), tail(hub.log_path, 20))) from None
        for k, n in enumerate(self.nodes[m:]):
            n.call("CLUSTER", "REPLICATE", self.nodes[k % m].node_id)
        self.settled()
        return self

    @property
    def url(self):
        return "redis+cluster://" + ",".join("127.0.0.1:%d" % n.port
                                             for n in self.nodes[:self.n_masters])

    def by_port(self, port):
        return next(n for n in self.nodes if n.port == port)

    def view(self):
        """CLUSTER NODES from a running node."""
        for n in self.nodes:
            if n.running() and not n.paused:
                try:
                    return parse_cluster_nodes(n.call("CLUSTER", "NODES"))
                except (OSError, ConnectionError, RedisError):
                    continue
        raise HarnessError("no cluster node answers")

    def masters(self):
        """The running masters that serve slots, by their first slot."""
        ms = [e for e in self.view() if "master" in e["flags"] and e["slots"]
              and "fail" not in e["flags"]]
        return [self.by_port(e["port"]) for e in sorted(ms, key=lambda e: e["slots"][0])]

    def slot_of(self, key):
        for n in self.nodes:
            if n.running() and not n.paused:
                return n.call("CLUSTER", "KEYSLOT", key)
        raise HarnessError("no cluster node answers")

    def owner(self, slot):
        for e in self.view():
            if "master" in e["flags"] and any(lo <= slot <= hi for lo, hi in e["slots"]):
                return self.by_port(e["port"])
        return None

    def holds(self, key):
        """Whether the master of key's slot holds it: the master a node's
        view names, or, while that view lags a slot's move, the one its
        MOVED answer names."""
        slot = self.slot_of(key)
        node, asked = self.owner(slot), []
        for _ in range(3):
            try:
                return node.call("EXISTS", key) == 1
            except RedisError as e:
                asked.append("%d: %s" % (node.port, e))
                if not str(e).startswith("MOVED "):
                    break
                node = self.by_port(int(str(e).rsplit(":", 1)[1]))
        raise RedisError("EXISTS %s (slot %d) asked at %s" % (key, slot, "; ".join(asked)))

    def replicas_of(self, master):
        return [self.by_port(e["port"]) for e in self.view()
                if e["master"] == master.node_id and "fail" not in e["flags"]]

    def settled(self, timeout=40):
        """Every slot served, every node says ok, each master has its
        replicas with their links up, and no node is marked failed."""
        def ok():
            try:
                if not all(n.cluster_info().get("cluster_state") == "ok"
                           for n in self.nodes):
                    return False
                v = self.view()
                if any("fail" in e["flags"] or "fail?" in e["flags"] for e in v):
                    return False
                masters = [e for e in v if "master" in e["flags"] and e["slots"]]
                if len(masters) != self.n_masters:
                    return False
                for e in masters:
                    r = [x for x in v if x["master"] == e["id"]]
                    if len(r) < self.replicas:
                        return False
                    for x in r:
                        info = self.by_port(x["port"]).client().info("replication")
                        if info.get("master_link_status") != "up":
                            return False
                return True
            except (OSError, ConnectionError, RedisError, StopIteration):
                return False
        wait_for(ok, timeout, interval=0.2, what="cluster settled")

    def migrate(self, slot, src, dst, during=None):
        """Move slot from master src to master dst as redis-cli does: mark
        it importing and migrating (keys not yet on src are then asked for
        at dst: ASK), call during(), move its keys, give it to dst on every
        master (MOVED from then on)."""
        dst.call("CLUSTER", "SETSLOT", slot, "IMPORTING", src.node_id)
        src.call("CLUSTER", "SETSLOT", slot, "MIGRATING", dst.node_id)
        if during:
            during()
        for _ in range(100):
            keys = src.call("CLUSTER", "GETKEYSINSLOT", slot, 100)
            if not keys:
                break
            # with tls-cluster, nodes talk TLS to each other
            src.call("MIGRATE", "127.0.0.1", getattr(dst, "tls_port", dst.port), "", 0,
                     5000, "KEYS", *keys)
        for m in (dst, src) + tuple(x for x in self.masters() if x not in (src, dst)):
            m.call("CLUSTER", "SETSLOT", slot, "NODE", dst.node_id)
        self._settle(slot, dst)

    def _slot_owner_at(self, node, slot):
        """The master that node's own view gives slot to (its id), or None."""
        for e in parse_cluster_nodes(node.call("CLUSTER", "NODES")):
            if "master" in e["flags"] and any(lo <= slot <= hi for lo, hi in e["slots"]):
                return e["id"]
        return None

    def _settle(self, slot, dst, timeout=15.0):
        """Wait until every running node gives slot to dst. A move right
        after another can lose its race with gossip: dst takes the slot with
        a config epoch lower than one src announced a moment earlier, src's
        last claim of the slot then wins at dst, and each node sends clients
        to the other (MOVED ping-pong). redis-cli's `--cluster fix` repairs
        that the way done here: dst bumps its epoch and takes the slot
        again."""
        deadline = time.monotonic() + timeout
        quiet_since = time.monotonic()
        while True:
            owners = {}
            for n in self.nodes:
                if n.running() and not n.paused:
                    try:
                        owners[n.port] = self._slot_owner_at(n, slot)
                    except (OSError, ConnectionError, RedisError):
                        owners[n.port] = None
            if all(o == dst.node_id for o in owners.values()):
                return
            if time.monotonic() > deadline:
                raise HarnessError("slot %d not settled on %d: %r" % (slot, dst.port, owners))
            if time.monotonic() - quiet_since > 0.5:
                dst.call("CLUSTER", "BUMPEPOCH")
                for n in self.masters() + [dst]:
                    n.call("CLUSTER", "SETSLOT", slot, "NODE", dst.node_id)
                quiet_since = time.monotonic()
            time.sleep(0.05)

    def errorstats(self, kind):
        """errorstat_<kind> counts summed over the running nodes."""
        total = 0
        for n in self.nodes:
            if n.running() and not n.paused:
                v = n.client().info("errorstats").get("errorstat_" + kind)
                if v:
                    total += int(v.split("count=")[1].split(",")[0])
        return total

    def stop(self):
        for n in self.nodes:
            n.stop()


# --------------------------------------------------------------------------
# memcached: a tiny text/meta-protocol client and a server process
# --------------------------------------------------------------------------

class MemcacheError(Exception):
    """An error reply (ERROR, CLIENT_ERROR ..., SERVER_ERROR ...)."""


def _mc_key(key):
    return key.encode("utf-8") if isinstance(key, str) else key


class MemcacheClient(LineClient):
    """Minimal memcached client (text and meta protocol, memcached >= 1.6)
    over one TCP connection; reconnects lazily after an I/O error. Not
    thread-safe. Every read is bounded by ``timeout`` (socket timeout)."""

    WHAT = "memcached"

    def __init__(self, host="127.0.0.1", port=None, timeout=5.0):
        super().__init__(timeout)
        self.host, self.port = host, port

    def _connect(self):
        self._sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
        self._buf = b""

    def _line(self):
        return self._raw_line().decode("utf-8", "replace")

    _data = LineClient._exact

    def _io(self, payload, reader):
        """Send payload, return reader(); close the connection on any error
        (its state is unknown afterwards)."""
        if self._sock is None:
            self._connect()
        try:
            if payload:
                self._sock.sendall(payload)
            return reader()
        except (OSError, ConnectionError, ValueError):
            self.close()
            raise

    @staticmethod
    def _check(line):
        if line == "ERROR" or line.startswith(("CLIENT_ERROR", "SERVER_ERROR")):
            raise MemcacheError(line)
        return line

    def command(self, line):
        """Send one command line, return its one reply line (errors raise)."""
        return self._check(self._io(line.encode("utf-8") + b"\r\n", self._line))

    # -- storage -----------------------------------------------------------
    def store(self, cmd, key, value, exptime=0, flags=0):
        """set/add/replace: the reply line (STORED, NOT_STORED, ...);
        SERVER_ERROR (e.g. out of memory) raises MemcacheError."""
        if isinstance(value, str):
            value = value.encode("utf-8")
        head = b"%s %s %d %d %d\r\n" % (cmd.encode(), _mc_key(key), flags, exptime, len(value))
        return self._check(self._io(head + value + b"\r\n", self._line))

    def set(self, key, value, exptime=0, flags=0):
        return self.store("set", key, value, exptime, flags) == "STORED"

    def add(self, key, value, exptime=0, flags=0):
        return self.store("add", key, value, exptime, flags) == "STORED"

    def store_many(self, cmd, items, exptime=0):
        """Pipeline: one storage command per (key, value), then read every
        reply. Returns the reply lines (SERVER_ERROR lines included, not
        raised)."""
        payload = b"".join(b"%s %s 0 %d %d\r\n%s\r\n" % (cmd.encode(), _mc_key(k), exptime, len(v), v)
                           for k, v in items)

        def read():
            return [self._line() for _ in items]
        return self._io(payload, read)

    # -- retrieval -----------------------------------------------------------
    def get(self, key):
        """The value (bytes) or None."""
        def read():
            line = self._check(self._line())
            if line == "END":
                return None
            parts = line.split()
            if parts[0] != "VALUE" or len(parts) < 4:
                raise ConnectionError("unexpected get reply %r" % line[:80])
            data = self._data(int(parts[3]))
            end = self._line()
            if end != "END":
                raise ConnectionError("unexpected get trailer %r" % end[:80])
            return data
        return self._io(b"get " + _mc_key(key) + b"\r\n", read)

    def mg(self, key, *flags):
        """Meta get. None when absent (EN); else a dict: 'status' ('HD' or
        'VA'), 'flags' {letter: text} of the returned flags, 'value' (bytes
        with the 'v' flag, else None). E.g. mg(key, 't') -> flags['t'] is
        the remaining TTL in seconds ('-1': no expiry)."""
        def read():
            line = self._check(self._line())
            if line == "EN":
                return None
            parts = line.split()
            out = {"status": parts[0], "flags": {}, "value": None}
            rest = parts[1:]
            if parts[0] == "VA":
                n, rest = int(parts[1]), parts[2:]
            elif parts[0] != "HD":
                raise ConnectionError("unexpected mg reply %r" % line[:80])
            for tok in rest:
                out["flags"][tok[0]] = tok[1:]
            if parts[0] == "VA":
                out["value"] = self._data(n)
            return out
        cmd = b"mg " + _mc_key(key) + b"".join(b" " + f.encode() for f in flags) + b"\r\n"
        return self._io(cmd, read)

    def ttl(self, key):
        """Remaining TTL in whole seconds (memcached's own clock), -1 for
        no expiry, None when absent."""
        r = self.mg(key, "t")
        return None if r is None else int(r["flags"]["t"])

    def exists(self, key):
        return self.mg(key) is not None

    # -- other -------------------------------------------------------------
    def delete(self, key):
        return self.command("delete " + (key if isinstance(key, str) else key.decode())) == "DELETED"

    def flush_all(self):
        return self.command("flush_all") == "OK"

    def version(self):
        return self.command("version").split(" ", 1)[1]

    def stats(self, section=None):
        """{name: value} of ``stats`` or ``stats <section>`` (e.g. 'settings')."""
        def read():
            out = {}
            while True:
                line = self._check(self._line())
                if line == "END":
                    return out
                parts = line.split(" ", 2)
                if parts[0] != "STAT" or len(parts) < 2:
                    raise ConnectionError("unexpected stats line %r" % line[:80])
                out[parts[1]] = parts[2] if len(parts) > 2 else ""
        cmd = b"stats" + (b" " + section.encode() if section else b"") + b"\r\n"
        return self._io(cmd, read)

    def stats_settings(self):
        return self.stats("settings")

    def metadump(self, mode="hash", attempts=50):
        """Every live item as a dict (key decoded, exp, la, cas, fetch, cls,
        size) from ``lru_crawler metadump <mode>``. The default walks the
        hash table: ``metadump all`` walks the LRUs and misses items that
        the LRU maintainer moves while it crawls (seen with memcached
        1.6.18: 297..300 of 300 items under get/add traffic; ``hash``: 300
        every time). The crawler may be busy with its own run: retried,
        bounded."""
        def read():
            # Item lines end in a bare LF; the block ends with END CRLF.
            # Errors (BUSY ..., ERROR ...) are one CRLF line.
            while True:
                if self._buf.startswith(b"END\r\n") or b"\nEND\r\n" in self._buf:
                    break
                if b"\r\n" in self._buf and not self._buf.startswith(b"key="):
                    line = self._line()
                    raise MemcacheError(line)
                self._fill()
            block, self._buf = self._buf.split(b"END\r\n", 1)
            items = []
            for line in block.decode("utf-8", "replace").split("\n"):
                if not line:
                    continue
                d = {}
                for tok in line.split(" "):
                    k, _, v = tok.partition("=")
                    d[k] = v
                d["key"] = urllib.parse.unquote(d.get("key", ""))
                items.append(d)
            return items
        last = None
        for _ in range(attempts):
            try:
                return self._io(b"lru_crawler metadump %s\r\n" % mode.encode(), read)
            except MemcacheError as e:
                last = e
                if not str(e).startswith("BUSY"):
                    raise
                time.sleep(0.05)
        raise MemcacheError("lru_crawler stayed busy: %s" % last)

    def keys(self, prefix=""):
        """Sorted keys of the live items starting with prefix."""
        return sorted(d["key"] for d in self.metadump() if d["key"].startswith(prefix))


class MemcacheWatch:
    """memcached's ``watch`` log stream (1.6: ``watch mutations fetchers``)
    on its own connection, collected by a thread (bounded: 120 s). Each
    entry is a dict of the line's fields (key decoded), e.g. type=item_store
    cmd=add ttl=<seconds sent> status=stored, or type=item_get
    status=not_found. Note: memcached logs its own lookup inside an ``add``
    as an item_get right before the item_store (same connection, same
    microsecond)."""

    def __init__(self, server, kinds=("mutations", "fetchers")):
        self.client = server.client(timeout=0.3)
        r = self.client.command("watch " + " ".join(kinds))
        if r != "OK":
            raise MemcacheError("watch: %s" % r)
        self.entries = []
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        deadline = time.monotonic() + 120
        while not self._stop and time.monotonic() < deadline:
            try:
                while b"\n" not in self.client._buf:
                    self.client._fill()
            except OSError:
                continue          # read timeout: look at _stop again
            except ConnectionError:
                return
            line, self.client._buf = self.client._buf.split(b"\n", 1)
            d = {}
            for tok in line.decode("utf-8", "replace").strip().split(" "):
                k, _, v = tok.partition("=")
                d[k] = v
            if "key" in d:
                d["key"] = urllib.parse.unquote(d["key"])
            self.entries.append(d)

    def stop(self):
        time.sleep(0.3)           # let the last entries arrive
        self._stop = True
        self._thread.join(timeout=5)
        self.client.close()
        return self.entries


MEMCACHED_DEFAULT_OPTIONS = ("-U", "0", "-m", "64", "-M", "-o", "no_slab_reassign")
# The module's memcached expiry = ceil(ttl_ms / 1000) + this (see MemcachedStore).
MEMCACHED_EXPIRY_MARGIN_S = 1


class MemcachedServer:
    """memcached on 127.0.0.1:<free port> in its own directory, started as
    our child, stopped by PID. ``options`` replaces the default
    ``-U 0 -m 64 -M -o no_slab_reassign`` (``-l``/``-p``/``-u`` are always
    given: memcached refuses to run as root without ``-u``)."""

    def __init__(self, workdir, port=None, options=MEMCACHED_DEFAULT_OPTIONS, name=None):
        self.dir = make_dir(workdir)
        self.port = port or free_port()
        self.options = tuple(options)
        self.name = name or os.path.basename(self.dir.rstrip("/"))
        self.log_path = os.path.join(self.dir, "memcached.log")
        self.proc = None
        self.paused = False
        self.starts = 0

    @property
    def address(self):
        return "127.0.0.1:%d" % self.port

    @property
    def url(self):
        return "memcache://" + self.address

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def argv(self):
        user = ["-u", "www-data"] if os.geteuid() == 0 else []
        return [MEMCACHED, "-l", "127.0.0.1", "-p", str(self.port)] + user + list(self.options)

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def start(self, options=None, timeout=START_TIMEOUT):
        """Start (same port); ``options`` replaces this server's options
        from now on."""
        if options is not None:
            self.options = tuple(options)
        if self.running():
            return self
        with open(self.log_path, "ab") as out:
            out.write(("--- start: %s\n" % " ".join(self.argv())).encode())
            out.flush()
            self.proc = subprocess.Popen(self.argv(), stdin=subprocess.DEVNULL,
                                         stdout=out, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        self.paused = False
        self.starts += 1

        def up():
            if self.proc.poll() is not None:
                raise HarnessError("memcached exited with %s; see %s"
                                   % (self.proc.returncode, self.log_path))
            c = self.client(timeout=0.5)
            try:
                return bool(c.version())
            except (OSError, ConnectionError, MemcacheError):
                return False
            finally:
                c.close()
        wait_for(up, timeout, what="memcached on port %d" % self.port)
        return self

    def stop(self, timeout=STOP_TIMEOUT):
        stop_server(self.proc, self.port, "memcached", timeout)
        self.paused = False

    def restart(self, options=None):
        self.stop()
        return self.start(options=options)

    def pause(self):
        """SIGSTOP: the kernel still accepts TCP connections, nobody answers."""
        os.kill(self.proc.pid, signal.SIGSTOP)
        self.paused = True

    def resume(self):
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)
        self.paused = False

    def available(self):
        """Running and not paused: a client can expect an answer."""
        return self.running() and not self.paused

    def client(self, timeout=5.0):
        return MemcacheClient(port=self.port, timeout=timeout)


# --------------------------------------------------------------------------
# The store the fleet runs on, seen from the tests: one interface for every
# backend, so the fleet suite runs unchanged on Redis and on memcached.
# --------------------------------------------------------------------------

def memcache_server_index(key, n):
    """The module's key-to-server rule: first 4 bytes of SHA-256(key),
    big-endian unsigned, mod n (servers in URL order)."""
    return int.from_bytes(hashlib.sha256(_mc_key(key)).digest()[:4], "big") % n


class Store:
    """What the tests need to know about the fleet's store:

    * ``name`` (the backend id: redis, memcached1, memcached2), ``kind``
      ('redis' or 'memcached'), ``url`` (for ReplaySPStore) and
      ``server_extra`` (server-scope directives the fleet runs with);
    * ``exists(key)``, ``ttl_seconds(key)`` (float; None when absent),
      ``get(key)``, ``set(key, value, ttl_s)``, ``delete(key)``,
      ``keys(prefix)``, ``claim_keys()``, ``session_keys()``, ``flush()``;
    * ``ttl_resolution``: 0.001 s for Redis (PTTL), 1 s for memcached
      (``mg key t`` and memcached's once-a-second clock); ``clock(key)``;
    * ``timeout_s``: the ReplaySPStoreTimeout the fleet runs with;
    * ``expiry_margin_s``: whole seconds the module adds to each expiry it
      sends (memcached: 1, for its once-a-second clock; Redis: 0);
    * ``heal()``: every server up, answering, healthy and empty;
    * ``stop_all()``/``start_all()``/``pause_all()``/``resume_all()``.
    """

    name = kind = None
    server_extra = ""
    ttl_resolution = 1.0
    expiry_margin_s = 0      # whole seconds the module adds to every expiry
    timeout_s = 1.0          # ReplaySPStoreTimeout the fleet runs with

    def clock(self, key):
        """The store's clock for key in whole seconds, None if the TTL read
        is not tied to a coarse clock (Redis)."""
        return None

    def claim_keys(self, prefix=KEY_PREFIX):
        return self.keys(prefix + "a:")

    def session_keys(self, prefix=KEY_PREFIX):
        return self.keys(prefix + "s:")

    def close(self):
        pass


class RedisStore(Store):
    kind = "redis"
    ttl_resolution = 0.001
    timeout_s = 1.0          # the module's default ReplaySPStoreTimeout

    def __init__(self, server, name="redis"):
        self.name = name
        self.server = server
        self.servers = [server]
        self._c = None

    @property
    def url(self):
        return self.server.url

    @property
    def c(self):
        if self._c is None:
            self._c = self.server.client()
        return self._c

    def exists(self, key):
        return self.c.exists(key)

    def ttl_seconds(self, key):
        ms = self.c.pttl(key)
        if ms == -2:
            return None
        return -1 if ms == -1 else ms / 1000.0

    def get(self, key):
        return self.c.get(key)

    def set(self, key, value, ttl_s):
        return self.c.call("SET", key, value, "PX", int(ttl_s * 1000)) == "OK"

    def delete(self, key):
        return self.c.call("DEL", key) == 1

    def keys(self, prefix=""):
        return self.c.keys(prefix + "*")

    def flush(self):
        self.c.flushall()

    def heal(self):
        s = self.server
        if not s.running():
            s.start()
        else:
            s.resume()
        self.close()
        c = self.c
        c.call("CONFIG", "SET", "maxmemory", REDIS_MAXMEMORY)
        if c.info("replication").get("role") != "master":
            c.call("REPLICAOF", "NO", "ONE")
        c.flushall()

    def stop_all(self):
        self.close()
        self.server.stop()

    def start_all(self):
        self.server.start()

    def pause_all(self):
        self.close()
        self.server.pause()

    def resume_all(self):
        self.server.resume()

    def close(self):
        if self._c is not None:
            self._c.close()
            self._c = None


class MemcachedStore(Store):
    """One or more memcached servers, in URL order. Every key lookup asks
    every available server and asserts that only the server the module's
    rule names holds it (``locate``)."""

    kind = "memcached"
    ttl_resolution = 1.0
    # The module sends ceil(ttl_ms / 1000) + 1 s: memcached's clock ticks
    # once a second, and an item set just before a tick would otherwise
    # live up to a second less than its TTL (rsp_store_memcache.c, expiry()).
    expiry_margin_s = MEMCACHED_EXPIRY_MARGIN_S

    def __init__(self, servers, name, timeout_ms=500):
        self.name = name
        self.servers = list(servers)
        self.timeout_s = timeout_ms / 1000.0
        self.server_extra = "ReplaySPStoreTimeout %d" % timeout_ms
        self._clients = {}

    @property
    def url(self):
        return "memcache://" + ",".join(s.address for s in self.servers)

    def client(self, server):
        """A client for server, made anew after the server was restarted
        (the old connection went with the old process)."""
        key = (server.port, server.starts)
        c = self._clients.get(key)
        if c is None:
            c = self._clients[key] = server.client()
        return c

    def close(self):
        for c in self._clients.values():
            c.close()
        self._clients = {}

    # -- where keys live ---------------------------------------------------
    def index_of(self, key):
        """By the formula."""
        return memcache_server_index(key, len(self.servers))

    def server_of(self, key):
        return self.servers[self.index_of(key)]

    def holders(self, key):
        """By asking: indexes of the available servers that hold key."""
        return [i for i, s in enumerate(self.servers)
                if s.available() and self.client(s).exists(key)]

    def locate(self, key):
        """True when key is on its server; AssertionError when another
        server holds it (the module moved a key)."""
        held = self.holders(key)
        want = self.index_of(key)
        assert set(held) <= {want}, (
            "key %s is on server(s) %r, the formula says server %d (%s)"
            % (key, held, want, self.servers[want].address))
        return want in held

    # -- the Store interface -------------------------------------------------
    def exists(self, key):
        return self.locate(key)

    def ttl_seconds(self, key):
        self.locate(key)
        t = self.client(self.server_of(key)).ttl(key)
        return None if t is None else float(t)

    def get(self, key):
        return self.client(self.server_of(key)).get(key)

    def set(self, key, value, ttl_s):
        return self.client(self.server_of(key)).set(key, value, int(-(-ttl_s // 1)))

    def delete(self, key):
        return self.client(self.server_of(key)).delete(key)

    def keys_by_server(self, prefix=""):
        """{server index: sorted keys} over the available servers."""
        return {i: self.client(s).keys(prefix)
                for i, s in enumerate(self.servers) if s.available()}

    def keys(self, prefix=""):
        """Every key; each on the server the formula names, except logout
        index entries, written on their sign-in's claim's server (one index
        key may then be on several), and a request's use (u:), written on
        its request's server."""
        out = []
        for i, ks in self.keys_by_server(prefix).items():
            for k in ks:
                if k.startswith((KEY_PREFIX + "n:", KEY_PREFIX + "u:")):
                    continue
                assert self.index_of(k) == i, (
                    "key %s is on server %d (%s), the formula says %d"
                    % (k, i, self.servers[i].address, self.index_of(k)))
            out.extend(ks)
        return sorted(set(out))

    def flush(self):
        for s in self.servers:
            self.client(s).flush_all()

    def clock(self, key):
        """memcached's own clock (``stats`` time, whole seconds, ticks once a
        second) on the server that holds key: TTLs count down on it."""
        return int(self.client(self.server_of(key)).stats()["time"])

    def heal(self, options=MEMCACHED_DEFAULT_OPTIONS):
        """Every server running the default options, answering and empty."""
        self.close()
        for s in self.servers:
            if s.running() and tuple(s.options) != tuple(options):
                s.stop()
            if not s.running():
                s.start(options=options)
            else:
                s.resume()
        self.flush()

    def stop_all(self):
        self.close()
        for s in self.servers:
            s.stop()

    def start_all(self):
        for s in self.servers:
            s.start()

    def pause_all(self):
        self.close()
        for s in self.servers:
            s.pause()

    def resume_all(self):
        for s in self.servers:
            s.resume()


class ClusterStore(Store):
    """The Store interface over a RedisCluster: each key asked of the
    master of its slot (and asserted to be on no other master)."""

    kind = "redis"
    ttl_resolution = 0.001
    timeout_s = 1.0

    def __init__(self, cluster, name="cluster"):
        self.name = name
        self.cluster = cluster
        self.servers = cluster.nodes

    @property
    def url(self):
        return self.cluster.url

    def node_of(self, key):
        return self.cluster.owner(self.cluster.slot_of(key))

    def _call(self, key, *args):
        return self.node_of(key).call(*args)

    def exists(self, key):
        return self._call(key, "EXISTS", key) == 1

    def ttl_seconds(self, key):
        ms = self._call(key, "PTTL", key)
        if ms == -2:
            return None
        return -1 if ms == -1 else ms / 1000.0

    def get(self, key):
        return self._call(key, "GET", key)

    def set(self, key, value, ttl_s):
        return self._call(key, "SET", key, value, "PX", int(ttl_s * 1000)) == "OK"

    def delete(self, key):
        return self._call(key, "DEL", key) == 1

    def keys(self, prefix=""):
        out = []
        for m in self.cluster.masters():
            ks = sorted(k.decode() for k in m.call("KEYS", prefix + "*"))
            for k in ks:
                assert self.node_of(k) is m, "key %s on %d, not on its slot's master" % (k, m.port)
            out.extend(ks)
        return sorted(out)

    def flush(self):
        for m in self.cluster.masters():
            m.call("FLUSHALL")

    def heal(self):
        for n in self.cluster.nodes:
            if not n.running():
                n.start()
            else:
                n.resume()
        self.cluster.settled()
        for m in self.cluster.masters():
            m.call("CONFIG", "SET", "maxmemory", REDIS_MAXMEMORY)
        self.flush()

    def stop_all(self):
        for n in self.cluster.nodes:
            n.stop()

    def start_all(self):
        for n in self.cluster.nodes:
            n.start()

    def pause_all(self):
        for n in self.cluster.nodes:
            n.pause()

    def resume_all(self):
        for n in self.cluster.nodes:
            n.resume()


# --------------------------------------------------------------------------
# httpd
# --------------------------------------------------------------------------

BASE_MODULES = ["mpm_event", "authn_core", "authz_core", "authz_user",
                "headers", "mime", "dir"]
PROXY_MODULES = ["proxy", "proxy_http", "proxy_balancer",
                 "lbmethod_byrequests", "slotmem_shm"]

_CONF_TEMPLATE = """\
# generated by tests/integration/harness.py for instance {name}
ServerRoot "{root}"
DefaultRuntimeDir "{root}/run"
PidFile "{root}/run/httpd.pid"
Mutex file:{root}/run default
Listen 127.0.0.1:{port}
{user_group}
ServerName {server_name}
UseCanonicalName {canonical}
ServerAdmin root@localhost
{load_modules}
ErrorLog "{root}/logs/error_log"
{core_dump}
LogLevel {log_level}
LogFormat "%h %l %u %t \\"%r\\" %>s %b %D pid=%P tid=%{{tid}}P" rsp
CustomLog "{root}/logs/access_log" rsp
TypesConfig /etc/mime.types
DocumentRoot "{root}/htdocs"
<Directory />
    AllowOverride None
    Require all denied
</Directory>
<Directory "{root}/htdocs">
    Options None
    AllowOverride None
    Require all granted
</Directory>
Timeout 30
GracefulShutdownTimeout 5
KeepAlive On
KeepAliveTimeout 5
<IfModule mpm_event_module>
    StartServers {start_servers}
    ServerLimit 16
    ThreadsPerChild {threads}
    ThreadLimit 64
    MinSpareThreads {threads}
    MaxSpareThreads {max_spare}
    MaxRequestWorkers {max_workers}
    MaxConnectionsPerChild 0
</IfModule>
{body}
"""


def httpd_env():
    """The environment httpd runs with. RSP_HTTPD_PRELOAD (e.g. the ASan
    runtime, for a module built with --enable-sanitizers) is preloaded
    into httpd only, not into the test processes."""
    env = dict(os.environ)
    preload = os.environ.get("RSP_HTTPD_PRELOAD")
    if preload:
        env["LD_PRELOAD"] = preload
        env.setdefault("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=0")
        env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    return env


class Httpd:
    """One httpd instance with its own ServerRoot under ``root``."""

    all_instances = []   # every Httpd ever made (the error-log gate reads them)

    def __init__(self, root, name, port=None, server_name=None,
                 canonical=True, modules=(), body="", log_level="warn",
                 threads=25, start_servers=2):
        self.name = name
        self.root = make_dir(root)
        for sub in ("conf", "logs", "htdocs", "run"):
            make_dir(os.path.join(self.root, sub))
        # run/ holds mutexes and slotmem files the children use (as www-data)
        os.chmod(os.path.join(self.root, "run"), 0o777)
        self.port = port or free_port()
        self.server_name = server_name or "http://127.0.0.1:%d" % self.port
        self.canonical = canonical
        self.modules = list(modules)
        self.body = body
        self.log_level = log_level
        self.threads = threads
        self.start_servers = start_servers
        self.conf_path = os.path.join(self.root, "conf", "httpd.conf")
        self.pid_path = os.path.join(self.root, "run", "httpd.pid")
        self.error_log = os.path.join(self.root, "logs", "error_log")
        self.access_log = os.path.join(self.root, "logs", "access_log")
        self.htdocs = os.path.join(self.root, "htdocs")
        self._log_offset = 0
        self.gate_offset = 0
        self._started_pid = None   # remembered: stop() works even if run/ vanished
        Httpd.all_instances.append(self)

    # -- configuration ---------------------------------------------------
    @property
    def base_url(self):
        return "http://127.0.0.1:%d" % self.port

    def load_module_lines(self):
        lines = []
        for m in BASE_MODULES + self.modules:
            if isinstance(m, tuple):              # (module_name, path)
                lines.append("LoadModule %s %s" % m)
            else:
                lines.append("LoadModule %s_module %s/mod_%s.so" % (m, APACHE_MODULES, m))
        return "\n".join(dict.fromkeys(lines))

    def render(self):
        user_group = "User www-data\nGroup www-data" if os.geteuid() == 0 else ""
        return _CONF_TEMPLATE.format(
            name=self.name, root=self.root, port=self.port,
            user_group=user_group, server_name=self.server_name,
            canonical="On" if self.canonical else "Off",
            load_modules=self.load_module_lines(), log_level=self.log_level,
            start_servers=self.start_servers, threads=self.threads,
            max_spare=self.threads * 4, max_workers=self.threads * 16,
            body=self.body,
            core_dump=("CoreDumpDirectory %s" % os.environ["RSP_CORE_DIR"])
            if os.environ.get("RSP_CORE_DIR") else "")

    def write_config(self):
        with open(self.conf_path, "w") as f:
            f.write(self.render())
        return self.conf_path

    def write_file(self, rel, content, mode=0o644):
        path = os.path.join(self.htdocs, rel.lstrip("/"))
        make_dir(os.path.dirname(path))
        with open(path, "w") as f:
            f.write(content)
        os.chmod(path, mode)
        return path

    # -- control -----------------------------------------------------------
    def _run(self, args, timeout=60):
        return subprocess.run([APACHE2, "-f", self.conf_path] + args, env=httpd_env(),
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=timeout,
                              cwd=self.root)

    def configtest(self):
        """(returncode, combined output) of ``apache2 -t -f conf``."""
        self.write_config()
        r = self._run(["-t"])
        return r.returncode, r.stdout.decode("utf-8", "replace")

    def pid(self):
        try:
            with open(self.pid_path) as f:
                return int(f.read().strip())
        except (OSError, ValueError):
            return self._started_pid

    def running(self):
        p = self.pid()
        return p is not None and pid_alive(p)

    def start(self, timeout=START_TIMEOUT):
        """Write the config, ``apache2 -k start``, wait for the PidFile and
        for the port to accept connections. HarnessError on failure (with
        the command output and the error log's new lines)."""
        if self.running():
            raise HarnessError("%s is already running (pid %s)" % (self.name, self.pid()))
        self.write_config()
        start_off = self.log_size()
        r = self._run(["-k", "start"])
        out = r.stdout.decode("utf-8", "replace")
        if r.returncode != 0:
            raise HarnessError("%s: apache2 -k start failed (%d):\n%s\n%s"
                               % (self.name, r.returncode, out, self._log_since(start_off)))

        def up():
            p = self.pid()
            if p is not None and not pid_alive(p):
                raise HarnessError("%s: httpd exited during start-up:\n%s\n%s"
                                   % (self.name, out, self._log_since(start_off)))
            return p is not None and port_open(self.port)
        try:
            wait_for(up, timeout, what="%s on port %d" % (self.name, self.port))
        except HarnessError as e:
            raise HarnessError("%s\n%s\n%s" % (e, out, self._log_since(start_off)))
        self._started_pid = self.pid()
        return self

    def stop(self, timeout=STOP_TIMEOUT):
        """A graceful stop (SIGWINCH, bounded by GracefulShutdownTimeout)
        to the PidFile's pid; wait until it is gone (bounded), then SIGKILL
        the process group as a last resort.

        Not SIGTERM: an ungraceful stop races inside mod_mpm_event with
        connections it is still closing (a child segfault in
        apr_os_sock_get during its exit, with no module's frame on any
        thread; seen here with httpd 2.4.71), and the error-log gate would
        blame whichever test stopped the instance."""
        p = self.pid()
        if p is None or not pid_alive(p):
            self._started_pid = None
            return
        os.kill(p, signal.SIGWINCH)
        try:
            wait_for(lambda: not pid_alive(p), timeout, what="%s (pid %d) to exit" % (self.name, p))
        except HarnessError:
            try:
                os.killpg(p, signal.SIGKILL)   # httpd's parent leads its process group
            except (ProcessLookupError, PermissionError):
                os.kill(p, signal.SIGKILL)
            wait_for(lambda: not pid_alive(p), 5, what="%s (pid %d) to die" % (self.name, p))
        wait_for(lambda: not port_open(self.port, timeout=0.2), 5,
                 what="%s port %d to close" % (self.name, self.port))
        self._started_pid = None

    def restart(self):
        self.stop()
        return self.start()

    # -- logs --------------------------------------------------------------
    def log_size(self):
        try:
            return os.path.getsize(self.error_log)
        except OSError:
            return 0

    def _log_since(self, offset):
        try:
            with open(self.error_log, "rb") as f:
                f.seek(offset)
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def mark_log(self):
        """Start a new reading window: new_log_lines() returns lines after this."""
        self._log_offset = self.log_size()

    def new_log_lines(self):
        return self._log_since(self._log_offset).splitlines()

    def log_lines_since_gate(self):
        return self._log_since(self.gate_offset).splitlines()


def bad_log_lines(lines, allowed=()):
    """Lines at warn level or above (and raw GLib/libxml2 warnings) that
    contain none of the ``allowed`` substrings."""
    bad = []
    for line in lines:
        if _LEVEL_RE.search(line) or _GLIB_RE.search(line) or _CRASH_RE.search(line):
            if not any(a in line for a in allowed):
                bad.append(line)
    return bad


def sp_conf_body(store_url, sp, server_extra="", location_extra="", monitor=False,
                 unsolicited=True):
    """The module's part of a replica's httpd.conf: the store, then a
    protected <Location /> with the SP settings (sp: entity_id, key_file,
    cert_file, idp_metadata list; a missing/None entry is left out) and
    two headers that expose REMOTE_USER and AUTH_TYPE to the tests.

    The store monitor is off unless ``monitor``: it polls on its own clock,
    so an alarm caused by one test (a store stopped, filled, made a
    replica) could land in the error log during the next one. It has its
    own tests, with instances of their own.

    ``unsolicited`` (default True) adds ``ReplaySPAllowUnsolicited On``:
    most tests post responses minted without a request; the tests of
    SP-initiated login and of the default pass False."""
    lines = []
    if store_url:
        lines.append("ReplaySPStore %s" % store_url)
    if not monitor:
        lines.append("ReplaySPMonitorInterval 0")
    lines.append(server_extra)
    lines.append("<Location />")
    lines.append("    AuthType ReplaySP")
    lines.append("    Require valid-user")
    if sp.get("entity_id"):
        lines.append('    ReplaySPEntityID "%s"' % sp["entity_id"])
    if sp.get("key_file"):
        lines.append('    ReplaySPKeyFile "%s"' % sp["key_file"])
    if sp.get("cert_file"):
        lines.append('    ReplaySPCertFile "%s"' % sp["cert_file"])
    for md in sp.get("idp_metadata", ()):
        lines.append('    ReplaySPIdPMetadataFile "%s"' % md)
    if unsolicited:
        lines.append("    ReplaySPAllowUnsolicited On")
    lines.append('    Header always set X-RSP-User "expr=%{REMOTE_USER}"')
    lines.append('    Header always set X-RSP-Auth-Type "expr=%{AUTH_TYPE}"')
    lines.append("    " + location_extra.replace("\n", "\n    "))
    lines.append("</Location>")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# The fleet: three replicas + a balancer
# --------------------------------------------------------------------------

class Fleet:
    """Three replicas (event MPM, mod_replay_sp) behind a fourth httpd with
    mod_proxy_balancer (lbmethod=byrequests, no stickiness).

    Each replica: ``ServerName http://127.0.0.1:<balancer port>`` and
    ``UseCanonicalName On`` so its ACS URL is the public one.

    ``sp`` is a dict with entity_id, key_file, cert_file, idp_metadata
    (list). ``store_url`` is what ReplaySPStore gets. Extra directives:
    ``server_extra`` (server scope) and ``location_extra`` (inside the
    protected <Location />). ``module`` None builds plain replicas (harness
    self-test: no module loaded, no protection).
    """

    N_REPLICAS = 3

    def __init__(self, workdir, module=None, store_url=None, sp=None,
                 server_extra="", location_extra="", n_replicas=N_REPLICAS,
                 threads=25, start_servers=2, tls=None, balancer_port=None):
        self.dir = make_dir(workdir)
        self.module = module
        self.store_url = store_url
        self.sp = sp or {}
        self.server_extra = server_extra
        self.location_extra = location_extra
        self.balancer_port = balancer_port or free_port()
        # tls: (certificate, key) for localhost: the balancer speaks https
        # (the replicas behind it http, their ServerName https)
        self.tls = tls
        self.public = ("https://localhost:%d" if tls else "http://127.0.0.1:%d") \
            % self.balancer_port
        self.modified = False     # replicas run a config other than the constructor's
        self.replicas = []
        for i in range(n_replicas):
            h = Httpd(os.path.join(self.dir, "replica%d" % (i + 1)), "replica%d" % (i + 1),
                      server_name=self.public, canonical=True,
                      threads=threads, start_servers=start_servers,
                      log_level="warn replay_sp:info" if module else "warn")
            self.replicas.append(h)
        self._configure_replicas()
        self.balancer = Httpd(os.path.join(self.dir, "balancer"), "balancer",
                              port=self.balancer_port,
                              modules=PROXY_MODULES + (["socache_shmcb", "ssl"] if tls else []),
                              server_name=self.public if tls else None,
                              threads=threads, start_servers=start_servers,
                              body=self._balancer_body())
        self._write_htdocs()

    # -- URLs ------------------------------------------------------------------
    @property
    def acs_url(self):
        """The public ACS URL: what Destination and Recipient must equal."""
        return self.public + ENDPOINT + "/acs"

    @property
    def entity_id(self):
        return self.sp.get("entity_id")

    @property
    def instances(self):
        return self.replicas + [self.balancer]

    def targets(self):
        """(name, base URL) of every replica and of the balancer."""
        return [(h.name, h.base_url) for h in self.replicas] + [("balancer", self.public)]

    # -- configuration -----------------------------------------------------
    def replica_body(self, store_url=None, server_extra=None, location_extra=None, sp=None,
                     unsolicited=None):
        if not self.module:
            return "# plain replica (no module)\n" + (server_extra or self.server_extra)
        return sp_conf_body(
            self.store_url if store_url is None else store_url,
            self.sp if sp is None else sp,
            self.server_extra if server_extra is None else server_extra,
            self.location_extra if location_extra is None else location_extra,
            unsolicited=True if unsolicited is None else unsolicited)

    def _configure_replicas(self, modules=None, **kw):
        """modules: the DSO of each replica (a rolling upgrade: some run
        another build); None: the fleet's module on every one."""
        for i, h in enumerate(self.replicas):
            m = modules[i] if modules else self.module
            h.modules = [("replay_sp_module", m)] if m else []
            h.body = ('Header always set X-RSP-Replica "%s"\n' % h.name) + self.replica_body(**kw)

    def _balancer_body(self):
        members = "\n".join(
            "    BalancerMember http://127.0.0.1:%d retry=0 disablereuse=On timeout=30"
            % h.port for h in self.replicas)
        tls = ""
        if self.tls:
            tls = ("SSLEngine on\nSSLCertificateFile %s\nSSLCertificateKeyFile %s\n"
                   "SSLSessionCache shmcb:%s(512000)\n"
                   % (self.tls[0], self.tls[1],
                      os.path.join(self.dir, "balancer", "run", "ssl_scache")))
        return tls + (
            "ProxyRequests Off\n"
            "ProxyPreserveHost On\n"
            '<Proxy "balancer://rsp">\n%s\n    ProxySet lbmethod=byrequests\n</Proxy>\n'
            'ProxyPass "/" "balancer://rsp/"\n'
            'ProxyPassReverse "/" "balancer://rsp/"\n'
            '<Location "/">\n    Require all granted\n</Location>\n' % members)

    def _write_htdocs(self):
        for h in self.replicas:
            h.write_file("index.html", "<html><body>replica %s</body></html>\n" % h.name)
            h.write_file("whoami.txt", "%s\n" % h.name)
            h.write_file("app/page.html", "<html><body>app page on %s</body></html>\n" % h.name)

    # -- control -------------------------------------------------------------
    def start(self):
        started = []
        try:
            for h in self.replicas + [self.balancer]:
                h.start()
                started.append(h)
        except Exception:
            for h in reversed(started):
                try:
                    h.stop()
                except Exception:
                    pass
            raise
        return self

    def stop(self):
        errors = []
        for h in [self.balancer] + self.replicas:
            try:
                h.stop()
            except Exception as e:   # keep stopping the others
                errors.append(e)
        if errors:
            raise errors[0]

    def restart_replicas(self, **kw):
        """Stop the replicas, rewrite their config (kw as replica_body(),
        and modules: a DSO per replica), start them again. The balancer
        keeps running."""
        for h in self.replicas:
            h.stop()
        self._configure_replicas(**kw)
        self.modified = any(v is not None for v in kw.values())
        for h in self.replicas:
            h.start()

    def reset_replicas(self):
        """Back to the configuration given to the constructor."""
        self.restart_replicas()

    def mark_logs(self):
        for h in self.instances:
            h.mark_log()

    def new_log_lines(self):
        """{instance name: [new lines since mark_logs()]}"""
        return {h.name: h.new_log_lines() for h in self.instances}

    def count_in_logs(self, needle):
        return sum(1 for lines in self.new_log_lines().values()
                   for line in lines if needle in line)


def _stop_leftovers():
    """At interpreter exit (e.g. after Ctrl-C), SIGTERM every httpd this
    process started and did not stop, by the PID it recorded."""
    for h in Httpd.all_instances:
        p = h._started_pid
        if p and pid_alive(p):
            try:
                os.kill(p, signal.SIGTERM)
            except OSError:
                pass


atexit.register(_stop_leftovers)


def rmtree_quiet(path):
    shutil.rmtree(path, ignore_errors=True)


# --------------------------------------------------------------------------
# client side: posting responses, reading cookies, SAML times
# --------------------------------------------------------------------------

def acs(base_or_url):
    """The ACS URL on a given base URL (a full .../acs URL is kept)."""
    if base_or_url.endswith("/acs"):
        return base_or_url
    return base_or_url.rstrip("/") + ENDPOINT + "/acs"


def started_fleet(path, **kw):
    """A Fleet (kw as for Fleet) in path, started, for a module fixture to
    yield and then stop (fleet.stop()); one that does not start stops what
    it started and fails the test, with its error lines."""
    import pytest
    f = Fleet(path, **kw)
    try:
        f.start()
    except HarnessError as e:
        f.stop()
        pytest.fail("the fleet in %s did not start:\n%s" % (path, e), pytrace=False)
    return f


def post_round_robin(fleet, i, b64, relay_state=None):
    """POST b64 to the ACS of replica i (modulo their number): the status."""
    return post_acs(fleet.replicas[i % len(fleet.replicas)].base_url, b64,
                    relay_state=relay_state).status_code


def attached_replicas(server):
    """The ports of the replicas a Redis master itself says are attached
    (INFO replication): the ground truth of who receives its writes."""
    c = server.client()
    try:
        info = c.info("replication")
    finally:
        c.close()
    ports = []
    for k, v in info.items():
        if k.startswith("slave") and k[5:].isdigit():
            fields = dict(x.split("=", 1) for x in v.split(",") if "=" in x)
            ports.append(int(fields["port"]))
    return sorted(ports)


def cut_off_replicas(master, replicas):
    """Stop the replicas (SIGSTOP) and close their links on the master,
    so that what follows is written on the master alone (a stopped
    process's socket would still take it). The replicas stopped must be
    all the master feeds, whatever a view of the topology says."""
    fed = attached_replicas(master)
    assert fed == sorted(r.port for r in replicas), (fed, [r.port for r in replicas])
    for r in replicas:
        os.kill(r.pid, signal.SIGSTOP)
    c = master.client()
    try:
        c.call("CLIENT", "KILL", "TYPE", "replica")
    finally:
        c.close()
    wait_for(lambda: not attached_replicas(master), 5, interval=0.05,
             what="the master without replicas")


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


def tagged_lines(fleet, last=30):
    """The tagged lines each httpd replica logged since mark_logs() (the
    last `last` of them), for a failure's message."""
    return {name: [l for l in lines if "RSP0" in l][-last:]
            for name, lines in fleet.new_log_lines().items()}


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


def saml_epoch(text):
    """xs:dateTime (UTC, 'Z', optional fraction) -> epoch seconds (float)."""
    import calendar
    m = re.match(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?Z$", text)
    if not m:
        raise ValueError("unexpected xs:dateTime %r" % text)
    t = calendar.timegm(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S"))
    return t + (float(m.group(2)) if m.group(2) else 0.0)


def window_end_of(b64):
    """min(SubjectConfirmationData NotOnOrAfter, Conditions NotOnOrAfter) of
    the (first) assertion in a base64 Response, as epoch seconds; None when
    neither is present."""
    import xml.etree.ElementTree as ET
    saml = "urn:oasis:names:tc:SAML:2.0:assertion"
    root = ET.fromstring(base64.b64decode(b64))
    a = root.find("{%s}Assertion" % saml)
    ends = []
    scd = a.find("{%s}Subject/{%s}SubjectConfirmation/{%s}SubjectConfirmationData" % (saml, saml, saml))
    if scd is not None and scd.get("NotOnOrAfter"):
        ends.append(saml_epoch(scd.get("NotOnOrAfter")))
    cond = a.find("{%s}Conditions" % saml)
    if cond is not None and cond.get("NotOnOrAfter"):
        ends.append(saml_epoch(cond.get("NotOnOrAfter")))
    return min(ends) if ends else None
