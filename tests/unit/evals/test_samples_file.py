from __future__ import annotations

from pathlib import Path

import pytest

from infersweep.diagnostics import InputError
from infersweep.evals import samples


@pytest.fixture
def folder(tmp_path) -> Path:
    ev = tmp_path / "ev"
    (ev / "sub").mkdir(parents=True)
    (ev / "samples.jsonl").write_text("")
    (tmp_path / "outside.jsonl").write_text("")
    return ev


def test_a_relative_name_inside_the_folder_is_the_samples_file(folder):
    assert samples.inside(folder, "samples.jsonl", "e") == folder / "samples.jsonl"
    assert samples.inside(folder, "sub/s.jsonl", "e") == folder / "sub" / "s.jsonl"
    (folder / "link.jsonl").symlink_to(folder / "samples.jsonl")  # a link that stays inside
    assert samples.inside(folder, "link.jsonl", "e") == folder / "link.jsonl"


@pytest.mark.parametrize(("name", "said"), [
    ("/etc/passwd", "is an absolute path"),
    ("../outside.jsonl", "climbs out of the eval's folder ('..')"),
    ("sub/../../outside.jsonl", "climbs out of the eval's folder ('..')"),
    ("", "is not a file name"),
    (None, "is not a file name"),
    (".", "is the eval's folder itself"),
])
def test_a_name_leaving_the_folder_is_refused(folder, name, said):
    with pytest.raises(InputError) as exc:
        samples.inside(folder, name, "ev/eval.json")
    assert str(exc.value).startswith("ev/eval.json:1:1: [eval-samples-outside] samples-file ")
    assert said in str(exc.value)


@pytest.mark.parametrize("how", ["file", "folder", "loop"])
def test_a_symlink_leading_out_is_refused(folder, how):
    if how == "file":
        (folder / "samples.jsonl").unlink()
        (folder / "samples.jsonl").symlink_to(folder.parent / "outside.jsonl")
        name = "samples.jsonl"
    elif how == "folder":
        (folder / "out").symlink_to(folder.parent, target_is_directory=True)
        name = "out/outside.jsonl"
    else:
        (folder / "a").symlink_to(folder / "b")
        (folder / "b").symlink_to(folder / "a")
        name = "a"
    with pytest.raises(InputError) as exc:
        samples.inside(folder, name, "e")
    assert "[eval-samples-outside]" in str(exc.value)
    assert ("symbolic link" in str(exc.value)), str(exc.value)


@pytest.mark.parametrize(("line", "said"), [
    ('{"doc_id": -1, "target": "t", "response": "r", "extracted": {}, "exact_match": {}}',
     "doc_id -1 is not a document number"),
    ('{"doc_id": true, "target": "t", "response": "r", "extracted": {}, "exact_match": {}}',
     "doc_id True is not a document number"),
    ('{"doc_id": 0, "target": 5, "response": "r", "extracted": {}, "exact_match": {}}',
     "'target' is missing or not a string"),
    ('{"doc_id": 0, "target": "t", "extracted": {}, "exact_match": {}}',
     "'response' is missing"),
    ('[1]', "not a JSON object"),
])
def test_a_line_that_is_not_a_sample_is_named(tmp_path, line, said):
    path = tmp_path / "samples.jsonl"
    path.write_text('\n' + line + '\n')
    with pytest.raises(InputError) as exc:
        samples.load(path)
    assert f"{path}:2:1: [eval-samples] not a sample line: {said}" in str(exc.value)
