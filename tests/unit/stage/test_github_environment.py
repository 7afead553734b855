"""The GitHub client leaves the process environment alone: ghapi's ``all`` module writes
example values (GITHUB_REPOSITORY=octocat/Hello-World, CONTEXT_*) into os.environ on import,
which a later `--repository` default would then read."""

from __future__ import annotations

import os
import subprocess
import sys


def test_building_the_client_changes_no_environment_variable():
    code = ("import os; before = dict(os.environ)\n"
            "from infersweep.stage.github import GitHub\n"
            "gh = GitHub('octo-org/infersweep', None, 'http://127.0.0.1:9')\n"
            "gh._call('x', lambda: None)\n"
            "print(sorted(set(os.environ.items()) ^ set(before.items())))\n")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GITHUB_", "CONTEXT_"))}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120, check=True).stdout
    assert out.strip() == "[]"
