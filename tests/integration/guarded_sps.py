"""The SPs the guard's tests (test_guard.py) put the guard in front of:
their fleets, and what their answers look like.

* ``mellon``: Debian's mod_auth_mellon, unchanged, on three replicas (its
  own per-host session cache), with the module's own SP beside it at /own
  (its ACS at /own/saml/acs): ``MellonFleet``, ``mellon_body``.
* ``shibboleth``: Shibboleth SP 3 (Debian's libapache2-mod-shib): each
  replica runs mod_shib with a shibd of its own (shib.py: its own
  in-memory replay cache and sessions): ``ShibFleet``, ``shib_body``.

Each fleet is three replicas behind the balancer, on the store backend it
is given; with ``guard``, each replica runs `ReplaySPGuard On` over the
SP's assertion consumer (``post_path``), without it the fleet is the
negative control.

``MELLON`` and ``SHIBBOLETH`` (in ``SPS``, by name) describe each SP for
the tests: its entity ID and assertion consumer, whether it is installed,
its session cookies, what an accepted response looks like (a redirect
with its session cookie), and whether a request reached it: mellon's
debug trace names the handlers it enters; mod_shib logs "shib_handler
entered" when its handler reads a body, and each shibd's transaction log
has a Login line for every SSO message it processed, accepted or refused.
"""

import concurrent.futures
import os

import shib
from httpd_fleet import APACHE_MODULES, Fleet

MELLON_SO = os.path.join(APACHE_MODULES, "mod_auth_mellon.so")
MELLON_SP = "https://sp.mellon.test.example/mellon/metadata"
OWN_SP = "https://sp.rsp.test.example/own/metadata"
MELLON_POST_RESPONSE = "/mellon/postResponse"
MELLON_COOKIE = "mellon-cookie"

SHIB_SP = "https://sp.shib.test.example/shibboleth"
SHIB_POST_RESPONSE = shib.POST_PATH


# --------------------------------------------------------------------------
# mod_auth_mellon
# --------------------------------------------------------------------------

def mellon_body(store_url, sp_keys, idp, guard, server_extra=""):
    key, cert = sp_keys
    lines = [
        "ReplaySPStore %s" % store_url,
        "ReplaySPMonitorInterval 0",
        server_extra,
        "<Location />",
        "    MellonEndpointPath /mellon",
        '    MellonSPentityId "%s"' % MELLON_SP,
        '    MellonSPPrivateKeyFile "%s"' % key,
        '    MellonSPCertFile "%s"' % cert,
        '    MellonIdPMetadataFile "%s"' % idp.metadata_path,
        "</Location>",
        "<Location /app>",
        "    AuthType Mellon",
        "    MellonEnable auth",
        "    Require valid-user",
        '    Header always set X-Mellon-User "expr=%{REMOTE_USER}"',
        "</Location>",
        "<Location /own>",
        "    AuthType ReplaySP",
        "    Require valid-user",
        '    ReplaySPEntityID "%s"' % OWN_SP,
        '    ReplaySPKeyFile "%s"' % key,
        '    ReplaySPCertFile "%s"' % cert,
        '    ReplaySPIdPMetadataFile "%s"' % idp.metadata_path,
        "    ReplaySPEndpointPath /own/saml",
        "    ReplaySPAllowUnsolicited On",
        '    Header always set X-RSP-User "expr=%{REMOTE_USER}"',
        "</Location>",
    ]
    if guard:
        lines += [
            "<Location %s>" % MELLON_POST_RESPONSE,
            "    ReplaySPGuard On",
            '    ReplaySPEntityID "%s"' % MELLON_SP,
            '    ReplaySPIdPMetadataFile "%s"' % idp.metadata_path,
            "    # the key mellon decrypts with (its SP key): no certificate",
            '    ReplaySPEncryptionKeyFile "%s"' % key,
            "</Location>",
        ]
    return "\n".join(lines) + "\n"


