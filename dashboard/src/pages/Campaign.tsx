import { useState } from "preact/hooks";
import { api, surveyCsvUrl } from "../api";
import { hasSurvey, statusActions, triggerLabel } from "../campaign";
import { CampaignForm } from "../components/CampaignForm";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { Crumb, ItemHead } from "../components/ItemHead";
import { Link } from "../components/Link";
import { ErrorState, NoProduct, Notice, Skeleton } from "../components/States";
import { SurveyQuestion } from "../components/SurveyResults";
import { when } from "../format";
import { useAction, useLoad } from "../load";
import { useAllows } from "../roles";
import { navigate } from "../router";
import type { Campaign, CampaignStatus, Product } from "../types";
import { MetricTable } from "./Experiment";
import { StatusPill } from "./Flags";
import { CampaignStatusPill } from "./Messages";

/**
 * CampaignPage is a new campaign's editor (/messages/new), or one
 * campaign (/messages/{id}): its status changes, its A/B test's headline
 * with a link to the experiment, its survey's answers, and the editor.
 */
export function CampaignPage(props: { product: Product | null; id: number | "new" }) {
  if (!props.product) return <NoProduct />;
  if (props.id === "new") return <NewCampaign key={props.product.id} product={props.product} />;
  return <CampaignView key={`${props.product.id}/${props.id}`} product={props.product} id={props.id} />;
}

/** justCreated is the campaign the editor just created, which its page greets once. */
let justCreated: number | null = null;

function NewCampaign(props: { product: Product }) {
  const pid = props.product.id;
  return (
    <section class="page">
      <Crumb href={`/messages?product=${pid}`}>Messages</Crumb>
      <h1>New campaign</h1>
      <CampaignForm
        product={pid}
        onSaved={(c) => {
          justCreated = c.id;
          navigate(`/messages/${c.id}?product=${pid}`, { replace: true });
        }}
      />
    </section>
  );
}

