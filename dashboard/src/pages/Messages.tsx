import { useState } from "preact/hooks";
import { api } from "../api";
import { num } from "../charts/time";
import { rate, statusActions, triggerLabel } from "../campaign";
import { Link } from "../components/Link";
import { ErrorState, NoProduct, Notice, Skeleton } from "../components/States";
import { RowActions, Table } from "../components/Table";
import { capitalise, percent } from "../format";
import { useAction, useLoad } from "../load";
import { useAllows } from "../roles";
import type { Campaign, CampaignStatus, MessageSettings, Product } from "../types";

/** CampaignStatusPill is a campaign's status as a coloured word. */
export function CampaignStatusPill(props: { status: CampaignStatus }) {
  return (
    <span class={`status status-${props.status}`} data-testid="campaign-status">
      {capitalise(props.status)}
    </span>
  );
}

/** share writes part / whole as a percentage, "—" when nobody was shown the campaign. */
export function share(part: number, whole: number): string {
  const r = rate(part, whole);
  return r === null ? "—" : percent(r);
}

/**
 * Messages lists the product's campaigns (status, trigger, users shown,
 * CTA and completion rates, variants) with their status changes, and the
 * product's auto-render setting, without which no active campaign shows.
 * A campaign's own page edits it and shows its results.
 */
export function Messages(props: { product: Product | null }) {
  if (!props.product) return <NoProduct />;
  return <CampaignList key={props.product.id} product={props.product} />;
}

function CampaignList(props: { product: Product }) {
  const pid = props.product.id;
  const { busy, notice, run } = useAction<number | "settings">();
  // Campaigns, their status and the auto-render setting change with the member role.
  const canWrite = useAllows("member");
  const [list, reload] = useLoad(() => api.campaigns(pid), [pid]);
  const [loadedSettings, reloadSettings] = useLoad(() => api.messageSettings(pid), [pid]);
  // The setting as the last change left it, over the one loaded.
  const [settings, setSettings] = useState<MessageSettings | null>(null);
  const shown = list.state === "done" ? list.data.items : list.state === "loading" ? list.previous?.items : undefined;
  const autoRender = settings ?? (loadedSettings.state === "done" ? loadedSettings.data : null);
  const active = (shown ?? []).filter((c) => c.status === "active").length;

  const setStatus = (c: Campaign, to: CampaignStatus, label: string) =>
    run(c.id, async () => {
      const out = await api.updateCampaign(pid, c.id, { status: to });
      reload();
      return `${label}: ${out.name} is ${out.status}.`;
    });
  const toggle = (on: boolean) =>
    run("settings", async () => {
      setSettings(await api.setMessageSettings(pid, { autoRender: on }));
    });

  return (
    <section class="page">
      <div class="section-head tight">
        <h1>Messages</h1>
        {canWrite ? (
          <Link class="button" href={`/messages/new?product=${pid}`}>
            New campaign
          </Link>
        ) : null}
      </div>
      <p class="muted">
        Tooltips, modals, banners and survey questions that the browser SDK shows in your pages when an event happens, to the users you pick.
      </p>

      <div class="card auto-render" data-testid="auto-render">
        {loadedSettings.state === "failed" ? (
          <ErrorState message={loadedSettings.error} onRetry={reloadSettings} />
        ) : (
          <>
            <label class="toggle">
              <input
                type="checkbox"
                role="switch"
                checked={autoRender?.autoRender ?? false}
                disabled={!autoRender || busy === "settings" || !canWrite}
                title={canWrite ? undefined : "Needs the member role"}
                onChange={(e) => void toggle(e.currentTarget.checked)}
              />
              Auto-render messages
            </label>
            <p class="hint">
              On, the SDK loads its message renderer in your pages and shows the active campaigns. Changes reach pages within 5 minutes, or on
              reload.
            </p>
          </>
        )}
      </div>
      {autoRender && !autoRender.autoRender && active > 0 ? (
        <p class="notice" role="status" data-testid="auto-render-off">
          {active === 1 ? "1 campaign is" : `${active} campaigns are`} active, but auto-render is off: no page shows {active === 1 ? "it" : "them"}{" "}
          until you turn it on.
        </p>
      ) : null}
      <Notice notice={notice} />

      {list.state === "loading" && !shown ? <Skeleton rows={4} label="Loading campaigns…" /> : null}
      {list.state === "failed" ? <ErrorState message={list.error} onRetry={reload} /> : null}
      {shown && shown.length === 0 ? (
        <div class="empty-state" data-testid="no-campaigns">
          <h2>No campaigns yet</h2>
          <p class="muted">A campaign welcomes new users with a modal, points at a feature with a tooltip, or asks a question.</p>
          {canWrite ? (
            <p class="empty-actions">
              <Link class="button" href={`/messages/new?product=${pid}`}>
                Create a campaign
              </Link>
            </p>
          ) : null}
        </div>
      ) : null}
      {shown && shown.length > 0 ? (
        <Table
          label="Campaigns"
          actions
          head={
            <>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">Trigger</th>
              <th scope="col" class="num">
                Users shown
              </th>
              <th scope="col" class="num">
                CTA rate
              </th>
              <th scope="col" class="num">
                Completion
              </th>
              <th scope="col" class="num">
                Variants
              </th>
            </>
          }
        >
          {shown.map((c) => {
            const s = c.stats ?? { shown: 0, ctaClicks: 0, completed: 0, dismissed: 0 };
            return (
              <tr key={c.id} data-testid="campaign-row">
                <td>
                  <Link href={`/messages/${c.id}?product=${pid}`}>{c.name}</Link>
                </td>
                <td>
                  <CampaignStatusPill status={c.status} />
                </td>
                <td>
                  {triggerLabel(c.trigger.event)}
                  {c.pathRegex ? (
                    <span class="hint">
                      {" "}
                      on <code>{c.pathRegex}</code>
                    </span>
                  ) : null}
                </td>
                <td class="num">{num(s.shown)}</td>
                <td class="num">{share(s.ctaClicks, s.shown)}</td>
                <td class="num">{share(s.completed, s.shown)}</td>
                <td class="num">{c.variants.length > 1 ? `${c.variants.length} (A/B)` : "1"}</td>
                <RowActions>
                  {(canWrite ? statusActions[c.status] : []).map((a) => (
                    <button
                      key={a.to}
                      type="button"
                      class={`button small${a.to === "active" ? "" : " secondary"}`}
                      aria-label={`${a.label} ${c.name}`}
                      disabled={busy === c.id}
                      onClick={() => void setStatus(c, a.to, a.label)}
                    >
                      {a.label}
                    </button>
                  ))}
                  <Link class="button secondary small" href={`/messages/${c.id}?product=${pid}`}>
                    {canWrite ? "Edit" : "Open"}
                    <span class="visually-hidden"> {c.name}</span>
                  </Link>
                </RowActions>
              </tr>
            );
          })}
        </Table>
      ) : null}
    </section>
  );
}
