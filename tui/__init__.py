"""stacktop: a terminal dashboard for the on-call engineer of an OpenStack cloud."""

__version__ = "0.1.0"
