from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Unpack annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import pg_times

        pg_times.install()
