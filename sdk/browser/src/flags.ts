import { assign, exposed, type Assignment } from "../../shared/assign.js";
import { stringify } from "./json.js";
import { request } from "./net.js";
import { getJSON, set } from "./storage.js";
import type { Flags, FlagConfig, Properties, RemoteConfig } from "./types.js";

/** sessionStorage keys: the config cache and the flags already exposed this session. */
const CONFIG_KEY = "strata_config";
const EXPOSED_KEY = "strata_exposed";
/** The config is reused for 5 minutes per session, a variant for 60 seconds (spec, Limits). */
export const CONFIG_TTL = 300_000;
export const VARIANT_TTL = 60_000;

/** What the flag client needs from the SDK client. */
export interface FlagHost {
  readonly host: string;
  readonly key: string;
  distinctId(): string;
  /** traits are those of the last identify() call that passed any, or {}: what flag conditions are evaluated on. */
  traits(): Properties;
  /** capture sends an SDK-internal event (no experiment properties are added). */
  capture(eventName: string, properties: Properties, internal: true): void;
  /** experiment holds the properties attached to every later track(). */
  experiment?: { experiment_id: string | number; variant: string };
}

interface CachedConfig {
  at: number;
  id: string;
  config: RemoteConfig;
}

interface CachedVariant {
  at: number;
  id: string;
  flag?: FlagConfig;
  assignment?: Assignment;
}

/**
 * FlagClient evaluates flags in the browser from `GET /api/v1/config`, so the
 * same user gets the same variant everywhere without a request per flag.
 */
export class FlagClient implements Flags {
  private variants = new Map<string, CachedVariant>();
  /** Config requests under way, by distinct id; concurrent calls share one. */
  private pending: Record<string, Promise<RemoteConfig | undefined> | undefined> = {};
  private exposed: string[] = getJSON<string[]>("sessionStorage", EXPOSED_KEY) || [];

  constructor(private readonly c: FlagHost) {}

  getVariant = async (flagKey: string): Promise<string> => {
    try {
      const id = this.c.distinctId();
      let v = this.variants.get(flagKey);
      if (!v || v.id != id || Date.now() - v.at >= VARIANT_TTL) {
        const config = await this.config(id);
        const flag = config?.flags?.find((f) => f.key == flagKey);
        // The conditions are evaluated on the traits passed to identify() (docs/flags.md,
        // "Targeting"); identify() forgets the cached variants, so new traits count at once.
        // Cohort conditions read the cohorts the server gave with the config for this user.
        v = { at: Date.now(), id, flag, assignment: assign(flag, id, this.c.traits(), config?.cohorts) };
        // An unreachable server is asked again next time rather than cached as "control".
        if (config) this.variants.set(flagKey, v);
      }
      const a = v.assignment;
      if (!a || !v.flag) return "control";
      const exp = v.flag.experiment;
      const experimentId = exp && exp.status == "running" && exp.id != null ? exp.id : null;
      this.expose(flagKey, id, experimentId, exposed(a));
      // Holdout users and users outside the rollout or the targeting are not in the experiment.
      if (experimentId != null && !a.holdout && !a.excluded) {
        this.c.experiment = { experiment_id: experimentId, variant: a.variant };
      }
      return a.variant;
    } catch {
      return "control";
    }
  };

  /** reset forgets cached variants, e.g. when the user's identity changes. */
  reset(): void {
    this.variants.clear();
  }

  /** expose sends `$exposure` the first time a user sees a flag in this session. */
  expose(flag: string, id: string, experimentId: string | number | null, variant: string): void {
    const mark = flag + "\n" + id;
    if (this.exposed.includes(mark)) return;
    this.exposed.push(mark);
    set("sessionStorage", EXPOSED_KEY, stringify(this.exposed));
    this.c.capture("$exposure", { flag, experiment_id: experimentId, variant }, true);
  }

  /** config returns the remote config from the session cache or the server, or undefined. */
  async config(id: string): Promise<RemoteConfig | undefined> {
    const cached = getJSON<CachedConfig>("sessionStorage", CONFIG_KEY);
    if (cached && cached.id == id && Date.now() - cached.at < CONFIG_TTL) return cached.config;
    const url =
      this.c.host + "/api/v1/config?api_key=" + encodeURIComponent(this.c.key) + "&distinct_id=" + encodeURIComponent(id);
    return (this.pending[id] ??= request(url)
      .then((r) => (r.ok ? (r.json() as Promise<RemoteConfig>) : undefined))
      .then((config) => {
        if (!config || !Array.isArray(config.flags)) return undefined;
        set("sessionStorage", CONFIG_KEY, stringify({ at: Date.now(), id, config }));
        return config;
      })
      .catch(() => undefined)
      .finally(() => (this.pending[id] = undefined)));
  }
}
