"""Bad configuration: `apache2 -t` (configtest) fails and httpd refuses to
start, with a message that names the directive. Note: `-t` runs httpd's
pre_config, directive setters, check_config and test_config hooks, but NOT
post_config; checks done only in post_config are invisible to configtest."""

import os

import pytest

import common
import memcached_nodes
from common import HarnessError
from httpd_fleet import Httpd, sp_conf_body


@pytest.fixture
def make_instance(workdir, module_so, sp_config):
    made = []

    def make(name, store_url="redis://127.0.0.1:6379/0", sp_overrides=None,
             server_extra="", location_extra=""):
        sp = dict(sp_config)
        sp.update(sp_overrides or {})
        h = Httpd(os.path.join(workdir, "config", name), "cfg-" + name,
                  modules=[("replay_sp_module", module_so)],
                  log_level="warn replay_sp:info", threads=4, start_servers=1,
                  body=sp_conf_body(store_url, sp, server_extra, location_extra))
        made.append(h)
        return h
    yield make
    for h in made:
        h.stop()


@pytest.fixture
def garbage_file(workdir):
    d = common.make_dir(os.path.join(workdir, "config-files"))
    p = os.path.join(d, "garbage.txt")
    with open(p, "w") as f:
        f.write("this is neither a PEM key nor SAML metadata\n")
    os.chmod(p, 0o644)
    return p


def test_good_configuration_passes_configtest_and_starts(make_instance, redis):
    h = make_instance("good", store_url=redis.url)
    rc, out = h.configtest()
    assert rc == 0 and "Syntax OK" in out, out
    h.start()
    assert h.running()
    h.stop()


def test_good_memcache_configuration_passes_configtest_and_starts(make_instance, workdir):
    """Two memcached servers, in order (the order is the key mapping)."""
    servers = [memcached_nodes.MemcachedServer(os.path.join(workdir, "config", "mc-" + n))
               for n in "ab"]
    try:
        for m in servers:
            m.start()
        url = "memcache://" + ",".join(m.address for m in servers)
        h = make_instance("good-memcache", store_url=url,
                          server_extra="ReplaySPStoreTimeout 500")
        rc, out = h.configtest()
        assert rc == 0 and "Syntax OK" in out, out
        h.start()
        assert h.running()
        h.stop()
    finally:
        for m in servers:
            m.stop()


