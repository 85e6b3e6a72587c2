"""Many findings of one kind shown as one: the count and the first subjects, not a row per subject.

A placement audit at 30,000 servers can raise thousands of INFO "suspected stale allocation" findings at once;
each view listing every one of them (the findings pane, `snapshot` in every format, the journal and its export)
costs what exists, not what changed, and buries the few rows that matter. From GROUP_AT findings of one kind
and severity, the shown list carries one finding instead: the same kind and severity, subject GROUP_SUBJECT
(stable while the count moves, so its row, its `since` and a silence on it stay), a summary with the count, the
first subjects and the first finding's summary (the same kind flooding at a second severity: subject
"* <severity>"), and evidence `count`, `subjects` (the first FIRST_SUBJECTS) and
`first` (the first finding's evidence). Fewer than GROUP_AT stay one row each. Triage hints are never grouped.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tui.models.finding import GROUP_SUBJECT, Finding

GROUP_AT = 100  # this many findings of one kind and severity are shown as one
FIRST_SUBJECTS = 20  # subjects a group's evidence names
SUBJECTS_IN_SUMMARY = 3


def grouped(kind_findings: list[Finding], subject: str = GROUP_SUBJECT) -> Finding:
    """One finding standing for `kind_findings` (one kind and severity): the first subjects in their order."""
    kind_findings = sorted(kind_findings, key=lambda f: f.subject)
    first = kind_findings[0]
    count = len(kind_findings)
    subjects = [f.subject for f in kind_findings[:FIRST_SUBJECTS]]
    named = ", ".join(subjects[:SUBJECTS_IN_SUMMARY])
    evidence: dict[str, Any] = {"count": count, "subjects": subjects, "first": dict(first.evidence)}
    return Finding(first.severity, first.kind, subject,
                   f"{count:,} findings of this kind (first: {named}, ...); the first: {first.summary}",
                   evidence, first.next_step, first.source)


def group_floods(findings: Iterable[Finding], at: int = GROUP_AT) -> list[Finding]:
    """`findings` in their order, each kind and severity found `at` times or more replaced by one finding
    where its first one was."""
    listed = list(findings)
    by_kind: dict[tuple[str, str], list[Finding]] = {}
    for f in listed:
        if not f.kind.startswith("triage."):
            by_kind.setdefault((f.kind, f.severity), []).append(f)
    floods = {key: members for key, members in by_kind.items() if len(members) >= at}
    if not floods:
        return listed
    out: list[Finding] = []
    kinds_grouped: set[str] = set()
    for f in listed:
        members = floods.get((f.kind, f.severity))
        if members is None:
            out.append(f)
        elif members[0] is f:  # a second severity of one kind: its own group, its own subject
            out.append(grouped(members, GROUP_SUBJECT if f.kind not in kinds_grouped
                               else f"{GROUP_SUBJECT} {f.severity}"))
            kinds_grouped.add(f.kind)
    return out


def group_jump(f: Finding) -> tuple[str, str]:
    """What `enter` on a group opens: the pane of its kind (its subjects are many), else its source's."""
    from tui.rules.triage import PANE_BY_PREFIX

    pane = next((pane for prefix, pane in PANE_BY_PREFIX if f.kind.startswith(prefix)), None)
    return ("pane", pane or f.source or "findings")
