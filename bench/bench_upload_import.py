"""The console's upload import end to end: a synthetic WebSplit JSONL of about ``--mb``
megabytes POSTed to ``/staff/projects/<slug>/import/`` (multipart, streamed to disk by the
page's upload handlers), previewed (a dry run), then imported — in one process on SQLite (a
temporary file). Prints the upload's size, the rows, the seconds and rows per second of the
preview and of the import, and the process's peak RSS before and after.

The multipart body is written to a file and handed to Django's WSGI handler as the request's
stream (as a server would), not built in memory by the test client: the peak RSS is the
page's and the import's, not the benchmark's. The import runs through the page's import job
(inline: no broker), since the upload is above ``UNPACK_UPLOAD_JOB_MIN_BYTES``.

    python bench/bench_upload_import.py --mb 10
    python bench/bench_upload_import.py --mb 100
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


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write_multipart(path: Path, fields: dict[str, str], file_field: str,
                    file: Path) -> str:
    """A multipart/form-data body of ``fields`` and ``file`` written to ``path`` (the file
    copied in chunks); returns the boundary."""
    boundary = "unpack-bench-" + os.urandom(8).hex()
    with path.open("wb") as out:
        for name, value in fields.items():
            out.write(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"'
                      f"\r\n\r\n{value}\r\n".encode())
        out.write(f'--{boundary}\r\nContent-Disposition: form-data; name="{file_field}"; '
                  f'filename="{file.name}"\r\nContent-Type: application/octet-stream'
                  "\r\n\r\n".encode())
        with file.open("rb") as handle:
            shutil.copyfileobj(handle, out, 1024 * 1024)
        out.write(f"\r\n--{boundary}--\r\n".encode())
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
    parser.add_argument("--database-url", default="",
                        help="a PostgreSQL URL (default: a temporary SQLite file)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="unpack-bench-upload-"))
    os.environ.pop("DATABASE_URL", None)
    if args.database_url:
        os.environ["DATABASE_URL"] = args.database_url
    os.environ["UNPACK_SQLITE_PATH"] = str(folder / "bench.sqlite3")
    os.environ["UNPACK_UPLOAD_DIR"] = str(folder / "uploads")
    rows = int(args.mb * 1024 * 1024 / 230)  # a synthetic sentence line is ~230 bytes
    source = folder / "websplit_train.jsonl"
    write_synthetic_websplit(source, rows)
    size = source.stat().st_size
    os.environ["UNPACK_UPLOAD_MAX_BYTES"] = str(size + 1024 * 1024)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings")
    os.environ.setdefault("UNPACK_ALLOW_DEV_KEY", "true")  # a local benchmark
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    from annotation.models import Item, Project

    call_command("migrate", verbosity=0, interactive=False)
    slug = "bench-upload-" + os.urandom(4).hex()
    Project.objects.create(slug=slug, name="Bench", kind="split_rephrase")
    user, _ = get_user_model().objects.get_or_create(
        username="bench", defaults={"is_superuser": True, "is_staff": True})
    client = Client()
    client.force_login(user)
    page = client.get(f"/staff/projects/{slug}/import/")
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"',
                     page.content.decode()).group(1)
    cookies = "; ".join(f"{name}={morsel.value}" for name, morsel in client.cookies.items())
    body = folder / "body.multipart"
    boundary = write_multipart(body, {"csrfmiddlewaretoken": csrf, "format": "websplit",
                                      "split": "train"}, "files", source)
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
    print(json.dumps({
        "database": connection.vendor, "load_average": os.getloadavg(),
        "upload_bytes": size, "rows": rows, "items": imported,
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
