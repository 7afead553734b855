"""act starts with an allow-list of this machine's environment (host mode copies act's
environment into every step of the replayed head), and its log masks secrets."""

from __future__ import annotations

from infersweep.replay.hostenv import (
    act_environment,
    is_allowed,
    mask_values,
    secret_file_values,
)
from infersweep.replay.runner import TOKEN, act_command

USER_ENV = {
    "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
    "SSL_CERT_FILE": "/etc/ssl/cert.pem", "PIP_FIND_LINKS": "/wheels",
    "HOME": "/home/maya", "TMPDIR": "/var/tmp/maya", "XDG_CACHE_HOME": "/home/maya/.cache",
    "GITHUB_TOKEN": "ghp_realrealrealrealrealreal0000",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCY",
    "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "INFERSWEEP_DB_URL": "postgresql://u:pw@db/x",
    "OPENAI_API_KEY": "sk-planted", "SSH_AUTH_SOCK": "/tmp/ssh-agent.sock",
    "GIT_CONFIG_GLOBAL": "/home/maya/.gitconfig", "LD_PRELOAD": "/home/maya/evil.so",
}


def test_only_allowed_variables_reach_act(tmp_path):
    env = act_environment(tmp_path, USER_ENV)
    for name in ("GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID",
                 "INFERSWEEP_DB_URL", "OPENAI_API_KEY", "SSH_AUTH_SOCK", "GIT_CONFIG_GLOBAL",
                 "LD_PRELOAD", "XDG_CACHE_HOME"):
        assert name not in env, name
    for name in ("PATH", "LANG", "LC_ALL", "SSL_CERT_FILE", "PIP_FIND_LINKS"):
        assert env[name] == USER_ENV[name]
    secrets = [v for k, v in USER_ENV.items() if k not in env]
    assert not any(s in value for value in env.values() for s in secrets)


def test_home_and_tmp_are_inside_the_work_folder(tmp_path):
    env = act_environment(tmp_path / "act", USER_ENV)
    assert env["HOME"] == str(tmp_path / "act" / "home")
    assert env["TMPDIR"] == str(tmp_path / "act" / "tmp")
    assert (tmp_path / "act" / "home").is_dir() and (tmp_path / "act" / "tmp").is_dir()


def test_the_users_pip_configuration_is_named_not_the_home_folder(tmp_path):
    home = tmp_path / "maya"
    (home / ".config" / "pip").mkdir(parents=True)
    (home / ".config" / "pip" / "pip.conf").write_text("[global]\nfind-links = /w\n")
    env = act_environment(tmp_path / "work", {**USER_ENV, "HOME": str(home)})
    assert env["PIP_CONFIG_FILE"] == str(home / ".config" / "pip" / "pip.conf")
    assert env["HOME"] != str(home)
    without = act_environment(tmp_path / "work", {"PATH": "/bin", "HOME": str(tmp_path)})
    assert "PIP_CONFIG_FILE" not in without


def test_the_allow_list_names():
    assert is_allowed("LC_MESSAGES") and is_allowed("https_proxy")
    assert not is_allowed("GITHUB_TOKEN") and not is_allowed("ACTIONS_RUNTIME_TOKEN")
    assert not is_allowed("PATHX") and not is_allowed("path")


def test_secret_values_are_masked_longest_first():
    text = "token=abcdef1234 and abcdef and ab"
    assert mask_values(text, ["abcdef", "abcdef1234", "ab"]) == "token=*** and *** and ab"


def test_secrets_stay_off_the_command_line_with_a_secret_file(tmp_path):
    cmd = act_command(".github/workflows/x.yml", "push", "/e.json", repo_dir=tmp_path,
                      artifact_dir=tmp_path / "a", artifact_port=1,
                      action_cache_dir=tmp_path / "c", act="act", secret_file="/s.env")
    assert cmd[cmd.index("--secret-file") + 1] == "/s.env"
    assert f"GITHUB_TOKEN={TOKEN}" in cmd


def test_the_secret_files_values_are_masked_too(tmp_path):
    path = tmp_path / "secrets.env"
    path.write_text("# a comment\nDB_URL='postgresql://u:pw@db/x'\nexport API_KEY=\"sk-123456\"\n"
                    "PLAIN=value-1234\n\n")
    values = secret_file_values(path)
    assert values == ["postgresql://u:pw@db/x", "sk-123456", "value-1234"]
    assert mask_values("key sk-123456 in value-1234", values) == "key *** in ***"
    assert secret_file_values(None) == []
