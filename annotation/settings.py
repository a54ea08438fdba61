"""Settings, all from the environment (see .env.example).

Defaults give the embedded setup: a SQLite file, Celery tasks run inline, the local annotator
provider. ``DATABASE_URL`` switches to PostgreSQL, ``REDIS_URL`` to a real Celery broker.
"""

import os
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
from csp.constants import NONCE, NONE, SELF
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [part.strip() for part in os.environ.get(name, default).split(",") if part.strip()]


DEBUG = env_bool("DJANGO_DEBUG", False)
# The key signs sessions, CSRF and MTurk task tokens and salts the worker pseudonyms of exports,
# so a published key would let anyone forge tokens and re-identify workers. Without
# DJANGO_SECRET_KEY the app refuses to start, unless UNPACK_ALLOW_DEV_KEY=true says "this is a
# throwaway demo" (`manage.py demo` and the test settings say so themselves). DJANGO_DEBUG=true
# does not: a debugging server is often one someone else can reach, and on the public key its
# pseudonyms could be reversed.
DEVELOPMENT_SECRET_KEY = "unpack-insecure-development-key"  # noqa: S105 — public on purpose
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    if not env_bool("UNPACK_ALLOW_DEV_KEY", False):
        raise ImproperlyConfigured(
            "DJANGO_SECRET_KEY is not set"
            + (" (DJANGO_DEBUG=true does not replace it)" if DEBUG else "")
            + ". Set it to a long random value, e.g. "
            "`python3 -c 'import secrets; print(secrets.token_urlsafe(50))'` (keep it: worker "
            "pseudonyms in exports depend on it), or set UNPACK_ALLOW_DEV_KEY=true to use the "
            "public development key on a machine nobody else reaches. See README.md, "
            "Configuration.")
    SECRET_KEY = DEVELOPMENT_SECRET_KEY
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS")
# Task pages' fetches get a JSON answer they can act on (log in again, resubmit), not a page.
CSRF_FAILURE_VIEW = "frontend.annotate_views.csrf_failure"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "csp",
    # Before the API apps, so that its copies of Swagger UI's page and the browsable API's
    # (with the CSP nonce on their inline blocks) override drf-spectacular's and DRF's own.
    "frontend",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "annotation.apps.AnnotationConfig",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # The Content-Security-Policy header (CONTENT_SECURITY_POLICY below) on every response.
    "annotation.csp.UnpackCSPMiddleware",
    # Login pages of a locked-out address: a small 429 before sessions and templates, and
    # before the request guard below parses a form or resolves the URL (it reads no body, so
    # it needs no size check first): a guessing script left running costs a cache read.
    "annotation.login_throttle.LoginLockoutMiddleware",
    # Bodies above UNPACK_MAX_REQUEST_BYTES (413) and NUL/surrogates in paths, query parameters
    # and form fields (400) are refused before anything parses them (annotation/request_guard.py).
    "annotation.request_guard.BodySizeLimitMiddleware",
    "annotation.request_guard.UnstorableTextMiddleware",
    # Static files (the task pages' JS and CSS) served by the app itself under gunicorn too.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "annotation.urls"
