import sys
# cinder reads config only from argv/default dirs: give it ours, hide gunicorn args
sys.argv = sys.argv[:1] + ["--config-file", "@ROOT@/etc/cinder/cinder.conf", "--log-file", "@ROOT@/logs/cinder-api.log",
]
from cinder.wsgi.api import application  # noqa