BAD = [
    # (case, directive expected in the message, make_instance kwargs)
    ("store_scheme", "ReplaySPStore", dict(store_url="http://127.0.0.1:6379/0")),
    ("store_port_text", "ReplaySPStore", dict(store_url="redis://127.0.0.1:notaport/0")),
    ("store_port_range", "ReplaySPStore", dict(store_url="redis://127.0.0.1:70000/0")),
    ("store_no_host", "ReplaySPStore", dict(store_url="redis://:6379/0")),
    ("store_db_text", "ReplaySPStore", dict(store_url="redis://127.0.0.1:6379/zero")),
    ("store_unix_relative", "ReplaySPStore", dict(store_url="redis+unix://relative/redis.sock")),
    ("memcache_no_port", "ReplaySPStore", dict(store_url="memcache://127.0.0.1")),
    ("memcache_no_server", "ReplaySPStore", dict(store_url="memcache://")),
    ("memcache_empty_member", "ReplaySPStore", dict(store_url="memcache://127.0.0.1:11211,")),
    ("memcache_listed_twice", "ReplaySPStore",
     dict(store_url="memcache://127.0.0.1:11211,127.0.0.1:11211")),
    ("memcache_path", "ReplaySPStore", dict(store_url="memcache://127.0.0.1:11211/0")),
    ("memcache_credentials", "ReplaySPStore", dict(store_url="memcache://u:p@127.0.0.1:11211")),
    ("memcache_port_range", "ReplaySPStore", dict(store_url="memcache://127.0.0.1:0")),
    ("cluster_db", "ReplaySPStore", dict(store_url="redis+cluster://127.0.0.1:7000/1")),
    ("cluster_no_node", "ReplaySPStore", dict(store_url="redis+cluster://")),
    ("prefix_hash_tag", "ReplaySPStoreKeyPrefix",
     dict(server_extra="ReplaySPStoreKeyPrefix rsp{a}:")),
    ("key_missing", "ReplaySPKeyFile", dict(sp_overrides={"key_file": "/nonexistent/rsp/sp.key"})),
    ("key_garbage", "ReplaySPKeyFile", dict(sp_overrides={"key_file": "@garbage"})),
    ("cert_missing", "ReplaySPCertFile", dict(sp_overrides={"cert_file": "/nonexistent/rsp/sp.crt"})),
    ("metadata_missing", "ReplaySPIdPMetadataFile",
     dict(sp_overrides={"idp_metadata": ["/nonexistent/rsp/idp.xml"]})),
    ("metadata_garbage", "ReplaySPIdPMetadataFile", dict(sp_overrides={"idp_metadata": ["@garbage"]})),
    ("default_idp_unknown", "ReplaySPDefaultIdP",
     dict(sp_overrides={"default_idp": "https://unknown.test.example/idp"})),
    ("discovery_stylesheet_http", "ReplaySPDiscoveryStylesheet",
     dict(location_extra="ReplaySPDiscoveryStylesheet http://cdn.example/d.css")),
    ("timeout_text", "ReplaySPStoreTimeout", dict(server_extra="ReplaySPStoreTimeout soon")),
    ("skew_negative", "ReplaySPClockSkew", dict(location_extra="ReplaySPClockSkew -5")),
    ("window_zero", "ReplaySPMaxAssertionWindow", dict(location_extra="ReplaySPMaxAssertionWindow 0")),
    ("discovery_relative", "ReplaySPDiscoveryURL", dict(location_extra="ReplaySPDiscoveryURL /ds")),
    ("discovery_scheme", "ReplaySPDiscoveryURL",
     dict(location_extra="ReplaySPDiscoveryURL ftp://ds.example/")),
    ("discovery_fragment", "ReplaySPDiscoveryURL",
     dict(location_extra="ReplaySPDiscoveryURL https://ds.example/#x")),
]


@pytest.mark.parametrize("case,directive,kw", BAD, ids=[b[0] for b in BAD])
def test_bad_configuration_refused_with_the_directive_named(make_instance, garbage_file,
                                                            case, directive, kw):
    kw = dict(kw)
    if "sp_overrides" in kw:
        kw["sp_overrides"] = {k: ([garbage_file if x == "@garbage" else x for x in v]
                                  if isinstance(v, list) else (garbage_file if v == "@garbage" else v))
                              for k, v in kw["sp_overrides"].items()}
    h = make_instance(case, **kw)
    rc, out = h.configtest()
    assert rc != 0, "%s: configtest passed:\n%s" % (case, out)
    assert directive in out, "%s: configtest output does not name %s:\n%s" % (case, directive, out)
    with pytest.raises(HarnessError) as ei:
        h.start()
    assert not h.running()
    assert directive in str(ei.value), str(ei.value)
    # the refusal's own log lines were expected (and checked just above)
    h.gate_offset = h.log_size()


@pytest.fixture(scope="module")
def enc_files(workdir, testidp):
    """Two RSA pairs and an EC pair for the encryption directives."""
    import subprocess
    d = common.make_dir(os.path.join(workdir, "config-enc"))
    out = {}
    for name in ("a", "b"):
        out[name] = testidp.make_keypair(d, "enc-" + name, "rsp config " + name)
    key, cert = os.path.join(d, "ec.key"), os.path.join(d, "ec.crt")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "30", "-subj", "/CN=rsp config ec"],
                   check=True, capture_output=True, timeout=60)
    out["ec"] = (key, cert)
    for k, _ in out.values():
        os.chmod(k, 0o644)
    return out


def _enc(key=None, cert=None, flag=""):
    lines = []
    if key:
        lines.append('ReplaySPEncryptionKeyFile "%s"' % key)
    if cert:
        lines.append('ReplaySPEncryptionCertFile "%s"%s' % (cert, flag))
    return "\n".join(lines)


