/**
 * The shapes of the SDK's message paths (docs/messages.md, "The SDK paths"),
 * generated from the API's contract (api/openapi.yaml) into api.gen.ts: one
 * campaign as `GET /api/v1/messages/active` shows it to this user, with the
 * variant already chosen, and its steps.
 */
import type { components } from "../api.gen.js";

type Schemas = components["schemas"];

/** One entry of the active list; `remaining` is counted down locally until the list is fetched again. */
export type Campaign = Schemas["ActiveMessage"];
/** The body of `GET /api/v1/messages/active`. */
export type ActiveList = Schemas["ActiveMessages"];
/** One step of a flow: a modal, a banner, a tooltip or a survey question. */
export type Step = Schemas["CampaignStep"];
/** The question of a survey step. */
export type Question = Schemas["SurveyQuestion"];
/** The `$exposure` a campaign's first rendered step sends, or null without a running experiment. */
export type Exposure = Schemas["MessageExposure"];
/** The four events of a flow, sent to `/e` and to `/api/v1/messages/{id}/track`. */
export type MessageEvent = Schemas["MessageTrack"]["event"];
/** A survey answer: a number for rating and nps, a string for single and text, a list for multiple. */
export type AnswerValue = number | string | string[];
