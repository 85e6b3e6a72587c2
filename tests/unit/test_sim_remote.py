"""The simulator in its own process (spawn_demo / python -m tui.sim) has the same controls as in process."""

from __future__ import annotations

import pymysql
import pytest

from tests.fresh_python import fresh_python
from tui.errors import SourceError
from tui.openstack import connect
from tui.sim import spawn_demo


def test_spawned_demo_serves_and_obeys_its_controls():
    with spawn_demo(instances=50, hosts=4, queues=30, churn=0, manual=True, start=1_790_000_000) as demo:
        client = connect(demo.config().openstack)
        assert len(client.servers()) == 50
        assert demo.stats()["requests"]["compute"] >= 1
        demo.advance(61)  # past the storyline's quorum loss
        conn = demo.galera_connector("sim-db-1:3306", "monitor", "stacktop-demo", 2.0)
        assert dict(conn.query("SHOW GLOBAL STATUS LIKE 'wsrep_ready'")) == {"wsrep_ready": "OFF"}
        kept = conn._conn
        assert dict(conn.query("SHOW GLOBAL STATUS LIKE 'wsrep_ready'")) == {"wsrep_ready": "OFF"}
        assert conn._conn is kept and kept.sock is not None, "one keep-alive connection per node, like pymysql's"
        kept.sock.close()  # a broken connection is opened again
        assert dict(conn.query("SHOW GLOBAL STATUS LIKE 'wsrep_ready'")) == {"wsrep_ready": "OFF"}
        with pytest.raises(pymysql.err.OperationalError) as err:
            demo.galera_connector("sim-db-2:3306", "monitor", "stacktop-demo", 2.0)
        assert err.value.args[0] == 2003
        demo.keystone_refusing(True)
        with pytest.raises(SourceError, match="connection refused"):
            connect(demo.config().openstack).compute_services()
        names = [name for _, name, _ in demo.story()]
        assert names[:3] == ["loop_start", "novalidhost_boot", "stuck_boot"]
    assert demo.proc.returncode == 0


def test_false_flags_reach_the_spawned_simulator():
    """spawn_demo(storyline=False) once dropped the False flag, so the child looped the storyline anyway (the
    idle and steady benchmarks measured a compute dying, a memory alarm and a quorum loss)."""
    from tui.sim.__main__ import parser
    from tui.sim.control import sim_args

    args = parser().parse_args(sim_args(storyline=False, manual=True, warm=False, churn=0.0))
    assert (args.storyline, args.manual, args.warm, args.churn) == (False, True, False, 0.0)
    assert parser().parse_args(sim_args(storyline=True)).storyline is True
    with spawn_demo(instances=20, hosts=2, queues=10, churn=0, manual=True, storyline=False,
                    start=1_790_000_000) as demo:
        demo.advance(61)  # past the storyline's first events, had it been running
        assert demo.story() == []
        conn = demo.galera_connector("sim-db-2:3306", "monitor", "stacktop-demo", 2.0)
        assert dict(conn.query("SHOW GLOBAL STATUS LIKE 'wsrep_ready'")) == {"wsrep_ready": "ON"}


def test_the_remote_galera_client_does_not_import_the_simulator() -> None:
    """The benchmark's app reaches the simulator's Galera through tui.sim.remote_galera: importing it must not
    build the simulator (tui.sim.demo, its engine and APIs: ~50 ms on the first triage's critical path)."""
    code = ("import sys\nimport tui.sim.remote_galera\n"
            "print(sorted(m for m in sys.modules if m.startswith('tui.sim.') and m != 'tui.sim.remote_galera'))\n")
    stdout = fresh_python(code)
    assert stdout.strip() == "[]"
