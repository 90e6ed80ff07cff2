// The campaign editor's model: a campaign as typed (numbers stay text until
// the form is sent), made from a campaign and turned back into the API's
// body, with the limits of docs/messages.md the editor applies before it
// asks. The server checks everything again and has the last word.
import type { FieldErrors } from "./components/Fields";
import type {
  BodyFormat, Campaign, CampaignStatus, CampaignVariant, CampaignWrite, CapKind, CohortOp, Question, QuestionType, Step, StepKind,
  TraitCondition, TraitOp,
} from "./types";

/** Where a banner sits (a step's placement; empty for the other kinds). */
export type Placement = "top" | "bottom";

/** The limits of docs/messages.md. */
export const limits = { variants: 4, steps: 10, conditions: 10, choices: { min: 2, max: 10 } } as const;

/** The events a trigger is usually one of, before the product's own. */
export const builtInTriggers = ["$pageview", "$click", "$form_submit"] as const;

export const stepKinds: readonly { kind: StepKind; label: string }[] = [
  { kind: "modal", label: "Modal" },
  { kind: "tooltip", label: "Tooltip" },
  { kind: "banner", label: "Banner" },
  { kind: "survey", label: "Survey question" },
];

export const questionTypes: readonly { type: QuestionType; label: string }[] = [
  { type: "rating", label: "Rating (1 to 5 or 10)" },
  { type: "nps", label: "NPS (0 to 10)" },
  { type: "single", label: "One choice" },
  { type: "multiple", label: "Several choices" },
  { type: "text", label: "Free text" },
];

export const traitOps: readonly { op: TraitOp; label: string }[] = [
  { op: "eq", label: "equals" },
  { op: "neq", label: "does not equal" },
  { op: "contains", label: "contains" },
  { op: "exists", label: "is set" },
  { op: "gt", label: "greater than" },
  { op: "lt", label: "less than" },
];

/** The status changes each status allows, as buttons (docs/messages.md, States). */
export const statusActions: Record<CampaignStatus, { to: CampaignStatus; label: string }[]> = {
  draft: [{ to: "active", label: "Activate" }, { to: "archived", label: "Archive" }],
  active: [{ to: "paused", label: "Pause" }, { to: "archived", label: "Archive" }],
  paused: [{ to: "active", label: "Activate" }, { to: "archived", label: "Archive" }],
  archived: [{ to: "draft", label: "Restore as draft" }],
};

/** A step as typed. */
export interface StepDraft {
  kind: StepKind;
  title: string;
  body: string;
  bodyFormat: BodyFormat;
  selector: string;
  placement: Placement;
  ctaLabel: string;
  ctaUrl: string;
  questionId: string;
  questionType: QuestionType;
  prompt: string;
  scale: "5" | "10";
  choices: string[];
}

export interface VariantDraft {
  key: string;
  weight: string;
  steps: StepDraft[];
}

export const cohortOps: readonly { op: CohortOp; label: string }[] = [
  { op: "in", label: "In cohort" },
  { op: "not_in", label: "Not in cohort" },
];

/**
 * A targeting condition as typed, a flag's or an audience's: a user
 * property compared with a value (kind trait), or membership of one of
 * the product's cohorts (kind cohort, by its id as picked, "" before one
 * is). A row keeps what was typed for the other kind while it is switched.
 */
export interface ConditionDraft {
  kind: "trait" | "cohort";
  trait: string;
  op: TraitOp | CohortOp;
  value: string;
  cohortId: string;
}

/** newCondition is a new row of a kind: "plan equals …", or "In cohort …". */
export function newCondition(kind: ConditionDraft["kind"] = "trait"): ConditionDraft {
  return { kind, trait: "", op: kind === "cohort" ? "in" : "eq", value: "", cohortId: "" };
}

/** conditionDraft makes a stored condition editable; one without a type is a trait's. */
export function conditionDraft(c: TraitCondition): ConditionDraft {
  const kind = c.type === "cohort" ? "cohort" : "trait";
  return { kind, trait: c.trait ?? "", op: c.op, value: kind === "cohort" ? "" : c.value, cohortId: c.cohortId ? String(c.cohortId) : "" };
}

/**
 * conditionOf is the API's condition for a row: a cohort's with its id and
 * an empty value, or a trait's (trimmed, without a value for exists),
 * without a type as an audience's always was.
 */
