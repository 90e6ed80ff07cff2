// What the signed-in user's role in a workspace lets the dashboard show.
// The server enforces every role on every route (docs/security.md,
// "Roles"); the dashboard only hides or disables what would be refused.
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { Membership, Role } from "./types";

const rank: Record<Role, number> = { viewer: 1, member: 2, admin: 3 };

/** roleIn is the user's role in a workspace, null when not a member. */
export function roleIn(memberships: readonly Membership[], workspaceId: number | undefined): Role | null {
  return memberships.find((m) => m.workspaceId === workspaceId)?.role ?? null;
}

/** allows reports whether role may do what needs at least least. */
export function allows(role: Role | null, least: Role): boolean {
  return role !== null && rank[role] >= rank[least];
}

/**
 * RoleContext is the signed-in user's role in the workspace of the
 * product on screen; null where it is not known (a page drawn on its own),
 * which hides nothing: the server decides.
 */
export const RoleContext = createContext<Role | null>(null);

/** useAllows reports whether the role on screen may do what needs least. */
export function useAllows(least: Role): boolean {
  const role = useContext(RoleContext);
  return role === null || allows(role, least);
}
