import type { ComponentChildren } from "preact";
import { onLinkClick } from "../router";

/** Link is an in-app link: a real href (open in a new tab works) that navigates without a reload. */
export function Link(props: { href: string; class?: string; title?: string; children: ComponentChildren; "aria-current"?: "page" }) {
  return (
    <a href={props.href} class={props.class} title={props.title} aria-current={props["aria-current"]} onClick={onLinkClick}>
      {props.children}
    </a>
  );
}
