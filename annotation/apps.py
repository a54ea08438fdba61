from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Unpack annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.models.signals import post_delete

        from . import pg_statement_cache, pg_times
        from .models import Annotation
        from .services.annotations import annotation_deleted

        pg_times.install()
        pg_statement_cache.install()
        # However an answer is deleted (the admin, a cascade), its item's "filled" mark follows.
        post_delete.connect(annotation_deleted, sender=Annotation,
                            dispatch_uid="annotation_filled_mark")
