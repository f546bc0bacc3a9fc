"""memcached processes for the integration tests, and a client to talk to them.

* ``MemcacheClient``: a tiny text/meta-protocol client (get, mg with
  flags, set/add, delete, flush_all, stats, ``lru_crawler metadump
  hash|all``); python3-pymemcache is not a dependency; ``MemcacheError``
  is an error reply.
* ``MemcacheWatch``: memcached's ``watch`` log stream, collected by a
  thread.
* ``MemcachedServer``: a memcached (``MEMCACHED_DEFAULT_OPTIONS``: ``-U 0
  -m 64 -M -o no_slab_reassign``) in its own directory, on its own port;
  started as our child, stopped by PID; pause()/resume() by
  SIGSTOP/SIGCONT.
* ``MEMCACHED_EXPIRY_MARGIN_S``: the second the module adds to every
  expiry it sends to memcached.

Which server of several holds a key (the module's rule) is in stores.py.
"""

import os
import signal
import socket
import subprocess
import threading
import time
import urllib.parse

import common
from common import (START_TIMEOUT, STOP_TIMEOUT, HarnessError, LineClient, free_port,
                    make_dir, stop_server, wait_for)

MEMCACHED = os.environ.get("RSP_MEMCACHED", "/usr/bin/memcached")


# --------------------------------------------------------------------------
# a tiny text/meta-protocol client
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


# --------------------------------------------------------------------------
# a server process
# --------------------------------------------------------------------------

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
        common.sigstop(self.proc.pid)
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
