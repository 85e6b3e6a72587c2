"""`stacktop snapshot --format nagios`: the Nagios / Icinga plugin output.

    STACKTOP CRITICAL - 7 critical, 3 warning: triage.compute_down compute-01, instance.stuck (3), ... | ...
    CRITICAL nova.service_down compute-01: <summary> - next: <next step>
    ...
    source services: ok in 0.41s

The first line is the state (from the exit code), the sources that could not be read, the counts and the
worst findings (kind and subject, the first three kinds), then the performance data
(label=value[UOM];warn;crit;min;max, labels with spaces in single quotes); the lines after it are the long
output: every finding (most severe first), then every source with its error. Text from outside is cleaned
(tui.safetext.clean) and never carries a `|`, which would start performance data.
"""

from __future__ import annotations

from tui.models.finding import Finding, members
from tui.models.observation import Observation
from tui.safetext import clean
from tui.snapshot import EXIT_CRITICAL, EXIT_OK, EXIT_UNKNOWN, EXIT_WARNING, all_findings, exit_code
from tui.snapshot_plain import finding_line, source_line

STATES = {EXIT_OK: "OK", EXIT_WARNING: "WARNING", EXIT_CRITICAL: "CRITICAL", EXIT_UNKNOWN: "UNKNOWN"}
FIRST_LINE_KINDS = 3  # the first line names the worst findings' first kinds
SEVERITIES = ("critical", "warning", "info")


def plain(value: object) -> str:
    """One line of plugin output: controls written out as escapes, no `|`."""
    return clean(value).replace("|", "/")


def perf_label(label: str) -> str:
    """A performance data label: `=` is not allowed in it, single quotes are doubled, and the label is quoted
    when it holds a space or a quote."""
    label = label.replace("=", "_")
    if " " in label or "'" in label:
        return "'" + label.replace("'", "''") + "'"
    return label


def _number(value: float | int) -> str:
    """Plain decimal notation (the plugin guidelines have no exponent), to the millisecond."""
    if isinstance(value, int):
        return str(value)
    return f"{value:.3f}".rstrip("0").rstrip(".") or "0"


def perf(label: str, value: float | int, uom: str = "", warn: str = "", crit: str = "",
         minimum: float | int | None = None, maximum: float | int | None = None) -> str:
    fields = [f"{_number(value)}{uom}", warn, crit, "" if minimum is None else _number(minimum),
              "" if maximum is None else _number(maximum)]
    return f"{perf_label(label)}={';'.join(fields).rstrip(';')}"


def _counts(findings: list[Finding]) -> str:
    counts = [(s, sum(members(f) for f in findings if f.severity == s)) for s in SEVERITIES]
    return ", ".join(f"{n} {s}" for s, n in counts if n) or "no findings"


def _by_kind(findings: list[Finding]) -> list[str]:
    """"kind subject" for a kind found once, "kind (N)" for one found N times; in the findings' order."""
    first: dict[str, str] = {}
    found: dict[str, int] = {}
    for f in findings:  # a group (tui.rules.grouping) counts its members
        first.setdefault(f.kind, f.subject)
        found[f.kind] = found.get(f.kind, 0) + members(f)
    return [f"{kind} {first[kind]}" if n == 1 else f"{kind} ({n})" for kind, n in found.items()]


def _headline(observations: list[Observation], findings: list[Finding], code: int) -> str:
    if not observations:
        return "no source is configured"
    failed = [obs.source for obs in observations if not obs.ok]  # their errors are in the long output
    parts = [f"not read: {', '.join(failed)}"] if failed else []
    worst = [f for f in findings if f.severity == findings[0].severity and f.severity != "info"] if findings else []
    counts = _counts(findings)
    if worst:
        kinds = _by_kind(worst)
        shown = ", ".join(kinds[:FIRST_LINE_KINDS])
        more = len(kinds) - FIRST_LINE_KINDS
        counts += f": {shown}" + (f" and {more} more" if more > 0 else "")
    elif code == EXIT_OK:
        counts += f", {len(observations)} source{'s' if len(observations) != 1 else ''} read"
    return "; ".join([*parts, counts])


def perfdata(observations: list[Observation], findings: list[Finding]) -> list[str]:
    """Finding counts (a critical or warning finding is over its threshold), sources read, each source's read
    time, the RabbitMQ backlog and the Galera cluster size."""
    counts = {s: sum(members(f) for f in findings if f.severity == s) for s in SEVERITIES}
    out = [perf("findings_critical", counts["critical"], crit="0", minimum=0),
           perf("findings_warning", counts["warning"], warn="0", minimum=0),
           perf("findings_info", counts["info"], minimum=0),
           perf("sources_ok", sum(1 for obs in observations if obs.ok), minimum=0, maximum=len(observations))]
    for obs in observations:
        if obs.duration_s is not None:
            out.append(perf(f"{obs.source}_duration", obs.duration_s, "s", minimum=0))
    by_source = {obs.source: obs for obs in observations if obs.ok}
    rabbit = getattr(by_source.get("rabbitmq"), "snapshot", None)
    if rabbit is not None:
        backlog = [q for q in getattr(rabbit, "queues", ()) if q.no_consumer_with_messages]
        out.append(perf("queues_backlogged", len(backlog), minimum=0))
        out.append(perf("queue_backlog_messages", sum(q.messages or 0 for q in backlog), minimum=0))
    galera = getattr(by_source.get("galera"), "snapshot", None)
    if galera is not None:
        size = galera.primary_size or 0
        expected = galera.expected_size
        if expected:
            out.append(perf("galera_cluster_size", size, warn=f"{expected}:", crit=f"{expected // 2 + 1}:",
                            minimum=0, maximum=expected))
        else:
            out.append(perf("galera_cluster_size", size, minimum=0))
    return out


def details(observations: list[Observation], findings: list[Finding]) -> list[str]:
    """The long output: every finding, then every source, one line each."""
    lines = [finding_line(f) for f in findings] + [source_line(obs) for obs in observations]
    return [line.replace("|", "/") for line in lines]


def render_nagios(observations: list[Observation]) -> str:
    """The whole plugin output (first line, long output), newline-terminated."""
    findings = all_findings(observations)
    code = exit_code(observations)
    first = f"STACKTOP {STATES[code]} - {plain(_headline(observations, findings, code))}"
    data = perfdata(observations, findings)
    lines = [f"{first} | {' '.join(data)}" if data else first, *details(observations, findings)]
    return "\n".join(lines) + "\n"
