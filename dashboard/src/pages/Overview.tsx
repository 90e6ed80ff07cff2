import { Link } from "../components/Link";
import { describe, type DateRange } from "../range";
import type { Product } from "../types";

/**
 * Overview is the home page. Its charts are not built yet; it says so and
 * points at the one thing a new product needs, an API key.
 */
export function Overview(props: { product: Product | null; range: DateRange }) {
  return (
    <section class="page">
      <h1>Overview</h1>
      <div class="empty-state" data-testid="coming-soon">
        <p class="badge">Coming soon</p>
        <p>
          The overview will chart {props.product ? <strong>{props.product.name}</strong> : "this product"}'s visitors, top events and
          conversions for {describe(props.range).toLowerCase()}.
        </p>
        <p class="muted">This page is not built yet, so it shows no data.</p>
      </div>
      {props.product ? (
        <div class="card">
          <h2>Send your first events</h2>
          <p>
            Create an API key for this product and add the script tag it comes with to your pages, or send events to <code>POST /e</code>{" "}
            from your server.
          </p>
          <Link class="button" href={`/settings/products/${props.product.id}?product=${props.product.id}`}>
            Manage API keys
          </Link>
        </div>
      ) : null}
    </section>
  );
}
