"""Project instructions in Markdown, rendered safely.

markdown-it-py renders CommonMark with raw HTML switched off (a ``<script>`` in the text comes
out as text) and refuses ``javascript:``/``vbscript:``/``data:`` links itself; nh3 (ammonia)
then keeps only an allow-list of tags and attributes and adds ``rel="noopener noreferrer"``
to links, so even a renderer bug could not put markup a researcher did not mean on an
annotator's page.
"""

from __future__ import annotations

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

ALLOWED_TAGS = {"p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "code",
                "pre", "blockquote", "ul", "ol", "li", "a", "table", "thead", "tbody", "tr",
                "th", "td", "del"}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}

_renderer = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table") \
    .enable("strikethrough")


def render_markdown(text: str) -> SafeString:
    """``text`` (Markdown written by a researcher) as HTML safe to put on any page."""
    html = _renderer.render(text or "")
    return mark_safe(nh3.clean(html, tags=ALLOWED_TAGS, attributes=ALLOWED_ATTRIBUTES,  # noqa: S308
                               url_schemes={"http", "https", "mailto"},
                               link_rel="noopener noreferrer"))
