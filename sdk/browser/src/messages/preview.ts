/**
 * The dashboard's live preview: one step rendered into the current document
 * exactly as pages show it, without fetching, tracking or storing anything.
 */
import { anchor } from "./renderer.js";
import type { AnswerValue, Step } from "./types.js";
import { mount, show } from "./view.js";

/** A button of the previewed step. */
export type PreviewAction = "close" | "back" | "next" | "done" | "cta";

/** Options of preview(); all are optional. */
export interface PreviewOptions {
  /** The step's position (0-based) and the flow's number of steps, for "2 of 3", Back, Next and Done. Default 0 of 1. */
  index?: number;
  count?: number;
  /** A survey answer to show as given. */
  answer?: AnswerValue;
  /** Called when a button is pressed (nothing else happens); Escape is "close". */
  onAction?: (action: PreviewAction) => void;
  /** Called with every change of the survey answer (undefined: none). */
  onAnswer?: (value: AnswerValue | undefined) => void;
}

/** What preview() returns. */
export interface PreviewHandle {
  /** close removes the preview. */
  close(): void;
}

let current: PreviewHandle | undefined;

/**
 * preview renders `step` (any kind) into the current document, replacing the
 * previous preview. A tooltip is anchored to the element its selector matches,
 * or, when it matches nothing or throws, shown in the middle of the viewport.
 */
export function preview(step: Step, options: PreviewOptions = {}): PreviewHandle {
  if (current) current.close();
  const count = Math.max(1, options.count || 1);
  const index = Math.min(Math.max(0, options.index || 0), count - 1);
  const m = mount();
  const act = (a: PreviewAction) => () => options.onAction && options.onAction(a);
  const hide = show(
    m.root,
    step,
    { index, count, back: index > 0, last: index == count - 1 },
    { close: act("close"), back: act("back"), next: act("next"), done: act("done"), cta: act("cta"), answer: (v) => options.onAnswer && options.onAnswer(v) },
    options.answer,
    step.kind == "tooltip" ? anchor(step) : null,
  );
  const handle: PreviewHandle = {
    close() {
      hide();
      m.remove();
      if (current == handle) current = undefined;
    },
  };
  return (current = handle);
}
