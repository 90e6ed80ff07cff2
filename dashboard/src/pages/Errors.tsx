import { useEffect, useState } from "preact/hooks";
import { api } from "../api";
import { Sparkline } from "../charts/Sparkline";
import { num } from "../charts/time";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { Link } from "../components/Link";
import { ErrorState, NoProduct, Notice, Skeleton } from "../components/States";
import { Table } from "../components/Table";
import { searchWithEnv } from "../dataEnv";
import { bytes, capitalise, when } from "../format";
import { useAction, useLoad, type Load } from "../load";
import { useAllows } from "../roles";
import { during, searchWithRange, type DateRange } from "../range";
import { oneOf, setQuery, useQueryState } from "../router";
import type { DataEnv, ErrorGroup, ErrorGroupList, ErrorStatus, List, Product, Sourcemap } from "../types";

/** The statuses the list filters on, in the order the filter offers them. */
export const errorStatuses: readonly ErrorStatus[] = ["open", "resolved", "ignored"];

/**
 * groupHref is a group's page, with the product, the date range and the
 * data env of the list it was opened from.
 */
export function groupHref(product: number, fingerprint: string, range: DateRange, env: DataEnv): string {
  const search = searchWithEnv(searchWithRange(new URLSearchParams({ product: String(product) }), range), env);
  return `/errors/${encodeURIComponent(fingerprint)}?${search}`;
}

/** ErrorStatusPill is a group's status, with the release a resolved group was fixed in. */
export function ErrorStatusPill(props: { group: Pick<ErrorGroup, "status" | "resolvedRelease"> }) {
  const { status, resolvedRelease } = props.group;
  return (
    <span class={`status status-${status}`} data-testid="error-status">
      {capitalise(status)}
      {status === "resolved" && resolvedRelease ? ` in ${resolvedRelease}` : ""}
    </span>
  );
}

/** RegressedBadge marks a group that was resolved and came back in another release. */
export function RegressedBadge() {
  return (
    <span class="badge regressed" title="It was resolved, and came back in another release" data-testid="regressed">
      Regressed
    </span>
  );
}

/**
 * Errors lists the product's error groups over the page's date range, of
 * live data or of test keys' (env): type, message, events, users, last
 * and first seen and the last seven days as bars, filtered by status
 * (open by default) and release. Groups selected in the table can be
 * merged into one, after a confirmation that names the group they merge
 * into. Below, the releases' sourcemap uploads, each release deleted
 * after a confirmation. A group's own page shows its occurrences and
 * stacks.
 */
export function Errors(props: { product: Product | null; range: DateRange; env: DataEnv }) {
  if (!props.product) return <NoProduct />;
  return <ErrorList key={props.product.id} product={props.product} range={props.range} env={props.env} />;
}

function ErrorList(props: { product: Product; range: DateRange; env: DataEnv }) {
  const pid = props.product.id;
  const { from, to } = props.range;
  // The filters the list was asked for live in the URL (?status=,
  // ?release=), so that a link opens the same list; the release being
  // typed is the form's until applied.
  const [status, setStatus] = useQueryState<ErrorStatus>("status", "open", oneOf(errorStatuses));
  const [release, setRelease] = useQueryState("release", "");
  const [draft, setDraft] = useState(release);
  useEffect(() => setDraft(release), [release]);
  const [maps, reloadMaps] = useLoad(() => api.sourcemaps(pid), [pid]);
  const [groups, retry] = useLoad<ErrorGroupList>(
    () => api.errorGroups(pid, { from, to, release: release || undefined, status }, props.env),
    [pid, from, to, release, status, props.env],
  );
  const shown = groups.state === "done" ? groups.data : groups.state === "loading" ? groups.previous : undefined;
  const uploads = maps.state === "done" ? maps.data.items : [];
  const releases = [...new Set(uploads.map((m) => m.release))];
  const filtered = status !== "open" || release !== "";
  const apply = (e: Event) => {
    e.preventDefault();
    setRelease(draft.trim());
  };
  const reset = () => {
    setDraft("");
    setQuery({ status: null, release: null });
  };

  return (
    <section class="page">
      <h1>Errors</h1>
      <p class="muted">
        Exceptions grouped by fingerprint: the same bug in one group, whichever browser threw it and however often the code was rebuilt.
      </p>
      <form class="card inline-form filters" onSubmit={apply} aria-label="Error filters">
        <label>
          Status
          <select name="status" value={status} onChange={(e) => setStatus(e.currentTarget.value as ErrorStatus)}>
            {errorStatuses.map((s) => (
              <option key={s} value={s}>
                {capitalise(s)}
              </option>
            ))}
          </select>
        </label>
        <label>
          Release
          <input
            name="release"
            list="error-releases"
            value={draft}
            placeholder="Every release"
            aria-describedby="error-release-hint"
            onInput={(e) => setDraft(e.currentTarget.value)}
          />
        </label>
        <datalist id="error-releases">
          {releases.map((r) => (
            <option key={r} value={r} />
          ))}
        </datalist>
        <button type="submit" class="button secondary">
          Apply filters
        </button>
        <p class="hint full" id="error-release-hint">
          The release as the SDK's <code>release</code> option sends it (exact, case-sensitive); empty for every release. The suggestions are the
          releases with sourcemaps.
        </p>
      </form>

      {groups.state === "loading" && !shown ? <Skeleton rows={5} label="Loading errors…" /> : null}
      {groups.state === "failed" ? <ErrorState message={groups.error} onRetry={retry} /> : null}
      {shown && shown.groups.length === 0 ? (
        filtered ? (
          <div class="empty-state" data-testid="no-matching-errors">
            <p>
              No {status} errors{release ? <> in release <code>{release}</code></> : null} {during(props.range)}.
            </p>
            <p>
              <button type="button" class="button secondary" onClick={reset}>
                Show open errors of every release
              </button>
            </p>
          </div>
        ) : (
          <NoErrors product={props.product} range={props.range} env={props.env} />
        )
      ) : null}
      {shown && shown.groups.length > 0 ? (
        <MergeableGroups groups={shown.groups} product={pid} range={props.range} env={props.env} busy={groups.state === "loading"} onMerged={retry} />
      ) : null}

      <Releases product={pid} uploads={maps} onDeleted={reloadMaps} onRetry={reloadMaps} />
    </section>
  );
}

