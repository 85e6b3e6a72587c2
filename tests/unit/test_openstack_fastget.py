"""tui.openstack.fastget: many GETs over persistent connections; chunked bodies, closes, refusals, timeouts;
and OpenStackClient.aget_json_many over it against the simulator."""

from __future__ import annotations

import asyncio

from tui.errors import SourceError
from tui.openstack import NotFound, connect
from tui.openstack.fastget import Answer, FetchError, get_many
from tui.sim import start_demo


async def _server(handler) -> tuple[asyncio.base_events.Server, str]:  # type: ignore[no-untyped-def]
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    return server, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/base"


async def test_chunked_and_connection_close_and_order():
    seen: list[str] = []

    async def handler(reader, writer):  # type: ignore[no-untyped-def]
        while True:
            try:
                head = (await reader.readuntil(b"\r\n\r\n")).decode()
            except asyncio.IncompleteReadError:
                break
            path = head.split(" ")[1]
            seen.append(path)
            if path.endswith("/chunked"):
                writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                             b"3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n")
            elif path.endswith("/close"):
                writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno")
                await writer.drain()
                writer.close()
                return
            else:
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n" + path[-4:].encode())
            await writer.drain()
        writer.close()

    server, base = await _server(handler)
    async with server:
        answers = await get_many(base, ["/a/0001", "chunked", "/close", "/a/0002"], {"X-Auth-Token": "t"},
                                 concurrency=1)
    assert [a.status for a in answers if isinstance(a, Answer)] == [200, 200, 404, 200]
    assert [a.body for a in answers if isinstance(a, Answer)] == [b"0001", b"abcde", b"no", b"0002"]
    assert seen[0] == "/base/a/0001" and answers[1].url.endswith("/base/chunked")


async def test_refused_and_timeout_are_per_path_errors():
    answers = await get_many("http://127.0.0.1:9/x", ["/a", "/b"], {}, concurrency=2, timeout=2)
    assert all(isinstance(a, FetchError) and a.reason == "connection refused" for a in answers)

    async def silent(reader, writer):  # type: ignore[no-untyped-def]
        await reader.read()  # never answers; returns when the client gives up

    server, base = await _server(silent)
    async with server:
        answers = await get_many(base, ["/slow"], {}, timeout=0.2)
    assert isinstance(answers[0], FetchError) and "timed out" in answers[0].reason


async def test_client_fan_out_against_the_simulator():
    demo = start_demo(instances=40, hosts=60, queues=20, churn=0, storyline=False, manual=True,
                      start=1_790_000_000.0)
    try:
        client = connect(demo.config().openstack)
        uuids = [p["uuid"] for p in await client.aio.resource_providers()]
        paths = [f"/resource_providers/{u}/usages" for u in uuids] + ["/resource_providers/nope/usages"]
        demo.stats.reset()
        got = await client.aget_json_many("placement", paths, microversion="1.39", concurrency=8)
        assert all(isinstance(g, dict) and "usages" in g for g in got[:-1])
        assert isinstance(got[-1], NotFound) and isinstance(got[-1], SourceError)
        assert demo.stats.snapshot()["requests"]["placement"] == len(paths)
        # an expired/refused token is renewed once
        client.conn.session.auth.auth_ref._data["token"]["expires_at"] = "2999-01-01T00:00:00.000000Z"
        demo.auth._tokens.clear()
        got = await client.aget_json_many("placement", paths[:3], microversion="1.39")
        assert all(isinstance(g, dict) for g in got)
    finally:
        demo.stop()