ENC_BAD = [
    # (case, directive named, location_extra from the pairs {a, b, ec})
    ("key_without_cert", "ReplaySPEncryptionCertFile", lambda f: _enc(key=f["a"][0])),
    ("cert_without_key", "ReplaySPEncryptionCertFile", lambda f: _enc(cert=f["a"][1])),
    ("key_of_another_cert", "ReplaySPEncryptionCertFile",
     lambda f: _enc(key=f["a"][0], cert=f["b"][1])),
    ("not_rsa", "ReplaySPEncryptionKeyFile", lambda f: _enc(key=f["ec"][0], cert=f["ec"][1])),
    ("key_missing", "ReplaySPEncryptionKeyFile",
     lambda f: _enc(key="/nonexistent/rsp/enc.key", cert=f["a"][1])),
    ("key_garbage", "ReplaySPEncryptionKeyFile", lambda f: _enc(key=f["a"][1], cert=f["a"][1])),
    ("published_twice", "ReplaySPEncryptionCertFile",
     lambda f: _enc(key=f["a"][0], cert=f["a"][1], flag=" publish") + "\n"
     + _enc(key=f["b"][0], cert=f["b"][1], flag=" publish")),
    ("unknown_option", "ReplaySPEncryptionCertFile",
     lambda f: _enc(key=f["a"][0], cert=f["a"][1], flag=" please")),
    ("option_on_the_key", "ReplaySPEncryptionKeyFile",
     lambda f: 'ReplaySPEncryptionKeyFile "%s" publish\n' % f["a"][0] + _enc(cert=f["a"][1])),
    ("sha1_for_an_unknown_idp", "ReplaySPAllowSHA1",
     lambda f: "ReplaySPAllowSHA1 https://not-an-idp-of-this-sp.example/idp"),
]


@pytest.mark.parametrize("case,directive,extra", ENC_BAD, ids=[b[0] for b in ENC_BAD])
def test_bad_encryption_configuration_refused_with_the_directive_named(make_instance, enc_files,
                                                                       case, directive, extra):
    h = make_instance("enc-" + case, location_extra=extra(enc_files))
    rc, out = h.configtest()
    assert rc != 0, "%s: configtest passed:\n%s" % (case, out)
    assert directive in out, "%s: configtest output does not name %s:\n%s" % (case, directive, out)
    with pytest.raises(HarnessError):
        h.start()
    assert not h.running()
    h.gate_offset = h.log_size()


def test_good_encryption_configuration_passes_configtest(make_instance, enc_files, redis, idps):
    h = make_instance("enc-good", store_url=redis.url, location_extra="\n".join([
        _enc(key=enc_files["a"][0], cert=enc_files["a"][1]),
        _enc(key=enc_files["b"][0], cert=enc_files["b"][1], flag=" publish"),
        'ReplaySPAllowSHA1 "%s"' % idps["idp2"].entity_id]))
    rc, out = h.configtest()
    assert rc == 0 and "Syntax OK" in out, out
    h.start()
    assert h.running()
    h.stop()


def _guard(*lines, section="<Location /mellon/postResponse>", mode="On"):
    end = "</%s>" % section[1:].split()[0].rstrip(">")
    return "%s\n    ReplaySPGuard %s\n%s\n%s" % (section, mode,
                                               "\n".join("    " + l for l in lines), end)


def _guard_in(section, mode="On"):
    """A complete guard, in another kind of section than a plain <Location>."""
    return lambda f, md: _guard("ReplaySPEntityID https://sp.example/mellon",
                                'ReplaySPIdPMetadataFile "%s"' % md, section=section,
                                mode=mode)


