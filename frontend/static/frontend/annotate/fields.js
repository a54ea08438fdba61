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

/** A text box takes at most ``ctx.maxText`` characters (the server's limit for an answer's
 * text, annotation.payloads.MAX_TEXT, sent in the page config) and, unless ``counter`` is
 * false, shows how many it holds under it ("120 / 2000 characters"), so a long answer is
 * stopped while typed, never only when saved. Returns the function that redraws the counter
 * (call it after setting the value from a script, which fires no input event). */
export function limitLength(field, ctx, { counter = true } = {}) {
  if (!ctx.maxText) return () => {};
  field.maxLength = ctx.maxText;
  if (!counter) return () => {};
  const count = document.createElement("span");
  count.className = "char-count";
  const render = () => {
    const used = field.value.length;
    count.textContent = `${used} / ${ctx.maxText} characters`;
    count.classList.toggle("near-limit", used >= ctx.maxText * 0.9);
  };
  field.addEventListener("input", render);
  field.after(count);
  render();
  return render;
}