/**
 * MergeableGroups is the groups' table with a selection and "Merge…": at
 * least two selected groups are merged, after a confirmation, into the
 * one picked there (the one with most events to start with), through
 * POST /api/v1/errors/merge; their events then count in it, past and
 * future. The selection is dropped when the list changes.
 */
function MergeableGroups(props: { groups: ErrorGroup[]; product: number; range: DateRange; env: DataEnv; busy: boolean; onMerged: () => void }) {
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [into, setInto] = useState<string | null>(null);
  const { busy, notice, run } = useAction<"merge">();
  // Merging needs the member role; without it the table has no selection.
  const canMerge = useAllows("member");
  useEffect(() => setSelected(new Set()), [props.groups]);
  const chosen = props.groups.filter((g) => selected.has(g.fingerprint));
  const toggle = (fp: string) =>
    setSelected((s) => {
      const next = new Set(s);
      if (next.has(fp)) next.delete(fp);
      else next.add(fp);
      return next;
    });
  const merge = async () => {
    const target = chosen.find((g) => g.fingerprint === into);
    if (!target) return;
    await run("merge", async () => {
      const groups = chosen.filter((g) => g !== target).map((g) => g.fingerprint);
      const { from, to } = props.range;
      await api.mergeErrorGroups(props.product, { into: target.fingerprint, groups }, { from, to }, props.env);
      props.onMerged();
      return `Merged ${groups.length} ${groups.length === 1 ? "group" : "groups"} into “${target.message || target.type || "Error"}”.`;
    });
    setInto(null);
  };
  return (
    <>
      {canMerge ? (
        <div class="table-actions">
          <button type="button" class="button secondary" disabled={chosen.length < 2} onClick={() => setInto(chosen[0].fingerprint)}>
            Merge… ({chosen.length})
          </button>
          <span class="hint">Select two or more groups of one bug to merge them.</span>
        </div>
      ) : null}
      <Notice notice={notice} />
      <GroupsTable
        groups={props.groups}
        product={props.product}
        range={props.range}
        env={props.env}
        busy={props.busy}
        selected={selected}
        onToggle={canMerge ? toggle : null}
      />
      {into !== null && chosen.length >= 2 ? (
        <ConfirmDialog
          title={`Merge ${chosen.length} error groups?`}
          confirmLabel="Merge groups"
          busy={busy !== null}
          onConfirm={merge}
          onCancel={() => setInto(null)}
        >
          <p>Their events, those received and those to come, will count in one group. Keep the group of:</p>
          <fieldset class="merge-into">
            <legend class="visually-hidden">The group to merge into</legend>
            {chosen.map((g) => (
              <label key={g.fingerprint} class="radio-row">
                <input type="radio" name="merge-into" checked={into === g.fingerprint} onChange={() => setInto(g.fingerprint)} />
                <span>
                  <code>{g.type || "Error"}</code> {g.message || "(no message)"} <span class="muted">
                    ({num(g.events)} {g.events === 1 ? "event" : "events"})
                  </span>
                </span>
              </label>
            ))}
          </fieldset>
          <p class="muted">Its status stays; the others' statuses are no longer used. It can be undone on the kept group's page, under “Merged groups”.</p>
        </ConfirmDialog>
      ) : null}
    </>
  );
}