function CampaignView(props: { product: Product; id: number }) {
  const pid = props.product.id;
  const [loaded, reload] = useLoad(() => api.campaign(pid, props.id), [pid, props.id]);
  // The campaign as the last save or status change left it, over the one loaded.
  const [changed, setChanged] = useState<Campaign | null>(null);
  const [version, setVersion] = useState(0);
  const [deleting, setDeleting] = useState(false);
  const action = useAction<CampaignStatus | "delete">(() => {
    if (justCreated !== props.id) return {};
    justCreated = null;
    return { ok: "Created as a draft. Activate it when it is ready." };
  });
  // Status changes and edits need the member role, deleting the admin role.
  const canWrite = useAllows("member");
  const canDelete = useAllows("admin");
  const busy = action.busy !== null;
  const list = `/messages?product=${pid}`;
  const c = changed ?? (loaded.state === "done" ? loaded.data : null);

  if (loaded.state === "loading" || loaded.state === "idle") return <Skeleton rows={6} label="Loading the campaign…" />;
  if (loaded.state === "failed" || !c) {
    return (
      <section class="page">
        <Crumb href={list}>Messages</Crumb>
        <ErrorState message={loaded.state === "failed" ? loaded.error : "The campaign could not be read."} onRetry={reload} />
      </section>
    );
  }

  const setStatus = (to: CampaignStatus, label: string) =>
    action.run(to, async () => {
      const out = await api.updateCampaign(pid, c.id, { status: to });
      setChanged(out);
      setVersion((v) => v + 1);
      return `${label}: the campaign is ${out.status}.`;
    });
  // Deleted, the page goes back to the list; refused, the dialog closes on the reason.
  const remove = async () => {
    await action.run("delete", async () => {
      await api.deleteCampaign(pid, c.id);
      navigate(list);
    });
    setDeleting(false);
  };

  return (
    <section class="page">
      <ItemHead
        list={list}
        listLabel="Messages"
        title={c.name}
        actions={
          <>
            {(canWrite ? statusActions[c.status] : []).map((a) => (
              <button key={a.to} type="button" class={`button${a.to === "active" ? "" : " secondary"}`} disabled={busy} onClick={() => void setStatus(a.to, a.label)}>
                {a.label}
              </button>
            ))}
            {canDelete ? (
              <button type="button" class="button danger" disabled={busy} onClick={() => setDeleting(true)}>
                Delete
              </button>
            ) : null}
          </>
        }
      />
      <dl class="facts">
        <div>
          <dt>Status</dt>
          <dd>
            <CampaignStatusPill status={c.status} />
          </dd>
        </div>
        <div>
          <dt>Trigger</dt>
          <dd>
            {triggerLabel(c.trigger.event)}
            {c.pathRegex ? (
              <>
                {" "}
                on <code>{c.pathRegex}</code>
              </>
            ) : null}
          </dd>
        </div>
        <div>
          <dt>Variants</dt>
          <dd>{c.variants.map((v) => `${v.key} ${v.weight}%`).join(" · ")}</dd>
        </div>
        <div>
          <dt>Changed</dt>
          <dd>{when(c.updatedAt)}</dd>
        </div>
      </dl>
      <Notice notice={action.notice} />

      {c.experimentId !== null ? <VariantResults product={pid} experimentId={c.experimentId} version={version} /> : null}
      {hasSurvey(c) ? <SurveySection product={pid} campaign={c} version={version} /> : null}

      <h2 class="sub editor-title">Settings</h2>
      <CampaignForm
        key={c.id}
        product={pid}
        campaign={c}
        readOnly={!canWrite}
        onSaved={(out) => {
          setChanged(out);
          setVersion((v) => v + 1);
        }}
      />

      {deleting ? (
        <ConfirmDialog title={`Delete ${c.name}?`} confirmLabel="Delete campaign" busy={busy} onConfirm={remove} onCancel={() => setDeleting(false)}>
          <p>No page shows it again, and its survey answers go with it. Its experiment is kept. This cannot be undone.</p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}

/**
 * VariantResults is the headline of a campaign's A/B test: its
 * experiment's status and the primary metric (the CTA's clicks) per
 * variant, with a link to the experiment's own page for the rest.
 */
function VariantResults(props: { product: number; experimentId: number; version: number }) {
  const pid = props.product;
  const [loaded, reload] = useLoad(async () => {
    const e = await api.experiment(pid, props.experimentId);
    const results = e.status === "draft" ? null : await api.experimentResults(pid, props.experimentId);
    return { experiment: e, results };
  }, [pid, props.experimentId, props.version]);
  const href = `/experiments/${props.experimentId}?product=${pid}`;
  return (
    <section class="card" aria-labelledby="variant-results" data-testid="variant-results">
      <div class="section-head tight">
        <h2 id="variant-results">Variants' results</h2>
        <Link class="button secondary small" href={href}>
          Open the experiment
        </Link>
      </div>
      {loaded.state === "loading" ? <Skeleton rows={3} label="Reading the experiment…" /> : null}
      {loaded.state === "failed" ? <ErrorState message={loaded.error} onRetry={reload} /> : null}
      {loaded.state === "done" ? (
        <>
          <p>
            Experiment <Link href={href}>{loaded.data.experiment.name}</Link> is <StatusPill experiment={loaded.data.experiment} />.
          </p>
          {loaded.data.results === null ? (
            <p class="muted">It starts when the campaign is activated; each variant's users and clicks show here then.</p>
          ) : loaded.data.results.metrics[0] ? (
            <MetricTable metric={loaded.data.results.metrics[0]} control={loaded.data.results.arms[0]?.variant ?? ""} reliable={loaded.data.results.enoughData} />
          ) : (
            <p class="empty">No exposures yet.</p>
          )}
        </>
      ) : null}
    </section>
  );
}

/** SurveySection is a campaign's survey answers per question, and the CSV of them all. */
function SurveySection(props: { product: number; campaign: Campaign; version: number }) {
  const { product: pid, campaign: c } = props;
  const [loaded, reload] = useLoad(() => api.surveyResults(pid, c.id), [pid, c.id, props.version]);
  return (
    <section class="card" aria-labelledby="survey-results" data-testid="survey-results">
      <div class="section-head tight">
        <h2 id="survey-results">Survey results</h2>
        <div class="actions">
          <button type="button" class="button secondary small" disabled={loaded.state === "loading"} onClick={reload}>
            Refresh
          </button>
          <a class="button secondary small" href={surveyCsvUrl(pid, c.id)} download={`survey-${c.id}.csv`}>
            Download CSV
          </a>
        </div>
      </div>
      {loaded.state === "loading" && !loaded.previous ? <Skeleton rows={4} label="Reading the answers…" /> : null}
      {loaded.state === "failed" ? <ErrorState message={loaded.error} onRetry={reload} /> : null}
      {loaded.state === "done" || (loaded.state === "loading" && loaded.previous) ? (
        (() => {
          const r = loaded.state === "done" ? loaded.data : loaded.previous!;
          if (r.questions.length === 0) return <p class="empty">No answers yet.</p>;
          return r.questions.map((q) => <SurveyQuestion key={q.id} result={q} />);
        })()
      ) : null}
    </section>
  );
}
