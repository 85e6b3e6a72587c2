"""tui.openstack's pure parts: error lines, pagination markers, query strings."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from keystoneauth1 import exceptions as ks

from tui.openstack.errors import NotFound, Where, api_message, describe, http_error
from tui.openstack.paging import iso_param, next_marker, query, resources_param, version_tuple

WHERE = Where("prod", "/etc/openstack/clouds.yaml", "https://keystone.example:5000/v3")


def test_keystone_refused_names_url_and_cloud():
    exc = ks.ConnectFailure("Unable to establish connection to https://keystone.example:5000/v3/auth/tokens: "
                            "HTTPSConnectionPool(...): [Errno 111] Connection refused")
    line = describe(exc, WHERE, action="listing compute services")
    assert line == ("cannot reach Keystone at https://keystone.example:5000/v3/auth/tokens (connection refused)"
                    " - is Keystone up? check auth_url of cloud 'prod' in /etc/openstack/clouds.yaml")


def test_service_refused_names_the_endpoint_not_keystone():
    exc = ks.ConnectFailure("Unable to establish connection to http://nova.example:8774/v2.1/os-services: "
                            "Max retries exceeded ... Connection refused")
    line = describe(exc, WHERE, action="listing compute services")
    assert line.startswith("listing compute services: cannot connect to http://nova.example:8774/v2.1/os-services "
                           "(connection refused)")
    assert "\n" not in line


def test_auth_failure_names_the_clouds_yaml_cloud():
    exc = ks.Unauthorized("The request you have made requires authentication.", http_status=401,
                          url="https://keystone.example:5000/v3/auth/tokens")
    line = describe(exc, WHERE)
    assert "rejected the credentials of cloud 'prod' in /etc/openstack/clouds.yaml (401)" in line
    assert "fix the auth section" in line


def test_timeout_and_tls_and_missing_endpoint():
    assert "timed out" in describe(ks.ConnectTimeout("Request to http://nova:8774/v2.1/servers timed out"), WHERE)
    assert "TLS certificate not trusted" in describe(
        ks.SSLError("SSL exception connecting to https://nova:8774: certificate verify failed"), WHERE)
    line = describe(ks.EndpointNotFound("Could not find requested endpoint in Service Catalog."), WHERE)
    assert "cloud 'prod'" in line and "region_name/interface" in line


@pytest.mark.parametrize(("body", "message"), [
    (b'{"itemNotFound": {"code": 404, "message": "Instance x could not be found."}}', "Instance x could not be found."),
    (b'{"NeutronError": {"type": "PortNotFound", "message": "Port p could not be found.", "detail": ""}}',
     "Port p could not be found."),
    (b'{"errors": [{"status": 404, "title": "Not Found", "detail": "No resource provider with uuid u found"}]}',
     "No resource provider with uuid u found"),
    (b'{"error": {"code": 401, "title": "Unauthorized", "message": "The request you have made requires '
     b'authentication."}}', "The request you have made requires authentication."),
    (b"<html><body>502 Bad Gateway</body></html>", "<html><body>502 Bad Gateway</body></html>"),
    (b"", ""),
])
def test_api_message_from_every_service_style(body, message):
    assert api_message(body) == message


def test_http_error_kinds():
    err = http_error("GET", "http://nova/v2.1/servers/x", 404, b'{"itemNotFound": {"message": "gone"}}', WHERE)
    assert isinstance(err, NotFound) and str(err) == "GET http://nova/v2.1/servers/x answered 404: gone"
    assert "admin" in str(http_error("GET", "http://nova/v2.1/os-services", 403, b"", WHERE))
    assert not isinstance(http_error("GET", "u", 500, b"", WHERE), NotFound)


def test_next_marker_from_links():
    body = {"servers": [], "servers_links": [
        {"rel": "next", "href": "http://internal:8774/v2.1/servers/detail?all_tenants=1&limit=1000&marker=abc"}]}
    assert next_marker(body, "servers_links") == "abc"
    assert next_marker({"servers": []}, "servers_links") is None
    assert next_marker({"x_links": [{"rel": "prev", "href": "http://h/?marker=z"}]}, "x_links") is None


def test_iso_param_is_utc_seconds_with_z():
    dt = datetime(2026, 12, 2, 10, 0, 1, 999999, tzinfo=timezone(timedelta(hours=2)))
    assert iso_param(dt) == "2026-12-02T08:00:01Z"
    assert iso_param(datetime(2026, 12, 2, 8, 0, 1)) == "2026-12-02T08:00:01Z"  # naive = UTC
    assert iso_param("2026-12-02T08:00:01Z") == "2026-12-02T08:00:01Z"


def test_query_encoding():
    assert query("/servers/detail", {"all_tenants": 1, "changes-since": "2026-12-02T08:00:01+00:00",
                                     "host": None}) == \
        "/servers/detail?all_tenants=1&changes-since=2026-12-02T08%3A00%3A01%2B00%3A00"
    assert query("/ports", {"binding:host_id": "c1", "device_id": ["a", "b"]}) == \
        "/ports?binding%3Ahost_id=c1&device_id=a&device_id=b"
    assert query("/os-hypervisors", {"with_servers": True}) == "/os-hypervisors?with_servers=true"
    assert query("/x", {}) == "/x"
    assert resources_param({"VCPU": 2, "MEMORY_MB": 4096}) == "VCPU:2,MEMORY_MB:4096"
    assert version_tuple("2.96") == (2, 96) and version_tuple("2.100") > version_tuple("2.96")
