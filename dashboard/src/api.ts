// The dashboard's client of the /api/v1 endpoints. Requests go to the same
// origin with the session cookie; the browser adds the Origin header the
// server checks on every change.
import type {
  ApiKey, CredentialStatus, DashboardConfig, KeyCreated, KeyEnv, List, Product, QueryToken, Session, TokenCreated,
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

async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: "same-origin",
      headers: body === undefined ? { Accept: "application/json" } : { Accept: "application/json", "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
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

const enc = encodeURIComponent;

/** api is every call the dashboard makes. */
export const api = {
  config: () => request<DashboardConfig>("GET", "/api/v1/dashboard/config"),
  setup: (email: string, password: string) => request<Session>("POST", "/api/v1/dashboard/setup", { email, password }),
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

  products: () => request<List<Product>>("GET", "/api/v1/products"),
  product: (id: number) => request<Product>("GET", `/api/v1/products/${enc(id)}`),
  createProduct: (name: string) => request<Product>("POST", "/api/v1/products", { name }),
  renameProduct: (id: number, name: string) => request<Product>("PATCH", `/api/v1/products/${enc(id)}`, { name }),

  keys: (productId: number) => request<List<ApiKey>>("GET", `/api/v1/products/${enc(productId)}/keys`),
  createKey: (productId: number, env: KeyEnv) => request<KeyCreated>("POST", `/api/v1/products/${enc(productId)}/keys`, { env }),
  setKeyStatus: (productId: number, keyId: number, status: CredentialStatus) =>
    request<ApiKey>("PATCH", `/api/v1/products/${enc(productId)}/keys/${enc(keyId)}`, { status }),

  tokens: (productId: number) => request<List<QueryToken>>("GET", `/api/v1/products/${enc(productId)}/tokens`),
  createToken: (productId: number) => request<TokenCreated>("POST", `/api/v1/products/${enc(productId)}/tokens`, {}),
  setTokenStatus: (productId: number, tokenId: number, status: CredentialStatus) =>
    request<QueryToken>("PATCH", `/api/v1/products/${enc(productId)}/tokens/${enc(tokenId)}`, { status }),
};

/** message is what to show a person for a failed call. */
export function message(e: unknown): string {
  if (e instanceof ApiError) {
    if (e.status === 429 && e.retryAfter) return `${e.message} (Try again in ${e.retryAfter} s.)`;
    return e.message;
  }
  return "Something went wrong. Reload the page and try again.";
}