class MellonFleet(Fleet):
    """Three replicas, each with mod_auth_mellon (and the module's own SP at
    /own), behind the balancer; with ``guard``, the module guards mellon's
    postResponse on each."""

    def __init__(self, workdir, module, store, sp_keys, idp, guard):
        self.idp = idp
        self.sp_keys = sp_keys
        self.guard = guard
        self.store_obj = store
        super().__init__(workdir, module=module, store_url=store.url,
                         sp={"entity_id": MELLON_SP}, server_extra=store.server_extra)
        for h in self.replicas:
            # mellon's debug trace names the handlers it enters: the
            # evidence that a refused request never reached it
            h.log_level = "warn replay_sp:info auth_mellon:debug"

    def replica_body(self, store_url=None, server_extra=None, location_extra=None,
                     sp=None, unsolicited=None):
        return mellon_body(self.store_url, self.sp_keys, self.idp, self.guard,
                           self.server_extra if server_extra is None else server_extra)

    def _configure_replicas(self, **kw):
        super()._configure_replicas(**kw)
        for h in self.replicas:
            h.modules = [("auth_mellon_module", MELLON_SO)] + h.modules

    def _write_htdocs(self):
        super()._write_htdocs()
        for h in self.replicas:
            h.write_file("own/page.html", "<html><body>own page on %s</body></html>\n" % h.name)

    @property
    def post_url(self):
        return self.public + MELLON_POST_RESPONSE


# --------------------------------------------------------------------------
# Shibboleth SP
# --------------------------------------------------------------------------

def shib_body(store_url, sp, sp_keys, idp, guard, server_extra=""):
    key, cert = sp_keys
    lines = [
        "ReplaySPStore %s" % store_url,
        "ReplaySPMonitorInterval 0",
        server_extra,
        sp.httpd_lines(),
        "ShibCompatValidUser Off",
        "<Location %s>" % shib.HANDLER,
        "    AuthType None",
        "    Require all granted",
        "</Location>",
        "<Location /app>",
        "    AuthType shibboleth",
        "    ShibRequestSetting requireSession 1",
        "    Require shib-session",
        '    Header always set X-Shib-User "expr=%{REMOTE_USER}"',
        "</Location>",
    ]
    if guard:
        lines += [
            "<Location %s>" % SHIB_POST_RESPONSE,
            "    ReplaySPGuard On",
            '    ReplaySPEntityID "%s"' % SHIB_SP,
            '    ReplaySPIdPMetadataFile "%s"' % idp.metadata_path,
            "    # the key Shibboleth decrypts with (its CredentialResolver's key)",
            '    ReplaySPEncryptionKeyFile "%s"' % key,
            "</Location>",
        ]
    return "\n".join(lines) + "\n"


class ShibFleet(Fleet):
    """Three replicas, each with mod_shib and its own shibd, behind the
    balancer; with ``guard``, the module guards SAML2/POST on each."""

    def __init__(self, workdir, module, store, sp_keys, idp, guard):
        self.idp = idp
        self.sp_keys = sp_keys
        self.guard = guard
        self.store_obj = store
        self.sps = {}
        super().__init__(workdir, module=module, store_url=store.url,
                         sp={"entity_id": SHIB_SP}, server_extra=store.server_extra)
        for h in self.replicas:
            # mod_shib's debug lines say when its handler runs (shib_handler
            # entered): the evidence that a refused request never reached it
            h.log_level = "warn replay_sp:info mod_shib:debug"

    def _sp_for(self, h):
        if h.name not in self.sps:
            key, cert = self.sp_keys
            self.sps[h.name] = shib.ShibSP(os.path.join(self.dir, h.name + "-shib"), SHIB_SP,
                                           self.idp.entity_id, self.idp.metadata_path,
                                           key, cert)
        return self.sps[h.name]

    def _configure_replicas(self, **kw):
        for h in self.replicas:
            h.modules = [("replay_sp_module", self.module), ("mod_shib", shib.MOD_SHIB)]
            h.body = ('Header always set X-RSP-Replica "%s"\n' % h.name
                      + shib_body(self.store_url, self._sp_for(h), self.sp_keys, self.idp,
                                  self.guard, self.server_extra))

    def start(self):
        shib.start_all(list(self.sps.values()))
        try:
            with shib.cxx_preload():
                return super().start()
        except Exception:
            shib.stop_all(list(self.sps.values()))
            raise

    def stop(self):
        """The balancer, then the replicas (at once: each graceful stop
        takes about a second), then the shibds."""
        errors = []
        try:
            try:
                self.balancer.stop()
            except Exception as e:   # keep stopping the others
                errors.append(e)
            with concurrent.futures.ThreadPoolExecutor(len(self.replicas)) as ex:
                for fut in [ex.submit(h.stop) for h in self.replicas]:
                    if fut.exception() is not None:
                        errors.append(fut.exception())
        finally:
            shib.stop_all(list(self.sps.values()))
        if errors:
            raise errors[0]

    def sp_of(self, replica_name):
        return self.sps[replica_name]

    def mark_logs(self):
        super().mark_logs()
        for sp in self.sps.values():
            sp.mark_logs()

    @property
    def post_url(self):
        return self.public + SHIB_POST_RESPONSE


