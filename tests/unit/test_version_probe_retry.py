"""version_get (Keystone's and every catalog endpoint's probe): a keep-alive connection the server closed as it
was reused gets one new connection; a refusal or a timeout is not retried (CI saw a false "Keystone does not
answer": gunicorn's 2 s keepalive met the test's 2 s poll interval)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from tui.openstack.client import OpenStackClient
from tui.openstack.errors import Where
from tui.openstack.light import ConnectFailure, ConnectTimeout

URL = "http://127.0.0.1:5000/v3"


class Answer:
    status_code = 200
    headers = {"Content-Type": "application/json"}
    content = b'{"version": {"id": "v3.14", "status": "stable"}}'

    def json(self) -> Any:
        return {"version": {"id": "v3.14", "status": "stable"}}


class Scripted(OpenStackClient):
    """openstacksdk's client over a session whose GETs fail as scripted, then answer."""

    def __init__(self, *failures: Exception) -> None:
        super().__init__(SimpleNamespace(session=SimpleNamespace(get=self._session_get)),
                         where=Where("c", None, URL), timeout=1.0)
        self.failures = list(failures)
        self.calls = 0

    def _session_get(self, url: str, **kwargs: Any) -> Any:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return Answer()


def test_a_connection_dropped_under_the_request_is_tried_once_more() -> None:
    for text in ("('Connection aborted.', RemoteDisconnected('Remote end closed connection without response'))",
                 "RemoteDisconnected: Server disconnected without sending a response."):
        client = Scripted(ConnectFailure(f"Unable to establish connection to {URL}: {text}"))
        answer = client.version_get(URL)
        assert answer["status"] == 200 and answer.get("error") is None, answer
        assert client.calls == 2


def test_dropped_twice_is_no_answer() -> None:
    drop = f"Unable to establish connection to {URL}: ('Connection aborted.', ConnectionResetError(104, " \
           "'Connection reset by peer'))"
    client = Scripted(ConnectFailure(drop), ConnectFailure(drop))
    answer = client.version_get(URL)
    assert answer["status"] is None and "connection reset" in answer["error"] and not answer["timed_out"]
    assert client.calls == 2


def test_refused_and_timed_out_are_not_retried() -> None:
    refused = Scripted(ConnectFailure(f"Unable to establish connection to {URL}: [Errno 111] Connection refused"))
    answer = refused.version_get(URL)
    assert answer["status"] is None and refused.calls == 1
    slow = Scripted(ConnectTimeout(f"Request to {URL} timed out"))
    answer = slow.version_get(URL)
    assert answer["status"] is None and answer["timed_out"] and slow.calls == 1


def test_light_client_get_survives_a_keep_alive_connection_the_server_closed() -> None:
    """A real socket: the server reads the first request and closes the connection without an answer (what a
    gunicorn whose keepalive ran out does to a reused connection); the GET is answered on a new one. A POST is
    never sent twice."""
    import socket
    import threading

    from tui.openstack.cloudsyaml import LightCloud
    from tui.openstack.light import LightClient

    srv = socket.create_server(("127.0.0.1", 0))
    port = srv.getsockname()[1]
    seen: list[str] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            with conn:
                request = conn.recv(65536).decode("latin-1")
                seen.append(request.split(" ", 1)[0])
                if len(seen) in (1, 3):  # the first GET and the POST: closed unanswered
                    continue
                body = b'{"version": {"id": "v3.14"}}'
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                             b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}/v3"
    cloud = LightCloud(name="c", auth_type="password", auth={"username": "u", "password": "p"}, auth_url=url,
                       region=None, interface="public", verify=True, clouds_file=None)
    client = LightClient(cloud, where=Where("c", None, url), timeout=5.0)
    try:
        resp = client._send("GET", url, headers={"Accept": "application/json"}, timeout=5.0)
        assert resp.status_code == 200 and seen == ["GET", "GET"]
        try:
            client._send("POST", f"{url}/auth/tokens", headers={}, body={}, timeout=5.0)
        except ConnectFailure:
            pass
        else:
            raise AssertionError("a POST closed unanswered must fail, not be sent again")
        assert seen == ["GET", "GET", "POST"]
    finally:
        client.close()
        srv.close()