export function conditionOf(d: ConditionDraft): TraitCondition {
  if (d.kind === "cohort") return { type: "cohort", cohortId: Number(d.cohortId), op: d.op, value: "" };
  return { trait: d.trait.trim(), op: d.op, value: d.op === "exists" ? "" : d.value };
}

/**
 * conditionErrors are the faults of rows found before asking, keyed by
 * path under at ("conditions", "audience.conditions"): a cohort row
 * without its cohort.
 */
export function conditionErrors(conditions: ConditionDraft[], at: string): FieldErrors {
  const errors: FieldErrors = {};
  conditions.forEach((c, i) => {
    if (c.kind === "cohort" && c.cohortId === "") errors[`${at}[${i}].cohortId`] = "Pick a cohort.";
  });
  return errors;
}

/** A campaign as typed. */
export interface CampaignDraft {
  name: string;
  event: string;
  pathRegex: string;
  identified: boolean;
  percentage: string;
  conditions: ConditionDraft[];
  capKind: CapKind;
  capCount: string;
  variants: VariantDraft[];
}

/** newStep is a step of a kind, its question id q<n> for the n-th step. */
export function newStep(kind: StepKind = "modal", n = 1): StepDraft {
  return {
    kind, title: "", body: "", bodyFormat: "text", selector: "", placement: "top", ctaLabel: "", ctaUrl: "",
    questionId: `q${n}`, questionType: "rating", prompt: "", scale: "5", choices: ["", ""],
  };
}

/** newCampaign is what the editor starts from: one variant, one modal step, shown once on every page view. */
export function newCampaign(): CampaignDraft {
  return {
    name: "", event: "$pageview", pathRegex: "", identified: false, percentage: "100", conditions: [], capKind: "once", capCount: "1",
    variants: [{ key: "control", weight: "100", steps: [newStep()] }],
  };
}

function stepDraft(s: Step, n: number): StepDraft {
  const q = s.question;
  return {
    kind: s.kind, title: s.title ?? "", body: s.body ?? "", bodyFormat: s.bodyFormat ?? "text", selector: s.selector ?? "",
    placement: s.placement === "bottom" ? "bottom" : "top", ctaLabel: s.cta?.label ?? "", ctaUrl: s.cta?.url ?? "",
    questionId: q?.id ?? `q${n}`, questionType: q?.type ?? "rating", prompt: q?.prompt ?? "", scale: q?.scale === 10 ? "10" : "5",
    choices: q?.choices && q.choices.length > 0 ? [...q.choices] : ["", ""],
  };
}

/** draftOf makes a campaign editable. */
export function draftOf(c: Campaign): CampaignDraft {
  let n = 0;
  return {
    name: c.name, event: c.trigger.event, pathRegex: c.pathRegex, identified: c.audience.identified,
    percentage: String(c.audience.percentage), conditions: c.audience.conditions.map(conditionDraft),
    capKind: c.cap.kind, capCount: String(c.cap.count || 1),
    variants: c.variants.map((v) => ({ key: v.key, weight: String(v.weight), steps: v.steps.map((s) => stepDraft(s, ++n)) })),
  };
}

/** numberOf reads a number as typed: NaN when empty or not a number. */
function numberOf(s: string): number {
  return s.trim() === "" ? Number.NaN : Number(s);
}

/**
 * stepOf is the API's step for a draft: only the fields its kind uses are
 * sent filled (a tooltip's selector, a banner's placement, a survey's
 * question), and the CTA only when it has a label or an address.
 */
export function stepOf(d: StepDraft): Step {
  const cta = d.ctaLabel.trim() !== "" || d.ctaUrl.trim() !== "" ? { label: d.ctaLabel.trim(), url: d.ctaUrl.trim() } : null;
  let question: Question | null = null;
  if (d.kind === "survey") {
    const choice = d.questionType === "single" || d.questionType === "multiple";
    question = {
      id: d.questionId.trim(), type: d.questionType, prompt: d.prompt,
      // The scale is a rating's only; NPS is always 0 to 10.
      scale: d.questionType === "rating" ? Number(d.scale) : 0,
      choices: choice ? d.choices.map((c) => c.trim()) : [],
    };
  }
  return {
    kind: d.kind, title: d.title, body: d.body, bodyFormat: d.bodyFormat,
    selector: d.kind === "tooltip" ? d.selector.trim() : "",
    placement: d.kind === "banner" ? d.placement : "",
    cta, question,
  };
}

