// The task page controller, shared by the five task kinds: mounts one widget per item (from the
// kind's own module), keeps a draft of each in localStorage until the server confirms it, shows
// live-check warnings, asks for confirmation before saving over warnings (recording the
// override), retries on network errors, and at the end of a crowd task posts the assignment back
// to MTurk or sends the browser back to Prolific with the completion code.
//
// A kind module exports mount(section, item, ctx) returning a widget with:
//   state() / restore(state)  draft round-trip (plain JSON)
//   payload()                 the payload to send (see annotation/payloads.py)
//   error()                   a blocking problem (string) or null
//   warnings()                live-check warnings [{code, message}]
//   disable()                 make read-only (preview, saved)
//   onSaved(response)         after the server confirmed (e.g. reveal CANARD's answer)
//   onKey(event)              optional keyboard shortcuts; true when handled
// ctx.shared is an object shared by the items of one page, fresh when the next item replaces
// them (e.g. CANARD's answers revealed so far on this page).
//
// Every item also offers "Skip / report a problem with this item": the report is sent instead of
// an answer (payload {problem: {reason, note}}); a local page then moves on to the next item, a
// multi-item page sends it with Submit.
//
// Edit pages (config.mode "edit", one of the annotator's recent answers): the stored answer is
// filled in (the kind module's stateFromPayload) and Save sends a new version of it
// (config.submit_url, with "replaces"); read-only once reviewed. A local page told that another
// answer to its item is stored (another tab) offers to replace it with its own the same way.
//
// Local pages: the submit answer carries the next item (its data and its section, rendered by
// the server's own template), so "Next item" swaps it in without loading a page; when the
// answer says there is none (or carried nothing), the link is followed as a plain page load.

import { createEffortRecorder, watchEffort } from "./effort.js";
import { createActiveTimer, watchSection } from "./timing.js";

const config = JSON.parse(document.getElementById("task-config").textContent);
const page = document.getElementById("task-page");
const csrfInput = document.querySelector("input[name=csrfmiddlewaretoken]");
const netError = page.querySelector(".net-error");
const nextLink = page.querySelector(".next-item");
const finishButton = page.querySelector(".finish-hit");
const progressLine = document.getElementById("progress");
const submitStatus = page.querySelector(".submit-status");
// A multi-item task (a HIT, a participant's session: any provider) whose answers do not build
// on each other has ONE Submit for the whole set: it checks every item, asks once about
// warnings, saves each item (each with its own token) and then submits the task. CANARD keeps a
// Save per question: saving reveals the answer the next question builds on.
const editMode = config.mode === "edit";
const submitAllMode = config.mode !== "local" && !editMode && config.kind !== "rewrite";
const pageNotice = page.querySelector(".page-notice");
let entries = [];
let retryAction = null;
// A local annotator's {done, left} in the project: asked once after load (config.progress_url),
// then counted here from this page's own saves.
let progress = null;
let kind = null;
let shared = {};
// What the last submit answer said comes next: undefined (nothing said), null (none left) or
// {item, html}.
let pendingNext;
// Each item's active time (timing.js): the duration_ms its answer reports.
const activeTimer = createActiveTimer();
// How each text answer was written (effort.js): the effort summary it sends. A rating page
// records nothing of the kind.
const effortRecorder = config.kind === "plausibility" ? null : createEffortRecorder();

function draftKey(itemId) {
  return `unpack:draft:${config.draft_scope}:${config.project}:${itemId}`;
}

function readDraft(itemId) {
  try {
    return JSON.parse(localStorage.getItem(draftKey(itemId)) || "null");
  } catch (error) {
    return null;
  }
}

