"""The browser's live checks (livechecks.js) give the same warning codes and messages as
qc/livechecks.py on the shared test vectors, read from the same rule file the page embeds."""

import json

import pytest

from qc import livechecks
from tests.browser.conftest import login_browser, open_task
from tests.factories import sluice_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Extra vectors beyond the shared file: messages with placeholders and the context_words rule.
EXTRA = [
    {"kind": "rewrite", "input": {"question": "Did he form any other band?",
                                  "rewrite": "Did he form that other band?",
                                  "context_words": ["Frank Zappa", "Mothers"]}},
    {"kind": "sluice", "input": {"q1": "Who sang?", "a1": "Bob.", "q2": "When?", "answer": ""}},
    {"kind": "split_rephrase", "input": {"complex_sentence": "Alan Bean was a pilot.",
                                         "simple_sentences": ["alan", "Bean flew", ""]}},
    # The tokenizer: any script, NFC, typographic apostrophes, possessives and contractions.
    {"kind": "rewrite", "input": {"question": "What were his abilities?",
                                  "rewrite": "What were Pinhead\u2019s abilities in Zürich?",
                                  "context_words": ["Pinhead", "Zu\u0308rich", "abilities"]}},
    {"kind": "rewrite", "input": {"question": "Are they new?",
                                  "rewrite": "Aren't they're and it's Björk's café's?",
                                  "context_words": ["Björk"]}},
    {"kind": "sluice", "input": {"q1": "Где он родился?", "a1": "В Москве.", "q2": "Когда?",
                                 "answer": "Когда он родился?"}},
]


def test_browser_and_server_agree_on_every_vector(page, live_server, annotator_user):
    cases = json.loads(livechecks.CASES_PATH.read_text(encoding="utf-8"))["cases"] + EXTRA
    project = sluice_project()
    login_browser(page, live_server, annotator_user)
    open_task(page, f"{live_server.url}/annotate/{project.slug}/")
    browser_results = page.evaluate(
        """async (cases) => {
            const lc = await import('/static/frontend/annotate/livechecks.js');
            const rules = JSON.parse(document.getElementById('task-config').textContent).rules;
            return cases.map((c) => lc.check(rules, c.kind, c.input));
        }""",
        cases,
    )
    for case, in_browser in zip(cases, browser_results, strict=True):
        on_server = [{"code": w.code, "message": w.message}
                     for w in livechecks.check(case["kind"], case["input"])]
        assert in_browser == on_server, case
        if "expected" in case:
            assert [w["code"] for w in in_browser] == case["expected"], case
