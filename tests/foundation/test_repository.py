"""The promises the README makes about the repository itself."""

import re

from tests.conftest import REPO_ROOT

FENCE = re.compile(r"```bash\n(.*?)\n```", re.S)


def readme_commands() -> list[str]:
    return FENCE.findall((REPO_ROOT / "README.md").read_text())


def test_readme_starts_with_the_two_fresh_machine_commands():
    text = (REPO_ROOT / "README.md").read_text()
    first_two = readme_commands()[:2]
    assert len(first_two) == 2
    # Nothing but the title comes before them.
    assert text.index(first_two[0]) < text.index("\n## ")
    assert "manage.py demo" in first_two[0]
    assert "pytest" in first_two[1]


def test_ci_runs_the_readme_test_command_verbatim():
    test_command = readme_commands()[1]
    assert test_command in (REPO_ROOT / ".ci" / "run").read_text()


def test_every_python_dependency_says_what_it_is_for():
    """Each requirement sits under a comment (blocks of related packages share one)."""
    for name in ("requirements.txt", "requirements-dev.txt"):
        explained = False
        for line in (REPO_ROOT / name).read_text().splitlines():
            stripped = line.strip()
            if not stripped:
                explained = False
            elif stripped.startswith("#"):
                explained = True
            elif not stripped.startswith("-r"):
                assert explained, f"{name}: {stripped} has no comment saying what it is for"
