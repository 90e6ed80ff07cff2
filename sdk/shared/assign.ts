import { targeted, type Cohorts, type Condition, type Properties } from "./conditions.js";
import { bucket } from "./hash.js";

/**
 * AssignableFlag is what assignment reads of one flag of `GET /api/v1/config`
 * (`SdkFlag` in api/openapi.yaml). Each SDK passes its own `FlagConfig`, which
 * it generates from that contract; naming only these fields here keeps this
 * file free of either package's generated types, and the compiler still
 * checks at each call that the contract's flag provides them.
 */
export interface AssignableFlag {
  key: string;
  enabled: boolean;
  /** Percentage of users in the flag, 0–100. */
  rollout: number;
  /** The arms in order; weights are percentages. */
  variants: readonly { key: string; weight: number }[];
  /** Fraction of users held out, 0–1, while the experiment runs. */
  experiment: { status: string; holdout: number } | null;
  /** Targeting conditions, all of which must hold; left out by servers older than targeting. */
  conditions?: readonly Condition[] | null;
}

/** The outcome of assigning one user to one flag. */
export interface Assignment {
  /** What getVariant returns. */
  variant: string;
  /** The user is in the experiment's holdout (variant is then "control"). */
  holdout: boolean;
  /**
   * The user is outside the flag's rollout, or its conditions do not target the
   * user's properties (variant is then "control"). Like a
   * holdout user, such a user is not in the experiment: the exposure says
   * "excluded" and no experiment properties follow, so control is not swollen.
   */
  excluded: boolean;
}

/** exposed is the variant a user's `$exposure` names: the arm, or holdout or excluded. */
export function exposed(a: Assignment): string {
  return a.holdout ? "holdout" : a.excluded ? "excluded" : a.variant;
}

/**
 * assign implements the getVariant steps of docs/flags.md for a user with these
 * properties and cohorts (as `GET /api/v1/config?distinct_id=` gives them). It returns undefined when the flag is missing or disabled, so the
 * caller knows there is nothing to expose. The conditions are evaluated after the
 * holdout and before the rollout bucket, so the users they target keep their buckets.
 *
 * Percentages are turned into whole basis points with Math.round before they are
 * compared with a bucket, so that 33.33 % is 3333 and not 3332.9999999999995:
 * float noise must never decide a user's arm differently from the Go server.
 */
export function assign(flag: AssignableFlag | undefined, id: string, properties?: Properties, cohorts?: Cohorts | null): Assignment | undefined {
  if (!flag || !flag.enabled) return;
  const key = flag.key;
  const exp = flag.experiment;
  const result = (variant: string, holdout = false, excluded = false): Assignment => ({ variant, holdout, excluded });
  if (exp && exp.status == "paused") return result("control");
  if (exp && exp.status == "running" && bucket("holdout", key, id) < Math.round(exp.holdout * 10000)) {
    return result("control", true);
  }
  if (!targeted(flag.conditions, properties, cohorts)) return result("control", false, true);
  if (bucket("rollout", key, id) >= Math.round(flag.rollout * 100)) return result("control", false, true);
  const variants = flag.variants || [];
  if (!variants.length) return result("on");
  const b = bucket("variant", key, id);
  let cumulative = 0;
  for (const v of variants) {
    cumulative += Math.round(v.weight * 100);
    if (cumulative > b) return result(v.key);
  }
  // Weights summing to less than 100 leave a gap; its users get the control arm.
  return result("control");
}
