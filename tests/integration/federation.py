"""A synthetic federation: a metadata aggregate of thousands of IdPs and
SPs, made in seconds, for the tests and the benchmark (tests/bench).

``make(directory, n_idps, n_sps, ...)`` writes one ``EntitiesDescriptor``
shaped as federations publish theirs: the namespaces declared once on the
root (md, ds, saml, mdui, mdrpi, mdattr, shibmd, idpdisc, init), a
``mdrpi:PublicationInfo``, IdPs and SPs interleaved, each entity with a
``mdrpi:RegistrationInfo`` (one of three registration authorities), an
``Organization`` and a technical ``ContactPerson``; IdPs with a
``shibmd:Scope``, an ``mdui:UIInfo`` (DisplayName, some with a second
language, a Description and a Logo), HTTP-Redirect and HTTP-POST
SingleSignOnService, SingleLogoutService on every other one, entity
attributes (REFEDS R&S support, SIRTFI, and
``http://refeds.org/category/hide-from-discovery`` on a few); every 20th
IdP publishes a second signing key (a key rollover in progress: the first
one signs); SPs with an ``AttributeConsumingService``, a discovery
response endpoint and entity categories. Valid against the SAML metadata
schemas and their extensions (Shibboleth SP loads it with validate="true").

Keys: ``keys`` distinct RSA key pairs (a few dozen, made once with
openssl and reused round-robin: IdP i signs with key ``i % len(keys)``),
so a federation of 40,000 entities takes seconds: the entities are
template strings, and the only signature is the aggregate's own (one
xmlsec1 run over the whole file) when ``signed_by`` is given.

What a test needs comes back in a ``Federation``: ``path``; ``idps[i]``
(entity ID, SSO URL, the key and certificate that sign for it, its
scope...); ``test_idp(i, workdir)``, a ``rsp_testidp.TestIdP`` that signs
responses AS IdP number i; ``write_single(path, i)``, IdP i's own
metadata (an EntityDescriptor alone: the one-IdP configuration).

Generation is deterministic for given arguments: ``make(d, n + 1, n)``
lists the same entities as ``make(d, n, n)`` and one IdP more (a file for
"an IdP added to the aggregate").
"""

import collections
import concurrent.futures
import os
import shutil
import sys
import time

from common import IDP_DIR

if IDP_DIR not in sys.path:
    sys.path.insert(0, IDP_DIR)
import rsp_testidp  # noqa: E402

MD_NS = "urn:oasis:names:tc:SAML:2.0:metadata"
NAMESPACES = (
    ("md", MD_NS),
    ("ds", "http://www.w3.org/2000/09/xmldsig#"),
    ("saml", "urn:oasis:names:tc:SAML:2.0:assertion"),
    ("mdui", "urn:oasis:names:tc:SAML:metadata:ui"),
    ("mdrpi", "urn:oasis:names:tc:SAML:metadata:rpi"),
    ("mdattr", "urn:oasis:names:tc:SAML:metadata:attribute"),
    ("shibmd", "urn:mace:shibboleth:metadata:1.0"),
    ("idpdisc", "urn:oasis:names:tc:SAML:profiles:SSO:idp-discovery-protocol"),
    ("init", "urn:oasis:names:tc:SAML:profiles:SSO:request-init"),
)
PROTOCOL = "urn:oasis:names:tc:SAML:2.0:protocol"
REDIRECT = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"
POST = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"
URI_FORMAT = "urn:oasis:names:tc:SAML:2.0:attrname-format:uri"
HIDE_FROM_DISCOVERY = "http://refeds.org/category/hide-from-discovery"
RESEARCH_AND_SCHOLARSHIP = "http://refeds.org/category/research-and-scholarship"
SIRTFI = "https://refeds.org/sirtfi"
CATEGORY = "http://macedir.org/entity-category"
CATEGORY_SUPPORT = "http://macedir.org/entity-category-support"
ASSURANCE = "urn:oasis:names:tc:SAML:attribute:assurance-certification"
REGISTRARS = ("https://registrar-a.fed.example/", "https://registrar-b.fed.example/",
              "https://registrar-c.fed.example/")
FEDERATION_NAME = "urn:test:synthetic-federation"
DEFAULT_KEYS = 32
OPENSSL_JOBS = 4

