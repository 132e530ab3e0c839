// The "why" folds load their explanation when opened (keyboard: Tab to "why", Enter).
"use strict";
document.addEventListener("toggle", async (event) => {
  const fold = event.target;
  if (!(fold instanceof HTMLDetailsElement) || !fold.classList.contains("why")) return;
  if (!fold.open || fold.dataset.loaded) return;
  const body = fold.querySelector(".explanation");
  const params = new URLSearchParams({
    q: fold.dataset.q, passage_id: fold.dataset.passageId,
    as_of: fold.dataset.asOf || "", lang: fold.dataset.lang || "",
  });
  body.textContent = "loading…";
  try {
    const response = await fetch("/ui/why?" + params, {credentials: "same-origin"});
    body.innerHTML = await response.text();
    fold.dataset.loaded = "1";
  } catch (error) {
    body.textContent = "could not load the explanation: " + error;
  }
}, true);
