"""Application SPs behind mod_proxy, for the guard's tests
(test_guard_apps.py; the posting helpers also serve
test_guard_simplesamlphp.py).

* ``AppKind``: one application SP and how it is run and proxied: ``FLASK``
  (apps/flask_sp.py, python3-saml, under gunicorn, ``ProxyPass http://``),
  ``FLASK_UWSGI`` (the same app under uwsgi, ``ProxyPass uwsgi://``:
  mod_proxy_uwsgi) and ``FLASK_FCGI`` (under uwsgi's FastCGI socket,
  ``ProxyPass fcgi://``: mod_proxy_fcgi), the cases where the application
  does not speak HTTP,
  ``RUBY`` (apps/ruby_sp.ru, ruby-saml, under puma, ``ProxyPass
  http://``).
* ``AppInstance``: one process of it on a port of its own, started and
  stopped by its PID, with its own log (one JSON object a line: each
  request to the ACS as received, each answer as it left) and a JSON
  configuration file (``RSP_APP_CONFIG``).
* ``AppFleet``: three replicas behind the balancer, replica i proxying
  to instance i (its ACS at ``ACS_PATH`` and its pages under ``/app/``);
  with ``guard``, ``ReplaySPGuard On`` over the ACS's ``<Location>``.
* Posting: ``post_form`` (redirects not followed), ``raw_request`` (bytes
  on a socket: no client normalises anything), ``AppLogs`` (entries of
  the instances' logs since a mark).
"""

import base64
import json
import os
import signal
import socket
import subprocess
import time
import urllib.parse

import requests

import common
from common import HarnessError, free_port, make_dir, port_open, wait_for
from httpd_fleet import Fleet

HERE = os.path.dirname(os.path.abspath(__file__))
APPS_DIR = os.path.join(HERE, "apps")
ACS_PATH = "/sso/acs"
# The module's own endpoint path (ReplaySPEndpointPath's default) + /acs:
# an application's ACS there is guarded too, for the test of that case.
OWN_ENDPOINT_ACS = "/saml/acs"
SESSION_COOKIE = "app_session"
SECRET = "a6f1c0d3e9b24f7a8c5d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b"


class AppKind:
    """One application SP: name (the test parameter), label, entity ID,
    what runs it (``command``), how a replica reaches it (``proxy_url``,
    ``proxy_modules``) and whether it answers HTTP (``http``)."""

    def __init__(self, name, label, entity_id, runner, scheme, proxy_modules, needs):
        self.name, self.label, self.entity_id = name, label, entity_id
        self.runner, self.scheme, self.proxy_modules = runner, scheme, proxy_modules
        self.needs = needs        # files that must exist (else the tests skip)

    @property
    def http(self):
        return self.scheme == "http"

    def available(self):
        return all(os.path.exists(p) for p in self.needs)

    def command(self, port):
        if self.runner == "gunicorn":
            return ["/usr/bin/gunicorn", "--bind", "127.0.0.1:%d" % port, "--workers", "1",
                    "--threads", "8", "--chdir", APPS_DIR, "--log-level", "warning",
                    "--graceful-timeout", "2", "flask_sp:app"]
        if self.runner == "uwsgi":
            return ["/usr/bin/uwsgi-core", "--plugin", "python3",
                    "--uwsgi-socket", "127.0.0.1:%d" % port, "--chdir", APPS_DIR,
                    "--module", "flask_sp:app", "--threads", "8", "--need-app",
                    "--disable-logging", "--die-on-term", "--hook-master-start",
                    "unix_signal:15 gracefully_kill_them_all"]
        if self.runner == "uwsgi-fastcgi":
            return ["/usr/bin/uwsgi-core", "--plugin", "python3",
                    "--fastcgi-socket", "127.0.0.1:%d" % port, "--chdir", APPS_DIR,
                    "--module", "flask_sp:app", "--threads", "8", "--need-app",
                    "--disable-logging", "--die-on-term", "--hook-master-start",
                    "unix_signal:15 gracefully_kill_them_all"]
        if self.runner == "puma":
            return ["/usr/bin/puma", "--bind", "tcp://127.0.0.1:%d" % port, "--threads", "1:8",
                    "--environment", "production", "--quiet",
                    os.path.join(APPS_DIR, "ruby_sp.ru")]
        raise ValueError(self.runner)

    def proxy_url(self, port):
        return "%s://127.0.0.1:%d" % (self.scheme, port)

    def __repr__(self):
        return self.name


