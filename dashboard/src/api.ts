// The dashboard's client of the /api/v1 endpoints. Requests go to the same
// origin with the session cookie; the browser adds the Origin header the
// server checks on every change.
import type {
  Annotation, AnnotationInput, Board, BoardInput, Tile, TileInput, AnnotationPage, ApiKey, BotsResult, BuildInfo, Campaign, CampaignList, CampaignWrite, CredentialStatus, DashboardConfig, DataEnv, ErrorGroupDetail,
  ErrorGroupList, ErrorGroupMerge, ErrorGroupMerged, ErrorGroupStatus, ErrorGroupUnmerged, ErrorStatus, EventNames, Experiment, ExperimentList, ExperimentResults, ExperimentWrite, Flag, FlagChangeList,
  FlagList, FlagWrite, FunnelRequest, FunnelResult, GroupList, KeyCreated, KeyEnv, List, LiveVisitors, Product, QueryKind, QueryToken, RetentionRequest, RetentionResult,
  MessageSettings, ReplayDetail, SavedCohort, SavedCohortList, CohortInput, CohortMembersPage, ReplayList, SavedQuery, Session, SessionsRequest, SessionsResult, PathsRequest, PathsResult, PathUsersRequest, PathUsersResult, FunnelUsersRequest, FunnelUsersResult, Goal, GoalCreate, PersonDeletion, Person, PersonList, AuditLogPage, GoalsRequest, GoalsResult, ShareInfo, SharedLink, SharedLinkCreated, Sourcemap, SurveyResults,
  TokenCreated, TrendRequest, TrendResult, UserEventsResult, Member, Invite, InviteCreated, Role, DataRetentionSettings, DataRetentionUpdate, PrivacySettings, PrivacySettingsUpdate,
} from "./types";

/** ApiError is an error answer: the HTTP status and the body's code and message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Seconds from Retry-After, on 429. */
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

type Listener = (e: ApiError) => void;
let onSignedOut: Listener | null = null;

/**
 * setSignedOutHandler registers what happens when a call finds the session
 * gone (401 not_signed_in): the app goes back to the sign-in screen.
 */
export function setSignedOutHandler(fn: Listener | null): void {
  onSignedOut = fn;
}

/**
 * apiBase prefixes every /api path: "" in the dashboard, and in a shared
 * link's read-only view "/share/{secret}", under which the server answers
 * the Overview's reads for the link's product and nothing else
 * (docs/dashboard.md, "Shared links").
 */
let apiBase = "";

/** setApiBase sends every later call under base (see apiBase). */
export function setApiBase(base: string): void {
  apiBase = base;
}

async function request<T>(method: string, path: string, body?: unknown, raw?: { type: string; body: Blob | string }): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path.startsWith("/api/") ? apiBase + path : path, {
      method,
      credentials: "same-origin",
      headers: raw
        ? { Accept: "application/json", "Content-Type": raw.type }
        : body === undefined
          ? { Accept: "application/json" }
          : { Accept: "application/json", "Content-Type": "application/json" },
      body: raw ? raw.body : body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, "network_error", "The server could not be reached. Check your connection and try again.");
  }
  if (res.status === 204) return undefined as T;
  const data: unknown = await res.json().catch(() => null);
  if (!res.ok) {
    const e = (data as { error?: { code?: string; message?: string } } | null)?.error;
    const retry = Number(res.headers.get("Retry-After")) || undefined;
    const err = new ApiError(res.status, e?.code ?? `http_${res.status}`, e?.message ?? `The server answered ${res.status}.`, retry);
    if (err.code === "not_signed_in" && onSignedOut) onSignedOut(err);
    throw err;
  }
  return data as T;
}

/** requestText GETs a text document, failing like request. */
async function requestText(path: string): Promise<string> {
  let res: Response;
  try {
    res = await fetch(path, { credentials: "same-origin" });
  } catch {
    throw new ApiError(0, "network_error", "The server could not be reached. Check your connection and try again.");
  }
  if (!res.ok) throw new ApiError(res.status, `http_${res.status}`, `The server answered ${res.status}.`);
  return res.text();
}

