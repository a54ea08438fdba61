from django.db import models


class CeilingRow(models.Model):
    """The one row the ceiling's view writes per request (table made by ``migrate
    --run-syncdb``: this app has no migrations)."""

    user_id = models.BigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"ceiling row {self.pk}"
