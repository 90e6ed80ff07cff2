package httpapi

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"strata/internal/analytics"
	"strata/internal/auth"
)

// Roles (docs/security.md, "Roles"). Every route a dashboard session may
// call for a workspace declares in the route table the least role it needs
// (asViewer, asMember, asAdmin), and one check, authorize, compares it with
// the signed-in user's role in the workspace of the product or workspace
// the request names. A route that declares no role is refused to every
// session: a new route is closed until someone decides who may call it.
// Bearer credentials are not users and have no role: a query token is
// created by an admin and acts for its one product as before, and an API
// key only on the routes keysMayWrite marks.

// roleRoute holds, in a request's context, the least role of its route.
type roleRoute struct{}

// leastRole returns a wrapper that declares role as the least a session
// needs on a route.
func leastRole(role analytics.Role) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), roleRoute{}, role)))
		})
	}
}

var (
	asViewer = leastRole(analytics.RoleViewer)
	asMember = leastRole(analytics.RoleMember)
	asAdmin  = leastRole(analytics.RoleAdmin)
)

var errRoleUndeclared = analytics.Errorf(analytics.KindForbidden, "role_undeclared",
	"This route declares no role, so no dashboard user may call it; this is a bug in the server, please report it.")

// authorize checks that a user with memberships may call r's route in
// workspaceID. A user outside the workspace gets notFound, so that ids
// reveal nothing; a user whose role ranks below the route's gets 403
// role_forbidden, which names both roles.
func authorize(r *http.Request, memberships []analytics.Membership, workspaceID int64, notFound error) error {
	i := slices.IndexFunc(memberships, func(m analytics.Membership) bool { return m.WorkspaceID == workspaceID })
	if i < 0 {
		return notFound
	}
	need, ok := r.Context().Value(roleRoute{}).(analytics.Role)
	if !ok {
		return errRoleUndeclared
	}
	if have := memberships[i].Role; have.Rank() < need.Rank() {
		return analytics.Errorf(analytics.KindForbidden, "role_forbidden",
			"Your role in this workspace is %s, and this needs %s. Ask an admin of the workspace to change your role.",
			roleName(have), need)
	}
	return nil
}

// roleName names a stored role for a message; an unknown one says so.
func roleName(r analytics.Role) string {
	if r.Rank() == 0 {
		return "unknown (" + string(r) + ")"
	}
	return string(r)
}

// workspaceRequest is a settings request on /workspaces/{id}/…: the
// signed-in user and the workspace, which the user's role there allows the
// route.
type workspaceRequest struct {
	user        analytics.User
	workspaceID int64
}

// settingsWorkspace authenticates a request on /workspaces/{id}/… and
// authorizes it for the workspace.
func (s *Server) settingsWorkspace(r *http.Request) (workspaceRequest, error) {
	_, u, _, err := s.signedIn(r)
	if err != nil {
		return workspaceRequest{}, err
	}
	notFound := analytics.Errorf(analytics.KindNotFound, "workspace_not_found", "There is no such workspace.")
	id, err := pathID(r, "id")
	if err != nil {
		return workspaceRequest{}, notFound
	}
	ms, err := s.Accounts.Memberships(r.Context(), u.ID)
	if err != nil {
		return workspaceRequest{}, err
	}
	if err := authorize(r, ms, id, notFound); err != nil {
		return workspaceRequest{}, err
	}
	return workspaceRequest{user: u, workspaceID: id}, nil
}

// handleListMembers is GET /api/v1/workspaces/{id}/members.
func (s *Server) handleListMembers(w http.ResponseWriter, r *http.Request) error {
	wr, err := s.settingsWorkspace(r)
	if err != nil {
		return err
	}
	members, err := s.Admin.Users.WorkspaceMembers(r.Context(), wr.workspaceID)
	if err != nil {
		return err
	}
	writeItems(w, members)
	return nil
}

// memberPath reads the {userId} of a member route.
func memberPath(r *http.Request) (int64, error) {
	id, err := pathID(r, "userId")
	if err != nil {
		return 0, errMemberNotFound
	}
	return id, nil
}

var errMemberNotFound = analytics.Errorf(analytics.KindNotFound, "member_not_found", "There is no such member in this workspace.")

// memberLookup turns the store's not-found into the API's.
func memberLookup(err error) error {
	if errors.Is(err, analytics.ErrNotFound) {
		return errMemberNotFound
	}
	return err
}

