// Decontextualization editor: step 1 FEASIBLE / INFEASIBLE, step 2 edits made only of delete,
// add and swap operations on spans of the original sentence. Offsets are Unicode code points
// (Python string indices), so the server re-applies exactly what the browser shows.

import { limitLength } from "./fields.js";

const TOKEN = /[\p{L}\p{N}][\p{L}\p{N}'\u2019-]*|[^\s\p{L}\p{N}]/gu;
const SPACE = /\s/;

const chars = (text) => Array.from(text);

/** Same algorithm as annotation.payloads.apply_operations (spans in the original sentence). */
export function applyOperations(sentence, operations) {
  const original = chars(sentence);
  const ordered = operations
    .map((op, index) => ({ op, index }))
    .sort((a, b) => a.op.start - b.op.start || a.op.end - b.op.end || a.index - b.index);
  let cursor = 0;
  let result = "";
  for (const { op } of ordered) {
    result += original.slice(cursor, op.start).join("") + op.text;
    cursor = op.end;
  }
  return result + original.slice(cursor).join("");
}

function overlaps(operations, candidate) {
  const spans = [...operations, candidate].map((op) => [op.start, op.end]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return spans.some((span, i) => i > 0 && span[0] < spans[i - 1][1]);
}

function tokenize(sentence) {
  const tokens = [];
  for (const match of sentence.matchAll(TOKEN)) {
    const start = chars(sentence.slice(0, match.index)).length;
    tokens.push({ text: match[0], start, end: start + chars(match[0]).length });
  }
  return tokens;
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export function mount(section, item, ctx) {
  const sentence = item.sentence;
  const original = chars(sentence);
  const tokens = tokenize(sentence);
  const paragraphsText = item.paragraphs.map((p) => p.text);
  const dmp = new window.diff_match_patch();
  const step2 = section.querySelector(".step2");
  const tokenBox = section.querySelector(".sentence-tokens");
  const textInput = section.querySelector(".op-text");
  limitLength(textInput, ctx, { counter: false });
  const sourceNote = section.querySelector(".op-source");
  const editType = section.querySelector(".edit-type");
  const opList = section.querySelector(".op-list");
  const resultBox = section.querySelector(".result-sentence");
  const diffBox = section.querySelector(".result-diff");
  const categoryBox = section.querySelector(".result-category");
  // The page, or (a later item of a multi-item page on the same page) the copy shown once with
  // an earlier item.
  const article = section.querySelector(".page-text")
    || document.querySelector(`.page-text[data-context="${item.context_key}"]`);
  // Several items sharing one shown page: the one whose editor was used last takes the text
  // selected on it (the item showing the page, until another is used).
  ctx.shared.decontextActive ??= {};
  const activeByPage = ctx.shared.decontextActive;
  const claim = () => { activeByPage[item.context_key] = section; };
  section.querySelector(".editor").addEventListener("pointerdown", claim);
  section.querySelector(".editor").addEventListener("focusin", claim);
  function takesSelection() {
    const active = activeByPage[item.context_key];
    return active && active.isConnected ? active === section : section.contains(article);
  }

  let feasible = null;
  let operations = [];
  let redoStack = [];
  let selection = null; // {from, to} token indices
  let gap = null; // insertion position (code points)
  let source = null; // {paragraph, start, end} of the text taken from the page
  let message = "";
  // The token box is one tab stop (roving tabindex): its stops are the gaps and the words in
  // sentence order (even = the gap before word stop/2, odd = a word); arrows move the focus and
  // choose what they land on, Shift+arrows extend the selection from its anchor word.
  let cursor = tokens.length ? 1 : 0;
  let anchor = null;

  function covered(index) {
    const token = tokens[index];
    return operations.find((op) => op.start < token.end && token.start < op.end);
  }

  function gapPosition(stop) {
    const index = stop / 2;
    return index < tokens.length ? tokens[index].start : tokens[tokens.length - 1].end;
  }

  function renderTokens() {
    const hadFocus = tokenBox.contains(document.activeElement);
    tokenBox.replaceChildren();
    const stopButton = (button, stop) => {
      button.type = "button";
      button.dataset.stop = String(stop);
      button.tabIndex = stop === cursor ? 0 : -1;
      tokenBox.append(button);
    };
    const gapButton = (stop) => {
      const position = gapPosition(stop);
      const button = element("button", "gap", "+");
      button.title = "Add here";
      button.setAttribute("aria-label", `Add at position ${position}`);
      button.dataset.position = String(position);
      if (gap === position) button.classList.add("chosen");
      button.addEventListener("click", () => {
        cursor = stop;
        message = "";
        gap = gap === position ? null : position;
        selection = null;
        render();
      });
      stopButton(button, stop);
    };
    tokens.forEach((token, index) => {
      gapButton(2 * index);
      const button = element("button", "tok", token.text);
      button.dataset.index = String(index);
      const op = covered(index);
      if (op) button.classList.add(`op-${op.op}`);
      if (selection && index >= selection.from && index <= selection.to) button.classList.add("selected");
      button.setAttribute("aria-pressed", String(button.classList.contains("selected")));
      button.addEventListener("click", () => {
        cursor = 2 * index + 1;
        message = "";
        gap = null;
        if (selection && selection.from === selection.to && selection.from === index) selection = null;
        else if (selection && selection.from === selection.to) {
          selection = { from: Math.min(selection.from, index), to: Math.max(selection.from, index) };
        } else selection = { from: index, to: index };
        anchor = selection ? index : null;
        render();
      });
      stopButton(button, 2 * index + 1);
    });
    if (tokens.length) gapButton(2 * tokens.length);
    if (hadFocus) tokenBox.querySelector(`[data-stop="${cursor}"]`)?.focus();
  }

  // Arrow keys in the token box: Left/Right (Home/End) move to the previous/next gap or word
  // and choose it; Shift+Left/Right extend the selection by one word from its anchor.
  function moveInTokens(event) {
    if (ctx.disabled || !tokens.length || event.altKey || event.ctrlKey || event.metaKey) return;
    const last = 2 * tokens.length;
    const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[event.key];
    const clamp = (index) => Math.min(Math.max(index, 0), tokens.length - 1);
    if (event.shiftKey && step) {
      let head;
      if (selection) {
        if (anchor === null || anchor < selection.from || anchor > selection.to) anchor = selection.from;
        head = clamp((selection.from === anchor ? selection.to : selection.from) + step);
      } else {
        // From a gap, Shift+arrow takes the word on that side; from a word, that word.
        anchor = clamp(cursor % 2 ? (cursor - 1) / 2 : cursor / 2 - (step < 0 ? 1 : 0));
        head = anchor;
      }
      selection = { from: Math.min(anchor, head), to: Math.max(anchor, head) };
      gap = null;
      cursor = 2 * head + 1;
    } else if (step || event.key === "Home" || event.key === "End") {
      cursor = event.key === "Home" ? 0 : event.key === "End" ? last
        : Math.min(Math.max(cursor + step, 0), last);
      if (cursor % 2) {
        anchor = (cursor - 1) / 2;
        selection = { from: anchor, to: anchor };
        gap = null;
      } else {
        selection = null;
        gap = gapPosition(cursor);
      }
    } else return;
    event.preventDefault();
    event.stopPropagation();
    message = "";
    render();
  }
  tokenBox.addEventListener("keydown", moveInTokens);

  // Where an addition goes, in words: before the word at its position, or at the end.
  function addPlace(position) {
    const next = tokens.find((token) => token.start >= position);
    return next ? `before \u201c${next.text}\u201d` : "at the end";
  }

  function describe(op) {
    const span = original.slice(op.start, op.end).join("").trim();
    const text = op.op === "delete" ? `delete \u201c${span}\u201d`
      : op.op === "add" ? `add \u201c${op.text.trim()}\u201d ${addPlace(op.start)}`
        : `swap \u201c${span}\u201d \u2192 \u201c${op.text}\u201d`;
    return text + (op.edit_type ? ` [${op.edit_type}]` : "") + (op.source ? " (from the page)" : "");
  }

  function renderOps() {
    opList.replaceChildren();
    operations.forEach((op, index) => {
      const line = element("li", `op op-${op.op}`);
      line.append(element("span", "op-text-described", describe(op)));
      const remove = element("button", "op-remove", "\u00d7");
      remove.type = "button";
      remove.title = "Remove this edit";
      remove.setAttribute("aria-label", `Remove: ${describe(op)}`);
      remove.disabled = ctx.disabled;
      // Spans are in the original sentence, so the other edits stay as they are.
      remove.addEventListener("click", () => removeOperation(index));
      line.append(" ", remove);
      opList.append(line);
    });
  }

  function removeOperation(index) {
    redoStack = [];
    operations = operations.filter((_, i) => i !== index);
    message = "";
    update();
  }

  function result() {
    return feasible === "infeasible" ? sentence : applyOperations(sentence, operations);
  }

  function category() {
    if (feasible === null) return null;
    if (feasible === "infeasible") return "IMPOSSIBLE";
    return operations.length ? "DONE" : "UNNECESSARY";
  }

  function renderPreview() {
    const text = result();
    resultBox.textContent = text;
    diffBox.replaceChildren();
    const diffs = dmp.diff_main(sentence, text);
    dmp.diff_cleanupSemantic(diffs);
    for (const [kind, chunk] of diffs) {
      const tag = kind === window.DIFF_INSERT ? "ins" : kind === window.DIFF_DELETE ? "del" : "span";
      diffBox.append(element(tag, "", chunk));
    }
    const labels = { IMPOSSIBLE: "Will be saved as INFEASIBLE.", UNNECESSARY: "Will be saved as FEASIBLE, no edit needed.", DONE: "Will be saved as FEASIBLE, edited." };
    categoryBox.textContent = category() ? labels[category()] : "Choose FEASIBLE or INFEASIBLE first.";
    categoryBox.dataset.category = category() || "";
  }

  function render() {
    step2.disabled = feasible !== "feasible" || ctx.disabled;
    renderTokens();
    renderOps();
    renderPreview();
    sourceNote.textContent = message || (source ? "from the page" : "");
  }

  function update() {
    render();
    ctx.changed();
  }

  function push(op) {
    if (overlaps(operations, op)) {
      message = "That overlaps an earlier edit; remove that edit first (\u00d7 in the list).";
      render();
      return;
    }
    operations = [...operations, op];
    redoStack = [];
    selection = null;
    gap = null;
    textInput.value = "";
    source = null;
    editType.value = "";
    message = "";
    update();
  }

  function needs(what) {
    message = what;
    render();
  }

  function typedText() {
    return textInput.value.trim();
  }

  function doDelete() {
    if (!selection) return needs("Select the words to delete.");
    let start = tokens[selection.from].start;
    let end = tokens[selection.to].end;
    // Take one side's spacing along, so no double space is left behind.
    if (end < original.length && SPACE.test(original[end])) {
      while (end < original.length && SPACE.test(original[end])) end++;
    } else {
      while (start > 0 && SPACE.test(original[start - 1])) start--;
    }
    push({ op: "delete", start, end, text: "", source: null, edit_type: editType.value || null });
  }

  function doSwap() {
    if (!selection) return needs("Select the words to swap.");
    if (!typedText()) return needs("Select a phrase on the page or type the new text.");
    push({ op: "swap", start: tokens[selection.from].start, end: tokens[selection.to].end,
      text: typedText(), source, edit_type: editType.value || null });
  }

  function doAdd() {
    if (gap === null) return needs("Click a + to choose where to add.");
    if (!typedText()) return needs("Select a phrase on the page or type the text to add.");
    const left = original[gap - 1];
    const right = original[gap];
    const text = gap === 0 ? `${typedText()} `
      : (right === undefined || SPACE.test(right) || !SPACE.test(left)) ? ` ${typedText()}` : `${typedText()} `;
    push({ op: "add", start: gap, end: gap, text, source, edit_type: editType.value || null });
  }

  function undo() {
    if (!operations.length) return;
    message = "";
    redoStack = [...redoStack, operations[operations.length - 1]];
    operations = operations.slice(0, -1);
    update();
  }

  function redo() {
    if (!redoStack.length) return;
    message = "";
    operations = [...operations, redoStack[redoStack.length - 1]];
    redoStack = redoStack.slice(0, -1);
    update();
  }

  function segmentOffset(node, offset) {
    const seg = node.nodeType === Node.TEXT_NODE ? node.parentElement.closest(".seg") : null;
    if (!seg) return null;
    return Number(seg.dataset.offset) + chars(node.textContent.slice(0, offset)).length;
  }

  function takeSelectionFromPage() {
    if (ctx.disabled || feasible !== "feasible" || !takesSelection()) return;
    const picked = window.getSelection();
    if (!picked || picked.isCollapsed || !picked.rangeCount) return;
    const range = picked.getRangeAt(0);
    // A paragraph, the page title or a section heading (the instructions' own example swaps
    // "It" for the title).
    const PARTS = ".paragraph, .page-title, .section-title";
    const block = range.startContainer.parentElement?.closest(PARTS);
    if (!block || !article.contains(block)
        || block !== range.endContainer.parentElement?.closest(PARTS)) return;
    let start = segmentOffset(range.startContainer, range.startOffset);
    let end = segmentOffset(range.endContainer, range.endOffset);
    if (start === null || end === null || end <= start) return;
    const part = block.dataset.part || "text";
    const index = Number(part === "heading" ? block.dataset.headingOf : block.dataset.paragraph);
    const text = chars(part === "title" ? item.title
      : part === "heading" ? item.paragraphs[index].heading : paragraphsText[index]);
    while (start < end && SPACE.test(text[start])) start++;
    while (end > start && SPACE.test(text[end - 1])) end--;
    if (end <= start) return;
    textInput.value = text.slice(start, end).join("");
    source = part === "title" ? { part, start, end }
      : part === "heading" ? { part, paragraph: index, start, end } : { paragraph: index, start, end };
    message = "";
    render();
  }

  article.addEventListener("pointerup", takeSelectionFromPage);
  article.addEventListener("keyup", takeSelectionFromPage);
  // A touch selection (long press, then the selection handles) ends with no pointerup on the
  // page: take it once it has settled.
  let selectionTimer = null;
  document.addEventListener("selectionchange", () => {
    clearTimeout(selectionTimer);
    selectionTimer = setTimeout(() => {
      const picked = window.getSelection();
      if (picked && picked.rangeCount && article.contains(picked.anchorNode)) takeSelectionFromPage();
    }, 300);
  });
  textInput.addEventListener("input", () => {
    // Typed text is no longer a copy of the page span.
    source = null;
    message = "";
    render();
  });
  section.querySelectorAll(".step1 input").forEach((radio) => {
    radio.addEventListener("change", () => {
      feasible = radio.value;
      if (feasible === "infeasible") {
        selection = null;
        gap = null;
      }
      update();
    });
  });
  section.querySelector(".op-delete").addEventListener("click", doDelete);
  section.querySelector(".op-add").addEventListener("click", doAdd);
  section.querySelector(".op-swap").addEventListener("click", doSwap);
  section.querySelector(".op-undo").addEventListener("click", undo);
  section.querySelector(".op-redo").addEventListener("click", redo);

  const target = section.querySelector(".target-sentence");
  if (target) target.scrollIntoView({ block: "center" });
  render();

  return {
    state: () => ({ feasible, operations, redoStack }),
    restore(state) {
      feasible = state.feasible ?? null;
      operations = state.operations || [];
      redoStack = state.redoStack || [];
      section.querySelectorAll(".step1 input").forEach((radio) => { radio.checked = radio.value === feasible; });
      render();
    },
    payload: () => ({
      category: category(),
      decontextualized_sentence: result(),
      operations: feasible === "infeasible" ? [] : operations,
    }),
    error: () => (feasible === null ? "Choose FEASIBLE or INFEASIBLE (step 1)." : null),
    warnings: () => [],
    disable() {
      ctx.disabled = true;
      section.querySelectorAll(".step1 input").forEach((radio) => { radio.disabled = true; });
      render();
    },
    onSaved() {},
    onKey(event, typing) {
      if ((event.ctrlKey || event.metaKey) && !typing) {
        if (event.key === "z" && !event.shiftKey) { undo(); return true; }
        if (event.key === "y" || (event.key === "Z" && event.shiftKey) || (event.key === "z" && event.shiftKey)) { redo(); return true; }
        return false;
      }
      if (typing || event.altKey || event.ctrlKey || event.metaKey || ctx.disabled) return false;
      const key = event.key.toLowerCase();
      const pick = (value) => {
        const radio = section.querySelector(`.step1 input[value=${value}]`);
        radio.checked = true;
        radio.dispatchEvent(new Event("change"));
      };
      if (key === "f") { pick("feasible"); return true; }
      if (key === "i") { pick("infeasible"); return true; }
      if (feasible !== "feasible") return false;
      if (key === "d") { doDelete(); return true; }
      if (key === "a") { doAdd(); return true; }
      if (key === "s") { doSwap(); return true; }
      return false;
    },
  };
}

// The widget state of a stored answer (an edit page shows the annotator's answer to change):
// the stored operations are the page's own (character spans of the original sentence).
export function stateFromPayload(payload) {
  if (payload.category === "IMPOSSIBLE") return { feasible: "infeasible", operations: [], redoStack: [] };
  return { feasible: "feasible", operations: payload.operations || [], redoStack: [] };
}
