// The shapes of the /api/v1 requests and answers the dashboard uses, by the
// names the dashboard's code knows them by. Every one is a schema of
// api/openapi.yaml, generated into api.gen.ts (npm run api-types), so the
// dashboard and the API cannot drift apart: a change to the contract that
// breaks a page fails its type check.
import type { components } from "./api.gen";

type Schemas = components["schemas"];

/** A credential's life-cycle state. */
export type CredentialStatus = Schemas["CredentialStatus"];
/** Which data an API key writes: production or test. */
export type KeyEnv = Schemas["ApiKeyRecord"]["env"];
/**
 * Which data a query reads (the query parameter Env of api/openapi.yaml):
 * live, or the events sent with test keys. The same two as a key's env.
 */
export type DataEnv = KeyEnv;

export type User = Schemas["User"];
export type DashboardConfig = Schemas["DashboardConfig"];
export type Session = Schemas["SessionInfo"];
export type Role = Schemas["Role"];
export type Membership = Schemas["Membership"];
export type Member = Schemas["Member"];
export type Invite = Schemas["Invite"];
export type InviteCreated = Schemas["InviteCreated"];
export type Product = Schemas["Product"];
/** A product's retention periods in days (0: the default), and the server's replay period. */
export type DataRetentionSettings = Schemas["DataRetentionSettings"];
export type DataRetentionUpdate = Schemas["DataRetentionUpdate"];
export type PrivacySettings = Schemas["PrivacySettings"];
export type PrivacySettingsUpdate = Schemas["PrivacySettingsUpdate"];
export type ApiKey = Schemas["ApiKeyRecord"];
export type QueryToken = Schemas["QueryTokenRecord"];
export type KeyCreated = Schemas["KeyCreated"];
export type TokenCreated = Schemas["TokenCreated"];
/** A read-only public link to a product's Overview, and its answers. */
export type SharedLink = Schemas["SharedLink"];
export type SharedLinkCreated = Schemas["SharedLinkCreated"];
export type ShareInfo = Schemas["ShareInfo"];
/** A custom event or page path whose conversions the Overview shows, and its answers. */
export type Goal = Schemas["Goal"];
export type GoalCreate = Schemas["GoalCreate"];
export type GoalsRequest = Schemas["GoalsRequest"];
export type GoalsResult = Schemas["GoalsResult"];
/** The answer of every list endpoint of the settings and saved queries. */
export interface List<T> {
  items: T[];
}

export type FunnelRequest = Schemas["FunnelRequest"];
export type FunnelStep = Schemas["FunnelStep"];
export type FunnelResult = Schemas["FunnelResult"];
export type FunnelUsersRequest = Schemas["FunnelUsersRequest"];
export type FunnelUsersResult = Schemas["FunnelUsersResult"];
export type Operator = Schemas["FilterOperator"];
export type FilterRequest = Schemas["Filter"];
export type SeriesRequest = Schemas["TrendSeriesRequest"];
export type TrendMath = NonNullable<SeriesRequest["math"]>;
export type TrendRequest = Schemas["TrendRequest"];
export type Interval = NonNullable<TrendRequest["interval"]>;
export type TrendPoint = Schemas["TrendPoint"];
export type TrendLine = Schemas["TrendLine"];
export type TrendResult = Schemas["TrendResult"];
export type SessionsRequest = Schemas["SessionsRequest"];
export type SessionsResult = Schemas["SessionsResult"];
export type PathsRequest = Schemas["PathsRequest"];
export type PathsResult = Schemas["PathsResult"];
export type PathNode = PathsResult["nodes"][number];
export type PathUsersRequest = Schemas["PathUsersRequest"];
export type PathUsersResult = Schemas["PathUsersResult"];
export type RetentionRequest = Schemas["RetentionRequest"];
export type Cohort = Schemas["Cohort"];
export type RetentionResult = Schemas["RetentionResult"];
export type Bot = Schemas["Bot"];
export type BotsResult = Schemas["BotsResult"];
export type EventNames = Schemas["EventNamesResult"];
export type LiveVisitors = Schemas["LiveResult"];
export type QueryKind = Schemas["QueryKind"];
export type SavedQuery = Schemas["SavedQuery"];
export type Board = Schemas["Board"];
export type BoardInput = Schemas["BoardInput"];
export type Tile = Schemas["Tile"];
export type TileInput = Schemas["TileInput"];
export type TileLayout = Schemas["TileLayout"];
export type TileCard = Schemas["TileCard"];
export type AnnotationColor = Schemas["AnnotationColor"];
export type Annotation = Schemas["Annotation"];
export type AnnotationInput = Schemas["AnnotationCreate"];
export type AnnotationPage = Schemas["AnnotationPage"];

