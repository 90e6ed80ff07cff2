import type { ComponentChildren } from "preact";

/**
 * ComingSoon is the honest state of a page that is not built yet: what it
 * will show, and no made-up data.
 */
export function ComingSoon(props: { title: string; children: ComponentChildren }) {
  return (
    <section class="page">
      <h1>{props.title}</h1>
      <div class="empty-state" data-testid="coming-soon">
        <p class="badge">Coming soon</p>
        <p>{props.children}</p>
        <p class="muted">This page is not built yet, so it shows no data.</p>
      </div>
    </section>
  );
}
