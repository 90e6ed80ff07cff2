import { useState } from "preact/hooks";
import { api, type ExperimentAction } from "../api";
import { TimeChart } from "../charts/TimeChart";
import { num } from "../charts/time";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { Crumb, ItemHead } from "../components/ItemHead";
import { Link } from "../components/Link";
import { ErrorState, NoProduct, Notice, Skeleton } from "../components/States";
import { Table } from "../components/Table";
import { chance, percent, points, pValue, relative, when } from "../format";
import { useAction, useLoad } from "../load";
import { useAllows } from "../roles";
import type { ArmResult, Experiment, ExperimentResults, Flag, FlagVariant, MetricResult, Product, SampleRatioCheck } from "../types";
import { ExperimentForm, actionsFor, metricLabel } from "./Experiments";
import { StatusPill, armsText } from "./Flags";

/**
 * ExperimentPage is one experiment: its settings and status changes, the
 * sample-ratio banner when the check paused it, its results (each arm's
 * conversion rate over time, a table per metric with the uplift against
 * control), and applying the winner, which preselects the arm that leads
 * and asks first, warning when the result is not significant or the sample
 * is small. Once completed, the header shows the arms the flag has now (the
 * winner at 100 %), not the weights the experiment ran with.
 */
export function ExperimentPage(props: { product: Product | null; id: number }) {
  if (!props.product) return <NoProduct />;
  return <ExperimentView key={`${props.product.id}/${props.id}`} product={props.product} id={props.id} />;
}

