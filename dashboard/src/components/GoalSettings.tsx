import { useState } from "preact/hooks";
import { api } from "../api";
import { when } from "../format";
import { useAction, useLoad } from "../load";
import { useAllows } from "../roles";
import type { Goal, GoalCreate } from "../types";
import { RowActions, Table } from "./Table";

/**
 * GoalSettings is the product settings' section of goals (docs/dashboard.md,
 * "Goals"): a custom event or a page path whose conversions the Overview's
 * Goals card shows. A page path may hold `*`, which matches any run of
 * characters. Goals are added, listed and deleted here; a goal keeps no
 * data of its own (its conversions are counted from the events when the
 * Overview asks), so deleting one asks nothing. Adding one shows to
 * members and admins, deleting to admins, as the server allows them.
 */
export function GoalSettings(props: { productId: number }) {
  const [goals, reload] = useLoad(() => api.goals(props.productId).then((r) => r.items), [props.productId]);
  const [kind, setKind] = useState<GoalCreate["kind"]>("event");
  const [value, setValue] = useState("");
  const { busy, notice, run } = useAction<string>();
  const canCreate = useAllows("member");
  const canDelete = useAllows("admin");
  // A reload after an add or a delete keeps the list on screen until the new
  // one arrives, so the table does not blink out between the two.
  const shown = goals.state === "done" ? goals.data : goals.state === "loading" ? goals.previous : undefined;

  const create = (e: Event) => {
    e.preventDefault();
    const v = value.trim();
    void run("create", async () => {
      await api.createGoal(props.productId, kind === "event" ? { kind, event: v } : { kind, path: v });
      setValue("");
      reload();
    });
  };
  const remove = (g: Goal) =>
    run("delete", async () => {
      await api.deleteGoal(props.productId, g.id);
      reload();
    });

  return (
    <section aria-labelledby="goals-title" data-testid="goal-settings">
      <div class="section-head">
        <h2 id="goals-title">Goals</h2>
      </div>
      <p class="muted">
        A goal is a custom event (such as <code>signup</code>) or a page path (such as <code>/pricing</code>; <code>*</code> matches any
        characters, so <code>/blog/*</code> is every page under /blog/). The Overview shows each goal's visitors, conversions and
        conversion rate, and its rate by source, channel, country and device.
      </p>
      {canCreate ? (
        <form class="inline-form" onSubmit={create} aria-label="Add a goal">
          <label>
            Kind
            <select name="goal-kind" value={kind} onChange={(e) => setKind((e.currentTarget as HTMLSelectElement).value as GoalCreate["kind"])}>
              <option value="event">Custom event</option>
              <option value="page">Page path</option>
            </select>
          </label>
          <label>
            {kind === "event" ? "Event name" : "Page path"}
            <input
              name="goal-value"
              required
              maxLength={kind === "event" ? 255 : 512}
              value={value}
              placeholder={kind === "event" ? "signup" : "/pricing"}
              onInput={(e) => setValue((e.currentTarget as HTMLInputElement).value)}
            />
          </label>
          <button type="submit" class="button" disabled={busy !== null || value.trim() === ""}>
            Add goal
          </button>
        </form>
      ) : null}
      {notice.error ? (
        <p class="form-error" role="alert">
          {notice.error}
        </p>
      ) : null}
      {goals.state === "failed" ? (
        <p class="form-error" role="alert">
          {goals.error}
        </p>
      ) : shown === undefined ? (
        <p class="muted">Loading…</p>
      ) : shown.length === 0 ? (
        <p class="empty">{canCreate ? "No goals yet. Add a custom event or a page path above, and the Overview shows its conversions." : "No goals yet."}</p>
      ) : (
        <Table
          label="Goals"
          actions={canDelete}
          head={
            <>
              <th>Goal</th>
              <th>Kind</th>
              <th>Added</th>
            </>
          }
        >
          {shown.map((g) => (
            <tr key={g.id} data-testid="goal-settings-row">
              <td>
                <code>{g.kind === "page" ? g.path : g.event}</code>
              </td>
              <td>{g.kind === "page" ? "Page path" : "Custom event"}</td>
              <td>{when(g.createdAt)}</td>
              {canDelete ? (
                <RowActions>
                  <button type="button" class="button small danger" disabled={busy !== null} onClick={() => void remove(g)}>
                    Delete
                  </button>
                </RowActions>
              ) : null}
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}
