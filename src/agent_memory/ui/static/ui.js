// agent-memory review page: the little script it needs (no build step, no inline script).
// Filters apply as soon as one is chosen; everything works without this file too.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  for (const select of document.querySelectorAll("select.autosubmit")) {
    select.addEventListener("change", () => select.form.submit());
  }
  // The erase button stays disabled until its confirmation box is ticked (the server checks it too).
  for (const form of document.querySelectorAll("form.erase")) {
    const box = form.querySelector("input[name=confirm]");
    const button = form.querySelector("button");
    const sync = () => { button.disabled = !box.checked; };
    box.addEventListener("change", sync);
    sync();
  }
});
