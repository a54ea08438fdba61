// How a text answer was written: the summary an answer sends as ``effort`` (qc/effort.py reads
// it; docs/annotating.md tells workers what is recorded and why). Counts and milliseconds
// only: what is typed or pasted is never kept here, and nothing is sent but the summary with
// the answer itself.
//
// Per item: paste events and the characters they brought (and how many of those had been
// copied from this page itself: a name from the dialogue is not an answer from elsewhere),
// characters typed and the time spent typing them (each keystroke counts the time since the
// previous one, at most TYPING_PAUSE_MS: a pause to think is not typing time), how often the
// page lost the focus while the item was being worked on, and how long after the item was
// shown its first keystroke came.

const TYPING_PAUSE_MS = 2000;

function selectedText(target) {
  if (target && typeof target.selectionStart === "number" && typeof target.value === "string") {
    return target.value.slice(target.selectionStart, target.selectionEnd);
  }
  return String(document.getSelection() || "");
}

export function createEffortRecorder(now = () => performance.now()) {
  const records = new Map();
  let current = null;
  let away = false;
  // The text last copied or cut on this page, in memory only, to tell a paste of the page's
  // own text from one brought from elsewhere; compared at paste time, never sent or stored.
  let copiedHere = "";

  function record(key) {
    if (!records.has(key)) {
      records.set(key, {
        shownAt: now(), lastTypedAt: null, pastes: 0, pastedChars: 0, pastedFromPageChars: 0,
        typedChars: 0, typingMs: 0, focusLosses: 0, firstInputMs: null,
      });
    }
    return records.get(key);
  }

  function remember(event) { copiedHere = selectedText(event.target); }
  document.addEventListener("copy", remember, { capture: true, passive: true });
  document.addEventListener("cut", remember, { capture: true, passive: true });

  function leave() {
    if (away) return;
    away = true;
    if (current !== null) record(current).focusLosses += 1;
  }
  function back() {
    if (document.visibilityState !== "hidden" && document.hasFocus()) away = false;
  }
  window.addEventListener("blur", leave);
  window.addEventListener("focus", back);
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden") leave();
    else back();
  });

  return {
    // ``key`` is shown: its time to first keystroke counts from now.
    shown(key) { record(key); },
    attend(key) { current = key; record(key); },
    firstInput(key) {
      const entry = record(key);
      if (entry.firstInputMs === null) entry.firstInputMs = Math.round(now() - entry.shownAt);
    },
    typed(key, characters) {
      const entry = record(key);
      const at = now();
      if (entry.lastTypedAt !== null) entry.typingMs += Math.min(at - entry.lastTypedAt, TYPING_PAUSE_MS);
      entry.lastTypedAt = at;
      entry.typedChars += characters;
    },
    pasted(key, text) {
      const entry = record(key);
      entry.pastes += 1;
      entry.pastedChars += text.length;
      if (text && copiedHere.includes(text)) entry.pastedFromPageChars += text.length;
      entry.lastTypedAt = null; // the next keystroke starts a new run of typing
    },
    // The summary sent with ``key``'s answer (the server's qc.effort.parse_effort schema).
    summary(key) {
      const entry = record(key);
      return {
        pastes: entry.pastes,
        pasted_chars: entry.pastedChars,
        pasted_from_page_chars: entry.pastedFromPageChars,
        typed_chars: entry.typedChars,
        typing_ms: Math.round(entry.typingMs),
        focus_losses: entry.focusLosses,
        first_input_ms: entry.firstInputMs,
      };
    },
  };
}

// Characters a typing input event inserted (pastes and drops are counted by the paste event;
// an autocorrection replaces text rather than typing it).
function typedLength(event) {
  if (event.inputType === "insertText") return (event.data || "").length;
  if (event.inputType === "insertLineBreak" || event.inputType === "insertParagraph") return 1;
  return 0;
}

// Record the effort of ``key``'s answer in ``section`` (its problem report's note aside).
export function watchEffort(recorder, section, key) {
  recorder.shown(key);
  const inAnswer = (event) => !event.target.closest?.(".report-problem");
  const listen = (type, handler) => section.addEventListener(type, (event) => {
    if (inAnswer(event)) handler(event);
  }, { capture: true, passive: true });
  listen("focusin", () => recorder.attend(key));
  listen("pointerdown", () => recorder.attend(key));
  listen("keydown", () => { recorder.attend(key); recorder.firstInput(key); });
  listen("paste", (event) => {
    recorder.attend(key);
    recorder.firstInput(key);
    recorder.pasted(key, event.clipboardData ? event.clipboardData.getData("text/plain") : "");
  });
  listen("input", (event) => {
    const characters = typedLength(event);
    if (characters) recorder.typed(key, characters);
  });
  listen("compositionend", (event) => recorder.typed(key, (event.data || "").length));
}
