"""`stacktop snapshot --format prometheus`: the text exposition format, for node_exporter's textfile collector.

    stacktop snapshot --format prometheus > /var/lib/node_exporter/textfile/stacktop.prom.$$ &&
        mv /var/lib/node_exporter/textfile/stacktop.prom.$$ /var/lib/node_exporter/textfile/stacktop.prom

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

from tui.models.observation import Observation
from tui.safetext import clean, has_unsafe
from tui.snapshot import all_findings, exit_code

SEVERITIES = ("critical", "warning", "info")


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
    def __init__(self) -> None:
        self.lines: list[str] = []

    def family(self, name: str, help_text: str, samples: Iterable[str]) -> None:
        self.lines += [f"# HELP {name} {help_text}", f"# TYPE {name} gauge", *samples]


def render_prometheus(observations: list[Observation], generated_at: float) -> str:
    """The metrics of one snapshot, newline-terminated (the format wants the last line ended)."""
    findings = all_findings(observations)
    out = _Families()
    out.family("stacktop_status", "The snapshot's verdict, as its exit code: 0 OK, 1 WARNING, 2 CRITICAL, "
               "3 UNKNOWN (a source could not be read, or none is configured).",
               [_sample("stacktop_status", exit_code(observations))])
    out.family("stacktop_snapshot_timestamp_seconds", "When the snapshot was taken (Unix time).",
               [_sample("stacktop_snapshot_timestamp_seconds", float(generated_at))])
    by_severity = Counter(f.severity for f in findings)
    out.family("stacktop_findings_by_severity", "Findings of the snapshot per severity (triage hints included).",
               [_sample("stacktop_findings_by_severity", by_severity[s], [("severity", s)]) for s in SEVERITIES])
    by_kind = Counter((f.severity, f.kind) for f in findings)
    out.family("stacktop_findings", "Findings of the snapshot per severity and kind.",
               [_sample("stacktop_findings", n, [("severity", s), ("kind", k)]) for (s, k), n in by_kind.items()])
    out.family("stacktop_source_up", "1 when the source was read in this snapshot, 0 when it failed or was late.",
               [_sample("stacktop_source_up", int(obs.ok), [("source", obs.source)]) for obs in observations])
    out.family("stacktop_source_duration_seconds", "How long the source's read took.",
               [_sample("stacktop_source_duration_seconds", round(obs.duration_s, 6), [("source", obs.source)])
                for obs in observations if obs.duration_s is not None])
    by_source = {obs.source: obs.snapshot for obs in observations if obs.ok}
    rabbit = by_source.get("rabbitmq")
    if rabbit is not None:
        backlog = [q for q in getattr(rabbit, "queues", ()) if q.no_consumer_with_messages]
        out.family("stacktop_queues_backlogged", "RabbitMQ queues holding messages with no consumer.",
                   [_sample("stacktop_queues_backlogged", len(backlog))])
        out.family("stacktop_queue_messages", "Messages in a RabbitMQ queue that has no consumer (backlogged "
                   "queues only).", [_sample("stacktop_queue_messages", q.messages or 0,
                                             [("vhost", q.vhost), ("queue", q.name)]) for q in backlog])
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
