"""The app's URLs, and after them the ceiling's: a trivial authenticated view that writes one
row, under the same middleware (sessions, CSRF, authentication with the Worker, CSP) as the
submit it is compared with."""

from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import JsonResponse
from django.urls import path
from django.views.decorators.http import require_POST

from annotation.urls import handler500  # noqa: F401 — the app's, as in production
from annotation.urls import urlpatterns as app_urlpatterns

from .models import CeilingRow


@login_required
@require_POST
def ceiling(request):
    with transaction.atomic():
        row = CeilingRow.objects.create(user_id=request.user.pk)
    return JsonResponse({"status": "saved", "id": row.pk})


urlpatterns = [*app_urlpatterns, path("bench/ceiling/", ceiling)]
