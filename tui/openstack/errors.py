"""Turn openstacksdk / keystoneauth / HTTP failures into one-line SourceErrors that say what to fix.

Classifies by exception class name and attributes, so it never imports openstack itself. Pure but for one
case: on a TLS name mismatch, the certificate's own names are read (tui.tlserror.certificate_names: a
handshake that checks the chain against Where.cafile, not the name, and sends nothing) so the line can say
which names it holds.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tui.errors import SourceError
from tui.tlserror import certificate_names, describe_verify, is_name_mismatch, verify_reason

_URL = re.compile(r"(https?://[^\s]+?)(?=:\s|\s|$)")


class NotFound(SourceError):
    """The resource asked for does not exist (HTTP 404): a state, not an outage."""


class Where:
    """Which cloud a client reads, for the "fix" half of every message."""

    def __init__(self, cloud: str | None, clouds_file: str | None, auth_url: str | None = None,
                 cafile: str | None = None) -> None:
        self.cloud = cloud
        self.clouds_file = clouds_file
        self.auth_url = auth_url
        self.cafile = cafile  # the CA bundle the cloud's certificates are checked against (None: the system's)

    @property
    def cloud_ref(self) -> str:
        name = f"cloud '{self.cloud}'" if self.cloud else "the default cloud"
        return f"{name} in {self.clouds_file}" if self.clouds_file else f"{name} in clouds.yaml"


def _names(exc: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(exc).__mro__}


def is_timeout(exc: BaseException) -> bool:
    """No answer within the timeout (keystoneauth raises ConnectTimeout for connect and read timeouts; an
    answer that came too slowly for its overall deadline is tui.deadline.DeadlineExceeded)."""
    return bool({"ConnectTimeout", "DeadlineExceeded"} & _names(exc))


def first_url(text: str) -> str | None:
    m = _URL.search(text)
    return m.group(1) if m else None


def is_keystone(url: str | None, where: Where) -> bool:
    """Does url live under the cloud's auth_url (scheme://host:port[/prefix])?"""
    if not url or not where.auth_url:
        return False
    root = re.sub(r"/v3/?$|/v2\.0/?$", "", where.auth_url.rstrip("/"))
    return url.startswith(root)


def _short_reason(text: str) -> str:
    low = text.lower()
    for needle, reason in (("connection refused", "connection refused"), ("name or service not known",
                           "unknown host name"), ("no route to host", "no route to host"),
                           ("temporary failure in name resolution", "DNS lookup failed"),
                           ("certificate verify failed", "TLS certificate not trusted"),
                           ("connection reset", "connection reset"), ("timed out", "timed out"),
                           ("incompleteread", "the answer was cut off mid-body"),
                           ("connection broken", "the connection broke mid-answer"),
                           ("remotedisconnected", "the server closed the connection without answering")):
        if needle in low:
            return reason
    return "connection failed"


def _names_held(url: str | None, where: Where) -> tuple[list[str], str | None]:
    """(the names the certificate at url holds, the host name url used); ([], None) without a url."""
    if not url:
        return [], None
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port or 443
    except ValueError:
        return [], None
    if not host:
        return [], None
    return certificate_names(host, port, where.cafile, 5.0), host