IdP = collections.namedtuple("IdP", (
    "index", "entity_id", "sso_url", "slo_url", "key_file", "cert_file", "scope",
    "display_name", "registrar", "categories", "hidden", "cert_files"))
SP = collections.namedtuple("SP", ("index", "entity_id", "acs_url", "cert_file", "categories"))


def make_keys(directory, count=DEFAULT_KEYS):
    """count RSA key pairs in directory (key-<k>.key/.crt), made with
    openssl a few at a time, reused when already there; [(key, cert)]."""
    os.makedirs(directory, exist_ok=True)
    pairs = [(os.path.join(directory, "key-%02d.key" % k),
              os.path.join(directory, "key-%02d.crt" % k)) for k in range(count)]
    missing = [k for k, (key, crt) in enumerate(pairs)
               if not (os.path.isfile(key) and os.path.isfile(crt))]
    with concurrent.futures.ThreadPoolExecutor(OPENSSL_JOBS) as ex:
        for fut in [ex.submit(rsp_testidp.make_keypair, directory, "key-%02d" % k,
                              "synthetic federation key %d" % k) for k in missing]:
            fut.result()
    for key, _ in pairs:
        os.chmod(key, 0o644)   # httpd children (www-data) never read these; tests may
    return pairs


def _pem_bodies(pairs):
    return [rsp_testidp._pem_body(crt) for _, crt in pairs]


def _esc(s):
    return rsp_testidp._xml_escape(s)


def idp_entity_id(i):
    return "https://idp.org%05d.example.org/idp/shibboleth" % i


def sp_entity_id(i):
    return "https://sp%05d.service.example.com/shibboleth" % i


def _key_descriptor(pem, use):
    use_attr = ' use="%s"' % use if use else ""
    return ('<md:KeyDescriptor%s><ds:KeyInfo><ds:X509Data><ds:X509Certificate>\n%s\n'
            '</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>\n'
            % (use_attr, "\n".join(pem[j:j + 64] for j in range(0, len(pem), 64))))


def _entity_attributes(pairs):
    """mdattr:EntityAttributes of (name, [values])."""
    if not pairs:
        return ""
    return ("<mdattr:EntityAttributes>\n%s</mdattr:EntityAttributes>\n" % "".join(
        '<saml:Attribute Name="%s" NameFormat="%s">%s</saml:Attribute>\n'
        % (name, URI_FORMAT, "".join("<saml:AttributeValue>%s</saml:AttributeValue>" % _esc(v)
                                     for v in values))
        for name, values in pairs))


def _organization(name, url):
    return ('<md:Organization><md:OrganizationName xml:lang="en">%s</md:OrganizationName>'
            '<md:OrganizationDisplayName xml:lang="en">%s</md:OrganizationDisplayName>'
            '<md:OrganizationURL xml:lang="en">%s</md:OrganizationURL></md:Organization>\n'
            '<md:ContactPerson contactType="technical"><md:GivenName>Operations</md:GivenName>'
            '<md:EmailAddress>mailto:ops@%s</md:EmailAddress></md:ContactPerson>\n'
            % (_esc(name), _esc(name), _esc(url), _esc(url.split("/")[2])))


