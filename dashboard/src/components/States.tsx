import type { ComponentChildren } from "preact";
import { snippet } from "../format";
import type { NoticeText } from "../load";
import { during, presetRange, searchWithRange, span, type DateRange } from "../range";
import type { DataEnv, EventNames, Product } from "../types";
import { Link } from "./Link";

/** Skeleton is the loading state of a chart or table: grey blocks, announced to screen readers. */
export function Skeleton(props: { rows?: number; label?: string }) {
  return (
    <div class="skeleton" role="status" aria-live="polite" data-testid="skeleton">
      <span class="visually-hidden">{props.label ?? "Loading…"}</span>
      {Array.from({ length: props.rows ?? 4 }, (_, i) => (
        <div key={i} class="skeleton-bar" />
      ))}
    </div>
  );
}

/** Notice is the outcome of a page's last action: what it did, or why it failed. */
export function Notice(props: { notice: NoticeText }) {
  return (
    <>
      {props.notice.ok ? (
        <p class="ok" role="status">
          {props.notice.ok}
        </p>
      ) : null}
      {props.notice.error ? <ErrorState message={props.notice.error} /> : null}
    </>
  );
}

/** ErrorState shows the server's message for a failed call, with a retry. */
export function ErrorState(props: { message: string; onRetry?: () => void }) {
  return (
    <div class="error-state" role="alert">
      <p>{props.message}</p>
      {props.onRetry ? (
        <button type="button" class="button secondary small" onClick={props.onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

/**
 * NoEvents is the empty state of a chart page whose product has never
 * received an event: how to send the first one, with the script tag. With env
 * "test" it speaks of test events, sent with a test key from a local page
 * or a server.
 */
export function NoEvents(props: { product: Product; env?: DataEnv; children?: ComponentChildren }) {
  const origin = typeof location !== "undefined" ? location.origin : "";
  const test = props.env === "test";
  return (
    <div class="empty-state" data-testid="no-events">
      <h2>{test ? "No test events yet" : "No events yet"}</h2>
      {props.children ?? (
        <p>
          Nothing was ever received {test ? "from test keys " : ""}for {props.product.name}.
        </p>
      )}
      {test ? (
        <p>
          To send test events, create a test key and add this script tag to a page served from your machine (<code>localhost</code>,{" "}
          <code>127.0.0.1</code>, <code>*.test</code>…: test keys are refused from other sites), or <code>POST /e</code> from your server:
        </p>
      ) : (
        <p>
          To send your first event, create an API key and add this script tag to your pages (it records page views by itself;
          call <code>strata.track("event_name")</code> for others), or <code>POST /e</code> from your server:
        </p>
      )}
      <code class="snippet" data-testid="install-snippet">
        {snippet(origin, test ? "st_test_YOUR_KEY" : "st_live_YOUR_KEY")}
      </code>
      <p>
        <Link class="button" href={`/settings/products/${props.product.id}?product=${props.product.id}`}>
          {test ? "Create a test key" : "Create an API key"}
        </Link>
      </p>
    </div>
  );
}

/**
 * NoEventsInRange is the empty state of a chart page whose product has
 * events, but none in the range: it names the days and offers a wider
 * range; installing the SDK is not the answer there.
 */
export function NoEventsInRange(props: { product: Product; range: DateRange; env?: DataEnv }) {
  const test = props.env === "test" ? "test " : "";
  const widest = presetRange("365d");
  const wider =
    typeof location !== "undefined" && props.range.key !== "365d"
      ? `${location.pathname}?${searchWithRange(new URLSearchParams(location.search), widest)}`
      : null;
  return (
    <div class="empty-state" data-testid="empty-range">
      <h2>
        No {test}events {span(props.range)}
      </h2>
      <p>
        {props.product.name} has {test}events on other days, but none {during(props.range)}. Widen the date range in the top bar to see them.
      </p>
      {wider ? (
        <p>
          <Link class="button secondary" href={wider}>
            Show the last 365 days
          </Link>
        </p>
      ) : null}
    </div>
  );
}

/**
 * NoData is the empty state of a chart page with nothing in its range:
 * how to send the first event when the product has never received one
 * (names.productHasEvents), else that the range is empty.
 */
export function NoData(props: { product: Product; range: DateRange; env?: DataEnv; names: EventNames }) {
  return props.names.productHasEvents ? (
    <NoEventsInRange product={props.product} range={props.range} env={props.env} />
  ) : (
    <NoEvents product={props.product} env={props.env} />
  );
}

/** NoProduct is shown when the workspace has no product yet. */
export function NoProduct() {
  return (
    <div class="empty-state">
      <p>There is no product yet.</p>
      <Link class="button" href="/settings/products">
        Create a product
      </Link>
    </div>
  );
}

/**
 * ProductNotFound is shown in place of a page when the URL names a product
 * the user cannot see (it does not exist, or belongs to a workspace they
 * are not a member of): nothing is shown rather than another product's
 * data. It links to the products list and to the same page of the first
 * product.
 */
export function ProductNotFound(props: { id: string; list: string; first: Product; firstHref: string }) {
  return (
    <section class="page" data-testid="product-not-found">
      <h1>Product not found</h1>
      <div class="empty-state">
        <p>
          There is no product <code>{props.id}</code> that you can see: it does not exist, or it belongs to a workspace you are not a member
          of.
        </p>
        <p class="empty-actions">
          <Link class="button" href={props.firstHref}>
            Open {props.first.name}
          </Link>
          <Link class="button secondary" href={props.list}>
            Go to the products list
          </Link>
        </p>
      </div>
    </section>
  );
}
