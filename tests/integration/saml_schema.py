"""Offline validation of SAML 2.0 metadata against the OASIS schema.

The schemas are Debian's copies shipped by python3-pysaml2
(``saml2/data/schemas``). saml-schema-metadata-2.0.xsd (and the assertion,
xenc schemas it imports) name the W3C schemas it imports by their http://
URLs; nothing here ever fetches them: the five files needed are copied to
a temporary directory with every remote ``schemaLocation`` rewritten to the
local copy (any left over is a SchemaSetupError), and

* the ``xmlschema`` engine (python3-xmlschema, a dependency of
  python3-pysaml2) builds the schema with ``allow="sandbox"`` (only files
  under that directory may be read) and parses the instance with
  ``allow="none"``, ``defuse="always"`` (no DTD entities, no location hints);
* the ``xmllint`` engine (libxml2-utils) runs ``xmllint --nonet`` with a
  timeout.

``validate_metadata(xml_bytes)`` returns a list of error strings (empty:
valid), at most ``limit`` of them. Besides the schema, the document's root
must be md:EntityDescriptor (a lone md:KeyDescriptor is schema-valid, but it
is not an entity's metadata).
"""

import contextlib
import functools
import importlib.util
import io
import os
import re
import shutil
import subprocess
import tempfile

MD_NS = "urn:oasis:names:tc:SAML:2.0:metadata"
DS_NS = "http://www.w3.org/2000/09/xmldsig#"
ROOT = "{%s}EntityDescriptor" % MD_NS

METADATA_XSD = "saml-schema-metadata-2.0.xsd"
# Every file saml-schema-metadata-2.0.xsd needs, transitively.
SCHEMA_FILES = (METADATA_XSD, "saml-schema-assertion-2.0.xsd",
                "xmldsig-core-schema.xsd", "xenc-schema.xsd", "xml.xsd")
# The remote schemaLocations in those files -> the local copy.
REMOTE_LOCATIONS = {
    "http://www.w3.org/TR/2002/REC-xmldsig-core-20020212/xmldsig-core-schema.xsd":
        "xmldsig-core-schema.xsd",
    "http://www.w3.org/TR/2002/REC-xmlenc-core-20021210/xenc-schema.xsd": "xenc-schema.xsd",
    "http://www.w3.org/2001/xml.xsd": "xml.xsd",
}
DEBIAN_SCHEMA_DIR = "/usr/lib/python3/dist-packages/saml2/data/schemas"

XMLLINT = os.environ.get("RSP_XMLLINT", "/usr/bin/xmllint")
XMLLINT_TIMEOUT = 60
DEFAULT_LIMIT = 50

ENGINES = ("xmlschema", "xmllint")

# schemaLocation of an import/include/redefine element (raw "<": not the
# escaped examples in xml.xsd's documentation).
_SCHEMA_LOCATION_RE = re.compile(
    r"""(<(?:\w+:)?(?:import|include|redefine)\b[^>]*?\bschemaLocation\s*=\s*)(["'])([^"']*)\2""")


class SchemaSetupError(RuntimeError):
    """The schemas (or a validator) are missing or would need the network."""


def schema_source_dir():
    """The directory holding the OASIS schemas: RSP_SAML_SCHEMA_DIR, else
    pysaml2's (as this interpreter sees it), else Debian's path."""
    env = os.environ.get("RSP_SAML_SCHEMA_DIR")
    candidates = [env] if env else []
    try:
        spec = importlib.util.find_spec("saml2")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin:
        candidates.append(os.path.join(os.path.dirname(spec.origin), "data", "schemas"))
    candidates.append(DEBIAN_SCHEMA_DIR)
    for d in candidates:
        if d and all(os.path.isfile(os.path.join(d, f)) for f in SCHEMA_FILES):
            return d
    raise SchemaSetupError(
        "SAML 2.0 schemas (%s) not found in %s: install python3-pysaml2 or set "
        "RSP_SAML_SCHEMA_DIR" % (", ".join(SCHEMA_FILES), " or ".join(c for c in candidates if c)))


def localize(text):
    """A schema's text with every known remote schemaLocation replaced by the
    local file name; SchemaSetupError if a schemaLocation that is not a local
    file name remains."""
    def repl(m):
        loc = m.group(3)
        return "%s%s%s%s" % (m.group(1), m.group(2), REMOTE_LOCATIONS.get(loc, loc), m.group(2))
    out = _SCHEMA_LOCATION_RE.sub(repl, text)
    for m in _SCHEMA_LOCATION_RE.finditer(out):
        loc = m.group(3)
        if "/" in loc or ":" in loc or loc not in SCHEMA_FILES:
            raise SchemaSetupError("schemaLocation %r is not one of the local copies" % loc)
    return out