def describe(exc: BaseException, where: Where, *, action: str = "") -> str:
    """One line: what failed (URL/cloud), why, and the config key to fix."""
    if isinstance(exc, SourceError):  # already one line (tui.deadline: too slow, too large)
        return exc.message
    names = _names(exc)
    text = str(exc)
    what = f"{action}: " if action else ""
    url = getattr(exc, "url", None) or first_url(text)
    if "ConfigException" in names or "OpenStackConfigException" in names:
        return f"{what}{text.rstrip('.')} - set [openstack] cloud / clouds_file (or OS_CLOUD) to a cloud in " \
               f"clouds.yaml"
    if "Unauthorized" in names or getattr(exc, "http_status", None) == 401:
        target = where.auth_url or url or "Keystone"
        return f"Keystone at {target} rejected the credentials of {where.cloud_ref} (401) - fix the auth " \
               f"section of {where.cloud_ref}"
    if "MissingRequiredOptions" in names or "MissingAuthPlugin" in names or "AuthorizationFailure" in names:
        return f"{what}incomplete auth for {where.cloud_ref}: {text.splitlines()[0]} - fix its auth section"
    if "SSLError" in names:
        reason = verify_reason(exc)
        if reason is not None:
            fix = f"set [openstack] cacert (or cacert in {where.cloud_ref}) to the CA that signed it"
            names, used = _names_held(url, where) if is_name_mismatch(reason) else ([], None)
            line = describe_verify(reason, fix, f"the catalog or auth_url of {where.cloud_ref}", names=names,
                                   used=used)
            return f"{what}TLS failed for {url or 'the endpoint'}: {line}"
        return f"{what}TLS failed for {url or 'the endpoint'} ({_short_reason(text)}) - set [openstack] cacert " \
               f"(or cacert in {where.cloud_ref}) to the CA that signed its certificate"
    if "ConnectTimeout" in names:
        if is_keystone(url, where):
            return f"Keystone at {url} timed out - is Keystone up? check auth_url of {where.cloud_ref}"
        return f"{what}{url or 'request'} timed out - is the service up? (raise [openstack] timeout if it is " \
               f"just slow)"
    if "ConnectFailure" in names or "ConnectionError" in names or "UnknownConnectionError" in names:
        if is_keystone(url, where):
            return f"cannot reach Keystone at {url} ({_short_reason(text)}) - is Keystone up? check auth_url " \
                   f"of {where.cloud_ref}"
        return f"{what}cannot connect to {url or 'the endpoint'} ({_short_reason(text)}) - is the service up? " \
               f"check its endpoint in the catalog"
    if "EndpointNotFound" in names or "EmptyCatalog" in names:
        return f"{what}{text.rstrip('.')} in the catalog of {where.cloud_ref} - check region_name/interface"
    if "NotSupported" in names:
        return f"{what}version discovery failed ({text.splitlines()[0] if text else 'no usable version'}) - is " \
               f"the service up? check its endpoint in the catalog"
    if "DiscoveryFailure" in names or "VersionNotAvailable" in names:
        return f"{what}version discovery failed: {text.splitlines()[0]} - is the endpoint in the catalog right?"
    if "HttpError" in names:
        status = getattr(exc, "http_status", "?")
        return f"{what}{getattr(exc, 'method', 'GET') or 'GET'} {url or ''} answered {status}: " \
               f"{text.splitlines()[0]}"
    return f"{what}{type(exc).__name__}: {text.splitlines()[0] if text else 'no message'}"


def api_message(body: bytes | str | None) -> str:
    """The human message inside an OpenStack error body (nova, neutron, cinder, placement, keystone)."""
    if not body:
        return ""
    try:
        data: Any = json.loads(body)
    except (ValueError, TypeError):
        text = body.decode(errors="replace") if isinstance(body, bytes) else str(body)
        return " ".join(text.split())[:200]
    if isinstance(data, dict):
        if isinstance(data.get("errors"), list) and data["errors"]:  # placement
            e = data["errors"][0]
            return str(e.get("detail") or e.get("title") or "")
        if isinstance(data.get("NeutronError"), dict):
            return str(data["NeutronError"].get("message", ""))
        if isinstance(data.get("error"), dict):  # keystone
            return str(data["error"].get("message", ""))
        if isinstance(data.get("error"), str):  # rabbitmq style
            return str(data.get("reason") or data["error"])
        for value in data.values():  # nova/cinder: {"itemNotFound": {"code": 404, "message": ...}}
            if isinstance(value, dict) and "message" in value:
                return str(value["message"])
    return ""


def http_error(method: str, url: str, status: int, body: bytes | str | None, where: Where) -> SourceError:
    """A non-2xx answer from a service, as a SourceError (NotFound for 404)."""
    msg = api_message(body)
    line = f"{method} {url} answered {status}" + (f": {msg.strip()}" if msg else "")
    if status == 401:
        return SourceError(f"{line} - the token was refused; check the auth section of {where.cloud_ref}")
    if status == 403:
        return SourceError(f"{line} - stacktop needs an admin (or reader with admin scope) role in "
                           f"{where.cloud_ref}")
    if status == 404:
        return NotFound(line)
    return SourceError(line)


def to_source_error(exc: BaseException, where: Where, *, action: str = "") -> SourceError:
    if isinstance(exc, SourceError):
        return exc
    return SourceError(describe(exc, where, action=action))


def not_json(url: str, status: int, content_type: str | None) -> SourceError:
    """A 2xx answer whose body is not JSON: name the content type (an HTML page means a proxy or login page)."""
    ctype = (content_type or "").split(";")[0].strip() or "no content type"
    return SourceError(f"GET {url} answered {status} {ctype} that is not JSON - is this endpoint the API (not a "
                       f"proxy or login page)? check the catalog")


def check_list(data: dict[str, Any], key: str | None, url: str, status: int) -> None:
    """A listing answer must hold its list: a JSON object without it is a broken answer, not "no rows"."""
    if key is not None and not isinstance(data.get(key), list):
        raise SourceError(f"GET {url} answered {status} without a '{key}' list - is this endpoint the API (not a "
                          f"proxy)? check the catalog")