FLASK = AppKind("flask", "Flask + python3-saml under gunicorn",
                "https://sp.flask.test.example/saml/metadata", "gunicorn", "http",
                ["proxy", "proxy_http"],
                ["/usr/bin/gunicorn", "/usr/lib/python3/dist-packages/onelogin/saml2",
                 "/usr/lib/python3/dist-packages/flask"])
FLASK_UWSGI = AppKind("flask-uwsgi", "Flask + python3-saml under uwsgi",
                      "https://sp.flask-uwsgi.test.example/saml/metadata", "uwsgi", "uwsgi",
                      ["proxy", "proxy_uwsgi"],
                      ["/usr/bin/uwsgi-core", "/usr/lib/uwsgi/plugins/python3_plugin.so",
                       "/usr/lib/python3/dist-packages/onelogin/saml2",
                       "/usr/lib/python3/dist-packages/flask"])
FLASK_FCGI = AppKind("flask-fcgi", "Flask + python3-saml under uwsgi, FastCGI",
                     "https://sp.flask-fcgi.test.example/saml/metadata", "uwsgi-fastcgi", "fcgi",
                     ["proxy", "proxy_fcgi", "setenvif"],
                     ["/usr/bin/uwsgi-core", "/usr/lib/uwsgi/plugins/python3_plugin.so",
                      "/usr/lib/python3/dist-packages/onelogin/saml2",
                      "/usr/lib/python3/dist-packages/flask"])
RUBY = AppKind("ruby", "Rack + ruby-saml under puma",
               "https://sp.ruby.test.example/saml/metadata", "puma", "http",
               ["proxy", "proxy_http"], ["/usr/bin/puma", "/usr/bin/ruby"])
KINDS = {k.name: k for k in (FLASK, FLASK_UWSGI, FLASK_FCGI, RUBY)}


def idp_cert_b64(idp):
    """The IdP's certificate, base64 DER on one line (what the SP libraries take)."""
    with open(idp.cert_path) as f:
        pem = f.read()
    return "".join(l for l in pem.splitlines() if l and not l.startswith("-----"))


class AppInstance:
    """One process of an application SP on a port of its own."""

    def __init__(self, kind, directory, name, public, idp):
        self.kind, self.name = kind, name
        self.dir = make_dir(directory)
        self.port = free_port()
        self.log_path = os.path.join(self.dir, "app.log")
        self.config_path = os.path.join(self.dir, "app.json")
        self.out_path = os.path.join(self.dir, "stdout.log")
        self.proc = None
        self.mark = 0
        with open(self.config_path, "w") as f:
            json.dump({"name": name, "log": self.log_path, "secret": SECRET,
                       "sp_entity_id": kind.entity_id, "acs_url": public + ACS_PATH,
                       "idp_entity_id": idp.entity_id, "idp_sso_url": idp.sso_url,
                       "idp_cert": idp_cert_b64(idp)}, f)
        open(self.log_path, "a").close()

    def start(self, timeout=30):
        env = dict(os.environ, RSP_APP_CONFIG=self.config_path, PYTHONDONTWRITEBYTECODE="1")
        with open(self.out_path, "ab") as out:
            self.proc = subprocess.Popen(self.kind.command(self.port), env=env, cwd=self.dir,
                                         stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)

        def up():
            if self.proc.poll() is not None:
                raise HarnessError("%s (%s) exited at start-up (%s):\n%s"
                                   % (self.name, self.kind, self.proc.returncode,
                                      common.tail(self.out_path, 30)))
            if not port_open(self.port):
                return False
            if not self.kind.http:
                return True
            try:
                return requests.get("http://127.0.0.1:%d/" % self.port, timeout=2).ok
            except requests.RequestException:
                return False
        wait_for(up, timeout, interval=0.1, what="%s (%s) on port %d"
                 % (self.name, self.kind, self.port))
        return self

    def stop(self, timeout=15):
        """SIGTERM to its PID (it leads a session of its own: the workers
        too), SIGKILL to the group after timeout."""
        p, self.proc = self.proc, None
        if p is None or p.poll() is not None:
            return
        os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=5)
        wait_for(lambda: not port_open(self.port, timeout=0.2), 5,
                 what="%s port %d to close" % (self.name, self.port))

    def set_mark(self):
        self.mark = os.path.getsize(self.log_path)

    def entries(self):
        return read_log(self.log_path, self.mark)