class Federation:
    """What make() wrote (see the module's docstring)."""

    def __init__(self, path, idps, sps, keys, signer, valid_until, seconds):
        self.path = path
        self.idps = idps
        self.sps = sps
        self.keys = keys
        self.signer = signer
        self.valid_until = valid_until
        self.seconds = seconds   # how long make() took

    def idp(self, i):
        return self.idps[i]

    @property
    def size(self):
        return os.path.getsize(self.path)

    def test_idp(self, i, workdir):
        """A rsp_testidp.TestIdP that signs AS IdP i (its entity ID, its
        key; its own metadata file in workdir says the same)."""
        idp = self.idps[i]
        os.makedirs(workdir, exist_ok=True)
        for src, name in ((idp.key_file, "idp.key"), (idp.cert_file, "idp.crt")):
            dst = os.path.join(workdir, name)
            if not os.path.isfile(dst):
                shutil.copyfile(src, dst)
        return rsp_testidp.TestIdP(workdir, entity_id=idp.entity_id, sso_url=idp.sso_url,
                                   slo_url=idp.slo_url, scopes=(idp.scope,))

    def _single(self, i, attrs=""):
        """IdP i's EntityDescriptor with its namespaces (and attrs)."""
        pems = {crt: rsp_testidp._pem_body(crt) for crt in self.idps[i].cert_files}
        body = _idp_entity(self.idps[i], [pems[c] for c in self.idps[i].cert_files])
        decl = " ".join('xmlns:%s="%s"' % ns for ns in NAMESPACES)
        return body.replace("<md:EntityDescriptor ", "<md:EntityDescriptor %s%s " % (decl, attrs),
                            1)

    def write_single(self, path, i):
        """IdP i's metadata alone (an EntityDescriptor with its namespaces,
        unsigned), as a one-IdP configuration names it; the path."""
        _write(path, '<?xml version="1.0" encoding="UTF-8"?>\n' + self._single(i))
        return path

    def entity_document(self, i, signed_by, valid_until=None, cache_duration=None):
        """IdP i's metadata as an MDQ service answers for it: its
        EntityDescriptor as the root, with an ID, validUntil (epoch
        seconds; default 7 days away) and cacheDuration (an xs:duration,
        or none), signed by signed_by (key, cert); the text."""
        attrs = ' ID="_e%d" validUntil="%s"' % (time.time_ns(), rsp_testidp.saml_time(
            valid_until if valid_until is not None else time.time() + 7 * 86400))
        if cache_duration:
            attrs += ' cacheDuration="%s"' % cache_duration
        return sign(self._single(i, attrs), *signed_by)


def _idp(i, keys, base):
    k = i % len(keys)
    host = "idp.org%05d.example.org" % i
    root = base(i) if base else "https://%s/idp/profile/SAML2" % host
    certs = [keys[k][1]]
    if i % 20 == 10:          # a key rollover in progress: both published
        certs.append(keys[(k + 1) % len(keys)][1])
    cats = []
    if i % 4 == 0:
        cats.append((CATEGORY_SUPPORT, [RESEARCH_AND_SCHOLARSHIP]))
    if i % 5 == 0:
        cats.append((ASSURANCE, [SIRTFI]))
    hidden = i % 100 == 3
    if hidden:
        cats.append((CATEGORY, [HIDE_FROM_DISCOVERY]))
    return IdP(index=i, entity_id=idp_entity_id(i), sso_url=root + "/Redirect/SSO",
               slo_url=root + "/Redirect/SLO" if i % 2 == 0 else None,
               key_file=keys[k][0], cert_file=keys[k][1],
               scope="org%05d.example.org" % i,
               display_name="Organisation %05d" % i, registrar=REGISTRARS[i % 3],
               categories=cats, hidden=hidden, cert_files=certs)


