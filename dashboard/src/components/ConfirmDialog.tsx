import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";

/**
 * ConfirmDialog asks before an action that cannot be undone. Escape or
 * Cancel closes it; focus starts on Cancel, the safe choice.
 */
export function ConfirmDialog(props: {
  title: string;
  confirmLabel: string;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
  children: ComponentChildren;
}) {
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    cancel.current?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") props.onCancel();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);
  return (
    <div class="overlay">
      <div class="dialog" role="alertdialog" aria-modal="true" aria-labelledby="confirm-title">
        <h2 id="confirm-title">{props.title}</h2>
        <div class="dialog-body">{props.children}</div>
        <div class="dialog-actions">
          <button type="button" class="button secondary" ref={cancel} onClick={props.onCancel}>
            Cancel
          </button>
          <button type="button" class="button danger" disabled={props.busy} onClick={props.onConfirm}>
            {props.confirmLabel}
          </button>
        </div>
      </div>
    </div>
  );
}
