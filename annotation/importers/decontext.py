"""Decontextualization JSONL (TASKS.md §1), one example per line.

Each line gives a Document (one per page + paragraph: the paragraph with its section titles),
a TargetSentence whose UTF-8 byte offsets must lie inside the paragraph and decode exactly to
``original_sentence``, an Item (external id = ``example_id``, group = the page, so a split
never cuts a page) and, when present, the ``annotations`` by their ``worker_id``.
"""

from __future__ import annotations

from .base import (
    AnnotationRecord,
    Bundle,
    ImportInputError,
    ItemRecord,
    SourceFile,
    Where,
    fail,
    fit_key,
    get_field,
    progress,
    read_jsonl,
    resolve_split,
    stable_id,
)

FORMAT = "decontext"
KIND = "decontext"
CATEGORIES = ("DONE", "IMPOSSIBLE", "UNNECESSARY")


def parse(files: list[SourceFile], *, split: str | None, kind: str, quiet: bool) -> Bundle:
    bundle = Bundle(kind=KIND)
    for file in files:
        file_split = resolve_split(FORMAT, file, split, None)
        lines = list(read_jsonl(FORMAT, file))
        for number, record in progress(lines, total=len(lines), desc=file.name, quiet=quiet):
            _parse_example(bundle, Where(file.name, line=number), record, file_split)
        bundle.rows[file.name] = len(lines)
        bundle.file_splits[file.name] = file_split
    return bundle


def _parse_example(bundle: Bundle, where: Where, record: dict, split: str) -> None:
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
    paragraph_bytes = paragraph.encode("utf-8")
    if not 0 <= start < end <= len(paragraph_bytes):
        raise fail(FORMAT, where, f"byte offsets {start}..{end} lie outside the paragraph "
                                  f"({len(paragraph_bytes)} UTF-8 bytes)")
    try:
        span = paragraph_bytes[start:end].decode("utf-8")
    except UnicodeDecodeError:
        raise fail(FORMAT, where, f"byte offsets {start}..{end} cut a UTF-8 character "
                                  "of the paragraph") from None
    if span != sentence:
        raise fail(FORMAT, where, f"bytes {start}..{end} of the paragraph are {span!r}, "
                                  f'not "original_sentence" {sentence!r}')
    page_key = url or page_title
    document_id = stable_id(page_key, paragraph, prefix="doc-")
    bundle.documents[document_id] = {"title": page_title, "url": url,
                                     "paragraphs": [{"section": sections, "text": paragraph}]}
    target_key = (document_id, 0, start, end)
    bundle.targets[target_key] = {"text": sentence}
    external_id = str(example_id)
    if external_id in bundle.items:
        raise fail(FORMAT, where, f"example_id {example_id} appears twice")
    bundle.add_item(external_id, ItemRecord(split=split, group_key=fit_key(page_key),
                                            position=start, source=("target", target_key)),
                    FORMAT, where)
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
        bundle.annotations.append(AnnotationRecord(
            worker=("import", worker), item_key=external_id, source="import",
            fields={"payload": {"category": category, "decontextualized_sentence": text,
                                "operations": []},
                    "category": category, "text": text, "edit_operations": [],
                    "provenance": {**where.provenance(), "example_id": example_id,
                                   "annotation": index}},
            where=a_where,
        ))
