#!/usr/bin/python3
"""An application SP's assertion consumer behind mod_proxy, whose answers
the test chooses: the backend of test_guard_proxy.py.

    /usr/bin/python3 flaky_sp.py PORT

POST /acs: every body received is kept (GET /ctl/received: a JSON list of
them, as received); the answer is the next one queued (POST /ctl/queue
with the form ``answer=KIND&count=N``), else ``ok``:

  ok            302 to /app/ with a new session cookie (app_session)
  error         500, no cookie (the application failed)
  error-cookie  500 with a session cookie (it made a session, then failed)
  refuse        400, no cookie (the SP refused the response itself)
  drop          the connection closed without an answer (mod_proxy: 502)
  slow          ok, after 2 seconds

Serves until killed (by its PID)."""

import http.server
import json
import secrets
import socketserver
import sys
import threading
import time
import urllib.parse

KINDS = ("ok", "error", "error-cookie", "refuse", "drop", "slow")


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.queue = []
        self.received = []


STATE = State()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def _body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(min(n, 1 << 20)) if n else b""

    def _send(self, status, body=b"", headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/ctl/received":
            with STATE.lock:
                out = json.dumps([b.decode("latin-1") for b in STATE.received])
            self._send(200, out.encode(), [("Content-Type", "application/json")])
        else:
            self._send(200, b"app page\n", [("Content-Type", "text/plain")])

    def do_POST(self):
        body = self._body()
        if self.path == "/ctl/queue":
            form = urllib.parse.parse_qs(body.decode())
            kind, count = form["answer"][0], int(form.get("count", ["1"])[0])
            if kind not in KINDS or not 0 < count <= 100:
                self._send(400, b"bad answer\n")
                return
            with STATE.lock:
                STATE.queue.extend([kind] * count)
            self._send(204)
            return
        if self.path == "/ctl/reset":
            with STATE.lock:
                STATE.queue, STATE.received = [], []
            self._send(204)
            return
        with STATE.lock:
            STATE.received.append(body)
            kind = STATE.queue.pop(0) if STATE.queue else "ok"
        cookie = ("Set-Cookie", "app_session=%s; Path=/; HttpOnly" % secrets.token_hex(16))
        if kind == "drop":
            self.close_connection = True
            self.connection.shutdown(2)
            return
        if kind == "slow":
            time.sleep(2)
        if kind in ("ok", "slow"):
            self._send(302, b"", [("Location", "/app/"), cookie])
        elif kind == "error":
            self._send(500, b"application error\n")
        elif kind == "error-cookie":
            self._send(500, b"application error\n", [cookie])
        else:
            self._send(400, b"refused\n")


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


if __name__ == "__main__":
    Server(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
