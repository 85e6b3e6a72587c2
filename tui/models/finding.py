"""The Finding: the contract shared by rules, panes, the JSON snapshot and the recorder."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from types import MappingProxyType
from typing import Any, Literal

from tui.records import record

Severity = Literal["critical", "warning", "info"]
SEVERITY_ORDER: dict[str, int] = {"critical": 0, "warning": 1, "info": 2}


@record
class Finding:
    """One thing the on-call engineer should know, with the evidence it rests on.

    kind is a dotted, stable id ("nova.service_down"); subject is the thing it is about (a host, queue,
    node or server id); next_step says what to open or run first; source is the collector's name.
    """

    severity: Severity
    kind: str
    subject: str
    summary: str
    evidence: Mapping[str, Any] = field(default_factory=dict)
    next_step: str = ""
    source: str = ""

    def __post_init__(self) -> None:
        if self.severity not in SEVERITY_ORDER:
            raise ValueError(f"unknown severity {self.severity!r}")
        if not self.kind or "." not in self.kind:
            raise ValueError(f"finding kind must be a dotted id, got {self.kind!r}")
        object.__setattr__(self, "evidence", MappingProxyType(dict(self.evidence)))

    @property
    def key(self) -> tuple[str, str]:
        """Identity across polls: the same kind about the same subject is the same finding."""
        return (self.kind, self.subject)

    def to_dict(self) -> dict[str, Any]:
        from tui.jsonable import to_jsonable

        return {
            "severity": self.severity,
            "kind": self.kind,
            "subject": self.subject,
            "summary": self.summary,
            "evidence": to_jsonable(dict(self.evidence)),
            "next_step": self.next_step,
            "source": self.source,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Finding:
        return cls(
            severity=data["severity"],
            kind=data["kind"],
            subject=data["subject"],
            summary=data["summary"],
            evidence=data.get("evidence", {}),
            next_step=data.get("next_step", ""),
            source=data.get("source", ""),
        )


def sort_findings(findings: list[Finding]) -> list[Finding]:
    """Most severe first, then by kind and subject, so output is stable."""
    return sorted(findings, key=lambda f: (SEVERITY_ORDER[f.severity], f.kind, f.subject))


def worst_severity(findings: list[Finding]) -> Severity | None:
    if not findings:
        return None
    return min((f.severity for f in findings), key=lambda s: SEVERITY_ORDER[s])


GROUP_SUBJECT = "*"  # the subject of many findings of one kind shown as one (tui.rules.grouping)


def is_group(f: Finding) -> bool:
    """Whether `f` stands for many findings of its kind (tui.rules.grouping): evidence `count` and `subjects`."""
    return f.subject.startswith(GROUP_SUBJECT) and isinstance(f.evidence.get("count"), int) \
        and "subjects" in f.evidence


def members(f: Finding) -> int:
    """How many findings `f` stands for: a group's count, else 1 (counts and metrics count findings, not rows)."""
    return int(f.evidence["count"]) if is_group(f) else 1