GUARD_BAD = [
    ("no_entity_id", "ReplaySPEntityID", lambda f, md: _guard('ReplaySPIdPMetadataFile "%s"' % md)),
    ("no_idp_metadata", "ReplaySPIdPMetadataFile",
     lambda f, md: _guard("ReplaySPEntityID https://sp.example/mellon")),
    ("signing_key", "ReplaySPKeyFile",
     lambda f, md: _guard("ReplaySPEntityID https://sp.example/mellon",
                          'ReplaySPIdPMetadataFile "%s"' % md,
                          'ReplaySPKeyFile "%s"' % f["a"][0])),
    ("decryption_key_not_rsa", "ReplaySPEncryptionKeyFile",
     lambda f, md: _guard("ReplaySPEntityID https://sp.example/mellon",
                          'ReplaySPIdPMetadataFile "%s"' % md,
                          'ReplaySPEncryptionKeyFile "%s"' % f["ec"][0])),
    ("decryption_key_of_another_cert", "ReplaySPEncryptionCertFile",
     lambda f, md: _guard("ReplaySPEntityID https://sp.example/mellon",
                          'ReplaySPIdPMetadataFile "%s"' % md,
                          'ReplaySPEncryptionKeyFile "%s"' % f["a"][0],
                          'ReplaySPEncryptionCertFile "%s"' % f["b"][1])),
    ("guard_not_a_mode", "give On, Report", lambda f, md: _guard("ReplaySPGuard maybe")),
    # the guard refuses every other spelling of its path: it must know the path
    ("guard_in_location_match", "ReplaySPGuard", _guard_in("<LocationMatch ^/mellon/post>")),
    ("guard_in_regex_location", "ReplaySPGuard", _guard_in('<Location ~ "^/mellon/post">')),
    ("guard_in_directory", "ReplaySPGuard", _guard_in("<Directory /tmp>")),
    ("guard_report_in_directory", "ReplaySPGuard Report", _guard_in("<Directory /tmp>", "Report")),
    ("guard_report_with_wildcard", "ReplaySPGuard Report",
     _guard_in("<Location /mellon/post*>", "Report")),
    ("guard_report_no_entity_id", "ReplaySPEntityID",
     lambda f, md: _guard('ReplaySPIdPMetadataFile "%s"' % md, mode="Report")),
    ("guard_with_wildcard", "ReplaySPGuard", _guard_in("<Location /mellon/post*>")),
    ("guard_path_parameter", "ReplaySPGuard", _guard_in("<Location /mellon/postResponse;x>")),
    ("guard_path_escaped", "ReplaySPGuard", _guard_in("<Location /mellon/post%52esponse>")),
    ("guard_path_dot_segment", "ReplaySPGuard", _guard_in("<Location /mellon/../postResponse>")),
]


@pytest.mark.parametrize("case,directive,extra", GUARD_BAD, ids=[b[0] for b in GUARD_BAD])
def test_bad_guard_configuration_refused_with_the_directive_named(make_instance, enc_files, idps,
                                                                  case, directive, extra):
    h = make_instance("guard-" + case,
                      server_extra=extra(enc_files, idps["idp1"].metadata_path))
    rc, out = h.configtest()
    assert rc != 0, "%s: configtest passed:\n%s" % (case, out)
    assert directive in out, "%s: configtest output does not name %s:\n%s" % (case, directive, out)
    with pytest.raises(HarnessError):
        h.start()
    h.gate_offset = h.log_size()


@pytest.mark.parametrize("mode", ["On", "Report", "report"])
def test_good_guard_configuration_passes_configtest(make_instance, enc_files, redis, idps, mode):
    """A guard needs only the SP's entityID, its IdPs and, where the IdP
    encrypts, the key the SP decrypts with (no certificate)."""
    h = make_instance("guard-good-" + mode, store_url=redis.url, server_extra=_guard(
        "ReplaySPEntityID https://sp.example/mellon",
        'ReplaySPIdPMetadataFile "%s"' % idps["idp1"].metadata_path,
        'ReplaySPEncryptionKeyFile "%s"' % enc_files["a"][0], mode=mode))
    rc, out = h.configtest()
    assert rc == 0 and "Syntax OK" in out, out
    h.start()
    assert h.running()
    h.stop()