WSGI_APPLICATION = "annotation.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.config(
        env="DATABASE_URL",
        default=f"sqlite:///{os.environ.get('UNPACK_SQLITE_PATH', BASE_DIR / 'unpack.sqlite3')}",
        conn_max_age=int(os.environ.get("DATABASE_CONN_MAX_AGE", "60")),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Parameters bound by the server, so that statements run often (every annotator request
    # runs the same few) are prepared once per connection after DATABASE_PREPARE_THRESHOLD
    # runs and not planned again: planning was most of PostgreSQL's CPU on the submit path.
    # "off" (e.g. behind a PgBouncer in transaction mode, which cannot keep prepared
    # statements) binds on the server without preparing.
    _prepare = os.environ.get("DATABASE_PREPARE_THRESHOLD", "5").strip().lower()
    DATABASES["default"].setdefault("OPTIONS", {}).update({
        "server_side_binding": True,
        "prepare_threshold": None if _prepare in ("off", "none", "") else int(_prepare),
    })
    # No JIT compilation on the app's connections: PostgreSQL compiles a statement whose
    # estimated cost passes jit_above_cost (100,000 by default), and the next-item choice
    # passes it on a project of 1,000,000 items: 430 ms of compiling for a statement that runs
    # in 0.3 ms (bench/bench_next_item.py). Sent as a connection option; DATABASE_JIT=server
    # leaves the server's setting (e.g. behind a PgBouncer that refuses startup options: then
    # `ALTER DATABASE unpack SET jit = off` there).
    if os.environ.get("DATABASE_JIT", "off").strip().lower() == "off":
        _options = DATABASES["default"]["OPTIONS"].get("options", "")
        DATABASES["default"]["OPTIONS"]["options"] = f"{_options} -c jit=off".strip()
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets readers proceed while one writer commits; the timeout absorbs short write bursts
    # from concurrent annotators instead of failing with "database is locked".
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "timeout": 20,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Django's standard set: not too like the username or e-mail, at least 8 characters, not a
# common password, not all digits (password forms and `createsuperuser`).
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
# Only for `collectstatic` in a deployment that wants one; unset, files are served from the apps.
STATIC_ROOT = os.environ.get("DJANGO_STATIC_ROOT") or None
# Serve straight from the apps' static folders, so no collectstatic step is needed to run;
# a deployment that runs collectstatic gets STATIC_ROOT served the same way.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

# Django's own account check; loading a user also loads their Worker (one query instead of
# two on every annotator request).
AUTHENTICATION_BACKENDS = ["annotation.auth.WorkerLoadingModelBackend"]

# Failed logins (login pages, API authentication) per client address and per (username,
# address): this many within the window lock that out until it ends, without checking
# passwords (annotation/login_throttle.py).
UNPACK_LOGIN_FAILURE_LIMIT = int(os.environ.get("UNPACK_LOGIN_FAILURE_LIMIT", "10"))
UNPACK_LOGIN_LOCKOUT_SECONDS = int(os.environ.get("UNPACK_LOGIN_LOCKOUT_SECONDS", "900"))
# Under gunicorn.conf.py's worker, a login request from a locked address is answered (the 429)
# this many seconds late, its connection held on the worker's poller, not in a thread: a
# guessing script that waits for each answer then sends about one request a second per
# connection instead of hundreds (annotation/gunicorn_worker.py). 0: answered at once.
UNPACK_LOGIN_LOCKED_HOLD_SECONDS = max(0.0, float(
    os.environ.get("UNPACK_LOGIN_LOCKED_HOLD_SECONDS", "1")))
# Failures for one username from every address that lock it for browsers that never logged in
# as it (a browser that did keeps logging in: annotation/login_throttle.py).
UNPACK_LOGIN_USERNAME_FAILURE_LIMIT = int(
    os.environ.get("UNPACK_LOGIN_USERNAME_FAILURE_LIMIT", "50"))

# Anonymous crowd saves (MTurk, Prolific submit endpoints) per window, before any row is
# written (annotation/crowd_throttle.py).
UNPACK_CROWD_WINDOW_SECONDS = int(os.environ.get("UNPACK_CROWD_WINDOW_SECONDS", "60"))
UNPACK_CROWD_SAVES_PER_ADDRESS = int(os.environ.get("UNPACK_CROWD_SAVES_PER_ADDRESS", "120"))
UNPACK_CROWD_SESSIONS_PER_ADDRESS = int(
    os.environ.get("UNPACK_CROWD_SESSIONS_PER_ADDRESS", "10"))
UNPACK_CROWD_SESSIONS_PER_HIT = int(os.environ.get("UNPACK_CROWD_SESSIONS_PER_HIT", "30"))

# Form fields per request: the API takes forms too, and a bulk approval may name 1,000
# assignments (and a message), which Django's default of 1,000 fields refused.
DATA_UPLOAD_MAX_NUMBER_FIELDS = 2000

# The largest request body any endpoint reads (annotation/request_guard.py); Django's own
# DATA_UPLOAD_MAX_MEMORY_SIZE (the same 2.5 MB) covers only form parsing.
UNPACK_MAX_REQUEST_BYTES = int(os.environ.get("UNPACK_MAX_REQUEST_BYTES", str(2_621_440)))

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

# No page of ours may be framed, except the ExternalQuestion pages MTurk shows in its iframe
# (those views are exempt one by one, with @xframe_options_exempt).
X_FRAME_OPTIONS = os.environ.get("DJANGO_X_FRAME_OPTIONS", "DENY")

# Content-Security-Policy (django-csp): the browser runs only our own static scripts and styles,
# so markup that slipped into a page (dataset text, a worker's answer: escaped everywhere, this
# is the second line) cannot run a script, load one from elsewhere, or post a form off-site.
# - script-src / style-src: 'self'; no 'unsafe-inline', no 'unsafe-eval'. Our pages and the
#   admin have no inline script, style block or style attribute (the task pages get their data
#   in json_script blocks, which are not executed). NONCE adds a fresh 'nonce-…' only to a
#   response whose template asked for request.csp_nonce, which two third-party pages do, for
#   their inline blocks: Swagger UI at /api/docs/ (start-up script and style block) and DRF's
#   browsable API (syntax-highlighting styles); see frontend/templates/drf_spectacular/ and
#   frontend/templates/rest_framework/.
# - img-src adds data: for the icons Swagger UI's stylesheet embeds.
# - form-action 'self'; the MTurk task page alone adds UNPACK_MTURK_SUBMIT_ORIGINS, where it
#   posts the finished assignment (annotation/csp.py reads them per request).
# - No frame-ancestors: X_FRAME_OPTIONS above already forbids framing, and the MTurk task pages
#   must stay framable by MTurk's worker sites (they are exempt from X-Frame-Options); a
#   frame-ancestors would override that exemption.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, NONCE],
        "img-src": [SELF, "data:"],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
    },
}

