import type { ComponentChildren } from "preact";
import { Link } from "./Link";

/** Crumb is the way back from an item's page to the list the item is in. */
export function Crumb(props: { href: string; children: ComponentChildren }) {
  return (
    <p class="crumbs">
      <Link href={props.href}>{props.children}</Link>
    </p>
  );
}

/**
 * ItemHead opens an item's page: the crumb back to its list, the item's
 * title and, beside it, what can be done to the item (`actions`, in a row
 * of buttons).
 */
export function ItemHead(props: {
  list: string;
  listLabel: string;
  title: ComponentChildren;
  titleClass?: string;
  actions?: ComponentChildren;
}) {
  return (
    <>
      <Crumb href={props.list}>{props.listLabel}</Crumb>
      <div class="section-head tight">
        <h1 class={props.titleClass}>{props.title}</h1>
        {props.actions !== undefined ? <div class="actions">{props.actions}</div> : null}
      </div>
    </>
  );
}