def read_log(path, offset):
    """The JSON entries of a backend's log after offset (a PHP backend logs
    the body as body_b64: decoded into body, as the others give it)."""
    with open(path, "rb") as f:
        f.seek(offset)
        text = f.read().decode("utf-8")
    out = [json.loads(l) for l in text.splitlines() if l.strip()]
    for e in out:
        if "body_b64" in e:
            e["body"] = base64.b64decode(e.pop("body_b64")).decode("latin-1")
    return out


class AppLogs:
    """The log entries of several instances since their marks."""

    def __init__(self, instances):
        self.instances = instances

    def mark(self):
        for i in self.instances:
            i.set_mark()

    def entries(self, event=None):
        out = [e for i in self.instances for e in i.entries()]
        return [e for e in out if event is None or e["event"] == event]

    def received(self):
        return self.entries("received")

    def answered(self):
        return self.entries("answered")


def start_instances(kind, directory, public, idp, n=3):
    insts = [AppInstance(kind, os.path.join(directory, "app%d" % (i + 1)), "app%d" % (i + 1),
                         public, idp) for i in range(n)]
    started = []
    try:
        for i in insts:
            started.append(i.start())
    except Exception:
        for i in started:
            i.stop()
        raise
    return insts


class AppFleet(Fleet):
    """Three replicas behind the balancer, replica i proxying the
    application's ACS (and /app/) to instance i; with ``guard``, the
    module guards the ACS on each. ``public`` must be the balancer's URL
    the instances were configured with (``balancer_port``)."""

    def __init__(self, workdir, module, store, idp, kind, instances, guard, balancer_port):
        self.idp, self.kind, self.instances_ = idp, kind, instances
        self.guard = guard
        super().__init__(workdir, module=module, store_url=store.url,
                         sp={"entity_id": kind.entity_id}, server_extra=store.server_extra,
                         balancer_port=balancer_port)

    def app_body(self, inst):
        target = self.kind.proxy_url(inst.port)
        lines = [
            "ProxyRequests Off",
            'ProxyPass "/app/" "%s/app/" disablereuse=On timeout=30' % target,
        ]
        if self.kind.scheme == "fcgi":
            # mod_proxy_fcgi sends no PATH_INFO unless told (the WSGI app
            # routes on it): the path after the ProxyPass URL's host
            lines.append("SetEnvIf Request_URI . proxy-fcgi-pathinfo=unescape")
        for path in (ACS_PATH, OWN_ENDPOINT_ACS):
            lines.append("<Location %s>" % path)
            if self.guard:
                lines += [
                    "    ReplaySPGuard On",
                    '    ReplaySPEntityID "%s"' % self.kind.entity_id,
                    '    ReplaySPIdPMetadataFile "%s"' % self.idp.metadata_path,
                ]
            lines += ['    ProxyPass "%s%s" disablereuse=On timeout=30' % (target, ACS_PATH),
                      "</Location>"]
        store = ["ReplaySPStore %s" % self.store_url, "ReplaySPMonitorInterval 0",
                 self.server_extra] if self.guard else []
        return "\n".join(store + lines) + "\n"

    def _configure_replicas(self, **kw):
        for h, inst in zip(self.replicas, self.instances_):
            h.modules = [("replay_sp_module", self.module)] \
                + self.kind.proxy_modules
            h.body = 'Header always set X-RSP-Replica "%s"\n' % h.name + self.app_body(inst)

    @property
    def post_url(self):
        return self.public + ACS_PATH


