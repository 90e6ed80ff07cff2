import type { ComponentChildren } from "preact";

/**
 * Table is a list page's data table in its horizontal scroller: labelled for
 * screen readers, with the header cells given as `head` and the rows as
 * children. With `actions`, a last header cell names the column of
 * RowActions, read only by screen readers.
 */
export function Table(props: {
  label: string;
  class?: string;
  head: ComponentChildren;
  actions?: boolean;
  children: ComponentChildren;
}) {
  return (
    <div class="table-scroll">
      <table class={props.class ?? "table"} aria-label={props.label}>
        <thead>
          <tr>
            {props.head}
            {props.actions ? (
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

/** RowActions is a row's last cell: its buttons and links, laid out side by side (stacked on a narrow screen). */
export function RowActions(props: { children: ComponentChildren }) {
  return (
    <td class="row-actions">
      <div>{props.children}</div>
    </td>
  );
}
