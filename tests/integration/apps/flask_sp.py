"""An application SP: Flask and python3-saml (Debian's
python3-onelogin-saml2), its assertion consumer a route of the app; run
under gunicorn (HTTP, behind ProxyPass) or uwsgi (behind mod_proxy_uwsgi)
by test_guard_apps.py.

Configuration: a JSON file named by RSP_APP_CONFIG (see apps.py): the SP's
entity ID and public ACS URL, the IdP (entity ID, SSO URL, certificate),
the session secret and the log file.

What it does, as python3-saml's own examples do, plus what its README
asks of an application: remember the assertion IDs it accepted (in this
process: a per-instance replay cache, the kind an application keeps) and
refuse one it has seen.

* POST /sso/acs: the response checked by python3-saml against the
  configured public URL (request data built from it, not from the
  request's Host: behind a proxy that Host is the backend's); accepted:
  the user in the session cookie (app_session), 302 to the RelayState
  (a local path) or /app/; refused: 400.
* GET /app/whoami: the session's user (200) or 401.

Its log (one JSON object a line) is the backend's own record: every
request to the ACS as received (method, path, query, the headers that
matter, the raw body) before anything is parsed, and every answer of the
ACS (status, Location, Set-Cookie, the body's SHA-256) as it leaves.
"""

import hashlib
import json
import os
import threading
import urllib.parse

from flask import Flask, Response, redirect, request, session
from onelogin.saml2.auth import OneLogin_Saml2_Auth

with open(os.environ["RSP_APP_CONFIG"]) as _f:
    CONFIG = json.load(_f)

app = Flask(__name__)
app.secret_key = CONFIG["secret"]
app.config["SESSION_COOKIE_NAME"] = "app_session"

_lock = threading.Lock()
_seen = set()   # assertion IDs this instance accepted


def log(entry):
    entry["app"] = CONFIG["name"]
    entry["pid"] = os.getpid()
    line = json.dumps(entry, sort_keys=True) + "\n"
    with _lock, open(CONFIG["log"], "a") as f:
        f.write(line)


def saml_settings():
    return {
        "strict": True,
        "debug": False,
        "sp": {
            "entityId": CONFIG["sp_entity_id"],
            "assertionConsumerService": {
                "url": CONFIG["acs_url"],
                "binding": "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST",
            },
            "NameIDFormat": "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified",
        },
        "idp": {
            "entityId": CONFIG["idp_entity_id"],
            "singleSignOnService": {
                "url": CONFIG["idp_sso_url"],
                "binding": "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect",
            },
            "x509cert": CONFIG["idp_cert"],
        },
        "security": {"wantAssertionsSigned": True, "wantAttributeStatement": False},
    }


def request_data():
    """python3-saml's view of the request, its URL the configured public
    one (what the IdP posted to), not the Host the proxy sent."""
    u = urllib.parse.urlsplit(CONFIG["acs_url"])
    return {
        "https": "on" if u.scheme == "https" else "off",
        "http_host": u.netloc,
        "script_name": u.path,
        "get_data": request.args.copy(),
        "post_data": request.form.copy(),
    }


@app.before_request
def log_received():
    if request.path == "/sso/acs":
        raw = request.get_data(cache=True, parse_form_data=False)
        log({"event": "received", "method": request.method, "path": request.path,
             "query": request.query_string.decode("latin-1"),
             "content_length": request.headers.get("Content-Length"),
             "transfer_encoding": request.headers.get("Transfer-Encoding"),
             "content_type": request.headers.get("Content-Type"),
             "body": raw.decode("latin-1")})


class AnswerLog:
    """WSGI middleware: each answer of the ACS as it leaves the app (after
    Flask has added its session cookie)."""

    def __init__(self, wsgi):
        self.wsgi = wsgi

    def __call__(self, environ, start_response):
        if environ.get("PATH_INFO") != "/sso/acs":
            return self.wsgi(environ, start_response)
        seen = {}

        def start(status, headers, exc_info=None):
            seen["status"], seen["headers"] = status, headers
            return start_response(status, headers, exc_info)
        it = self.wsgi(environ, start)
        try:
            body = b"".join(it)
        finally:
            if hasattr(it, "close"):
                it.close()
        headers = seen["headers"]
        log({"event": "answered", "status": int(seen["status"].split()[0]),
             "location": next((v for k, v in headers if k.lower() == "location"), None),
             "set_cookie": [v for k, v in headers if k.lower() == "set-cookie"],
             "body_sha256": hashlib.sha256(body).hexdigest()})
        return [body]


app.wsgi_app = AnswerLog(app.wsgi_app)


@app.route("/sso/acs", methods=["POST"])
def acs():
    auth = OneLogin_Saml2_Auth(request_data(), saml_settings())
    auth.process_response()
    errors = auth.get_errors()
    if errors or not auth.is_authenticated():
        return Response("refused: %s %s\n" % (errors, auth.get_last_error_reason()),
                        status=400, mimetype="text/plain")
    aid = auth.get_last_assertion_id()
    with _lock:
        if aid in _seen:
            return Response("refused: assertion already used\n", status=400,
                            mimetype="text/plain")
        _seen.add(aid)
    session["user"] = auth.get_nameid()
    relay = request.form.get("RelayState", "")
    return redirect(relay if relay.startswith("/") and not relay.startswith("//") else "/app/")


@app.route("/app/whoami")
def whoami():
    if "user" not in session:
        return Response("no session\n", status=401, mimetype="text/plain")
    return Response(session["user"] + "\n", mimetype="text/plain")


@app.route("/")
def index():
    return Response("flask sp\n", mimetype="text/plain")
