"""The one error every source raises: a read that failed, said in one line."""

from __future__ import annotations


class SourceError(Exception):
    """A source could not be read. str(err) is one line fit for a pane border and a log."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class SourceAbsent(SourceError):
    """The source has nothing to say at this point, and that is no failure: a replay before the source's first
    recorded snapshot (or of a journal that never recorded it). Its observation is not counted as failing."""
