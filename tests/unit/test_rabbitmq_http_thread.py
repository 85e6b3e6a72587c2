"""The RabbitMQ collector's HTTP runs in worker threads on a synchronous httpx client: no anyio (httpx's async
client on asyncio needs it, ~40 ms of imports at start-up) and no response parsed on the UI loop."""

from __future__ import annotations

from tests.fresh_python import fresh_python

CODE = '''
import asyncio, sys, threading
import httpx
from tui.collectors.rabbitmq import RabbitMQCollector

QUEUES = [{"name": "q%d" % i, "vhost": "/", "messages": 0, "consumers": 1} for i in range(3)]
threads = set()

def answer(request):
    me = threading.current_thread()
    threads.add((me is threading.main_thread(), me.daemon, me.name))
    path = request.url.path
    if path == "/api/queues":  # like the broker: a list unpaged, an object with items when paged
        paged = "page" in request.url.params
        return httpx.Response(200, json={"items": QUEUES, "page_count": 1} if paged else QUEUES)
    if path == "/api/nodes":
        return httpx.Response(200, json=[{"name": "rabbit@a", "running": True}])
    if path == "/api/health/checks/local-alarms":
        return httpx.Response(200, json={"status": "ok"})
    return httpx.Response(200, json={"cluster_name": "c", "rabbitmq_version": "3.10.8"})

c = RabbitMQCollector("http://broker:15672", "guest", "guest")
c._client = httpx.Client(base_url=c.base_url, transport=httpx.MockTransport(answer))
snap = asyncio.run(c.collect())
asyncio.run(c.aclose())
print(repr((sorted(q.name for q in snap.queues), sorted(threads), "anyio" in sys.modules)))
'''


def test_rabbitmq_requests_run_in_threads_without_anyio() -> None:
    stdout = fresh_python(CODE)
    names, on_main_thread, anyio = eval(stdout.strip().splitlines()[-1])
    assert names == ["q0", "q1", "q2"]
    assert on_main_thread == [(False, True, "rabbitmq-http")], \
        "every request ran in a daemon thread of its own, none on the event loop's nor in its shared executor"
    assert anyio is False, "anyio imported: an async httpx client is back on the event loop"


async def test_in_daemon_thread_result_error_and_cancel() -> None:
    import asyncio
    import threading

    from tui.collectors.rabbitmq import in_daemon_thread

    assert await in_daemon_thread(lambda a, b: a + b, 2, 3) == 5

    def fail() -> None:
        raise ValueError("boom")

    try:
        await in_daemon_thread(fail)
    except ValueError as exc:
        assert str(exc) == "boom"
    else:
        raise AssertionError("the thread's exception reaches the awaiting coroutine")

    release = threading.Event()
    finished = threading.Event()

    def hang() -> str:
        release.wait(5)
        finished.set()
        return "late"

    try:
        await asyncio.wait_for(in_daemon_thread(hang), timeout=0.05)
    except TimeoutError:
        pass
    else:
        raise AssertionError("a hung request is abandoned at the timeout")
    # the loop's shared executor is not held by the hung request
    assert await asyncio.wait_for(asyncio.to_thread(lambda: "free"), timeout=2) == "free"
    release.set()
    assert await asyncio.to_thread(finished.wait, 2), "the abandoned thread ends and settles nothing"
    await asyncio.sleep(0.01)  # its settle callback runs on a cancelled future: no error
