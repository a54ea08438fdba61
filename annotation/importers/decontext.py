"""Decontextualization JSONL (TASKS.md §1), one example per line.

Each line gives a Document (one per page + paragraph: the paragraph with its section titles),
a TargetSentence whose UTF-8 byte offsets must lie inside the paragraph and decode exactly to
``original_sentence``, an Item (external id = ``example_id``, group = the page, so a split
never cuts a page) and, when present, the ``annotations`` by their ``worker_id``.

Byte offsets: we store ``[start, end)`` (end exclusive, a Python slice of the UTF-8 bytes).
The release's README calls ``sentence_end_byte_offset`` inclusive, and its files are not
where we can check them, so each line is read as it decodes: ``bytes[start:end]`` equal to
``original_sentence`` is exclusive, ``bytes[start:end + 1]`` inclusive (stored as end + 1,
and the paragraph remembers it, ``end_offset_inclusive``, so the export writes it back the
same way). One of the two must hold.

Fine-grained edits: an annotation's optional ``changes`` (the README's dev/test format,
``[{"new": text, "old": {"start_ind": i, "end_ind": j}}]``, character offsets into the
original sentence, end exclusive) become its edit operations (delete / add / swap), which the
export writes back as ``changes``.
"""

from __future__ import annotations

from collections.abc import Iterator

from .base import (
    GOLD_FIELD,
    AnnotationRecord,
    Bundle,
    ImportInputError,
    ItemRecord,
    SourceFile,
    Stream,
    Where,
    fail,
    fit_key,
    get_field,
    gold_answer_in,
    progress,
    read_jsonl,
    resolve_split,
    stable_id,
)

FORMAT = "decontext"
KIND = "decontext"
CATEGORIES = ("DONE", "IMPOSSIBLE", "UNNECESSARY")
# Document paragraph key: the source file gave this paragraph's sentence end inclusive.
END_INCLUSIVE = "end_offset_inclusive"


def _exclusive_end(where: Where, paragraph: bytes, start: int, end: int,
                   sentence: str) -> tuple[int, bool]:
    """``(exclusive end, whether the file's end was inclusive)``; a clear error when the
    offsets do not give ``original_sentence`` either way."""
    if not 0 <= start <= end <= len(paragraph):
        raise fail(FORMAT, where, f"byte offsets {start}..{end} lie outside the paragraph "
                                  f"({len(paragraph)} UTF-8 bytes)")
    for candidate, inclusive in ((end, False), (end + 1, True)):
        if start < candidate <= len(paragraph) and (
                paragraph[start:candidate] == sentence.encode("utf-8")):
            return candidate, inclusive
    try:
        span = paragraph[start:end].decode("utf-8")
    except UnicodeDecodeError:
        raise fail(FORMAT, where, f"byte offsets {start}..{end} cut a UTF-8 character "
                                  "of the paragraph") from None
    raise fail(FORMAT, where, f"bytes {start}..{end} of the paragraph are {span!r}, not "
                              f'"original_sentence" {sentence!r} (end exclusive or inclusive)')


def operations_from_changes(where: Where, name: str, changes: list, sentence: str) -> list[dict]:
    """The release's ``changes`` as our edit operations (spans in the original sentence)."""
    operations = []
    for index, change in enumerate(changes):
        label = f"{name}[{index}]"
        old = change.get("old") if isinstance(change, dict) else None
        new = change.get("new") if isinstance(change, dict) else None
        start = old.get("start_ind") if isinstance(old, dict) else None
        end = old.get("end_ind") if isinstance(old, dict) else None
        if not (isinstance(new, str) and all(isinstance(value, int) and
                                             not isinstance(value, bool)
                                             for value in (start, end))):
            raise fail(FORMAT, where, f'{label} must be {{"new": text, "old": {{"start_ind": '
                                      f'int, "end_ind": int}}}}')
        if not 0 <= start <= end <= len(sentence) or (start == end and not new):
            raise fail(FORMAT, where, f"{label}: span {start}..{end} is not an edit of the "
                                      f"{len(sentence)}-character original sentence")
        op = "add" if start == end else "delete" if not new else "swap"
        operations.append({"op": op, "start": start, "end": end, "text": new, "source": None,
                           "edit_type": None})
    return operations


def changes_from_operations(operations: list[dict]) -> list[dict]:
    """Our edit operations in the release's ``changes`` shape, in sentence order."""
    return [{"new": operation["text"],
             "old": {"start_ind": operation["start"], "end_ind": operation["end"]}}
            for operation in sorted(operations, key=lambda op: (op["start"], op["end"]))]