export type Flag = Schemas["Flag"];
export type FlagVariant = Schemas["FlagVariant"];
export type FlagCondition = Schemas["FlagCondition"];
export type FlagWrite = Schemas["FlagWrite"];
export type FlagList = Schemas["FlagList"];
export type FlagChange = Schemas["FlagChange"];
export type FlagChangeList = Schemas["FlagChangeList"];
export type Group = Schemas["Group"];
export type GroupList = Schemas["GroupList"];
export type Experiment = Schemas["Experiment"];
export type ExperimentStatus = Experiment["status"];
export type ExperimentList = Schemas["ExperimentList"];
export type ExperimentWrite = Schemas["ExperimentWrite"];
export type ExperimentResults = Schemas["ExperimentResults"];
export type SampleRatioCheck = Schemas["SampleRatioCheck"];
export type MetricResult = Schemas["MetricResult"];
export type ArmResult = Schemas["ArmResult"];
export type Estimate = Schemas["Estimate"];

export type ErrorGroup = Schemas["ErrorGroup"];
/** A group's state: open (the default), resolved in a release, or ignored. */
export type ErrorStatus = ErrorGroup["status"];
export type ErrorGroupList = Schemas["ErrorGroupList"];
export type ErrorGroupDetail = Schemas["ErrorGroupDetail"];
export type ErrorOccurrence = Schemas["ErrorOccurrence"];
export type ReplaySession = Schemas["ReplaySession"];
export type ReplayList = Schemas["ReplayList"];
export type ReplayChunk = Schemas["ReplayChunk"];
export type ReplayDetail = Schemas["ReplayDetail"];
/** One event of a user (GET /api/v1/users/{distinctId}/events), and a page of them. */
export type UserEvent = Schemas["UserEvent"];
export type UserEventsResult = Schemas["UserEventsResult"];
export type Person = Schemas["Person"];
export type PersonRow = Schemas["PersonRow"];
export type PersonList = Schemas["PersonList"];
export type SavedCohort = Schemas["SavedCohort"];
export type SavedCohortList = Schemas["SavedCohortList"];
export type CohortInput = Schemas["CohortInput"];
export type CohortDefinition = Schemas["CohortDefinition"];
export type CohortCondition = Schemas["CohortCondition"];
export type CohortMembersPage = Schemas["CohortMembersPage"];
export type ErrorFrame = Schemas["ErrorFrame"];
export type ErrorGroupStatus = Schemas["ErrorGroupStatus"];
export type ErrorGroupMerge = Schemas["ErrorGroupMerge"];
export type ErrorGroupMerged = Schemas["ErrorGroupMerged"];
export type ErrorGroupUnmerged = Schemas["ErrorGroupUnmerged"];
export type MergedErrorGroup = Schemas["MergedErrorGroup"];
/** One sourcemap upload of a release (without its content). */
export type Sourcemap = Schemas["Sourcemap"];

/** The running server's build (GET /api/v1/version). */
export type BuildInfo = Schemas["BuildInfo"];

// In-app messages (docs/messages.md).
export type CampaignStatus = Schemas["CampaignStatus"];
export type Campaign = Schemas["Campaign"];
export type CampaignWrite = Schemas["CampaignWrite"];
export type CampaignList = Schemas["CampaignList"];
export type CampaignStats = Schemas["CampaignStats"];
export type CampaignVariant = Schemas["CampaignVariant"];
export type Step = Schemas["CampaignStep"];
export type StepKind = Step["kind"];
export type BodyFormat = NonNullable<Step["bodyFormat"]>;
export type Question = Schemas["SurveyQuestion"];
export type QuestionType = Question["type"];
export type TraitCondition = Schemas["TraitCondition"];
/** A cohort condition's operator: the user is in the cohort, or is not. */
export type CohortOp = Extract<TraitCondition["op"], "in" | "not_in">;
/** A trait condition's comparison: eq, exists, gt… */
export type TraitOp = Exclude<TraitCondition["op"], CohortOp>;
export type CapKind = Schemas["FrequencyCap"]["kind"];
export type MessageSettings = Schemas["MessageSettings"];
export type SurveyResults = Schemas["SurveyResults"];
export type SurveyQuestionResult = Schemas["SurveyQuestionResult"];
/** A person deletion job (docs/privacy.md); it never lists the ids. */
export type PersonDeletion = Schemas["PersonDeletion"];
/** A page of a product's audit log of privacy operations. */
export type AuditLogPage = Schemas["AuditLogPage"];