# --------------------------------------------------------------------------
# what the tests need to know about each SP
# --------------------------------------------------------------------------

class GuardedSP:
    """One SP the guard is tested in front of.

    ``name`` (the test parameter), ``label`` (for messages), ``entity_id``,
    ``post_path`` (its assertion consumer, the guarded path), ``user_header``
    (the response header a protected page names the user in),
    ``claim_cookie`` (how the claim names its session cookie: ``cn=`` and
    this), ``dir_prefix`` (of its fleets' directories)."""

    name = label = entity_id = post_path = user_header = claim_cookie = dir_prefix = None
    skip_reason = None

    def available(self):
        raise NotImplementedError

    def fleet(self, workdir, module, store, sp_keys, idp, guard):
        raise NotImplementedError

    def session_cookies(self, resp):
        """The SP's session cookies a response set: {name: value}."""
        raise NotImplementedError

    def accepted(self, resp):
        """The SP's answer to a response it accepted: a redirect with its
        session cookie."""
        return resp.status_code in (302, 303) and bool(self.session_cookies(resp))

    def cookie_set(self, headers):
        """Whether raw response headers [(name, value)] set its session cookie."""
        raise NotImplementedError

    def reached(self, f):
        """How much of the SP's own handling a request got since
        mark_logs() (0: it read nothing)."""
        raise NotImplementedError

    def __repr__(self):
        return self.name


class Mellon(GuardedSP):
    name, label, dir_prefix = "mellon", "mellon", "mellon"
    entity_id = MELLON_SP
    post_path = MELLON_POST_RESPONSE
    user_header = "X-Mellon-User"
    claim_cookie = MELLON_COOKIE
    skip_reason = "libapache2-mod-auth-mellon not installed"

    def available(self):
        return os.path.exists(MELLON_SO)

    def fleet(self, workdir, module, store, sp_keys, idp, guard):
        return MellonFleet(workdir, module, store, sp_keys, idp, guard)

    def session_cookies(self, resp):
        return {MELLON_COOKIE: resp.cookies[MELLON_COOKIE]} if MELLON_COOKIE in resp.cookies else {}

    def cookie_set(self, headers):
        return any(k.lower() == "set-cookie" and MELLON_COOKIE in v for k, v in headers)

    def reached(self, f):
        """Lines mellon logged since mark_logs(): at debug level it logs what
        it does with every request it handles (the URL it reconstructs, the
        IdP it loads, the cookie it sets), so none means it read nothing."""
        return f.count_in_logs("[auth_mellon:")


class Shibboleth(GuardedSP):
    name, label, dir_prefix = "shibboleth", "Shibboleth", "shib"
    entity_id = SHIB_SP
    post_path = SHIB_POST_RESPONSE
    user_header = "X-Shib-User"
    claim_cookie = shib.SESSION_COOKIE_PREFIX
    skip_reason = "libapache2-mod-shib (mod_shib, shibd) not installed"

    def available(self):
        return shib.available()

    def fleet(self, workdir, module, store, sp_keys, idp, guard):
        return ShibFleet(workdir, module, store, sp_keys, idp, guard)

    def session_cookies(self, resp):
        return {k: v for k, v in resp.cookies.items() if k.startswith(shib.SESSION_COOKIE_PREFIX)}

    def cookie_set(self, headers):
        return any(k.lower() == "set-cookie" and v.startswith(shib.SESSION_COOKIE_PREFIX)
                   for k, v in headers)

    def handler_runs(self, f):
        """How many requests reached mod_shib's handler since mark_logs()."""
        return f.count_in_logs("shib_handler entered")

    def logins(self, f):
        """Login lines in every shibd's transaction log since mark_logs()
        (accepted and refused alike: each one is a message shibd processed)."""
        return [l for sp in f.sps.values()
                for l in sp.log_since_mark(sp.transaction_log).splitlines()
                if "Shibboleth-TRANSACTION.Login" in l]

    def reached(self, f):
        return self.handler_runs(f) + len(self.logins(f))


MELLON = Mellon()
SHIBBOLETH = Shibboleth()
SPS = {sp.name: sp for sp in (MELLON, SHIBBOLETH)}
