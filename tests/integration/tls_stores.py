"""TLS material for the stores, for the tests of TLS to the store
(test_tls.py) and those that need a TLS store or certificate
(test_leaks.py, test_chromium.py, tests/bench):

* ``Pki``: a throwaway CA made with openssl (and an unrelated one), and
  the certificates it signed: the store's own (localhost and 127.0.0.1),
  a valid one for another name, clients' (one from the unrelated CA), a
  file that is not a certificate;
* ``TlsRedis``: redis-server with its plaintext port (the tests' client)
  and a TLS port (the module's); ``TlsClusterNode`` and ``tls_cluster``: a
  Redis Cluster whose bus and replication speak TLS too;
* ``TlsMemcached``: memcached with a plaintext and a TLS listener;
* ``StallingServer``: accepts TCP connections and never answers (a TLS
  store stuck before its ServerHello).
"""

import os
import socket
import subprocess
import threading

import common
import memcached_nodes
import redis_nodes
from common import HarnessError, free_port
from memcached_nodes import MemcachedServer
from redis_nodes import RedisServer


# --------------------------------------------------------------------------
# a throwaway PKI
# --------------------------------------------------------------------------

def _openssl(*args):
    subprocess.run(["openssl"] + list(args), check=True, capture_output=True, timeout=60)


class Pki:
    """A CA and certificates it signed (plus an unrelated CA), in d."""

    def __init__(self, d):
        self.d = common.make_dir(d)
        self.ca = self._ca("ca", "rsp test store CA")
        self.rogue_ca = self._ca("rogue-ca", "rsp unrelated CA")
        # the store's own names: a DNS name and an IP address
        self.server = self._leaf("server", "localhost", "DNS:localhost,IP:127.0.0.1")
        # valid (our CA) but for another name
        self.other = self._leaf("other", "other.example", "DNS:other.example")
        self.client = self._leaf("client", "rsp replica", "DNS:replica.example")
        self.client_rogue = self._leaf("client-rogue", "rsp rogue replica",
                                       "DNS:replica.example", ca="rogue-ca")
        self.garbage = self.path("garbage.pem")
        with open(self.garbage, "w") as f:
            f.write("-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n")

    def path(self, name):
        return os.path.join(self.d, name)

    def _ca(self, name, cn):
        key, crt = self.path(name + ".key"), self.path(name + ".pem")
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                 "-out", crt, "-days", "2", "-subj", "/CN=" + cn,
                 "-addext", "basicConstraints=critical,CA:TRUE",
                 "-addext", "keyUsage=critical,keyCertSign,cRLSign")
        return crt

    def _leaf(self, name, cn, san, ca="ca"):
        key, csr, crt = (self.path(name + x) for x in (".key", ".csr", ".pem"))
        ext = self.path(name + ".ext")
        with open(ext, "w") as f:
            f.write("subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n"
                    "basicConstraints=CA:FALSE\n" % san)
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr,
                 "-subj", "/CN=" + cn)
        _openssl("x509", "-req", "-in", csr, "-CA", self.path(ca + ".pem"),
                 "-CAkey", self.path(ca + ".key"), "-CAcreateserial", "-out", crt,
                 "-days", "2", "-extfile", ext)
        os.chmod(key, 0o644)   # memcached reads it as www-data; test keys only
        return crt, key


class TlsRedis(RedisServer):
    """redis-server with its plaintext port (the tests' client) and a TLS
    port (the module's)."""

    def __init__(self, workdir, cert, ca, auth_clients="no"):
        super().__init__(workdir)
        self.tls_port = free_port()
        self.cert, self.ca, self.auth_clients = cert, ca, auth_clients

    def argv(self):
        crt, key = self.cert
        return super().argv() + [
            "--tls-port", str(self.tls_port), "--tls-cert-file", crt, "--tls-key-file", key,
            "--tls-ca-cert-file", self.ca, "--tls-auth-clients", self.auth_clients]

    def tls_url(self, host="localhost"):
        return "rediss://%s:%d/0" % (host, self.tls_port)

    def tls_clients(self):
        """Client connections on the TLS port, from CLIENT LIST."""
        c = self.client()
        try:
            text = c.call("CLIENT", "LIST").decode()
        finally:
            c.close()
        return [l for l in text.splitlines() if "laddr=127.0.0.1:%d " % self.tls_port in l]


class TlsClusterNode(redis_nodes.ClusterNode):
    """A cluster node: its plaintext port for the tests' client, a TLS port
    for the module, and the cluster bus and replication over TLS (so that
    CLUSTER SHARDS and MOVED give the TLS ports)."""

    def __init__(self, workdir, cert, ca):
        super().__init__(workdir)
        self.tls_port = free_port()
        self.cert, self.ca = cert, ca

    def argv(self):
        crt, key = self.cert
        return super().argv() + [
            "--tls-port", str(self.tls_port), "--tls-cert-file", crt, "--tls-key-file", key,
            "--tls-ca-cert-file", self.ca, "--tls-auth-clients", "optional",
            "--tls-cluster", "yes", "--tls-replication", "yes"]


def tls_cluster(workdir, pki, replicas=0):
    """A three-master cluster over TLS (started)."""
    c = redis_nodes.RedisCluster(workdir, name="tlscl", replicas=replicas,
                                 make_node=lambda d: TlsClusterNode(d, pki.server, pki.ca))
    try:
        c.start()
    except HarnessError:
        c.stop()
        raise
    c.tls_url = "rediss+cluster://" + ",".join(
        "127.0.0.1:%d" % n.tls_port for n in c.nodes[:c.n_masters])
    return c


class TlsMemcached(MemcachedServer):
    """memcached with a plaintext listener (the tests' client) and a TLS
    one (the module's)."""

    def __init__(self, workdir, cert):
        super().__init__(workdir)
        self.tls_port = free_port()
        self.cert = cert

    def argv(self):
        crt, key = self.cert
        user = ["-u", "www-data"] if os.geteuid() == 0 else []
        return [memcached_nodes.MEMCACHED, "-l", "notls:127.0.0.1:%d,127.0.0.1:%d"
                % (self.port, self.tls_port), "-Z", "-o",
                "ssl_chain_cert=%s,ssl_key=%s" % (crt, key)] + user + list(self.options)

    def tls_url(self, host="localhost"):
        return "memcaches://%s:%d" % (host, self.tls_port)


class StallingServer:
    """Accepts TCP connections and never says anything (a TLS store stuck
    before its ServerHello). Bounded: closes what it accepted on close()."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.held = []
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self):
        while not self._stop.is_set():
            try:
                c, _ = self.sock.accept()
                self.held.append(c)
            except socket.timeout:
                continue
            except OSError:
                return

    def close(self):
        self._stop.set()
        self._t.join(5)
        for c in self.held:
            c.close()
        self.sock.close()