/**
 * writeOf turns the draft into the API's body, or the faults found before
 * asking (numbers that are not numbers, a cohort not picked), keyed by
 * field path.
 */
export function writeOf(d: CampaignDraft): { body: CampaignWrite; errors: FieldErrors } {
  const errors: FieldErrors = conditionErrors(d.conditions, "audience.conditions");
  const percentage = numberOf(d.percentage);
  if (!Number.isFinite(percentage)) errors["audience.percentage"] = "Enter a percentage from 0 to 100.";
  const count = d.capKind === "once" ? 1 : numberOf(d.capCount);
  if (!Number.isInteger(count) || count < 1) errors["cap.count"] = "Enter a whole number of times, 1 or more.";
  const variants: CampaignVariant[] = d.variants.map((v, i) => {
    const weight = d.variants.length === 1 ? 100 : numberOf(v.weight);
    if (!Number.isFinite(weight)) errors[`variants[${i}].weight`] = `Variant ${i + 1}: enter a weight from 0 to 100.`;
    return { key: v.key.trim(), weight, steps: v.steps.map(stepOf) };
  });
  const conditions = d.conditions.map(conditionOf);
  return {
    body: {
      name: d.name.trim(), trigger: { event: d.event.trim() }, pathRegex: d.pathRegex,
      audience: { identified: d.identified, percentage, conditions }, cap: { kind: d.capKind, count }, variants,
    },
    errors,
  };
}

/** weightSum adds the variants' weights in hundredths, as the server does. */
export function weightSum(variants: VariantDraft[]): number {
  return variants.reduce((n, v) => n + Math.round((Number(v.weight) || 0) * 100), 0) / 100;
}

/** variantKeys are the keys a new variant gets, in order. */
const variantKeys = ["control", "variant_b", "variant_c", "variant_d"];

/**
 * addVariant adds an A/B variant: a copy of the last one's steps under the
 * next free key, with the weights split evenly (a remainder to the first).
 */
export function addVariant(variants: VariantDraft[]): VariantDraft[] {
  if (variants.length >= limits.variants) return variants;
  const taken = new Set(variants.map((v) => v.key));
  const key = variantKeys.find((k) => !taken.has(k)) ?? `variant_${variants.length + 1}`;
  const last = variants[variants.length - 1];
  const next = [...variants, { key, weight: "0", steps: last ? last.steps.map((s) => ({ ...s, choices: [...s.choices] })) : [newStep()] }];
  return evenWeights(next);
}

/** evenWeights splits 100 between the variants in whole percents, the remainder to the first. */
export function evenWeights(variants: VariantDraft[]): VariantDraft[] {
  const each = Math.floor(100 / variants.length);
  return variants.map((v, i) => ({ ...v, weight: String(i === 0 ? 100 - each * (variants.length - 1) : each) }));
}

/** move returns list with the item at i moved by delta (−1 up, +1 down), or list when it cannot move. */
export function move<T>(list: T[], i: number, delta: number): T[] {
  const j = i + delta;
  if (j < 0 || j >= list.length) return list;
  const out = [...list];
  [out[i], out[j]] = [out[j], out[i]];
  return out;
}

/**
 * closestField is the field of the form an error is about: the path the
 * server named when the form has it, else its nearest parent the form has
 * (variants[0].steps[1].question.choices[2] → …question.choices), else "".
 */
export function closestField(field: string, has: (f: string) => boolean): string {
  let f = field;
  while (f) {
    if (has(f)) return f;
    const cut = Math.max(f.lastIndexOf("."), f.lastIndexOf("["));
    f = cut > 0 ? f.slice(0, cut) : "";
  }
  return "";
}

/** hasSurvey reports whether any variant of a campaign asks a question. */
export function hasSurvey(c: Pick<Campaign, "variants">): boolean {
  return c.variants.some((v) => v.steps.some((s) => s.kind === "survey"));
}

/** triggerLabel names a trigger for people. */
export function triggerLabel(event: string): string {
  return ({ $pageview: "Page view", $click: "Click", $form_submit: "Form submit" } as Record<string, string>)[event] ?? event;
}

/** rate is part / whole, or null when nobody was shown the campaign. */
export function rate(part: number, whole: number): number | null {
  return whole > 0 ? part / whole : null;
}
