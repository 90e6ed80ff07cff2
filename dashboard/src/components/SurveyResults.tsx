import { num } from "../charts/time";
import { percent, plural } from "../format";
import type { SurveyQuestionResult } from "../types";
import { Table } from "./Table";

/** npsText writes an NPS score, signed and rounded: +42, −8, 0. */
export function npsText(score: number): string {
  const r = Math.round(score);
  return r > 0 ? `+${r}` : r < 0 ? `\u2212${-r}` : "0";
}

/**
 * SurveyQuestion shows one question's answers: how many, an NPS
 * question's score with its promoters, passives and detractors, each value
 * of a scale or choice (in the question's order, as the API lists them) as
 * a bar with its count and share, and a free-text question's latest
 * answers.
 */
export function SurveyQuestion(props: { result: SurveyQuestionResult }) {
  const r = props.result;
  const top = Math.max(1, ...r.counts.map((c) => c.count));
  // Shares are of the answers; a "multiple" answer counts once per choice.
  const whole = Math.max(1, r.answers);
  return (
    <section class="survey-question" data-testid="survey-question" data-question={r.id} aria-labelledby={`survey-${r.id}`}>
      <h3 class="sub" id={`survey-${r.id}`}>
        {r.prompt || r.id} <span class="hint">({r.id})</span>
      </h3>
      <p class="survey-facts">
        <span data-testid="answers">
          {plural(r.answers, "answer")}
        </span>
        {r.nps ? (
          <>
            <span class="badge" data-testid="nps">
              NPS {npsText(r.nps.score)}
            </span>
            <span class="hint">
              {plural(r.nps.promoters, "promoter")} (9–10) · {plural(r.nps.passives, "passive")} (7–8) · {plural(r.nps.detractors, "detractor")} (0–6)
            </span>
          </>
        ) : null}
      </p>
      {r.type === "text" ? (
        r.recent.length === 0 ? (
          <p class="empty">No answers yet.</p>
        ) : (
          <>
            <h4 class="hint">Latest answers</h4>
            <ul class="survey-recent" aria-label={`Latest answers: ${r.prompt || r.id}`}>
              {r.recent.map((t, i) => (
                <li key={i} data-testid="survey-text">
                  {t}
                </li>
              ))}
            </ul>
          </>
        )
      ) : (
        <Table
          label={`Answers: ${r.prompt || r.id}`}
          class="table compact survey-table"
          head={
            <>
              <th scope="col">Value</th>
              <th scope="col" class="bar-col">
                <span class="visually-hidden">Bar</span>
              </th>
              <th scope="col" class="num">
                Count
              </th>
              <th scope="col" class="num">
                Share
              </th>
            </>
          }
        >
          {r.counts.map((c) => (
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
        </Table>
      )}
    </section>
  );
}
