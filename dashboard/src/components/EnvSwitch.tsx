import type { DataEnv } from "../types";

/**
 * EnvSwitch picks the data the chart pages show: Live, or Test (the events
 * sent with test keys, which the query API keeps apart). The choice lives
 * in the URL (?env=test); the switch reports changes through onChange.
 */
export function EnvSwitch(props: { env: DataEnv; onChange: (env: DataEnv) => void }) {
  return (
    <div class="switcher env-switch">
      <span class="label" id="env-switch-label">
        Data
      </span>
      <div class="segmented" role="group" aria-labelledby="env-switch-label">
        <button type="button" aria-pressed={props.env === "live"} onClick={() => props.onChange("live")}>
          Live
        </button>
        <button type="button" class="test" aria-pressed={props.env === "test"} onClick={() => props.onChange("test")}>
          Test
        </button>
      </div>
    </div>
  );
}

/**
 * TestDataBanner heads every chart page that shows test data, so that test
 * numbers are never read as live ones, with the way back to live data.
 */
export function TestDataBanner(props: { onLive: () => void }) {
  return (
    <div class="banner test-data" role="status" data-testid="test-data-banner">
      <p>
        <strong>Showing test data:</strong> only the events sent with test keys (<code>st_test_…</code>), which are kept apart from live data.
      </p>
      <button type="button" class="button secondary small" onClick={props.onLive}>
        Show live data
      </button>
    </div>
  );
}
