import { Link } from "./Link";

/** NotFound is the page for a path the dashboard does not have. */
export function NotFound(props: { home: string }) {
  return (
    <section class="page" data-testid="not-found">
      <h1>Page not found</h1>
      <p>There is no page at this address.</p>
      <p>
        <Link href={props.home}>Go to the overview</Link>
      </p>
    </section>
  );
}
