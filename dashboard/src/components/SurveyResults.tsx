import { num } from "../charts/time";
import { percent } from "../format";
import type { Question, SurveyCount, SurveyQuestionResult } from "../messageTypes";

/** The most free-text answers listed per question; the CSV has them all. */
export const maxTextRows = 20;

/**
 * orderedCounts lists a question's values in the order people read them:
 * every point of a rating's or NPS scale (those nobody gave at 0), a
 * choice question's choices as the campaign lists them (then any others),
 * and free text most frequent first.
 */
export function orderedCounts(r: SurveyQuestionResult, q: Question | undefined): SurveyCount[] {
  const by = new Map(r.counts.map((c) => [c.value, c.count]));
  const scale = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => String(from + i));
  let values: string[] | null = null;
  if (r.type === "nps") values = scale(0, 10);
  else if (r.type === "rating") values = scale(1, q?.scale === 10 ? 10 : 5);
  else if ((r.type === "single" || r.type === "multiple") && q) values = q.choices;
  if (!values) return [...r.counts].sort((a, b) => b.count - a.count || a.value.localeCompare(b.value)).slice(0, maxTextRows);
  const rest = r.counts.filter((c) => !values!.includes(c.value));
  return [...values.map((v) => ({ value: v, count: by.get(v) ?? 0 })), ...rest];
}

/** npsText writes an NPS score, signed: +42, −8, 0. */
export function npsText(score: number): string {
  const r = Math.round(score);
  return r > 0 ? `+${r}` : r < 0 ? `\u2212${-r}` : "0";
}

/**
 * SurveyQuestion shows one question's answers: how many, the NPS score of
 * an NPS question, and each value's count as a bar with its share.
 */
export function SurveyQuestion(props: { result: SurveyQuestionResult; question?: Question }) {
  const r = props.result;
  const rows = orderedCounts(r, props.question);
  const top = Math.max(1, ...rows.map((c) => c.count));
  // Shares are of the answers; a "multiple" answer counts once per choice.
  const whole = Math.max(1, r.answers);
  return (
    <section class="survey-question" data-testid="survey-question" data-question={r.id} aria-labelledby={`survey-${r.id}`}>
      <h3 class="sub" id={`survey-${r.id}`}>
        {r.prompt || r.id} <span class="hint">({r.id})</span>
      </h3>
      <p class="survey-facts">
        <span data-testid="answers">
          {num(r.answers)} answer{r.answers === 1 ? "" : "s"}
        </span>
        {r.type === "nps" && r.nps !== null ? (
          <span class="badge" data-testid="nps">
            NPS {npsText(r.nps)}
          </span>
        ) : null}
      </p>
      {rows.length === 0 ? (
        <p class="empty">No answers yet.</p>
      ) : (
        <div class="table-scroll">
          <table class="table compact survey-table" aria-label={`Answers: ${r.prompt || r.id}`}>
            <thead>
              <tr>
                <th scope="col">{r.type === "text" ? "Answer" : "Value"}</th>
                <th scope="col" class="bar-col">
                  <span class="visually-hidden">Share</span>
                </th>
                <th scope="col" class="num">
                  Count
                </th>
                <th scope="col" class="num">
                  Share
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((c) => (
                <tr key={c.value} data-testid="survey-count" data-value={c.value}>
                  <th scope="row" class="survey-value">
                    {c.value}
                  </th>
                  <td class="bar-col">
                    <div class="hbar" aria-hidden="true">
                      <div class="hbar-fill" style={{ width: `${(c.count / top) * 100}%` }} />
                    </div>
                  </td>
                  <td class="num">{num(c.count)}</td>
                  <td class="num">{percent(c.count / whole)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {r.type === "text" && r.counts.length > maxTextRows ? (
        <p class="hint">The {maxTextRows} most frequent answers; the CSV has every one.</p>
      ) : null}
    </section>
  );
}
