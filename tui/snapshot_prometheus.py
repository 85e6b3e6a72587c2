"""`stacktop snapshot --format prometheus`: the text exposition format, for node_exporter's textfile collector.

    stacktop snapshot --format prometheus --output /var/lib/node_exporter/textfile/stacktop.prom

(--output writes a temporary file beside it and renames it over the old one, whatever the exit code: the
collector never reads half a file, and a CRITICAL cloud updates it like a healthy one.)

Every sample carries the labels `cloud` (the cloud read) and `region` (the catalog's region, empty when not
known), so several clouds' files can sit side by side. The control plane's services are counted up and in
total per kind and binary (`stacktop_services_up` / `stacktop_services_total`, judged as the triage row judges
them); the RabbitMQ backlog is one count series plus the TOP_QUEUES fullest backlogged queues, never one series
per queue of a broker with thousands.

Every family is a gauge with HELP and TYPE lines. Label values are names from outside (queues, kinds): every
control but the newline, and every invisible formatting character, is written out as an escape
(tui.safetext.clean, like every stacktop output), so none reaches a terminal that shows the file. A backslash of
the name that such an escape could be mistaken for (one before `x`, `u`, a backslash or a control) is doubled, so
a queue named with the four characters `\x1b` and one holding the escape character stay two series. Then
backslash, double quote and newline are escaped as the format asks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from tui.models.finding import members
from tui.models.observation import Observation
from tui.safetext import clean, has_unsafe
from tui.snapshot import all_findings, exit_code

SEVERITIES = ("critical", "warning", "info")
TOP_QUEUES = 20  # backlogged queues given a series of their own (the fullest); the rest are only counted


def label_value(value: object) -> str:
    """A label value as the exposition format writes it (between the double quotes). The value a scraper reads
    back is the name, with each control but the newline written out (`\\x1b`) and each backslash before `x`,
    `u`, a backslash or a control doubled: it reads back unambiguously (`\\\\` a backslash, `\\x..` / `\\u....`
    a control, any other backslash itself), so two names are never one series."""
    lines = str(value).split("\n")
    return "\\n".join(_exposition(clean(_mark_backslashes(line))) for line in lines)


def _mark_backslashes(text: str) -> str:
    """Each backslash that an escape could be taken for (before `x`, `u`, a backslash or a control) doubled."""
    if "\\" not in text:
        return text
    out = []
    for i, ch in enumerate(text):
        out.append(ch)
        if ch == "\\" and i + 1 < len(text) and (text[i + 1] in "\\xu" or has_unsafe(text[i + 1])):
            out.append("\\")
    return "".join(out)


def _exposition(text: str) -> str:
    """Backslash and double quote escaped as the text format asks."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _sample(name: str, value: float | int, labels: Iterable[tuple[str, object]] = ()) -> str:
    pairs = ",".join(f'{key}="{label_value(v)}"' for key, v in labels)
    number = repr(float(value)) if isinstance(value, float) else str(int(value))
    return f"{name}{{{pairs}}} {number}" if pairs else f"{name} {number}"


class _Families:
    def __init__(self, common: list[tuple[str, object]]) -> None:
        self.lines: list[str] = []
        self.common = common

    def family(self, name: str, help_text: str, samples: Iterable[str]) -> None:
        self.lines += [f"# HELP {name} {help_text}", f"# TYPE {name} gauge", *samples]

    def sample(self, name: str, value: float | int, labels: Iterable[tuple[str, object]] = ()) -> str:
        return _sample(name, value, [*self.common, *labels])


def catalog_region(observations: list[Observation]) -> str:
    """The region of the catalog's endpoints the control plane read ("" when none says; several: joined)."""
    for obs in observations:
        if obs.source == "services" and obs.snapshot is not None:
            regions = sorted({ep.region for ep in getattr(obs.snapshot, "catalog", ()) if ep.region})
            return ",".join(regions)
    return ""


