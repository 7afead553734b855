"""A git sandbox that stands in for github.com: bare repositories under one root, and the
environment that sends every ``https://github.com/`` URL there.

Layout: ``<root>/<owner>/<repo>.git``. The rewrite is three environment variables
(``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_0``/``GIT_CONFIG_VALUE_0`` = ``url.<root>/.insteadOf
https://github.com/``) rather than a git config file, so it reaches every git call of every
step (``actions/checkout``, ``changelog --fetch-missing``, the launcher's srt-slurm clone)
through the job's environment and touches no file of the user's.

The clone act runs from keeps ``origin`` = ``https://github.com/<owner>/<repo>.git`` because
act derives ``github.repository`` from it. For a pull request act's ``github.sha`` is the
clone's HEAD, so HEAD is the merge of the head into the base, as GitHub's ``github.sha`` is;
the bare repository holds the base branch, ``refs/pull/<n>/head`` and ``refs/pull/<n>/merge``
and allows fetching any commit by SHA (``uploadpack.allowAnySHA1InWant``), so a checkout of
the head SHA or the merge SHA works like on GitHub.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

GITHUB = "https://github.com/"
# commits the sandbox makes (merge commits, snapshots) need an identity; none of the user's
IDENTITY = {
    "GIT_AUTHOR_NAME": "infersweep replay", "GIT_AUTHOR_EMAIL": "replay@infersweep.invalid",
    "GIT_COMMITTER_NAME": "infersweep replay",
    "GIT_COMMITTER_EMAIL": "replay@infersweep.invalid",
}


class SandboxError(RuntimeError):
    """A git command of the sandbox failed; the message has git's own words."""


def git_rewrite_env(root: str | Path) -> dict[str, str]:
    """The variables that make git read ``https://github.com/<owner>/<repo>[.git]`` as the
    sandbox's ``file://<root>/<owner>/<repo>.git``, for each repository the sandbox holds and
    no other: every other repository is still fetched from GitHub (a replay with network
    reaches the real pins), and one the sandbox lacks fails as it would there."""
    env: dict[str, str] = {}
    repos = sorted(p for p in Path(root).resolve().glob("*/*.git") if p.is_dir())
    for i, bare in enumerate(repos):
        name = f"{bare.parent.name}/{bare.name[:-len('.git')]}"
        for j, url in enumerate((f"{GITHUB}{name}.git", f"{GITHUB}{name}")):
            n = 2 * i + j  # git uses the longest matching prefix: ".git" URLs take the first
            env[f"GIT_CONFIG_KEY_{n}"] = f"url.{bare.as_uri()}.insteadOf"
            env[f"GIT_CONFIG_VALUE_{n}"] = url
    env["GIT_CONFIG_COUNT"] = str(len(repos) * 2)
    return env


