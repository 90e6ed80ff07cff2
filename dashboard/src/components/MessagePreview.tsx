import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { Step } from "../messageTypes";

/** The SDK's message renderer, which draws the preview as pages will see it. */
export const rendererPath = "/sdk/v1/messages.min.js";

/**
 * previewDocument is the preview frame's page: a stand-in page with an
 * element for tooltips to point at, the frame's own stylesheet and
 * script (public/message-preview.*), and the renderer they load. No
 * inline script or style: the frame inherits the dashboard's
 * Content-Security-Policy.
 */
export function previewDocument(origin: string): string {
  const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
    `<link rel="stylesheet" href="${esc(origin)}/message-preview.css"></head><body>` +
    `<div id="stage"><div class="bar"></div><div class="bar short"></div><span id="target">Target element</span>` +
    `<div class="bar"></div><div class="bar short"></div></div>` +
    `<script src="${esc(origin)}/message-preview.js" data-renderer="${esc(origin + rendererPath)}"></script></body></html>`
  );
}

/** The frame loads the renderer, then has it (ready) or not. */
type FrameState = "loading" | "ready" | "no-renderer";

/** The messages the preview frame sends (public/message-preview.js). */
interface FrameMessage {
  type: "strata:preview-ready" | "strata:preview-drawn" | "strata:preview-failed";
  renderer?: boolean;
  message?: string;
}

/**
 * MessagePreview shows a step as the SDK's renderer draws it, in a
 * sandboxed frame (scripts only, an opaque origin): the dashboard's CSS
 * cannot reach the message and the message's cannot reach the dashboard.
 * The step is posted to the frame whenever it changes, so the preview
 * follows what is typed.
 */
export function MessagePreview(props: { step: Step | null; label: string; stepIndex: number; stepCount: number }) {
  const frame = useRef<HTMLIFrameElement>(null);
  const [state, setState] = useState<FrameState>("loading");
  const [error, setError] = useState("");
  const srcdoc = useMemo(() => previewDocument(typeof location !== "undefined" ? location.origin : ""), []);
  const latest = useRef(props);
  latest.current = props;

  const post = () => {
    const p = latest.current;
    if (!p.step) return;
    // The frame's origin is opaque ("null"), so no narrower target exists;
    // what is posted is the draft being typed, nothing secret.
    frame.current?.contentWindow?.postMessage({ type: "strata:preview", step: p.step, stepIndex: p.stepIndex, stepCount: p.stepCount }, "*");
  };

  useEffect(() => {
    const onMessage = (e: MessageEvent) => {
      if (!frame.current || e.source !== frame.current.contentWindow) return;
      const msg = e.data as FrameMessage | null;
      if (msg?.type === "strata:preview-ready") {
        setState(msg.renderer ? "ready" : "no-renderer");
        post();
      } else if (msg?.type === "strata:preview-failed") {
        setError(msg.message ?? "");
      } else if (msg?.type === "strata:preview-drawn") {
        setError("");
      }
    };
    window.addEventListener("message", onMessage);
    return () => window.removeEventListener("message", onMessage);
  }, []);

  const key = JSON.stringify([props.step, props.stepIndex, props.stepCount]);
  useEffect(() => {
    if (state === "ready") post();
  }, [key, state]);

  return (
    <div class="message-preview" data-testid="message-preview" data-state={state}>
      <p class="hint" aria-live="polite">
        {props.label}
      </p>
      <iframe
        ref={frame}
        class="preview-frame"
        title="Message preview"
        sandbox="allow-scripts"
        srcdoc={srcdoc}
      />
      {state === "no-renderer" ? (
        <p class="hint" role="status" data-testid="preview-unavailable">
          The preview needs the SDK's message renderer, which this server does not serve (<code>{rendererPath}</code>).
        </p>
      ) : null}
      {error ? (
        <p class="field-error" role="status" data-testid="preview-error">
          The renderer could not draw this step: {error}
        </p>
      ) : null}
    </div>
  );
}