function newToken() {
  if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}-${Math.random().toString(36).slice(2)}`;
}

function renderWarnings(entry, warnings) {
  const box = entry.section.querySelector(".warnings");
  box.replaceChildren();
  for (const warning of warnings) {
    const line = document.createElement("p");
    line.className = "warning";
    line.dataset.code = warning.code;
    line.textContent = warning.message;
    box.append(line);
  }
}

function setStatus(entry, text, kind = "") {
  const status = entry.section.querySelector(".item-status");
  status.textContent = text;
  status.className = `item-status ${kind}`;
}

function saveDraft(entry) {
  if (entry.saved || config.preview) return;
  const draft = { token: entry.token, startedAt: entry.startedAt, state: entry.widget.state() };
  try {
    localStorage.setItem(draftKey(entry.itemId), JSON.stringify(draft));
  } catch (error) {
    // Storage full or disabled: the work is still on the page, only the reload safety is lost.
  }
}

// Live checks look at settled input: SETTLE_MS after the last change, when the focus leaves the
// item, and at save; never at every keystroke ("too short" after one letter, "pinhea" as a new
// word). The section carries data-checking while a check is pending.
const SETTLE_MS = 700;

function checkNow(entry) {
  clearTimeout(entry.checkTimer);
  delete entry.section.dataset.checking;
  const warnings = entry.widget.warnings();
  renderWarnings(entry, warnings);
  const codes = warnings.map((w) => w.code).join(",");
  if (entry.overrideCodes !== null && entry.overrideCodes !== codes) {
    entry.overrideCodes = null;
    entry.saveButton.firstChild.textContent = "Save ";
    if (finishButton?.dataset.anyway) {
      // The warnings changed: the next Submit asks again.
      delete finishButton.dataset.anyway;
      updatePageActions();
    }
  }
  return warnings;
}

function changed(entry) {
  if (entry.report) clearReport(entry); // an answer after all
  if (entry.section.querySelector(".item-status.error")) setStatus(entry, "");
  saveDraft(entry);
  clearTimeout(entry.checkTimer);
  entry.section.dataset.checking = "true";
  entry.checkTimer = setTimeout(() => checkNow(entry), SETTLE_MS);
}

function currentEntry() {
  return entries.find((entry) => !entry.saved && !entry.section.hidden);
}

// An item's first control: an enabled input, text box or list, or the rating slider (a
// focusable element with role=slider, not an input).
const FIRST_FIELD = "input:not([type=hidden]):not(:disabled), textarea:not(:disabled), "
  + "select:not(:disabled), [role=slider][tabindex='0']";

// Keyboard first: the current item's first input (decontext: step 1; CANARD/sluice: the text
// box; plausibility: the slider) has the focus on load, after Next and after each save of a
// multi-item page, unless a dialog is open.
function focusCurrent() {
  const entry = currentEntry();
  if (!entry || config.preview || document.querySelector("dialog[open]")) return;
  activeTimer.attend(entry); // shown and ready: its clock runs (sliders take no focus)
  const field = entry.section.querySelector(FIRST_FIELD);
  if (field) field.focus({ preventScroll: true });
}

function updatePageActions() {
  const allSaved = entries.every((entry) => entry.saved);
  if (nextLink) nextLink.hidden = !allSaved;
  if (finishButton) finishButton.hidden = !allSaved && !submitAllMode;
  if (finishButton && submitAllMode && !finishButton.dataset.anyway) {
    // Where the button goes, when the provider's page says (Prolific: "Finish and return to
    // Prolific"); otherwise what it submits.
    finishButton.textContent = config.finish_label
      || (entries.length > 1 ? `Submit all ${entries.length} items` : "Submit");
  }
  if (allSaved && nextLink) nextLink.focus();
  if (allSaved && finishButton) finishButton.focus();
  if (allSaved && editMode) page.querySelector(".page-actions .continue")?.focus();
}

// "N done · M left for you" (local), or how far through the task's items this page is (a HIT
// of MTurk, or any provider's multi-item task).
function renderProgress() {
  if (!progressLine || editMode) return;
  if (config.mode === "local") {
    if (progress) progressLine.textContent = `${progress.done} done \u00b7 ${progress.left} left for you`;
    return;
  }
  const saved = entries.filter((entry) => entry.saved).length;
  progressLine.textContent = config.preview ? `${entries.length} items in this task`
    : `${saved} of ${entries.length} saved in this task`;
}

async function loadProgress() {
  if (!config.progress_url) return;
  try {
    const response = await fetch(config.progress_url, {
      headers: { "X-Requested-With": "fetch" }, credentials: "same-origin", redirect: "manual",
    });
    const data = await answerJson(response);
    if (response.ok && data) {
      progress = { done: data.done, left: data.left };
      renderProgress();
    }
  } catch (error) {
    // Progress is a courtesy: the page works without it.
  }
}

// This page's own saves move the count: a new answer is one more done and one fewer left; an
// item completed by others meanwhile is one fewer left.
function countSaved(status) {
  if (progress && status === "saved") {
    progress.done += 1;
    progress.left = Math.max(progress.left - 1, 0);
  } else if (progress && status === "item_full") {
    progress.left = Math.max(progress.left - 1, 0);
  }
  renderProgress();
}

function markSaved(entry, response) {
  entry.saved = true;
  activeTimer.release(entry);
  localStorage.removeItem(draftKey(entry.itemId));
  entry.section.classList.add("saved");
  entry.widget.disable();
  entry.saveButton.hidden = true;
  if (response) entry.widget.onSaved(response);
  const next = entries[entries.indexOf(entry) + 1];
  if (next) next.section.hidden = false;
  updatePageActions();
  if (response) focusCurrent();
}

// The CSRF token as of now: logging in again (in another tab) rotates it, so the cookie is read
// at each send; the page's own copy is the fallback (cookies withheld, e.g. MTurk's iframe).
function csrfToken() {
  const cookie = document.cookie.split("; ").find((part) => part.startsWith("csrftoken="));
  return cookie ? decodeURIComponent(cookie.slice("csrftoken=".length)) : csrfInput?.value;
}

async function postJson(url, body) {
  const headers = { "Content-Type": "application/json", "X-Requested-With": "fetch" };
  const token = csrfToken();
  if (token) headers["X-CSRFToken"] = token;
  // redirect: "manual": a redirect (to a login page) is never followed into a 200 that could
  // pass for an answer; it arrives as an "opaqueredirect" response.
  return fetch(url, {
    method: "POST", headers, body: JSON.stringify(body), credentials: "same-origin", redirect: "manual",
  });
}

// The JSON answer of the server, or null when the answer is not JSON (a login page, a proxy's
// error page…).
async function answerJson(response) {
  if (response.type === "opaqueredirect") return null;
  if (!(response.headers.get("Content-Type") || "").startsWith("application/json")) return null;
  try {
    return await response.json();
  } catch (error) {
    return null;
  }
}

const CONFIRMED = new Set(["saved", "duplicate", "already_saved"]);

// Not saved because the session ended (or its CSRF token went stale): say so, keep the draft,
// link to the login page in a new tab and save again (same token) when the annotator comes back.
function askToLogIn(entry, data) {
  const status = entry.section.querySelector(".item-status");
  status.className = "item-status error login-needed";
  const link = document.createElement("a");
  link.href = data?.login_url || config.login_url;
  link.target = "_blank";
  link.rel = "opener";
  link.className = "log-in-again";
  link.textContent = "Log in again (opens a new tab)";
  status.replaceChildren(
    `Not saved: ${data?.message || "your session has ended."} Your answer is kept in this browser. `,
    link,
    ", then come back here: it is saved again automatically, or press Save.",
  );
  entry.awaitingLogin = true;
}

function retryAfterLogin() {
  for (const entry of entries) {
    if (entry.awaitingLogin && !entry.busy) save(entry);
  }
}

function showNetworkError(action) {
  retryAction = action;
  netError.hidden = false;
}

// What the page sends for an item: its problem report, or the widget's answer.
function payloadOf(entry) {
  return entry.report ? { problem: entry.report } : entry.widget.payload();
}

function errorOf(entry) {
  return entry.report ? null : entry.widget.error();
}

async function save(entry) {
  if (entry.saved || entry.busy || config.preview) return;
  const problem = errorOf(entry);
  if (problem) {
    setStatus(entry, problem, "error");
    return;
  }
  const warnings = entry.report ? [] : checkNow(entry);
  const codes = warnings.map((w) => w.code).join(",");
  if (warnings.length && entry.overrideCodes !== codes) {
    // First press over warnings: ask. The second press records the override.
    entry.overrideCodes = codes;
    entry.saveButton.firstChild.textContent = "Save anyway ";
    setStatus(entry, "Please look at the warnings above. Press \u201cSave anyway\u201d to keep your answer as it is.", "warn");
    return;
  }
  const body = {
    item_id: entry.itemId,
    client_token: entry.token,
    payload: payloadOf(entry),
    // The warnings shown for the final text, now (the page shows them before any save).
    client_warnings: warnings,
    overridden_warnings: warnings,
    started_at: entry.startedAt,
    duration_ms: activeTimer.activeMs(entry),
  };
  if (effortRecorder) body.effort = effortRecorder.summary(entry);
  if (config.task_token) body.task_token = config.task_token;
  if (editMode) body.replaces = config.stored.annotation_id;
  entry.lastBody = body;
  entry.busy = true;
  entry.saveButton.disabled = true;
  setStatus(entry, "Saving\u2026");
  let response;
  try {
    response = await postJson(config.submit_url, body);
  } catch (error) {
    response = null;
  }
  entry.busy = false;
  entry.saveButton.disabled = false;
  entry.awaitingLogin = false;
  if (response === null || response.status >= 500) {
    setStatus(entry, "Not saved yet.", "error");
    showNetworkError(() => save(entry));
    return;
  }
  netError.hidden = true;
  const data = await answerJson(response);
  if (data && "next" in data) pendingNext = data.next;
  // Only an answer that says this item's answer is stored counts as saved; anything else keeps
  // the draft and says what happened.
  if (response.ok && data && CONFIRMED.has(data.status) && data.item_id === entry.itemId) {
    if (data.status === "already_saved") {
      setStatus(entry, `Your answer here was not stored: an answer to this item was already saved (from another tab or earlier): \u201c${data.stored.summary}\u201d.`, "warn");
      if (data.stored.editable && config.revise_url) offerReplace(entry, data.stored);
    } else if (entry.report) {
      setStatus(entry, "Reported: thank you. This item is skipped.", "ok");
    } else if (editMode) {
      setStatus(entry, data.status === "duplicate" ? "Changed (already stored)." : "Changed: saved as a new version of your answer.", "ok");
      config.stored.annotation_id = data.annotation_id;
    } else {
      setStatus(entry, data.status === "duplicate" ? "Saved (already stored)." : "Saved.", "ok");
    }
    markSaved(entry, data);
    countSaved(data.status);
    if (entry.report && config.mode === "local" && data.status !== "already_saved") {
      // Reported: straight on to the next item, saying what happened to this one.
      goNext("Your report on the last item was sent, thank you. Here is the next item.");
    }
  } else if (response.type === "opaqueredirect" || response.status === 401
             || data?.error === "csrf_failed") {
    askToLogIn(entry, data);
  } else if (data?.error === "item_full") {
    markNotNeeded(entry, `${data.message} Your answer was not needed; please take the next item.`);
    countSaved("item_full");
  } else if (data?.message) {
    setStatus(entry, `Not saved: ${data.message} Your answer is kept in this browser.`, "error");
  } else {
    setStatus(entry, `Not saved: unexpected answer from the server (${response.status}). Your answer is kept in this browser.`, "error");
  }
}

// Tab B of the same item: the stored answer is another tab's. While it is pending review, this
// tab's answer can replace it -- a new version, through the same service as an edit. The new
// version gets a token of its own (the stored answer may hold this page's token: two tabs
// restored one draft), kept for every press so that a retry stays one version.
function offerReplace(entry, stored) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "secondary replace-stored";
  button.textContent = "Replace it with this answer";
  const replaceToken = newToken();
  button.addEventListener("click", async () => {
    button.disabled = true;
    const body = { ...entry.lastBody, client_token: replaceToken, replaces: stored.annotation_id };
    let response;
    try {
      response = await postJson(config.revise_url, body);
    } catch (error) {
      response = null;
    }
    const data = response ? await answerJson(response) : null;
    if (response && response.ok && data && CONFIRMED.has(data.status)) {
      setStatus(entry, "Replaced: your answer here is now the stored one (the earlier one is kept as an older version).", "ok");
      entry.widget.onSaved(data);
    } else {
      button.disabled = false;
      setStatus(entry, `Not replaced: ${data?.message || "the server could not be reached."}`, "error");
      entry.section.querySelector(".item-status").append(" ", button);
    }
  });
  entry.section.querySelector(".item-status").append(" ", button);
}

// "Skip / report a problem with this item": the chosen reason (and the optional words) are
// sent instead of an answer.
function reportItem(entry) {
  if (entry.saved || config.preview) return;
  const box = entry.section.querySelector(".report-problem");
  const reason = box.querySelector("input[type=radio]:checked")?.value;
  if (!reason) {
    setStatus(entry, "Choose what is wrong with this item, then press \u201cReport and skip\u201d.", "error");
    return;
  }
  entry.report = { reason, note: box.querySelector(".problem-note").value.trim() };
  entry.overrideCodes = null;
  renderWarnings(entry, []);
  if (submitAllMode) {
    setStatus(entry, "Reported: this item is skipped, and your report is sent with Submit.");
    const next = entries.slice(entries.indexOf(entry) + 1).find((other) => !other.saved);
    if (next) focusField(next);
    else finishButton.focus();
    return;
  }
  save(entry);
}

function clearReport(entry) {
  entry.report = null;
  entry.section.querySelectorAll(".report-problem input[type=radio]").forEach((radio) => { radio.checked = false; });
}

// An item others completed: no more work goes into it; the page offers the next one.
function markNotNeeded(entry, message) {
  localStorage.removeItem(draftKey(entry.itemId));
  setStatus(entry, message, "warn");
  entry.saved = true;
  entry.widget.disable();
  entry.saveButton.hidden = true;
  updatePageActions();
}

// Local pages: the items shown (and the next one held) are leased to this annotator; the lease
// is renewed while the page is open, and the answer names items other annotators completed
// meanwhile, which are marked before more work goes into them.
async function renewLeases() {
  const ids = entries.filter((entry) => !entry.saved).map((entry) => entry.itemId);
  if (pendingNext) ids.push(pendingNext.item.item_id);
  if (!config.lease_url || ids.length === 0) return;
  let data;
  try {
    const response = await postJson(config.lease_url, { item_ids: ids });
    if (!response.ok) return;
    data = await response.json();
  } catch (error) {
    return; // a lost renewal is harmless: the next one, or the submit, decides
  }
  const unusable = new Set(data.unusable || []);
  for (const entry of entries) {
    if (!entry.saved && unusable.has(entry.itemId)) {
      markNotNeeded(entry, "Other annotators completed this item meanwhile, so it can no longer be used. Please take the next item.");
      countSaved("item_full");
    }
  }
  if (pendingNext && unusable.has(pendingNext.item.item_id)) pendingNext = undefined;
}

function setSubmitStatus(text, kind = "") {
  if (!submitStatus) return;
  submitStatus.textContent = text;
  submitStatus.className = `submit-status ${kind}`;
}

function focusField(entry) {
  const field = entry.section.querySelector(FIRST_FIELD);
  entry.section.scrollIntoView({ block: "center" });
  if (field) field.focus({ preventScroll: true });
}

// Enter (or Skip) in one item of a submit-all page: check that item and go on to the next.
function itemDone(entry) {
  const problem = entry.widget.error();
  if (problem) {
    setStatus(entry, problem, "error");
    return;
  }
  const warnings = checkNow(entry);
  if (!warnings.length) setStatus(entry, entry.widget.payload().skipped ? "Skipped." : "Ready.");
  const next = entries.slice(entries.indexOf(entry) + 1).find((other) => !other.saved);
  if (next) focusField(next);
  else finishButton.focus();
}

async function submitAll() {
  if (config.preview || finishButton.disabled) return;
  const open = entries.filter((entry) => !entry.saved);
  // Every item first: an answer for each, then the warnings, asked about once for the set.
  const missing = open.filter((entry) => {
    const problem = errorOf(entry);
    if (problem) setStatus(entry, problem, "error");
    return problem;
  });
  if (missing.length) {
    setSubmitStatus(`Not submitted: ${missing.length} item(s) need an answer (marked above).`, "error");
    focusField(missing[0]);
    return;
  }
  const warned = open.filter((entry) => {
    if (entry.report) return false;
    const warnings = checkNow(entry);
    const codes = warnings.map((w) => w.code).join(",");
    if (!warnings.length || entry.overrideCodes === codes) return false;
    entry.overrideCodes = codes;
    setStatus(entry, "Please look at the warnings above.", "warn");
    return true;
  });
  if (warned.length) {
    finishButton.dataset.anyway = "true";
    finishButton.textContent = "Submit anyway";
    setSubmitStatus(`${warned.length} item(s) have warnings. Change them, or press \u201cSubmit anyway\u201d.`, "warn");
    focusField(warned[0]);
    return;
  }
  finishButton.disabled = true;
  activeTimer.stop(); // Submit pressed: the work is done, the saves are not work
  setSubmitStatus("Saving\u2026");
  for (const entry of open) {
    await save(entry);
    if (!entry.saved) {
      finishButton.disabled = false;
      setSubmitStatus("Not submitted: an item could not be saved (see its message).", "error");
      focusField(entry);
      return;
    }
  }
  finishButton.disabled = false;
  setSubmitStatus("");
  await finishHit();
}

async function finishHit() {
  if (entries.some((entry) => !entry.saved)) return;
  finishButton.disabled = true;
  let response;
  try {
    response = await postJson(config.finish_url, { task_token: config.task_token });
  } catch (error) {
    response = null;
  }
  finishButton.disabled = false;
  if (response === null || response.status >= 500) {
    showNetworkError(finishHit);
    return;
  }
  netError.hidden = true;
  const data = await answerJson(response);
  if (!response.ok || !data) {
    finishButton.insertAdjacentText("afterend", ` ${data?.message || `Could not submit (${response.status}).`}`);
    return;
  }
  if (data.redirect_url) {
    // Prolific: the session is submitted on our side; the browser goes back to Prolific with
    // the study's completion code.
    window.location.assign(data.redirect_url);
    return;
  }
  const form = document.getElementById("mturk-submit-form");
  form.querySelector("input[name=summary]").value = data.summary;
  // The whole answer goes to MTurk as well (the collector can rebuild from it).
  for (const [name, value] of Object.entries(data.answer_fields || {})) {
    const field = document.createElement("input");
    field.type = "hidden";
    field.name = name;
    field.value = value;
    form.append(field);
  }
  form.submit();
}

// Inputs that take no text (radios, checkboxes, sliders, buttons) leave the letter and digit
// shortcuts working: the focus is on such an input when a page opens (decontext's step 1,
// the rating slider).
const NO_TEXT_INPUTS = new Set(["radio", "checkbox", "range", "button", "submit", "reset"]);

function isTyping(event) {
  const target = event.target;
  if (!(target instanceof HTMLElement)) return false;
  if (target.tagName === "INPUT") return !NO_TEXT_INPUTS.has(target.type);
  return target.isContentEditable || ["TEXTAREA", "SELECT"].includes(target.tagName);
}

function setupInstructions() {
  const dialog = document.getElementById("instructions");
  const seenKey = `unpack:instructions-seen:${config.project}`;
  document.getElementById("open-instructions").addEventListener("click", () => dialog.showModal());
  if (!localStorage.getItem(seenKey)) {
    dialog.showModal();
    localStorage.setItem(seenKey, "1");
  }
  return dialog;
}

function mountItem(section, item, saved) {
  const entry = {
    section,
    itemId: item.item_id,
    saveButton: section.querySelector(".save-item"),
    overrideCodes: null,
    saved: false,
    busy: false,
  };
  const draft = config.preview ? null : readDraft(item.item_id);
  entry.token = draft?.token || newToken();
  entry.startedAt = draft?.startedAt || new Date().toISOString();
  entry.widget = kind.mount(section, item, {
    rules: config.rules,
    maxText: config.max_text,
    disabled: Boolean(config.preview),
    shared,
    changed: () => changed(entry),
    requestSave: () => (submitAllMode ? itemDone(entry) : save(entry)),
  });
  if (submitAllMode) entry.saveButton.hidden = true;
  const stored = editMode ? config.stored : null;
  if (stored && !stored.payload.problem && kind.stateFromPayload) {
    entry.widget.restore(kind.stateFromPayload(stored.payload));
  } else if (stored?.payload.problem) {
    const { reason, note } = stored.payload.problem;
    const box = section.querySelector(".report-problem");
    box.open = true;
    const radio = box.querySelector(`input[value="${reason}"]`);
    if (radio) radio.checked = true;
    box.querySelector(".problem-note").value = note || "";
  }
  if (draft?.state && !(stored && !stored.editable)) entry.widget.restore(draft.state);
  watchSection(activeTimer, section, entry);
  if (effortRecorder) watchEffort(effortRecorder, section, entry);
  entry.saveButton.addEventListener("click", () => save(entry));
  section.querySelector(".report-item")?.addEventListener("click", () => reportItem(entry));
  // Leaving the item settles its input. Not when the focus moves within it (to Save, whose
  // click would be lost if the warnings appearing above it moved it under the pointer).
  section.addEventListener("focusout", (event) => {
    if (section.dataset.checking && !section.contains(event.relatedTarget)) checkNow(entry);
  });
  entries.push(entry);
  if (saved.has(item.item_id)) {
    setStatus(entry, "Saved earlier.", "ok");
    markSaved(entry, null);
  } else if (stored && !stored.editable) {
    setStatus(entry, "Reviewed: this answer can no longer be changed.", "warn");
    entry.saved = true;
    entry.widget.disable();
    entry.saveButton.hidden = true;
    section.querySelector(".report-problem fieldset").disabled = true;
  } else if (config.preview) {
    entry.widget.disable();
  } else {
    renderWarnings(entry, draft ? entry.widget.warnings() : []);
  }
  return entry;
}

// Local pages: replace the saved item by the one the submit answer carried. Returns false when
// there is none to swap in (the caller then loads the next page).
function showNextItem() {
  if (!pendingNext) return false;
  const { item, html } = pendingNext;
  pendingNext = undefined;
  const holder = document.createElement("template");
  holder.innerHTML = html.trim();
  const section = holder.content.firstElementChild;
  for (const entry of entries) entry.section.remove();
  page.querySelector(".page-actions").before(section);
  config.items = [item];
  entries = [];
  shared = {};
  netError.hidden = true;
  mountItem(section, item, new Set());
  updatePageActions();
  window.scrollTo(0, 0);
  focusCurrent();
  renewLeases(); // held since the last answer: still usable?
  return true;
}

// Show the next item; ``notice`` (optional) says what happened to the one before.
function goNext(notice = "") {
  if (pageNotice) {
    pageNotice.textContent = notice;
    pageNotice.hidden = !notice;
  }
  if (!showNextItem()) window.location.assign(nextLink.href);
}

async function main() {
  kind = await import(`./${config.kind}.js`);
  const saved = new Set(config.saved_item_ids || []);
  const sections = [...page.querySelectorAll(".task-item")];
  sections.forEach((section, index) => mountItem(section, config.items[index], saved));
  if (config.kind === "rewrite") {
    // One question at a time: later questions appear once the one before is saved.
    let firstOpen = entries.findIndex((entry) => !entry.saved);
    if (config.preview) firstOpen = 0;
    entries.forEach((entry, index) => { entry.section.hidden = firstOpen >= 0 && index > firstOpen; });
  }
  netError.querySelector(".retry").addEventListener("click", () => retryAction && retryAction());
  window.addEventListener("focus", retryAfterLogin);
  if (finishButton) finishButton.addEventListener("click", submitAllMode ? submitAll : finishHit);
  if (config.lease_url) setInterval(renewLeases, config.lease_renew_seconds * 1000);
  if (nextLink) {
    nextLink.addEventListener("click", (event) => {
      if (event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) return;
      event.preventDefault();
      goNext();
    });
  }
  const dialog = setupInstructions();
  dialog.addEventListener("close", focusCurrent);
  document.addEventListener("keydown", (event) => {
    if (dialog.open) return;
    const entry = currentEntry();
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      if (submitAllMode) submitAll();
      else if (entry) save(entry);
      return;
    }
    if (entry && entry.widget.onKey && entry.widget.onKey(event, isTyping(event))) {
      event.preventDefault();
      return;
    }
    if (isTyping(event) || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "?") {
      event.preventDefault();
      dialog.showModal();
    } else if ((event.key === "n" || event.key === "N") && nextLink && !nextLink.hidden) {
      // The key must not go on to type "n" into the next item's first box, which has the
      // focus by the time the key's default action would run.
      event.preventDefault();
      goNext();
    }
  });
  updatePageActions();
  focusCurrent();
  renderProgress();
  await loadProgress();
  page.dataset.ready = "true";
}

main();
