"""Scenario helpers for stacktop's integration tests, against the real test bed (scripts/testcloud).

Every helper that changes a server is a context manager (or pairs with one) that undoes its change on exit,
also when the test fails. The harness may write to these servers; stacktop itself never does.

  tests.testbed.paths      where the test bed lives (repo scripts, the cache folder, PID files)
  tests.testbed.wait       wait_for(): poll with a deadline (never a fixed sleep)
  tests.testbed.openstack  boot / kill / restart / ERROR / stuck migration / orphan allocation / volume
  tests.testbed.rabbitmq   per-run vhost, queues, pika consumers, publish, memory alarm

Also tooling for the simulator's fault rows (tests/reliability), kept out of the package:
  tests.testbed.faults     TlsKit (https endpoints, the `tls` fault), AmqpEndpoint (a broken broker)
  tests.testbed.mysql_wire MySQLWire: a MySQL-protocol endpoint for a simulated Galera node (pymysql's TLS)
"""
