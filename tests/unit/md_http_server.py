#!/usr/bin/python3
"""The metadata server of test_rsp_md_source.c: http and https on loopback
ports of its own choosing (port 0), until SIGTERM.

    /usr/bin/python3 tests/unit/md_http_server.py ROOT MDDIR

Makes ROOT/tls/ca.crt (a test CA) and the server's certificate for
127.0.0.1 with openssl, then writes ROOT/ports ("HTTP HTTPS"). Each
request is a line of ROOT/requests.log (JSON: path, If-None-Match,
If-Modified-Since, User-Agent, Accept, Cookie); what a large body came to, a line
of ROOT/events.log. Paths (a query string is ignored):

    /mdq/entities/{sha1}HEX
                       an MDQ request ({ and } percent-encoded or not):
                       MDDIR/mdq/HEX.xml as /md/ serves files, 404 when
                       there is none or the identifier is another form
    /md/NAME           MDDIR/NAME; ETag (a hash of the bytes) and
                       Last-Modified, 304 when If-None-Match matches (or,
                       without it, If-Modified-Since is not older)
    /f/NAME            ROOT/www/NAME, the same way
    /stall             reads the request, answers nothing for 30 s
    /stall-body        headers and 10 of 1000 bytes, then nothing for 30 s
    /big/N             N bytes without a Content-Length
    /bigcl/N           N bytes after a Content-Length: N
    /redir/K/PATH      302 to /redir/K-1/PATH, or to /PATH when K is 1
                       (redirects keep the query string)
    /to-http/PATH      302 to http://127.0.0.1:HTTP/PATH
    /cookie/PATH       302 to /PATH with a Set-Cookie
    /status/N          status N
"""
import email.utils
import hashlib
import http.server
import json
import os
import re
import signal
import ssl
import subprocess
import sys
import threading
import time

ROOT, MDDIR = sys.argv[1], sys.argv[2]
LOCK = threading.Lock()
PORTS = {}


def log(name, line):
    with LOCK, open(os.path.join(ROOT, name), "a") as f:
        f.write(line + "\n")


def make_tls():
    d = os.path.join(ROOT, "tls")
    os.makedirs(d, exist_ok=True)

    def run(*args):
        subprocess.run(["openssl"] + list(args), check=True, cwd=d,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    run("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
        "-subj", "/CN=rsp unit test CA",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    run("req", *ec, "-keyout", "srv.key", "-out", "srv.csr", "-subj", "/CN=127.0.0.1")
    with open(os.path.join(d, "ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                "extendedKeyUsage=serverAuth\n")
    run("x509", "-req", "-in", "srv.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "srv.crt", "-days", "2", "-extfile", "ext")
    return os.path.join(d, "srv.crt"), os.path.join(d, "srv.key")


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send(self, status, body=b"", headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        if status != 304:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if status != 304:
            self.wfile.write(body)

    def serve_file(self, path):
        try:
            with open(path, "rb") as f:
                body = f.read()
            mtime = os.stat(path).st_mtime
        except OSError:
            return self.send(404, b"not found\n")
        etag = '"sha-%s"' % hashlib.sha256(body).hexdigest()[:16]
        lm = email.utils.formatdate(mtime, usegmt=True)
        inm = self.headers.get("If-None-Match")
        ims = self.headers.get("If-Modified-Since")
        fresh = False
        if inm is not None:
            fresh = etag in [t.strip() for t in inm.split(",")]
        elif ims is not None:
            try:
                fresh = int(mtime) <= email.utils.parsedate_to_datetime(ims).timestamp()
            except (TypeError, ValueError):
                fresh = False
        hdrs = [("ETag", etag), ("Last-Modified", lm), ("Content-Type", "application/samlmetadata+xml")]
        self.send(304 if fresh else 200, body, hdrs)

    def serve_mdq(self, ident):
        """An MDQ entity request: {sha1}HEX (its braces percent-encoded or
        not) is MDDIR/mdq/HEX.xml; anything else is unknown."""
        m = re.fullmatch(r"(?:%7[Bb]|\{)sha1(?:%7[Dd]|\})([0-9a-fA-F]{40})", ident)
        if not m:
            return self.send(404, b"not found\n")
        return self.serve_file(os.path.join(MDDIR, "mdq", m.group(1).lower() + ".xml"))

    def stream(self, n, with_length):
        self.send_response(200)
        self.send_header("Content-Type", "application/samlmetadata+xml")
        if with_length:
            self.send_header("Content-Length", str(n))
        self.end_headers()
        chunk, sent = b"x" * 65536, 0
        try:
            while sent < n:
                k = min(len(chunk), n - sent)
                self.wfile.write(chunk[:k])
                sent += k
            self.wfile.flush()
            log("events.log", "%s sent all %d" % (self.path, sent))
        except OSError:
            log("events.log", "%s aborted after %d" % (self.path, sent))
        self.close_connection = True

    def do_GET(self):
        path, _, query = self.path.partition("?")
        q = "?" + query if query else ""
        log("requests.log", json.dumps({
            "port": self.server.server_address[1], "path": self.path,
            "inm": self.headers.get("If-None-Match"),
            "ims": self.headers.get("If-Modified-Since"),
            "ua": self.headers.get("User-Agent"),
            "accept": self.headers.get("Accept"),
            "cookie": self.headers.get("Cookie")}))
        parts = path.split("/")
        if path.startswith("/mdq/entities/"):
            return self.serve_mdq(path[len("/mdq/entities/"):])
        if path.startswith("/md/"):
            return self.serve_file(os.path.join(MDDIR, os.path.basename(path)))
        if path.startswith("/f/"):
            return self.serve_file(os.path.join(ROOT, "www", os.path.basename(path)))
        if path == "/stall":
            time.sleep(30)
            self.close_connection = True
            return
        if path == "/stall-body":
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b"<" * 10)
            self.wfile.flush()
            time.sleep(30)
            self.close_connection = True
            return
        if len(parts) == 3 and parts[1] in ("big", "bigcl"):
            return self.stream(int(parts[2]), parts[1] == "bigcl")
        if len(parts) > 3 and parts[1] == "redir":
            k = int(parts[2])
            rest = "/".join(parts[3:])
            loc = ("/redir/%d/%s" % (k - 1, rest) if k > 1 else "/" + rest) + q
            return self.send(302, b"", [("Location", loc)])
        if len(parts) > 2 and parts[1] == "to-http":
            loc = "http://127.0.0.1:%d/%s%s" % (PORTS["http"], "/".join(parts[2:]), q)
            return self.send(302, b"", [("Location", loc)])
        if len(parts) > 2 and parts[1] == "cookie":
            return self.send(302, b"", [("Location", "/" + "/".join(parts[2:]) + q),
                                        ("Set-Cookie", "rsp_unit=1; Path=/")])
        if len(parts) == 3 and parts[1] == "status":
            return self.send(int(parts[2]), b"status\n")
        return self.send(404, b"not found\n")


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = False


def main():
    signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
    crt, key = make_tls()
    plain = Server(("127.0.0.1", 0), Handler)
    tls = Server(("127.0.0.1", 0), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(crt, key)
    tls.socket = ctx.wrap_socket(tls.socket, server_side=True)
    PORTS["http"] = plain.server_address[1]
    PORTS["https"] = tls.server_address[1]
    for s in (plain, tls):
        threading.Thread(target=s.serve_forever, daemon=True).start()
    tmp = os.path.join(ROOT, "ports.tmp")
    with open(tmp, "w") as f:
        f.write("%d %d\n" % (PORTS["http"], PORTS["https"]))
    os.rename(tmp, os.path.join(ROOT, "ports"))
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