# Served over https (directly, or behind a proxy): UNPACK_HTTPS=true makes the session and CSRF
# cookies https-only and redirects http to https. HSTS is a separate, deliberate step (browsers
# remember it): DJANGO_SECURE_HSTS_SECONDS=31536000 once https works everywhere.
# DJANGO_SECURE_PROXY_SSL_HEADER=true trusts the proxy's X-Forwarded-Proto: set it only behind a
# proxy that always sets (or strips) that header.
UNPACK_HTTPS = env_bool("UNPACK_HTTPS", False)
SESSION_COOKIE_SECURE = UNPACK_HTTPS
CSRF_COOKIE_SECURE = UNPACK_HTTPS
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", UNPACK_HTTPS)
SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_SECURE_HSTS_SECONDS", "0"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_SECURE_HSTS_PRELOAD", False)
if env_bool("DJANGO_SECURE_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_HTTPONLY = True

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # The browser's session; HTTP Basic (a password on every request) only when asked for with
    # UNPACK_API_BASIC_AUTH=true. Either way password checks are throttled (login_throttle).
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        *(["rest_framework.authentication.BasicAuthentication"]
          if env_bool("UNPACK_API_BASIC_AUTH", False) else []),
    ],
    "DEFAULT_PAGINATION_CLASS": "annotation.api.pagination.BoundedLimitOffsetPagination",
    # JSON bodies are checked for what the database cannot keep (annotation/jsonbody.py).
    "DEFAULT_PARSER_CLASSES": [
        "annotation.jsonbody.UntrustedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "PAGE_SIZE": 100,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Unpack API",
    "DESCRIPTION": "Projects, items and annotations of Unpack's crowdsourcing pipelines.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI's files are served from our own static files, not a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # One name for the train/dev/test choices (items, launch options); the schema is checked
    # with `manage.py spectacular --validate --fail-on-warn` in the tests.
    "ENUM_NAME_OVERRIDES": {"SplitEnum": "annotation.models.Split",
                            "ProjectStatusEnum": "annotation.models.Project.Status",
                            "BatchStatusEnum": "annotation.models.Batch.Status"},
    # Refusals (400/401/403/404/413/415) and non-blank required text documented
    # (annotation/api/schema_hooks.py).
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums",
                             "annotation.api.schema_hooks.document_refusals"],
}

