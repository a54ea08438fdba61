"""A progress bar on stderr for the commands: the ``progress(done, total, message)`` callback
the services take (``project_qc_run``, ``export_project``), drawn with tqdm.

stdout stays the command's output (``qc_report --json`` can be piped); tqdm draws only when
stderr is a terminal (``disable=None``), so logs and pipes get no control characters.
"""

from __future__ import annotations

import sys

from tqdm import tqdm


class ProgressBar:
    """``with ProgressBar("QC") as progress: service(..., progress=progress)``."""

    def __init__(self, description: str, *, unit: str = "step", file=None) -> None:
        self.bar = tqdm(desc=description, unit=unit, file=file or sys.stderr, disable=None,
                        leave=True, dynamic_ncols=True)

    def __call__(self, done: int, total: int | None = None, message: str = "") -> None:
        if total is not None and self.bar.total != total:
            self.bar.total = total
        self.bar.n = done
        self.bar.set_postfix_str(message, refresh=False)
        self.bar.refresh()

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc_info) -> None:
        self.bar.close()
