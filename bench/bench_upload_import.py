"""The console's upload import end to end: a synthetic file of about ``--mb`` megabytes
(``--format``: WebSplit JSONL, the default; QuAC or CANARD JSON, one document each; CLAIRE's
data, scores and labels TSVs) POSTed to ``/staff/projects/<slug>/import/`` (multipart,
streamed to disk by the page's upload handlers), previewed (a dry run), then imported — in one
process on SQLite (a
temporary file). Prints the upload's size, the rows, the seconds and rows per second of the
preview and of the import, and the process's peak RSS before and after.

The multipart body is written to a file and handed to Django's WSGI handler as the request's
stream (as a server would), not built in memory by the test client: the peak RSS is the
page's and the import's, not the benchmark's. The import runs through the page's import job
(inline: no broker), since the upload is above ``UNPACK_UPLOAD_JOB_MIN_BYTES``.

    python bench/bench_upload_import.py --mb 10
    python bench/bench_upload_import.py --mb 100
    python bench/bench_upload_import.py --mb 100 --format quac   # or canard, claire
    python bench/bench_upload_import.py --mb 10 --database-url postgres://postgres@127.0.0.1:5432/DB

Besides the wall seconds it prints the process's CPU seconds (user + system) of the preview
and of the import, and the rows per CPU second: on a loaded machine the wall time measures
the load. ``--database-url`` runs it on that (PostgreSQL) database instead of a temporary
SQLite file (migrated first; the bench's project gets a fresh slug each run).

Target (issue 23): ≥ 10,000 rows/s for a 100 MB upload, with flat memory.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_import import write_synthetic_websplit  # noqa: E402

#: Words the synthetic texts are drawn from.
WORDS = ["the", "band", "toured", "europe", "in", "nineteen", "seventy", "and", "recorded",
         "a", "second", "album", "before", "its", "singer", "left", "for", "a", "solo",
         "career", "that", "lasted", "until", "his", "death", "in", "paris"]


def sentence(rng, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def write_quac(folder: Path, mb: float) -> list[Path]:
    """QuAC v0.2's layout: articles of one paragraph (a context of ~2 KB) and 7 questions,
    each with its original answer and one more (~3.9 KB an article)."""
    rng = random.Random(7)
    path = folder / "quac_train.json"
    with path.open("w", encoding="utf-8") as out:
        out.write('{"data": [')
        index = 0
        while out.tell() < mb * 1024 * 1024:
            qas = []
            for q in range(7):
                answer = sentence(rng, 20)
                qas.append({"question": sentence(rng, 8)[:-1] + "?", "id": f"C_{index}_q#{q}",
                            "followup": "y", "yesno": "x",
                            "orig_answer": {"text": answer, "answer_start": 10},
                            "answers": [{"text": answer, "answer_start": 10}]})
            article = {"title": f"Band {index}", "section_title": "Career",
                       "background": sentence(rng, 70),
                       "paragraphs": [{"id": f"C_{index}_0", "context": sentence(rng, 330),
                                       "qas": qas}]}
            out.write(("," if index else "") + json.dumps(article) + "\n")
            index += 1
        out.write("]}\n")
    return [path]


def write_canard(folder: Path, mb: float) -> list[Path]:
    """CANARD's layout: a record per question of 7-question dialogues, each with the
    dialogue's history so far (answers ~20 words)."""
    rng = random.Random(7)
    path = folder / "canard_train.json"
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        first, dialogue = True, 0
        while out.tell() < mb * 1024 * 1024:
            turns = [(sentence(rng, 8)[:-1] + "?", sentence(rng, 20)) for _ in range(7)]
            for number in range(1, 8):
                history = [f"Band {dialogue}", "Career"]
                for question, answer in turns[:number - 1]:
                    history += [question, answer]
                record = {"History": history, "QuAC_dialog_id": f"C_{dialogue}_0",
                          "Question": turns[number - 1][0], "Question_no": number,
                          "Rewrite": sentence(rng, 10)[:-1] + "?"}
                out.write(("" if first else ",") + json.dumps(record) + "\n")
                first = False
            dialogue += 1
        out.write("]\n")
    return [path]


