"""The WebSplit import: the file is read once, each line checked as it is parsed and the lines
written a chunk at a time inside the one transaction. The chunks are really written one after
the other, a failure in a later chunk leaves nothing, a bad last line names file, line and
field with nothing written, clusters (item groups) span chunks — a later line that joins
clusters moves the items written before —, and the outcome is the one a single chunk gives."""

from __future__ import annotations

import json

import pytest
from django.db import connection

from annotation.importers.base import ImportInputError
from annotation.models import Annotation, ComplexSentence, Fact, Item, Project, ProjectCount
from annotation.services import imports
from annotation.services.imports import import_files

from .conftest import row_counts

pytestmark = pytest.mark.django_db


def write(path, n, *, bad_last: bool = False):
    """``n`` sentences; sentence i shares a triple with sentence i + 5 (a cluster across
    chunks of 4), and each has one reference."""
    with path.open("w") as handle:
        for i in range(n):
            triples = [[f"Thing_{i % 5}", "type", "Example"], [f"Thing_{i}", "id", str(i)]]
            record = {"id": f"s{i}", "complex": f"Sentence {i}.", "triples": triples,
                      "simple_references": [[f"Thing {i} is one.", f"Its id is {i}."]]}
            if bad_last and i == n - 1:
                record["triples"] = [["only", "two"]]
            handle.write(json.dumps(record) + "\n")
    return path


def test_the_lines_are_written_a_chunk_at_a_time(tmp_path, monkeypatch):
    monkeypatch.setattr(imports, "STAGED_CHUNK", 4)
    seen: list[int] = []
    facts = imports._ChunkWriter._facts

    def counting(self, chunk, *args):
        seen.append(ComplexSentence.objects.count())  # inside the import's transaction
        return facts(self, chunk, *args)

    monkeypatch.setattr(imports._ChunkWriter, "_facts", counting)
    path = write(tmp_path / "ws_train.jsonl", 10)
    result = import_files(fmt="websplit", paths=[path], project_slug="staged")
    assert seen == [4, 8, 10]
    assert result.rows == 10 and result.created["Item"] == 10
    assert result.created["Annotation"] == 10 and result.created["Fact"] == 15
    # Sentences 0, 5 (chunks 1 and 2) share Thing_0: one group across the chunks.
    groups = dict(Item.objects.values_list("external_id", "group_key"))
    assert groups["s0"] == groups["s5"] == "facts:s0"
    assert groups["s4"] == groups["s9"] == "facts:s4" and groups["s1"] != groups["s0"]


def test_a_failure_in_a_later_chunk_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(imports, "STAGED_CHUNK", 4)
    before = row_counts()
    items = imports._ChunkWriter._items
    calls = []

    def failing_third(self, *args):
        calls.append(1)
        if len(calls) == 3:
            raise ImportInputError("websplit", "ws_train.jsonl", "stop", line=9)
        return items(self, *args)

    monkeypatch.setattr(imports._ChunkWriter, "_items", failing_third)
    path = write(tmp_path / "ws_train.jsonl", 10)
    with pytest.raises(ImportInputError):
        import_files(fmt="websplit", paths=[path], project_slug="staged")
    assert len(calls) == 3 and row_counts() == before


def test_a_bad_last_line_is_named_and_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.setattr(imports, "STAGED_CHUNK", 4)
    before = row_counts()
    path = write(tmp_path / "ws_train.jsonl", 10, bad_last=True)
    with pytest.raises(ImportInputError) as error:
        import_files(fmt="websplit", paths=[path], project_slug="staged")
    assert str(error.value).startswith("websplit ws_train.jsonl line 10: ")
    assert 'field "triples" entry 0' in str(error.value)
    assert row_counts() == before


def test_an_id_twice_in_different_chunks_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(imports, "STAGED_CHUNK", 4)
    path = write(tmp_path / "ws_train.jsonl", 8)
    with path.open("a") as handle:
        handle.write(json.dumps({"id": "s1", "complex": "Again.", "triples": [["a", "b", "c"]]})
                     + "\n")
    with pytest.raises(ImportInputError, match="line 9: id 's1' appears twice"):
        import_files(fmt="websplit", paths=[path], project_slug="staged")
    assert not ComplexSentence.objects.exists()


def project_rows(slug: str) -> tuple[dict, set]:
    """A project's items' groups by external id, and its facts."""
    return (dict(Item.objects.filter(project__slug=slug).values_list("external_id",
                                                                      "group_key")),
            set(Fact.objects.filter(project__slug=slug).values_list("subject", "property",
                                                                    "object")))


def test_chunks_give_what_one_chunk_gives(tmp_path, monkeypatch):
    path = write(tmp_path / "ws_train.jsonl", 13)
    monkeypatch.setattr(imports, "STAGED_CHUNK", 10**6)
    import_files(fmt="websplit", paths=[path], project_slug="whole")
    monkeypatch.setattr(imports, "STAGED_CHUNK", 4)
    import_files(fmt="websplit", paths=[path], project_slug="staged")
    assert project_rows("staged") == project_rows("whole")
    assert len(project_rows("staged")[1]) == 5 + 13
    assert Annotation.objects.filter(project__slug="staged").count() == 13
    # A second import of an overlapping file adds only what is new, across chunks.
    more = write(tmp_path / "more_train.jsonl", 17)
    again = import_files(fmt="websplit", paths=[more], project_slug="staged")
    assert again.created == {"ComplexSentence": 4, "ComplexSentence.facts": 8, "Fact": 4,
                             "Item": 4, "Worker": 4, "Annotation": 4}
    assert ComplexSentence.facts.through.objects.filter(
        complexsentence__project__slug="staged").count() == 2 * 17


