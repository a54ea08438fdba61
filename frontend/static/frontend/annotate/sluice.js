// Sluice resolution: write the full question Q2 stands for, or skip when the context is not
// enough. Live checks: starts with Q2's wh-word, more than one word, not a copy of Q1.

import { limitLength, singleLine } from "./fields.js";
import { checkSluice } from "./livechecks.js";

export function mount(section, item, ctx) {
  const input = section.querySelector(".full-question");
  const skipButton = section.querySelector(".skip-item");
  let skipped = false;
  input.disabled = ctx.disabled;
  skipButton.disabled = ctx.disabled;
  singleLine(input, ctx, () => { skipped = false; });
  const renderCount = limitLength(input, ctx);

  function skip() {
    if (ctx.disabled) return;
    skipped = true;
    ctx.requestSave();
  }
  skipButton.addEventListener("click", skip);

  return {
    state: () => ({ text: input.value }),
    restore(state) { input.value = state.text || ""; renderCount(); },
    payload: () => ({ full_question: skipped ? "" : input.value.trim(), skipped }),
    error: () => (skipped || input.value.trim() ? null : "Write the full question, or press Skip."),
    warnings: () => (skipped || !input.value.trim()
      ? [] : checkSluice(ctx.rules, item.q1, item.a1, item.q2, input.value)),
    disable() { input.readOnly = true; skipButton.disabled = true; if (ctx.disabled) input.disabled = true; },
    onSaved() { if (skipped) { input.value = "(skipped)"; renderCount(); } },
    onKey(event) {
      if (event.altKey && (event.key === "s" || event.key === "S" || event.code === "KeyS")) { skip(); return true; }
      return false;
    },
  };
}

// The widget state of a stored answer (an edit page shows the annotator's answer to change); a
// stored Skip shows an empty box (Skip again keeps it skipped).
export function stateFromPayload(payload) {
  return { text: payload.skipped ? "" : payload.full_question || "" };
}
