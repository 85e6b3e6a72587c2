"""The demo's names and fake credentials, and the dashboard's config before its simulator runs.

`stacktop --demo` paints its first frame before it builds the simulated clouds (at 10,000 instances the
simulator is 0.2-0.4 s of CPU): until then the app runs on shell_config(), which names the same clouds and
configures the same sources, so every pane says it is waiting rather than "not configured"; the simulator's own
config (tui.sim.demo.DemoClouds.config) replaces it before any source starts. Nothing here imports the
simulator.
"""

from __future__ import annotations

from tui.config import CloudConfig, Config, GaleraConfig, OpenStackConfig, RabbitMQConfig, Secret

CLOUD = "stacktop-demo"  # the clouds.yaml entry of every simulated cloud
USERNAME = "admin"
PASSWORD = "stacktop-demo-not-a-secret"  # fake credentials of a fake cloud
PROJECT = "admin"
RABBIT_USER, RABBIT_PASSWORD = "guest", "guest"
GALERA_USER, GALERA_PASSWORD = "monitor", "stacktop-demo"
CLOUDS = ("demo-east", "demo-west")  # `stacktop --demo`: the storyline's cloud, then a quiet one
NOT_STARTED = "simulator not started yet"  # where an address goes until the simulator listens


def shell_config() -> Config:
    """The demo's clouds, every source configured but pointing nowhere yet, and the demo's passwords (the
    journal and the log redact them from their first line)."""
    openstack = OpenStackConfig(cloud=CLOUD, clouds_file=NOT_STARTED)
    rabbitmq = RabbitMQConfig(management_url=NOT_STARTED, user=RABBIT_USER,
                              password=Secret(RABBIT_PASSWORD, "demo"), vhosts=())
    galera = GaleraConfig(nodes=(NOT_STARTED,), user=GALERA_USER, password=Secret(GALERA_PASSWORD, "demo"))
    clouds = tuple(CloudConfig(name, openstack, rabbitmq, galera) for name in CLOUDS)
    return Config(openstack=openstack, rabbitmq=rabbitmq, galera=galera, clouds=clouds, demo=True)