const enc = encodeURIComponent;

/**
 * scoped is a product-scoped API path: the session names its product with
 * ?product=ID, plus any other parameters that are set.
 */
export function scoped(path: string, product: number, params: Record<string, string | number | undefined> = {}): string {
  const q = new URLSearchParams({ product: String(product) });
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") q.set(k, String(v));
  return `${path}?${q}`;
}

/**
 * envParam is a query's env parameter: "test" for the events of test keys,
 * and left out for live data, the API's default.
 */
function envParam(env: DataEnv = "live"): string | undefined {
  return env === "test" ? "test" : undefined;
}

/** A day range as the query API reads it. */
export interface Days {
  from: string;
  to: string;
}

/** api is every call the dashboard makes. */
export const api = {
  config: () => request<DashboardConfig>("GET", "/api/v1/dashboard/config"),
  setup: (email: string, password: string, setupToken: string) =>
    request<Session>("POST", "/api/v1/dashboard/setup", { email, password, setupToken }),
  login: (email: string, password: string) => request<Session>("POST", "/api/v1/session", { email, password }),
  /** session resolves to null when nobody is signed in. */
  session: async (): Promise<Session | null> => {
    try {
      return await request<Session>("GET", "/api/v1/session");
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) return null;
      throw e;
    }
  },
  logout: () => request<void>("DELETE", "/api/v1/session"),
  changePassword: (currentPassword: string, newPassword: string) =>
    request<void>("PUT", "/api/v1/session/password", { currentPassword, newPassword }),
  acceptInvite: (token: string, password: string) => request<Session>("POST", "/api/v1/invites/accept", { token, password }),
  members: (workspace: number) => request<List<Member>>("GET", `/api/v1/workspaces/${enc(workspace)}/members`),
  setMemberRole: (workspace: number, userId: number, role: Role) =>
    request<void>("PATCH", `/api/v1/workspaces/${enc(workspace)}/members/${enc(userId)}`, { role }),
  removeMember: (workspace: number, userId: number) => request<void>("DELETE", `/api/v1/workspaces/${enc(workspace)}/members/${enc(userId)}`),
  invites: (workspace: number) => request<List<Invite>>("GET", `/api/v1/workspaces/${enc(workspace)}/invites`),
  createInvite: (workspace: number, email: string, role: Role) =>
    request<InviteCreated>("POST", `/api/v1/workspaces/${enc(workspace)}/invites`, { email, role }),
  revokeInvite: (workspace: number, id: number) => request<void>("DELETE", `/api/v1/workspaces/${enc(workspace)}/invites/${enc(id)}`),

  sharedLinks: (productId: number) => request<List<SharedLink>>("GET", `/api/v1/products/${enc(productId)}/shared-links`),
  createSharedLink: (productId: number, name: string, password: string) =>
    request<SharedLinkCreated>("POST", `/api/v1/products/${enc(productId)}/shared-links`, password ? { name, password } : { name }),
  revokeSharedLink: (productId: number, id: number) =>
    request<void>("DELETE", `/api/v1/products/${enc(productId)}/shared-links/${enc(id)}`),
  goals: (productId: number) => request<List<Goal>>("GET", `/api/v1/products/${enc(productId)}/goals`),
  createGoal: (productId: number, goal: GoalCreate) => request<Goal>("POST", `/api/v1/products/${enc(productId)}/goals`, goal),
  deleteGoal: (productId: number, id: number) => request<void>("DELETE", `/api/v1/products/${enc(productId)}/goals/${enc(id)}`),
  /** The privacy operations (docs/privacy.md): delete persons, read a job, the audit log. */
  requestPersonDeletion: (productId: number, distinctIds: string[]) =>
    request<PersonDeletion>("POST", `/api/v1/products/${enc(productId)}/persons/deletions`, { distinctIds }),
  personDeletion: (productId: number, job: number) => request<PersonDeletion>("GET", `/api/v1/products/${enc(productId)}/persons/deletions/${enc(job)}`),
  auditLog: (productId: number, before?: number) =>
    request<AuditLogPage>("GET", `/api/v1/products/${enc(productId)}/audit-log?limit=20${before ? `&before=${enc(before)}` : ""}`),
  /** shareInfo and unlockShare are the shared view's own calls (under setApiBase). */
  shareInfo: () => request<ShareInfo>("GET", "/api/v1/share"),
  unlockShare: (password: string) => request<void>("POST", "/api/v1/share/unlock", { password }),

  products: () => request<List<Product>>("GET", "/api/v1/products"),
  product: (id: number) => request<Product>("GET", `/api/v1/products/${enc(id)}`),
  createProduct: (name: string) => request<Product>("POST", "/api/v1/products", { name }),
  renameProduct: (id: number, name: string) => request<Product>("PATCH", `/api/v1/products/${enc(id)}`, { name }),
  setProductTimeZone: (id: number, timeZone: string) => request<Product>("PATCH", `/api/v1/products/${enc(id)}`, { timeZone }),
  dataRetention: (id: number) => request<DataRetentionSettings>("GET", `/api/v1/products/${enc(id)}/retention`),
  setDataRetention: (id: number, r: DataRetentionUpdate) => request<DataRetentionSettings>("PUT", `/api/v1/products/${enc(id)}/retention`, r),
  privacySettings: (id: number) => request<PrivacySettings>("GET", `/api/v1/products/${enc(id)}/privacy`),
  setPrivacySettings: (id: number, v: PrivacySettingsUpdate) => request<PrivacySettings>("PUT", `/api/v1/products/${enc(id)}/privacy`, v),

  keys: (productId: number) => request<List<ApiKey>>("GET", `/api/v1/products/${enc(productId)}/keys`),
  createKey: (productId: number, env: KeyEnv) => request<KeyCreated>("POST", `/api/v1/products/${enc(productId)}/keys`, { env }),
  setKeyStatus: (productId: number, keyId: number, status: CredentialStatus) =>
    request<ApiKey>("PATCH", `/api/v1/products/${enc(productId)}/keys/${enc(keyId)}`, { status }),

  tokens: (productId: number) => request<List<QueryToken>>("GET", `/api/v1/products/${enc(productId)}/tokens`),
  createToken: (productId: number) => request<TokenCreated>("POST", `/api/v1/products/${enc(productId)}/tokens`, {}),
  setTokenStatus: (productId: number, tokenId: number, status: CredentialStatus) =>
    request<QueryToken>("PATCH", `/api/v1/products/${enc(productId)}/tokens/${enc(tokenId)}`, { status }),

  // The queries read live data unless env is "test" (the events of test keys).
  funnel: (p: number, body: FunnelRequest, env?: DataEnv) =>
    request<FunnelResult>("POST", scoped("/api/v1/query/funnel", p, { env: envParam(env) }), body),
  trend: (p: number, body: TrendRequest, env?: DataEnv) => request<TrendResult>("POST", scoped("/api/v1/query/trend", p, { env: envParam(env) }), body),
  /** funnelUsers lists a page of the users who reached a funnel step, or dropped off after it (docs/queries.md, "Who converted, who dropped off"). */
  funnelUsers: (p: number, body: FunnelUsersRequest, env?: DataEnv) =>
    request<FunnelUsersResult>("POST", scoped("/api/v1/query/funnel/users", p, { env: envParam(env) }), body),
  /** paths answers the most common paths of pages or events (docs/queries.md, "Paths"). */
  paths: (p: number, body: PathsRequest, env?: DataEnv) => request<PathsResult>("POST", scoped("/api/v1/query/paths", p, { env: envParam(env) }), body),
  /** pathUsers lists a page of the users who reached one node of the paths. */
  pathUsers: (p: number, body: PathUsersRequest, env?: DataEnv) =>
    request<PathUsersResult>("POST", scoped("/api/v1/query/paths/users", p, { env: envParam(env) }), body),
  /** sessions answers visits, bounce rate, visit duration, entry and exit pages (docs/queries.md, "Sessions"). */
  sessions: (p: number, body: SessionsRequest, env?: DataEnv) =>
    request<SessionsResult>("POST", scoped("/api/v1/query/sessions", p, { env: envParam(env) }), body),
  /** goalConversions answers the goals' conversions, or one goal's by a breakdown (docs/queries.md, "Goals"). */
  goalConversions: (p: number, body: GoalsRequest, env?: DataEnv) =>
    request<GoalsResult>("POST", scoped("/api/v1/query/goals", p, { env: envParam(env) }), body),
  retention: (p: number, body: RetentionRequest, env?: DataEnv) =>
    request<RetentionResult>("POST", scoped("/api/v1/query/retention", p, { env: envParam(env) }), body),
  /** live is the number of visitors now (the last five minutes); it does not take from the query budget. */
  live: (p: number, env?: DataEnv) => request<LiveVisitors>("GET", scoped("/api/v1/query/live", p, { env: envParam(env) })),
  bots: (p: number, d: Days, env?: DataEnv) =>
    request<BotsResult>("GET", scoped("/api/v1/query/bots", p, { dateFrom: d.from, dateTo: d.to, env: envParam(env) })),
  eventNames: (p: number, d: Days, env?: DataEnv) =>
    request<EventNames>("GET", scoped("/api/v1/query/events", p, { dateFrom: d.from, dateTo: d.to, env: envParam(env) })),

  savedQueries: (p: number) => request<List<SavedQuery>>("GET", scoped("/api/v1/queries", p)),
  saveQuery: (p: number, kind: QueryKind, name: string, definition: unknown) =>
    request<SavedQuery>("POST", scoped("/api/v1/queries", p), { kind, name, definition }),
  deleteQuery: (p: number, id: number) => request<void>("DELETE", scoped(`/api/v1/queries/${enc(id)}`, p)),
  /**
   * runSaved runs a saved query on the data env picks (saved queries belong
   * to the product, not to an env), over the days picked on screen when given.
   */
  runSaved: <T>(p: number, id: number, env?: DataEnv, d?: Days) =>
    request<T>("POST", scoped(`/api/v1/queries/${enc(id)}/run`, p, { env: envParam(env), dateFrom: d?.from, dateTo: d?.to })),

  boards: (p: number) => request<List<Board>>("GET", scoped("/api/v1/boards", p)),
  board: (p: number, id: number) => request<Board>("GET", scoped(`/api/v1/boards/${enc(id)}`, p)),
  createBoard: (p: number, b: BoardInput) => request<Board>("POST", scoped("/api/v1/boards", p), b),
  updateBoard: (p: number, id: number, b: BoardInput) => request<Board>("PUT", scoped(`/api/v1/boards/${enc(id)}`, p), b),
  deleteBoard: (p: number, id: number) => request<void>("DELETE", scoped(`/api/v1/boards/${enc(id)}`, p)),
  addTile: (p: number, id: number, t: TileInput) => request<Tile>("POST", scoped(`/api/v1/boards/${enc(id)}/tiles`, p), t),
  removeTile: (p: number, id: number, tile: number) => request<void>("DELETE", scoped(`/api/v1/boards/${enc(id)}/tiles/${enc(tile)}`, p)),
  /** runTile runs a board's tile with the board's range and filters (else over d). */
  runTile: <T>(p: number, id: number, tile: number, env?: DataEnv, d?: Days) =>
    request<T>("POST", scoped(`/api/v1/boards/${enc(id)}/tiles/${enc(tile)}/run`, p, { env: envParam(env), dateFrom: d?.from, dateTo: d?.to })),
  createBoardLink: (productId: number, boardId: number, name: string) =>
    request<SharedLinkCreated>("POST", `/api/v1/products/${enc(productId)}/shared-links`, { name, boardId }),

  annotations: (p: number, opts: { page?: number; pageSize?: number; queryId?: number; from?: string; to?: string } = {}) =>
    request<AnnotationPage>("GET", scoped("/api/v1/annotations", p, opts)),
  createAnnotation: (p: number, a: AnnotationInput) => request<Annotation>("POST", scoped("/api/v1/annotations", p), a),
  deleteAnnotation: (p: number, id: number) => request<void>("DELETE", scoped(`/api/v1/annotations/${enc(id)}`, p)),
  bulkDeleteAnnotations: (p: number, ids: number[]) =>
    request<{ deleted: number }>("POST", scoped("/api/v1/annotations/bulk-delete", p), { ids }),

  groups: (p: number, type?: string) => request<GroupList>("GET", scoped("/api/v1/groups", p, { type })),
  flags: (p: number) => request<FlagList>("GET", scoped("/api/v1/flags", p)),
  flag: (p: number, id: number) => request<Flag>("GET", scoped(`/api/v1/flags/${enc(id)}`, p)),
  createFlag: (p: number, f: FlagWrite) => request<Flag>("POST", scoped("/api/v1/flags", p), f),
  updateFlag: (p: number, id: number, f: FlagWrite) => request<Flag>("PUT", scoped(`/api/v1/flags/${enc(id)}`, p), f),
  deleteFlag: (p: number, id: number) => request<void>("DELETE", scoped(`/api/v1/flags/${enc(id)}`, p)),
  flagChanges: (p: number, id: number) => request<FlagChangeList>("GET", scoped(`/api/v1/flags/${enc(id)}/changes`, p)),

  experiments: (p: number) => request<ExperimentList>("GET", scoped("/api/v1/experiments", p)),
  experiment: (p: number, id: number) => request<Experiment>("GET", scoped(`/api/v1/experiments/${enc(id)}`, p)),
  createExperiment: (p: number, e: ExperimentWrite) => request<Experiment>("POST", scoped("/api/v1/experiments", p), e),
  updateExperiment: (p: number, id: number, e: ExperimentWrite) => request<Experiment>("PUT", scoped(`/api/v1/experiments/${enc(id)}`, p), e),
  /** experimentAction is start (draft → running), pause (running → paused) or resume (paused → running). */
  experimentAction: (p: number, id: number, action: ExperimentAction) =>
    request<Experiment>("POST", scoped(`/api/v1/experiments/${enc(id)}/${action}`, p)),
  applyWinner: (p: number, id: number, variant: string) =>
    request<Experiment>("POST", scoped(`/api/v1/experiments/${enc(id)}/apply-winner`, p), { variant }),
  experimentResults: (p: number, id: number) => request<ExperimentResults>("GET", scoped(`/api/v1/experiments/${enc(id)}/results`, p)),

  // Error tracking (docs/errors.md): the groups of $exception events over a
  // day range, of live data unless env is "test"; a group and its latest
  // occurrences; a group's status; and the releases' sourcemap uploads.
  errorGroups: (p: number, d: Days & { release?: string; status?: ErrorStatus }, env?: DataEnv) =>
    request<ErrorGroupList>(
      "GET",
      scoped("/api/v1/errors", p, { dateFrom: d.from, dateTo: d.to, release: d.release, status: d.status, env: envParam(env) }),
    ),
  errorGroup: (p: number, fingerprint: string, d: Days, env?: DataEnv) =>
    request<ErrorGroupDetail>("GET", scoped(`/api/v1/errors/${enc(fingerprint)}`, p, { dateFrom: d.from, dateTo: d.to, env: envParam(env) })),
  /** setErrorStatus resolves (in release, else the latest release the group was seen in), ignores or reopens a group. */
  setErrorStatus: (p: number, fingerprint: string, status: ErrorStatus, release?: string) =>
    request<ErrorGroupStatus>("PUT", scoped(`/api/v1/errors/${enc(fingerprint)}/status`, p), release ? { status, release } : { status }),
  /** mergeErrorGroups makes groups count in into's group (docs/errors.md, "Merging groups"); each must have an event in the range. */
  mergeErrorGroups: (p: number, body: ErrorGroupMerge, d: Days, env?: DataEnv) =>
    request<ErrorGroupMerged>("POST", scoped("/api/v1/errors/merge", p, { dateFrom: d.from, dateTo: d.to, env: envParam(env) }), body),
  /** unmergeErrorGroups takes fingerprints out of the groups they were merged into (docs/errors.md, "Unmerging"). */
  unmergeErrorGroups: (p: number, groups: string[]) =>
    request<ErrorGroupUnmerged>("POST", scoped("/api/v1/errors/unmerge", p), { groups }),
  /** sourcemaps lists the product's uploads, newest first. */
  sourcemaps: (p: number) => request<List<Sourcemap>>("GET", scoped("/api/v1/sourcemaps", p)),
  replays: (p: number, opts: { distinctId?: string; from?: string; to?: string }) =>
    request<ReplayList>("GET", scoped("/api/v1/replays", p, { distinct_id: opts.distinctId, dateFrom: opts.from, dateTo: opts.to })),
  /** replay reads a page of a session's chunks: the first, or the one cursor (a page's next) names. */
  replay: (p: number, sessionId: string, cursor?: string) =>
    request<ReplayDetail>("GET", scoped(`/api/v1/replays/${enc(sessionId)}`, p, { cursor })),
  deleteReplay: (p: number, sessionId: string) => request<void>("DELETE", scoped(`/api/v1/replays/${enc(sessionId)}`, p)),
  deleteUserReplays: (p: number, distinctId: string) =>
    request<{ deleted: number }>("DELETE", scoped("/api/v1/replays", p, { distinct_id: distinctId })),
  /** persons is a page of the product's person profiles (docs/queries.md, "People"). */
  persons: (p: number, q: { search?: string; where?: string; columns?: string; cursor?: string; limit?: number } = {}) =>
    request<PersonList>("GET", scoped("/api/v1/persons", p, q)),
  /** person is one person's profile; 404 person_not_found when it has none yet. */
  /** cohorts lists the product's cohorts (docs/queries.md, "Cohorts"). */
  cohorts: (p: number) => request<SavedCohortList>("GET", `/api/v1/products/${enc(p)}/cohorts`),
  cohort: (p: number, id: number) => request<SavedCohort>("GET", `/api/v1/products/${enc(p)}/cohorts/${enc(id)}`),
  createCohort: (p: number, c: CohortInput) => request<SavedCohort>("POST", `/api/v1/products/${enc(p)}/cohorts`, c),
  updateCohort: (p: number, id: number, c: CohortInput) => request<SavedCohort>("PUT", `/api/v1/products/${enc(p)}/cohorts/${enc(id)}`, c),
  deleteCohort: (p: number, id: number) => request<void>("DELETE", `/api/v1/products/${enc(p)}/cohorts/${enc(id)}`),
  computeCohort: (p: number, id: number) => request<SavedCohort>("POST", `/api/v1/products/${enc(p)}/cohorts/${enc(id)}/compute`),
  cohortMembers: (p: number, id: number, cursor?: string) =>
    request<CohortMembersPage>("GET", `/api/v1/products/${enc(p)}/cohorts/${enc(id)}/members?limit=50${cursor ? `&cursor=${enc(cursor)}` : ""}`),
  /** uploadCohort replaces a static cohort's members with a CSV of distinct ids. */
  uploadCohort: (p: number, id: number, csv: Blob | string) =>
    request<SavedCohort>("PUT", `/api/v1/products/${enc(p)}/cohorts/${enc(id)}/members`, undefined, { type: "text/csv", body: csv }),
  person: (p: number, distinctId: string) => request<Person>("GET", scoped(`/api/v1/persons/${enc(distinctId)}`, p)),
  /** userEvents is a page of a user's events, newest first: older than before (a previous page's nextBefore) when set. */
  userEvents: (p: number, distinctId: string, opts: { before?: string; limit?: number; env?: DataEnv } = {}) =>
    request<UserEventsResult>(
      "GET",
      scoped(`/api/v1/users/${enc(distinctId)}/events`, p, { before: opts.before, limit: opts.limit, env: envParam(opts.env) }),
    ),
  deleteSourcemaps: (p: number, release: string) => request<{ deleted: number }>("DELETE", scoped("/api/v1/sourcemaps", p, { release })),

  // In-app messages (docs/messages.md): the product's campaigns with their
  // stats, one campaign, its survey's answers, and the auto-render setting.
  campaigns: (p: number) => request<CampaignList>("GET", scoped("/api/v1/campaigns", p)),
  campaign: (p: number, id: number) => request<Campaign>("GET", scoped(`/api/v1/campaigns/${enc(id)}`, p)),
  createCampaign: (p: number, c: CampaignWrite) => request<Campaign>("POST", scoped("/api/v1/campaigns", p), c),
  /** updateCampaign changes the fields c names; { status } alone is a status change. */
  updateCampaign: (p: number, id: number, c: CampaignWrite) => request<Campaign>("PUT", scoped(`/api/v1/campaigns/${enc(id)}`, p), c),
  deleteCampaign: (p: number, id: number) => request<void>("DELETE", scoped(`/api/v1/campaigns/${enc(id)}`, p)),
  surveyResults: (p: number, id: number) => request<SurveyResults>("GET", scoped(`/api/v1/campaigns/${enc(id)}/survey`, p)),
  messageSettings: (p: number) => request<MessageSettings>("GET", scoped("/api/v1/messages/settings", p)),
  setMessageSettings: (p: number, s: MessageSettings) => request<MessageSettings>("PUT", scoped("/api/v1/messages/settings", p), s),

  version: () => request<BuildInfo>("GET", "/api/v1/version"),
  /** spec is the HTTP contract, api/openapi.yaml, as the server serves it: YAML text. */
  spec: () => requestText("/api/v1/openapi.yaml"),
};

