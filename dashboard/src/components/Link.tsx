import type { ComponentChildren } from "preact";
import { onLinkClick } from "../router";

/**
 * Link is an in-app link: a real href (open in a new tab works) that navigates without a
 * reload, unless `reload` is set: then the page is loaded anew, as a replay's page must be,
 * since the server gives its document a policy of its own (docs/replay.md).
 */
export function Link(props: {
  href: string;
  class?: string;
  title?: string;
  reload?: boolean;
  children: ComponentChildren;
  "aria-current"?: "page";
}) {
  return (
    <a href={props.href} class={props.class} title={props.title} aria-current={props["aria-current"]} onClick={props.reload ? undefined : onLinkClick}>
      {props.children}
    </a>
  );
}
