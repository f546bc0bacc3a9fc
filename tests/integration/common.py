"""What every part of the integration harness shares.

* paths: ``HERE`` (this directory), ``REPO`` (the repository root),
  ``IDP_DIR`` (the test IdP, tests/idp);
* ``HarnessError`` and the start/stop deadlines (``START_TIMEOUT``,
  ``STOP_TIMEOUT``);
* bounded waiting and processes: ``wait_for``, ``pid_alive``,
  ``terminate`` (a child we started: SIGTERM, a bounded wait, SIGKILL),
  ``stop_server`` (a store server we started, possibly paused);
* ports and files: ``free_port``, ``port_open``, ``tail``,
  ``make_workdir``, ``make_dir``, ``rmtree_quiet``;
* ``LineClient``: one socket and a reader of CRLF-framed replies, the
  base of the Redis and memcached clients (redis_nodes.py,
  memcached_nodes.py).

Everything here is bounded in time: every wait has a deadline. Processes
are started as our children and stopped by PID, never by name.
"""

import collections
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
IDP_DIR = os.path.join(REPO, "tests", "idp")

START_TIMEOUT = 20.0
STOP_TIMEOUT = 20.0


class HarnessError(RuntimeError):
    pass


# --------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------

_recent_ports = collections.deque(maxlen=1024)


# Under pytest-xdist each worker hands out ports from a range of its own,
# so that a port one worker picked and has not yet given to its server is
# never another worker's pick. The ranges are below the kernel's ephemeral
# ports (where bind(0) and outgoing connections take theirs), and so are
# Redis Cluster's bus ports (each node's port + 10000).
_WORKER_PORTS = 2500
_WORKER_BASE = 2000
_MAX_WORKERS = 4
_cursor = [0]


def _worker_index():
    """This process's xdist worker number (gw0 -> 0), or None."""
    w = os.environ.get("PYTEST_XDIST_WORKER", "")
    if not w.startswith("gw") or not w[2:].isdigit():
        return None
    i = int(w[2:])
    if i >= _MAX_WORKERS:
        raise HarnessError("at most %d pytest-xdist workers (each has its own "
                           "port range)" % _MAX_WORKERS)
    return i


def _bindable(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def free_port():
    """A TCP port on 127.0.0.1 that was free a moment ago, and not one this
    process was given lately: once its socket is closed, bind(0) can offer
    the same port again, and ports are often taken several at a time
    before the servers that bind them start (a cluster node's bus port once
    came back as another node's port). Under pytest-xdist, from this
    worker's own range."""
    worker = _worker_index()
    if worker is not None:
        lo = _WORKER_BASE + _WORKER_PORTS * worker
        for k in range(_WORKER_PORTS):
            port = lo + (_cursor[0] + k) % _WORKER_PORTS
            if port not in _recent_ports and _bindable(port):
                _cursor[0] = (port - lo + 1) % _WORKER_PORTS
                _recent_ports.append(port)
                return port
        raise HarnessError("no free port in %d-%d" % (lo, lo + _WORKER_PORTS - 1))
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


def sigstop(pid, timeout=5.0):
    """SIGSTOP pid and wait (bounded) until the kernel shows it stopped: a
    signal is delivered when the process is next scheduled, and on a busy
    machine it could answer one more request after kill() returned."""
    os.kill(pid, signal.SIGSTOP)

    def stopped():
        try:
            with open("/proc/%d/stat" % pid) as f:
                return f.read().rsplit(")", 1)[1].split()[0] in ("T", "t")
        except OSError:
            return True          # gone: nothing left to answer
    wait_for(stopped, timeout, interval=0.01, what="pid %d stopped" % pid)


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


def rmtree_quiet(path):
    shutil.rmtree(path, ignore_errors=True)


# --------------------------------------------------------------------------
# a line-framed socket client (Redis and memcached share it)
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
