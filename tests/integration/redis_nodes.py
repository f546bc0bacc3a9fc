"""Redis processes for the integration tests, and a client to talk to them.

* ``RedisClient``: a tiny RESP2 client over TCP or a unix socket
  (python3-redis is not a dependency); ``RedisError`` is an error reply.
* ``RedisServer``: a redis-server on 127.0.0.1:<free port> plus a unix
  socket, in its own directory, no persistence, ``maxmemory``
  ``REDIS_MAXMEMORY`` with ``noeviction`` (the store the operations guide
  asks for); started as our child, stopped by PID; pause()/resume() by
  SIGSTOP/SIGCONT.
* Redis Cluster: ``ClusterNode`` (a redis-server in cluster mode, its bus
  port of its own), ``RedisCluster`` (masters with their replicas, slots
  split evenly, slot migration, settling after a failover),
  ``parse_cluster_nodes``.
* Replication: ``attached_replicas`` (who a master says it feeds),
  ``cut_off_replicas`` (replicas stopped and their links closed, so that
  what follows is written on the master alone).

The TLS variants (a PKI, redis-server with TLS, a TLS cluster) are in
test_tls.py.
"""

import os
import signal
import socket
import subprocess
import time

import common
from common import (START_TIMEOUT, STOP_TIMEOUT, HarnessError, LineClient, free_port,
                    make_dir, stop_server, tail, wait_for)

REDIS_SERVER = os.environ.get("RSP_REDIS_SERVER", "/usr/bin/redis-server")

# A store configured as the operations guide asks (a limit, noeviction):
# anything else makes the module's store monitor raise its policy alarm.
REDIS_MAXMEMORY = "256mb"


# --------------------------------------------------------------------------
# a tiny RESP2 client and a server process
# --------------------------------------------------------------------------

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
        common.sigstop(self.proc.pid)
        self.paused = True

    def resume(self):
        os.kill(self.proc.pid, signal.SIGCONT)
        self.paused = False

    def client(self, timeout=5.0, unix=False):
        if unix:
            return RedisClient(unix_path=self.unix_path, timeout=timeout)
        return RedisClient(port=self.port, timeout=timeout)


# --------------------------------------------------------------------------
# Redis Cluster: nodes and a topology
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
# replication
# --------------------------------------------------------------------------

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
        common.sigstop(r.pid)
    c = master.client()
    try:
        c.call("CLIENT", "KILL", "TYPE", "replica")
    finally:
        c.close()
    wait_for(lambda: not attached_replicas(master), 5, interval=0.05,
             what="the master without replicas")
