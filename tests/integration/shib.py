"""Shibboleth SP 3 (Debian's libapache2-mod-shib and its shibd) for the
integration tests: one SP per replica, each with its own configuration
directory and its own shibd, started as our child and stopped by PID.

``ShibSP(directory, ...)`` writes into ``directory``:

* ``shibboleth2.xml``: one ApplicationDefaults (the SP's entityID, REMOTE_USER
  from the mapped NameID), Sessions on plain http (handlerSSL off,
  cookieProps "http": cookies without ``secure``; checkAddress off;
  relayState ss:mem; redirectLimit exact: RelayState must name this
  server; a MetadataGenerator handler at /Metadata), SSO to the test IdP
  (SP-initiated login), a File CredentialResolver with the SP key pair
  (signing and decryption), the IdP's metadata from its file
  (MetadataProvider type XML: SP 3 has no "File" type; ``metadata_provider``
  gives another MetadataProvider element, e.g. a federation's aggregate
  with its filters), a UnixListener on ``shibd.sock`` here (a TCPListener
  on a free loopback port with ``tcp=True``, or when the socket's path is too
  long), and the default in-memory StorageService, SessionCache and
  ReplayCache: each shibd keeps its own sessions and its own replay record;
* ``attribute-map.xml`` (a NameID of Format unspecified or transient as
  ``nameid``; the basic-NameFormat attributes ``uid`` and ``mail``),
  ``attribute-policy.xml`` (everything passes);
* ``security-policy.xml`` and ``protocols.xml``, copied from /etc/shibboleth;
* ``shibd.logger`` (shibd.log, shibd_warn.log, transaction.log,
  signature.log here) and ``native.logger`` (mod_shib's own log, native.log
  here, written by the httpd parent and children).

``start()`` runs ``shibd -F -f -c shibboleth2.xml -p shibd.pid`` (stdout and
stderr to ``shibd.out``) and waits, bounded, until it accepts connections
on its listener; ``stop()`` sends SIGTERM to that PID (SIGKILL after a
bounded wait). ``httpd_lines()`` is what a replica's httpd.conf needs to
talk to this SP: ``ShibConfig`` with this directory's shibboleth2.xml
(mod_shib's configuration is per httpd, so one SP per replica).

shibd warns at start-up, in its own logs, that cookieProps and handlerSSL
are insecure: the tests run on plain http. Nothing of the packaged shibd
service is used: no /etc/shibboleth/shibboleth2.xml, no /run/shibboleth.
"""

import contextlib
import os
import shutil
import subprocess
import time
from xml.sax.saxutils import quoteattr

import common
import httpd_fleet
from common import HarnessError, make_dir, terminate, wait_for

SHIBD = os.environ.get("RSP_SHIBD", "/usr/sbin/shibd")
MOD_SHIB = os.path.join(httpd_fleet.APACHE_MODULES, "mod_shib.so")
SYSTEM_CONFIG = "/etc/shibboleth"
HANDLER = "/Shibboleth.sso"
POST_PATH = HANDLER + "/SAML2/POST"
SESSION_COOKIE_PREFIX = "_shibsession_"
START_TIMEOUT = 30.0
STOP_TIMEOUT = 15.0


def available():
    """True when both halves of Shibboleth SP are installed."""
    return os.path.isfile(MOD_SHIB) and os.access(SHIBD, os.X_OK)


_SHIBBOLETH2 = """\
<SPConfig xmlns="urn:mace:shibboleth:3.0:native:sp:config"
    xmlns:conf="urn:mace:shibboleth:3.0:native:sp:config"
    clockSkew="180">

    <!-- shibd and mod_shib log to files in this directory -->
    <OutOfProcess logger={shibd_logger}
        tranLogFormat="%u|%s|%IDP|%i|%ac|%t|%attr|%n|%b|%E|%S|%SS|%L|%UA|%a"/>
    <InProcess logger={native_logger}/>

    <!-- this SP's own shibd; mod_shib in this replica connects here -->
    {listener}

    <!-- No StorageService, SessionCache or ReplayCache element: the defaults,
         in memory, per shibd. -->

    <ApplicationDefaults entityID={entity_id}
        REMOTE_USER="nameid uid">

        <Sessions lifetime="28800" timeout="3600" relayState="ss:mem"
                  checkAddress="false" handlerSSL="false" cookieProps="http"
                  redirectLimit="exact" handlerURL="{handler}">
            <SSO entityID={idp_entity_id}>SAML2</SSO>
            <Logout>Local</Logout>
            <Handler type="Session" Location="/Session" showAttributeValues="true"/>
            <Handler type="MetadataGenerator" Location="/Metadata" signing="false"/>
        </Sessions>

        <Errors supportContact="root@localhost"/>

        {metadata_provider}

        <AttributeExtractor type="XML" validate="true" reloadChanges="false"
            path={attribute_map}/>
        <AttributeFilter type="XML" validate="true" path={attribute_policy}/>

        <CredentialResolver type="File" key={key} certificate={cert}/>
    </ApplicationDefaults>

    <SecurityPolicyProvider type="XML" validate="true" path={security_policy}/>
    <ProtocolProvider type="XML" validate="true" reloadChanges="false" path={protocols}/>
</SPConfig>
"""

