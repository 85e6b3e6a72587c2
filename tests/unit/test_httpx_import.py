"""httpx is imported without its command-line module (tui.httpx_import): the RabbitMQ collector and the light
OpenStack client still get a working httpx, and click, pygments' lexers and httpx._main stay out."""

from __future__ import annotations

from tests.fresh_python import fresh_python

CLI = '''
import sys
from tui.collectors.rabbitmq import httpx
from tui.openstack.light import _transport_error
answer = httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(200, json={"ok": 1}))).get("http://x/")
err = _transport_error(httpx.ConnectTimeout("slow"), "http://x/")
stub = any("could not run" in c for c in httpx.main.__code__.co_consts if isinstance(c, str))
print(repr((answer.json(), type(err).__name__, "httpx._main" in sys.modules, "click" in sys.modules,
            "pygments.lexers" in sys.modules, stub)))
'''


def test_httpx_comes_without_its_command_line_module() -> None:
    data, error, cli, click, lexers, stub = eval(fresh_python(CLI).strip().splitlines()[-1])
    assert data == {"ok": 1}, "httpx works as before"
    assert error == "ConnectTimeout"
    assert (cli, click, lexers) == (False, False, False), "httpx's command line was imported with httpx"
    assert stub, "httpx.main is httpx's own stub"


ALREADY = '''
import sys
import httpx
from tui.httpx_import import import_httpx
print(repr((import_httpx() is httpx, "httpx._main" in sys.modules)))
'''


def test_an_httpx_imported_before_is_the_one_returned() -> None:
    same, cli = eval(fresh_python(ALREADY).strip().splitlines()[-1])
    assert same is True
    assert cli is True, "imported plainly first, httpx keeps its command line: nothing is undone"
