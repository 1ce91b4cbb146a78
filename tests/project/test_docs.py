"""The pages say what simkit does: README.md and docs/*.md are run and their links followed.

Every fenced ``text`` block that starts with a ``$ simkit ...`` line is a transcript. Each
of its commands is run as ``python -m simkit ...`` with the same arguments, in a temporary
folder of its own page (blocks run in page order, so a later command may read a file an
earlier one wrote), and what it prints (stdout, then stderr) must be what the page shows,
up to trailing whitespace. An HTML comment on the line right above a block changes that:

- ``<!-- file: NAME -->``: the block is a file; it is written as NAME into the page's folder, for the commands
  that follow (a consumer, a scenario);
- ``<!-- exit N -->``: every command of the block must exit with status N (default 0);
- ``<!-- output varies: WHY -->``: timings, kill instants, ports: the command runs, only its exit status is
  checked;
- ``<!-- numbers vary: WHY -->``: timings: what it prints must be what the page shows with every number masked
  and runs of blanks taken as one (a measure the page leaves out, or one it shows that is gone, fails);
- ``<!-- not run: WHY -->``: too slow for the suite (a minute or more); reported as a skip with its reason.

``output varies`` and ``not run`` are kept few (:data:`MAX_UNCHECKED`). Every relative link must name an
existing file and, if it has one, a heading of that page (GitHub's anchors). And docs/cli.md names every
option of every command, and spells out each ``--json`` object as the command prints it.
"""
from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: At most this many blocks are run without comparing their output, or not run at all.
MAX_UNCHECKED = 10

_FENCE = re.compile(r"^(```+|~~~+)\s*([\w+-]*)")
_MARK = re.compile(r"^<!--\s*(file|exit|output varies|numbers vary|not run)\s*:?\s*(.*?)\s*-->\s*$")