def parse(stream: Stream, files: list[SourceFile], *, split: str | None, kind: str,
          quiet: bool) -> Iterator[Bundle]:
    for file in files:
        file_split = resolve_split(FORMAT, file, split, None)
        rows = 0
        for number, record in progress(read_jsonl(FORMAT, file), total=None, desc=file.name,
                                       quiet=quiet):
            rows += 1
            _parse_example(stream, Where(file.name, line=number), record, file_split)
            if stream.full():
                yield stream.take()
        stream.file_done(file, rows=rows, split=file_split)
    yield stream.take()


def _parse_example(stream: Stream, where: Where, record: dict, split: str) -> None:
    example_id = get_field(FORMAT, where, record, "example_id", int)
    sentence = get_field(FORMAT, where, record, "original_sentence", str)
    page_title = get_field(FORMAT, where, record, "page_title", str)
    sections = get_field(FORMAT, where, record, "section_title", list)
    if not all(isinstance(title, str) for title in sections):
        raise fail(FORMAT, where, 'field "section_title" must be a list of strings')
    paragraph = get_field(FORMAT, where, record, "paragraph_text", str)
    start = get_field(FORMAT, where, record, "sentence_start_byte_offset", int)
    end = get_field(FORMAT, where, record, "sentence_end_byte_offset", int)
    url = get_field(FORMAT, where, record, "article_url", str, required=False, default="")
    end, inclusive = _exclusive_end(where, paragraph.encode("utf-8"), start, end, sentence)
    page_key = url or page_title
    document_id = stable_id(page_key, paragraph, prefix="doc-")
    paragraph_record = {"section": sections, "text": paragraph}
    if inclusive:
        paragraph_record[END_INCLUSIVE] = True
    bundle = stream.bundle
    bundle.documents[document_id] = {"title": page_title, "url": url,
                                     "paragraphs": [paragraph_record]}
    target_key = (document_id, 0, start, end)
    bundle.targets[target_key] = {"text": sentence}
    external_id = str(example_id)
    if external_id in stream.items:
        raise fail(FORMAT, where, f"example_id {example_id} appears twice")
    stream.add_item(external_id, ItemRecord(
        split=split, group_key=fit_key(page_key), position=start, source=("target", target_key),
        gold_answer=gold_answer_in(FORMAT, where, KIND, record.get(GOLD_FIELD))), FORMAT, where)
    annotations = get_field(FORMAT, where, record, "annotations", list, required=False,
                            default=[])
    workers: set[str] = set()
    for index, annotation in enumerate(annotations):
        a_where = Where(where.file, line=where.line)
        prefix = f"annotations[{index}]"
        if not isinstance(annotation, dict):
            raise fail(FORMAT, a_where, f"{prefix} must be an object")
        try:
            category = get_field(FORMAT, a_where, annotation, "category", str)
            text = get_field(FORMAT, a_where, annotation, "decontextualized_sentence", str,
                             required=False, default="")
            worker_id = get_field(FORMAT, a_where, annotation, "worker_id", (str, int),
                                  required=False, default=None)
            own_id = get_field(FORMAT, a_where, annotation, "example_id", int, required=False,
                               default=example_id)
            changes = get_field(FORMAT, a_where, annotation, "changes", list, required=False,
                                default=[])
        except ImportInputError as error:
            raise fail(FORMAT, a_where, f"{prefix}: {str(error).split(': ', 1)[1]}") from None
        if category not in CATEGORIES:
            raise fail(FORMAT, a_where, f'{prefix} field "category" is {category!r}, not one '
                                        f"of {', '.join(CATEGORIES)}")
        if own_id != example_id:
            raise fail(FORMAT, a_where, f'{prefix} field "example_id" is {own_id}, not the '
                                        f"line's {example_id}")
        # No worker id: a stable pseudonym per annotation, so it counts as its own rater.
        worker = (str(worker_id) if worker_id is not None
                  else stable_id(external_id, str(index), prefix="decontext-"))
        if worker in workers:
            raise fail(FORMAT, a_where, f"{prefix}: worker {worker!r} annotated this example "
                                        "twice")
        workers.add(worker)
        operations = operations_from_changes(a_where, f"{prefix}.changes", changes, sentence)
        bundle.annotations.append(AnnotationRecord(
            worker=("import", worker), item_key=external_id, source="import",
            fields={"payload": {"category": category, "decontextualized_sentence": text,
                                "operations": operations},
                    "category": category, "text": text, "edit_operations": operations,
                    "provenance": {**where.provenance(), "example_id": example_id,
                                   "annotation": index}},
            where=a_where,
        ))