def write_claire(folder: Path, mb: float) -> list[Path]:
    """CLAIRE's three TSVs: data rows of ~600 bytes (as the release's), a mean score and
    its label per filler."""
    rng = random.Random(7)
    data, scores, labels = (folder / f"train_{role}.tsv" for role in ("data", "scores",
                                                                        "labels"))
    with data.open("w", encoding="utf-8") as out, scores.open("w") as score_out, \
            labels.open("w") as label_out:
        out.write("\t".join(("Id", "Resolved pattern", "Article title", "Section header",
                             "Previous context", "Sentence", "Follow-up context", "Filler1",
                             "Filler2", "Filler3", "Filler4", "Filler5")) + "\n")
        index = 0
        while out.tell() < mb * 1024 * 1024:
            out.write("\t".join((str(index), "IMPLICIT REFERENCE", f"How to Tour {index}",
                                 "Steps", sentence(rng, 45), "Then ______ the van.",
                                 sentence(rng, 25), "pack", "drive", "paint", "sell", "park"))
                      + "\n")
            for position in range(1, 6):
                score = rng.choice((1.0, 2.0, 3.0, 4.4, 5.0))
                score_out.write(f"{index}_{position}\t{score}\n")
                label = ("IMPLAUSIBLE" if score <= 2.5 else "PLAUSIBLE" if score >= 4
                         else "NEUTRAL")
                label_out.write(f"{index}_{position}\t{label}\n")
            index += 1
    return [data, scores, labels]


def write_websplit(folder: Path, mb: float) -> list[Path]:
    path = folder / "websplit_train.jsonl"
    write_synthetic_websplit(path, int(mb * 1024 * 1024 / 230))  # a line is ~230 bytes
    return [path]


#: --format → (the import format, its project kind, the writer of its synthetic files)
FORMATS = {"websplit": ("websplit", "split_rephrase", write_websplit),
           "quac": ("quac", "rewrite", write_quac),
           "canard": ("canard", "rewrite", write_canard),
           "claire": ("claire", "plausibility", write_claire)}


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write_multipart(path: Path, fields: dict[str, str], file_field: str,
                    files: list[Path]) -> str:
    """A multipart/form-data body of ``fields`` and ``files`` written to ``path`` (each file
    copied in chunks); returns the boundary."""
    boundary = "unpack-bench-" + os.urandom(8).hex()
    with path.open("wb") as out:
        for name, value in fields.items():
            out.write(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"'
                      f"\r\n\r\n{value}\r\n".encode())
        for file in files:
            out.write(f'--{boundary}\r\nContent-Disposition: form-data; '
                      f'name="{file_field}"; filename="{file.name}"\r\nContent-Type: '
                      "application/octet-stream\r\n\r\n".encode())
            with file.open("rb") as handle:
                shutil.copyfileobj(handle, out, 1024 * 1024)
            out.write(b"\r\n")
        out.write(f"--{boundary}--\r\n".encode())
    return boundary


