"""MTurk (and local) batches: plan, launch, publish, collect and the review decisions.

The flow, each step a service here and a thin Celery task in ``annotation.tasks``::

    batch_plan (pure read: which items, grouped into which HITs, at what cost)
      -> batch_launch (writes the Batch + pending Hits; enqueues publish_batch)
      -> batch_publish (CreateHITType once, CreateHITWithHITType per pending Hit)
      -> batch_collect (ListReviewableHITs + ListAssignmentsForHIT; stores annotations)
      -> hit_expire, hit_extend, hit_add_assignments (``decide``: live HITs)

Reviewer decisions (approve, reject, bonus, block) are ``annotation.services.decisions``.

Every provider write is safe to retry: HITs carry ``Hit.unique_request_token``, bonuses
``Bonus.unique_request_token``, additional assignments a token derived from the job id; every
database update after a provider call is a compare-and-set (``filter(old state).update(...)``),
so a job retried after a crash never acts twice. No transaction is held open across a provider
call: each HIT is committed as soon as it exists, so a publish killed half-way resumes where it
stopped.

Stages, one module each: ``plan`` (plan and launch), ``publish``, ``collect``, ``decide``;
``common`` holds what they share.
"""