@dataclass
class Block:
    page: Path
    line: int                       # 1-based line of the opening fence
    lang: str
    text: str
    marks: dict[str, str] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def is_transcript(self) -> bool:
        return self.lang == "text" and self.text.lstrip().startswith("$ simkit ")


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of a page, with the marks on the comment lines right above each."""
    lines = page.read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, start = m.group(1), i
        marks, j = {}, i - 1
        while j >= 0 and (mark := _MARK.match(lines[j].strip())):
            marks[mark.group(1)] = mark.group(2)
            j -= 1
        i += 1
        body = []
        while i < len(lines) and not lines[i].startswith(fence):
            body.append(lines[i])
            i += 1
        i += 1
        out.append(Block(page, start + 1, m.group(2), "\n".join(body) + "\n", marks))
    return out


def transcript(block: Block) -> list[tuple[str, str]]:
    """(command, expected output) pairs: a command is a ``$
    `` line, its output the lines up to the next one."""
    pairs: list[tuple[str, list[str]]] = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            pairs.append((line[2:], []))
        elif pairs:
            pairs[-1][1].append(line)
    return [(cmd, "\n".join(out)) for cmd, out in pairs]


def normal(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines()).strip("\n")


def shape(text: str) -> str:
    """:func:`normal` text with every number masked and each run of blanks one blank: what stays of a
    transcript whose timings vary (``numbers vary``)."""
    return re.sub(r"[ \t]+", " ", re.sub(r"\d+(?:\.\d+)?", "#", normal(text)))


ALL = [b for page in PAGES for b in blocks(page)]
UNCHECKED = [b for b in ALL if b.is_transcript and ({"output varies", "not run"} & b.marks.keys())]
NOT_RUN = [b for b in ALL if b.is_transcript and "not run" in b.marks]


def _env() -> dict[str, str]:
    env = dict(os.environ, COLUMNS="100", MPLBACKEND="Agg", PYTHONIOENCODING="utf-8")
    env.pop("SIMKIT_REQUIRE_BROWSER", None)
    return env


def _run_page(page: Path, folder: Path) -> list[str]:
    """Run a page's blocks in ``folder``; every mismatch, as text."""
    problems = []
    for block in blocks(page):
        if "file" in block.marks:
            (folder / block.marks["file"]).write_text(block.text, encoding="utf-8")
            continue
        if not block.is_transcript or "not run" in block.marks:
            continue
        status = int(block.marks.get("exit", "0"))
        seen = shape if "numbers vary" in block.marks else normal
        for cmd, expected in transcript(block):
            args = shlex.split(cmd)
            if args[0] != "simkit":
                problems.append(f"{block.where}: '$ {cmd}' is not a simkit command; "
                                "checked transcripts run only simkit")
                continue
            done = subprocess.run([sys.executable, "-m", "simkit", *args[1:]], cwd=folder, env=_env(),
                                  capture_output=True, text=True, encoding="utf-8", timeout=300)
            got = done.stdout + done.stderr
            if done.returncode != status:
                problems.append(f"{block.where}: '$ {cmd}' exited {done.returncode}, the page says "
                                f"{status}\n{got}")
            elif "output varies" not in block.marks and seen(got) != seen(expected):
                diff = "\n".join(difflib.unified_diff(seen(expected).splitlines(), seen(got).splitlines(),
                                                      "the page", "simkit prints", lineterm=""))
                problems.append(f"{block.where}: '$ {cmd}' prints something else\n{diff}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_commands_print_what_the_page_shows(page, tmp_path):
    """Each checked ``$ simkit`` transcript of the page, run in order in one folder, prints what it shows."""
    problems = _run_page(page, tmp_path)
    assert not problems, "\n\n".join(problems)


@pytest.mark.parametrize("block", NOT_RUN, ids=lambda b: b.where)
def test_slow_transcripts_are_reported(block):
    """A transcript marked ``not run`` is a visible skip with its reason, never a silent one."""
    pytest.skip(f"not run: {block.marks['not run'] or 'no reason given'} ({block.where}: "
                f"{transcript(block)[0][0]})")


def test_unchecked_transcripts_are_few_and_say_why():
    assert len(UNCHECKED) <= MAX_UNCHECKED, [b.where for b in UNCHECKED]
    for b in UNCHECKED:
        reason = b.marks.get("not run", b.marks.get("output varies"))
        assert reason, f"{b.where}: say why its output is not checked"


def test_every_simkit_transcript_is_a_text_block():
    """A ``$ simkit`` transcript in a ``bash`` or ``console`` block would escape the check above."""
    stray = [b.where for b in ALL if not b.is_transcript and b.text.lstrip().startswith("$ simkit ")]
    assert not stray


# -- links ---------------------------------------------------------------------------------------------------
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _prose(page: Path) -> str:
    """The page without its fenced blocks and inline code, where brackets are not links."""
    text, fence = [], None
    for line in page.read_text(encoding="utf-8").splitlines():
        m = _FENCE.match(line)
        if m and (fence is None or line.startswith(fence)):
            fence = m.group(1) if fence is None else None
            continue
        if fence is None:
            text.append(re.sub(r"`[^`]*`", "", line))
    return "\n".join(text)


def anchors(page: Path) -> set[str]:
    """GitHub's heading anchors of a page: lower case,
    punctuation dropped, spaces to hyphens, repeats numbered."""
    seen: dict[str, int] = {}
    out = set()
    fence = None
    for line in page.read_text(encoding="utf-8").splitlines():
        m = _FENCE.match(line)
        if m and (fence is None or line.startswith(fence)):
            fence = m.group(1) if fence is None else None
            continue
        h = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if fence is None and h:
            slug = re.sub(r"[^\w\- ]", "", h.group(1).replace("`", "").lower()).replace(" ", "-")
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def links(page: Path) -> list[str]:
    return [t for t in _LINK.findall(_prose(page)) if not re.match(r"^[a-z]+:", t)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    broken = []
    for target in links(page):
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


# -- the command line page names every option ----------------------------------------------------------------
def test_cli_page_names_every_command_and_option():
    from simkit.cli import build_parser
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    missing = []
    for name, parser in sub.choices.items():
        if f"simkit {name}" not in text:
            missing.append(f"simkit {name}")
        for action in parser._actions:
            for option in action.option_strings:
                if option.startswith("--") and option != "--help" and option not in text:
                    missing.append(f"simkit {name} {option}")
    assert not missing, missing


# -- the --json objects docs/cli.md spells out key by key ----------------------------------------------------
def spelled(obj: str) -> dict:
    """An object as docs/cli.md spells it, ``{a, b: [{c, d}], e}``, as ``{"a": None, "b": {"c": None, "d":
    None}, "e": None}``: a key, and for a list of objects spelled out, the keys of each (``[...]``: not)."""
    out: dict = {}
    depth, part = 0, ""
    for ch in obj.strip()[1:-1] + ",":
        if ch == "," and depth == 0:
            key, _, rest = part.partition(":")
            out[key.strip()] = spelled(rest.strip()[1:-1]) if rest.strip().startswith("[{") else None
            part = ""
            continue
        depth += (ch in "[{") - (ch in "]}")
        part += ch
    return out


def unspelled(spelling: dict, printed: dict) -> list[str]:
    """Where an object printed and its spelling differ: keys only one of them has, at the top and in the first
    item of each list spelled out."""
    problems = [f"{k}: printed, not on the page" for k in printed if k not in spelling]
    problems += [f"{k}: on the page, not printed" for k in spelling if k not in printed]
    for k, inner in spelling.items():
        if inner is not None and printed.get(k):
            problems += [f"{k}[0].{p}" for p in unspelled(inner, printed[k][0])]
    return problems


def _cli_objects(command: str) -> list[dict]:
    """The ``{...}`` objects the section "simkit COMMAND" of docs/cli.md spells out, in order."""
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    section = re.search(rf"^## simkit {command}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert section, f"docs/cli.md has no section simkit {command}"
    return [spelled(o.replace("\n", " ")) for o in re.findall(r"`(\{[a-z_][^`]*\})`", section.group(1))]


@pytest.mark.parametrize("args, which", [
    (["explore", "retry_walkthrough", "--max-crashes", "0"], 0),
    (["sweep", "retry_walkthrough", "--strategy", "safe", "--seeds", "1", "--jobs", "1"], 0),
    (["shrink", "shortcut_persist_token_on_fetch", "--strategy", "persist_token_on_fetch"], 0),
    (["service", "initial_reconciliation"], 0),
    (["service", "checkpoint_service", "--explore", "--max-crashes", "0", "--lost-responses", "0"], 1),
], ids=lambda a: " ".join(a) if isinstance(a, list) else None)
def test_json_objects_have_the_keys_the_cli_page_spells_out(args, which, tmp_path):
    """docs/cli.md spells out each command's ``--json`` object key by key: the command prints those keys, and
    no other (a key printed and never described, or described and gone, misleads a script that reads it)."""
    done = subprocess.run([sys.executable, "-m", "simkit", *args, "--json"], cwd=tmp_path, env=_env(),
                          capture_output=True, text=True, encoding="utf-8", timeout=300)
    assert done.returncode == 0, done.stderr
    problems = unspelled(_cli_objects(args[0])[which], json.loads(done.stdout))
    assert not problems, f"simkit {' '.join(args)} --json against docs/cli.md: {problems}"


def test_the_audit_json_object_has_the_keys_the_cli_page_spells_out():
    """As above for ``simkit audit --json`` (an audit takes its budget: its object is built as the command
    builds it, from a result with one failure)."""
    import simkit
    from simkit.tools.audit import Audit, Case, Failure
    sc = simkit.load("shortcut_persist_token_on_fetch")
    run = simkit.simulate(sc, "persist_token_on_fetch")
    failure = Failure(Case("bundled", sc, sc.name, sc.seed), "lost", (), run.as_dict(), sc)
    result = Audit("persist_token_on_fetch", "persist_token_on_fetch", cases=1, failures=[failure])
    printed = json.loads(json.dumps({**result.as_dict(), "out": "simkit-audit-x.toml"}))
    (spelling,) = _cli_objects("audit")
    assert not unspelled(spelling, printed)
