import { useEffect, useRef, useState } from "preact/hooks";
import { Link } from "./Link";
import { activeItem, type NavItem } from "./nav";
import { withParams } from "../router";

/**
 * Sidebar is the app's navigation, the signed-in user and sign-out. On a
 * narrow screen (720 px and less) the entries collapse behind a Menu
 * button (aria-expanded, aria-controls), so that they do not fill the top
 * of every page: Escape closes the menu and returns focus to the button,
 * a click outside it closes it, and picking a page closes it and moves
 * focus to the page (main, the id of the main region), since the link
 * that had it is hidden.
 */
export function Sidebar(props: {
  items: NavItem[];
  path: string;
  search: URLSearchParams;
  email: string;
  onLogout: () => void;
  main?: string;
}) {
  const active = activeItem(props.items, props.path);
  const [open, setOpen] = useState(false);
  const nav = useRef<HTMLElement>(null);
  const button = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape") return;
      setOpen(false);
      button.current?.focus();
    };
    const onClick = (e: MouseEvent) => {
      if (!nav.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener("keydown", onKey);
    document.addEventListener("click", onClick);
    return () => {
      document.removeEventListener("keydown", onKey);
      document.removeEventListener("click", onClick);
    };
  }, [open]);
  // Another page (back and forward included) closes the menu.
  useEffect(() => setOpen(false), [props.path]);
  // A page picked from the open menu closes it, even the current one, and
  // the page takes focus, since the link that had it is hidden.
  const picked = (e: MouseEvent) => {
    if (!open || !(e.target as Element | null)?.closest?.("a")) return;
    setOpen(false);
    if (props.main) document.getElementById(props.main)?.focus();
  };

  return (
    <nav class={open ? "sidebar open" : "sidebar"} aria-label="Main" ref={nav}>
      <div class="sidebar-head">
        <div class="brand">
          <img src="/favicon.svg" alt="" width={24} height={24} />
          <span>Strata</span>
        </div>
        <button
          type="button"
          class="menu-button"
          aria-expanded={open ? "true" : "false"}
          aria-controls="nav-menu"
          ref={button}
          onClick={() => setOpen((o) => !o)}
        >
          <span class="menu-icon" aria-hidden="true" />
          Menu
        </button>
      </div>
      <div class="nav-menu" id="nav-menu">
        <ul onClick={picked}>
          {props.items.map((i) => (
            <li key={i.path}>
              <Link
                href={withParams(i.path, props.search)}
                class={i === active ? "nav-item active" : "nav-item"}
                aria-current={i === active ? "page" : undefined}
              >
                {i.label}
              </Link>
            </li>
          ))}
        </ul>
        <div class="whoami">
          <span class="email" title={props.email}>
            {props.email}
          </span>
          <button type="button" class="link-button" onClick={props.onLogout}>
            Sign out
          </button>
        </div>
      </div>
    </nav>
  );
}
