"""The SSH profile (testcloud/sshd.sh): an OpenSSH server on 127.0.0.1 that `compute-01` and `compute-02`
reach through the profile's own ssh config (given to ssh with -F; ~/.ssh is never used)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from tests.testbed import paths

HOSTS = ("compute-01", "compute-02")


@dataclass(frozen=True)
class SshTestbed:
    folder: Path

    @property
    def config(self) -> Path:
        return self.folder / "ssh_config"

    @property
    def identity(self) -> Path:
        return self.folder / "id_ed25519"

    @property
    def known_hosts(self) -> Path:
        return self.folder / "known_hosts"

    def ssh(self) -> str:
        """The start of a log source's command: `ssh -F <config>` (quoted for the template)."""
        return f"ssh -F {shlex.quote(str(self.config))}"


def ssh_testbed() -> SshTestbed:
    return SshTestbed(paths.testcloud_home() / "sshd")
