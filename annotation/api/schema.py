"""``/api/schema/``: drf-spectacular's schema view, rendered once per process and format.

Generating the schema costs ~0.6 s of CPU and rendering it as YAML ~0.1 s, and the view is
public: four clients fetching it in a loop took most of the CPU from annotators. The schema
depends only on the code (it is generated ``public``, the same for every caller), so each
process keeps the rendered bytes per media type (YAML or JSON, chosen by ``Accept`` or
``?format=``). The API has no versions or translations, so ``?version=`` and ``?lang=`` change
nothing and are not part of the key (which would let a caller grow the cache at will).
"""

from __future__ import annotations

import threading

from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SCHEMA_KWARGS, SpectacularAPIView

_rendered: dict[str, tuple[bytes, str]] = {}
_lock = threading.Lock()


class CachedSchemaView(SpectacularAPIView):
    @extend_schema(**SCHEMA_KWARGS)  # described as drf-spectacular describes its own view
    def get(self, request, *args, **kwargs):
        # The renderer's own media type: the client's Accept may add parameters at will.
        media_type = request.accepted_renderer.media_type
        cached = _rendered.get(media_type)
        if cached is None:
            with _lock:
                cached = _rendered.get(media_type)
                if cached is None:
                    cached = self._render(request)
                    _rendered[media_type] = cached
        body, disposition = cached
        response = HttpResponse(body, content_type=media_type)
        response["Content-Disposition"] = disposition
        return response

    def _render(self, request) -> tuple[bytes, str]:
        response = self._get_schema_response(request)
        renderer = request.accepted_renderer
        body = renderer.render(response.data, renderer.media_type, self.get_renderer_context())
        return body, response["Content-Disposition"]
