// CANARD rewriting: one question at a time; the answer is revealed only once the rewrite is
// saved (the server sends it back). Live checks: too short, pronouns left, ambiguous words,
// other/another/else without the allowed phrases, words not in the conversation.

import { limitLength, singleLine } from "./fields.js";
import { checkRewrite } from "./livechecks.js";

export function mount(section, item, ctx) {
  // Questions and answers of this page's earlier turns, revealed as they are saved (an MTurk
  // HIT holds a whole conversation); the server counts them as conversation words too. Kept
  // per page (ctx.shared), so a local page's next item, perhaps of another conversation, starts
  // from the words its own page data lists.
  ctx.shared.revealedTurns ??= [];
  const { revealedTurns } = ctx.shared;
  const textarea = section.querySelector(".rewrite-text");
  const revealed = section.querySelector(".revealed-answer");
  textarea.disabled = ctx.disabled;
  singleLine(textarea, ctx);
  const renderCount = limitLength(textarea, ctx);

  return {
    state: () => ({ rewrite: textarea.value }),
    restore(state) { textarea.value = state.rewrite || ""; renderCount(); },
    payload: () => ({ rewrite: textarea.value.trim() }),
    error: () => (textarea.value.trim() ? null : "Write the rewritten question."),
    warnings: () => (textarea.value.trim()
      ? checkRewrite(ctx.rules, item.question, textarea.value,
        [...item.context_words, ...revealedTurns]) : []),
    disable() { textarea.readOnly = true; if (ctx.disabled) textarea.disabled = true; },
    onSaved(response) {
      if (response && response.reveal && "answer" in response.reveal) {
        revealed.querySelector(".answer-text").textContent = response.reveal.answer;
        revealed.hidden = false;
        revealedTurns.push(item.question, response.reveal.answer);
      }
    },
  };
}

// The widget state of a stored answer (an edit page shows the annotator's answer to change).
export function stateFromPayload(payload) {
  return { rewrite: payload.rewrite || "" };
}
