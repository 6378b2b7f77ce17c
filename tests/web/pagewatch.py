"""What a page does that a screenshot cannot show, recorded for the browser tests."""

# Records what the page does that a test cannot see on a screenshot: sounds and moves.
WATCH_JS = """
window.__sounds = [];
window.__moves = [];
window.__audio = 0;
addEventListener('flyswat:sound', (e) => window.__sounds.push(e.detail));
const AC = window.AudioContext;
window.AudioContext = function (...a) { window.__audio += 1; return new AC(...a); };
new MutationObserver((ms) => { for (const m of ms) for (const n of m.addedNodes)
  if (n.classList && n.classList.contains('ghost'))
    window.__moves.push([n.dataset.move, n.dataset.seat, n.dataset.card]); })
  .observe(document, {childList: true, subtree: true});
"""
