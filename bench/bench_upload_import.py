"""The console's upload import end to end: a synthetic WebSplit JSONL of about ``--mb``
megabytes POSTed to ``/staff/projects/<slug>/import/`` (multipart, streamed to disk by the
page's upload handlers), previewed (a dry run), then imported — through Django's test client in
one process on SQLite (a temporary file). Prints the upload's size, the rows, the seconds and
rows per second of the preview and of the import, and the process's peak RSS before and after.

    python bench/bench_upload_import.py --mb 10
    python bench/bench_upload_import.py --mb 100

Target (issue 23): ≥ 10,000 rows/s for a 100 MB upload, with flat memory.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=100.0)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="unpack-bench-upload-"))
    os.environ.pop("DATABASE_URL", None)
    os.environ["UNPACK_SQLITE_PATH"] = str(folder / "bench.sqlite3")
    os.environ["UNPACK_UPLOAD_DIR"] = str(folder / "uploads")
    os.environ["UNPACK_UPLOAD_MAX_BYTES"] = str(int((args.mb + 10) * 1024 * 1024))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings")
    os.environ.setdefault("UNPACK_ALLOW_DEV_KEY", "true")  # a local benchmark
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    from annotation.models import Item, Project

    call_command("migrate", verbosity=0, interactive=False)
    rows = int(args.mb * 1024 * 1024 / 190)  # a synthetic sentence is ~190 bytes
    source = folder / "websplit_train.jsonl"
    write_synthetic_websplit(source, rows)
    size = source.stat().st_size
    Project.objects.create(slug="bench-upload", name="Bench", kind="split_rephrase")
    user = get_user_model().objects.create_user("bench", is_superuser=True, is_staff=True)
    client = Client()
    client.force_login(user)
    before = peak_rss_mib()
    start = time.perf_counter()
    with source.open("rb") as handle:
        response = client.post("/staff/projects/bench-upload/import/",
                               {"format": "websplit", "split": "train", "files": handle})
    preview_seconds = time.perf_counter() - start
    assert response.status_code == 200, response.content[:2000]
    token = re.search(r'name="upload" value="([^"]+)"', response.content.decode()).group(1)
    after_preview = peak_rss_mib()
    start = time.perf_counter()
    response = client.post("/staff/projects/bench-upload/import/",
                           {"upload": token, "commit": "yes"})
    import_seconds = time.perf_counter() - start
    assert response.status_code == 302, response.content[:2000]
    imported = Item.objects.count()
    print(json.dumps({
        "upload_bytes": size, "rows": rows, "items": imported,
        "preview_s": round(preview_seconds, 2),
        "preview_rows_per_s": round(rows / preview_seconds),
        "import_s": round(import_seconds, 2),
        "import_rows_per_s": round(rows / import_seconds),
        "peak_rss_mib": {"before": round(before), "after_preview": round(after_preview),
                         "after_import": round(peak_rss_mib())},
    }, indent=2))


if __name__ == "__main__":
    main()
