"""Issue 32: a ``serve`` config with 200 journals (of up to 100,000 changes each) was built whole at start-up,
memory and time growing with the file. Now a config holds at most 100 ``[[journals]]``, 100,000 changes in
all, 1000 ``[[subjects]]`` and 100 grants a subject (docs/service.md, "Config file"); above, one line naming
the file, the key and the limit, exit 2, before the server listens."""
from __future__ import annotations

import pytest

from simkit.cli import main
from simkit.service.config import (
    MAX_CONFIG_CHANGES,
    MAX_CONFIG_GRANTS,
    MAX_CONFIG_JOURNALS,
    MAX_CONFIG_SUBJECTS,
    apply_config,
    dev_service,
)


def journals(n: int, changes: int = 0) -> str:
    return "".join(f'[[journals]]\nscope = {{project_id = "p{i}", visibility = "shared"}}\nchanges = '
                   f'{changes}\n'
                   for i in range(n))


def subjects(n: int) -> str:
    return "".join(f'[[subjects]]\nid = "s{i}"\n' for i in range(n))


def grants(n: int) -> str:
    one = '[[subjects.grants]]\nscope = {project_id = "p"}\ncapabilities = ["memory_read"]\n'
    return '[[subjects]]\nid = "alice"\n' + one * n


@pytest.mark.parametrize("content, problem", [
    (journals(200), f"journals: 200 tables; at most {MAX_CONFIG_JOURNALS}"),
    (journals(MAX_CONFIG_JOURNALS + 1), f"journals: {MAX_CONFIG_JOURNALS + 1} tables; at most 100"),
    (journals(3, MAX_CONFIG_CHANGES // 2), "journals[2]: changes: 150000 in journals[0..2]; at most 100000"),
    (subjects(MAX_CONFIG_SUBJECTS + 1), f"subjects: {MAX_CONFIG_SUBJECTS + 1} tables; at most 1000"),
    (grants(MAX_CONFIG_GRANTS + 1), f"subjects[0]: grants: {MAX_CONFIG_GRANTS + 1} tables; at most 100"),
], ids=["200 journals", "101 journals", "changes in all", "subjects", "grants"])
def test_a_config_past_its_bounds_is_one_line_naming_the_key_and_the_limit(
    tmp_path, capsys, content, problem
):
    cfg = tmp_path / "serve.toml"
    cfg.write_text(content)
    assert main(["serve", "--config", str(cfg), "--port", "0"]) == 2
    captured = capsys.readouterr()
    assert (
        captured.out == "" and captured.err.startswith(f"simkit: {cfg}: ") and captured.err.count("\n") == 1
    )
    assert problem in captured.err, captured.err


def test_a_config_at_its_bounds_is_built():
    import tomllib
    svc = dev_service()
    data = tomllib.loads(journals(MAX_CONFIG_JOURNALS, MAX_CONFIG_CHANGES // MAX_CONFIG_JOURNALS)
                         + grants(MAX_CONFIG_GRANTS))
    assert apply_config(svc, data, "cfg") == []
    assert len(svc.journals) == MAX_CONFIG_JOURNALS + 1                   # the dev journal too
