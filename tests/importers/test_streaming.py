"""Every format is imported without holding its file: the JSON documents are read record by
record, and every format is written a chunk of rows at a time, so the memory an import
traces stays under a bound several times smaller than the file (a whole-document reading or
a bundle of every parsed row exceeds it). A bad record at the end of such a file still
stops the import with its message and nothing written; chunks give what one bundle gives."""

from __future__ import annotations

import csv
import gc
import json
import tracemalloc
from collections.abc import Iterable
from pathlib import Path

import pytest

from annotation.importers.base import ImportInputError
from annotation.models import Annotation, ComplexSentence, DialogueTurn, Item, Project
from annotation.services import imports
from annotation.services.imports import import_files

from .conftest import FIXTURES, row_counts

pytestmark = pytest.mark.django_db

#: What an import may trace (bytes) while it reads a file of ``FILE_BYTES``: a whole-file
#: reading holds the text alone (and its parsed objects several times over).
BOUND = 2 * 1024 * 1024
FILE_BYTES = 4 * BOUND
#: Rows per chunk in these tests: a chunk holds its rows' text, the files here have a few
#: hundred long rows (at the default, 5,000, a whole test file would be one chunk).
CHUNK = 20


def text(i: int, size: int, word: str = "word") -> str:
    """``size`` characters of text peculiar to ``i``."""
    unit = f"{word} {i} "
    return (unit * (size // len(unit) + 1))[:size]


#: The files a writer made and the message their bad last record gives.
Written = tuple[list[Path], str]


def rows_for(per_row: int, total: int) -> int:
    return total // per_row + 1


def write_data_document(path: Path, records: Iterable[dict], *, head: str = "") -> None:
    """A QuAC/CoQA-layout document, ``{head"data": [...]}``, one record a line, written as
    the records come (never the whole document in memory)."""
    with path.open("w") as out:
        out.write("{" + head + '"data": [\n')
        for index, record in enumerate(records):
            out.write(("," if index else "") + json.dumps(record) + "\n")
        out.write("]}\n")


def write_decontext(folder: Path, *, bad_last: bool = False, total: int = FILE_BYTES) -> Written:
    path = folder / "big_dev.jsonl"
    n = rows_for(12000, total)
    with path.open("w") as out:
        for i in range(n):
            sentence = f"Sentence number {i}."
            paragraph = text(i, 12000) + " " + sentence
            start = len(paragraph.encode()) - len(sentence.encode())
            record = {"example_id": i, "original_sentence": sentence, "page_title": f"P{i}",
                      "section_title": ["S"], "paragraph_text": paragraph,
                      "sentence_start_byte_offset": start,
                      "sentence_end_byte_offset": start + len(sentence.encode())}
            if bad_last and i == n - 1:
                del record["paragraph_text"]
            out.write(json.dumps(record) + "\n")
    return [path], f'decontext big_dev.jsonl line {n}: field "paragraph_text" is missing'


def write_claire(folder: Path, *, bad_last: bool = False, total: int = FILE_BYTES) -> Written:
    n = rows_for(32000, total)
    data, scores, labels = (folder / f"dev_{role}.tsv" for role in ("data", "scores", "labels"))
    with data.open("w") as out, scores.open("w") as score_out, labels.open("w") as label_out:
        out.write("\t".join(("Id", "Resolved pattern", "Article title", "Section header",
                             "Previous context", "Sentence", "Follow-up context", "Filler1",
                             "Filler2", "Filler3", "Filler4", "Filler5")) + "\n")
        for i in range(n):
            out.write("\t".join((str(i), "p", f"Article {i}", "How", text(i, 32000),
                                 "Put the ______ in.", "Done.", "a", "b", "c", "d", "e")) + "\n")
            for position in range(1, 6):
                score_out.write(f"{i}_{position}\t3.0\n")
                label = "PLAUSIBLE" if bad_last and i == n - 1 and position == 5 else "NEUTRAL"
                label_out.write(f"{i}_{position}\t{label}\n")
    return [data, scores, labels], (f"claire dev_labels.tsv line {5 * n}: label PLAUSIBLE of "
                                    f"{n - 1}_5 contradicts its mean score 3.0")


def write_canard(folder: Path, *, bad_last: bool = False, total: int = FILE_BYTES) -> Written:
    path = folder / "big_dev.json"
    dialogues = rows_for(10 * 6000, total)  # 5 questions, histories of up to 4 long answers
    records = []
    for d in range(dialogues):
        turns = [(f"Question {q} of {d}?", text(d * 10 + q, 6000)) for q in range(1, 6)]
        for number in range(1, 6):
            history = [f"Title {d}", "Section"]
            for question, answer in turns[:number - 1]:
                history += [question, answer]
            records.append({"History": history, "QuAC_dialog_id": f"C_{d}",
                            "Question": turns[number - 1][0], "Question_no": number,
                            "Rewrite": f"Rewrite {number} of {d}"})
    if bad_last:
        del records[-1]["Rewrite"]
    with path.open("w") as out:
        out.write("[\n")
        for index, record in enumerate(records):
            out.write((",\n" if index else "") + json.dumps(record))
        out.write("\n]\n")
    return [path], (f'canard big_dev.json record {len(records) - 1}: field "Rewrite" is '
                    "missing")


def write_quac(folder: Path, *, bad_last: bool = False, total: int = FILE_BYTES) -> Written:
    path = folder / "big_dev.json"
    n = rows_for(22000, total)

    def article(i: int) -> dict:
        qas = [{"question": f"What about {i} {q}?", "id": f"q{i}_{q}",
                "orig_answer": {"text": text(i * 10 + q, 4000)}} for q in range(5)]
        if bad_last and i == n - 1:
            del qas[-1]["question"]
        return {"title": f"T{i}", "section_title": "S", "background": text(i, 2000),
                "paragraphs": [{"id": f"C_{i}_0", "qas": qas}]}

    write_data_document(path, map(article, range(n)))
    return [path], (f"quac big_dev.json record data[{n - 1}].paragraphs[0].qas[4]: field "
                    '"question" is missing')


def write_coqa(folder: Path, *, bad_last: bool = False, total: int = FILE_BYTES) -> Written:
    path = folder / "big_train.json"
    n = rows_for(20000, total)

    def story(i: int) -> dict:
        questions = [{"input_text": f"Q{t} of {i}?", "turn_id": t} for t in range(1, 4)]
        answers = [{"input_text": text(i * 10 + t, 300), "turn_id": t}
                   for t in range(1, 4 if not (bad_last and i == n - 1) else 3)]
        return {"id": f"s{i}", "source": "wikipedia", "story": text(i, 19000),
                "questions": questions, "answers": answers}

    write_data_document(path, map(story, range(n)), head='"version": "1.0", ')
    return [path], (f"coqa big_train.json record data[{n - 1}]: questions and answers differ "
                    "in turn_id [3]")


def write_sluice(folder: Path, *, bad_last: bool = False, total: int = FILE_BYTES) -> Written:
    path = folder / "big_test.json"
    n = rows_for(12000, total)
    with path.open("w") as out:
        out.write("{\n")
        for i in range(n):
            row = {"Input.question_1": f"Who won game {i}?", "Input.answer_1": text(i, 12000),
                   "Input.question_2": "when", "Answer.full_question": f"When was game {i}?"}
            if bad_last and i == n - 1:
                row["Input.question_2"] = 7
            out.write(("," if i else "") + json.dumps(str(i)) + ": " + json.dumps(row) + "\n")
        out.write("}\n")
    return [path], (f'sluice big_test.json record {n - 1}: field "Input.question_2" must be '
                    "a string, not int")


def write_websplit(folder: Path, *, bad_last: bool = False, total: int = FILE_BYTES) -> Written:
    path = folder / "big_train.jsonl"
    n = rows_for(8000, total)
    with path.open("w") as out:
        for i in range(n):
            record = {"id": f"s{i}", "complex": text(i, 4000) + ".",
                      "triples": [[f"Thing_{i}", "type", "Example"]],
                      "simple_references": [[text(i, 2000, "one"), text(i, 2000, "two")]]}
            if bad_last and i == n - 1:
                record["triples"] = []
            out.write(json.dumps(record) + "\n")
    return [path], f'websplit big_train.jsonl line {n}: field "triples" is empty'


def write_mturk(folder: Path, *, bad_last: bool = False, total: int = FILE_BYTES) -> Written:
    """Answers to the items of the project ``items_for_mturk`` makes."""
    path = folder / "big_batch.csv"
    n = rows_for(8000, total)
    with path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["HITId", "AssignmentId", "WorkerId", "AssignmentStatus", "AcceptTime",
                         "SubmitTime", "WorkTimeInSeconds", "Input.item_id", "Answer.rewrite"])
        for i in range(n):
            seconds = "x" if bad_last and i == n - 1 else "45"
            writer.writerow([f"H{i}", f"A{i}", f"W{i}", "Approved", "2019-06-18T09:39:05+00:00",
                             "2019-06-18T09:39:50+00:00", seconds, f"C_{i % MTURK_ITEMS}#1",
                             text(i, 8000)])
    return [path], (f'mturk-csv big_batch.csv line {n + 1}: column "WorkTimeInSeconds": \'x\' '
                    "is not a whole number of seconds")


MTURK_ITEMS = 150


def items_for_mturk(folder: Path) -> None:
    """A rewrite project with ``MTURK_ITEMS`` one-question dialogues (C_i#1)."""
    path = folder / "items_dev.json"
    path.write_text(json.dumps({"data": [
        {"title": "T", "paragraphs": [{"id": f"C_{i}", "qas": [
            {"question": "Q?", "id": "q", "orig_answer": {"text": "A"}}]}]}
        for i in range(MTURK_ITEMS)]}))
    import_files(fmt="quac", paths=[path], project_slug="big")


WRITERS = {"decontext": write_decontext, "claire": write_claire, "canard": write_canard,
           "quac": write_quac, "coqa": write_coqa, "sluice": write_sluice,
           "websplit": write_websplit, "mturk-csv": write_mturk}


def traced_peak(run) -> int:
    """The most memory ``run()`` held at once beyond what was held before (tracemalloc)."""
    gc.collect()
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("fmt", list(WRITERS))
def test_an_import_holds_far_less_than_its_file(tmp_path, monkeypatch, fmt):
    monkeypatch.setattr(imports, "STAGED_CHUNK", CHUNK)
    if fmt == "mturk-csv":
        items_for_mturk(tmp_path)
    paths, _ = WRITERS[fmt](tmp_path)
    size = sum(path.stat().st_size for path in paths)
    assert size >= FILE_BYTES
    # A first, small import warms the process (compiled queries, imported modules).
    warm = tmp_path / "warm"
    warm.mkdir()
    warm_paths, _ = WRITERS[fmt](warm, total=20_000)
    import_files(fmt=fmt, paths=warm_paths, project_slug="big" if fmt == "mturk-csv"
                 else "warm")
    Annotation.objects.filter(project__slug="big").delete()
    result = {}
    peak = traced_peak(lambda: result.setdefault("r", import_files(
        fmt=fmt, paths=paths, project_slug="big")))
    assert result["r"].rows > 0 and result["r"].files_imported
    assert peak < BOUND, f"{fmt}: {peak / 2**20:.2f} MiB traced for a {size / 2**20:.1f} MiB file"


@pytest.mark.parametrize("fmt", list(WRITERS))
def test_a_bad_record_at_the_end_of_a_big_file_writes_nothing(tmp_path, monkeypatch, fmt):
    monkeypatch.setattr(imports, "STAGED_CHUNK", CHUNK)
    if fmt == "mturk-csv":
        items_for_mturk(tmp_path)
    paths, message = WRITERS[fmt](tmp_path, bad_last=True)
    before = row_counts()
    with pytest.raises(ImportInputError) as error:
        import_files(fmt=fmt, paths=paths, project_slug="big")
    assert str(error.value).startswith(message), str(error.value)
    assert row_counts() == before


DEMO = Path(imports.__file__).resolve().parents[1] / "demo_data"
#: (format, files, split) of small real and hand-made files: each imported whole and in
#: chunks of a row or two must give the same rows.
SMALL = [
    ("decontext", [DEMO / "decontext" / "handmade_dev.jsonl",
                   DEMO / "decontext" / "handmade_train.jsonl"], None),
    ("claire", [DEMO / "claire" / name for name in
                ("dev_data.tsv", "dev_scores.tsv", "dev_labels.tsv")], None),
    # Two files of one dialogue set: later records reveal earlier turns' answers.
    ("canard", [DEMO / "canard" / "dev_dialogues_1_2.json",
                DEMO / "canard" / "dev_dialogue_3.json"], None),
    ("quac", [FIXTURES / "quac_dev.json"], None),
    ("coqa", [FIXTURES / "coqa_train.json"], None),
    ("sluice", [DEMO / "sluice" / "conv_sluice_test.csv"], None),
    ("websplit", [FIXTURES / "websplit_train.jsonl"], None),
]


def stored(slug: str) -> dict:
    """What a project holds, by natural keys (no ids)."""
    project = Project.objects.get(slug=slug)
    return {
        "items": sorted(Item.objects.filter(project=project).values_list(
            "external_id", "split", "group_key", "position", "is_gold")),
        "turns": sorted(DialogueTurn.objects.filter(dialogue__project=project).values_list(
            "dialogue__external_id", "order", "question", "answer")),
        "answers": sorted((a, w, t, str(r), c, s, json.dumps(p, sort_keys=True))
                          for a, w, t, r, c, s, p in Annotation.objects.filter(
                              project=project).values_list(
                              "item__external_id", "worker__external_id", "text", "rating",
                              "category", "skipped", "provenance")),
    }


@pytest.mark.parametrize(("fmt", "paths", "split"), SMALL, ids=[case[0] for case in SMALL])
def test_chunks_of_a_row_or_two_give_what_one_chunk_gives(monkeypatch, fmt, paths, split):
    whole = import_files(fmt=fmt, paths=paths, project_slug="whole", split=split)
    monkeypatch.setattr(imports, "STAGED_CHUNK", 2)
    chunked = import_files(fmt=fmt, paths=paths, project_slug="chunked", split=split)
    workers = "Worker"  # shared by every project: the first import made them
    assert {**chunked.created, workers: 0} == {**whole.created, workers: 0}
    assert chunked.rows == whole.rows
    assert stored("chunked") == stored("whole")
    # The first file, then all of them, in chunks: what exists is found across chunks.
    import_files(fmt=fmt, paths=[paths[0]], project_slug="in-two", split=split)
    import_files(fmt=fmt, paths=paths, project_slug="in-two", split=split)
    assert stored("in-two") == stored("whole")


def test_a_turn_that_differs_from_one_written_chunks_before_quotes_it(tmp_path, monkeypatch):
    """The stream keeps digests of the turns, not their text; the message still quotes the
    earlier record's question (read again on that error path)."""
    monkeypatch.setattr(imports, "STAGED_CHUNK", 1)
    records = [{"History": ["T", "S"], "QuAC_dialog_id": "C_1", "Question": "Who came?",
                "Question_no": 1, "Rewrite": "Who came to the fair?"}]
    records += [{"History": ["T", "S", f"Q{n}?", "A"], "QuAC_dialog_id": f"C_{n}",
                 "Question": "And?", "Question_no": 2, "Rewrite": "And then?"}
                for n in range(2, 6)]
    records.append({"History": ["T", "S", "Who left?", "Nobody"], "QuAC_dialog_id": "C_1",
                    "Question": "Why?", "Question_no": 2, "Rewrite": "Why did nobody leave?"})
    path = tmp_path / "conflict_dev.json"
    path.write_text(json.dumps(records))
    before = row_counts()
    with pytest.raises(ImportInputError) as error:
        import_files(fmt="canard", paths=[path], project_slug="conflict")
    assert str(error.value) == ("canard conflict_dev.json record 5: dialogue 'C_1' turn 1: "
                                "question 'Who left?' differs from an earlier record "
                                "('Who came?')")
    assert row_counts() == before


@pytest.mark.parametrize("fmt", ["quac", "claire"])
def test_a_file_changed_between_checking_and_writing_leaves_nothing(tmp_path, monkeypatch,
                                                                     fmt):
    monkeypatch.setattr(imports, "STAGED_CHUNK", CHUNK)
    paths, _ = WRITERS[fmt](tmp_path, total=200_000)
    writer = imports._ChunkWriter.__init__

    def change_then_write(self, *args, **kwargs):  # the writer is made after the check
        text = paths[0].read_text()
        paths[0].write_text(text.replace("word 1 ", "word 2 ", 1))  # same length
        writer(self, *args, **kwargs)

    monkeypatch.setattr(imports._ChunkWriter, "__init__", change_then_write)
    before = row_counts()
    with pytest.raises(ImportInputError, match=f"{paths[0].name}: the file changed while"):
        import_files(fmt=fmt, paths=paths, project_slug="changed")
    assert row_counts() == before


def test_a_json_document_with_a_bad_byte_names_its_line(tmp_path):
    path = tmp_path / "bad_dev.json"
    path.write_bytes(b'{"data": [\n{"title": "T\xff", "paragraphs": []}\n]}\n')
    with pytest.raises(ImportInputError) as error:
        import_files(fmt="quac", paths=[path], project_slug="bytes")
    assert str(error.value) == "quac bad_dev.json line 2: not valid UTF-8 (byte 0xff at column 13)"


def test_an_item_whose_turn_an_earlier_chunk_wrote(tmp_path, monkeypatch):
    """A CANARD record whose question an earlier record's history already gave (records out
    of order): its item points at the turn written chunks before."""
    monkeypatch.setattr(imports, "STAGED_CHUNK", 1)
    history = ["T", "S", "Who came?", "Ann", "Why?", "To play"]
    records = [{"History": history, "QuAC_dialog_id": "C_1", "Question": "When?",
                "Question_no": 3, "Rewrite": "When did Ann come?"},
               {"History": history[:4], "QuAC_dialog_id": "C_1", "Question": "Why?",
                "Question_no": 2, "Rewrite": "Why did Ann come?"}]
    path = tmp_path / "late_dev.json"
    path.write_text(json.dumps(records))
    result = import_files(fmt="canard", paths=[path], project_slug="late")
    assert result.created["Item"] == 2 and result.created["DialogueTurn"] == 3
    item = Item.objects.select_related("turn").get(external_id="C_1#2")
    assert (item.turn.order, item.turn.question, item.turn.answer) == (2, "Why?", "To play")


def test_the_writer_keeps_no_key_per_websplit_row(tmp_path, monkeypatch):
    """WebSplit names each sentence once (an id twice is refused), so across chunks the writer
    keeps the facts they share, not a key per sentence and item: at most a chunk's worth."""
    paths, _ = write_websplit(tmp_path)
    monkeypatch.setattr(imports, "STAGED_CHUNK", CHUNK)
    held: list[int] = []
    write = imports._ChunkWriter.write

    def write_and_measure(writer, bundle):
        write(writer, bundle)
        held.append(max(len(writer._ids.get(model, ())) for model in (Item, ComplexSentence)))

    monkeypatch.setattr(imports._ChunkWriter, "write", write_and_measure)
    result = import_files(fmt="websplit", paths=paths, project_slug="few-keys")
    assert result.created["Item"] > 3 * CHUNK and len(held) > 3
    assert max(held) <= CHUNK
    # ... and a second import of the same file still finds every row already there.
    monkeypatch.setattr(imports._ChunkWriter, "write", write)
    again = import_files(fmt="websplit", paths=paths, project_slug="few-keys")
    assert again.created.get("Item", 0) == 0 and again.created.get("ComplexSentence", 0) == 0
