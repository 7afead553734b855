"""Credentials never reach output: URL user-info, secret query parameters, token shapes."""

from __future__ import annotations

import pytest

from infersweep.redact import redact


@pytest.mark.parametrize(("text", "expected"), [
    ("https://user:s3cret@github.com/o/r.git", "https://***@github.com/o/r.git"),
    ("https://ghp_abcdefghijklmnopqrstuvwxyz0123@github.com/o/r",
     "https://***@github.com/o/r"),
    ("https://x-access-token:abc@github.com/o/r", "https://***@github.com/o/r"),
    ("fatal: unable to access 'https://u:p@host/r.git/': Could not resolve host: host",
     "fatal: unable to access 'https://***@host/r.git/': Could not resolve host: host"),
    ("https://a@b:c@host/p", "https://***@host/p"),  # an unescaped @ in the password
    ("http://h/r?access_token=abc&ref=main", "http://h/r?access_token=***&ref=main"),
    ("token ghp_abcdefghijklmnopqrstuvwxyz0123 leaked", "token *** leaked"),
    ("ssh://u:pw@host/r", "ssh://***@host/r"),
])
def test_secrets_are_masked(text, expected):
    assert redact(text) == expected


@pytest.mark.parametrize("text", [
    "https://github.com/o/r.git", "ssh://git@github.com/o/r.git", "git@github.com:o/r.git",
    "file:///srv/git/r.git", "/srv/git/r.git", "", "commit 81d46274f508 in srt-slurm",
])
def test_text_without_secrets_is_unchanged(text):
    assert redact(text) == text
