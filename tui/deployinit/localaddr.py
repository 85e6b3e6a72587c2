"""The IPv4 address of a network interface of this host (kolla's `'api' | kolla_address` for a host reached with
ansible_connection=local: the deployment host itself). Read with the SIOCGIFADDR ioctl; nothing is changed."""

from __future__ import annotations

import ipaddress
import socket
import struct

SIOCGIFADDR = 0x8915  # Linux


def interface_ipv4(name: str) -> str | None:
    """The interface's IPv4 address, None when it has none or does not exist here (or not on Linux)."""
    try:
        import fcntl

        raw = name.encode("ascii")
        if not raw or len(raw) > 15 or b"/" in raw:
            return None
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            packed = fcntl.ioctl(sock.fileno(), SIOCGIFADDR, struct.pack("256s", raw))
        return socket.inet_ntoa(packed[20:24])
    except (OSError, ImportError, UnicodeEncodeError, ValueError):
        return None


def is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return False
    return True


def is_loopback(text: str) -> bool:
    return is_ip(text) and ipaddress.ip_address(text.strip("[]")).is_loopback