@pytest.mark.parametrize("scope,why", [
    (("(unclosed", True), "regular expression (unclosed"),
    (" ", "an empty shibmd:Scope"),
])
def test_bad_scope_in_idp_metadata_refused(make_instance, workdir, idps, testidp, scope, why):
    """An IdP metadata file whose shibmd:Scope cannot be used: refused at
    configtest, naming the file, the IdP and why."""
    d = common.make_dir(os.path.join(workdir, "config-scopes"))
    path = os.path.join(d, "idp-%d.xml" % len(os.listdir(d)))
    idp = idps["idp1"]
    with open(path, "w") as f:
        f.write(testidp.idp_metadata(idp.entity_id, idp.sso_url, idp.cert_path,
                                     scopes=(scope,)))
    h = make_instance("bad-scope-%d" % len(os.listdir(d)),
                      sp_overrides={"idp_metadata": [path], "default_idp": None})
    rc, out = h.configtest()
    assert rc != 0, out
    assert path in out and idp.entity_id in out and why in out, out
    h.gate_offset = h.log_size()


def _mdq(base="http://127.0.0.1:9/mdq/", cert="@cert", cache="@cache"):
    return 'ReplaySPIdPMetadataQuery %s "%s" "%s"' % (base, cert, cache)


MDQ_BAD = [
    # (case, what the message says, sp overrides, location_extra)
    ("scheme", "not an http:// or https:// URL", {}, _mdq(base="ftp://mdq.example/")),
    ("query", "no query or fragment", {}, _mdq(base="https://mdq.example/?x=1")),
    ("twice", "given twice", {}, _mdq() + "\n" + _mdq()),
    ("cache_dir_missing", "is not a directory", {}, _mdq(cache="/nonexistent/rsp/mdq")),
    ("cache_dir_a_file", "is not a directory", {}, _mdq(cache="@cert")),
    ("cert_missing", "its certificate: cannot read /nonexistent", {}, _mdq(cert="/nonexistent/rsp/mdq.crt")),
    ("cert_garbage", "not a PEM certificate", {}, _mdq(cert="@garbage")),
    ("alone_without_discovery", "no IdP is known before it is asked for",
     {"idp_metadata": [], "default_idp": None}, _mdq()),
]


@pytest.mark.parametrize("case,says,sp,extra", MDQ_BAD, ids=[b[0] for b in MDQ_BAD])
def test_bad_mdq_configuration_refused(make_instance, garbage_file, workdir, sp_keys, case,
                                       says, sp, extra):
    """ReplaySPIdPMetadataQuery: each bad use refused at configtest, the
    message naming the directive and what is wrong."""
    cache = common.make_dir(os.path.join(workdir, "config-mdq-cache"))
    extra = (extra.replace("@cert", sp_keys[1]).replace("@cache", cache)
             .replace("@garbage", garbage_file))
    h = make_instance("mdq-" + case, sp_overrides=sp, location_extra=extra)
    rc, out = h.configtest()
    assert rc != 0, "%s: configtest passed:\n%s" % (case, out)
    assert "ReplaySPIdPMetadataQuery" in out and says in out, "%s:\n%s" % (case, out)
    with pytest.raises(HarnessError):
        h.start()
    assert not h.running()
    h.gate_offset = h.log_size()


def test_mdq_alone_with_a_discovery_service_passes_configtest(make_instance, workdir, sp_keys,
                                                              redis):
    """MDQ alone, no metadata file: good with ReplaySPDiscoveryURL (and with
    ReplaySPDefaultIdP naming an IdP no file lists); httpd starts."""
    cache = common.make_dir(os.path.join(workdir, "config-mdq-cache"))
    for name, sp, extra in (
            ("ds", {"idp_metadata": [], "default_idp": None},
             "ReplaySPDiscoveryURL https://ds.example.org/ds"),
            ("default", {"idp_metadata": [], "default_idp": "https://idp.mdq.example/idp"}, "")):
        h = make_instance("mdq-good-" + name, store_url=redis.url, sp_overrides=sp,
                          location_extra=_mdq(cert=sp_keys[1], cache=cache) + "\n" + extra)
        rc, out = h.configtest()
        assert rc == 0, "%s:\n%s" % (name, out)
        h.start()
        assert h.running()
        h.stop()