def _git(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    full_env = {**os.environ, **IDENTITY, "GIT_TERMINAL_PROMPT": "0", **(env or {})}
    done = subprocess.run(["git", *args], cwd=cwd, env=full_env, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, check=False)
    if done.returncode != 0:
        raise SandboxError(f"git {' '.join(args)} failed ({done.returncode}): "
                           f"{(done.stderr or done.stdout).strip()}")
    return done.stdout.strip()


@dataclass(frozen=True)
class PullRequest:
    """A pull request laid out in the sandbox; ``clone`` is where act runs (HEAD = merge)."""

    repository: str
    number: int
    base_ref: str
    base_sha: str
    head_ref: str
    head_sha: str
    merge_sha: str
    clone: Path


@dataclass(frozen=True)
class GitSandbox:
    root: Path

    def __post_init__(self):
        object.__setattr__(self, "root", Path(self.root).resolve())

    def env(self) -> dict[str, str]:
        return git_rewrite_env(self.root)

    def url(self, repository: str) -> str:
        return f"{GITHUB}{repository}.git"

    def bare(self, repository: str) -> Path:
        owner, name = repository.split("/")
        return self.root / owner / f"{name}.git"

    def git(self, *args: str, cwd: Path | None = None) -> str:
        """git with the sandbox's rewrite in its environment."""
        return _git(*args, cwd=cwd, env=self.env())

    def create(self, repository: str) -> Path:
        """An empty bare repository (kept if it exists) that serves any commit by SHA."""
        bare = self.bare(repository)
        if not (bare / "HEAD").is_file():
            bare.mkdir(parents=True, exist_ok=True)
            _git("init", "-q", "--bare", "-b", "main", str(bare))
        for key in ("uploadpack.allowAnySHA1InWant", "uploadpack.allowReachableSHA1InWant",
                    "uploadpack.allowTipSHA1InWant"):
            _git("-C", str(bare), "config", key, "true")
        return bare

    def publish(self, repository: str, source: str | Path, refs: dict[str, str]) -> Path:
        """Push commits of the local repository ``source`` into the sandbox's ``repository``
        as ``{ref: sha}`` (``refs/heads/main``, ``refs/pull/1/head``, ...), forced."""
        bare = self.create(repository)
        specs = [f"+{sha}:{ref}" for ref, sha in refs.items()]
        if specs:
            _git("-C", str(source), "push", "-q", bare.as_uri(), *specs)
        return bare

    def mirror(self, repository: str, source: str | Path) -> Path:
        """``repository`` as a bare copy of every branch and tag of ``source`` (a local
        repository or a git bundle, e.g. ../shared/reference/srt-slurm's), for what a job
        clones besides the repository itself (the launcher's srt-slurm, ``pins verify``)."""
        bare = self.bare(repository)
        if bare.exists():
            shutil.rmtree(bare)
        bare.parent.mkdir(parents=True, exist_ok=True)
        _git("clone", "-q", "--bare", str(source), str(bare))
        self.create(repository)  # the fetch-by-SHA settings
        return bare

    def set_default_branch(self, repository: str, branch: str) -> None:
        _git("-C", str(self.bare(repository)), "symbolic-ref", "HEAD", f"refs/heads/{branch}")

    def clone(self, repository: str, dest: str | Path, *, rev: str | None = None,
              branch: str | None = None) -> Path:
        """A clone through ``https://github.com/<repository>.git`` (so that is its
        ``origin``), at ``rev`` (a detached HEAD) or on a local ``branch`` at ``rev``."""
        dest = Path(dest)
        if dest.exists():
            shutil.rmtree(dest)
        self.git("clone", "-q", "--no-checkout", self.url(repository), str(dest))
        if rev is not None:
            self.git("-C", str(dest), "fetch", "-q", "origin", rev)
            target = self.git("-C", str(dest), "rev-parse", "FETCH_HEAD")
        else:
            target = "HEAD"
        if branch:
            self.git("-C", str(dest), "checkout", "-q", "-B", branch, target)
        else:
            self.git("-C", str(dest), "checkout", "-q", "--detach", target)
        return dest

    def pull_request(self, repository: str, source: str | Path, dest: str | Path, *,
                     base_sha: str, head_sha: str, number: int = 1, base_ref: str = "main",
                     head_ref: str = "replay/head") -> PullRequest:
        """Lay out a pull request of ``head_sha`` into ``base_ref`` (at ``base_sha``), both
        commits of the local repository ``source``: the base branch, the head branch and
        ``refs/pull/<number>/head`` in the bare repository, the merge commit made as GitHub
        makes it and pushed as ``refs/pull/<number>/merge``, and a clone at that merge."""
        self.publish(repository, source, {f"refs/heads/{base_ref}": base_sha,
                                          f"refs/heads/{head_ref}": head_sha,
                                          f"refs/pull/{number}/head": head_sha})
        self.set_default_branch(repository, base_ref)
        clone = self.clone(repository, dest, rev=base_sha)
        self.git("-C", str(clone), "fetch", "-q", "origin", head_sha)
        try:
            self.git("-C", str(clone), "merge", "-q", "--no-ff", "--no-edit", "-m",
                     f"Merge {head_sha} into {base_sha}", head_sha)
        except SandboxError as exc:
            raise SandboxError(f"the head does not merge into {base_ref} cleanly (GitHub "
                               f"would not run pull_request workflows either): {exc}") from None
        merge_sha = self.git("-C", str(clone), "rev-parse", "HEAD")
        self.git("-C", str(clone), "push", "-q", "origin",
                 f"+{merge_sha}:refs/pull/{number}/merge")
        return PullRequest(repository, number, base_ref, base_sha, head_ref, head_sha,
                           merge_sha, Path(clone))


def copy_worktree(source: str | Path, dest: str | Path) -> None:
    """Copy ``source``'s working tree as it is on disk (tracked files and untracked ones git
    does not ignore; symlinks kept, deleted files left out) into ``dest``."""
    source, dest = Path(source), Path(dest)
    listed = _git("-C", str(source), "ls-files", "-z", "--cached", "--others",
                  "--exclude-standard")
    for rel in dict.fromkeys(p for p in listed.split("\0") if p):
        src = source / rel
        if not src.exists() and not src.is_symlink():
            continue  # deleted in the working tree
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            target.symlink_to(os.readlink(src))
        elif src.is_file():
            shutil.copy2(src, target)


def snapshot_worktree(source: str | Path, dest: str | Path, *, message: str = "snapshot",
                      branch: str = "main") -> str:
    """A new repository at ``dest`` with one commit holding ``source``'s working tree, so a
    test can run uncommitted work without writing anything into ``source``'s repository."""
    dest = Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    _git("init", "-q", "-b", branch, str(dest))
    copy_worktree(source, dest)
    _git("-C", str(dest), "add", "-A")
    _git("-C", str(dest), "commit", "-q", "--no-verify", "-m", message)
    return _git("-C", str(dest), "rev-parse", "HEAD")


def worktree_commit(source: str | Path, head_sha: str, dest: str | Path, *,
                    message: str = "replay: the working tree") -> str:
    """A clone of ``source`` at ``dest`` (its history kept) with a new commit on top of
    ``head_sha`` holding ``source``'s working tree; ``source`` is only read."""
    dest = Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    _git("clone", "-q", "--no-checkout", "--no-hardlinks", str(source), str(dest))
    _git("-C", str(dest), "checkout", "-q", "--detach", head_sha)
    for path in dest.iterdir():
        if path.name == ".git":
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    copy_worktree(source, dest)
    _git("-C", str(dest), "add", "-A")
    _git("-C", str(dest), "commit", "-q", "--no-verify", "--allow-empty", "-m", message)
    return _git("-C", str(dest), "rev-parse", "HEAD")


def commit_files(repo: str | Path, files: dict[str, str], message: str, *,
                 append: bool = False) -> str:
    """Write (or with ``append`` add to the end of) ``files`` in the repository ``repo``,
    commit them, and return the commit."""
    repo = Path(repo)
    for rel, text in files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if append:
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(text)
        else:
            path.write_text(text, encoding="utf-8")
    _git("-C", str(repo), "add", "-A")
    _git("-C", str(repo), "commit", "-q", "--no-verify", "-m", message)
    return _git("-C", str(repo), "rev-parse", "HEAD")
