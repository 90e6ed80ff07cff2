// Errors next to the fields they are about. A form's fields are named by
// their API path (name, variants[1].weight), the path a 400 names first
// ("variants[1].weight: must be …"), so the server's message lands next to
// the input it is about, which gets aria-invalid and focus.
import { ApiError, fieldError, message } from "../api";

/** Errors of a form: by field path, and "" for the form as a whole. */
export type FieldErrors = Record<string, string>;

/** fieldId is the element id of a field: variants[1].weight → flag-variants-1-weight. */
export function fieldId(prefix: string, field: string): string {
  return `${prefix}-${field.replace(/[[\].]+/g, "-").replace(/-$/, "")}`;
}

/** invalid ties an input to its error, when it has one. */
export function invalid(errors: FieldErrors, prefix: string, field: string): { "aria-invalid"?: true; "aria-describedby"?: string } {
  return errors[field] ? { "aria-invalid": true, "aria-describedby": `${fieldId(prefix, field)}-error` } : {};
}

/** FieldError is a field's error, right below it. */
export function FieldError(props: { errors: FieldErrors; prefix: string; field: string }) {
  const e = props.errors[props.field];
  if (!e) return null;
  return (
    <p class="field-error" id={`${fieldId(props.prefix, props.field)}-error`} role="alert" data-field={props.field}>
      {e}
    </p>
  );
}

/**
 * errorsFrom places a failed call's message: a 400 naming a field the form
 * has goes next to it; an error code listed in conflicts (409
 * flag_key_taken → key) next to that field; anything else on the form.
 */
export function errorsFrom(err: unknown, has: (field: string) => boolean, conflicts: Record<string, string> = {}): FieldErrors {
  const f = fieldError(err);
  if (f && has(f.field)) return { [f.field]: f.message };
  if (err instanceof ApiError && conflicts[err.code] && has(conflicts[err.code])) return { [conflicts[err.code]]: err.message };
  return { "": message(err) };
}

/** focusFirst moves focus to the first field with an error, in the form's order. */
export function focusFirst(form: HTMLFormElement | null, errors: FieldErrors, prefix: string): void {
  if (!form) return;
  for (const el of form.querySelectorAll<HTMLElement>("input, select, textarea")) {
    const field = Object.keys(errors).find((f) => f && el.id === fieldId(prefix, f));
    if (field) {
      el.focus();
      return;
    }
  }
}
