// The shapes of the /api/v1 answers the dashboard reads. They mirror the
// schemas of api/openapi.yaml (DashboardConfig, Session, User, Product,
// ApiKeyRecord, QueryTokenRecord, KeyCreated, TokenCreated); keep the two
// in step when either changes.

/** A credential's life-cycle state. */
export type CredentialStatus = "active" | "disabled" | "revoked";

/** Which data an API key writes: production or test. */
export type KeyEnv = "live" | "test";

export interface User {
  id: number;
  email: string;
  createdAt: string;
}

export interface DashboardConfig {
  setupRequired: boolean;
  features: { errorTracking: boolean };
}

export interface Session {
  user: User;
  expiresAt: string;
}

export interface Product {
  id: number;
  workspaceId: number;
  name: string;
  createdAt: string;
}

export interface ApiKey {
  id: number;
  productId: number;
  prefix: string;
  env: KeyEnv;
  status: CredentialStatus;
  rateLimit: number;
  createdAt: string;
  lastUsedAt: string | null;
}

export interface QueryToken {
  id: number;
  productId: number;
  prefix: string;
  status: CredentialStatus;
  createdAt: string;
  lastUsedAt: string | null;
}

export interface KeyCreated {
  secret: string;
  key: ApiKey;
}

export interface TokenCreated {
  secret: string;
  token: QueryToken;
}

export interface List<T> {
  items: T[];
}

// Query API shapes (api/openapi.yaml: FunnelResult, TrendResult,
// RetentionResult, BotsResult, EventNamesResult, SavedQuery, Annotation).

export interface FunnelRequest {
  steps: string[];
  windowHours?: number;
  dateFrom?: string;
  dateTo?: string;
}

export interface FunnelStep {
  name: string;
  count: number;
  /** null for the first step. */
  conversionPct: number | null;
}

export interface FunnelResult {
  steps: FunnelStep[];
}

export type Operator = "eq" | "neq" | "contains" | "not_contains" | "regex" | "gt" | "lt" | "is_set" | "is_not_set";

export interface FilterRequest {
  property: string;
  operator: Operator;
  value?: string | number;
}

export type TrendMath = "total" | "unique_users";
export type Interval = "hour" | "day" | "week" | "month";

export interface SeriesRequest {
  event: string;
  math?: TrendMath;
  filters?: FilterRequest[];
}

export interface TrendRequest {
  series: SeriesRequest[];
  dateFrom?: string;
  dateTo?: string;
  interval?: Interval;
  filters?: FilterRequest[];
  breakdown?: string;
  breakdownLimit?: number;
}

export interface TrendPoint {
  /** YYYY-MM-DD, or an RFC 3339 time for hourly buckets. */
  date: string;
  value: number;
}

export interface TrendLine {
  label: string;
  event: string;
  breakdownValue: string | null;
  other?: boolean;
  data: TrendPoint[];
}

export interface TrendResult {
  series: TrendLine[];
}

export interface RetentionRequest {
  startEvent: string;
  returnEvent?: string;
  dateFrom?: string;
  dateTo?: string;
  period?: "day" | "week" | "month";
}

export interface Cohort {
  date: string;
  size: number;
  values: number[];
}

export interface RetentionResult {
  period: string;
  cohorts: Cohort[];
}

export interface Bot {
  name: string;
  category: string;
  categoryLabel: string;
  hits: number;
  lastSeen: string;
}

export interface BotsResult {
  bots: Bot[];
  topPages: { url: string; hits: number; bots: number }[];
}

export interface EventNames {
  events: { name: string; count: number }[];
}

export type QueryKind = "funnel" | "trend" | "retention";

export interface SavedQuery {
  id: number;
  productId: number;
  kind: QueryKind;
  name: string;
  definition: unknown;
  createdAt: string;
  updatedAt: string;
}

export type AnnotationColor = "emerald" | "sky" | "amber" | "rose" | "violet" | "slate";

export interface Annotation {
  id: number;
  date: string;
  label: string;
  description: string;
  scope: "workspace" | "query";
  queryId: number | null;
  color: AnnotationColor;
  createdBy: string;
  createdAt: string;
}

export interface AnnotationInput {
  date: string;
  label: string;
  description?: string;
  color: AnnotationColor;
  scope: "workspace" | "query";
  queryId?: number;
}

export interface AnnotationPage {
  items: Annotation[];
  page: number;
  pageSize: number;
  total: number;
}
