"""Fleet test h: an unexpected [error] or [warn] line in any replica's
error log fails the test that caused it (the gate in conftest.py)."""

import os
import subprocess
import sys
import textwrap

import pytest

import common
from http_client import post_acs
from httpd_fleet import TAGS
from conftest import unexpected_log_lines
from test_fleet import sign_in

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.expect_log("replay_refused")
def test_h_gate_sees_an_undeclared_line_on_the_replica_that_wrote_it(fleet, saml):
    m = saml.mint()
    sign_in(fleet, m)
    offsets = {h: h.log_size() for h in fleet.instances}
    r = post_acs(fleet.replicas[1].base_url, m.b64)
    assert r.status_code == 403
    bad = unexpected_log_lines(fleet.instances, (), offsets)
    assert list(bad) == ["replica2"], bad
    assert len(bad["replica2"]) == 1 and TAGS["replay_refused"] in bad["replica2"][0]
    assert unexpected_log_lines(fleet.instances, (TAGS["replay_refused"],), offsets) == {}


INNER_CONFTEST = '''
import importlib.util, sys
sys.path.insert(0, %(here)r)
_spec = importlib.util.spec_from_file_location("rsp_outer_conftest", %(conftest)r)
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)
globals().update({k: v for k, v in vars(_mod).items() if not k.startswith("__")})
'''

INNER_TESTS = '''
import pytest
from http_client import post_acs

def _replay(fleet, saml):
    m = saml.mint()
    assert post_acs(fleet.public, m.b64).status_code == 303
    assert post_acs(fleet.public, m.b64).status_code == 403

def test_undeclared_replay(fleet, saml):
    _replay(fleet, saml)

@pytest.mark.expect_log("replay_refused")
def test_declared_replay(fleet, saml):
    _replay(fleet, saml)

def test_quiet_sign_in(fleet, saml):
    m = saml.mint()
    assert post_acs(fleet.public, m.b64).status_code == 303
'''


def test_h_gate_fails_the_test_that_caused_the_line(workdir, module_so):
    """A separate pytest run (own Redis, fleet, IdPs) with three tests: the
    one that causes a replay without declaring it FAILS, naming the line;
    the same test with the tag declared, and a quiet one, pass."""
    d = common.make_dir(os.path.join(workdir, "gate-meta"))
    with open(os.path.join(d, "conftest.py"), "w") as f:
        f.write(INNER_CONFTEST % {"here": HERE, "conftest": os.path.join(HERE, "conftest.py")})
    with open(os.path.join(d, "test_inner.py"), "w") as f:
        f.write(textwrap.dedent(INNER_TESTS))
    with open(os.path.join(d, "pytest.ini"), "w") as f:
        f.write("[pytest]\naddopts = -p no:cacheprovider\nmarkers =\n    expect_log: see outer conftest\n")
    # One backend is enough to show the gate (it does not depend on the store).
    env = dict(os.environ, RSP_MODULE=module_so, PYTHONDONTWRITEBYTECODE="1", RSP_TEST_TMPDIR=d,
               RSP_BACKENDS="redis")
    env.pop("RSP_KEEP_TMP", None)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", d],
                       cwd=d, env=env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    out = r.stdout.decode("utf-8", "replace")
    assert r.returncode == 1, out
    assert "FAILED test_inner.py::test_undeclared_replay" in out, out
    assert "PASSED test_inner.py::test_declared_replay" in out, out
    assert "PASSED test_inner.py::test_quiet_sign_in" in out, out
    assert "error-log gate" in out and TAGS["replay_refused"] in out, out
    assert "1 failed, 2 passed" in out, out