/** The status changes of an experiment that take no body. */
export type ExperimentAction = "start" | "pause" | "resume";

/** exportUrl is the CSV export of the annotations a chart filter selects. */
export function annotationsExportUrl(p: number, queryId?: number): string {
  return scoped("/api/v1/annotations/export.csv", p, { queryId });
}

/** surveyCsvUrl is the CSV of every answer to a campaign's survey, one row each. */
export function surveyCsvUrl(p: number, id: number): string {
  return scoped(`/api/v1/campaigns/${enc(id)}/survey.csv`, p);
}

/**
 * fieldError splits a 400 invalid_request, whose message names the field
 * first ("variants[1].weight: must be …", "variants[0].steps[2].title: …"), into that field and the
 * message; null for any other error.
 */
export function fieldError(e: unknown): { field: string; message: string } | null {
  if (!(e instanceof ApiError) || e.status !== 400) return null;
  const m = /^([A-Za-z]+(?:\[\d+\])?(?:\.[A-Za-z]+(?:\[\d+\])?)*): /.exec(e.message);
  return m ? { field: m[1], message: e.message } : null;
}

/** message is what to show a person for a failed call. */
export function message(e: unknown): string {
  if (e instanceof ApiError) {
    if (e.status === 429 && e.retryAfter) return `${e.message} (Try again in ${e.retryAfter} s.)`;
    return e.message;
  }
  return "Something went wrong. Reload the page and try again.";
}