def _idp_entity(idp, pems):
    i = idp.index
    ui = '<mdui:DisplayName xml:lang="en">%s</mdui:DisplayName>\n' % _esc(idp.display_name)
    if i % 3 == 0:
        ui += ('<mdui:DisplayName xml:lang="de">Organisation %05d (de)</mdui:DisplayName>\n'
               '<mdui:Description xml:lang="en">Identity provider of organisation %05d'
               '</mdui:Description>\n' % (i, i))
    if i % 2 == 1:
        ui += ('<mdui:Logo height="60" width="80">https://www.org%05d.example.org/logo.png'
               '</mdui:Logo>\n' % i)
    slo = ""
    if idp.slo_url:
        slo = ('<md:SingleLogoutService Binding="%s" Location="%s"/>\n'
               '<md:SingleLogoutService Binding="%s" Location="%s"/>\n'
               % (REDIRECT, _esc(idp.slo_url), POST, _esc(idp.slo_url.replace(
                   "/Redirect/", "/POST/"))))
    keys = "".join(_key_descriptor(p, "signing") for p in pems)
    keys += _key_descriptor(pems[0], "encryption" if i % 2 else None) if i % 7 == 0 else ""
    host = "org%05d.example.org" % i
    return (
        '<md:EntityDescriptor entityID="%(eid)s">\n'
        '<md:Extensions><mdrpi:RegistrationInfo registrationAuthority="%(reg)s" '
        'registrationInstant="2019-04-01T10:00:00Z"><mdrpi:RegistrationPolicy xml:lang="en">'
        '%(reg)spolicy</mdrpi:RegistrationPolicy></mdrpi:RegistrationInfo>\n'
        '%(attrs)s</md:Extensions>\n'
        '<md:IDPSSODescriptor protocolSupportEnumeration="%(proto)s">\n'
        '<md:Extensions><shibmd:Scope regexp="false">%(scope)s</shibmd:Scope>\n'
        '<mdui:UIInfo>\n%(ui)s</mdui:UIInfo>\n'
        '<mdui:DiscoHints><mdui:DomainHint>%(host)s</mdui:DomainHint></mdui:DiscoHints>\n'
        '</md:Extensions>\n'
        '%(keys)s%(slo)s'
        '<md:NameIDFormat>urn:oasis:names:tc:SAML:2.0:nameid-format:transient</md:NameIDFormat>\n'
        '<md:NameIDFormat>urn:oasis:names:tc:SAML:2.0:nameid-format:persistent</md:NameIDFormat>\n'
        '<md:SingleSignOnService Binding="%(redir)s" Location="%(sso)s"/>\n'
        '<md:SingleSignOnService Binding="%(post)s" Location="%(sso_post)s"/>\n'
        '</md:IDPSSODescriptor>\n'
        '%(org)s'
        '</md:EntityDescriptor>\n'
        % {"eid": _esc(idp.entity_id), "reg": idp.registrar,
           "attrs": _entity_attributes(idp.categories), "proto": PROTOCOL,
           "scope": _esc(idp.scope), "ui": ui, "host": host, "keys": keys, "slo": slo,
           "redir": REDIRECT, "sso": _esc(idp.sso_url), "post": POST,
           "sso_post": _esc(idp.sso_url.replace("/Redirect/", "/POST/")),
           "org": _organization(idp.display_name, "https://www.%s/" % host)})


def _sp(i, keys):
    cats = [(CATEGORY, [RESEARCH_AND_SCHOLARSHIP])] if i % 3 == 0 else []
    host = "sp%05d.service.example.com" % i
    return SP(index=i, entity_id=sp_entity_id(i),
              acs_url="https://%s/Shibboleth.sso/SAML2/POST" % host,
              cert_file=keys[(i * 7) % len(keys)][1], categories=cats)


def _sp_entity(sp, pem):
    i = sp.index
    host = "sp%05d.service.example.com" % i
    return (
        '<md:EntityDescriptor entityID="%(eid)s">\n'
        '<md:Extensions><mdrpi:RegistrationInfo registrationAuthority="%(reg)s"/>\n'
        '%(attrs)s</md:Extensions>\n'
        '<md:SPSSODescriptor protocolSupportEnumeration="%(proto)s">\n'
        '<md:Extensions>'
        '<idpdisc:DiscoveryResponse Binding="%(disc)s" '
        'Location="https://%(host)s/Shibboleth.sso/Login" index="1"/>\n'
        '<init:RequestInitiator Binding="urn:oasis:names:tc:SAML:profiles:SSO:request-init" '
        'Location="https://%(host)s/Shibboleth.sso/Login"/>\n'
        '<mdui:UIInfo><mdui:DisplayName xml:lang="en">Service %(n)05d</mdui:DisplayName>'
        '<mdui:InformationURL xml:lang="en">https://%(host)s/about</mdui:InformationURL>'
        '<mdui:PrivacyStatementURL xml:lang="en">https://%(host)s/privacy'
        '</mdui:PrivacyStatementURL></mdui:UIInfo>\n'
        '</md:Extensions>\n'
        '%(key)s'
        '<md:SingleLogoutService Binding="%(redir)s" Location="https://%(host)s/Shibboleth.sso/SLO/Redirect"/>\n'
        '<md:AssertionConsumerService Binding="%(post)s" Location="%(acs)s" index="1"/>\n'
        '<md:AttributeConsumingService index="1"><md:ServiceName xml:lang="en">Service '
        '%(n)05d</md:ServiceName>'
        '<md:RequestedAttribute FriendlyName="eduPersonPrincipalName" '
        'Name="urn:oid:1.3.6.1.4.1.5923.1.1.1.6" NameFormat="%(uri)s" isRequired="true"/>'
        '<md:RequestedAttribute FriendlyName="mail" Name="urn:oid:0.9.2342.19200300.100.1.3" '
        'NameFormat="%(uri)s"/></md:AttributeConsumingService>\n'
        '</md:SPSSODescriptor>\n'
        '%(org)s'
        '</md:EntityDescriptor>\n'
        % {"eid": _esc(sp.entity_id), "reg": REGISTRARS[i % 3],
           "attrs": _entity_attributes(sp.categories), "proto": PROTOCOL,
           "disc": "urn:oasis:names:tc:SAML:profiles:SSO:idp-discovery-protocol",
           "host": host, "n": i, "key": _key_descriptor(pem, None), "redir": REDIRECT,
           "post": POST, "acs": _esc(sp.acs_url), "uri": URI_FORMAT,
           "org": _organization("Service %05d" % i, "https://%s/" % host)})


