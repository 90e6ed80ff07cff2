import type { FunctionComponent } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ErrorState, Skeleton } from "../components/States";

/**
 * ApiReference is the API reference page. Its code and the YAML parser it
 * needs are a chunk of their own, loaded on the first visit, so that the
 * pages people use every day do not carry them.
 */
export function ApiReference() {
  const [view, setView] = useState<{ View: FunctionComponent } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = () => {
    setError(null);
    import("./ApiReferenceView").then(
      (m) => setView({ View: m.ApiReferenceView }),
      () => setError("The API reference could not be loaded. Check your connection and try again."),
    );
  };
  useEffect(load, []);
  if (view) return <view.View />;
  return (
    <section class="page">
      <h1>API reference</h1>
      {error ? <ErrorState message={error} onRetry={load} /> : <Skeleton rows={6} label="Loading the API reference…" />}
    </section>
  );
}