_ATTRIBUTE_MAP = """\
<Attributes xmlns="urn:mace:shibboleth:2.0:attribute-map"
    xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
    <!-- the NameID (the test IdP's default Format is unspecified) -->
    <Attribute name="urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified" id="nameid">
        <AttributeDecoder xsi:type="NameIDAttributeDecoder" formatter="$Name"/>
    </Attribute>
    <Attribute name="urn:oasis:names:tc:SAML:2.0:nameid-format:transient" id="nameid">
        <AttributeDecoder xsi:type="NameIDAttributeDecoder" formatter="$Name"/>
    </Attribute>
    <!-- attributes the test IdP sends with attributes={...} (NameFormat basic) -->
    <Attribute name="uid" nameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic"
        id="uid"/>
    <Attribute name="mail" nameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic"
        id="mail"/>
</Attributes>
"""

_ATTRIBUTE_POLICY = """\
<AttributeFilterPolicyGroup xmlns="urn:mace:shibboleth:2.0:afp"
    xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
    <AttributeFilterPolicy>
        <PolicyRequirementRule xsi:type="ANY"/>
        <AttributeRule attributeID="*" permitAny="true"/>
    </AttributeFilterPolicy>
</AttributeFilterPolicyGroup>
"""

_SHIBD_LOGGER = """\
log4j.rootCategory={level}, shibd_log, warn_log
log4j.category.XMLTooling.XMLObject=INFO
log4j.category.XMLTooling.XMLObjectBuilder=INFO
log4j.category.XMLTooling.KeyInfoResolver=INFO
log4j.category.Shibboleth.IPRange=INFO
log4j.category.Shibboleth.PropertySet=INFO
log4j.category.XMLTooling.libcurl=INFO
log4j.category.XMLTooling.Signature.Debugger=INFO, sig_log
log4j.additivity.XMLTooling.Signature.Debugger=false
log4j.ownAppenders.XMLTooling.Signature.Debugger=true
log4j.category.Shibboleth-TRANSACTION=INFO, tran_log
log4j.additivity.Shibboleth-TRANSACTION=false
log4j.ownAppenders.Shibboleth-TRANSACTION=true

log4j.appender.shibd_log=org.apache.log4j.FileAppender
log4j.appender.shibd_log.fileName={dir}/shibd.log
log4j.appender.shibd_log.layout=org.apache.log4j.PatternLayout
log4j.appender.shibd_log.layout.ConversionPattern=%d{{%Y-%m-%d %H:%M:%S}} %p %c %x: %m%n

log4j.appender.warn_log=org.apache.log4j.FileAppender
log4j.appender.warn_log.fileName={dir}/shibd_warn.log
log4j.appender.warn_log.layout=org.apache.log4j.PatternLayout
log4j.appender.warn_log.layout.ConversionPattern=%d{{%Y-%m-%d %H:%M:%S}} %p %c %x: %m%n
log4j.appender.warn_log.threshold=WARN

log4j.appender.tran_log=org.apache.log4j.FileAppender
log4j.appender.tran_log.fileName={dir}/transaction.log
log4j.appender.tran_log.layout=org.apache.log4j.PatternLayout
log4j.appender.tran_log.layout.ConversionPattern=%d{{%Y-%m-%d %H:%M:%S}}|%c|%m%n

log4j.appender.sig_log=org.apache.log4j.FileAppender
log4j.appender.sig_log.fileName={dir}/signature.log
log4j.appender.sig_log.layout=org.apache.log4j.PatternLayout
log4j.appender.sig_log.layout.ConversionPattern=%m
"""

