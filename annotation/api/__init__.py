"""The REST API under /api/ (DRF): projects, items and annotations; batches."""