def line(sentence_id: str, *things: str) -> str:
    return json.dumps({"id": sentence_id, "complex": f"Sentence {sentence_id}.",
                       "triples": [[thing, "type", "Example"] for thing in things]}) + "\n"


def test_a_later_line_that_joins_groups_moves_the_items_written_before(tmp_path, monkeypatch):
    """The file is read once: items are written under their cluster so far, and a later line
    that joins two clusters (in a later chunk) moves the items of both to the joined
    cluster's key — the items this import made, not those there before under that key."""
    monkeypatch.setattr(imports, "STAGED_CHUNK", 2)
    earlier = tmp_path / "earlier_train.jsonl"
    earlier.write_text(line("b1", "X"))
    import_files(fmt="websplit", paths=[earlier], project_slug="joined")
    path = tmp_path / "ws_train.jsonl"
    path.write_text(line("b1", "X") + line("c2", "Y") + line("g1", "X") + line("d1", "Z")
                    + line("e1", "W") + line("a0", "X", "Y") + line("f1", "Z"))
    import_files(fmt="websplit", paths=[path], project_slug="joined")
    groups = project_rows("joined")[0]
    # Chunk 1 wrote c2 under facts:c2, chunk 2 g1 under facts:b1; a0 (chunk 3) joined both
    # clusters. b1 was there before: it keeps its group, as an item already there does.
    assert groups == {"b1": "facts:b1", "c2": "facts:a0", "g1": "facts:a0", "a0": "facts:a0",
                      "d1": "facts:d1", "f1": "facts:d1", "e1": "facts:e1"}
    monkeypatch.setattr(imports, "STAGED_CHUNK", 10**6)
    import_files(fmt="websplit", paths=[earlier], project_slug="whole")
    import_files(fmt="websplit", paths=[path], project_slug="whole")
    assert project_rows("whole")[0] == groups


@pytest.mark.parametrize("change", ["same length", "broken"])
def test_a_file_changed_while_it_is_imported_leaves_nothing(tmp_path, monkeypatch, change):
    """Its checksum is taken first (the ImportRecord keeps it); the one reading must hash to
    it, and a bad row of a changed file is reported as the change."""
    monkeypatch.setattr(imports, "STAGED_CHUNK", 4)
    path = write(tmp_path / "ws_train.jsonl", 10)
    writer = imports._ChunkWriter.__init__
    before = row_counts()

    def change_then_write(self, *args, **kwargs):  # the writer is made after the hashing
        text = path.read_text()
        path.write_text(text.replace("Sentence 9.", "Sentence X.") if change == "same length"
                        else text.replace('"triples"', '"tripels"'))
        writer(self, *args, **kwargs)

    monkeypatch.setattr(imports._ChunkWriter, "__init__", change_then_write)
    with pytest.raises(ImportInputError, match=r"ws_train\.jsonl: the file changed while"):
        import_files(fmt="websplit", paths=[path], project_slug="staged")
    assert row_counts() == before


def item_counts(slug: str) -> int:
    return sum(ProjectCount.objects.filter(project__slug=slug)
               .values_list("items", flat=True))


def test_the_item_counts_stay_true_around_a_bulk_import(tmp_path, monkeypatch):
    """On SQLite items are bulk inserted with the count trigger set aside and the count
    raised once: the counts are what the rows are, and the trigger is back after an import
    and after a failed one."""
    monkeypatch.setattr(imports, "STAGED_CHUNK", 4)
    import_files(fmt="websplit", paths=[write(tmp_path / "a_train.jsonl", 10)],
                 project_slug="staged")
    assert item_counts("staged") == Item.objects.count() == 10
    project = Project.objects.get(slug="staged")
    Item.objects.create(project=project, external_id="by-hand", split="train",
                        complex_sentence=ComplexSentence.objects.create(
                            project=project, external_id="by-hand", text="By hand."))
    assert item_counts("staged") == 11  # the trigger counts again
    before = row_counts()
    with pytest.raises(ImportInputError):
        import_files(fmt="websplit", paths=[write(tmp_path / "b_train.jsonl", 12,
                                                  bad_last=True)], project_slug="staged")
    assert row_counts() == before
    Item.objects.create(project=project, external_id="by-hand-2", split="train",
                        complex_sentence=ComplexSentence.objects.create(
                            project=project, external_id="by-hand-2", text="By hand."))
    assert item_counts("staged") == Item.objects.count() == 12
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM sqlite_master WHERE name = %s",
                           [imports.SQLITE_ITEM_COUNT_TRIGGER])
            assert cursor.fetchone()[0] == 1


def test_progress_tells_the_bytes_imported_then_written(tmp_path, monkeypatch):
    monkeypatch.setattr(imports, "STAGED_CHUNK", 4)
    path = write(tmp_path / "ws_train.jsonl", 10)
    reports: list[tuple[int, int | None, str]] = []
    import_files(fmt="websplit", paths=[path], project_slug="staged",
                 progress=lambda done, total, message: reports.append((done, total, message)))
    size = path.stat().st_size
    assert reports[-2:] == [(size, size, "importing ws_train.jsonl"), (size, size, "written")]
    assert {message for _, _, message in reports} == {"importing ws_train.jsonl", "written"}