/**
 * GroupsTable is the list of groups, most events first as the API sends
 * them, each with a box to select it. A long message is cut to one line
 * that takes the width the other columns leave (so that the table fits
 * its box at every width; on a phone the seen columns and users give way);
 * the whole of it is in the cell's text (read by screen readers) and its
 * title (shown on hover). Without onToggle (a role that may not merge)
 * there are no boxes.
 */
function GroupsTable(props: {
  groups: ErrorGroup[];
  product: number;
  range: DateRange;
  env: DataEnv;
  busy: boolean;
  selected: ReadonlySet<string>;
  onToggle: ((fingerprint: string) => void) | null;
}) {
  const onToggle = props.onToggle;
  return (
    <div class={`table-scroll${props.busy ? " busy" : ""}`}>
      <table class="table error-groups" aria-label="Error groups">
        <thead>
          <tr>
            {onToggle ? (
              <th scope="col" class="check">
                <span class="visually-hidden">Select</span>
              </th>
            ) : null}
            <th scope="col">Type</th>
            <th scope="col">Message</th>
            <th scope="col" class="num">
              Events
            </th>
            <th scope="col" class="num users">
              Users
            </th>
            <th scope="col" class="seen">
              Last seen
            </th>
            <th scope="col" class="seen">
              First seen
            </th>
            <th scope="col" class="nowrap">
              Last 7 days
            </th>
          </tr>
        </thead>
        <tbody>
          {props.groups.map((g) => (
            <tr key={g.fingerprint} data-testid="error-row">
              {onToggle ? (
                <td class="check">
                  <input
                    type="checkbox"
                    aria-label={`Select ${g.message || g.type || "Error"}`}
                    checked={props.selected.has(g.fingerprint)}
                    onChange={() => onToggle(g.fingerprint)}
                  />
                </td>
              ) : null}
              <td class="error-type">
                <code>{g.type || "Error"}</code>
                {g.regressed ? (
                  <>
                    {" "}
                    <RegressedBadge />
                  </>
                ) : null}
              </td>
              <td class="error-message">
                <Link href={groupHref(props.product, g.fingerprint, props.range, props.env)} title={g.message}>
                  {g.message || "(no message)"}
                </Link>
              </td>
              <td class="num">{num(g.events)}</td>
              <td class="num users">{num(g.users)}</td>
              <td class="nowrap seen">{when(g.lastSeen)}</td>
              <td class="nowrap seen">{when(g.firstSeen)}</td>
              <td>
                <Sparkline days={g.daily} label="Events per day" />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The SDK's start with error tracking on, for the empty state. */
function initSnippet(key: string): string {
  return `strata.init({apiKey: ${JSON.stringify(key)}, errorTracking: true, release: "1.4.2"})`;
}

/** uploadSnippet is the deploy step that uploads a release's sourcemap, as docs/errors.md gives it. */
function uploadSnippet(origin: string): string {
  return [
    `curl -X POST ${origin}/api/v1/sourcemaps \\`,
    "  -H 'Authorization: Bearer st_live_YOUR_KEY' \\",
    "  -F release=1.4.2 -F url=https://shop.example.com/assets/app.min.js \\",
    "  -F file=@dist/app.min.js.map -F minified=@dist/app.min.js",
  ].join("\n");
}

/**
 * NoErrors is the empty state of the list with its default filters: how
 * to turn error tracking on in the SDK, and how a deploy uploads a
 * release's sourcemaps so that stacks show the original code.
 */
function NoErrors(props: { product: Product; range: DateRange; env: DataEnv }) {
  const origin = typeof location !== "undefined" ? location.origin : "";
  const test = props.env === "test";
  return (
    <div class="empty-state" data-testid="no-errors">
      <h2>{test ? "No test errors" : "No errors"}</h2>
      <p>
        No open error was received {test ? "from test keys " : ""}for {props.product.name} {during(props.range)}.
      </p>
      <p>
        The SDK reports uncaught errors and unhandled promise rejections once error tracking is on, with the release they were thrown in:
      </p>
      <code class="snippet" data-testid="error-tracking-snippet">
        {initSnippet(test ? "st_test_YOUR_KEY" : "st_live_YOUR_KEY")}
      </code>
      <p>Then, at each deploy, upload the release's sourcemaps, so that stacks show your original functions, files and lines:</p>
      <pre class="snippet">
        <code>{uploadSnippet(origin)}</code>
      </pre>
      <p class="muted">
        How errors are grouped and de-minified: <code>docs/errors.md</code> in Strata's repository.
      </p>
      <p class="empty-actions">
        <Link class="button" href="/api-reference#uploadSourcemap">
          The upload in the API reference
        </Link>
        <Link class="button secondary" href={`/settings/products/${props.product.id}?product=${props.product.id}`}>
          {test ? "Create a test key" : "Create an API key"}
        </Link>
      </p>
    </div>
  );
}

/** byRelease groups uploads by release, in the order of each release's newest upload (the API lists newest first). */
export function byRelease(uploads: Sourcemap[]): { release: string; uploads: Sourcemap[] }[] {
  const out = new Map<string, Sourcemap[]>();
  for (const m of uploads) out.set(m.release, [...(out.get(m.release) ?? []), m]);
  return [...out].map(([release, list]) => ({ release, uploads: list }));
}

/**
 * Releases lists the sourcemaps uploaded for each release, with a delete
 * of the whole release that asks first. Events already received keep the
 * frames they were de-minified with at ingest.
 */
function Releases(props: {
  product: number;
  uploads: Load<List<Sourcemap>>;
  onDeleted: () => void;
  onRetry: () => void;
}) {
  const [deleting, setDeleting] = useState<{ release: string; count: number } | null>(null);
  const { busy, notice, run } = useAction<"delete">();
  const canDelete = useAllows("admin");
  const del = async () => {
    if (!deleting) return;
    await run("delete", async () => {
      const out = await api.deleteSourcemaps(props.product, deleting.release);
      props.onDeleted();
      return `Deleted release ${deleting.release}: ${out.deleted} ${out.deleted === 1 ? "sourcemap" : "sourcemaps"}.`;
    });
    setDeleting(null);
  };
  const u = props.uploads;
  const groups = u.state === "done" ? byRelease(u.data.items) : [];
  return (
    <section class="card" aria-labelledby="releases-title">
      <h2 id="releases-title">Releases</h2>
      <p class="muted">
        The sourcemaps each release's deploy uploaded. Errors of a release are de-minified with its maps when they arrive.
      </p>
      <Notice notice={notice} />
      {u.state === "loading" ? <Skeleton rows={3} label="Loading releases…" /> : null}
      {u.state === "failed" ? <ErrorState message={u.error} onRetry={props.onRetry} /> : null}
      {u.state === "done" && groups.length === 0 ? (
        <p class="empty" data-testid="no-releases">
          No sourcemap uploaded yet.
        </p>
      ) : null}
      {groups.map((g) => (
        <section key={g.release} class="release" aria-label={`Release ${g.release}`} data-testid="release">
          <div class="section-head tight">
            <h3>
              Release <code>{g.release}</code>
            </h3>
            {canDelete ? (
              <button type="button" class="button danger small" onClick={() => setDeleting({ release: g.release, count: g.uploads.length })}>
                Delete<span class="visually-hidden"> release {g.release}</span>
              </button>
            ) : null}
          </div>
          <Table
            label={`Sourcemaps of release ${g.release}`}
            class="table compact"
            head={
              <>
                <th scope="col">Minified file</th>
                <th scope="col" class="num">
                  Map size
                </th>
                <th scope="col">With the file</th>
                <th scope="col">Uploaded</th>
              </>
            }
          >
            {g.uploads.map((m) => (
              <tr key={m.id}>
                <td class="url">{m.url}</td>
                <td class="num">{bytes(m.size)}</td>
                <td>{m.minified ? "Yes" : "No"}</td>
                <td class="nowrap">{when(m.createdAt)}</td>
              </tr>
            ))}
          </Table>
        </section>
      ))}
      {deleting ? (
        <ConfirmDialog
          title={`Delete release ${deleting.release}?`}
          confirmLabel={`Delete ${deleting.count} ${deleting.count === 1 ? "sourcemap" : "sourcemaps"}`}
          busy={busy !== null}
          onConfirm={del}
          onCancel={() => setDeleting(null)}
        >
          <p>
            Every sourcemap of release <code>{deleting.release}</code> is deleted. Errors of this release received from now on keep their minified
            frames; those already received keep the frames they were de-minified with. This cannot be undone.
          </p>
        </ConfirmDialog>
      ) : null}
    </section>
  );
}
