"""The fleet's store as the tests see it, whatever the backend.

* The module's store keys: ``KEY_PREFIX``, ``claim_key`` (a claim),
  ``session_key`` (a session), ``logout_index_key`` (the logout index),
  ``b64url_nopad``.
* ``Store``: one interface over the fleet's store (exists, TTL, get/set,
  claim and session keys, delete, flush, heal, stop/start/pause/resume of
  every server), so the fleet tests run unchanged on every backend:
  ``RedisStore`` (one redis-server), ``MemcachedStore`` (one or more
  memcached; which server holds a key, by the module's rule,
  ``memcache_server_index``, and by asking every server), ``ClusterStore``
  (a Redis Cluster).
* ``RoundTripCounter``: a TCP relay in front of a store that counts round
  trips.

The servers themselves are in redis_nodes.py and memcached_nodes.py.
"""

import base64
import hashlib
import socket
import threading
import time

from memcached_nodes import MEMCACHED_DEFAULT_OPTIONS, MEMCACHED_EXPIRY_MARGIN_S, _mc_key
from redis_nodes import REDIS_MAXMEMORY

KEY_PREFIX = "rsp:"


# --------------------------------------------------------------------------
# the module's store keys
# --------------------------------------------------------------------------

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


# --------------------------------------------------------------------------
# the Store interface: one for every backend, so the fleet suite
# runs unchanged on Redis, memcached and a Redis Cluster
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
# counting round trips to a store
# --------------------------------------------------------------------------

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
