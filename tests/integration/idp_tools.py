"""The IdP's side of the integration tests.

* The test IdP (tests/idp/rsp_testidp.py, python3-lasso) is imported from
  ``IDP_DIR`` by ``import_testidp()``; its ``TestIdP`` mints signed SAML
  responses in-process.
* The entity IDs the tests use: ``SP_ENTITY_ID`` (the fleet's SP),
  ``IDP1_ENTITY_ID`` and ``IDP2_ENTITY_ID`` (configured on the SP; a rogue
  IdP reuses idp1's with another key), ``UNKNOWN_ENTITY_ID`` (an IdP the
  SP does not know).
* ``Saml`` mints responses for a fleet's SP (its entity ID, its public ACS
  URL) and returns ``Minted``: the base64 response, its assertion ID and
  issuer, its claim key and the end of its validity window.
* SAML times: ``saml_epoch`` (xs:dateTime to epoch seconds),
  ``window_end_of`` (the end of a response's validity window).

The IdPs as fixtures (``idps``, ``testidp``) are in conftest.py; the
pysaml2 IdP of test_interop.py is in tests/interop.
"""

import base64
import re
import sys
import time

from common import IDP_DIR
from stores import claim_key

SP_ENTITY_ID = "https://sp.rsp.test.example/saml/metadata"
IDP1_ENTITY_ID = "https://idp.test.example/idp"
IDP2_ENTITY_ID = "https://idp2.test.example/idp"
UNKNOWN_ENTITY_ID = "https://unknown-idp.test.example/idp"


def import_testidp():
    """The rsp_testidp module (tests/idp); ImportError when it (or
    python3-lasso) cannot be imported."""
    if IDP_DIR not in sys.path:
        sys.path.insert(0, IDP_DIR)
    import rsp_testidp
    return rsp_testidp


class Minted:
    """A minted response and what the tests need to know about it."""

    def __init__(self, b64, assertion_id, issuer):
        self.b64 = b64
        self.assertion_id = assertion_id
        self.issuer = issuer

    @property
    def key(self):
        return claim_key(self.issuer, self.assertion_id)

    @property
    def window_end(self):
        return window_end_of(self.b64)


class Saml:
    """Mints responses for the fleet's SP (entity ID, public ACS URL)."""

    def __init__(self, idps, sp_entity_id, acs_url, testidp):
        self.idps = idps
        self.sp_entity_id = sp_entity_id
        self.acs_url = acs_url
        self.testidp = testidp

    def user(self, name_id, idp="idp1"):
        """REMOTE_USER of name_id from idp at the fleet's SP, which trusts
        more than one IdP: qualified (ReplaySPQualifyUser's default)."""
        return "%s!%s!%s" % (self.idps[idp].entity_id, self.sp_entity_id, name_id)

    def mint(self, idp="idp1", assertion_id=None, **kw):
        i = self.idps[idp]
        aid = assertion_id or self.testidp.random_id()
        b64 = i.mint(self.sp_entity_id, self.acs_url, assertion_id=aid, **kw)
        return Minted(b64, aid, kw.get("issuer") or i.entity_id)


# --------------------------------------------------------------------------
# SAML times
# --------------------------------------------------------------------------

def saml_epoch(text):
    """xs:dateTime (UTC, 'Z', optional fraction) -> epoch seconds (float)."""
    import calendar
    m = re.match(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?Z$", text)
    if not m:
        raise ValueError("unexpected xs:dateTime %r" % text)
    t = calendar.timegm(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S"))
    return t + (float(m.group(2)) if m.group(2) else 0.0)


def window_end_of(b64):
    """min(SubjectConfirmationData NotOnOrAfter, Conditions NotOnOrAfter) of
    the (first) assertion in a base64 Response, as epoch seconds; None when
    neither is present."""
    import xml.etree.ElementTree as ET
    saml = "urn:oasis:names:tc:SAML:2.0:assertion"
    root = ET.fromstring(base64.b64decode(b64))
    a = root.find("{%s}Assertion" % saml)
    ends = []
    scd = a.find("{%s}Subject/{%s}SubjectConfirmation/{%s}SubjectConfirmationData" % (saml, saml, saml))
    if scd is not None and scd.get("NotOnOrAfter"):
        ends.append(saml_epoch(scd.get("NotOnOrAfter")))
    cond = a.find("{%s}Conditions" % saml)
    if cond is not None and cond.get("NotOnOrAfter"):
        ends.append(saml_epoch(cond.get("NotOnOrAfter")))
    return min(ends) if ends else None
