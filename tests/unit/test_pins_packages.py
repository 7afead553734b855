"""Pinned Python distributions: the lock agrees with the pin, and the index still serves the
pinned file (checked against a local folder of wheels, pip's own --find-links form)."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from infersweep.cli import main
from infersweep.pins.packages import PackagePin, check_lock, read_lock, verify_package


def make_wheel(folder: Path, name: str, version: str, payload: str = "") -> Path:
    """A minimal, valid pure-Python wheel."""
    folder.mkdir(parents=True, exist_ok=True)
    dist = f"{name.replace('-', '_')}-{version}"
    path = folder / f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{name.replace('-', '_')}/__init__.py", payload)
        z.writestr(f"{dist}.dist-info/METADATA",
                   f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        z.writestr(f"{dist}.dist-info/WHEEL",
                   "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{dist}.dist-info/RECORD", "")
    return path


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pin_for(wheel: Path, lock: str = "client.lock") -> PackagePin:
    return PackagePin("agentic-client", "demo-client", "1.0.0", (sha(wheel),), lock, line=3, col=5)


def test_the_lock_must_name_the_pinned_version_and_digest(tmp_path):
    wheel = make_wheel(tmp_path / "w", "demo-client", "1.0.0")
    pin = pin_for(wheel)
    (tmp_path / "client.lock").write_text(
        f"# comment\ndemo-client==1.0.0 --hash=sha256:{sha(wheel)}\nother==2 --hash=sha256:{'a' * 64}\n")
    assert check_lock(pin, tmp_path, "configs/runtimes.yaml") == []
    (tmp_path / "client.lock").write_text(f"demo_client==1.0.1 --hash=sha256:{'b' * 64}\n")
    problems = check_lock(pin, tmp_path, "configs/runtimes.yaml")
    assert [p.rule for p in problems] == ["package-lock-mismatch"] * 2
    assert problems[0].line == 1 and "pin is 1.0.0" in problems[0].message
    (tmp_path / "client.lock").write_text("other==2 --hash=sha256:" + "a" * 64 + "\n")
    [missing] = check_lock(pin, tmp_path, "configs/runtimes.yaml")
    assert (missing.path, missing.line) == ("configs/runtimes.yaml", 3)


def test_a_lock_line_without_a_hash_is_located(tmp_path):
    lock = tmp_path / "client.lock"
    lock.write_text("ok==1 --hash=sha256:" + "c" * 64 + "\nnohash==1.0\n")
    _, problems = read_lock(lock)
    assert [(p.line, p.rule) for p in problems] == [(2, "package-lock-line")]


def test_verify_accepts_the_pinned_file_and_refuses_a_changed_or_missing_one(tmp_path):
    wheel = make_wheel(tmp_path / "index", "demo-client", "1.0.0")
    pin = pin_for(wheel)
    local = ["--no-index", "--find-links", str(tmp_path / "index")]
    assert verify_package(pin, index_args=local).status == "ok"
    # the same version re-uploaded with other bytes (what a compromised index would serve)
    make_wheel(tmp_path / "index", "demo-client", "1.0.0", payload="evil = 1\n")
    changed = verify_package(pin, index_args=local)
    assert changed.status == "changed" and "not the pinned file" in changed.message
    gone = PackagePin("agentic-client", "demo-client", "9.9.9", pin.sha256, "client.lock")
    assert verify_package(gone, index_args=local).status == "not-found"


def test_the_repository_pins_the_replay_client_and_its_lock_agrees(capsys):
    from infersweep.pins.lock import load_lock

    lock = load_lock()
    client = lock.packages["agentic-client"]
    assert client.distribution == "agentx-harness"
    assert check_lock(client, Path("."), "configs/runtimes.yaml") == []
    locked, problems = read_lock(Path(client.lock))
    assert problems == [] and len(locked) > 100  # its whole environment, every line hashed
    main(["pins", "show", "agentic-client", "--field", "version"])
    assert capsys.readouterr().out.strip() == client.version


def test_show_refuses_a_field_a_package_pin_does_not_have(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["pins", "show", "agentic-client", "--field", "commit"])
    assert stop.value.code != 0
    assert "has no field" in capsys.readouterr().err
