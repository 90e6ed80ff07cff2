/**
 * The shapes of `GET /api/v1/messages/active` (docs/messages.md, "The SDK paths"):
 * one campaign as the server shows it to this user, with the variant already
 * chosen, and its steps.
 */

/** A button that ends the flow (`message_cta_click`) and opens `url`. */
export interface Cta {
  label: string;
  url: string;
}

/** The question of a survey step; `scale` is 5 or 10 for `rating`, `choices` 2–10 for `single` and `multiple`. */
export interface Question {
  id: string;
  type: "rating" | "nps" | "single" | "multiple" | "text";
  prompt: string;
  scale?: number;
  choices?: string[] | null;
}

/** One step of a flow. */
export interface Step {
  kind: "modal" | "banner" | "tooltip" | "survey";
  title: string;
  body: string;
  bodyFormat: "text" | "markdown";
  /** The element a tooltip points at (CSS selector); "" otherwise. */
  selector?: string;
  /** `top` or `bottom` for a banner; for a tooltip, the side it prefers. */
  placement?: string;
  cta?: Cta | null;
  question?: Question | null;
}

/** The `$exposure` a campaign's first rendered step sends, or null without a running experiment. */
export interface Exposure {
  flag: string;
  experiment_id: string | number | null;
  variant: string;
}

/** One entry of the active list. */
export interface Campaign {
  id: number;
  name: string;
  variant: string;
  trigger: { event: string };
  pathRegex: string;
  /** Impressions the cap still allows; the SDK counts it down until it fetches again. */
  remaining: number;
  exposure: Exposure | null;
  steps: Step[];
}

/** The body of `GET /api/v1/messages/active`. */
export interface ActiveList {
  messages: Campaign[];
}

/** A survey answer: a number for rating and nps, a string for single and text, a list for multiple. */
export type AnswerValue = number | string | string[];

/** The four events of a flow, sent to `/e` and to `/api/v1/messages/{id}/track`. */
export type MessageEvent = "message_impression" | "message_dismiss" | "message_cta_click" | "message_complete";
