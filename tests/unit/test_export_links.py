"""The Markdown export builds no link, image or raw HTML out of a journal: an exercise section is recorded
Markdown, and a crafted journal can put `[x](javascript:...)`, `![](http://tracker/...)`, reference links, raw
tags or fence tricks into it. Checked with a CommonMark parser (markdown-it-py, with GFM tables): for any text
(hypothesis) the sanitised section parses to no link, image or HTML token; a stacktop-made section renders
exactly as before; screenshot links from the journal are always paths."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from tui.exercises import ExerciseResult, md_block, md_code, md_table
from tui.exercises.boot_trace import BootTrace
from tui.export import _exercise_markdown, to_markdown
from tui.recorder import Journal, Recorder

MD = MarkdownIt("commonmark").enable("table")
MD.validateLink = lambda url: True  # type: ignore[method-assign]  # see javascript: links too (it drops them)
ACTIVE = {"link_open", "image", "html_inline", "html_block"}

CRAFTED = "\n".join([
    "[click](javascript:alert(1))",
    "![pixel](http://tracker.example/p.png)",
    "[ref][r]", "", "[r]: javascript:alert(2)",
    "<a href=\"javascript:alert(3)\">x</a> <img src=x onerror=alert(4)>",
    "<javascript:alert(5)> <http://evil.example>",
    "\\[escaped\\](javascript:alert(6))",
    "`code [a](b)` then [live](javascript:alert(7))",
    "`x|`[in a cell](javascript:alert(8))`",
    "| a | `b|` [c](javascript:alert(9)) ` |", "| --- | --- |", "| `[d](e)|` [f](javascript:alert(10)) | z |",
    "`open", "`[span across lines](javascript:alert(11))`",
    "~~~", "```", "~~~", "[after a tilde fence](javascript:alert(12))", "```",
    "````", "```", "````", "[after a long fence](javascript:alert(13))", "````",
    "1. item", "   ```", "[after a list fence](javascript:alert(14))",
    "```python", "[in a code block: stays as written](x)", "<b>kept</b>", "```",
    "```", "never closed [x](y)",
])


def tokens(text: str) -> list[Any]:
    out = []
    for token in MD.parse(text):
        out.append(token)
        out.extend(token.children or ())
    return out


def active(text: str) -> list[str]:
    return [f"{t.type} {t.attrs} {t.content!r}" for t in tokens(text) if t.type in ACTIVE]


def test_a_crafted_exercise_section_exports_with_no_link_image_or_html(tmp_path: Path) -> None:
    assert active(CRAFTED), "the crafted section is full of links and tags as written"
    recorder = Recorder(Journal(tmp_path, name="j.jsonl"))
    recorder.exercise(ExerciseResult("boot-trace", "[s](javascript:alert(0))", CRAFTED),
                      screenshot="javascript:alert(15)")
    recorder.note("[n](javascript:alert(16))", subject="x")
    recorder.close()
    report = to_markdown(tmp_path / "j.jsonl", output=tmp_path / "review.md")
    links = [t for t in tokens(report) if t.type in ACTIVE]
    assert [(t.type, t.attrs.get("href")) for t in links] == [("link_open", "./javascript:alert%2815%29")] * 2, \
        "only the exercise's screenshot and the screenshot list, as paths"
    assert "[in a code block: stays as written](x)\n<b>kept</b>" in report, "code blocks stay as written"
    headings = [t.content for t in tokens(report) if t.type == "inline" and t.content.startswith(("Timeline",
                                                                                                   "Screenshots"))]
    assert headings == ["Timeline", "Screenshots"], "the section's open fence is closed before the next section"


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("[]()!<>`~|\\:/ \n-*_#&;ajh1x.=\"'")), max_size=60))
def test_any_section_sanitised_parses_to_no_link_image_or_html(text: str) -> None:
    assert not active(_exercise_markdown(text)), _exercise_markdown(text)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["[a](javascript:x)", "`", "``", "```", "~~~", "|", "| --- |", "\\", "<b>", "![i](u)",
                                 "\n", "   ", "[r]: u", "x", "<http://e>", "1. ", "> "]), max_size=25))
def test_any_sequence_of_markdown_pieces_sanitised_parses_to_no_link_image_or_html(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert not active(_exercise_markdown(text)), _exercise_markdown(text)


def test_a_section_stacktop_writes_renders_as_before() -> None:
    trace = BootTrace(interval=0.5)
    trace.server_id, trace.name = "0123-abcd", "web [1] | <b>"
    own = trace.result().markdown
    lines = [f"Server {md_code('id [x] <y> `z`')}: a fault", "",
             *md_table(("step", "owner"), [("[scheduling]", "nova|conductor"), ("spawning", "<libvirt>")]), "",
             "Log lines:", "", *md_block(["2026-01-01 INFO nova.compute.manager [req-1 admin] [instance: x] <ok>"]),
             "", "**Outcome: ACTIVE** after 12.0 s (<= 1.5 s)."]
    for section in (own, "\n".join(lines)):
        assert MD.render(_exercise_markdown(section)) == MD.render(section), section
