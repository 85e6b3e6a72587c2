"""Bounded parsing (issue #39): crafted deployment files, compressed HTTP answers, numbers from the broker, queue
names, URLs with odd passwords and forged log lines each end in one readable line or in the one value made
unknown, never in gigabytes of memory, a traceback or a value read as something else."""

from __future__ import annotations

import asyncio
import gzip
import http.server
import io
import json
import logging
import re
import shutil
import subprocess
import sys
import threading
import time
import tomllib
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tui.cli import main
from tui.collectors import galera_parse
from tui.collectors.rabbitmq import RabbitMQCollector
from tui.collectors.rabbitmq_payload import parse_node, parse_queue
from tui.config import ConfigError, load_config
from tui.errors import SourceError
from tui.models.observation import Observation
from tui.models.rabbitmq import QueueInfo, RabbitSnapshot
from tui.recorder import RedactingFormatter
from tui.redact import redact_userinfo
from tui.runner import CollectorRunner
from tui.snapshot_prometheus import render_prometheus

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "tests" / "data" / "deploy"
MB = 1024 * 1024


@pytest.fixture
def kolla(tmp_path: Path) -> Path:
    return Path(shutil.copytree(DEPLOY / "kolla", tmp_path / "kolla"))


@pytest.fixture
def osa(tmp_path: Path) -> Path:
    return Path(shutil.copytree(DEPLOY / "osa", tmp_path / "osa"))


def init(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["init", *args])
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    assert err.endswith("\n") and err.count("\n") == 1, f"one line expected, got:\n{err[:2000]}"
    assert "Traceback" not in err
    return err


# ------------------------------------------------------------------------------------------- stacktop init
def alias_bomb(levels: int = 9, width: int = 9) -> str:
    """A billion-laughs YAML document under 1 KB: `width ** levels` nodes once its aliases are expanded."""
    lines = [f"l0: &l0 [{', '.join(['lol'] * width)}]"]
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


def test_init_refuses_a_yaml_alias_bomb_in_one_line(kolla: Path, tmp_path: Path) -> None:
    """9 ** 9 = 387 million nodes once expanded, from 0.4 KB: before, `str(value)` of it for an error message
    ran for many seconds towards gigabytes (run here under a 1 GB address-space limit, so the old code fails
    fast with a MemoryError); now the file is refused as it is loaded."""
    text = (kolla / "globals.yml").read_text() + alias_bomb() + "kolla_enable_tls_internal: *l8\n"
    text = text.replace('kolla_enable_tls_internal: "yes"\n', "")
    (kolla / "globals.yml").write_text(text)
    assert len(alias_bomb()) < 1024
    limit = (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (1024 ** 3, 1024 ** 3)); "
        "from tui.cli import main; sys.exit(main(sys.argv[1:]))")
    proc = subprocess.run([sys.executable, "-c", limit, "init", "--kolla", str(kolla), "--dry-run"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 3, proc.stderr[-2000:]
    line = one_line(proc.stderr)
    assert "globals.yml: (aliases): YAML aliases expand it by more than 100,000 nodes" in line, line
    assert proc.stdout == ""


@pytest.mark.parametrize("light", ["1", "0"], ids=["light-client", "openstacksdk"])
def test_a_clouds_yaml_alias_bomb_is_a_source_error_not_minutes(tmp_path: Path, light: str) -> None:
    """The dashboard's own clouds.yaml with a billion-laughs password: before, `stacktop snapshot --deadline 20`
    was still running at 60 s with 1.3 GB (the light loader's str() of the entry, or openstacksdk's merge);
    now the OpenStack sources fail with one line naming the file, on both client paths, in about a second."""
    clouds = tmp_path / "clouds.yaml"
    clouds.write_text(alias_bomb() + "clouds:\n  c:\n    auth:\n      auth_url: http://127.0.0.1:1/v3\n"
                      "      username: u\n      password: *l8\n      project_name: p\n")
    config = tmp_path / "config.toml"
    config.write_text(f'[openstack]\ncloud = "c"\nclouds_file = "{clouds}"\n')
    limit = (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (1536 * 1024 ** 2, 1536 * 1024 ** 2)); "
        "from tui.cli import main; sys.exit(main(sys.argv[1:]))")
    proc = subprocess.run([sys.executable, "-c", limit, "snapshot", "--config", str(config), "--deadline", "20"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT),
                               "STACKTOP_LIGHT_FIRST": light})
    assert proc.returncode == 3, proc.stderr[-2000:]
    assert "Traceback" not in proc.stdout + proc.stderr
    assert f"{clouds}: YAML aliases expand it by more than 100,000 nodes" in proc.stdout, proc.stdout[-2000:]
    assert "late:" not in proc.stdout, "refused at once, not cut by the snapshot deadline"


