from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularSwaggerView

from annotation.api.schema import CachedSchemaView
from frontend.login import LoginView, ThrottledAdminAuthenticationForm

# The admin's login page counts failed logins like the site's (annotation/login_throttle.py).
admin.site.login_form = ThrottledAdminAuthenticationForm

# Server errors, and a 503 while the database is unreachable, rendered without the database.
handler500 = "frontend.errors.server_error"
# JSON for the API (an id that matches no URL pattern), Django's pages elsewhere.
handler404 = "frontend.errors.page_not_found"
handler400 = "frontend.errors.bad_request"

urlpatterns = [
    path("admin/", admin.site.urls),
    # Browsers ask every site for /favicon.ico, pages or not (the admin, the API, a JSON answer).
    path("favicon.ico", RedirectView.as_view(url=static("frontend/favicon.svg"), permanent=True)),
    path("accounts/login/", LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("invite/", include("frontend.invites")),
    path("api/", include("annotation.api.batches")),
    path("api/", include("annotation.api.decisions")),
    path("api/", include("annotation.api.console")),
    path("api/", include("annotation.api.counts")),
    path("api/", include("annotation.api.projects")),
    path("api/", include("annotation.api.jobs")),
    path("api/", include("annotation.api.adjudication")),
    path("api/schema/", CachedSchemaView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("staff/review/", include("frontend.review_urls")),
    path("staff/batches/", include("frontend.staff_batches")),
    path("staff/jobs/", include("frontend.staff_jobs")),
    path("staff/", include("frontend.staff.urls")),
    path("staff/", include("frontend.staff.urls_decisions")),
    path("", include("frontend.urls")),
]
