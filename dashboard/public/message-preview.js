// The message editor's preview frame (src/components/MessagePreview.tsx).
// It runs in a sandboxed iframe (allow-scripts only: an opaque origin, no
// access to the dashboard, its cookies or its styles), loads the SDK's
// message renderer from the URL its script tag names (data-renderer), and
// draws the step the dashboard posts with the renderer's preview API:
//
//   dashboard → frame  {type: "strata:preview", step, stepIndex, stepCount}
//   frame → dashboard  {type: "strata:preview-ready", renderer: true|false}
//                      {type: "strata:preview-drawn"}  {type: "strata:preview-failed", message}
//
// It is a static file (not part of the app's bundle) so that the frame's
// document has no inline script: it inherits the dashboard's
// Content-Security-Policy, which admits only this origin's scripts.
(function () {
  "use strict";
  var me = document.currentScript;
  var rendererUrl = me && me.getAttribute("data-renderer");
  var stage = document.getElementById("stage");
  var last = null;
  var cleanup = null;

  function tell(msg) {
    window.parent.postMessage(msg, "*");
  }

  function api() {
    var m = window.StrataMessages;
    return m && typeof m.preview === "function" ? m : null;
  }

  function draw(msg) {
    last = msg;
    var m = api();
    if (!m) return;
    try {
      if (typeof cleanup === "function") cleanup();
      cleanup = null;
      // Whatever the renderer left from the previous step goes too.
      if (typeof m.clear === "function") m.clear();
      var out = m.preview(msg.step, {
        target: document.getElementById("target"),
        stepIndex: msg.stepIndex,
        stepCount: msg.stepCount,
      });
      if (typeof out === "function") cleanup = out;
      else if (out && typeof out.destroy === "function") cleanup = function () { out.destroy(); };
      tell({ type: "strata:preview-drawn" });
    } catch (e) {
      tell({ type: "strata:preview-failed", message: String((e && e.message) || e) });
    }
  }

  window.addEventListener("message", function (e) {
    if (e.source !== window.parent) return;
    var msg = e.data;
    if (msg && msg.type === "strata:preview" && msg.step) draw(msg);
  });

  function ready() {
    var ok = !!api();
    tell({ type: "strata:preview-ready", renderer: ok });
    if (!ok) stage.setAttribute("data-renderer", "missing");
    if (last) draw(last);
  }

  if (!rendererUrl) return ready();
  var s = document.createElement("script");
  s.src = rendererUrl;
  s.onload = ready;
  s.onerror = ready;
  document.head.appendChild(s);
})();
