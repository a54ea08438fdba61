"""``python manage.py demo [--no-serve] [--port 8000]``: a ready-to-try Unpack.

Migrates, imports the shipped samples of annotation/demo_data/ (one project per task kind,
see its ATTRIBUTION.md), lets a simulated crowd answer part of every project and runs QC on it
(``annotation.services.demo``), creates the demo logins and serves the app on 127.0.0.1 with
gunicorn and ``gunicorn.conf.py``, as a deployment does. Safe
to run again: imports are no-ops by checksum, the crowd's answers carry fixed submission keys,
QC flags are stored idempotently and the users are only created once.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connections, transaction

from annotation.importers import ImportInputError
from annotation.models import Project
from annotation.services.demo import demo_crowd_run
from annotation.services.imports import import_files

DEMO_DATA = Path(__file__).resolve().parents[2] / "demo_data"
GUNICORN_CONF = Path(__file__).resolve().parents[3] / "gunicorn.conf.py"

# (project slug, project name, format, [(split, path under demo_data)])
DEMO_PROJECTS = [
    ("demo-decontext", "Demo: decontextualization (hand-made sample)", "decontext",
     [("train", "decontext/handmade_train.jsonl"), ("dev", "decontext/handmade_dev.jsonl")]),
    ("demo-claire", "Demo: plausibility of clarifications (CLAIRE dev sample)", "claire",
     [("dev", "claire/dev_data.tsv"), ("dev", "claire/dev_scores.tsv"),
      ("dev", "claire/dev_labels.tsv")]),
    ("demo-canard", "Demo: question-in-context rewriting (CANARD sample)", "canard",
     [("train", "canard/dev_dialogues_1_2.json"), ("test", "canard/dev_dialogue_3.json")]),
    ("demo-websplit", "Demo: split and rephrase (hand-made WebSplit sample)", "websplit",
     [("train", "websplit/handmade_train.jsonl"), ("test", "websplit/handmade_test.jsonl")]),
    ("demo-sluice", "Demo: sluice resolution (conversational sluices sample)", "sluice",
     [("test", "sluice/conv_sluice_test.csv")]),
]

# project slug → (licence, attribution) of its sample, as annotation/demo_data/ATTRIBUTION.md
# states them: stored on the project with its import, so the Hugging Face export's dataset card
# carries them. The hand-made samples were written for Unpack and carry no third-party licence.
DEMO_SOURCES = {
    "demo-decontext": ("", "Hand-made for the Unpack demo in the format of Choi, Palomaki, Lamm, "
                           "Kwiatkowski, Das, Collins. Decontextualization: Making Sentences "
                           "Stand-Alone. TACL 2021."),
    "demo-claire": ("CC BY-NC-SA 3.0",
                    "The first 20 instances of CLAIRE's dev_data.tsv "
                    "(https://github.com/acidAnn/claire): Roth, Anthonio, Sauer. SemEval-2022 "
                    "Task 7: Identifying Plausible Clarifications of Implicit and Underspecified "
                    "Phrases in Instructional Texts. SemEval 2022."),
    "demo-canard": ("CC BY-SA 4.0",
                    "The first 3 dialogues of CANARD's dev.json "
                    "(https://github.com/aagohary/canard): Elgohary, Peskov, Boyd-Graber. Can "
                    "You Unpack That? Learning to Rewrite Questions-in-Context. EMNLP 2019."),
    "demo-websplit": ("", "Hand-made for the Unpack demo in the format of Aharoni, Goldberg. "
                          "Split and Rephrase: Better Evaluation and a Stronger Baseline. "
                          "ACL 2018."),
    "demo-sluice": ("GPL-3.0",
                    "The first 30 rows of raw/conv_sluice_test.csv "
                    "(https://github.com/vpetren/conv_sluice_resolution): Hansen, Søgaard. What "
                    "Do You Mean 'Why?': Resolving Sluices in Conversations. AAAI 2020."),
}

# username, password, is_staff
DEMO_USERS = [("researcher", "researcher", True), ("annotator", "annotator", False)]


@transaction.atomic
def demo_users_ensure() -> list[str]:
    """Create the demo logins that are missing; existing accounts are left as they are."""
    user_model = get_user_model()
    created = []
    for username, password, staff in DEMO_USERS:
        if user_model.objects.filter(username=username).exists():
            continue
        user_model.objects.create_user(username=username, password=password, is_staff=staff,
                                       is_superuser=staff)
        created.append(username)
    return created


def demo_database_check(*, declared_demo: bool) -> None:
    """CommandError unless this database may get the demo's well-known logins: it is fresh (no
    account and no project yet), an earlier run of the demo made it (the demo's ``researcher``
    still has the demo password), or the caller declared it a demo database.

    The demo adds ``researcher`` / ``researcher``, a staff superuser with a published password:
    run by mistake against a real database (a DATABASE_URL left set), it would open it to
    anyone who has read the README."""
    user_model = get_user_model()
    if declared_demo or not (user_model.objects.exists() or Project.objects.exists()):
        return
    researcher = user_model.objects.filter(username=DEMO_USERS[0][0]).first()
    if researcher is not None and researcher.check_password(DEMO_USERS[0][1]):
        return
    raise CommandError(
        "This database already has accounts or projects that the demo did not make, and the "
        "demo would add the staff login researcher/researcher, whose password is public. Run "
        "the demo on a fresh database (e.g. UNPACK_SQLITE_PATH=demo.sqlite3 without "
        "DATABASE_URL), or pass --demo-database if this database is only a demo.")


class Command(BaseCommand):
    help = "Set up a demo (migrate, sample data of the five kinds, logins) and serve it."

    def add_arguments(self, parser):
        parser.add_argument("--no-serve", action="store_true",
                            help="set everything up, then exit instead of serving")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--demo-database", action="store_true",
                            help="this database is only a demo: add the demo logins even "
                                 "though it has other accounts or projects")

    def handle(self, *args, **options):
        call_command("migrate", interactive=False, verbosity=0)
        demo_database_check(declared_demo=options["demo_database"])
        # The logins first: a run interrupted after this point leaves a database that the
        # check above recognises as the demo's.
        created = demo_users_ensure()
        for slug, name, fmt, files in DEMO_PROJECTS:
            licence, attribution = DEMO_SOURCES[slug]
            for split in dict.fromkeys(split for split, _ in files):
                paths = [DEMO_DATA / path for file_split, path in files if file_split == split]
                try:
                    result = import_files(fmt=fmt, paths=paths, project_slug=slug, split=split,
                                          name=name, quiet=True, licence=licence or None,
                                          attribution=attribution)
                except ImportInputError as error:
                    raise CommandError(f"demo data is broken: {error}") from None
                if result.files_imported:
                    self.stdout.write(f"{slug}: imported {', '.join(result.files_imported)}")
        for crowd in demo_crowd_run(project_slugs=[slug for slug, *_ in DEMO_PROJECTS]):
            raised = sum(crowd.qc["flags_raised"].values())
            stored = crowd.qc["flags_stored"]
            self.stdout.write(
                f"{crowd.project}: simulated crowd submitted {crowd.submitted} answers"
                f" ({crowd.already_there} already there); QC raised {raised}"
                f" flag{'' if raised == 1 else 's'}"
                f" ({stored['created']} new)")
        if created:
            self.stdout.write(f"created demo users: {', '.join(created)}")
        url = f"http://127.0.0.1:{options['port']}/"
        self.stdout.write(self.style.SUCCESS(
            f"Unpack demo ready at {url}\n"
            f"  researcher / researcher  (staff: projects, review, admin at {url}admin/)\n"
            f"  annotator / annotator    (annotator: work queue)"))
        if options["no_serve"]:
            return
        serve_with_gunicorn(port=options["port"])


def serve_with_gunicorn(*, port: int) -> None:
    """Become the production server, gunicorn with the repository's ``gunicorn.conf.py``, on
    127.0.0.1:``port`` (static files come from the app itself: WhiteNoise).

    Django's development server costs at least 44 ms a request (21.6 submits/s for one
    annotator, against 324/s from gunicorn on the same SQLite file); a lab running the demo for
    a small in-house effort gets what a deployment gets. The process is replaced (exec), so
    Ctrl-C and a terminating signal reach gunicorn, and no database connection of the setup
    above is inherited by its workers.
    """
    connections.close_all()
    sys.stdout.flush()
    command = [sys.executable, "-m", "gunicorn", "-c", str(GUNICORN_CONF),
               "--chdir", str(GUNICORN_CONF.parent), "-b", f"127.0.0.1:{port}"]
    os.execv(sys.executable, command)  # noqa: S606 (fixed arguments, no shell)
