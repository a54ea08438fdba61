"""One parser per source format; ``annotation.services.imports`` writes what they return."""

from __future__ import annotations

from types import ModuleType

from . import canard, claire, coqa, decontext, mturk_csv, quac, sluice, websplit
from .base import Bundle, ImportInputError, SourceFile

FORMATS: dict[str, ModuleType] = {
    "decontext": decontext,
    "claire": claire,
    "canard": canard,
    "quac": quac,
    "coqa": coqa,
    "websplit": websplit,
    "sluice": sluice,
    "mturk-csv": mturk_csv,
}

__all__ = ["FORMATS", "Bundle", "ImportInputError", "SourceFile"]
