package store

import (
	"context"
	"database/sql"
)

// User is one account.
type User struct {
	ID           int64
	Email        string
	PasswordHash []byte
}

// UserStore reads and writes users in the database.
type UserStore struct{ db *sql.DB }

// FindUserByEmail returns the user with that email address.
func (s *UserStore) FindUserByEmail(ctx context.Context, email string) (*User, error) {
	row := s.db.QueryRowContext(ctx, "SELECT id, email, password_hash FROM users WHERE email = $1", email)
	var u User
	if err := row.Scan(&u.ID, &u.Email, &u.PasswordHash); err != nil {
		return nil, err
	}
	return &u, nil
}