def post_streamed(url: str, body: Path, boundary: str, cookies: str) -> tuple[int, bytes]:
    """POST ``body`` (a file) to ``url`` through Django's WSGI handler, read as a stream."""
    from django.core.handlers.wsgi import WSGIHandler

    status: list[str] = []
    with body.open("rb") as stream:
        environ = {
            "REQUEST_METHOD": "POST", "PATH_INFO": url, "SCRIPT_NAME": "", "QUERY_STRING": "",
            "SERVER_NAME": "testserver", "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1",
            "wsgi.url_scheme": "http", "wsgi.input": stream, "wsgi.errors": sys.stderr,
            "CONTENT_TYPE": f"multipart/form-data; boundary={boundary}",
            "CONTENT_LENGTH": str(body.stat().st_size), "HTTP_COOKIE": cookies,
            "HTTP_HOST": "testserver", "REMOTE_ADDR": "127.0.0.1",
        }
        response = WSGIHandler()(environ, lambda code, headers: status.append(code))
        content = b"".join(response)
    return int(status[0].split()[0]), content


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=100.0)
    parser.add_argument("--format", choices=FORMATS, default="websplit")
    parser.add_argument("--database-url", default="",
                        help="a PostgreSQL URL (default: a temporary SQLite file)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="unpack-bench-upload-"))
    os.environ.pop("DATABASE_URL", None)
    if args.database_url:
        os.environ["DATABASE_URL"] = args.database_url
    os.environ["UNPACK_SQLITE_PATH"] = str(folder / "bench.sqlite3")
    os.environ["UNPACK_UPLOAD_DIR"] = str(folder / "uploads")
    fmt, kind, write = FORMATS[args.format]
    sources = write(folder, args.mb)
    size = sum(source.stat().st_size for source in sources)
    os.environ["UNPACK_UPLOAD_MAX_BYTES"] = str(size + 1024 * 1024)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings")
    os.environ.setdefault("UNPACK_ALLOW_DEV_KEY", "true")  # a local benchmark
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    from annotation.models import ImportRecord, Item, Project

    call_command("migrate", verbosity=0, interactive=False)
    slug = "bench-upload-" + os.urandom(4).hex()
    Project.objects.create(slug=slug, name="Bench", kind=kind)
    user, _ = get_user_model().objects.get_or_create(
        username="bench", defaults={"is_superuser": True, "is_staff": True})
    client = Client()
    client.force_login(user)
    page = client.get(f"/staff/projects/{slug}/import/")
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"',
                     page.content.decode()).group(1)
    cookies = "; ".join(f"{name}={morsel.value}" for name, morsel in client.cookies.items())
    body = folder / "body.multipart"
    boundary = write_multipart(body, {"csrfmiddlewaretoken": csrf, "format": fmt,
                                      "split": "train"}, "files", sources)
    before = peak_rss_mib()
    start, cpu = time.perf_counter(), time.process_time()
    status, content = post_streamed(f"/staff/projects/{slug}/import/", body, boundary,
                                    cookies)
    preview_seconds = time.perf_counter() - start
    preview_cpu = time.process_time() - cpu
    body.unlink()
    assert status == 200, content[:2000]
    token = re.search(r'name="upload" value="([^"]+)"', content.decode()).group(1)
    after_preview = peak_rss_mib()
    start, cpu = time.perf_counter(), time.process_time()
    response = client.post(f"/staff/projects/{slug}/import/",
                           {"upload": token, "commit": "yes"})
    import_seconds = time.perf_counter() - start
    import_cpu = time.process_time() - cpu
    assert response.status_code == 302, response.content[:2000]
    imported = Item.objects.filter(project__slug=slug).count()
    # Rows per second count items (sentences, turns, records, fillers), as bench_import.py
    # does; "lines" is what the files' ImportRecords count (CLAIRE: data, scores, labels).
    rows = imported
    lines = sum(ImportRecord.objects.filter(project__slug=slug).values_list("rows", flat=True))
    print(json.dumps({
        "database": connection.vendor, "format": fmt, "load_average": os.getloadavg(),
        "upload_bytes": size, "rows": rows, "lines": lines,
        "preview_s": round(preview_seconds, 2),
        "preview_rows_per_s": round(rows / preview_seconds),
        "preview_cpu_s": round(preview_cpu, 2),
        "preview_rows_per_cpu_s": round(rows / preview_cpu),
        "import_s": round(import_seconds, 2),
        "import_rows_per_s": round(rows / import_seconds),
        "import_cpu_s": round(import_cpu, 2),
        "import_rows_per_cpu_s": round(rows / import_cpu),
        "peak_rss_mib": {"before": round(before), "after_preview": round(after_preview),
                         "after_import": round(peak_rss_mib())},
    }, indent=2))


if __name__ == "__main__":
    main()