@contextlib.contextmanager
def local_schemas():
    """A temporary directory with the localized schema files; removed after."""
    src = schema_source_dir()
    d = tempfile.mkdtemp(prefix="rsp-saml-xsd-")
    try:
        for name in SCHEMA_FILES:
            with open(os.path.join(src, name), encoding="utf-8") as f:
                text = f.read()
            with open(os.path.join(d, name), "w", encoding="utf-8") as f:
                f.write(localize(text))
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@functools.lru_cache(maxsize=None)
def xmlschema_metadata_schema():
    """The metadata schema as an xmlschema.XMLSchema, built once per process
    from the local copies (fully built in memory: the directory is removed
    afterwards, so a later lazy load could not silently go anywhere)."""
    try:
        import xmlschema
    except ImportError as e:
        raise SchemaSetupError("python3-xmlschema is not installed (%s)" % e)
    with local_schemas() as d:
        try:
            schema = xmlschema.XMLSchema(os.path.join(d, METADATA_XSD), allow="sandbox",
                                         base_url=d, timeout=10, build=True)
        except Exception as e:   # any failure here is a set-up problem, not a verdict
            raise SchemaSetupError("cannot build %s with xmlschema: %s" % (METADATA_XSD, e))
    if MD_NS not in schema.maps.namespaces or DS_NS not in schema.maps.namespaces:
        raise SchemaSetupError("the metadata schema was built without the md or ds namespace")
    return schema


def _root_error(xml_bytes):
    """An error string when the document is not well-formed or its root is not
    md:EntityDescriptor, else None (no DTD, no entities: refused)."""
    import xml.etree.ElementTree as ET
    if re.search(rb"<!DOCTYPE|<!ENTITY", xml_bytes[:4096]):
        return "document has a DOCTYPE/ENTITY declaration (not accepted)"
    try:
        root = ET.fromstring(xml_bytes)
    except ET.ParseError as e:
        return "not well-formed XML: %s" % e
    if root.tag != ROOT:
        return "root element is %s, expected %s" % (root.tag, ROOT)
    return None


def _validate_xmlschema(xml_bytes, limit):
    import xmlschema
    schema = xmlschema_metadata_schema()
    errors = []
    try:
        resource = xmlschema.XMLResource(io.BytesIO(xml_bytes), allow="none",
                                         defuse="always", timeout=10)
        for err in schema.iter_errors(resource):
            errors.append("%s: %s" % (err.path or "?", err.reason or err.message))
            if len(errors) >= limit:
                break
    except Exception as e:    # unparsable input: a verdict, not a set-up error
        first = str(e).splitlines()[0] if str(e) else ""
        errors.append("xmlschema: %s: %s" % (type(e).__name__, first))
    return errors


def _validate_xmllint(xml_bytes, limit):
    if not os.access(XMLLINT, os.X_OK):
        raise SchemaSetupError("%s not found (install libxml2-utils)" % XMLLINT)
    with local_schemas() as d:
        doc = os.path.join(d, "instance.xml")
        with open(doc, "wb") as f:
            f.write(xml_bytes)
        try:
            r = subprocess.run([XMLLINT, "--nonet", "--noout", "--schema",
                                os.path.join(d, METADATA_XSD), doc],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=XMLLINT_TIMEOUT, cwd=d)
        except subprocess.TimeoutExpired:
            return ["xmllint did not finish within %ds" % XMLLINT_TIMEOUT]
    out = r.stderr.decode("utf-8", "replace").splitlines()
    if r.returncode == 5:   # xmllint: "error in schema compilation"
        raise SchemaSetupError("xmllint could not compile the schema:\n" + "\n".join(out[:20]))
    if r.returncode == 0:
        return []
    errors = [line.replace(doc, "instance.xml") for line in out
              if line.strip() and not line.endswith(" fails to validate")]
    return (errors or ["xmllint exited with %d" % r.returncode])[:limit]


def validate_metadata(xml_bytes, engine="xmlschema", limit=DEFAULT_LIMIT):
    """Validate one SAML 2.0 metadata document (bytes or str) against
    saml-schema-metadata-2.0.xsd, offline. Returns a list of at most
    ``limit`` error strings; empty means valid. SchemaSetupError when the
    schemas or the engine are missing (not a verdict on the document)."""
    if isinstance(xml_bytes, str):
        xml_bytes = xml_bytes.encode("utf-8")
    if engine not in ENGINES:
        raise ValueError("unknown engine %r (one of %s)" % (engine, ", ".join(ENGINES)))
    errors = []
    root_err = _root_error(xml_bytes)
    if root_err:
        errors.append(root_err)
        if not root_err.startswith("root element"):
            return errors
    if engine == "xmlschema":
        errors.extend(_validate_xmlschema(xml_bytes, limit))
    else:
        errors.extend(_validate_xmllint(xml_bytes, limit))
    return errors[:limit]
