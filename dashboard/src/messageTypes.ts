// The shapes of the campaign API (docs/messages.md), written by hand while
// api/openapi.yaml does not describe it yet. Once it does, these become
// aliases of the generated schemas in types.ts, like every other shape.

/** A campaign's life-cycle state: draft → active ⇄ paused, any → archived → draft. */
export type CampaignStatus = "draft" | "active" | "paused" | "archived";
/** What a step shows. */
export type StepKind = "tooltip" | "modal" | "banner" | "survey";
/** How a step's body is written. */
export type BodyFormat = "text" | "markdown";
/** Where a banner sits. */
export type Placement = "top" | "bottom";
/** A survey question's kind of answer. */
export type QuestionType = "rating" | "nps" | "single" | "multiple" | "text";
/** How a trait condition compares (gt and lt compare numbers). */
export type TraitOp = "eq" | "neq" | "contains" | "exists" | "gt" | "lt";
/** How often one user may see a campaign. */
export type CapKind = "once" | "times" | "per_day";

export interface TraitCondition {
  trait: string;
  op: TraitOp;
  value: string;
}

export interface Audience {
  identified: boolean;
  /** 0–100, two decimals. */
  percentage: number;
  conditions: TraitCondition[];
}

export interface Cap {
  kind: CapKind;
  count: number;
}

export interface Cta {
  label: string;
  url: string;
}

export interface Question {
  id: string;
  type: QuestionType;
  prompt: string;
  /** 5 or 10 for rating. */
  scale: number;
  choices: string[];
}

export interface Step {
  kind: StepKind;
  title: string;
  body: string;
  bodyFormat: BodyFormat;
  selector: string;
  placement: Placement | "";
  cta: Cta | null;
  question: Question | null;
}

export interface CampaignVariant {
  key: string;
  weight: number;
  steps: Step[];
}

/** What the state store counts of a campaign. */
export interface CampaignStats {
  /** Users who saw it at least once. */
  shown: number;
  ctaClicks: number;
  completed: number;
  dismissed: number;
}

export interface Campaign {
  id: number;
  productId: number;
  name: string;
  status: CampaignStatus;
  trigger: { event: string };
  pathRegex: string;
  audience: Audience;
  cap: Cap;
  variants: CampaignVariant[];
  experimentId: number | null;
  flagKey: string;
  createdAt: string;
  updatedAt: string;
  /** Given in the list (GET /api/v1/campaigns). */
  stats?: CampaignStats;
}

/** The body of POST /api/v1/campaigns and PUT /api/v1/campaigns/{id}. */
export interface CampaignWrite {
  name?: string;
  status?: CampaignStatus;
  trigger?: { event: string };
  pathRegex?: string;
  audience?: Audience;
  cap?: Cap;
  variants?: CampaignVariant[];
}

export interface CampaignList {
  items: Campaign[];
}

/** One value of a question and how many answers gave it. */
export interface SurveyCount {
  value: string;
  count: number;
}

export interface SurveyQuestionResult {
  id: string;
  type: QuestionType;
  prompt: string;
  answers: number;
  counts: SurveyCount[];
  /** The NPS score (−100 to 100) of nps questions, else null. */
  nps: number | null;
}

export interface SurveyResults {
  campaignId: number;
  responses: number;
  questions: SurveyQuestionResult[];
}

export interface MessageSettings {
  autoRender: boolean;
}