_NATIVE_LOGGER = """\
log4j.rootCategory={level}, native_log
log4j.category.XMLTooling.XMLObject=WARN
log4j.category.XMLTooling.XMLObjectBuilder=WARN
log4j.category.XMLTooling.KeyInfoResolver=WARN
log4j.category.Shibboleth.IPRange=WARN
log4j.category.Shibboleth.PropertySet=WARN

log4j.appender.native_log=org.apache.log4j.FileAppender
log4j.appender.native_log.fileName={dir}/native.log
log4j.appender.native_log.layout=org.apache.log4j.PatternLayout
log4j.appender.native_log.layout.ConversionPattern=%d{{%Y-%m-%d %H:%M:%S}} %p %c %x: %m%n
"""


class ShibSP:
    """One Shibboleth SP: its configuration directory and its shibd."""

    def __init__(self, directory, entity_id, idp_entity_id, idp_metadata, key, cert,
                 shibd_level="INFO", native_level="INFO", tcp=None, metadata_provider=None):
        self.dir = make_dir(directory)
        # the MetadataProvider element (default: idp_metadata, a local file)
        self.metadata_provider = metadata_provider
        self.entity_id = entity_id
        self.idp_entity_id = idp_entity_id
        self.idp_metadata = idp_metadata
        self.key, self.cert = key, cert
        self.shibd_level, self.native_level = shibd_level, native_level
        self.config = os.path.join(self.dir, "shibboleth2.xml")
        self.socket = os.path.join(self.dir, "shibd.sock")
        # a UnixListener unless ``tcp`` (True: a TCPListener on a free
        # loopback port); by default TCP only when the socket's path would
        # not fit in sun_path (107 bytes)
        if tcp is None:
            tcp = len(self.socket.encode()) >= 100
        self.tcp_port = common.free_port() if tcp else None
        self.pid_path = os.path.join(self.dir, "shibd.pid")
        self.shibd_log = os.path.join(self.dir, "shibd.log")
        self.warn_log = os.path.join(self.dir, "shibd_warn.log")
        self.transaction_log = os.path.join(self.dir, "transaction.log")
        self.native_log = os.path.join(self.dir, "native.log")
        self.out_path = os.path.join(self.dir, "shibd.out")
        self.proc = None
        self._offsets = {}
        self.write_config()

    def path(self, name):
        return os.path.join(self.dir, name)

    def write_config(self):
        for name in ("security-policy.xml", "protocols.xml"):
            shutil.copyfile(os.path.join(SYSTEM_CONFIG, name), self.path(name))
        q = quoteattr
        files = {
            "shibboleth2.xml": _SHIBBOLETH2.format(
                shibd_logger=q(self.path("shibd.logger")),
                native_logger=q(self.path("native.logger")),
                listener=self.listener_element(), entity_id=q(self.entity_id),
                handler=HANDLER, idp_entity_id=q(self.idp_entity_id),
                metadata_provider=self.metadata_provider or
                '<MetadataProvider type="XML" validate="true" path=%s/>' % q(self.idp_metadata),
                attribute_map=q(self.path("attribute-map.xml")),
                attribute_policy=q(self.path("attribute-policy.xml")),
                key=q(self.key), cert=q(self.cert),
                security_policy=q(self.path("security-policy.xml")),
                protocols=q(self.path("protocols.xml"))),
            "attribute-map.xml": _ATTRIBUTE_MAP,
            "attribute-policy.xml": _ATTRIBUTE_POLICY,
            "shibd.logger": _SHIBD_LOGGER.format(level=self.shibd_level, dir=self.dir),
            "native.logger": _NATIVE_LOGGER.format(level=self.native_level, dir=self.dir),
        }
        for name, text in files.items():
            with open(self.path(name), "w") as f:
                f.write(text)
            os.chmod(self.path(name), 0o644)
        # mod_shib's log is opened by the httpd parent (root) and by the
        # children (www-data): it must exist and be writable by both.
        with open(self.native_log, "a"):
            pass
        os.chmod(self.native_log, 0o666)

    def listener_element(self):
        if self.tcp_port is None:
            return "<UnixListener address=%s/>" % quoteattr(self.socket)
        return ('<TCPListener address="127.0.0.1" port="%d" acl="127.0.0.1"/>'
                % self.tcp_port)

    # -- httpd side ----------------------------------------------------------
    def httpd_lines(self):
        """Server-scope lines for the replica that uses this SP."""
        return 'ShibConfig "%s"\n' % self.config

    # -- shibd -----------------------------------------------------------------
    def argv(self):
        return [SHIBD, "-F", "-f", "-c", self.config, "-p", self.pid_path]

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def _listening(self):
        """shibd says its listener is up (in the log written since spawn),
        and its socket exists. Not by connecting: shibd 3.4 can abort
        (heap corruption) when a connection is closed unused right after
        it starts, and nothing but mod_shib should ever connect to it."""
        if self.tcp_port is None and not os.path.exists(self.socket):
            return False
        try:
            with open(self.shibd_log, "rb") as f:
                f.seek(self._log_start)
                return b"Shibboleth.Listener : listener service starting" in f.read()
        except OSError:
            return False

    def spawn(self):
        """Start shibd without waiting (see wait_ready)."""
        if self.running():
            raise HarnessError("shibd in %s is already running (pid %d)" % (self.dir, self.pid))
        self._log_start = self._size(self.shibd_log)
        with open(self.out_path, "ab") as out:
            self.proc = subprocess.Popen(self.argv(), stdin=subprocess.DEVNULL,
                                         stdout=out, stderr=subprocess.STDOUT,
                                         cwd=self.dir, start_new_session=True)
        return self

    def wait_ready(self, timeout=START_TIMEOUT):
        def up():
            if self.proc.poll() is not None:
                raise HarnessError("shibd exited with %s:\n%s\n%s" % (
                    self.proc.returncode, self.tail(self.out_path), self.tail(self.shibd_log)))
            return self._listening()
        where = self.socket if self.tcp_port is None else "127.0.0.1:%d" % self.tcp_port
        try:
            wait_for(up, timeout, interval=0.1, what="shibd on %s" % where)
        except HarnessError as e:
            if "timed out" in str(e):
                self.stop()
                raise HarnessError("%s\n%s" % (e, self.tail(self.shibd_log)))
            raise
        return self

    def start(self, timeout=START_TIMEOUT):
        return self.spawn().wait_ready(timeout)

    def stop(self, timeout=STOP_TIMEOUT):
        if self.proc is None:
            return
        terminate(self.proc, timeout)
        self.proc = None

    # -- logs --------------------------------------------------------------------
    @staticmethod
    def tail(path, n=40):
        try:
            with open(path, "rb") as f:
                return "\n".join(f.read().decode("utf-8", "replace").splitlines()[-n:])
        except OSError:
            return ""

    def _size(self, path):
        try:
            return os.path.getsize(path)
        except OSError:
            return 0

    def mark_logs(self):
        for p in (self.shibd_log, self.transaction_log, self.native_log):
            self._offsets[p] = self._size(p)

    def log_since_mark(self, path):
        try:
            with open(path, "rb") as f:
                f.seek(self._offsets.get(path, 0))
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""