def render_prometheus(observations: list[Observation], generated_at: float, *, cloud: str = "",
                      region: str | None = None, thresholds: object = None, top_queues: int = TOP_QUEUES) -> str:
    """The metrics of one snapshot, newline-terminated (the format wants the last line ended). cloud: the
    `cloud` label; region: the `region` label (None: the catalog's); thresholds: tui.config.Thresholds the
    services' heartbeats are judged with (None: the defaults)."""
    findings = all_findings(observations)
    region = catalog_region(observations) if region is None else region
    out = _Families([("cloud", cloud), ("region", region)])
    _sample = out.sample
    out.family("stacktop_status", "The snapshot's verdict, as its exit code: 0 OK, 1 WARNING, 2 CRITICAL, "
               "3 UNKNOWN (a source could not be read, or none is configured).",
               [_sample("stacktop_status", exit_code(observations))])
    out.family("stacktop_snapshot_timestamp_seconds", "When the snapshot was taken (Unix time).",
               [_sample("stacktop_snapshot_timestamp_seconds", float(generated_at))])
    by_severity: Counter[str] = Counter()
    by_kind: Counter[tuple[str, str]] = Counter()
    for f in findings:  # a group (tui.rules.grouping) counts its members
        by_severity[f.severity] += members(f)
        by_kind[(f.severity, f.kind)] += members(f)
    out.family("stacktop_findings_by_severity", "Findings of the snapshot per severity (triage hints included).",
               [_sample("stacktop_findings_by_severity", by_severity[s], [("severity", s)]) for s in SEVERITIES])
    out.family("stacktop_findings", "Findings of the snapshot per severity and kind.",
               [_sample("stacktop_findings", n, [("severity", s), ("kind", k)]) for (s, k), n in by_kind.items()])
    out.family("stacktop_source_up", "1 when the source was read in this snapshot, 0 when it failed or was late.",
               [_sample("stacktop_source_up", int(obs.ok), [("source", obs.source)]) for obs in observations])
    out.family("stacktop_source_duration_seconds", "How long the source's read took.",
               [_sample("stacktop_source_duration_seconds", round(obs.duration_s, 6), [("source", obs.source)])
                for obs in observations if obs.duration_s is not None])
    by_source = {obs.source: obs.snapshot for obs in observations if obs.ok}
    services = by_source.get("services")
    if services is not None:
        judged = next((obs.view for obs in observations if obs.ok and obs.source == "services"), None)
        _services(out, services, generated_at, thresholds, getattr(judged, "detail", None))
    rabbit = by_source.get("rabbitmq")
    if rabbit is not None:
        backlog = [q for q in getattr(rabbit, "queues", ()) if q.no_consumer_with_messages]
        backlog.sort(key=lambda q: (-(q.messages or 0), q.vhost, q.name))
        out.family("stacktop_queues_backlogged", "RabbitMQ queues holding messages with no consumer.",
                   [_sample("stacktop_queues_backlogged", len(backlog))])
        out.family("stacktop_queue_backlog_messages", "Messages in every RabbitMQ queue that has no consumer.",
                   [_sample("stacktop_queue_backlog_messages", sum(q.messages or 0 for q in backlog))])
        out.family("stacktop_queue_messages", f"Messages in a RabbitMQ queue that has no consumer (the {top_queues} "
                   "fullest backlogged queues only; stacktop_queues_backlogged counts them all).",
                   [_sample("stacktop_queue_messages", q.messages or 0, [("vhost", q.vhost), ("queue", q.name)])
                    for q in backlog[:top_queues]])
    galera = by_source.get("galera")
    if galera is not None:
        out.family("stacktop_galera_cluster_size", "Size of the Galera Primary component as its members report "
                   "it (0 when no node is Primary).",
                   [_sample("stacktop_galera_cluster_size", galera.primary_size or 0)])
        if galera.expected_size is not None:
            out.family("stacktop_galera_cluster_expected_size", "[galera] expected_size (default: the number of "
                       "configured nodes).", [_sample("stacktop_galera_cluster_expected_size",
                                                      galera.expected_size)])
        out.family("stacktop_galera_nodes_reachable", "Configured Galera nodes that answered the status query.",
                   [_sample("stacktop_galera_nodes_reachable", len(galera.reachable))])
    return "\n".join(out.lines) + "\n"


def _services(out: _Families, snap: object, generated_at: float, thresholds: object, judged: object = None) -> None:
    """stacktop_services_up / _total per kind (compute, network, volume) and binary; judged: the rows as the
    poll judged them (the services view's sections), judged at generated_at otherwise."""
    from datetime import UTC, datetime

    from tui.config import Thresholds
    from tui.rules.triage import service_counts

    rows = {section.name: verdicts for section, _, verdicts in judged} if isinstance(judged, tuple) else None
    counts = service_counts(snap, datetime.fromtimestamp(generated_at, UTC), thresholds or Thresholds(),  # type: ignore[arg-type]
                            rows)
    out.family("stacktop_services_up", "Enabled control-plane services (nova, neutron agents, cinder) alive, per "
               "kind and binary, judged as the triage row judges them.",
               [out.sample("stacktop_services_up", up, [("kind", kind), ("binary", binary)])
                for kind, binary, up, _ in counts])
    out.family("stacktop_services_total", "Enabled control-plane services per kind and binary.",
               [out.sample("stacktop_services_total", total, [("kind", kind), ("binary", binary)])
                for kind, binary, _, total in counts])
