"""The query parameters of the RabbitMQ collector's queue listings (management API `/api/queues[/<vhost>]`).

What the broker does with them (RabbitMQ 3.x and 4.0, rabbit_mgmt_util:augment_resources):
- no `page`: one answer, a JSON list of every queue; `name` is then ignored (the broker filters only while
  paging). Unpaged, the broker lists, formats and sorts the queues once.
- `page` + `page_size` (at most 500): an object with `items`; `name` (with `use_regex=true` a regex) filters
  before the page is cut. For every page the broker lists, formats and sorts every queue again (statistics
  only for the page's), so N queues in pages of 500 cost it N / 500 listings: paging is kept for the
  name-filtered statistics requests only.
- `columns`: the fields kept in each row; with a field beyond the basic ones (statistics: messages, consumers,
  idle_since) every listed queue gets its statistics looked up.
- `disable_stats=true&enable_queue_totals=true`: no statistics; message totals read from each queue itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import quote

from tui.collectors.rabbitmq_payload import LIGHT_QUEUE_COLUMNS, QUEUE_COLUMNS

REGEX_BUDGET = 1500  # characters of name regex per request (the broker's request line is limited)


def stats_listing(trim_columns: bool = True) -> dict[str, str]:
    """Every queue with statistics, unpaged: the columns the rules use (trim_columns=False: every field)."""
    return {"columns": ",".join(QUEUE_COLUMNS)} if trim_columns else {}


def light_listing() -> dict[str, str]:
    """Every queue without statistics, unpaged: message totals and topology, no consumers / idle_since."""
    return {"columns": ",".join(LIGHT_QUEUE_COLUMNS), "disable_stats": "true", "enable_queue_totals": "true"}


def name_regexes(names: Iterable[str], budget: int = REGEX_BUDGET) -> list[str]:
    """Anchored regexes matching exactly these queue names, each at most about `budget` characters of names
    (one name longer than the budget gets a regex of its own)."""
    chunks: list[list[str]] = [[]]
    size = 0
    for name in sorted(names):
        piece = re.escape(name)
        if chunks[-1] and size + len(piece) + 1 > budget:
            chunks.append([])
            size = 0
        chunks[-1].append(piece)
        size += len(piece) + 1
    return ["^(?:" + "|".join(chunk) + ")$" for chunk in chunks if chunk]


def stats_by_name(regex: str, page: int, page_size: int, trim_columns: bool = True) -> dict[str, str | int]:
    """One page of the queues whose name matches `regex`, with statistics (paged: unpaged, `name` is ignored)."""
    return {**stats_listing(trim_columns), "name": regex, "use_regex": "true", "page": page,
            "page_size": page_size}


def queue_path(vhost: str, name: str) -> str | None:
    """`/api/queues/<vhost>/<name>`, one queue's own GET; None for a queue the API cannot address: a vhost or
    name of `.` or `..` is taken as a dot segment (even percent-encoded) and the GET becomes a listing of
    every queue."""
    if vhost in (".", "..") or name in (".", ".."):
        return None
    return f"/api/queues/{quote(vhost, safe='')}/{quote(name, safe='')}"
