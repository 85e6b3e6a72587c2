"""WSGI entry for gunicorn: cinder reads its config only from argv / default dirs, so give it ours (and hide
gunicorn's arguments from oslo.config)."""

import sys

sys.argv = [sys.argv[0], "--config-file", "@ROOT@/etc/cinder/cinder.conf", "--log-file", "@ROOT@/logs/cinder-api.log"]

from cinder.wsgi.api import application  # noqa: E402, F401
