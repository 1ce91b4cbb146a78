"""The service, sixth round of hostile input: what a fresh tester tried past rounds 1-5."""
from __future__ import annotations

from simkit.service.config import load_config


def test_a_config_file_opening_with_a_byte_order_mark_is_read_as_a_scenario_file_is(tmp_path):
    """An editor's UTF-8 byte order mark (and CRLF line ends): was 'not valid TOML: Invalid statement (at
    line 1, column 1)', while a scenario file with one is read; now the config is read the same way."""
    cfg = tmp_path / "serve.toml"
    cfg.write_bytes(b'\xef\xbb\xbf[[subjects]]\r\nid = "alice"\r\ncredentials = ["alice-token"]\r\n')
    assert load_config(str(cfg)) == {"subjects": [{"id": "alice", "credentials": ["alice-token"]}]}
