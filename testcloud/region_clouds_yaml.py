"""Write a clouds.yaml holding one entry: the test cloud's admin (`stacktop-testcloud` of the plain clouds.yaml),
pointed at another region of the same Keystone. Mode 600; rewritten only when its text changes. Used by the
on-demand profiles (ovn.sh, ovn_nova.sh, tls.sh).

usage: region_clouds_yaml.py SRC DST NAME REGION HEADER [auth_url=URL] [cacert=PATH]
"""

from __future__ import annotations

import os
import sys

import yaml


def main() -> int:
    src, dst, name, region, header = sys.argv[1:6]
    extra = dict(arg.split("=", 1) for arg in sys.argv[6:])
    with open(src) as f:
        entry = dict(yaml.safe_load(f)["clouds"]["stacktop-testcloud"])
    if "auth_url" in extra:
        entry["auth"] = dict(entry["auth"], auth_url=extra["auth_url"])
    entry.update(region_name=region, interface="public")
    if "cacert" in extra:
        entry["cacert"] = extra["cacert"]
    text = f"# {header}\n" + yaml.safe_dump({"clouds": {name: entry}}, sort_keys=False)
    old = None
    if os.path.exists(dst):
        with open(dst) as f:
            old = f.read()
    if old != text:
        fd = os.open(dst + ".new", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(dst + ".new", dst)
    return 0


if __name__ == "__main__":
    sys.exit(main())