// handleSetMemberRole is PATCH /api/v1/workspaces/{id}/members/{userId}.
func (s *Server) handleSetMemberRole(w http.ResponseWriter, r *http.Request) error {
	wr, err := s.settingsWorkspace(r)
	if err != nil {
		return err
	}
	userID, err := memberPath(r)
	if err != nil {
		return err
	}
	var in struct {
		Role string `json:"role"`
	}
	if err := decodeBody(w, r, maxSettingsBody, &in); err != nil {
		return err
	}
	role, err := analytics.ParseRole(in.Role)
	if err != nil {
		return err
	}
	if err := memberLookup(s.Admin.Users.SetMemberRole(r.Context(), wr.workspaceID, userID, role)); err != nil {
		return err
	}
	s.Log.Info("member role changed", "workspace", wr.workspaceID, "user", userID, "role", role, "by", wr.user.ID)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleRemoveMember is DELETE /api/v1/workspaces/{id}/members/{userId}:
// the user leaves the workspace, and every session of theirs ends at once.
func (s *Server) handleRemoveMember(w http.ResponseWriter, r *http.Request) error {
	wr, err := s.settingsWorkspace(r)
	if err != nil {
		return err
	}
	userID, err := memberPath(r)
	if err != nil {
		return err
	}
	if err := memberLookup(s.Admin.Users.RemoveMember(r.Context(), wr.workspaceID, userID)); err != nil {
		return err
	}
	s.Log.Info("member removed", "workspace", wr.workspaceID, "user", userID, "by", wr.user.ID)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleListInvites is GET /api/v1/workspaces/{id}/invites: the pending
// invites, with their expiry; never their tokens, of which only hashes are
// kept.
func (s *Server) handleListInvites(w http.ResponseWriter, r *http.Request) error {
	wr, err := s.settingsWorkspace(r)
	if err != nil {
		return err
	}
	items, err := s.Admin.Users.ListInvites(r.Context(), wr.workspaceID)
	if err != nil {
		return err
	}
	writeItems(w, items)
	return nil
}

// handleCreateInvite is POST /api/v1/workspaces/{id}/invites. The answer
// carries the link, shown this once; where SMTP is configured it is also
// e-mailed to the invitee, and the answer says whether that worked.
func (s *Server) handleCreateInvite(w http.ResponseWriter, r *http.Request) error {
	wr, err := s.settingsWorkspace(r)
	if err != nil {
		return err
	}
	var in struct {
		Email string `json:"email"`
		Role  string `json:"role"`
	}
	if err := decodeBody(w, r, maxSettingsBody, &in); err != nil {
		return err
	}
	role, err := analytics.ParseRole(in.Role)
	if err != nil {
		return err
	}
	created, err := s.Accounts.CreateInvite(r.Context(), wr.workspaceID, wr.user.ID, in.Email, role)
	if err != nil {
		return err
	}
	link := s.inviteURL(r, created.Token)
	emailed := false
	if s.Mailer != nil {
		if err := s.Mailer.SendInvite(r.Context(), created.Invite.Email, wr.user.Email, link, created.Invite.ExpiresAt); err != nil {
			s.Log.Warn("invite e-mail not sent", "invite", created.Invite.ID, "err", err)
		} else {
			emailed = true
		}
	}
	s.Log.Info("invite created", "workspace", wr.workspaceID, "invite", created.Invite.ID, "role", role, "by", wr.user.ID)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, map[string]any{"invite": created.Invite, "url": link, "emailed": emailed})
	return nil
}

// inviteURL is the link of an invite: the dashboard's invite page, with
// the token in the fragment, which browsers do not send to servers, so
// that no access log or proxy records it.
func (s *Server) inviteURL(r *http.Request, token string) string {
	return s.publicBase(r) + "/invite#" + token
}

// handleRevokeInvite is DELETE /api/v1/workspaces/{id}/invites/{inviteId}.
func (s *Server) handleRevokeInvite(w http.ResponseWriter, r *http.Request) error {
	wr, err := s.settingsWorkspace(r)
	if err != nil {
		return err
	}
	notFound := analytics.Errorf(analytics.KindNotFound, "invite_not_found", "There is no such invite in this workspace.")
	id, err := pathID(r, "inviteId")
	if err != nil {
		return notFound
	}
	if err := s.Admin.Users.DeleteInvite(r.Context(), wr.workspaceID, id); errors.Is(err, analytics.ErrNotFound) {
		return notFound
	} else if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleAcceptInvite is POST /api/v1/invites/accept: the invitee sets a
// password, joins with the invite's role and is signed in. It takes no
// credential but the token, so it checks the Origin like sign-in and is
// rate limited per client address (auth.Accounts.AcceptInvite).
func (s *Server) handleAcceptInvite(w http.ResponseWriter, r *http.Request) error {
	if err := checkOrigin(r); err != nil {
		return err
	}
	var in struct {
		Token    string `json:"token"`
		Password string `json:"password"`
	}
	if err := decodeBody(w, r, maxAuthBody, &in); err != nil {
		return err
	}
	signed, err := s.Accounts.AcceptInvite(r.Context(), in.Token, in.Password, s.requestAddr(r))
	if errors.Is(err, auth.ErrBadInvite) {
		s.Log.Info("invite acceptance refused", "addr", s.requestAddr(r))
	}
	if err != nil {
		return err
	}
	s.Log.Info("invite accepted", "user", signed.User.ID)
	return s.startSession(w, r, http.StatusCreated, signed)
}

// handleChangePassword is PUT /api/v1/session/password: the signed-in user
// sets a new password, giving the current one; their other sessions end.
func (s *Server) handleChangePassword(w http.ResponseWriter, r *http.Request) error {
	token, u, _, err := s.signedIn(r)
	if err != nil {
		return err
	}
	var in struct {
		CurrentPassword string `json:"currentPassword"`
		NewPassword     string `json:"newPassword"`
	}
	if err := decodeBody(w, r, maxAuthBody, &in); err != nil {
		return err
	}
	if err := s.Accounts.ChangePassword(r.Context(), u, auth.Hash(token), in.CurrentPassword, in.NewPassword, s.requestAddr(r)); err != nil {
		return err
	}
	s.Log.Info("password changed", "user", u.ID)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// InviteMailer e-mails an invite link (internal/mail).
type InviteMailer interface {
	SendInvite(ctx context.Context, to, invitedBy, link string, expires time.Time) error
}
