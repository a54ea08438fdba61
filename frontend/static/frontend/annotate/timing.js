// Active time per item: what the page reports as an answer's duration_ms (qc/timing.py says
// how the server compares it). An item's clock runs while it is the item being worked on --
// from when something in it is focused, pressed or typed into, until another item is, or it
// is saved -- and only while the page is visible. A page of several items (saved at once on
// Submit) thus reports each item's share of the page, never "time since the page opened";
// the shares add up to at most the time the page was open, which the server checks.
// Time is counted with the monotonic performance.now(), so a changed system clock changes
// nothing.

export function createActiveTimer(now = () => performance.now()) {
  const totals = new Map();
  let current = null;
  let since = null; // when the current item's clock started; null while stopped
  let visible = document.visibilityState !== "hidden";

  function stop() {
    if (current !== null && since !== null) totals.set(current, (totals.get(current) || 0) + now() - since);
    since = null;
  }

  function start() {
    if (current !== null && visible && since === null) since = now();
  }

  document.addEventListener("visibilitychange", () => {
    visible = document.visibilityState !== "hidden";
    if (visible) start();
    else stop();
  });

  return {
    // ``key`` becomes the item being worked on (its clock runs, the previous one's stops).
    attend(key) {
      if (key !== current) {
        stop();
        current = key;
      }
      start();
    },
    // ``key`` is done (saved): its clock stops for good unless it is attended again.
    release(key) {
      if (key === current) {
        stop();
        current = null;
      }
    },
    // No item is being worked on (the page's Submit was pressed).
    stop() {
      stop();
      current = null;
    },
    // Whole milliseconds ``key`` has been worked on so far.
    activeMs(key) {
      let total = totals.get(key) || 0;
      if (key === current && since !== null) total += now() - since;
      return Math.round(total);
    },
  };
}

// Attend ``key`` whenever the worker focuses, presses or types into ``section``.
export function watchSection(timer, section, key) {
  for (const type of ["focusin", "pointerdown", "keydown", "input"]) {
    section.addEventListener(type, () => timer.attend(key), { capture: true, passive: true });
  }
}
