"""Audit rows and flags stored before workers were named by pseudonym (issue 11, point 9) hold
raw MTurk WorkerIds: rewrite them to ``Worker.anonymous_id`` (``annotation/pseudonyms.py``), as
collection has written them since.

* events ``assignment_collected`` (``detail.worker``) and ``assignment_mismatch``
  (``detail.reported_worker``: the WorkerId MTurk reported, which may have no Worker row);
* flags ``assignment_mismatch`` ("… for worker <id> on HIT …") and ``not_reported_by_mturk``
  ("… (worker <id>), which MTurk never reported …");
* any other event detail or flag detail (e.g. a provider's error message stored by
  ``bonus_failed``) that contains the WorkerId of the MTurk worker the row is about.

A value that already is a pseudonym is left alone, so the migration can run twice. Reversing it
is a no-op: pseudonyms cannot be turned back into WorkerIds (that is their point).
"""

import re

from django.conf import settings
from django.db import migrations

from annotation.pseudonyms import is_pseudonym, pseudonym

MTURK = "mturk"
WORKER_IN_FLAG = {
    "assignment_mismatch": re.compile(r"(?<= for worker )(\S+)(?= on HIT )"),
    "not_reported_by_mturk": re.compile(r"(?<=\(worker )([^)\s]+)(?=\), which MTurk never)"),
}


def _name(external_id: str) -> str:
    return pseudonym(secret_key=settings.SECRET_KEY, provider=MTURK, external_id=external_id)


def _replace_in(value, raw: str, named: str):
    """``value`` (JSON: dicts, lists, strings) with every occurrence of ``raw`` replaced."""
    if isinstance(value, str):
        return value.replace(raw, named)
    if isinstance(value, list):
        return [_replace_in(part, raw, named) for part in value]
    if isinstance(value, dict):
        return {key: _replace_in(part, raw, named) for key, part in value.items()}
    return value


def _event_detail(event) -> dict:
    detail = dict(event.detail) if isinstance(event.detail, dict) else event.detail
    if not isinstance(detail, dict):
        return detail
    for key in ("worker", "reported_worker"):
        if event.kind not in ("assignment_collected", "assignment_mismatch"):
            break
        value = detail.get(key)
        if isinstance(value, str) and value and not is_pseudonym(value):
            detail[key] = _name(value)
    for worker in (event.worker, event.assignment.worker if event.assignment else None):
        if worker is not None and worker.provider == MTURK and worker.external_id:
            detail = _replace_in(detail, worker.external_id, _name(worker.external_id))
    return detail


def _flag_detail(flag) -> str:
    detail = flag.detail or ""
    pattern = WORKER_IN_FLAG.get(flag.reason)
    if pattern is not None:
        detail = pattern.sub(lambda m: m.group(1) if is_pseudonym(m.group(1))
                             else _name(m.group(1)), detail)
    for worker in (flag.worker, flag.assignment.worker if flag.assignment else None):
        if worker is not None and worker.provider == MTURK and worker.external_id:
            detail = detail.replace(worker.external_id, _name(worker.external_id))
    return detail


def rewrite(apps, schema_editor):
    status_event = apps.get_model("annotation", "StatusEvent")
    flag_model = apps.get_model("annotation", "Flag")
    bonus_model = apps.get_model("annotation", "Bonus")
    events = (status_event.objects.exclude(detail={})
              .select_related("worker", "assignment__worker").order_by("pk"))
    changed = []
    for event in events.iterator(chunk_size=2000):
        detail = _event_detail(event)
        if detail != event.detail:
            event.detail = detail
            changed.append(event)
        if len(changed) >= 1000:
            status_event.objects.bulk_update(changed, ["detail"])
            changed = []
    status_event.objects.bulk_update(changed, ["detail"])
    flags = (flag_model.objects.exclude(detail="")
             .select_related("worker", "assignment__worker").order_by("pk"))
    changed = []
    for flag in flags.iterator(chunk_size=2000):
        detail = _flag_detail(flag)
        if detail != flag.detail:
            flag.detail = detail
            changed.append(flag)
    flag_model.objects.bulk_update(changed, ["detail"], batch_size=1000)
    bonuses = (bonus_model.objects.exclude(error="").select_related("assignment__worker")
               .filter(assignment__worker__provider=MTURK))
    for bonus in bonuses:
        raw = bonus.assignment.worker.external_id
        if raw and raw in bonus.error:
            bonus.error = bonus.error.replace(raw, _name(raw))
            bonus.save(update_fields=["error"])


class Migration(migrations.Migration):
    dependencies = [("annotation", "0013_h11_reviewers_block")]

    operations = [migrations.RunPython(rewrite, migrations.RunPython.noop, elidable=True)]