# Celery: a real broker when REDIS_URL is set, otherwise tasks run inline in the caller.
REDIS_URL = os.environ.get("REDIS_URL", "")

# A cache shared by every app process (Redis; UNPACK_CACHE_URL, by default REDIS_URL's server).
# Sessions are then read from it and written through to the database ("cached_db"): the
# annotator hot path skips a database query per request, and a logout or a password change
# still ends the session everywhere, since every process reads the same cache. Without a
# shared cache (the embedded default) sessions stay in the database: a per-process cache would
# let a logged-out session live on in the other processes.
UNPACK_CACHE_URL = os.environ.get("UNPACK_CACHE_URL", REDIS_URL)
if UNPACK_CACHE_URL:
    CACHES = {"default": {"BACKEND": "django_redis.cache.RedisCache",
                          "LOCATION": UNPACK_CACHE_URL, "KEY_PREFIX": "unpack"}}
    SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
CELERY_BROKER_URL = REDIS_URL or "memory://localhost/"
CELERY_RESULT_BACKEND = REDIS_URL or None
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A job whose worker died (SIGKILL, OOM, a lost host) is delivered again by Redis after the
# visibility timeout. It must exceed the longest a job may wait unacknowledged: a retry held
# for its countdown (up to 600 s, tasks.ProviderJob.retry_backoff_max) plus the job's run
# time, or Redis would deliver the waiting job a second time. Recovery does not wait for it:
# resume_unfinished_work re-sends unfinished publishing after UNPACK_RESUME_QUIET_SECONDS.
UNPACK_JOB_VISIBILITY_TIMEOUT = int(os.environ.get("UNPACK_JOB_VISIBILITY_TIMEOUT", "1200"))
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": UNPACK_JOB_VISIBILITY_TIMEOUT}
# Queueing a job with the broker down fails within about a second (not kombu's default
# retries): the launch checks the broker first, and the periodic resume job re-sends the rest.
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0.2,
                                    "interval_step": 0.2, "interval_max": 0.5}
CELERY_BROKER_CONNECTION_TIMEOUT = 2.0
# How long a publishing batch (or an unsynced decision, an unpaid bonus) may sit untouched
# before the periodic job sends its job again; a running publish touches its batch per HIT.
UNPACK_RESUME_QUIET_SECONDS = int(os.environ.get("UNPACK_RESUME_QUIET_SECONDS", "120"))
CELERY_BEAT_SCHEDULE = {
    "collect-open-batches": {
        "task": "annotation.tasks.collect_open_batches",
        "schedule": float(os.environ.get("UNPACK_COLLECT_EVERY_SECONDS", "300")),
    },
    "resume-unfinished-work": {
        "task": "annotation.tasks.resume_unfinished_work",
        "schedule": float(os.environ.get("UNPACK_RESUME_EVERY_SECONDS", "60")),
    },
    # PostgreSQL: ANALYZE the hot tables that grew by UNPACK_ANALYZE_GROWTH since their last
    # analyze (annotation/services/statistics.py); one cheap read of the table counters else.
    "refresh-planner-statistics": {
        "task": "annotation.tasks.refresh_planner_statistics",
        "schedule": float(os.environ.get("UNPACK_ANALYZE_EVERY_SECONDS", "60")),
    },
}
UNPACK_ANALYZE_GROWTH = float(os.environ.get("UNPACK_ANALYZE_GROWTH", "0.2"))

