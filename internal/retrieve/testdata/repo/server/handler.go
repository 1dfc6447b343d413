package server

import (
	"encoding/json"
	"net/http"

	"example.com/app/store"
)

// LoginRequest is the body of POST /login.
type LoginRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// HandleLogin checks the credentials and starts a session.
func HandleLogin(users *store.UserStore) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req LoginRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		u, err := users.FindUserByEmail(r.Context(), req.Email)
		if err != nil || !u.CheckPassword(req.Password) {
			http.Error(w, "invalid credentials", http.StatusUnauthorized)
			return
		}
		startSession(w, u.ID)
	}
}

func startSession(w http.ResponseWriter, userID int64) {
	http.SetCookie(w, &http.Cookie{Name: "session", Value: newToken(userID), HttpOnly: true})
}
