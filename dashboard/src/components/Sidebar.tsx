import { Link } from "./Link";
import { activeItem, type NavItem } from "./nav";
import { withParams } from "../router";

/** Sidebar is the app's navigation, the signed-in user and sign-out. */
export function Sidebar(props: {
  items: NavItem[];
  path: string;
  search: URLSearchParams;
  email: string;
  onLogout: () => void;
}) {
  const active = activeItem(props.items, props.path);
  return (
    <nav class="sidebar" aria-label="Main">
      <div class="brand">
        <img src="/favicon.svg" alt="" width={24} height={24} />
        <span>Strata</span>
      </div>
      <ul>
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
    </nav>
  );
}
