import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import type { Step } from "../types";

/** The SDK's message renderer, which draws the preview as pages will see it. */
export const rendererPath = "/sdk/v1/messages.min.js";

/**
 * The preview frame's page (public/message-preview.html): a stand-in page
 * with an element for tooltips to point at, and a script that loads the
 * renderer and draws what it is posted. The server gives it a policy of its
 * own: the renderer's shadow root holds an inline stylesheet, which the
 * dashboard's policy refuses.
 */
export const previewPath = "/message-preview.html";

/** How long after the last change the preview is drawn again. */
export const redrawDelayMs = 150;

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
  const latest = useRef(props);
  latest.current = props;

  const post = () => {
    const p = latest.current;
    if (!p.step) return;
    // The frame's origin is opaque ("null"), so no narrower target exists;
    // what is posted is the draft being typed, nothing secret.
    frame.current?.contentWindow?.postMessage({ type: "strata:preview", step: p.step, stepIndex: p.stepIndex, stepCount: p.stepCount }, "*");
  };

  // A layout effect, run in the same task that inserts the frame: a plain
  // effect waits for the next paint, and on a busy machine the frame's
  // "ready" could arrive first and be missed, leaving the preview loading.
  useLayoutEffect(() => {
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

  // Drawn again once typing pauses: each drawing replays the message's
  // entrance, which would flicker at every key.
  const key = JSON.stringify([props.step, props.stepIndex, props.stepCount]);
  useEffect(() => {
    if (state !== "ready") return;
    const t = setTimeout(post, redrawDelayMs);
    return () => clearTimeout(t);
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
        src={previewPath}
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
