// Behaviour shared by the kinds' text fields.

const LINE_BREAK = /[\r\n\u2028\u2029\u0085\v\f]/;
const LINE_BREAKS = /\s*[\r\n\u2028\u2029\u0085\v\f]+\s*/g;

/** A single-line answer (CANARD rewrite, sluice question): Enter saves it (Shift+Enter too:
 * there is no second line), and a pasted line break becomes a space, so no newline is ever
 * sent (the server normalises them as well, annotation.payloads.single_line). ``onInput`` runs
 * before the page is told of the change. */
export function singleLine(field, ctx, onInput = () => {}) {
  field.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    event.preventDefault();
    ctx.requestSave();
  });
  field.addEventListener("input", () => {
    if (LINE_BREAK.test(field.value)) field.value = field.value.replace(LINE_BREAKS, " ");
    onInput();
    ctx.changed();
  });
}
