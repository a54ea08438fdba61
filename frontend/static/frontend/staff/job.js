// Follows a staff job on its page (frontend/templates/frontend/staff/job.html): polls the
// job's JSON progress endpoint until it has finished, then offers to show the result.
// No build step; everything it writes is text (textContent), never HTML.

const POLL_MS = 1000;
const box = document.getElementById("job");

function part(name) {
  return box.querySelector(`[data-job="${name}"]`);
}

function show(progress) {
  part("state").textContent = progress.state;
  part("message").textContent = progress.message || "";
  part("figures").textContent = progress.total ? `${progress.done} / ${progress.total}` : "";
  if (progress.percent !== null) part("bar").value = progress.percent;
  if (progress.error) {
    part("error").textContent = `This job failed: ${progress.error}`;
    part("error").hidden = false;
  }
  if (progress.download) {
    part("download").querySelector("a").href = progress.download;
    part("download").hidden = false;
  }
}

async function poll() {
  try {
    const response = await fetch(box.dataset.progressUrl, {
      headers: { Accept: "application/json" }, redirect: "error", credentials: "same-origin",
    });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const progress = await response.json();
    show(progress);
    if (progress.finished) {
      part("reload").hidden = false;
      return;
    }
  } catch (error) {
    part("message").textContent = `Could not read the progress (${error.message}); retrying.`;
  }
  setTimeout(poll, POLL_MS);
}

if (box && (box.dataset.state === "queued" || box.dataset.state === "running")) {
  setTimeout(poll, POLL_MS);
}
