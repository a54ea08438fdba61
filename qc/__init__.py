"""Quality control for Unpack: plain Python over plain rows; never imports Django.

Modules (the public API is listed in docs/qc.md):

- ``qc.agreement``   Fleiss' kappa, Krippendorff's alpha, per-item and per-worker agreement
- ``qc.textmetrics`` BLEU / chrF / GLEU / SARI / sentence match
- ``qc.aggregation`` plausibility classes, majority labels, decontext human output
- ``qc.flags``       flag rules returning ``(target_id, reason_code, score, detail)`` rows
- ``qc.livechecks``  live-check rules shared with the browser (``qc/rules/live_checks.json``)
- ``qc.splits``      seeded group splits, the WebSplit rule, the CANARD mapping
- ``qc.cleaning``    the sluice paper's cleaning operations
- ``qc.baselines``   REPEAT/Copy, Pronoun Sub, C&E Q1, C&E A
- ``qc.evaluation``  per-task evaluation
"""
