"""The git commit an eval run was made at (when run inside a git checkout)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class GitState:
    """``HEAD``'s commit and whether the work tree had uncommitted changes."""

    commit: str
    dirty: bool


def _git(args: list[str], cwd: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None


def git_state(cwd: str | Path | None = None) -> GitState | None:
    """The checkout's state, or None outside a git work tree (or without git, or before the
    first commit)."""
    where = Path(cwd) if cwd is not None else Path.cwd()
    commit = _git(["rev-parse", "--verify", "--quiet", "HEAD"], where)
    if not commit or not commit.strip():
        return None
    status = _git(["status", "--porcelain", "--untracked-files=no"], where)
    return GitState(commit=commit.strip(), dirty=bool(status and status.strip()))
