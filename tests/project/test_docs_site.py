"""The documentation site (mkdocs.yml): MkDocs with the Material theme over docs/, the API reference generated
from the docstrings by mkdocstrings, built with ``--strict``, so a link to a missing page or heading, a nav
entry without its page, or a docstring mkdocstrings cannot read fails the suite."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_mkdocs_build_strict(tmp_path):
    site = tmp_path / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")         # Material's banner about its successor
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    problems = [line for line in done.stderr.splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert done.returncode == 0, "\n".join(problems) or done.stderr[-3000:]
    hooks = (site / "hooks" / "index.html").read_text(encoding="utf-8")
    assert 'id="page_barrier"' in hooks                    # the anchor a HookError's message names
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    for name in ("simkit.simulate", "simkit.Consumer", "simkit.audit", "simkit.ops"):
        assert f'id="{name}"' in api, f"{name} missing from the API reference"
    assert "Run ``strategy`` on ``scenario`` and judge it" in api or "and judge it" in api
