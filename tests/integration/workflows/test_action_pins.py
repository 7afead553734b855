"""Every action a workflow pins is one of GitHub's action trees at that commit.

act runs a local tree for any ref it is given and never checks that the pinned commit exists,
while GitHub fails the whole job at "Set up job" when it does not: this comparison with the
trees in ../shared/reference/github-actions is what catches a pin typo before GitHub does.
"""

from __future__ import annotations

from infersweep.replay.actions import (
    check_pins,
    local_repository_map,
    pins_in_workflows,
    workflow_uses,
)
from tests.conftest import REPO

WORKFLOWS = REPO / ".github" / "workflows"

# Pins whose tree is known not to run here, and why (anything else must have a whole tree).
CANNOT_RUN = {
    "actions/deploy-pages@d6db90164ac5ed86f2b6aed7e0febac5b3c0c03e": (
        "partial tree: dist/index.js could not be rebuilt offline, and the action needs an "
        "OIDC token no local runner provides (stage-results.yml's publish job)"),
}

TYPO = "b4b15b8c7c6ac21ea08fcf65892d2ee8c75cf882"  # v4.4.3 is ...2ee8f75cf882


def test_every_pinned_action_is_one_of_the_trees(action_tarballs):
    checks = check_pins(WORKFLOWS, action_tarballs)
    assert checks, "no remote `uses:` found in .github/workflows"
    wrong = [str(c) for c in checks if c.status in ("missing", "unpinned")]
    assert not wrong, "pins with no action tree (GitHub fails these jobs at 'Set up job'):\n" \
        + "\n".join(wrong)
    unlisted = [str(c) for c in checks if c.status == "partial" and c.pin not in CANNOT_RUN]
    assert not unlisted, "partial trees not listed in CANNOT_RUN with a reason:\n" \
        + "\n".join(unlisted)


def test_the_check_names_a_typo_and_the_commit_meant(tmp_path, action_tarballs):
    (tmp_path / "w.yml").write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683\n"
        f"      - uses: actions/upload-artifact@{TYPO} # v4.4.3\n"
        "      - uses: actions/cache@v4\n")
    assert [p.line for p in pins_in_workflows(tmp_path)] == [6, 7, 8]
    by_status = {c.status: c for c in check_pins(tmp_path, action_tarballs)}
    assert set(by_status) == {"tree", "missing", "unpinned"}
    missing = by_status["missing"]
    assert (missing.file, missing.line) == (f"{tmp_path.name}/w.yml", 7)
    assert "b4b15b8c7c6ac21ea08fcf65892d2ee8f75cf882" in missing.detail
    assert "position 33" in missing.detail


def test_every_uses_of_the_sweep_and_staging_maps_to_a_tree(action_trees):
    """Including the reusable workflows the sweep calls and the upload-artifact@v4 that the
    composite upload-pages-artifact calls inside its own tree."""
    for workflow in ("run-sweep.yml", "stage-results.yml"):
        mapped, missing = local_repository_map(workflow_uses(WORKFLOWS / workflow, REPO),
                                               action_trees)
        assert not missing, f"{workflow}: no tree for {missing}"
    assert "actions/upload-artifact@v4" in mapped
