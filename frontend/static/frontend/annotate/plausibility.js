// Plausibility rating: a 1-5 slider with no default value, so every rating is a decision.
// Keyboard: the slider (the item's one control, focused on load and after Next) takes arrows,
// Home/End and 1-5; the digits also work page-wide. The stops are not controls of their own
// (a slider holds nothing interactive): a click or tap on one rates and focuses the slider.

const LABELS = { 1: "very implausible", 2: "implausible", 3: "neutral", 4: "plausible", 5: "very plausible" };

export function mount(section, item, ctx) {
  const slider = section.querySelector(".rating-slider");
  const stops = [...section.querySelectorAll(".rating-stop")];
  const valueText = section.querySelector(".rating-value");
  let rating = null;

  function render() {
    stops.forEach((stop) => {
      const value = Number(stop.dataset.value);
      stop.classList.toggle("chosen", value === rating);
    });
    slider.classList.toggle("unset", rating === null);
    if (rating === null) {
      slider.removeAttribute("aria-valuenow");
      slider.setAttribute("aria-valuetext", "not rated yet");
      valueText.textContent = "Not rated yet.";
    } else {
      slider.setAttribute("aria-valuenow", String(rating));
      slider.setAttribute("aria-valuetext", `${rating}, ${LABELS[rating]}`);
      valueText.textContent = `Your rating: ${rating} (${LABELS[rating]}).`;
    }
    slider.setAttribute("aria-disabled", String(ctx.disabled));
    slider.tabIndex = ctx.disabled ? -1 : 0;
  }

  function set(value) {
    if (ctx.disabled) return;
    rating = Math.min(5, Math.max(1, value));
    render();
    ctx.changed();
  }

  stops.forEach((stop) => stop.addEventListener("click", () => { set(Number(stop.dataset.value)); slider.focus(); }));
  slider.addEventListener("keydown", (event) => {
    const moves = { ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1 };
    if (event.key in moves) {
      // From "not rated" the first arrow press lands on the middle, a visible decision.
      set(rating === null ? 3 : rating + moves[event.key]);
    } else if (event.key === "Home") set(1);
    else if (event.key === "End") set(5);
    else if (/^[1-5]$/.test(event.key) && !event.ctrlKey && !event.metaKey && !event.altKey) {
      set(Number(event.key)); // this slider's item, whichever item the page-wide keys rate
    } else return;
    event.preventDefault();
    event.stopPropagation();
  });
  render();

  return {
    state: () => ({ rating }),
    restore(state) { rating = state.rating ?? null; render(); },
    payload: () => ({ rating }),
    error: () => (rating === null ? "Choose a rating from 1 to 5." : null),
    warnings: () => [],
    disable() { ctx.disabled = true; render(); },
    onSaved() {},
    onKey(event, typing) {
      if (typing || event.ctrlKey || event.metaKey || event.altKey) return false;
      if (/^[1-5]$/.test(event.key)) { set(Number(event.key)); return true; }
      return false;
    },
  };
}

// The widget state of a stored answer (an edit page shows the annotator's answer to change).
export function stateFromPayload(payload) {
  return { rating: payload.rating ?? null };
}