@contextlib.contextmanager
def cxx_preload():
    """While httpd instances are started: when RSP_HTTPD_PRELOAD preloads
    the ASan runtime without libstdc++, add libstdc++ to it.

    httpd is a C program, so when the preloaded ASan runtime initialises no
    libstdc++ is loaded and its __cxa_throw interceptor finds no real
    __cxa_throw; mod_shib (C++, loaded later) then dies on its first
    exception with "AddressSanitizer: CHECK failed: asan_interceptors.cpp
    ... real___cxa_throw". shibsp::SocketListener::send rethrows in httpd
    every error shibd reports (a replayed message, a blocked redirect)."""
    old = os.environ.get("RSP_HTTPD_PRELOAD")
    if old and "libasan" in old and "libstdc++" not in old:
        os.environ["RSP_HTTPD_PRELOAD"] = old + " libstdc++.so.6"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("RSP_HTTPD_PRELOAD", None)
        else:
            os.environ["RSP_HTTPD_PRELOAD"] = old


def start_all(sps, timeout=START_TIMEOUT):
    """Start several shibds at once, wait until every one is ready."""
    started = []
    try:
        for sp in sps:
            sp.spawn()
            started.append(sp)
        deadline = time.monotonic() + timeout
        for sp in sps:
            sp.wait_ready(max(1.0, deadline - time.monotonic()))
    except Exception:
        for sp in started:
            sp.stop()
        raise


def stop_all(sps):
    errors = []
    for sp in sps:
        try:
            sp.stop()
        except Exception as e:   # keep stopping the others
            errors.append(e)
    if errors:
        raise errors[0]
