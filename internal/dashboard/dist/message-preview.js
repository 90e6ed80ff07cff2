// The message editor's preview frame (message-preview.html, framed by
// src/components/MessagePreview.tsx). It runs in a sandboxed iframe
// (allow-scripts only: an opaque origin, no access to the dashboard, its
// cookies or its styles), loads the SDK's message renderer from the URL its
// script tag names (data-renderer), and draws the step the dashboard posts
// with the renderer's preview API, window.StrataMessages.preview(step,
// {index, count}), which replaces the previous preview itself:
//
//   dashboard → frame  {type: "strata:preview", step, stepIndex, stepCount}
//   frame → dashboard  {type: "strata:preview-ready", renderer: true|false}
//                      {type: "strata:preview-drawn"}  {type: "strata:preview-failed", message}
//
// The server serves the frame's page with a policy of its own
// (internal/dashboard): this origin's scripts only, and inline styles,
// which the renderer's shadow root holds.
(function () {
  "use strict";
  var me = document.currentScript;
  var rendererUrl = me && me.getAttribute("data-renderer");
  var stage = document.getElementById("stage");
  var last = null;

  // A modal takes the focus when it shows, as it should in a page; here it
  // would take it from the editor's field with every key typed. The preview
  // is to be looked at, so nothing in this frame moves the focus itself.
  HTMLElement.prototype.focus = function () {};

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
      m.preview(msg.step, { index: msg.stepIndex, count: msg.stepCount });
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
