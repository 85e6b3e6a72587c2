"""nova-compute entry point that registers nova.virt.ovnfake first (the OVN profile's compute-02 driver)."""

import sys

from nova.cmd import compute  # must come first: nova.cmd sets up threading/eventlet mode  # isort: skip

import ovnfake  # noqa: F401  # isort: skip

sys.exit(compute.main())
