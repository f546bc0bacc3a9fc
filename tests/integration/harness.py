"""The integration harness, in one namespace: everything the modules below
define, re-exported for scripts (scripts/demo.py, tests/bench/bench.py)
and for code written against the single harness.py it used to be. Tests
import from the module that holds what they use.

=================== ==========================================================
``common``          paths, ``HarnessError``, bounded waits, ports, directories,
                    stopping our children by PID, ``LineClient``
``redis_nodes``     ``RedisClient``, ``RedisServer``, Redis Cluster
                    (``ClusterNode``, ``RedisCluster``), replication helpers
``memcached_nodes`` ``MemcacheClient``, ``MemcacheWatch``, ``MemcachedServer``
``stores``          the store key formulas (``claim_key``, ``session_key``,
                    ...), the ``Store`` interface (``RedisStore``,
                    ``MemcachedStore``, ``ClusterStore``),
                    ``RoundTripCounter``
``httpd_fleet``     ``Httpd``, ``Fleet``, ``sp_conf_body``, ``module_path``,
                    the module's log ``TAGS`` and the error-log gate's rule
``http_client``     ``post_acs``, ``get``, cookies, ``RelayState``
``idp_tools``       the test IdP's import, entity IDs, ``Saml``/``Minted``,
                    SAML times
=================== ==========================================================
"""

from common import *           # noqa: F401,F403
from redis_nodes import *      # noqa: F401,F403
from memcached_nodes import *  # noqa: F401,F403
from stores import *           # noqa: F401,F403
from httpd_fleet import *      # noqa: F401,F403
from http_client import *      # noqa: F401,F403
from idp_tools import *        # noqa: F401,F403
