"""The example notebook (docs/notebooks/first-run.ipynb) runs top to bottom in a fresh Jupyter kernel, and
what it shows is what a reader should see: the run as HTML tables and its figure as an image, with no
``%matplotlib inline`` anywhere. Needs nbclient and ipykernel (the dev and notebook extras); skipped, saying
so, where they are missing."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from conftest import REPO

MISSING = "is not installed (pip install 'ccfair[notebook]', or the dev extra)"
nbformat = pytest.importorskip("nbformat", reason=f"nbformat {MISSING}")
nbclient = pytest.importorskip("nbclient", reason=f"nbclient {MISSING}")
pytest.importorskip("ipykernel", reason=f"ipykernel {MISSING}")

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow

NOTEBOOK = REPO / "docs" / "notebooks" / "first-run.ipynb"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _outputs(cell: dict) -> list[dict]:
    return [o for o in cell.get("outputs", []) if o["output_type"] in ("execute_result", "display_data")]


def test_the_example_notebook_runs_and_shows_its_tables_and_figure(tmp_path: Path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    sources = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "%matplotlib" not in sources and "pyplot" not in sources  # the figure must show on its own
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), "ship it without outputs"
    # The kernel is this interpreter's, with the tree under test first on its path.
    env_path = os.pathsep.join(p for p in (str(REPO / "python"), os.environ.get("PYTHONPATH")) if p)
    os.environ["PYTHONPATH"], before = env_path, os.environ.get("PYTHONPATH")
    try:
        client = nbclient.NotebookClient(
            nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
        )
        client.execute()
    finally:
        if before is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = before
    code = [c for c in nb.cells if c.cell_type == "code"]
    errors = [o for c in code for o in c.outputs if o["output_type"] == "error"]
    assert not errors, errors
    run_cell = next(c for c in code if c.source.rstrip().endswith("as tables"))
    (shown,) = _outputs(run_cell)
    html = shown["data"]["text/html"]
    assert "ccfair run" in html and "<table" in html and "cubic" in html and "reno" in html
    classes_cell = next(c for c in code if c.source.startswith("result.classes"))
    assert "<table" in _outputs(classes_cell)[0]["data"]["text/html"]
    figure_cell = code[-1]
    (image,) = _outputs(figure_cell)
    png = base64.b64decode(image["data"]["image/png"])
    assert png.startswith(PNG_MAGIC) and len(png) > 20_000
    assert image["data"]["text/plain"].startswith("<ShownFigure size 700x")