function ExperimentView(props: { product: Product; id: number }) {
  const pid = props.product.id;
  const [loaded, reload] = useLoad(async () => {
    const e = await api.experiment(pid, props.id);
    const flag = await api.flag(pid, e.flagId).catch(() => null);
    return { experiment: e, flag };
  }, [pid, props.id]);
  // The experiment as the last action left it, over the one loaded.
  const [changed, setChanged] = useState<Experiment | null>(null);
  const [version, setVersion] = useState(0);
  const [editing, setEditing] = useState(false);
  const [winner, setWinner] = useState("");
  const [confirming, setConfirming] = useState(false);
  const action = useAction<ExperimentAction | "apply">();
  // Status changes, edits and applying the winner need the member role.
  const canWrite = useAllows("member");
  const busy = action.busy !== null;
  const e = changed ?? (loaded.state === "done" ? loaded.data.experiment : null);
  const flag: Flag | null = loaded.state === "done" ? loaded.data.flag : null;
  const [results, reloadResults] = useLoad<ExperimentResults>(
    e && e.status !== "draft" ? () => api.experimentResults(pid, props.id) : null,
    [pid, props.id, e?.status ?? null, version],
  );
  const list = `/experiments?product=${pid}`;

  if (loaded.state === "loading" || loaded.state === "idle") return <Skeleton rows={6} label="Loading the experiment…" />;
  if (loaded.state === "failed" || !e) {
    return (
      <section class="page">
        <Crumb href={list}>Experiments</Crumb>
        <ErrorState message={loaded.state === "failed" ? loaded.error : "The experiment could not be read."} onRetry={reload} />
      </section>
    );
  }

  const updated = (out: Experiment) => {
    setChanged(out);
    setVersion((v) => v + 1);
  };
  const act = (to: ExperimentAction, label: string) =>
    action.run(to, async () => {
      const out = await api.experimentAction(pid, e.id, to);
      updated(out);
      return `${label}: the experiment is ${out.status}.`;
    });
  const read = results.state === "done" ? results.data : null;
  const arms = flag?.variants.map((v) => v.key) ?? (read ? read.arms.map((a) => a.variant) : []);
  // The arm that leads is preselected once the results are read.
  const chosen = winner || (read ? leader(read) : "") || arms[0] || "";
  const warnings = read ? applyWarnings(read, chosen) : [];
  // A completed experiment's flag gives its winner to every user.
  const shownArms: FlagVariant[] | null =
    e.status === "completed" && e.winner && flag
      ? flag.variants.map((v) => ({ ...v, weight: v.key === e.winner ? 100 : 0 }))
      : flag
        ? flag.variants
        : null;
  const apply = async () => {
    await action.run("apply", async () => {
      const out = await api.applyWinner(pid, e.id, chosen);
      updated(out);
      return `Applied ${out.winner || chosen}: every user now gets it, and the experiment is completed.`;
    });
    setConfirming(false);
  };
  const srm = e.status === "paused" && e.pauseReason === "sample_ratio_mismatch";
  const check = e.sampleRatio ?? (results.state === "done" ? results.data.sampleRatio : null) ?? null;

  return (
    <section class="page">
      <ItemHead
        list={list}
        listLabel="Experiments"
        title={e.name}
        actions={
          <>
            {(canWrite ? actionsFor[e.status] : []).map((a) => (
              <button key={a.action} type="button" class={`button${a.action === "pause" ? " secondary" : ""}`} disabled={busy} onClick={() => void act(a.action, a.label)}>
                {a.label}
              </button>
            ))}
            {e.status !== "completed" && !editing && canWrite ? (
              <button type="button" class="button secondary" onClick={() => setEditing(true)}>
                Edit
              </button>
            ) : null}
          </>
        }
      />
      <dl class="facts">
        <div>
          <dt>Status</dt>
          <dd>
            <StatusPill experiment={e} />
            {e.status === "completed" && e.winner ? <span data-testid="winner"> · {e.winner} applied to every user</span> : null}
          </dd>
        </div>
        <div>
          <dt>Flag</dt>
          <dd>
            <Link href={`/flags/${e.flagId}?product=${pid}`}>
              <code>{e.flagKey}</code>
            </Link>
          </dd>
        </div>
        {shownArms ? (
          <div>
            <dt>{e.status === "completed" && e.winner ? "Final arms" : "Arms"}</dt>
            <dd data-testid="arms">{armsText(shownArms)}</dd>
          </div>
        ) : null}
        <div>
          <dt>Started</dt>
          <dd>{when(e.startedAt, "Not started")}</dd>
        </div>
        <div>
          <dt>Holdout</dt>
          <dd>{e.holdout}%</dd>
        </div>
        <div>
          <dt>Primary metric</dt>
          <dd>{metricLabel(e.primaryEvent)}</dd>
        </div>
        {e.secondaryEvents.length > 0 ? (
          <div>
            <dt>Secondary metrics</dt>
            <dd>{e.secondaryEvents.join(", ")}</dd>
          </div>
        ) : null}
        {e.startDate || e.endDate ? (
          <div>
            <dt>Dates</dt>
            <dd>
              {e.startDate ? e.startDate.slice(0, 10) : "start"} – {e.endDate ? e.endDate.slice(0, 10) : "now"} (UTC)
            </dd>
          </div>
        ) : null}
      </dl>

      {srm ? <SrmBanner check={check} /> : null}
      <Notice notice={action.notice} />

      {editing ? (
        <section class="card" aria-labelledby="edit-experiment">
          <h2 id="edit-experiment">Edit experiment</h2>
          <ExperimentForm
            product={pid}
            experiment={e}
            flags={flag ? [flag] : []}
            onSaved={(out) => {
              setEditing(false);
              updated(out);
              action.setNotice({ ok: "Saved." });
            }}
            onCancel={() => setEditing(false)}
          />
        </section>
      ) : null}

      {e.status === "draft" ? (
        <div class="empty-state" data-testid="not-started">
          <p>Not started yet.</p>
          <p class="muted">
            Start it to split users between the arms of <code>{e.flagKey}</code>; results appear here as exposures arrive.
          </p>
        </div>
      ) : (
        <section class="card" aria-labelledby="results-title">
          <div class="section-head tight">
            <h2 id="results-title">Results</h2>
            <button type="button" class="button secondary small" disabled={results.state === "loading"} onClick={reloadResults}>
              Refresh
            </button>
          </div>
          {results.state === "loading" && !results.previous ? <Skeleton rows={5} label="Reading the results…" /> : null}
          {results.state === "failed" ? <ErrorState message={results.error} onRetry={reloadResults} /> : null}
          {results.state === "done" || (results.state === "loading" && results.previous) ? (
            <ResultsView results={results.state === "done" ? results.data : results.previous!} />
          ) : null}
        </section>
      )}

      {(e.status === "running" || e.status === "paused") && canWrite ? (
        <section class="card" aria-labelledby="winner-title">
          <h2 id="winner-title">Apply the winner</h2>
          <p class="muted">
            Ends the experiment: the flag goes to every user with the chosen arm, and the others are switched off.
          </p>
          <div class="inline-form">
            <label>
              Winning arm
              <select value={chosen} onChange={(ev) => setWinner(ev.currentTarget.value)}>
                {arms.map((a) => (
                  <option key={a} value={a}>
                    {a}
                  </option>
                ))}
              </select>
            </label>
            <button type="button" class="button" disabled={busy || !chosen} onClick={() => setConfirming(true)}>
              Apply winner
            </button>
          </div>
        </section>
      ) : null}

      {confirming ? (
        <ConfirmDialog title={`Apply ${chosen} to every user?`} confirmLabel={`Apply ${chosen}`} busy={busy} onConfirm={apply} onCancel={() => setConfirming(false)}>
          {warnings.length > 0 ? (
            <div class="guidance" role="status" data-testid="apply-warning">
              {warnings.map((w) => (
                <p key={w}>{w}</p>
              ))}
              <p>You can still apply it.</p>
            </div>
          ) : null}
          <p>
            The flag <code>{e.flagKey}</code> goes to every user (rollout 100%, enabled) with <strong>{chosen}</strong> at weight 100 and every
            other arm at 0, and the experiment is completed, so its holdout no longer applies. This cannot be undone.
          </p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}

/**
 * leader is the arm with the highest conversion rate on the primary metric:
 * control (the first arm) unless another arm's rate beats it.
 */
export function leader(r: ExperimentResults): string {
  const arms = r.metrics[0]?.arms ?? [];
  let best = arms[0];
  for (const a of arms.slice(1)) {
    if (best && a.exposed > 0 && a.rate > best.rate) best = a;
  }
  return best?.variant ?? r.arms[0]?.variant ?? "";
}

/**
 * applyWarnings says why applying `chosen` now may be premature: the
 * difference from control on the primary metric is not significant
 * (p ≥ 0.05, or no arm differs from control when control is chosen), or
 * some arm has fewer exposed users than the results recommend (the
 * recommended sample, else the minimum every arm needs).
 */
export function applyWarnings(r: ExperimentResults, chosen: string): string[] {
  const out: string[] = [];
  const primary = r.metrics[0];
  const control = r.arms[0]?.variant ?? "";
  if (primary) {
    const significant = (a: ArmResult) => a.pValue !== null && a.pValue < 0.05;
    if (chosen === control) {
      if (!primary.arms.slice(1).some(significant)) {
        out.push(`Not significant: no arm differs from ${control} on ${primary.label} at p < 0.05, so keeping ${control} is not a finding either.`);
      }
    } else {
      const arm = primary.arms.find((a) => a.variant === chosen);
      if (arm && !significant(arm)) {
        const p = arm.pValue === null ? "no p-value yet" : `p = ${pValue(arm.pValue)}`;
        out.push(`Not significant: ${chosen} against ${control} on ${primary.label} has ${p} (5% is the usual bar); the difference may be chance.`);
      }
    }
  }
  const target = r.recommendedPerArm ?? r.minExposedPerArm;
  const short = r.arms.filter((a) => a.exposed < target);
  if (short.length > 0) {
    const what = r.recommendedPerArm !== null ? `the recommended ${num(target)}` : `the minimum of ${num(target)}`;
    out.push(`Small sample: ${andList(short.map((a) => `${a.variant} has ${num(a.exposed)}`))} exposed users, below ${what} per arm.`);
  }
  return out;
}

/** andList joins words as "a, b and c". */
function andList(words: string[]): string {
  return words.length <= 1 ? words.join("") : `${words.slice(0, -1).join(", ")} and ${words[words.length - 1]}`;
}

/**
 * ResultsView shows an experiment's results: guidance while some arm has
 * too few exposed users, who was left out (holdout, users outside the
 * rollout, users exposed to more than one arm), each arm's cumulative conversion rate per UTC day on the
 * primary metric, and a table per metric.
 */
export function ResultsView(props: { results: ExperimentResults }) {
  const r = props.results;
  const short = r.arms.filter((a) => a.exposed < r.minExposedPerArm);
  return (
    <div class="results">
      {!r.enoughData ? (
        <div class="guidance" role="status" data-testid="too-early">
          <p>
            <strong>Too early to read:</strong> each arm needs at least {num(r.minExposedPerArm)} exposed users;{" "}
            {andList(short.map((a) => `${a.variant} has ${num(a.exposed)}`))}.
          </p>
          {r.recommendedPerArm !== null ? (
            <p>
              To detect a 10% relative change in control's conversion rate (80% power, 5% significance), plan for about{" "}
              <strong>{num(r.recommendedPerArm)}</strong> exposed users per arm.
            </p>
          ) : (
            <p class="muted">The recommended sample size shows once control has a conversion.</p>
          )}
        </div>
      ) : r.recommendedPerArm !== null ? (
        <p class="hint" data-testid="recommended">
          Recommended sample: about {num(r.recommendedPerArm)} exposed users per arm to detect a 10% relative change.
        </p>
      ) : null}
      <ul class="exposure" aria-label="Exposed users">
        {r.arms.map((a) => (
          <li key={a.variant} data-testid="exposed-arm">
            <span class="stat-label">{a.variant}</span>
            <span class="stat-value">{num(a.exposed)}</span>
            <span class="hint">exposed · weight {a.weight}%</span>
          </li>
        ))}
      </ul>
      <p class="hint" data-testid="left-out">
        Left out of every arm: {num(r.holdout)} holdout user{r.holdout === 1 ? "" : "s"}, {num(r.excluded)} user
        {r.excluded === 1 ? "" : "s"} outside the flag's rollout and {num(r.multipleArms)} user{r.multipleArms === 1 ? "" : "s"} exposed to more
        than one arm.
      </p>

      <h3 class="sub">Conversion rate over time</h3>
      <RateChart results={r} />

      {r.metrics.map((m, i) => (
        <MetricTable key={`${i}-${m.event}`} metric={m} control={r.arms[0]?.variant ?? ""} reliable={r.enoughData} />
      ))}
    </div>
  );
}

/** RateChart draws each arm's cumulative conversion rate on the primary metric, per UTC day. */
function RateChart(props: { results: ExperimentResults }) {
  const { timeline, arms } = props.results;
  if (timeline.length === 0) return <p class="empty">No exposures yet.</p>;
  const buckets = [...new Set(timeline.map((t) => t.date))].sort();
  const lines = arms.map((a) => {
    let last = 0;
    return {
      label: a.variant,
      data: buckets.map((d) => {
        const p = timeline.find((t) => t.date === d && t.variant === a.variant);
        if (p) last = p.rate;
        return last;
      }),
    };
  });
  return <TimeChart kind="line" interval="day" buckets={buckets} lines={lines} format={(v) => percent(v)} label="Cumulative conversion rate of each arm, per day" />;
}

/** Comparison is an uplift with its 95 % interval, or "—". */
function Comparison(props: { value: ArmResult["absoluteUplift"]; write: (x: number) => string; good: boolean }) {
  const v = props.value;
  if (!v) return <>—</>;
  const cls = props.good ? (v.low > 0 ? " better" : v.high < 0 ? " worse" : "") : "";
  return (
    <span class={`uplift${cls}`}>
      {props.write(v.estimate)}{" "}
      <span class="ci">
        ({props.write(v.low)} to {props.write(v.high)})
      </span>
    </span>
  );
}

/** MetricTable is one metric's results: a row per arm, control's comparisons "—". */
export function MetricTable(props: { metric: MetricResult; control: string; reliable: boolean }) {
  const m = props.metric;
  return (
    <section class="metric" aria-label={`Metric ${m.label}`}>
      <h3 class="sub">
        {m.label} <span class="badge">{m.primary ? "Primary" : "Secondary"}</span>
      </h3>
      <Table
        label={`Results: ${m.label}`}
        class="table compact"
        head={
          <>
            <th scope="col">Arm</th>
            <th scope="col" class="num">
              Exposed
            </th>
            <th scope="col" class="num">
              Converted
            </th>
            <th scope="col" class="num">
              Rate
            </th>
            <th scope="col" class="num">
              Absolute uplift <span class="ci">95% CI</span>
            </th>
            <th scope="col" class="num">
              Relative uplift <span class="ci">95% CI</span>
            </th>
            <th scope="col" class="num">
              p-value
            </th>
            <th scope="col" class="num">
              Chance to beat control
            </th>
          </>
        }
      >
        {m.arms.map((a) => {
          const control = a.variant === props.control;
          return (
            <tr key={a.variant} data-testid="arm-result" data-variant={a.variant}>
              <th scope="row">
                {a.variant}
                {control && a.variant !== "control" ? <span class="hint"> (control)</span> : null}
              </th>
              <td class="num">{num(a.exposed)}</td>
              <td class="num">{num(a.converted)}</td>
              <td class="num">{percent(a.rate)}</td>
              <td class="num">{control ? "—" : <Comparison value={a.absoluteUplift} write={points} good={props.reliable} />}</td>
              <td class="num">{control ? "—" : <Comparison value={a.relativeUplift} write={relative} good={props.reliable} />}</td>
              <td class="num">{control || a.pValue === null ? "—" : pValue(a.pValue)}</td>
              <td class="num">{control || a.chanceToBeatControl === null ? "—" : chance(a.chanceToBeatControl)}</td>
            </tr>
          );
        })}
      </Table>
    </section>
  );
}

/**
 * SrmBanner says the sample-ratio check paused the experiment: the arms'
 * shares of exposed users are too far from the flag's weights, which means
 * users are lost or counted unevenly, so the results cannot be trusted.
 */
export function SrmBanner(props: { check: SampleRatioCheck | null }) {
  const c = props.check;
  return (
    <div class="banner danger" role="alert" data-testid="srm-banner">
      <h2>Paused: the split of users does not match the weights</h2>
      <p>
        The sample-ratio check{c ? ` of ${when(c.checkedAt)}` : ""} found the arms' shares of exposed users too far from the flag's weights
        {c ? ` (p ${c.pValue < 0.001 ? "< 0.001" : `= ${pValue(c.pValue)}`})` : ""}, so it paused the experiment: every user now gets control.
        Results from an uneven split cannot be trusted. Look for what loses or double-counts users in one arm (an exposure sent only on
        some pages, a redirect, a crash) before resuming.
      </p>
      {c ? (
        <Table
          label="Sample ratio: observed and expected split"
          class="table compact"
          head={
            <>
              <th scope="col">Arm</th>
              <th scope="col" class="num">
                Exposed
              </th>
              <th scope="col" class="num">
                Observed
              </th>
              <th scope="col" class="num">
                Expected
              </th>
            </>
          }
        >
          {c.arms.map((a) => (
            <tr key={a.variant} data-testid="srm-arm" data-variant={a.variant}>
              <th scope="row">{a.variant}</th>
              <td class="num">{num(a.exposed)}</td>
              <td class="num">{percent(a.observed)}</td>
              <td class="num">{percent(a.expected)}</td>
            </tr>
          ))}
        </Table>
      ) : null}
    </div>
  );
}
