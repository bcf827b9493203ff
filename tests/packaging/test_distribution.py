"""The wheel and the sdist a release builds carry the project's licence (and its metadata says so).

Built as a release builds them (`python -m build`), from a copy of the checkout (the build writes into
the tree it builds), without build isolation: the `test` extra installs the build backend, so no
package index is needed.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_wheel_and_the_sdist_carry_the_licence(tmp_path):
    licence = (ROOT / "LICENSE").read_text()
    assert licence.startswith("MIT License") and "Copyright (c) 2026 pytest-llmjudge contributors" in licence
    project = tmp_path / "project"
    shutil.copytree(ROOT / "src", project / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md", *(p.name for p in ROOT.glob("LICEN[CS]E*"))):
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy2
        copy(ROOT / name, project / name)
    dist = tmp_path / "dist"
    build = [sys.executable, "-m", "build", "--no-isolation", "--wheel", "--sdist", "--outdir", str(dist), str(project)]
    done = subprocess.run(build, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]

    (wheel,) = dist.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (info,) = {n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info")}
        assert archive.read(f"{info}/licenses/LICENSE").decode() == licence
        metadata = archive.read(f"{info}/METADATA").decode()
    assert "License-Expression: MIT" in metadata and "License-File: LICENSE" in metadata

    (sdist,) = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        top = archive.getnames()[0].split("/")[0]
        carried = archive.extractfile(f"{top}/LICENSE")
        assert carried is not None and carried.read().decode() == licence
