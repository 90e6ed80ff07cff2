// The parts a flag's targeting row and a message audience's row share
// (docs/flags.md, "Targeting"; docs/messages.md): the choice between a
// property and a cohort condition, and a cohort condition's fields. Each
// form draws its own property fields, labelled as it always was.
import { cohortOps, newCondition, type ConditionDraft } from "../campaign";
import type { CohortOp } from "../types";
import type { CohortOption } from "./FilterEditor";
import { fieldId, invalid, type FieldErrors } from "./Fields";
import { Link } from "./Link";

interface RowProps {
  /** The row's index in its list. */
  i: number;
  /** The row's API path: conditions[0], audience.conditions[0]. */
  path: string;
  condition: ConditionDraft;
  errors: FieldErrors;
  prefix: string;
  onChange: (part: Partial<ConditionDraft>) => void;
}

/**
 * ConditionKind picks what a row tests: a user property ("Property") or
 * membership of a cohort ("Cohort"). A switch starts the other kind's
 * operator afresh and keeps what was typed in the row.
 */
export function ConditionKind(props: RowProps) {
  const { i, path, condition, errors, prefix, onChange } = props;
  return (
    <select
      id={fieldId(prefix, `${path}.type`)}
      aria-label={`Condition ${i + 1} kind`}
      value={condition.kind}
      onChange={(e) => {
        const kind = e.currentTarget.value as ConditionDraft["kind"];
        if (kind !== condition.kind) onChange({ kind, op: newCondition(kind).op });
      }}
      {...invalid(errors, prefix, `${path}.type`)}
    >
      <option value="trait">Property</option>
      <option value="cohort">Cohort</option>
    </select>
  );
}

/**
 * CohortFields are a cohort row's fields: "In cohort" or "Not in cohort",
 * and the cohort, picked by name from the product's. A cohort the list does
 * not have (deleted, or the list not read yet) is kept as "cohort #id";
 * without any cohort, a hint leads to the Cohorts page.
 */
export function CohortFields(props: RowProps & { product: number; cohorts: CohortOption[] }) {
  const { i, path, condition, errors, prefix, onChange, cohorts } = props;
  const id = condition.cohortId;
  const known = id === "" || cohorts.some((c) => String(c.id) === id);
  return (
    <>
      <select
        id={fieldId(prefix, `${path}.op`)}
        aria-label={`Condition ${i + 1} operator`}
        value={condition.op}
        onChange={(e) => onChange({ op: e.currentTarget.value as CohortOp })}
        {...invalid(errors, prefix, `${path}.op`)}
      >
        {cohortOps.map((o) => (
          <option key={o.op} value={o.op}>
            {o.label}
          </option>
        ))}
      </select>
      {cohorts.length > 0 || id !== "" ? (
        <select
          id={fieldId(prefix, `${path}.cohortId`)}
          aria-label={`Condition ${i + 1} cohort`}
          value={id}
          onChange={(e) => onChange({ cohortId: e.currentTarget.value })}
          {...invalid(errors, prefix, `${path}.cohortId`)}
        >
          <option value="">Pick a cohort</option>
          {cohorts.map((c) => (
            <option key={c.id} value={String(c.id)}>
              {c.name}
            </option>
          ))}
          {known ? null : <option value={id}>cohort #{id}</option>}
        </select>
      ) : (
        <p class="hint" data-testid="no-cohorts">
          This product has no cohorts yet: <Link href={`/cohorts?product=${props.product}`}>make one on the Cohorts page</Link>.
        </p>
      )}
    </>
  );
}