# --------------------------------------------------------------------------
# posting
# --------------------------------------------------------------------------

def post_form(url, fields, timeout=30, cookies=None):
    """POST an urlencoded form (a dict or (name, value) pairs), redirects
    not followed."""
    return requests.post(url, data=fields, allow_redirects=False, timeout=timeout,
                         cookies=cookies)


def raw_request(base_url, method, target, headers, body=b"", timeout=30):
    """One request sent byte for byte (target, headers and body as given;
    no Content-Length added): (status, [(header, value)], body bytes)."""
    u = urllib.parse.urlsplit(base_url)
    head = "%s %s HTTP/1.1\r\nHost: %s\r\n" % (method, target, u.netloc)
    head += "".join("%s: %s\r\n" % kv for kv in headers) + "Connection: close\r\n\r\n"
    data = b""
    deadline = time.time() + timeout
    with socket.create_connection((u.hostname, u.port), timeout=timeout) as sock:
        sock.sendall(head.encode("latin-1") + body)
        while len(data) < (4 << 20) and time.time() < deadline:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    raw_head, _, rest = data.partition(b"\r\n\r\n")
    lines = raw_head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    hdrs = [tuple(x.strip() for x in l.split(":", 1)) for l in lines[1:] if ":" in l]
    return status, hdrs, rest


def chunked(body, size=100):
    """body in HTTP/1.1 chunks of ``size`` bytes."""
    out = b""
    for i in range(0, len(body), size):
        part = body[i:i + size]
        out += b"%x\r\n" % len(part) + part + b"\r\n"
    return out + b"0\r\n\r\n"


def multipart(fields, boundary="rspboundary7d3f"):
    """(content type, body) of a multipart/form-data form."""
    out = b""
    for k, v in fields:
        out += ("--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n"
                % (boundary, k, v)).encode()
    return "multipart/form-data; boundary=%s" % boundary, out + ("--%s--\r\n" % boundary).encode()


def ambiguous_requests(acs_path, fresh, relay):
    """The inputs that the guard and a form parser could read differently,
    each carrying the fresh response: {case: (method, target, headers, body)}."""
    q = lambda v: urllib.parse.quote(v, safe="")
    form = ("SAMLResponse=%s&RelayState=%s" % (q(fresh), q(relay))).encode()
    ctype = ("Content-Type", "application/x-www-form-urlencoded")

    def clen(b):
        return ("Content-Length", str(len(b)))
    mp_type, mp_body = multipart([("SAMLResponse", fresh), ("RelayState", relay)])
    twice = form + b"&SAMLResponse=" + q(fresh).encode()
    relay_twice = form + b"&RelayState=%2Felsewhere"
    text = form.replace(b"&", b"\n")
    js = json.dumps({"SAMLResponse": fresh, "RelayState": relay}).encode()
    return {
        "query-and-body": ("POST", acs_path + "?SAMLResponse=" + q(fresh),
                           [ctype, clen(form)], form),
        "query-get": ("GET", acs_path + "?SAMLResponse=" + q(fresh), [], b""),
        "response-twice": ("POST", acs_path, [ctype, clen(twice)], twice),
        "relay-state-twice": ("POST", acs_path, [ctype, clen(relay_twice)], relay_twice),
        "multipart": ("POST", acs_path, [("Content-Type", mp_type), clen(mp_body)], mp_body),
        "text-plain": ("POST", acs_path, [("Content-Type", "text/plain"), clen(text)], text),
        "json": ("POST", acs_path, [("Content-Type", "application/json"), clen(js)], js),
        "chunked": ("POST", acs_path, [ctype, ("Transfer-Encoding", "chunked")],
                    chunked(form)),
    }


def stop_quietly(things):
    for t in things:
        try:
            t.stop()
        except Exception:   # keep stopping the others
            pass
