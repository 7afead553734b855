"""`infersweep recipe render` from a row file, stdin, JSON text or a config key."""

from __future__ import annotations

import json

import yaml

from tests.conftest import FROZEN_MASTER, FROZEN_RUNNERS, REPO

KEY_ARGS = ["--config-key", "dsv4-fp4-mi355x-atom-disagg", "--repo", REPO,
            "--config-files", FROZEN_MASTER,
            "--runner-config", FROZEN_RUNNERS]


def test_config_key_renders_every_row_as_one_document_each(run_cli):
    code, out, err = run_cli("recipe", "render", *KEY_ARGS)
    assert code == 0, err
    docs = list(yaml.safe_load_all(out))
    assert [d["name"] for d in docs] == ["mi355x-atom-dsv4-disagg-1p1d-tp8-8k1k",
                                         "mi355x-atom-dsv4-disagg-2p1d-dpa-tp8-8k1k"]
    assert out.count("# points (concurrency): ") == 2
    assert "# points (concurrency): 4 8 16 32 64 128\n" in out
    assert "# points (concurrency): 256 512 768 1024 2048\n" in out


def test_conc_and_seq_len_select_through_the_matrix(run_cli):
    code, out, _ = run_cli("recipe", "render", *KEY_ARGS, "--conc", "512", "--conc", "1024",
                           "--seq-len", "8k1k", "--format", "json")
    assert code == 0
    item = json.loads(out)
    assert item["template"].endswith("disagg-2p1d-dpa-tp8-8k1k.yaml")
    assert item["points"] == [
        {"conc": 512, "num-prompts": 5120, "num-warmups": 1024,
         "result-file": "mi355x-atom-dsv4-disagg-2p1d-dpa-tp8-8k1k-c512.json"},
        {"conc": 1024, "num-prompts": 10240, "num-warmups": 2048,
         "result-file": "mi355x-atom-dsv4-disagg-2p1d-dpa-tp8-8k1k-c1024.json"}]
    assert item["recipe"]["benchmark"]["command"].count(" bench serve ") == 2
    code, _, err = run_cli("recipe", "render", *KEY_ARGS, "--seq-len", "1k1k")
    assert code == 2
    assert ("Invalid value for '--seq-len': 1k1k: not a sequence family of "
            "dsv4-fp4-mi355x-atom-disagg (it has: 8k1k") in err


def test_output_is_written_whole(run_cli, tmp_path, dsv4_rows):
    target = tmp_path / "recipe.yaml"
    code, out, _ = run_cli("recipe", "render", "--row", json.dumps(dsv4_rows[1]), "--repo",
                           REPO, "--output", target)
    assert (code, out) == (0, "")
    assert yaml.safe_load(target.read_text())["name"] == "mi355x-atom-dsv4-disagg-2p1d-dpa-tp8-8k1k"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["recipe.yaml"]
