"""`store list` prints what the store holds with control characters escaped: a config key
read from a run folder cannot recolour, clear or overwrite the terminal."""

from __future__ import annotations

from tests import resultsrun

HOSTILE = "cfg-\x1b[2J\x1b]0;pwned\x07\rnice\u202e"


def test_store_list_escapes_control_characters(tmp_path, run_cli):
    folder = tmp_path / "run"
    resultsrun.write_job(folder, resultsrun.single_row((1, 2)), config_key=HOSTILE,
                         name="h200-vllm-tp4-1k1k", run_id="local-1")
    db = f"sqlite:///{tmp_path / 'store.db'}"
    code, out, err = run_cli("store", "ingest", folder, "--db", db)
    assert code == 0, out + err
    code, out, err = run_cli("store", "list", "--db", db)
    assert code == 0, err
    assert not any(c in out for c in "\x1b\x07\r\u202e")
    assert "cfg-\\x1b[2J\\x1b]0;pwned\\x07\\rnice\\u202e" in out
    code, out, _ = run_cli("store", "list", "--db", db, "--format", "json")
    assert code == 0 and "\x1b" not in out and "\\u001b" in out