def test_a_self_referring_alias_is_refused(kolla: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with (kolla / "globals.yml").open("a") as f:
        f.write("loop: &loop [a, *loop]\n")
    code, out, err = init(capsys, "--kolla", str(kolla), "--dry-run")
    assert code == 3 and out == ""
    assert "globals.yml: (aliases): a YAML alias refers to a node that contains it" in one_line(err)


def test_a_few_ordinary_anchors_still_load(kolla: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with (kolla / "globals.yml").open("a") as f:
        f.write("base: &base {a: 1, b: [1, 2, 3]}\nfirst: *base\nsecond: {<<: *base, c: 3}\n")
    code, out, err = init(capsys, "--kolla", str(kolla), "--dry-run")
    assert code == 0, err
    assert "[rabbitmq]" in out


def test_an_error_shows_a_large_value_briefly(kolla: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A non-boolean value is named in the error by its kind and size, not printed whole."""
    text = (kolla / "globals.yml").read_text().replace('kolla_enable_tls_internal: "yes"',
                                                        "kolla_enable_tls_internal: [" + "x, " * 5000 + "x]")
    (kolla / "globals.yml").write_text(text)
    code, _, err = init(capsys, "--kolla", str(kolla), "--dry-run")
    assert code == 3
    line = one_line(err)
    assert "kolla_enable_tls_internal: 'a list of 5001 items' is not a yes/no value" in line
    assert len(line) < 300


def test_init_refuses_a_file_over_16_mb_instead_of_cutting_it(kolla: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """passwords.yml with its monitoring password across the 16 MB mark: before, the file was cut there and
    `FULLPASS` written as the password; now it is refused, and nothing is written."""
    secrets = (kolla / "passwords.yml").read_text()
    secrets = re.sub(r"(?m)^rabbitmq_monitoring_password:.*\n", "", secrets)
    head = secrets + "#" * (16 * MB - len(secrets.encode()) - 40) + "\n"
    value = "FULLPASSWORD-" + "w" * 64
    line = f"rabbitmq_monitoring_password: {value}\n"
    cut = 16 * MB - len(head.encode()) - len("rabbitmq_monitoring_password: ")
    assert 0 < cut < len(value), "the 16 MB mark falls inside the password"
    (kolla / "passwords.yml").write_text(head + line)
    out = tmp_path / "conf" / "stacktop.toml"
    code, _, err = init(capsys, "--kolla", str(kolla), "-o", str(out))
    assert code == 3
    assert "passwords.yml: (file): is larger than 16 MB, refused (not read in part)" in one_line(err)
    assert not out.parent.exists() or not any(out.parent.iterdir()), "nothing written"


def test_a_password_file_over_16_mb_is_refused_not_cut(tmp_path: Path) -> None:
    secret = tmp_path / "rabbit.password"
    secret.write_bytes(b"p" * (16 * MB) + b"-tail")
    secret.chmod(0o600)
    config = tmp_path / "config.toml"
    config.write_text(f'[rabbitmq]\nmanagement_url = "http://127.0.0.1:15672"\npassword_file = "{secret}"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(str(config), env={})
    assert "rabbitmq.password_file" in str(caught.value) and "larger than 16 MB" in str(caught.value)


def test_dry_run_prints_no_raw_c1_or_bidi_character(kolla: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """U+009B (CSI in 8 bits) and U+202E (right-to-left override) in a host name and a flag: escaped in the TOML
    strings and comments printed, and the config read back holds the exact values."""
    host = "vip\u009b31m.\u202eexample"
    text = (kolla / "globals.yml").read_text()  # YAML escapes: the raw characters are not allowed in YAML
    text = text.replace('kolla_internal_fqdn: "internal.cloud.example"',
                        'kolla_internal_fqdn: "vip\\x9b31m.\\u202eexample"')
    text = text.replace('neutron_plugin_agent: "ovn"', 'neutron_plugin_agent: "ovn\\u202e\\u200b"')
    (kolla / "globals.yml").write_text(text)
    code, out, err = init(capsys, "--kolla", str(kolla), "--dry-run")
    assert code == 0, err
    for char in ("\u009b", "\u202e", "\u200b"):
        assert char not in out and char not in err
    assert tomllib.loads(out)["rabbitmq"]["management_url"] == f"https://{host}:15672"
    assert "neutron_plugin_agent=ovn\\u202e\\u200b" in out


def test_an_osa_inventory_3000_levels_deep_is_one_line(osa: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inventory = json.loads((osa / "openstack_inventory.json").read_text())
    deep = "[" * 3000 + "]" * 3000
    text = json.dumps(inventory)[:-1] + f', "deep": {deep}}}'
    (osa / "openstack_inventory.json").write_text(text)
    code, out, err = init(capsys, "--osa", str(osa), "--dry-run")
    assert code == 3 and out == ""
    assert "openstack_inventory.json: (syntax): nested too deeply" in one_line(err)


def test_an_osa_group_chain_3000_deep_is_walked(osa: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """galera_all -> g1 -> ... -> g3000 -> the Galera host: found without recursion."""
    inventory = json.loads((osa / "openstack_inventory.json").read_text())
    host = next(h for h in inventory["galera_all"].get("hosts") or inventory["galera_container"]["hosts"])
    inventory["galera_all"] = {"children": ["g1"]}
    for i in range(1, 3001):
        inventory[f"g{i}"] = {"children": [f"g{i + 1}"]} if i < 3000 else {"hosts": [host]}
    (osa / "openstack_inventory.json").write_text(json.dumps(inventory))
    code, out, err = init(capsys, "--osa", str(osa), "--dry-run")
    assert code == 0, err
    address = inventory["_meta"]["hostvars"][host]["management_address"]
    assert tomllib.loads(out)["galera"]["nodes"] == [f"{address}:3306"]


def test_a_kolla_inventory_chain_3000_groups_deep_is_walked(kolla: Path, capsys: pytest.CaptureFixture[str]) -> None:
    chain = ["[mariadb:children]", "g1"]
    for i in range(1, 3000):
        chain += [f"[g{i}:children]", f"g{i + 1}"]
    chain += ["[g3000]", "db-deep ansible_host=10.9.9.9"]
    text = re.sub(r"(?ms)^\[mariadb(:children)?\]\n.*?(?=^\[)", "", (kolla / "multinode").read_text())
    (kolla / "multinode").write_text(text + "\n" + "\n".join(chain) + "\n")
    code, out, err = init(capsys, "--kolla", str(kolla), "--dry-run")
    assert code == 0, err
    assert tomllib.loads(out)["galera"]["nodes"] == ["10.9.9.9:3306"]


# ------------------------------------------------------------------------------------ compressed HTTP answers
def gzip_bomb(inflated_mb: int) -> bytes:
    """A gzip stream of `inflated_mb` MB of zeros (about 1/1000 of that on the wire)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block = b"\0" * MB
    return b"".join([*(packer.compress(block) for _ in range(inflated_mb)), packer.flush()])


BOMB = gzip_bomb(256)  # ~250 KB on the wire, 256 MB inflated


class _Handler(http.server.BaseHTTPRequestHandler):
    body = b""
    encoding = "gzip"

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Encoding", self.encoding)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def serve() -> Iterator[Callable[[bytes, str], str]]:
    """serve(body, encoding) -> the base URL of a loopback server answering every GET with that body."""
    servers: list[http.server.ThreadingHTTPServer] = []

    def start(body: bytes, encoding: str = "gzip") -> str:
        handler = type("Handler", (_Handler,), {"body": body, "encoding": encoding})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_port}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def peak_mb(fn: Callable[[], object]) -> tuple[float, object]:
    """(peak MB allocated while fn ran, in every thread, its result or the exception it raised)."""
    tracemalloc.start()
    try:
        try:
            result: object = fn()
        except Exception as exc:
            result = exc
        return tracemalloc.get_traced_memory()[1] / MB, result
    finally:
        tracemalloc.stop()


def test_rabbitmq_gzip_bomb_is_refused_at_the_cap(serve: Callable[[bytes, str], str]) -> None:
    """Every management API path answers 256 MB of zeros gzipped: before, each answer's network chunks were
    inflated whole (tens of MB each) before the cap was looked at; now decoding stops at 1 MB."""
    base = serve(BOMB, "gzip")
    collector = RabbitMQCollector(base, "guest", "guest", max_body_mb=1.0)

    async def collect() -> object:
        try:
            return await collector.collect()
        finally:
            await collector.aclose()

    peak, result = peak_mb(lambda: asyncio.run(collect()))
    assert isinstance(result, SourceError), result
    assert "larger than the 1 MB cap" in str(result) and "[rabbitmq] max_body_mb" in str(result)
    assert peak < 24, f"{peak:.0f} MB allocated for answers capped at 1 MB"


def test_openstack_light_client_gzip_bomb_is_refused_at_the_cap(serve: Callable[[bytes, str], str]) -> None:
    from tui.openstack.cloudsyaml import LightCloud
    from tui.openstack.errors import Where
    from tui.openstack.light import LightClient

    base = serve(BOMB, "gzip")
    cloud = LightCloud(name="c", auth_type="password", auth={"auth_url": f"{base}/v3"}, auth_url=f"{base}/v3",
                       region=None, interface="public", verify=True, clouds_file=None)
    client = LightClient(cloud, where=Where("c", None), timeout=30, max_body_mb=1.0)
    peak, result = peak_mb(lambda: client._send("GET", f"{base}/v2.1/servers", headers={}))
    assert isinstance(result, SourceError), result
    assert "larger than the 1 MB cap" in str(result) and "[openstack] max_body_mb" in str(result)
    assert peak < 16, f"{peak:.0f} MB allocated for an answer capped at 1 MB"


def test_requests_path_gzip_bomb_is_refused_at_the_cap(serve: Callable[[bytes, str], str]) -> None:
    """The openstacksdk path (requests under tui.deadline's guard): decoded here, whatever urllib3 does."""
    import requests

    from tui import deadline

    base = serve(BOMB, "gzip")
    session = deadline.guard_requests_session(requests.Session(), cap=MB, key="[openstack] max_body_mb",
                                              timeout_key="[openstack] timeout", default_timeout=30)
    peak, result = peak_mb(lambda: session.get(f"{base}/v2.1/servers"))
    assert isinstance(result, deadline.BodyTooLarge), result
    assert peak < 16, f"{peak:.0f} MB allocated for an answer capped at 1 MB"


def test_fastget_never_inflates_a_body(serve: Callable[[bytes, str], str]) -> None:
    """The many-GETs client asks for no encoding and decodes none: a gzip answer stays its raw bytes (then
    not JSON), counted against the cap as they come."""
    from tui.openstack.fastget import Answer, get_many

    base = serve(BOMB, "gzip")
    peak, result = peak_mb(lambda: asyncio.run(get_many(base, ["/a", "/b"], {}, max_body=MB, timeout=30)))
    assert isinstance(result, list) and all(isinstance(a, Answer) and a.body == BOMB for a in result), result
    assert peak < 16


@pytest.mark.parametrize("encoding", ["gzip", "x-gzip", "deflate", "deflate-raw", "gzip, deflate", "identity"])
def test_compressed_answers_within_the_cap_decode_exactly(serve: Callable[[bytes, str], str], encoding: str) -> None:
    from tui import deadline

    payload = json.dumps([{"name": f"q{i}", "messages": i} for i in range(20000)]).encode()
    body = {
        "gzip": lambda: gzip.compress(payload), "x-gzip": lambda: gzip.compress(payload),
        "deflate": lambda: zlib.compress(payload),
        "deflate-raw": lambda: zlib.compress(payload, wbits=-zlib.MAX_WBITS),  # sent as "deflate" by some servers
        "gzip, deflate": lambda: zlib.compress(gzip.compress(payload)),  # gzip applied first
        "identity": lambda: payload,
    }[encoding]()
    base = serve(body, "deflate" if encoding == "deflate-raw" else encoding)
    client = deadline.install_httpx(httpx.Client())
    with client, client.stream("GET", f"{base}/x") as resp:
        assert deadline.read_httpx(resp, cap=16 * MB, key="k") == payload
        assert resp.json()[-1] == {"name": "q19999", "messages": 19999}


def test_a_broken_gzip_body_is_a_decoding_error(serve: Callable[[bytes, str], str]) -> None:
    from tui import deadline

    base = serve(b"\x1f\x8b\x08\x00not gzip at all" * 10, "gzip")
    client = deadline.install_httpx(httpx.Client())
    with client, client.stream("GET", f"{base}/x") as resp, pytest.raises(httpx.DecodingError):
        deadline.read_httpx(resp, cap=16 * MB, key="k")


# ------------------------------------------------------------------------------------- numbers from servers
QUEUES_JSON = ('[{"name": "inf", "vhost": "/", "messages": Infinity, "consumers": 0},'
               ' {"name": "nan", "vhost": "/", "messages": NaN, "consumers": -Infinity},'
               ' {"name": "huge", "vhost": "/", "messages": 1' + "0" * 400 + ', "consumers": 0},'
               ' {"name": "fine", "vhost": "/", "messages": 7, "consumers": 0}]')


def test_non_finite_and_absurd_broker_numbers_make_one_value_unknown() -> None:
    rows = json.loads(QUEUES_JSON)
    parsed = {q.name: q for q in (parse_queue(r) for r in rows) if q is not None}
    assert set(parsed) == {"inf", "nan", "huge", "fine"}
    assert parsed["inf"].messages is None and parsed["nan"].messages is None and parsed["huge"].messages is None
    assert parsed["nan"].consumers is None
    assert parsed["fine"].messages == 7
    node = parse_node(json.loads('{"name": "rabbit@a", "running": true, "mem_used": Infinity, "fd_used": 12}'))
    assert node is not None and node.mem_used is None and node.fd_used == 12


def test_the_rabbitmq_source_stands_with_infinity_in_one_row() -> None:
    """A fake management API: Infinity, NaN and 10**400 in three queue rows. Before, the whole source failed
    (OverflowError); now those values are unknown, the other rows and the nodes are read."""

    def answer(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path == "/api/queues":
            if "page" in request.url.params:
                return httpx.Response(200, content=b'{"items": ' + QUEUES_JSON.encode() + b', "page_count": 1}')
            return httpx.Response(200, content=QUEUES_JSON.encode())
        if path == "/api/nodes":
            return httpx.Response(200, content=b'[{"name": "rabbit@a", "running": true, "mem_used": NaN}]')
        if path == "/api/health/checks/local-alarms":
            return httpx.Response(200, json={"status": "ok"})
        return httpx.Response(200, content=b'{"cluster_name": "c", "rabbitmq_version": "3.13.7",'
                                            b' "object_totals": {"queues": Infinity, "consumers": 3}}')

    collector = RabbitMQCollector("http://broker:15672", "guest", "guest")
    collector._client = httpx.Client(base_url=collector.base_url, transport=httpx.MockTransport(answer))
    obs = asyncio.run(CollectorRunner(collector).run_once())
    assert obs.error is None, obs.error
    snap = obs.snapshot
    queues = {q.name: q for q in snap.queues}
    assert queues["fine"].messages == 7 and queues["huge"].messages is None and queues["inf"].messages is None
    assert [n.name for n in snap.nodes] == ["rabbit@a"] and snap.nodes[0].mem_used is None
    assert snap.object_totals == {"consumers": 3}
    text = render_prometheus([obs], 0.0)
    assert not re.search(r"\d{25}", text), "no number of hundreds of digits printed"


def test_galera_status_numbers_out_of_range_are_unknown() -> None:
    status = {"wsrep_local_recv_queue": "1e400", "wsrep_local_send_queue": "inf", "wsrep_cluster_size": "3",
              "wsrep_local_recv_queue_avg": "nan", "wsrep_local_send_queue_avg": "1e999",
              "wsrep_last_committed": "9" * 400}
    fields = galera_parse.node_fields(status, {})
    assert fields["cluster_size"] == 3
    assert fields["recv_queue"] is None and fields["send_queue"] is None and fields["last_committed"] is None
    assert fields["recv_queue_avg"] is None and fields["send_queue_avg"] is None


# ------------------------------------------------------------------------------------------ Prometheus names
def test_queue_names_that_escape_alike_stay_two_series() -> None:
    """`coll` + ESC and `coll\\x1b` (four characters): before, both read back as `coll\\x1b` (one series, the
    exposition parser keeps one); now they are two, and no raw control is in the text."""
    names = ["coll\x1b", "coll\\x1b", "coll\\\x1b", "coll\\\\x1b", "plain\\name"]
    queues = tuple(QueueInfo(vhost="/", name=n, messages=10 + i, consumers=0) for i, n in enumerate(names))
    snap = RabbitSnapshot(endpoint="http://mq:15672", taken_at=datetime.now(UTC), queues=queues)
    text = render_prometheus([Observation("rabbitmq", snapshot=snap, ok_at=1.0, tried_at=1.0)], 1.0)
    assert "\x1b" not in text
    families = {f.name: f.samples for f in text_string_to_metric_families(text)}
    series = {s.labels["queue"]: s.value for s in families["stacktop_queue_messages"]}
    assert len(series) == len(names), series
    assert series["plain\\name"] == 14, "a backslash before an ordinary character reads back as itself"


# --------------------------------------------------------------------------------- URL credentials and redaction
@pytest.mark.parametrize("password", ["pa/ss", "pa?ss", "pa#ss", "p@ss/x?y#z"])
def test_a_password_with_url_delimiters_in_management_url_is_refused(tmp_path: Path, password: str) -> None:
    secret = f"Canary-{password}-9f3e"
    config = tmp_path / "config.toml"
    config.write_text(f'[rabbitmq]\nmanagement_url = "http://monitoring:{secret}@127.0.0.1:15672"\n'
                      'password_env = "RABBIT_PW"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(str(config), env={"RABBIT_PW": "x"})
    message = str(caught.value)
    assert "rabbitmq.management_url: contains credentials" in message
    assert "Canary" not in message and "9f3e" not in message


@pytest.mark.parametrize("password", ["pa/ss", "pa?ss", "pa#ss", "p@ss/x?y#z", "plain"])
def test_redaction_cuts_a_password_with_url_delimiters(password: str) -> None:
    secret = f"Canary-{password}-9f3e"
    text = f"GET http://glance:{secret}@127.0.0.1:9292/v2/images failed; see https://h/x?a=1"
    out = redact_userinfo(text)
    assert "9f3e" not in out and "Canary" not in out
    assert out == "GET http://glance:***@127.0.0.1:9292/v2/images failed; see https://h/x?a=1"


def test_redaction_stays_linear_on_a_hostile_line() -> None:
    """Half a million `://x:` starts and one `@` at the end: one pass, not one scan per start."""
    line = "://x:" * 500_000 + "@"
    started = time.monotonic()
    assert redact_userinfo(line) == "://x:***@"
    assert time.monotonic() - started < 5  # ~0.1 s; a scan per start would take minutes


# ----------------------------------------------------------------------------------------------- the log file
class _Failing:
    name = "services"
    interval = 10.0
    timeout = 10.0

    async def collect(self) -> object:
        raise SourceError("GET http://nova/v2.1 answered 500: boom\n2026-12-07 10:00:00,000 CRITICAL "
                          "stacktop.runner: FORGED\r\x1b[2J")

    def findings(self, snapshot: object, now: datetime) -> list[object]:
        return []

    async def aclose(self) -> None:
        pass


def test_an_endpoint_error_cannot_forge_a_log_line() -> None:
    """The runner logs the endpoint's error through the log file's formatter: one line, its line breaks and
    controls written out; a traceback's own lines follow indented, so no line at the margin is not a record."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(RedactingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("stacktop.runner")
    old_level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        asyncio.run(CollectorRunner(_Failing()).run_once())  # type: ignore[arg-type]
        try:
            raise ValueError("bad\n2026-12-07 10:00:01,000 CRITICAL stacktop.runner: FORGED TOO")
        except ValueError:
            logger.exception("a rule failed")
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
    lines = stream.getvalue().splitlines()
    records = [line for line in lines if not line[:1].isspace()]
    assert len(records) == 2, lines
    assert "WARNING stacktop.runner: services: failed: GET http://nova/v2.1 answered 500: boom\\x0a2026-12-07" \
        in records[0]
    assert records[0].endswith("stacktop.runner: FORGED\\x0d\\x1b[2J")
    assert records[1].endswith("ERROR stacktop.runner: a rule failed")
    assert any("FORGED TOO" in line for line in lines[1:]), "the traceback is kept, indented"
    assert "\x1b" not in stream.getvalue() and "\r" not in stream.getvalue()