# Every provider call (MTurk, Prolific) that is throttled or meets a transient fault is tried
# again where it failed, in every mode (inline, worker, command): exponential backoff from
# BASE_DELAY up to MAX_DELAY per wait, never sooner than the provider's Retry-After, at most
# MAX_ATTEMPTS attempts and MAX_TOTAL_WAIT seconds of waiting per call (providers/retry.py).
UNPACK_PROVIDER_RETRY_MAX_ATTEMPTS = int(os.environ.get("UNPACK_PROVIDER_RETRY_MAX_ATTEMPTS", "8"))
UNPACK_PROVIDER_RETRY_BASE_DELAY_SECONDS = float(
    os.environ.get("UNPACK_PROVIDER_RETRY_BASE_DELAY_SECONDS", "0.5"))
UNPACK_PROVIDER_RETRY_MAX_DELAY_SECONDS = float(
    os.environ.get("UNPACK_PROVIDER_RETRY_MAX_DELAY_SECONDS", "20"))
UNPACK_PROVIDER_RETRY_MAX_TOTAL_WAIT_SECONDS = float(
    os.environ.get("UNPACK_PROVIDER_RETRY_MAX_TOTAL_WAIT_SECONDS", "120"))
# A bonus whose pay reply was lost is settled from the provider's list of payments; Prolific
# pays asynchronously ("in the following minutes"), so a payment it does not list yet is
# checked again, and a human is asked only after this long (services/decisions.py).
UNPACK_BONUS_SETTLE_SECONDS = int(os.environ.get("UNPACK_BONUS_SETTLE_SECONDS", "900"))

# MTurk: the sandbox unless MTURK_LIVE is set; MTURK_ENDPOINT_URL overrides the endpoint
# (e.g. the local stateful stand-in, python -m annotation.fake_mturk). Credentials come from
# the standard AWS environment variables through boto3's own chain.
MTURK_ENDPOINT_URL = os.environ.get("MTURK_ENDPOINT_URL") or None
MTURK_LIVE = env_bool("MTURK_LIVE", False)
# Where an ExternalQuestion page may post the finished assignment (turkSubmitTo): MTurk's own
# sites, plus the origin of MTURK_ENDPOINT_URL so a local rehearsal against the stand-in works.
UNPACK_MTURK_SUBMIT_ORIGINS = tuple(
    env_list("UNPACK_MTURK_SUBMIT_ORIGINS",
             "https://www.mturk.com,https://workersandbox.mturk.com")
) + ((lambda parts: (f"{parts.scheme}://{parts.netloc}",))(urlsplit(MTURK_ENDPOINT_URL))
     if MTURK_ENDPOINT_URL else ())
# Prolific (docs/prolific.md): the API's base URL (Prolific's own unless set, e.g. the local
# stand-in, python -m annotation.fake_prolific), the API token, and the workspace that holds
# the blocklist participant group and the balance (and, optionally, a project for new studies).
PROLIFIC_API_URL = os.environ.get("PROLIFIC_API_URL") or "https://api.prolific.com"
PROLIFIC_API_TOKEN = os.environ.get("PROLIFIC_API_TOKEN", "")
PROLIFIC_WORKSPACE_ID = os.environ.get("PROLIFIC_WORKSPACE_ID", "")
PROLIFIC_PROJECT_ID = os.environ.get("PROLIFIC_PROJECT_ID", "")
PROLIFIC_BLOCKLIST_GROUP = os.environ.get("PROLIFIC_BLOCKLIST_GROUP", "Unpack blocklist")
# Where a participant's browser goes once every item of their session is saved; {code} becomes
# the study's completion code. A rehearsal points it at the stand-in's /submissions/complete.
PROLIFIC_COMPLETION_URL = (os.environ.get("PROLIFIC_COMPLETION_URL")
                           or "https://app.prolific.com/submissions/complete?cc={code}")
if "{code}" not in PROLIFIC_COMPLETION_URL:
    raise ImproperlyConfigured(
        "PROLIFIC_COMPLETION_URL must contain {code} (where the completion code goes), e.g. "
        "https://app.prolific.com/submissions/complete?cc={code}")
