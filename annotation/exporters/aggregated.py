"""``aggregated.jsonl``: the aggregated answer per item and the method that produced it,
written beside a dataset export when the project aggregates with worker-quality models
(``flag_settings["aggregation"] == "model"``). The released files themselves never change:
with aggregation off (the default) nothing is added, and with it on they are byte-identical
to an export without it; the raw references stay where the format keeps them.

One JSON line per aggregated item (gold items left out: they are checks, not data), in item
id order: ``item`` (external id), ``split``, ``aggregated`` (label, score or text),
``confidence`` (the model's posterior or score, the text's support; null for a plain vote),
``method`` (what produced it: ``bias_noise``, ``mean``, ``dawid_skene``, ``majority_vote``,
``text_support``, ``first_answer``) and ``reason`` (the safety rule's verdict).
"""

from __future__ import annotations

from collections.abc import Iterator

from qc.flags import FlagSettings
from qc.worker_models import MODEL

from ..services.qc_models import aggregated_outputs
from .base import Exporter, ExportFile, json_line

FILE_NAME = "aggregated.jsonl"


def aggregation_is_on(project) -> bool:
    """Whether the project asks for worker-quality aggregation."""
    return FlagSettings.from_dict(project.flag_settings).aggregation == MODEL


class AggregatedExporter(Exporter):
    format_name = "aggregated"

    def files(self) -> list[ExportFile]:
        return [ExportFile(FILE_NAME, self.lines)]

    def lines(self) -> Iterator[str]:
        settings = FlagSettings.from_dict(self.project.flag_settings)
        outputs, report = aggregated_outputs(project=self.project, settings=settings)
        method = report.get("model") if report.get("used") == MODEL else report.get("plain")
        items = self.project.items.filter(id__in=list(outputs), is_gold=False).order_by(
            "id").values_list("id", "external_id", "split")
        for item_id, external_id, split in items.iterator(chunk_size=2000):
            value, confidence = outputs[item_id]
            self.count()
            yield json_line({"item": external_id, "split": split, "aggregated": value,
                             "confidence": confidence, "method": method,
                             "reason": report["reason"]})