def _write(path, text):
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def make(directory, n_idps, n_sps, keys=DEFAULT_KEYS, signed_by=None, valid_until=None,
         cache_duration="PT6H", name=FEDERATION_NAME, filename="federation.xml",
         sso_base=None):
    """Write the aggregate to directory/filename; a Federation.

    keys: how many key pairs (made under directory/keys, reused when
    there), or a list of (key, cert) pairs. signed_by: (key, cert) that
    signs the aggregate (its root gets an ID). valid_until: epoch seconds
    of the root's validUntil (default: 7 days away when signed, none
    otherwise). sso_base(i): where IdP i's SAML2 endpoints live (default
    https://idp.org<i>.example.org/idp/profile/SAML2; its SSO URL is
    <base>/Redirect/SSO)."""
    t0 = time.monotonic()
    os.makedirs(directory, exist_ok=True)
    if isinstance(keys, int):
        keys = make_keys(os.path.join(directory, "keys"), keys)
    pems = dict(zip((crt for _, crt in keys), _pem_bodies(keys)))
    if valid_until is None and signed_by:
        valid_until = time.time() + 7 * 86400
    idps = [_idp(i, keys, sso_base) for i in range(n_idps)]
    sps = [_sp(i, keys) for i in range(n_sps)]
    attrs = ' Name="%s" cacheDuration="%s"' % (_esc(name), cache_duration)
    if signed_by:
        attrs += ' ID="_fed%d"' % time.time_ns()
    if valid_until is not None:
        attrs += ' validUntil="%s"' % rsp_testidp.saml_time(valid_until)
    parts = ['<?xml version="1.0" encoding="UTF-8"?>\n<md:EntitiesDescriptor %s%s>\n'
             % (" ".join('xmlns:%s="%s"' % ns for ns in NAMESPACES), attrs),
             '<md:Extensions><mdrpi:PublicationInfo publisher="%s" creationInstant="%s" '
             'publicationId="%s"/></md:Extensions>\n'
             % (REGISTRARS[0], rsp_testidp.saml_time(time.time()), time.time_ns())]
    for j in range(max(n_idps, n_sps)):
        if j < n_idps:
            parts.append(_idp_entity(idps[j], [pems[c] for c in idps[j].cert_files]))
        if j < n_sps:
            parts.append(_sp_entity(sps[j], pems[sps[j].cert_file]))
    parts.append("</md:EntitiesDescriptor>\n")
    text = "".join(parts)
    if signed_by:
        text = sign(text, *signed_by)
    path = os.path.join(directory, filename)
    _write(path, text)
    return Federation(path, idps, sps, keys, signed_by, valid_until, time.monotonic() - t0)


def sign(text, key, cert):
    """The aggregate signed by key (rsp_testidp.sign_metadata: one xmlsec1
    run, given a time limit that grows with the file)."""
    old = rsp_testidp.XMLSEC1_TIMEOUT
    rsp_testidp.XMLSEC1_TIMEOUT = max(old, 30 + len(text) // (1 << 20))
    try:
        return '<?xml version="1.0" encoding="UTF-8"?>\n' + rsp_testidp.sign_metadata(
            text, key, cert)
    finally:
        rsp_testidp.XMLSEC1_TIMEOUT = old
