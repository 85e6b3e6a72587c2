"""Live confirmation of suspect queues over AMQP: passive queue_declare only (read-only).

A passive declare answers from the queue process itself (message_count = ready messages, consumer_count),
so it is not behind the management statistics. A missing queue makes the broker close the channel with
404: we note the queue as missing and open a fresh channel for the next one. Blocking (pika): call it
through asyncio.to_thread. pika is imported here, lazily, never at stacktop start-up.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit


@dataclass(frozen=True)
class LiveQueue:
    messages: int | None
    consumers: int | None
    missing: bool = False


class AmqpError(Exception):
    """The AMQP confirmation could not be done; str() is one line naming the URL and the key to fix."""


class PassiveChannel:
    """The only view of an AMQP channel stacktop uses: passive queue_declare, nothing else (read-only guard).

    A passive declare never creates, changes or deletes anything: it asks about an existing queue."""

    def __init__(self, channel: object) -> None:
        self._channel = channel

    def queue_declare(self, queue: str, passive: bool = True, **kwargs: object) -> Any:
        if passive is not True or kwargs:
            raise AmqpError(f"stacktop is read-only: refused a non-passive queue_declare of {queue!r}")
        return self._channel.queue_declare(queue=queue, passive=True)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        raise AmqpError(f"stacktop is read-only: refused AMQP channel.{name} (passive queue_declare only)")


def _reason(exc: BaseException) -> str:
    """A short why for a failed AMQP connect (pika's own texts are long and repeat the address)."""
    name = type(exc).__name__
    text = str(exc)
    if not text.strip() or text.strip() == "()":  # AMQPConnectionError wraps the real failure in its args
        text = " ".join(repr(a) for a in getattr(exc, "args", ()))
    if "Timeout" in name or "timed out" in text.lower():
        return "no AMQP answer within the timeout: a hung broker, or not an AMQP port"
    if "SSL" in name or "certificate verify failed" in text.lower() or "CERTIFICATE_VERIFY_FAILED" in text:
        return "TLS certificate not trusted" if "verify" in text.lower() else "TLS handshake failed"
    if isinstance(exc, ConnectionRefusedError) or "refused" in text.lower():
        return "connection refused"
    if "IncompatibleProtocol" in name or "StreamLost" in name or "EOF" in text:
        return "the server does not speak AMQP 0-9-1 (connection closed during the handshake)"
    first = text.strip().splitlines()[0][:120] if text.strip() else ""
    return f"{name}: {first}" if first else name


def _quiet_pika() -> None:
    """pika logs every failed connect at ERROR with a traceback: we report it as one line instead."""
    import logging

    logger = logging.getLogger("pika")
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.CRITICAL)


def endpoint(amqp_url: str) -> str:
    """The URL without any path or query, for messages."""
    parts = urlsplit(amqp_url)
    return f"{parts.scheme}://{parts.hostname}{f':{parts.port}' if parts.port else ''}"


def passive_check(amqp_url: str, user: str, password: str, queues: Iterable[tuple[str, str]],
                  timeout: float = 5.0, tls: ssl.SSLContext | None = None) -> dict[tuple[str, str], LiveQueue]:
    """Passively declare each (vhost, name); one connection per vhost, closed before returning.
    tls: the context for an amqps:// URL ([rabbitmq] cacert / insecure); None keeps pika's default."""
    import pika
    import pika.exceptions

    _quiet_pika()

    by_vhost: dict[str, list[str]] = {}
    for vhost, name in queues:
        by_vhost.setdefault(vhost, []).append(name)
    where = endpoint(amqp_url)
    result: dict[tuple[str, str], LiveQueue] = {}
    for vhost, names in by_vhost.items():
        params = pika.URLParameters(amqp_url)
        params.credentials = pika.PlainCredentials(user, password)
        params.virtual_host = vhost
        params.connection_attempts = 1
        params.socket_timeout = timeout
        params.stack_timeout = timeout
        params.blocked_connection_timeout = timeout
        if tls is not None and amqp_url.startswith("amqps:"):
            params.ssl_options = pika.SSLOptions(tls, server_hostname=urlsplit(amqp_url).hostname)
        try:
            conn = pika.BlockingConnection(params)
        except pika.exceptions.ProbableAuthenticationError:
            raise AmqpError(f"AMQP {where}: login refused for user '{user}' - check [rabbitmq] user and "
                            "password") from None
        except pika.exceptions.ProbableAccessDeniedError:
            raise AmqpError(f"AMQP {where}: user '{user}' may not open vhost '{vhost}' - grant it "
                            "(rabbitmqctl set_permissions) or fix [rabbitmq] vhosts") from None
        except Exception as exc:  # pika's connection workflow raises more than AMQPError (stack timeouts...)
            why = _reason(exc)
            fix = ("set [rabbitmq] cacert to the CA that signed it (or insecure = true to skip verification)"
                   if why == "TLS certificate not trusted" else "check [rabbitmq] amqp_url")
            raise AmqpError(f"AMQP {where} unreachable ({why}) - {fix}") from None
        try:
            channel = PassiveChannel(conn.channel())
            for name in names:
                try:
                    ok = channel.queue_declare(queue=name, passive=True)
                except pika.exceptions.ChannelClosedByBroker as exc:
                    if exc.reply_code != 404:
                        raise AmqpError(f"AMQP {where}: passive declare of {name!r} refused "
                                        f"({exc.reply_code} {exc.reply_text})") from None
                    result[(vhost, name)] = LiveQueue(None, None, missing=True)
                    channel = PassiveChannel(conn.channel())
                    continue
                result[(vhost, name)] = LiveQueue(messages=ok.method.message_count,
                                                  consumers=ok.method.consumer_count)
        except (pika.exceptions.AMQPError, OSError) as exc:
            raise AmqpError(f"AMQP {where}: connection lost during the check ({type(exc).__name__})") from None
        finally:
            try:
                if conn.is_open:
                    conn.close()
            except Exception:
                pass
    return result
