// Split-and-rephrase: rows of simple sentences (at least two). Live checks: each a sentence,
// none a copy of the input, and a meter of the input's content words covered.

import { limitLength } from "./fields.js";
import { checkSplit, splitCoverage } from "./livechecks.js";

const MIN_ROWS = 2;

export function mount(section, item, ctx) {
  const rowsBox = section.querySelector(".simple-rows");
  const addButton = section.querySelector(".add-row");
  const meter = section.querySelector(".coverage-meter");
  const meterText = section.querySelector(".coverage-text");

  function inputs() {
    return [...rowsBox.querySelectorAll(".simple-sentence")];
  }

  function sentences() {
    return inputs().map((input) => input.value);
  }

  function renderCoverage() {
    const coverage = splitCoverage(ctx.rules, item.sentence, sentences().map((s) => s.trim()).filter(Boolean));
    meter.value = coverage;
    meterText.textContent = `${Math.floor(coverage * 100)}%`;
  }

  function refreshButtons() {
    const many = inputs().length > MIN_ROWS;
    rowsBox.querySelectorAll(".remove-row").forEach((button) => { button.disabled = ctx.disabled || !many; });
    addButton.disabled = ctx.disabled;
  }

  function addRow(value = "", focus = false) {
    const row = document.createElement("li");
    const input = document.createElement("input");
    input.type = "text";
    input.className = "simple-sentence";
    input.autocomplete = "off";
    input.value = value;
    input.disabled = ctx.disabled;
    input.setAttribute("aria-label", `Simple sentence ${inputs().length + 1}`);
    input.addEventListener("input", () => { renderCoverage(); ctx.changed(); });
    const remove = document.createElement("button");
    remove.type = "button";
    remove.className = "secondary remove-row";
    remove.textContent = "Remove";
    remove.addEventListener("click", () => {
      if (inputs().length <= MIN_ROWS) return;
      row.remove();
      refreshButtons();
      renderCoverage();
      ctx.changed();
    });
    row.append(input, remove);
    rowsBox.append(row);
    limitLength(input, ctx);
    refreshButtons();
    if (focus) input.focus();
  }

  function setRows(values) {
    rowsBox.replaceChildren();
    const padded = [...values];
    while (padded.length < MIN_ROWS) padded.push("");
    padded.forEach((value) => addRow(value));
    renderCoverage();
  }

  addButton.addEventListener("click", () => { addRow("", true); ctx.changed(); });
  setRows([]);

  return {
    state: () => ({ sentences: sentences() }),
    restore(state) { setRows(state.sentences || []); },
    payload: () => ({ simple_sentences: sentences().map((s) => s.trim()).filter(Boolean) }),
    error: () => (sentences().filter((s) => s.trim()).length < MIN_ROWS ? "Write at least two simple sentences." : null),
    warnings: () => (sentences().some((s) => s.trim()) ? checkSplit(ctx.rules, item.sentence, sentences()) : []),
    disable() {
      ctx.disabled = true;
      inputs().forEach((input) => { input.readOnly = true; });
      refreshButtons();
    },
    onSaved() {},
    onKey(event) {
      if (event.altKey && (event.key === "n" || event.key === "N" || event.code === "KeyN")) { addRow("", true); ctx.changed(); return true; }
      return false;
    },
  };
}

// The widget state of a stored answer (an edit page shows the annotator's answer to change).
export function stateFromPayload(payload) {
  return { sentences: payload.simple_sentences || [] };
}
