"""Frozen dataclasses: what collectors produce and rules consume. No I/O, no Textual."""

from tui.models.finding import SEVERITY_ORDER, Finding, Severity
from tui.models.observation import Observation

__all__ = ["SEVERITY_ORDER", "Finding", "Observation", "Severity"]
