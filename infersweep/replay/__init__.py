"""Replaying this repository's GitHub workflows on one machine with nektos/act, offline.

One module per job:

- :mod:`~infersweep.replay.toolcache`: a runner tool cache in which ``actions/setup-python``
  finds this machine's Python, with one environment per job;
- :mod:`~infersweep.replay.workflows`: the ``uses:`` and ``runs-on`` values of workflow files;
- :mod:`~infersweep.replay.actions`: action tarballs unpacked once, act's
  ``--local-repository`` flags, and the check of every pinned commit against the tarballs;
- :mod:`~infersweep.replay.sandbox`: bare repositories standing in for github.com, and the
  environment that sends every git call there;
- :mod:`~infersweep.replay.events`: webhook payloads (pull_request, push, workflow_dispatch,
  issue_comment);
- :mod:`~infersweep.replay.runner` and :mod:`~infersweep.replay.actlog`: act's command line,
  the run, and its ``--json`` log read into per-job results;
- :mod:`~infersweep.replay.commands`: ``infersweep replay``.

docs/replay.md says how to replay a pull request and what act does differently from GitHub.
"""
