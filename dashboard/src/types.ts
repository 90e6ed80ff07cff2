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
