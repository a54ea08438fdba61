"""The login pages with the failed-login lockout (``annotation.login_throttle``).

The backend already refuses a locked attempt without checking the password; these forms check
first so the page can say why (instead of "wrong password"), and the site's login page answers a
locked attempt with 429 Too Many Requests.
"""

from __future__ import annotations

from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError

from annotation import login_throttle


class _LockoutCheck:
    def clean(self):
        username = self.cleaned_data.get("username")
        if username is not None and not login_throttle.attempt_allowed(self.request, username):
            raise ValidationError(login_throttle.locked_message(), code="locked")
        return super().clean()


class ThrottledAuthenticationForm(_LockoutCheck, AuthenticationForm):
    pass


class ThrottledAdminAuthenticationForm(_LockoutCheck, AdminAuthenticationForm):
    pass


class LoginView(auth_views.LoginView):
    form_class = ThrottledAuthenticationForm

    def form_invalid(self, form):
        response = super().form_invalid(form)
        if form.has_error(NON_FIELD_ERRORS, "locked"):
            response.status_code = 429
        return response