# Cost estimates: Prolific's service fee on rewards and bonuses (percent; its published
# academic rate), the VAT charged on that fee where it applies to the workspace (percent, 0
# when it does not), and the lowest reward per hour Prolific accepts, in the smallest unit of
# the account's currency ($8.00 / £6.00 an hour).
PROLIFIC_SERVICE_FEE_PERCENT = os.environ.get("PROLIFIC_SERVICE_FEE_PERCENT", "33.3")
PROLIFIC_VAT_PERCENT = os.environ.get("PROLIFIC_VAT_PERCENT", "0")
PROLIFIC_MIN_HOURLY_REWARD_CENTS = int(os.environ.get("PROLIFIC_MIN_HOURLY_REWARD_CENTS", "800"))
# The currency the Prolific workspace pays in (ISO 4217; a workspace is opened in GBP or USD):
# Prolific amounts are stored in its smallest unit and shown in it (annotation.money).
PROLIFIC_CURRENCY = os.environ.get("PROLIFIC_CURRENCY", "GBP").strip().upper()
if len(PROLIFIC_CURRENCY) != 3 or not PROLIFIC_CURRENCY.isalpha():
    raise ImproperlyConfigured(
        f"PROLIFIC_CURRENCY must be a three-letter currency code such as GBP or USD, "
        f"not {PROLIFIC_CURRENCY!r}")
# Where staff jobs (annotation.services.staff_jobs) write the files they offer for download
# (an export's zip), one folder per job; it must be shared by the web processes and the workers.
UNPACK_JOB_FILES_DIR = Path(os.environ.get("UNPACK_JOB_FILES_DIR", BASE_DIR / "var" / "jobs"))
# A running staff job reports progress at least this often; one silent for longer has died
# (its worker was killed) and a new start replaces it.
UNPACK_JOB_STALE_SECONDS = int(os.environ.get("UNPACK_JOB_STALE_SECONDS", "600"))
# Public base URL of this app, used in ExternalQuestion URLs sent to MTurk and Prolific study URLs.
UNPACK_PUBLIC_URL = os.environ.get("UNPACK_PUBLIC_URL", "http://127.0.0.1:8000")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("UNPACK_LOG_LEVEL", "WARNING")},
}

# --- Upload import (the console, frontend/staff/imports.py) --------------------------------
# Uploads are streamed to temporary files on disk (never read whole into memory); a request
# whose files add up to more than this many bytes is refused before anything is imported.
UNPACK_UPLOAD_MAX_BYTES = int(os.environ.get("UNPACK_UPLOAD_MAX_BYTES", str(200 * 1024 * 1024)))
UNPACK_UPLOAD_MAX_FILES = int(os.environ.get("UNPACK_UPLOAD_MAX_FILES", "10"))
# Where uploads wait between their preview and their import (removed once imported, or after
# UNPACK_UPLOAD_KEEP_SECONDS by the next upload).
UNPACK_UPLOAD_DIR = Path(os.environ.get("UNPACK_UPLOAD_DIR", "") or (
    Path(tempfile.gettempdir()) / "unpack-uploads"))
UNPACK_UPLOAD_KEEP_SECONDS = int(os.environ.get("UNPACK_UPLOAD_KEEP_SECONDS", "86400"))
# Uploads of at least this many bytes are imported by a staff job (the job's page shows its
# progress; inline when there is no broker); smaller ones in the request.
UNPACK_UPLOAD_JOB_MIN_BYTES = int(os.environ.get("UNPACK_UPLOAD_JOB_MIN_BYTES",
                                                 str(5 * 1024 * 1024)))

# --- Invites (the console's team page, annotation/services/invites.py) -------------------------
# How many days a single-use invite link stays valid.
UNPACK_INVITE_DAYS = int(os.environ.get("UNPACK_INVITE_DAYS", "7"))
