package admin

import (
	"context"
	"errors"
	"net/http"

	"strata/internal/analytics"
	"strata/internal/auth"
)

// The operator's user commands (strata users …): the same operations on
// the store or through the running server's admin socket. The operator
// has the data directory, so these need no password of anyone's: they are
// how a lost password is reset and a departed person removed.

// UserRequest is the body of the socket's user operations.
type UserRequest struct {
	Email    string         `json:"email"`
	Password string         `json:"password,omitempty"`
	Role     analytics.Role `json:"role,omitempty"`
}

// ListUsers lists the current users with their workspaces and roles.
func (s *Service) ListUsers(ctx context.Context) ([]analytics.UserAccount, error) {
	users, err := s.Users.ListUsers(ctx)
	if users == nil {
		users = []analytics.UserAccount{}
	}
	return users, err
}

// AddUser creates a user with password and role in every workspace, as
// first-run setup makes the owner an admin of every workspace.
func (s *Service) AddUser(ctx context.Context, email, password string, role analytics.Role) (analytics.UserAccount, error) {
	email, err := auth.NormaliseEmail(email)
	if err != nil {
		return analytics.UserAccount{}, err
	}
	if _, err := analytics.ParseRole(string(role)); err != nil {
		return analytics.UserAccount{}, err
	}
	if err := auth.CheckNewPassword(password); err != nil {
		return analytics.UserAccount{}, err
	}
	ws, err := s.Meta.ListWorkspaces(ctx)
	if err != nil {
		return analytics.UserAccount{}, err
	}
	ms := make([]analytics.Membership, 0, len(ws))
	for _, w := range ws {
		ms = append(ms, analytics.Membership{WorkspaceID: w.ID, Role: role})
	}
	u := analytics.User{Email: email, PasswordHash: auth.HashPassword(password)}
	if err := s.Users.CreateUser(ctx, &u, ms); errors.Is(err, analytics.ErrUserExists) {
		return analytics.UserAccount{}, analytics.Errorf(analytics.KindConflict, "user_exists", "There is already a user %s.", email)
	} else if err != nil {
		return analytics.UserAccount{}, err
	}
	return analytics.UserAccount{User: u, Memberships: ms}, nil
}

// ResetPassword sets a user's password and ends every session of theirs.
func (s *Service) ResetPassword(ctx context.Context, email, password string) error {
	if err := auth.CheckNewPassword(password); err != nil {
		return err
	}
	u, err := s.userByEmail(ctx, email)
	if err != nil {
		return err
	}
	return s.Users.SetPassword(ctx, u.ID, auth.HashPassword(password), nil)
}

// RemoveUser removes a user: their sessions end at once and they can no
// longer sign in. The last admin of a workspace cannot be removed.
func (s *Service) RemoveUser(ctx context.Context, email string) error {
	u, err := s.userByEmail(ctx, email)
	if err != nil {
		return err
	}
	return s.Users.RemoveUser(ctx, u.ID)
}

func (s *Service) userByEmail(ctx context.Context, email string) (analytics.User, error) {
	email, err := auth.NormaliseEmail(email)
	if err != nil {
		return analytics.User{}, err
	}
	u, err := s.Users.UserByEmail(ctx, email)
	if errors.Is(err, analytics.ErrNotFound) {
		return u, analytics.Errorf(analytics.KindNotFound, "user_not_found", "There is no user %s; strata users list shows them.", email)
	}
	return u, err
}

// ListUsers implements Admin.
func (c *Client) ListUsers(ctx context.Context) ([]analytics.UserAccount, error) {
	var users []analytics.UserAccount
	err := c.do(ctx, http.MethodGet, "/users", nil, &users)
	return users, err
}

// AddUser implements Admin.
func (c *Client) AddUser(ctx context.Context, email, password string, role analytics.Role) (analytics.UserAccount, error) {
	var u analytics.UserAccount
	err := c.do(ctx, http.MethodPost, "/users", UserRequest{Email: email, Password: password, Role: role}, &u)
	return u, err
}

// ResetPassword implements Admin.
func (c *Client) ResetPassword(ctx context.Context, email, password string) error {
	var out struct{}
	return c.do(ctx, http.MethodPost, "/users/password", UserRequest{Email: email, Password: password}, &out)
}

// RemoveUser implements Admin.
func (c *Client) RemoveUser(ctx context.Context, email string) error {
	var out struct{}
	return c.do(ctx, http.MethodPost, "/users/remove", UserRequest{Email: email}, &out)
}
