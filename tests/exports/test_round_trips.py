"""Round trips on the real released data: import with import_data, export with export_data."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from qc.aggregation import plausibility_label

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("split", "fillers"), [("dev", 2500), ("test", 2500), ("train", 19975)])
def test_claire_round_trip_is_byte_identical(shared_data, tmp_path, split, fillers):
    """Every released CLAIRE split comes back byte for byte (scores keep their text: "1.0")."""
    claire = shared_data / "claire"
    call_command("import_data", "claire", *(str(claire / f"{split}_{part}.tsv")
                                            for part in ("data", "scores", "labels")),
                 "--project", f"claire-{split}", "--split", split, "--quiet")
    call_command("export_data", f"claire-{split}", "--format", "claire", "--out",
                 str(tmp_path))
    for name in (f"{split}_data.tsv", f"{split}_scores.tsv", f"{split}_labels.tsv"):
        assert (tmp_path / name).read_bytes() == (claire / name).read_bytes(), name
    # Labels follow from the exported scores by the paper's thresholds.
    scores = dict(line.split("\t") for line in (tmp_path / f"{split}_scores.tsv").read_text()
                  .splitlines())
    labels = dict(line.split("\t") for line in (tmp_path / f"{split}_labels.tsv").read_text()
                  .splitlines())
    assert len(scores) == fillers
    assert all(plausibility_label(float(scores[key])) == labels[key] for key in scores)
    # Nothing leaks into the other splits.
    other = "dev" if split == "train" else "train"
    assert (tmp_path / f"{other}_scores.tsv").read_bytes() == b""


def test_canard_dev_round_trip_is_byte_identical(shared_data, tmp_path):
    source = shared_data / "canard" / "dev.json"
    call_command("import_data", "canard", str(source), "--project", "canard-dev",
                 "--split", "dev")
    call_command("export_data", "canard-dev", "--format", "canard", "--out", str(tmp_path))
    exported = (tmp_path / "dev.json").read_bytes()
    assert exported == source.read_bytes()
    records = json.loads(exported)
    assert len(records) == 3430
    assert all(len(record["History"]) == 2 * record["Question_no"] for record in records)


def test_sluice_raw_test_csv_cleans_to_the_released_processed_rows(shared_data, tmp_path):
    sluice = shared_data / "sluice"
    call_command("import_data", "sluice", str(sluice / "raw" / "conv_sluice_test.csv"),
                 "--project", "sluice-test", "--split", "test")
    call_command("export_data", "sluice-test", "--format", "sluice", "--out", str(tmp_path))
    exported = json.loads((tmp_path / "sluice_test_filtered.json").read_text())
    released = json.loads((sluice / "processed" / "sluice_test_filtered.json").read_text())
    # Same 793 rows in the same order; only the keys differ (positions vs raw row numbers).
    assert list(exported.values()) == list(released.values())
    assert list(exported) == [str(k) for k in range(793)]
